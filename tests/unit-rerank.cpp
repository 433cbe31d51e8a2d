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
static_assert(ragpp::DocumentReranker<ProximityReranker<StandardAnalyzer>>);
static_assert(!ragpp::DocumentReranker<TableReranker>);

/// A chunk of `source` under `headings` with `text`, as Chunk::to_document gives it.
ragpp::Document chunk(std::string id, std::string source, std::vector<std::string> headings, std::string text) {
    ragpp::Document d{std::move(id), std::move(text), {}};
    d.metadata["source"] = std::move(source);
    d.metadata["heading_path"] = std::move(headings);
    return d;
}

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
    // Identifiers: "MX-200" is present only when its joined form mx200 is. Split, its
    // parts mx and 200 both occur: credit 0.5 * 2/2 = 0.5, so C = (1 + 0.5) / 2 = 0.75;
    // only notice is present as written, so P = 0; I = 0: (0.75 + 0 + 0) / 3 = 0.25.
    const auto split = r.explain("notice MX-200", "MX 200 notice");
    CHECK(split.identifiers_asked == 1);
    CHECK(split.identifiers_found == 0);
    CHECK(split.coverage == Approx(0.75));
    CHECK(split.proximity == 0.0);
    CHECK(split.score == Approx(0.25));
    CHECK(split.missing == std::vector<std::string>{"MX-200"});
    CHECK(split.partial == std::vector<std::string>{"MX-200"});
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

TEST_CASE("ProximityReranker: a compound is present only as written; its parts earn part credit", "[rerank]") {
    const ProximityReranker<StandardAnalyzer> r{StandardAnalyzer{}};
    const std::string q = "how to set CMAKE_QUUX_FROBNICATE_WIDGETS";
    // Words: how, to, set, and the compound (parts cmake, quux, frobnicate, widgets;
    // joined cmakequuxfrobnicatewidgets). The old rule (any term present) gave C = 1,
    // P = 1: 1.0. Now, unit weights: credit 0.5 * 2/4 = 0.25, C = (3 + 0.25) / 4 = 0.8125,
    // P = 1 (how, to adjacent), no identifier (no digit): (0.8125 + 1) / 2 = 0.90625.
    const auto made_up = r.explain(q, "how to set cmake widgets");
    CHECK(made_up.words == 4);
    CHECK(made_up.matched == 3);
    CHECK(made_up.coverage == Approx(0.8125));
    CHECK(made_up.score == Approx(0.90625));
    CHECK(made_up.missing == std::vector<std::string>{"CMAKE_QUUX_FROBNICATE_WIDGETS"});
    // As written it is present: everything 1.
    CHECK(score_of(r, q, "how to set CMAKE_QUUX_FROBNICATE_WIDGETS") == Approx(1.0));
    // With weights (how, to, set, cmake 1; widgets 2; quux, frobnicate 5; joined 6, the
    // word's weight): credit = 0.5 * (1 + 2) / 13 = 3/26, C = (3 + 6 * 3/26) / 9 = 16/39,
    // score = (16/39 + 1) / 2 = 55/78.
    const ProximityReranker<StandardAnalyzer> w{StandardAnalyzer{}, {}, [](std::string_view t) {
                                                    if (t == "widgets") return 2.0;
                                                    if (t == "quux" || t == "frobnicate") return 5.0;
                                                    if (t == "cmakequuxfrobnicatewidgets") return 6.0;
                                                    return 1.0;
                                                }};
    CHECK(w.explain(q, "how to set cmake widgets").coverage == Approx(16.0 / 39));
    CHECK(score_of(w, q, "how to set cmake widgets") == Approx(55.0 / 78));
    // No part present: credit 0, the word is missing and not partial.
    const auto none = r.explain(q, "how to set it");
    CHECK(none.coverage == Approx(0.75));
    CHECK(none.partial.empty());
    // Pieces: punctuation other than connectors cuts words; "set(CACHE)" is set and cache.
    const auto pieces = r.explain("What does set(CACHE) do?", "cache");
    CHECK(pieces.words == 5);
    CHECK(pieces.coverage == Approx(0.2));
    // part_credit must be in [0, 1).
    ragpp::ProximityOptions bad;
    bad.part_credit = 1.0;
    CHECK_THROWS_AS(ProximityReranker<StandardAnalyzer>(StandardAnalyzer{}, bad), ragpp::InvalidArgument);
}

