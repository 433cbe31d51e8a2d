#include <ragpp/answer/abstain.hpp>
#include <ragpp/answer/answer.hpp>
#include <ragpp/text/analyzer.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>


namespace {
// Statistics of a made-up corpus of 10 documents.
ragpp::TermStatistics coverage_stats10() {
    static const std::map<std::string, std::size_t, std::less<>> df{
        {"notice", 2}, {"period", 4}, {"mx200", 1}, {"mx", 3}, {"200", 2}, {"contract", 5}, {"the", 10}, {"of", 9}};
    return {10, [](std::string_view t) {
                const auto it = df.find(t);
                return it == df.end() ? std::size_t{0} : it->second;
            }};
}
// Lucene's idf, written out.
double lucene_idf(double n, double df) { return std::log(1 + (n - df + 0.5) / (df + 0.5)); }
ragpp::Document plain_doc(std::string id, std::string text) { return {std::move(id), std::move(text), {}}; }
}  // namespace

TEST_CASE("query_coverage, by hand: compounds as written, parts as parts, unknown words at the highest idf", "[abstain]") {
    const ragpp::StandardAnalyzer an;
    const auto d1 = plain_doc("a", "The notice period of the MX-200 contract");
    const auto d2 = plain_doc("b", "MX series period");
    const ragpp::Document* ps[] = {&d1, &d2};
    ragpp::CoverageOptions every_word;
    every_word.skip_question_words = false;
    const auto r = ragpp::query_coverage(an, "the notice period of MX-200 in Peru?", ps, coverage_stats10(), every_word);
    // Units: the (idf(10,10)), notice, period, of, MX-200 (key mx200, parts mx 200), in (unknown), Peru (unknown).
    REQUIRE(r.units.size() == 7);
    CHECK(r.units[4].compound);
    CHECK(r.units[4].key == "mx200");
    CHECK(r.units[4].parts == std::vector<std::string>{"mx", "200"});
    CHECK(r.units[4].word == "MX-200");
    CHECK(r.units[6].word == "Peru");
    const double p = 1.5;
    const double w_the = std::pow(lucene_idf(10, 10), p), w_of = std::pow(lucene_idf(10, 9), p), w_n = std::pow(lucene_idf(10, 2), p),
                 w_p = std::pow(lucene_idf(10, 4), p), w_top = std::pow(lucene_idf(10, 1), p);
    CHECK(r.units[1].weight == Approx(w_n));
    CHECK(r.units[5].weight == Approx(w_top));  // "in": not in the corpus, counted at df = 1
    const double total = w_the + w_n + w_p + w_of + 3 * w_top;
    // d1 covers the, notice, period, of, mx200; not in, Peru.
    const double c1 = (w_the + w_n + w_p + w_of + w_top) / total;
    // d2 covers period; MX-200's parts: mx (idf(10,3)) present, 200 (idf(10,2)) absent, credit 0.5.
    const double c2 = (w_p + 0.5 * w_top * lucene_idf(10, 3) / (lucene_idf(10, 3) + lucene_idf(10, 2))) / total;
    REQUIRE(r.passages.size() == 2);
    CHECK(r.passages[0] == Approx(c1));
    CHECK(r.passages[1] == Approx(c2));
    CHECK(r.score == Approx(0.7 * c1 + 0.15 * c2));  // the third passage is missing: 0
    // Missing from d1, the words that matter: both unknown (equal weight, question order).
    CHECK(r.missing == std::vector<std::string>{"in", "Peru"});
    CHECK(r.unknown == std::vector<std::string>{"in", "Peru"});

    // By default the question words (the, of, in) are no units.
    const auto q = ragpp::query_coverage(an, "What is the notice period of MX-200 in Peru?", ps, coverage_stats10());
    REQUIRE(q.units.size() == 4);
    CHECK(q.units[0].word == "notice");
    CHECK(q.passages[0] == Approx((w_n + w_p + w_top) / (w_n + w_p + 2 * w_top)));
    CHECK(q.missing == std::vector<std::string>{"Peru"});
    CHECK(ragpp::detail::is_question_word("WHAT"));
    CHECK(ragpp::detail::is_question_word("Quel"));
    CHECK(ragpp::detail::is_question_word("qu\u2019est-ce"));
    CHECK(ragpp::detail::is_question_word("où"));
    CHECK_FALSE(ragpp::detail::is_question_word("notice"));
    CHECK_FALSE(ragpp::detail::is_question_word("whatsoever-long-word"));
    // Japanese: hiragana-only bigrams (particles, endings) are no units; kanji and katakana are.
    CHECK(ragpp::detail::all_hiragana("\u3067\u3059"));        // です
    CHECK(ragpp::detail::all_hiragana("\u3092"));              // を
    CHECK_FALSE(ragpp::detail::all_hiragana("\u4eac\u306f"));  // 京は
    CHECK_FALSE(ragpp::detail::all_hiragana("\u30ab\u30fc"));  // カー
    CHECK_FALSE(ragpp::detail::all_hiragana(""));
    const ragpp::CjkAnalyzer cjk;
    const ragpp::TermStatistics any{10, [](std::string_view) { return std::size_t{2}; }};
    std::vector<std::string> keys;
    for (const auto& u : ragpp::coverage_units(cjk, "\u6771\u4eac\u306f\u3069\u3053\u3067\u3059\u304b", any))
        keys.push_back(u.key);  // 東京はどこですか
    CHECK(keys == std::vector<std::string>{"\u6771\u4eac", "\u4eac\u306f"});

    // A made-up identifier whose parts occur: half credit at most, never "covered".
    const auto d3 = plain_doc("c", "mx 200 notice");
    const ragpp::Document* one[] = {&d3};
    const auto m = ragpp::query_coverage(an, "MX-200 notice", one, coverage_stats10());
    CHECK(m.passages[0] == Approx((0.5 * w_top + w_n) / (w_top + w_n)));
    CHECK(m.missing == std::vector<std::string>{"MX-200"});
    // The joined form as written covers it fully.
    const auto d4 = plain_doc("d", "mx200 notice");
    const ragpp::Document* four[] = {&d4};
    CHECK(ragpp::query_coverage(an, "MX-200 notice", four, coverage_stats10()).passages[0] == Approx(1.0));
    // Common words are not listed as missing (the: idf(10,10)^1.5 < a quarter of w_top).
    const auto d5 = plain_doc("e", "notice");
    const ragpp::Document* five[] = {&d5};
    CHECK(ragpp::query_coverage(an, "the notice period", five, coverage_stats10(), every_word).missing ==
          std::vector<std::string>{"period"});
    // The fields BM25 scores count: a chunk whose title names the identifier covers it.
    ragpp::Document titled{"policy/CMP0077.rst:1", "option honors normal variables",
                           {{"source", std::string("policy/CMP0077.rst")}, {"title", std::string("CMP0077")}}};
    const ragpp::Document* t[] = {&titled};
    const ragpp::TermStatistics s2{5, [](std::string_view) { return std::size_t{1}; }};
    CHECK(ragpp::query_coverage(an, "CMP0077", t, s2).score == Approx(0.7));
    // No passage: 0, nothing missing; no question word: 0.
    CHECK(ragpp::query_coverage(an, "notice", {}, coverage_stats10()).score == 0.0);
    CHECK(ragpp::query_coverage(an, "notice", {}, coverage_stats10()).missing.empty());
    CHECK(ragpp::query_coverage(an, "?!", one, coverage_stats10()).score == 0.0);
    // Options are checked.
    ragpp::CoverageOptions bad;
    bad.passage_weights = {0.5, 0.2};
    CHECK_THROWS_AS(ragpp::query_coverage(an, "x", one, coverage_stats10(), bad), ragpp::InvalidArgument);
}

