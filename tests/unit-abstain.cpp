#include <ragpp/answer/abstain.hpp>

#include <catch2/catch.hpp>

#include <vector>

using ragpp::Result;

namespace {
Result result(double fused, std::vector<std::optional<std::size_t>> ranks, std::optional<double> reranker = {}) {
    Result r;
    r.score = fused;
    for (auto k : ranks) r.trace.push_back(ragpp::ListTrace{k, k ? std::optional<double>(1.0) : std::nullopt});
    if (reranker) {
        r.rerank = ragpp::RerankTrace{1, fused, *reranker, 1};
        r.score = *reranker;
    }
    return r;
}
}  // namespace

TEST_CASE("confidence_signals and confidence, by hand", "[abstain]") {
    // Reranked: top has reranker 0.8, fused 1/61 + 1/63 (bm25 #1, vector #3); the next fused 1/62 + 1/61.
    const double f1 = 1.0 / 61 + 1.0 / 63, f2 = 1.0 / 62 + 1.0 / 61;
    const std::vector<Result> rs{result(f2 > f1 ? f2 : f1, {1, 3}, 0.8), result(f2 > f1 ? f1 : f2, {2, 1}, 0.5)};
    const auto s = ragpp::confidence_signals(rs);
    REQUIRE(s.reranker);
    CHECK(*s.reranker == 0.8);
    const double hi = std::max(f1, f2), lo = std::min(f1, f2);
    CHECK(s.margin == Approx((hi - lo) / hi / 0.05));
    CHECK(s.agreement == Approx((1.0 + 1.0 / 3) / 2));
    CHECK(ragpp::confidence(s) == Approx((2 * 0.8 + s.margin + s.agreement) / 4));
    // Not reranked: the reranker's term is left out.
    const std::vector<Result> plain{result(0.04, {1, std::nullopt}), result(0.03, {2, 1})};
    const auto p = ragpp::confidence_signals(plain);
    CHECK_FALSE(p.reranker);
    CHECK(p.margin == 1.0);                  // gap 0.25 / 0.05 capped at 1
    CHECK(p.agreement == Approx(0.5));       // bm25 #1, absent from the vector list
    CHECK(ragpp::confidence(p) == Approx(0.75));
    // One list only (the other index not queried): agreement over the list used.
    const std::vector<Result> single{result(0.5, {2, std::nullopt})};
    CHECK(ragpp::confidence_signals(single).agreement == Approx(0.5));
    CHECK(ragpp::confidence_signals(single).margin == 1.0);
    // Nothing found: confidence 0.
    CHECK(ragpp::confidence(ragpp::confidence_signals(std::vector<Result>{})) == 0.0);
    // Reranker scores outside [0, 1] are clamped.
    CHECK(*ragpp::confidence_signals(std::vector<Result>{result(0.1, {1}, 3.0)}).reranker == 1.0);
}

TEST_CASE("calibrate: shares kept and refused, precision, suggested threshold", "[abstain]") {
    const std::vector<double> conf{0.9, 0.8, 0.3, 0.7, 0.2, 0.6};
    const bool ans[] = {true, true, true, false, false, false};
    const auto c = ragpp::calibrate(conf, ans, 0.9, {0.0, 0.5, 0.95});
    REQUIRE(c.rows.size() == 3);
    CHECK(c.rows[0].answerable_kept == 3);
    CHECK(c.rows[0].unanswerable_refused == 0);
    CHECK(*c.rows[0].precision == Approx(0.5));
    CHECK(c.rows[1].answerable_kept == 2);
    CHECK(c.rows[1].unanswerable_refused == 1);
    CHECK(c.rows[1].kept_share == Approx(2.0 / 3));
    CHECK(c.rows[1].refused_share == Approx(1.0 / 3));
    CHECK(*c.rows[1].precision == Approx(0.5));
    CHECK_FALSE(c.rows[2].precision);  // nothing kept
    REQUIRE(c.suggested);
    CHECK(c.suggested->threshold == 0.8);
    CHECK(c.suggested->answerable_kept == 2);
    CHECK(c.suggested->unanswerable_refused == 3);
    // At 0.3, 3 of 5 kept are answerable; at 0.7, 2 of 3.
    CHECK(ragpp::calibrate(conf, ans, 0.6).suggested->threshold == 0.3);
    CHECK(ragpp::calibrate(conf, ans, 0.65).suggested->threshold == 0.7);
    CHECK(ragpp::calibrate(conf, ans, 0.5).suggested->threshold == 0.2);
    // Default grid: 21 rows; kept share never increases with the threshold.
    const auto g = ragpp::calibrate(conf, ans);
    REQUIRE(g.rows.size() == 21);
    for (std::size_t i = 1; i < g.rows.size(); ++i) {
        CHECK(g.rows[i].kept_share <= g.rows[i - 1].kept_share);
        CHECK(g.rows[i].refused_share >= g.rows[i - 1].refused_share);
    }
    const auto text = ragpp::format_calibration(c);
    CHECK(text.find("suggested threshold for precision >= 0.90") != std::string::npos);
    CHECK(text.find("0.800") != std::string::npos);
    // The std::vector<bool> form gives the same rows.
    const std::vector<bool> vans{true, true, true, false, false, false};
    CHECK(ragpp::calibrate(conf, vans, 0.9).suggested->threshold == 0.8);
    // Errors.
    const bool two[] = {true, false};
    CHECK_THROWS_AS(ragpp::calibrate(conf, two), ragpp::InvalidArgument);
    CHECK_THROWS_AS(ragpp::calibrate(conf, ans, 0.0), ragpp::InvalidArgument);
    const std::vector<double> nan{std::nan(""), 0.1, 0.1, 0.1, 0.1, 0.1};
    CHECK_THROWS_AS(ragpp::calibrate(nan, ans), ragpp::InvalidArgument);
}
