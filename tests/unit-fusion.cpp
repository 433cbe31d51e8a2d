#include <ragpp/retrieve/fusion.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

using ragpp::FusionOptions;
using ragpp::reciprocal_rank_fusion;
using Lists = std::vector<std::vector<std::string>>;

TEST_CASE("RRF reproduces the reference example: words and meaning, k = 60", "[fusion]") {
    const Lists lists{{"C", "A", "F", "E", "G", "B", "H", "I", "D"}, {"D", "B", "A", "J", "E", "K", "F", "C"}};
    const auto fused = reciprocal_rank_fusion(lists);
    const std::vector<std::pair<std::string, double>> expected{{"A", 32.00}, {"B", 31.28}, {"C", 31.10},
                                                               {"E", 31.01}, {"D", 30.89}, {"F", 30.80}};
    REQUIRE(fused.size() == 11);  // every id once: C A F E G B H I D J K
    for (std::size_t i = 0; i < expected.size(); ++i) {
        CHECK(fused[i].id == expected[i].first);
        CHECK(std::round(fused[i].score * 1000 * 100) / 100 == Approx(expected[i].second).margin(1e-9));
    }
    // Hand-computed: A is 2nd by words and 3rd by meaning.
    CHECK(fused[0].score == Approx(1.0 / 62 + 1.0 / 63).epsilon(1e-15));
    CHECK(fused[0].ranks[0] == 2u);
    CHECK(fused[0].ranks[1] == 3u);
    // G appears only by words (5th): the trace says absent from the meaning list.
    auto g = std::find_if(fused.begin(), fused.end(), [](const auto& f) { return f.id == "G"; });
    REQUIRE(g != fused.end());
    CHECK(g->ranks[0] == 5u);
    CHECK_FALSE(g->ranks[1].has_value());
    CHECK(g->score == Approx(1.0 / 65));
}

TEST_CASE("RRF: P Q R S and R S T P give R, P, S first", "[fusion]") {
    const auto fused = reciprocal_rank_fusion(Lists{{"P", "Q", "R", "S"}, {"R", "S", "T", "P"}});
    REQUIRE(fused.size() == 5);
    CHECK(fused[0].id == "R");
    CHECK(fused[1].id == "P");
    CHECK(fused[2].id == "S");
}

TEST_CASE("RRF: sections 2, 7, 6 and 6, 2, 7 with k = 1 and k = 60", "[fusion]") {
    const std::vector<std::vector<int>> lists{{2, 7, 6}, {6, 2, 7}};
    auto round4 = [](double x) { return std::round(x * 10000) / 10000; };
    auto round3 = [](double x) { return std::round(x * 1000) / 1000; };
    const auto k1 = reciprocal_rank_fusion(lists, FusionOptions{1.0, {}});
    REQUIRE(k1.size() == 3);
    CHECK(k1[0].id == 2);
    CHECK(round3(k1[0].score) == Approx(0.833));
    CHECK(k1[1].id == 6);
    CHECK(round3(k1[1].score) == Approx(0.75));
    CHECK(k1[2].id == 7);
    CHECK(round3(k1[2].score) == Approx(0.583));
    const auto k60 = reciprocal_rank_fusion(lists);
    CHECK(k60[0].id == 2);
    CHECK(round4(k60[0].score) == Approx(0.0325));
    CHECK(k60[1].id == 6);
    CHECK(round4(k60[1].score) == Approx(0.0323));
    CHECK(k60[2].id == 7);
    CHECK(round4(k60[2].score) == Approx(0.0320));
}

TEST_CASE("RRF weights scale each list's contribution", "[fusion]") {
    const Lists lists{{"a", "b"}, {"b", "a"}};
    const auto fused = reciprocal_rank_fusion(lists, FusionOptions{60, {2.0, 1.0}});
    CHECK(fused[0].id == "a");
    CHECK(fused[0].score == Approx(2.0 / 61 + 1.0 / 62));
    CHECK(fused[1].score == Approx(2.0 / 62 + 1.0 / 61));
    // A zero weight removes a list's influence but keeps its ranks in the trace.
    const auto only_second = reciprocal_rank_fusion(lists, FusionOptions{60, {0.0, 1.0}});
    CHECK(only_second[0].id == "b");
    CHECK(only_second[1].ranks[0] == 1u);
}

