#include <ragpp/index/bm25.hpp>
#include <ragpp/rerank/proximity.hpp>
#include <ragpp/rerank/reranker.hpp>
#include <ragpp/rerank/soft_match.hpp>
#include <ragpp/text/analyzer.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

using ragpp::ProximityReranker;
using ragpp::Result;
using ragpp::StandardAnalyzer;

namespace {

double score_of(const ProximityReranker<StandardAnalyzer>& r, std::string_view q, std::string_view p) {
    const std::string_view ps[] = {p};
    return r(q, ps)[0];
}

/// Fused results "d0", "d1", ... with RRF-like decreasing scores.
std::vector<Result> fused_list(std::size_t n) {
    std::vector<Result> out;
    for (std::size_t i = 0; i < n; ++i) {
        Result r;
        r.id = static_cast<ragpp::DocId>(i);
        r.score = 1.0 / (60.0 + static_cast<double>(i) + 1);
        r.document = std::make_shared<const ragpp::Document>(ragpp::Document{"d" + std::to_string(i), "text " + std::to_string(i), {}});
        out.push_back(r);
    }
    return out;
}

/// A reranker giving each passage a preset score by its text.
struct TableReranker {
    std::map<std::string, double> scores;
    std::vector<double> operator()(std::string_view, std::span<const std::string_view> passages) const {
        std::vector<double> out;
        for (auto p : passages) out.push_back(scores.at(std::string(p)));
        return out;
    }
};
static_assert(ragpp::Reranker<TableReranker>);
static_assert(ragpp::Reranker<ProximityReranker<StandardAnalyzer>>);

/// Two-dimensional toy word vectors.
struct ToyEmbedder {
    std::map<std::string, std::pair<float, float>> table{
        {"car", {1.0F, 0.0F}}, {"automobile", {0.8F, 0.6F}}, {"tree", {0.0F, 1.0F}}, {"rock", {0.0F, 0.0F}}};
    [[nodiscard]] std::size_t dimension() const { return 2; }
    [[nodiscard]] Eigen::VectorXf embed(std::string_view text, ragpp::Role) const {
        Eigen::VectorXf v = Eigen::VectorXf::Zero(2);
        if (auto it = table.find(std::string(text)); it != table.end()) v << it->second.first, it->second.second;
        else v << -1.0F, 0.0F;  // any other word points away from "car"
        return v;
    }
    [[nodiscard]] ragpp::RowMatrixXf embed_batch(std::span<const std::string> texts, ragpp::Role role) const {
        return ragpp::embed_rows(*this, texts, role);
    }
    [[nodiscard]] std::string name() const { return "toy"; }
};
static_assert(ragpp::Embedder<ToyEmbedder>);

}  // namespace

TEST_CASE("ProximityReranker: hand-computed coverage, MinDist proximity and identifiers", "[rerank]") {
    const ProximityReranker<StandardAnalyzer> r{StandardAnalyzer{}};
    const std::string q = "notice period contract";
    // All three words, notice and period adjacent: C = 1, P = 1.
    CHECK(score_of(r, q, "the notice period of the contract") == Approx(1.0));
    // All three, closest pair 4 apart: P = (ln(0.3 + e^-3) - ln 0.3) / (ln 1.3 - ln 0.3) = 0.1047113.
    const auto b = r.explain(q, "notice is given; the contract has a long period");
    CHECK(b.coverage == Approx(1.0));
    CHECK(b.min_distance == 4);
    CHECK(b.proximity == Approx(0.1047113).epsilon(1e-6));
    CHECK(b.score == Approx(0.5523557).epsilon(1e-6));
    // One word of three: C = 1/3, P = 0.
    CHECK(score_of(r, q, "period") == Approx(1.0 / 6));
    CHECK(score_of(r, q, "nothing relevant") == 0.0);
    // Identifiers: "MX-200" is present only when its joined form mx200 is.
    const auto split = r.explain("notice MX-200", "MX 200 notice");
    CHECK(split.identifiers_asked == 1);
    CHECK(split.identifiers_found == 0);
    CHECK(split.score == Approx(2.0 / 3));
    CHECK(score_of(r, "notice MX-200", "MX-200 notice") == Approx(1.0));
    // Weighted coverage: notice weighs 2, the others 1.
    const ProximityReranker<StandardAnalyzer> w{StandardAnalyzer{}, {}, [](std::string_view t) {
                                                    return t == "notice" ? 2.0 : 1.0;
                                                }};
    CHECK(w.explain(q, "period").coverage == Approx(0.25));
    CHECK(w.explain(q, "notice").coverage == Approx(0.5));
    // Repeated words count once; a question without terms scores 0.
    CHECK(r.explain("notice notice", "notice").words == 1);
    CHECK(score_of(r, "", "anything") == 0.0);
    CHECK_THROWS_AS(ProximityReranker<StandardAnalyzer>(StandardAnalyzer{}, ragpp::ProximityOptions{0, 0, 0, 0.3}),
                    ragpp::InvalidArgument);
}

