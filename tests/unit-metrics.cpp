#include <ragpp/eval/metrics.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace ragpp;
using Q = RankedQuestion<std::string>;
using V = std::vector<std::string>;

TEST_CASE("hit rate: the reference example (0.0 at 1, 0.67 at 3)", "[metrics]") {
    const std::vector<Q> set{{{"C", "A", "F"}, {{"A", 1}}}, {{"B", "D", "E"}, {{"E", 1}}}, {{"F", "C", "B"}, {{"D", 1}}}};
    CHECK(hit_rate_at_k(set, 1).mean == 0.0);
    const auto at3 = hit_rate_at_k(set, 3);
    CHECK(std::round(at3.mean * 100) / 100 == Approx(0.67));
    CHECK(at3.mean == Approx(2.0 / 3));
    CHECK(at3.questions == 3);
    CHECK(at3.without_relevant == 0);
}

TEST_CASE("per-question metrics, hand-computed", "[metrics]") {
    // ranking d1..d6; relevant d2 (grade 2), d4 (grade 1), d9 (grade 3, not retrieved).
    const V ranking{"d1", "d2", "d3", "d4", "d5", "d6"};
    const Judgments<std::string> j{{"d2", 2}, {"d4", 1}, {"d9", 3}, {"d5", 0}};
    CHECK(*hit_at_k<std::string>(ranking, j, 1) == 0.0);
    CHECK(*hit_at_k<std::string>(ranking, j, 2) == 1.0);
    CHECK(*recall_at_k<std::string>(ranking, j, 3) == Approx(1.0 / 3));
    CHECK(*recall_at_k<std::string>(ranking, j, 10) == Approx(2.0 / 3));
    CHECK(*precision_at_k<std::string>(ranking, j, 4) == Approx(0.5));
    CHECK(*precision_at_k<std::string>(ranking, j, 10) == Approx(0.2));  // divides by k, as trec_eval P_10
    CHECK(*reciprocal_rank<std::string>(ranking, j) == Approx(0.5));
    CHECK(*reciprocal_rank<std::string>(ranking, j, 1) == 0.0);
    // AP = (1/2 + 2/4) / 3
    CHECK(*average_precision<std::string>(ranking, j) == Approx((0.5 + 0.5) / 3));
    // nDCG@4: DCG = 2/log2(3) + 1/log2(5); IDCG = 3/log2(2) + 2/log2(3) + 1/log2(4)
    const double dcg = 2 / std::log2(3.0) + 1 / std::log2(5.0);
    const double idcg = 3 + 2 / std::log2(3.0) + 1 / std::log2(4.0);
    CHECK(*ndcg_at_k<std::string>(ranking, j, 4) == Approx(dcg / idcg).epsilon(1e-12));
    // nDCG@1: nothing relevant at rank 1.
    CHECK(*ndcg_at_k<std::string>(ranking, j, 1) == 0.0);
    // A perfect ranking has nDCG 1.
    CHECK(*ndcg_at_k<std::string>(V{"d9", "d2", "d4"}, j, 3) == Approx(1.0));
}

TEST_CASE("questions without a relevant document are reported apart", "[metrics]") {
    const std::vector<Q> set{{{"a", "b"}, {{"a", 1}}}, {{"a", "b"}, {}}, {{"c"}, {{"x", 0}}}};
    CHECK_FALSE(recall_at_k<std::string>(V{"a"}, {}, 5).has_value());
    const auto s = mean_recall_at_k(set, 5);
    CHECK(s.mean == 1.0);
    CHECK(s.questions == 1);
    CHECK(s.without_relevant == 2);
    const auto m = mrr(set);
    CHECK(m.mean == 1.0);
    CHECK(m.without_relevant == 2);
    const std::vector<Q> none{{{"a"}, {}}};
    CHECK(mean_ndcg_at_k(none, 10).mean == 0.0);
    CHECK(mean_ndcg_at_k(none, 10).questions == 0);
}

TEST_CASE("metrics reject bad input", "[metrics]") {
    const Judgments<std::string> j{{"a", 1}};
    CHECK_THROWS_AS(recall_at_k<std::string>(V{"a"}, j, 0), InvalidArgument);
    CHECK_THROWS_WITH(ndcg_at_k<std::string>(V{"a", "b", "a"}, j, 3), Catch::Contains("repeats an id at rank 3"));
}

TEST_CASE("metric properties on random rankings", "[metrics][property]") {
    const auto seed = GENERATE(take(100, random(0u, 1000000u)));
    std::mt19937 rng(seed);
    std::vector<int> pool(50);
    for (int i = 0; i < 50; ++i) pool[static_cast<std::size_t>(i)] = i;
    std::shuffle(pool.begin(), pool.end(), rng);
    std::vector<int> ranking(pool.begin(), pool.begin() + static_cast<long>(rng() % 40));
    Judgments<int> j;
    const int n_rel = 1 + static_cast<int>(rng() % 8);
    for (int i = 0; i < n_rel; ++i) j[static_cast<int>(rng() % 50)] = 1 + static_cast<double>(rng() % 3);
    double prev_recall = 0, prev_hit = 0;
    for (std::size_t k = 1; k <= 45; ++k) {
        const double r = *recall_at_k<int>(ranking, j, k);
        const double h = *hit_at_k<int>(ranking, j, k);
        const double n = *ndcg_at_k<int>(ranking, j, k);
        const double p = *precision_at_k<int>(ranking, j, k);
        const double ap = *average_precision<int>(ranking, j, k);
        const double rr = *reciprocal_rank<int>(ranking, j, k);
        for (double v : {r, h, n, p, ap, rr}) {
            CHECK(v >= 0.0);
            CHECK(v <= 1.0 + 1e-12);
        }
        CHECK(r >= prev_recall);  // recall@k is monotone in k
        CHECK(h >= prev_hit);
        CHECK(h >= r - 1e-12);  // a hit whenever anything is found
        prev_recall = r;
        prev_hit = h;
    }
}