TEST_CASE("RRF ties are broken by best rank, then by smaller id", "[fusion]") {
    // x: rank 1 in list 0 only; y: rank 1 in list 1 only -> equal scores, equal best rank.
    const auto a = reciprocal_rank_fusion(Lists{{"y"}, {"x"}});
    REQUIRE(a.size() == 2);
    CHECK(a[0].score == a[1].score);
    CHECK(a[0].id == "x");
    // Equal scores, different best ranks: 1/(1+1)+1/(1+4) vs ... use k = 0: 1/1+1/4 vs 1/2+1/2 -> 1.25 vs 1.0.
    // Construct an exact tie with different best ranks: k = 0, 1/2 + 1/2 (ranks 2, 2) vs 1/1 (rank 1, absent).
    const auto b = reciprocal_rank_fusion(Lists{{"p", "q"}, {"r", "q"}}, FusionOptions{0, {1.0, 0.0}});
    // p: 1/1 = 1 (best rank 1); q: 1/2 + 0 = 0.5 (best 2); r: 0 (best 1).
    CHECK(b[0].id == "p");
    CHECK(b[1].id == "q");
    CHECK(b[2].id == "r");
    const auto c = reciprocal_rank_fusion(Lists{{"m", "n"}, {"z", "n"}}, FusionOptions{0, {}});
    // m: 1, z: 1, n: 1/2 + 1/2 = 1: three-way exact tie; m and z have best rank 1, n has 2.
    REQUIRE(c[0].score == c[2].score);
    CHECK(c[0].id == "m");
    CHECK(c[1].id == "z");
    CHECK(c[2].id == "n");
}

TEST_CASE("RRF rejects bad parameters with a message naming them", "[fusion]") {
    const Lists lists{{"a"}, {"b"}};
    CHECK_THROWS_WITH(reciprocal_rank_fusion(lists, FusionOptions{-1, {}}), Catch::Contains("k is -1"));
    CHECK_THROWS_AS(reciprocal_rank_fusion(lists, FusionOptions{std::numeric_limits<double>::infinity(), {}}),
                    ragpp::InvalidArgument);
    CHECK_THROWS_WITH(reciprocal_rank_fusion(lists, FusionOptions{60, {1.0, -0.5}}), Catch::Contains("weight 1"));
    CHECK_THROWS_AS(reciprocal_rank_fusion(lists, FusionOptions{60, {1.0, std::nan("")}}), ragpp::InvalidArgument);
    CHECK_THROWS_WITH(reciprocal_rank_fusion(lists, FusionOptions{60, {1.0}}), Catch::Contains("1 weights for 2 lists"));
    CHECK_THROWS_WITH(reciprocal_rank_fusion(Lists{{"a", "b", "a"}}), Catch::Contains("list 0 repeats an id (ranks 1 and 3)"));
}

TEST_CASE("RRF of no list or empty lists is empty", "[fusion]") {
    CHECK(reciprocal_rank_fusion(Lists{}).empty());
    CHECK(reciprocal_rank_fusion(Lists{{}, {}}).empty());
}

TEST_CASE("RRF properties on random lists: each id once, sorted, score equals the formula", "[fusion][property]") {
    const auto seed = GENERATE(take(100, random(0u, 1000000u)));
    std::mt19937 rng(seed);
    const std::size_t n_lists = 1 + rng() % 4;
    std::vector<std::vector<int>> lists(n_lists);
    std::vector<double> weights;
    for (auto& l : lists) {
        std::vector<int> pool(40);
        for (int i = 0; i < 40; ++i) pool[static_cast<std::size_t>(i)] = i;
        std::shuffle(pool.begin(), pool.end(), rng);
        l.assign(pool.begin(), pool.begin() + static_cast<long>(rng() % 30));
        weights.push_back(static_cast<double>(rng() % 4));
    }
    const double k = static_cast<double>(rng() % 100);
    const auto fused = reciprocal_rank_fusion(lists, FusionOptions{k, weights});
    std::set<int> all, seen;
    for (const auto& l : lists) all.insert(l.begin(), l.end());
    REQUIRE(fused.size() == all.size());
    for (std::size_t i = 0; i < fused.size(); ++i) {
        CHECK(seen.insert(fused[i].id).second);
        if (i > 0) CHECK(fused[i - 1].score >= fused[i].score);
        double expect = 0;
        for (std::size_t li = 0; li < lists.size(); ++li) {
            auto it = std::find(lists[li].begin(), lists[li].end(), fused[i].id);
            if (it == lists[li].end()) {
                CHECK_FALSE(fused[i].ranks[li].has_value());
            } else {
                const auto rank = static_cast<std::size_t>(it - lists[li].begin()) + 1;
                CHECK(fused[i].ranks[li] == rank);
                expect += weights[li] / (k + static_cast<double>(rank));
            }
        }
        CHECK(fused[i].score == Approx(expect).epsilon(1e-12));
    }
}