TEST_CASE("ProximityReranker: MinDist equals the brute-force minimum over pairs", "[rerank]") {
    const ProximityReranker<StandardAnalyzer> r{StandardAnalyzer{}};
    const std::vector<std::string> vocab{"alpha", "beta", "gamma", "delta", "x", "y"};
    std::mt19937 rng(7);
    for (int round = 0; round < 300; ++round) {
        std::vector<std::string> words;
        const std::size_t n = rng() % 30 + 1;
        std::string passage;
        for (std::size_t i = 0; i < n; ++i) {
            words.push_back(vocab[rng() % vocab.size()]);
            passage += words.back() + " ";
        }
        const std::string q = "alpha beta gamma";
        auto asked = [](const std::string& w) { return w == "alpha" || w == "beta" || w == "gamma"; };
        std::size_t best = 0;
        std::set<std::string> present;
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = i + 1; j < n; ++j)
                if (words[i] != words[j] && asked(words[i]) && asked(words[j]) && (best == 0 || j - i < best))
                    best = j - i;
        for (const auto& w : words)
            if (w == "alpha" || w == "beta" || w == "gamma") present.insert(w);
        const auto b = r.explain(q, passage);
        INFO(passage);
        CHECK(b.matched == present.size());
        CHECK(b.min_distance == (present.size() >= 2 ? best : 0));
        CHECK(b.coverage == Approx(static_cast<double>(present.size()) / 3));
        CHECK(b.score >= 0.0);
        CHECK(b.score <= 1.0);
    }
}

TEST_CASE("SoftMatchReranker: weighted MaxSim over word vectors, by hand", "[rerank]") {
    const ragpp::SoftMatchReranker<ToyEmbedder, StandardAnalyzer> r{ToyEmbedder{}, StandardAnalyzer{}};
    const std::string_view ps[] = {"automobile", "car", "car tree", "rock", "", "zebra"};
    const auto s = r("car tree", ps);
    REQUIRE(s.size() == 6);
    CHECK(s[0] == Approx((0.8 + 0.6) / 2));  // car~automobile 0.8, tree~automobile 0.6
    CHECK(s[1] == Approx((1.0 + 0.0) / 2));
    CHECK(s[2] == Approx(1.0));
    CHECK(s[3] == Approx(0.0));  // a zero vector matches nothing
    CHECK(s[4] == 0.0);          // no terms
    CHECK(s[5] == Approx((-1.0 + 0.0) / 2));
    // Weights: tree counts three times as much as car.
    const ragpp::SoftMatchReranker<ToyEmbedder, StandardAnalyzer> w{
        ToyEmbedder{}, StandardAnalyzer{}, {}, [](std::string_view t) { return t == "tree" ? 3.0 : 1.0; }};
    CHECK(w("car tree", ps)[0] == Approx((0.8 + 3 * 0.6) / 4));
    // A term of weight 0 is ignored.
    const ragpp::SoftMatchReranker<ToyEmbedder, StandardAnalyzer> z{
        ToyEmbedder{}, StandardAnalyzer{}, {}, [](std::string_view t) { return t == "tree" ? 0.0 : 1.0; }};
    CHECK(z("car tree", ps)[0] == Approx(0.8));
}