TEST_CASE("confidence: coverage alone, or with a cross-encoder's calibrated score", "[abstain]") {
    ragpp::ConfidenceSignals s;
    s.coverage = 0.6;
    s.results = 3;
    CHECK(ragpp::confidence(s) == 0.6);
    s.reranker = ragpp::calibrated_logit(2.0);
    CHECK(*s.reranker == Approx(1 / (1 + std::exp(-2.0))));
    CHECK(ragpp::confidence(s) == Approx((0.6 + 1 / (1 + std::exp(-2.0))) / 2));
    s.results = 0;
    CHECK(ragpp::confidence(s) == 0.0);
    CHECK_THROWS_AS(ragpp::confidence(s, {-1, 1}), ragpp::InvalidArgument);
}

TEST_CASE("auroc against the count over every pair", "[abstain]") {
    std::mt19937 rng(7);
    for (int trial = 0; trial < 50; ++trial) {
        std::vector<double> c;
        std::vector<bool> a;
        const int n = 2 + static_cast<int>(rng() % 40);
        for (int i = 0; i < n; ++i) {
            c.push_back(static_cast<double>(rng() % 6) / 5);  // many ties
            a.push_back(rng() % 3 != 0);
        }
        double u = 0, pairs = 0;
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j)
                if (a[i] && !a[j]) {
                    pairs += 1;
                    u += c[i] > c[j] ? 1 : c[i] == c[j] ? 0.5 : 0;
                }
        const auto got = ragpp::auroc(c, a);
        if (pairs == 0) {
            CHECK_FALSE(got);
        } else {
            REQUIRE(got);
            CHECK(*got == Approx(u / pairs));
        }
    }
    CHECK(*ragpp::auroc(std::vector<double>{0.9, 0.1}, std::vector<bool>{true, false}) == 1.0);
    CHECK_THROWS_AS(ragpp::auroc(std::vector<double>{0.9}, std::vector<bool>{true, false}), ragpp::InvalidArgument);
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

