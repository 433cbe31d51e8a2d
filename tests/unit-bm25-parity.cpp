// BM25Index against the peers' own outputs: rank_bm25 and bm25s on the first 1,000
// SciFact documents (../shared/fixtures/bm25/scifact1000_parity.json).
#include <ragpp/index/bm25.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <map>
#include <string>
#include <vector>

using ragpp::BM25Index;
using ragpp::BM25Params;
using ragpp::BM25Strategy;
using ragpp::BM25Variant;
using ragpp::WhitespaceAnalyzer;

namespace {

std::string join(const nlohmann::json& tokens) {
    std::string s;
    for (const auto& t : tokens) {
        if (!s.empty()) s += ' ';
        s += t.get<std::string>();
    }
    return s;
}

const nlohmann::json& fixture() {
    static const nlohmann::json j =
        nlohmann::json::parse(ragpp_test::read_file(ragpp_test::require_shared("fixtures/bm25/scifact1000_parity.json")));
    return j;
}

BM25Variant variant_of(const std::string& library) {
    static const std::map<std::string, BM25Variant> m{
        {"rank_bm25.BM25Okapi", BM25Variant::rank_bm25_okapi}, {"rank_bm25.BM25L", BM25Variant::rank_bm25_l},
        {"rank_bm25.BM25Plus", BM25Variant::rank_bm25_plus},   {"bm25s.lucene", BM25Variant::lucene},
        {"bm25s.robertson", BM25Variant::robertson},           {"bm25s.atire", BM25Variant::atire},
        {"bm25s.bm25l", BM25Variant::bm25l},                   {"bm25s.bm25+", BM25Variant::bm25plus}};
    return m.at(library);
}

/// Checks every query of `run` against `index`; returns the number of queries checked.
std::size_t check_run(const BM25Index<WhitespaceAnalyzer>& index, const nlohmann::json& run, BM25Strategy strategy) {
    const auto& j = fixture();
    std::vector<std::string> doc_ids;
    for (const auto& d : j["docs"]) doc_ids.push_back(d["id"].get<std::string>());
    std::size_t checked = 0;
    for (const auto& q : j["queries"]) {
        const std::string qid = q["id"].get<std::string>();
        const auto& expected = run["results"][qid];
        std::vector<std::string> terms;
        for (const auto& t : q["tokens"]) terms.push_back(t.get<std::string>());
        const auto hits = index.search_terms(terms, 20, {}, strategy);
        INFO(run["library"].get<std::string>() << " query " << qid << " strategy " << static_cast<int>(strategy));
        if (strategy == BM25Strategy::automatic) REQUIRE(hits == index.search(join(q["tokens"]), 20));
        REQUIRE(hits.size() == expected.size());
        for (std::size_t r = 0; r < hits.size(); ++r) {
            INFO("rank " << r + 1);
            REQUIRE(doc_ids.at(hits[r].id) == expected[r][0].get<std::string>());
            const double want = expected[r][1].get<double>();
            // Our scores are computed in double and returned as float: 1e-6 relative.
            REQUIRE(std::abs(static_cast<double>(hits[r].score) - want) <= 1e-6 * std::abs(want));
        }
        ++checked;
    }
    return checked;
}

}  // namespace

TEST_CASE("BM25 parity with rank_bm25 and bm25s on 1,000 SciFact documents, all 8 runs", "[bm25][parity]") {
    const auto& j = fixture();
    REQUIRE(j["runs"].size() == 8);
    REQUIRE(j["docs"].size() == 1000);
    for (const auto& run : j["runs"]) {
        const auto& p = run["params"];
        BM25Params params;
        params.variant = variant_of(run["library"].get<std::string>());
        params.k1 = p["k1"].get<double>();
        params.b = p["b"].get<double>();
        params.delta = p.value("delta", 0.5);
        params.epsilon = p.value("epsilon", 0.25);
        BM25Index<WhitespaceAnalyzer> index(params);
        // Corpus order = DocId order, so the fixture's ties (corpus position) are ours (smaller id).
        for (const auto& d : j["docs"]) index.add_document({d["id"].get<std::string>(), join(d["tokens"]), {}});
        REQUIRE(index.size() == 1000);
        for (auto strategy : {BM25Strategy::automatic, BM25Strategy::exhaustive, BM25Strategy::accumulate,
                              BM25Strategy::maxscore})
            CHECK(check_run(index, run, strategy) == 63);
    }
}

TEST_CASE("BM25 parity holds with k1, b, delta given per query instead of per index", "[bm25][parity]") {
    const auto& j = fixture();
    for (const auto& run : j["runs"]) {
        const auto& p = run["params"];
        BM25Params params;
        params.variant = variant_of(run["library"].get<std::string>());
        params.epsilon = p.value("epsilon", 0.25);
        params.k1 = 0.3;  // deliberately wrong index defaults
        params.b = 0.1;
        params.delta = 2.0;
        BM25Index<WhitespaceAnalyzer> index(params);
        for (const auto& d : j["docs"]) index.add_document({d["id"].get<std::string>(), join(d["tokens"]), {}});
        ragpp::BM25SearchOptions o;
        o.k1 = p["k1"].get<double>();
        o.b = p["b"].get<double>();
        o.delta = p.value("delta", 0.5);
        const auto& q = j["queries"][0];
        const auto hits = index.search(join(q["tokens"]), 20, o);
        const auto& expected = run["results"][q["id"].get<std::string>()];
        REQUIRE(hits.size() == expected.size());
        for (std::size_t r = 0; r < hits.size(); ++r) {
            CHECK(j["docs"][hits[r].id]["id"] == expected[r][0]);
            CHECK(hits[r].score == Approx(expected[r][1].get<double>()).epsilon(1e-6));
        }
    }
}