TEST_CASE("ProximityReranker: the fields BM25F reads lead a page named by the question", "[rerank]") {
    // The policy page: title CMP0077 (its first heading), path "policy CMP0077".
    const auto page = chunk("policy/CMP0077.rst:1", "policy/CMP0077.rst", {"CMP0077"},
                            "CMP0077\noption() honors normal variables.");
    // A release note whose body mentions the policy and the word "change".
    const auto note = chunk("release/3.13.rst:40", "release/3.13.rst", {"3.13 Release Notes", "Policies"},
                            "The change: option() honors normal variables when CMP0077 is set.");
    const ProximityReranker<StandardAnalyzer> r{StandardAnalyzer{}, {}, [](std::string_view t) {
                                                    return t == "cmp0077" ? 4.0 : 1.0;
                                                }};
    const std::string q = "what does CMP0077 change";
    // Words what, does, change (1 each) and CMP0077 (4): total 7.
    // Page: C = 4/7, P = 0 (one word), I = 1, T = 4/7 (title and path): (4/7 + 1 + 4/7) / 4 = 15/28.
    const auto p = r.explain(q, page);
    CHECK(p.has_fields);
    CHECK(p.fields == Approx(4.0 / 7));
    CHECK(p.score == Approx(15.0 / 28));
    // Note: C = 5/7, MinDist change(1)..cmp0077(9) = 8, P = ln(1 + e^-7/0.3) / ln(1.3/0.3)
    // = 0.00206980, I = 1, T = 0: (5/7 + 0.0020698 + 1) / 4 = 0.4290888.
    const auto n = r.explain(q, note);
    CHECK(n.min_distance == 8);
    CHECK(n.proximity == Approx(0.0020698).epsilon(1e-4));
    CHECK(n.fields == 0.0);
    CHECK(n.score == Approx(0.4290888).epsilon(1e-6));
    // Text alone (no fields: T left out) the note leads: (5/7 + 0.0020698 + 1) / 3 vs (4/7 + 1) / 3.
    CHECK(r.explain(q, note.text).score == Approx(0.5721184).epsilon(1e-6));
    CHECK(r.explain(q, page.text).score == Approx(11.0 / 21));
    // Through the stage: the note is fused first; the documents form puts the page first,
    // the text form (a lambda over the same reranker) keeps the note first.
    std::vector<Result> fused(2);
    fused[0].document = std::make_shared<const ragpp::Document>(note);
    fused[0].score = 1.0 / 61;
    fused[1].document = std::make_shared<const ragpp::Document>(page);
    fused[1].score = 1.0 / 62;
    CHECK(ragpp::rerank(q, fused, r)[0].document->id == "policy/CMP0077.rst:1");
    auto text_only = [&](std::string_view question, std::span<const std::string_view> ps) { return r(question, ps); };
    CHECK(ragpp::rerank(q, fused, text_only)[0].document->id == "release/3.13.rst:40");
    // A document without fields (BEIR) scores as its text.
    const ragpp::Document plain{"d", note.text, {}};
    const ragpp::Document* docs[] = {&plain, nullptr};
    const auto s = r.score_documents(q, docs);
    CHECK(s[0] == Approx(0.5721184).epsilon(1e-6));
    CHECK(s[1] == 0.0);
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

TEST_CASE("SoftMatchReranker: compounds by their joined form, parts for half; fields", "[rerank]") {
    const ragpp::SoftMatchReranker<ToyEmbedder, StandardAnalyzer> r{ToyEmbedder{}, StandardAnalyzer{}};
    // "car-tree" is one word: parts car, tree; joined cartree, whose toy vector is (-1, 0).
    const std::string_view ps[] = {"car tree", "cartree", "automobile"};
    const auto s = r("car-tree", ps);
    // Parts only: m(cartree) = max(cos with car -1, tree 0) = 0; parts 0.5 * (1 + 1) / 2 = 0.5.
    // (The old per-term mean gave (1 + 1 + 0) / 3.)
    CHECK(s[0] == Approx(0.5));
    CHECK(s[1] == Approx(1.0));
    // automobile (0.8, 0.6): m(cartree) = -0.8; parts 0.5 * (0.8 + 0.6) / 2 = 0.35.
    CHECK(s[2] == Approx(0.35));
    // Fields: a page titled "tree" (path "x tree") whose text is "car". S over fields and
    // text = (1 + 1) / 2 = 1; F over the field terms tree, x: car's best is tree's 0 (x is
    // (-1, 0): -1), tree 1: F = 0.5; score (1 + 0.5) / 2 = 0.75. Without fields: S = 1.
    const auto page = chunk("x/tree.md:1", "x/tree.md", {"tree"}, "car");
    const ragpp::Document plain{"p", "car tree", {}};
    const ragpp::Document* docs[] = {&page, &plain};
    const auto d = r.score_documents("car tree", docs);
    CHECK(d[0] == Approx(0.75));
    CHECK(d[1] == Approx(1.0));
    CHECK_THROWS_AS((ragpp::SoftMatchReranker<ToyEmbedder, StandardAnalyzer>{ToyEmbedder{}, StandardAnalyzer{},
                                                                             ragpp::SoftMatchOptions{8, 1.5, 1.0}}),
                    ragpp::InvalidArgument);
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
    // Rank fusion, k = 60. Reranker ranks (ties share): d1 1, d3 1, d2 3, d0 4; fused ranks d0..d3 1..4.
    // w = 1: d0 1/64 + 1/61, d1 1/61 + 1/62, d2 1/63 + 1/63, d3 1/61 + 1/64 (= d0's: fused order).
    o.fusion = ragpp::RerankFusion::rank;
    const auto ranked = ragpp::rerank("q", fused, t, o);
    ids.clear();
    for (const auto& r : ranked) ids.push_back(r.document->id);
    CHECK(ids == std::vector<std::string>{"d1", "d0", "d3", "d2", "d4"});
    CHECK(ranked[0].score == Approx(1.0 / 61 + 1.0 / 62));
    CHECK(ranked[0].rerank->reranker_score == 0.9);
    // w = 0: the reranker's ranks alone, ties by fused rank.
    o.fused_weight = 0.0;
    ids.clear();
    for (const auto& r : ragpp::rerank("q", fused, t, o)) ids.push_back(r.document->id);
    CHECK(ids == std::vector<std::string>{"d1", "d3", "d2", "d0", "d4"});
    o.rank_k = 0.0;
    CHECK_THROWS_AS(ragpp::rerank("q", fused, t, o), ragpp::InvalidArgument);
    o.rank_k = 60.0;
    // Lists fusion without any list trace: the fused score, as `score`.
    o.fusion = ragpp::RerankFusion::lists;
    o.fused_weight = 1.0;
    CHECK(ragpp::rerank("q", fused, t, o)[0].score == Approx(0.9 + 61.0 / 62));
    o.fusion = ragpp::RerankFusion::score;
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

TEST_CASE("rerank: lists fusion adds each list's score over its best, by hand", "[rerank]") {
    // BM25 scores 10, 8, 2; cosines -, 0.5, 0.25 (d0 not in the vector list); reranker 0, 0.5, 1.
    auto fused = fused_list(3);
    const double bm25[] = {10, 8, 2};
    for (std::size_t i = 0; i < 3; ++i) fused[i].trace = {ragpp::ListTrace{i + 1, bm25[i]}, ragpp::ListTrace{}};
    fused[1].trace[1] = {1, 0.5};
    fused[2].trace[1] = {2, 0.25};
    TableReranker t{{{"text 0", 0.0}, {"text 1", 0.5}, {"text 2", 1.0}}};
    ragpp::RerankOptions o{3, 3, 2.0, ragpp::RerankFusion::lists};
    // First stage: d0 (1 + 0) / 2 = 0.5, d1 (0.8 + 1) / 2 = 0.9, d2 (0.2 + 0.5) / 2 = 0.35;
    // stage = reranker + 2 * first: d0 1.0, d1 2.3, d2 1.7.
    auto out = ragpp::rerank("q", fused, t, o);
    REQUIRE(out.size() == 3);
    CHECK(out[0].document->id == "d1");
    CHECK(out[0].score == Approx(2.3));
    CHECK(out[1].document->id == "d2");
    CHECK(out[1].score == Approx(1.7));
    CHECK(out[2].score == Approx(1.0));
    // BM25 only (no vector list): d0 0 + 2, d1 0.5 + 1.6, d2 1 + 0.4: d1, d0, d2.
    for (auto& r : fused) r.trace.resize(1);
    out = ragpp::rerank("q", fused, t, o);
    CHECK(out[0].document->id == "d1");
    CHECK(out[0].score == Approx(2.1));
    CHECK(out[1].document->id == "d0");
    CHECK(out[2].document->id == "d2");
    CHECK(out[2].score == Approx(1.4));
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
        // Rank fusion: s_i = 1/(60 + 1 + #{j < m: score_j > score_i}) + w/(60 + i + 1), by brute force.
        const double w = static_cast<double>(rng() % 4) / 2;
        const auto fusedr = ragpp::rerank("q", fused, f, ragpp::RerankOptions{cand, keep, w, ragpp::RerankFusion::rank});
        std::vector<double> s(m);
        for (std::size_t i = 0; i < m; ++i) {
            std::size_t higher = 0;
            for (std::size_t j = 0; j < m; ++j) higher += scores[j] > scores[i] ? 1 : 0;
            s[i] = 1.0 / (61.0 + static_cast<double>(higher)) + w / (61.0 + static_cast<double>(i));
        }
        std::vector<std::size_t> by_rank(m);
        std::iota(by_rank.begin(), by_rank.end(), 0);
        std::sort(by_rank.begin(), by_rank.end(), [&](std::size_t a, std::size_t b) { return s[a] != s[b] ? s[a] > s[b] : a < b; });
        for (std::size_t i = m; i < n; ++i) by_rank.push_back(i);
        by_rank.resize(std::min(keep, n));
        REQUIRE(fusedr.size() == by_rank.size());
        for (std::size_t i = 0; i < fusedr.size(); ++i) CHECK(fusedr[i].id == by_rank[i]);
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