TEST_CASE("answer: passages after the floor, the decision, evidence or reasons", "[abstain][answer]") {
    const ragpp::StandardAnalyzer an;
    auto result = [](std::string id, std::string text, std::optional<double> reranker = {}) {
        ragpp::Result r;
        r.document = std::make_shared<const ragpp::Document>(plain_doc(std::move(id), std::move(text)));
        r.score = 1.0;
        if (reranker) r.rerank = ragpp::RerankTrace{1, 1.0, *reranker, 1};
        return r;
    };
    // The floor applies to reranked lists only, and keeps the first passage.
    std::vector<ragpp::Result> reranked{result("a", "x", 0.9), result("b", "y", 0.5), result("c", "z", 0.3)};
    CHECK(ragpp::answer_passages(reranked, 5, 0.5).size() == 2);
    CHECK(ragpp::answer_passages(reranked, 1, 0.5).size() == 1);
    CHECK(ragpp::answer_passages(reranked, 5, 0.0).size() == 3);
    std::vector<ragpp::Result> plain{result("a", "x"), result("b", "y"), result("c", "z")};
    CHECK(ragpp::answer_passages(plain, 5, 1.0).size() == 3);

    // Answered: the notice period is covered by the first passage.
    std::vector<ragpp::Result> ranked{result("contract.md:3", "The notice period of the MX-200 contract is three months."),
                                      result("other.md:1", "The contract of 2020.")};
    ragpp::AnswerOptions o;
    o.evidence.nonce_mode = ragpp::NonceMode::content_hash;
    const auto yes = ragpp::answer("notice period of MX-200", ranked, an, coverage_stats10(), o);
    CHECK(yes.answered);
    CHECK(yes.confidence == Approx(yes.coverage.score));
    CHECK(yes.confidence >= ragpp::default_min_confidence);
    REQUIRE(yes.evidence);
    CHECK(yes.evidence->sources.size() == 2);
    CHECK(yes.reasons.empty());
    // Refused: the identifier is not in the corpus and the best passage lacks it.
    const auto no = ragpp::answer("price of the MX-900", ranked, an, coverage_stats10(), o);
    CHECK_FALSE(no.answered);
    CHECK_FALSE(no.evidence);
    REQUIRE(no.reasons.size() == 2);
    CHECK(no.reasons[0] == "2 question words occur in no passage of the index: MX-900, price");
    CHECK(no.reasons[1].find("the passages cover") == 0);
    // Nothing found.
    const auto none = ragpp::answer("notice", {}, an, coverage_stats10(), o);
    CHECK_FALSE(none.answered);
    CHECK(none.confidence == 0.0);
    CHECK(none.reasons == std::vector<std::string>{"no passage of the index matches the question"});
    // A cross-encoder's logit joins the confidence.
    std::vector<ragpp::Result> ce{result("contract.md:3", "The notice period of the MX-200 contract.", -3.0)};
    const auto c = ragpp::answer("notice period of MX-200", ce, an, coverage_stats10(), o, true);
    REQUIRE(c.signals.reranker);
    CHECK(c.confidence == Approx((c.coverage.score + 1 / (1 + std::exp(3.0))) / 2));
    o.passages = 0;
    CHECK_THROWS_AS(ragpp::answer("x", ranked, an, coverage_stats10(), o), ragpp::InvalidArgument);
}