TEST_CASE("rerank: order, trace, keep, candidates beyond N, ties and errors", "[rerank]") {
    auto fused = fused_list(6);
    TableReranker t{{{"text 0", 0.1}, {"text 1", 0.9}, {"text 2", 0.5}, {"text 3", 0.9}, {"text 4", 5.0}, {"text 5", 7.0}}};
    ragpp::RerankOptions o;
    o.candidates = 4;
    o.keep = 5;
    const auto out = ragpp::rerank("q", fused, t, o);
    // First 4 re-scored: d1 (0.9, fused 2) before d3 (0.9, fused 4) by fused rank, then d2, d0; then d4 unchanged.
    REQUIRE(out.size() == 5);
    std::vector<std::string> ids;
    for (const auto& r : out) ids.push_back(r.document->id);
    CHECK(ids == std::vector<std::string>{"d1", "d3", "d2", "d0", "d4"});
    REQUIRE(out[0].rerank);
    CHECK(out[0].rerank->fused_rank == 2);
    CHECK(out[0].rerank->fused_score == Approx(1.0 / 62));
    CHECK(out[0].rerank->reranker_score == 0.9);
    CHECK(out[0].rerank->rank == 1);
    CHECK(out[0].score == 0.9);
    CHECK(out[3].rerank->rank == 4);
    CHECK_FALSE(out[4].rerank);  // beyond the candidates: not re-scored
    CHECK(out[4].score == Approx(1.0 / 65));
    // fused_weight: s = r + w * fused / best fused; d0 gets 0.1 + 1 * 1, d1 0.9 + 61/62.
    o.fused_weight = 1.0;
    const auto mixed = ragpp::rerank("q", fused, t, o);
    CHECK(mixed[0].document->id == "d1");
    CHECK(mixed[0].score == Approx(0.9 + 61.0 / 62));
    CHECK(mixed[1].document->id == "d3");
    CHECK(mixed[2].document->id == "d2");
    // Errors.
    auto bad = [](std::string_view, std::span<const std::string_view> p) { return std::vector<double>(p.size() + 1, 0.0); };
    CHECK_THROWS_AS(ragpp::rerank("q", fused, bad), ragpp::InvalidArgument);
    auto nan = [](std::string_view, std::span<const std::string_view> p) {
        return std::vector<double>(p.size(), std::nan(""));
    };
    CHECK_THROWS_AS(ragpp::rerank("q", fused, nan), ragpp::InvalidArgument);
    o.keep = 0;
    CHECK_THROWS_AS(ragpp::rerank("q", fused, t, o), ragpp::InvalidArgument);
    CHECK(ragpp::rerank("q", std::vector<Result>{}, t).empty());
}

TEST_CASE("rerank: random scores give a sorted, duplicate-free prefix of the same candidates", "[rerank]") {
    std::mt19937 rng(99);
    for (int round = 0; round < 100; ++round) {
        const std::size_t n = rng() % 40 + 1, cand = rng() % 50 + 1, keep = rng() % 60 + 1;
        auto fused = fused_list(n);
        std::vector<double> scores(n);
        for (auto& s : scores) s = static_cast<double>(rng() % 5);  // many ties
        auto f = [&](std::string_view, std::span<const std::string_view> p) {
            std::vector<double> out;
            for (auto text : p) out.push_back(scores[std::stoul(std::string(text.substr(5)))]);
            return out;
        };
        const auto out = ragpp::rerank("q", fused, f, ragpp::RerankOptions{cand, keep, 0.0});
        const std::size_t m = std::min(cand, n);
        // Oracle: sort the first m by (score desc, fused rank asc), append the rest, cut at keep.
        std::vector<std::size_t> expect(m);
        std::iota(expect.begin(), expect.end(), 0);
        std::sort(expect.begin(), expect.end(), [&](std::size_t a, std::size_t b) {
            return scores[a] != scores[b] ? scores[a] > scores[b] : a < b;
        });
        for (std::size_t i = m; i < n; ++i) expect.push_back(i);
        expect.resize(std::min(keep, n));
        REQUIRE(out.size() == expect.size());
        for (std::size_t i = 0; i < out.size(); ++i) CHECK(out[i].id == expect[i]);
    }
}

TEST_CASE("search_reranked over a Retriever equals re-sorting its fused list by hand", "[rerank]") {
    using Bm25 = ragpp::BM25Index<StandardAnalyzer>;
    ragpp::Retriever<Bm25> retriever{Bm25(StandardAnalyzer{}, ragpp::BM25Params{})};
    const std::vector<std::string> texts{
        "the contract notice period is three months",                 // adjacent words
        "notice: the contract ends after a period of three months",   // spread out
        "contract contract contract; the terms define the notice; the terms define the period",  // high tf
        "a product sheet for the contract MX-200",                    // one word
        "the notice of the board",                                    // one word
        "unrelated procedure for backups"};
    for (std::size_t i = 0; i < texts.size(); ++i) retriever.add_document(ragpp::Document{"t" + std::to_string(i), texts[i], {}});
    const ProximityReranker<StandardAnalyzer> prox{StandardAnalyzer{}};
    const std::string q = "contract notice period";
    const auto out = ragpp::search_reranked(retriever, q, prox, ragpp::RerankOptions{4, 3, 0.0});
    // By hand: the fused top 4, each scored alone, sorted by score then fused rank.
    const auto fused = retriever.search(q, 4);
    std::vector<std::pair<double, std::size_t>> by_hand;
    for (std::size_t i = 0; i < fused.size(); ++i) by_hand.emplace_back(score_of(prox, q, fused[i].document->text), i);
    std::stable_sort(by_hand.begin(), by_hand.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    REQUIRE(out.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
        CHECK(out[i].id == fused[by_hand[i].second].id);
        CHECK(out[i].rerank->fused_rank == by_hand[i].second + 1);
        CHECK(out[i].score == Approx(by_hand[i].first));
    }
    // The adjacent phrasing wins over raw term frequency.
    CHECK(out[0].document->id == "t0");
}
