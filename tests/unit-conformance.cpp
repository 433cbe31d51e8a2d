// The index concept (core/concepts.hpp's SearchIndex), one contract every index passes:
// BM25Index, VectorIndex with the Flat and the Hnsw backend, and a Retriever fusing two
// of them. Each clause of the concept's comment is checked on every type:
// - add_document(id, doc) indexes under the caller's id; a duplicate id or bad input
//   throws and changes nothing (ill-formed UTF-8 is not bad input: it reads as U+FFFD);
// - remove_document(id) removes; an id that is not there throws NotFoundError and
//   changes nothing; an index may take a removed id again, a Retriever never reuses one;
// - search(query, k, options): at most k results, best first, ties by smaller id, each id
//   at most once, none outside options.allowed; const and repeatable;
// - size() counts what is indexed.
// The oracle for "best first" is the same index's own longer list: the top k is the
// prefix of the full ranking (and, for one index, a filtered search is the full ranking
// restricted to the allowed set; HNSW is exact here, its candidate list covering the
// whole collection).
#include <ragpp/core/concepts.hpp>
#include <ragpp/embed/hashing.hpp>
#include <ragpp/index/bm25.hpp>
#include <ragpp/index/hnsw.hpp>
#include <ragpp/index/vector.hpp>
#include <ragpp/retrieve/retriever.hpp>
#include <ragpp/text/analyzer.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

namespace conformance {

using Bm25 = ragpp::BM25Index<ragpp::StandardAnalyzer>;
using Flat = ragpp::VectorIndex<ragpp::HashingEmbedder>;
using Graph = ragpp::VectorIndex<ragpp::HashingEmbedder, ragpp::Hnsw>;
using Fused = ragpp::Retriever<Bm25, Graph>;

template <class I>
inline constexpr bool is_retriever = std::is_same_v<I, Fused>;

/// 48 documents over a small vocabulary; every fourth repeats an earlier text exactly,
/// so that equal scores (ties) occur in every index.
std::vector<ragpp::Document> corpus() {
    const std::vector<std::string> words{"vector", "search", "index", "ranking", "fusion", "banana",
                                         "kernel", "query",  "graph", "posting", "token",  "score"};
    std::vector<ragpp::Document> docs;
    for (std::size_t i = 0; i < 48; ++i) {
        std::string text;
        if (i % 4 == 3) {
            text = docs[i - 2].text;
        } else {
            for (std::size_t j = 0; j < 3 + i % 5; ++j) text += words[(i * 7 + j * 5) % words.size()] + " ";
        }
        docs.push_back({"doc" + std::to_string(i), text, {}});
    }
    return docs;
}

/// Ids chosen by the caller, neither dense nor in order of insertion.
ragpp::DocId id_of(std::size_t i) { return static_cast<ragpp::DocId>(3 * i + 2); }

template <class I>
void add(I& index, ragpp::DocId id, const ragpp::Document& doc) {
    if constexpr (is_retriever<I>) index.add_document(id, ragpp::Document(doc));
    else index.add_document(id, doc);
}

template <class I>
std::vector<std::pair<ragpp::DocId, double>> ranking(const I& index, std::string_view query, std::size_t k,
                                                     const ragpp::SearchOptions& options = {}) {
    std::vector<std::pair<ragpp::DocId, double>> out;
    for (const auto& r : index.search(query, k, options)) out.emplace_back(r.id, static_cast<double>(r.score));
    return out;
}

/// What every result list must be: at most k entries, ids unique and indexed, scores
/// not increasing, ties by smaller id, none outside the allowed set.
template <class List>
void check_list(const List& list, std::size_t k, const std::set<ragpp::DocId>& indexed,
                const ragpp::SearchOptions& options) {
    CHECK(list.size() <= k);
    std::set<ragpp::DocId> seen;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const auto [id, score] = list[i];
        CHECK(seen.insert(id).second);
        CHECK(indexed.count(id) == 1);
        CHECK(options.allows(id));
        if (i > 0) {
            const auto [prev_id, prev_score] = list[i - 1];
            CHECK(prev_score >= score);
            if (prev_score == score) CHECK(prev_id < id);
        }
    }
}

const std::vector<std::string> queries{"vector search", "banana", "fusion ranking score", "kernel graph token",
                                       "posting", "nothing matches zebra"};

}  // namespace conformance

TEMPLATE_TEST_CASE("conformance: every index keeps the SearchIndex contract", "[conformance]", conformance::Bm25,
                   conformance::Flat, conformance::Graph, conformance::Fused) {
    using namespace conformance;
    static_assert(ragpp::SearchIndex<TestType>);
    TestType index;
    CHECK(index.size() == 0);
    CHECK(index.search("vector search", 5).empty());

    const auto docs = corpus();
    std::set<ragpp::DocId> indexed;
    for (std::size_t i = 0; i < docs.size(); ++i) {
        add(index, id_of(i), docs[i]);
        indexed.insert(id_of(i));
    }
    REQUIRE(index.size() == docs.size());
    const std::size_t all = docs.size() + 3;

    SECTION("search: at most k, best first, ties by smaller id, each id once; the top k is the full list's prefix") {
        std::size_t ties = 0;
        for (const auto& q : queries) {
            CAPTURE(q);
            const auto full = ranking(index, q, all);
            check_list(full, all, indexed, {});
            CHECK(ranking(index, q, all) == full);  // repeatable
            CHECK(ranking(index, q, 0).empty());
            for (std::size_t k : {1U, 5U, 17U}) {
                const auto top = ranking(index, q, k);
                check_list(top, k, indexed, {});
                CHECK(top.size() == std::min(k, full.size()));
                CHECK(std::equal(top.begin(), top.end(), full.begin()));
            }
            for (std::size_t i = 1; i < full.size(); ++i) ties += full[i - 1].second == full[i].second ? 1 : 0;
        }
        CHECK(ties > 0);  // the tie rule was exercised
    }

    SECTION("search: none outside options.allowed; one index's filtered list is its full list restricted") {
        ragpp::DocSet allowed;
        std::set<ragpp::DocId> allowed_ids;
        for (std::size_t i = 0; i < docs.size(); i += 3) {
            allowed.set(id_of(i));
            allowed_ids.insert(id_of(i));
        }
        const auto options = ragpp::SearchOptions::only(allowed);
        for (const auto& q : queries) {
            CAPTURE(q);
            const auto filtered = ranking(index, q, all, options);
            check_list(filtered, all, indexed, options);
            if constexpr (!is_retriever<TestType>) {
                std::vector<std::pair<ragpp::DocId, double>> restricted;
                for (const auto& e : ranking(index, q, all))
                    if (allowed_ids.count(e.first) != 0) restricted.push_back(e);
                REQUIRE(filtered.size() == restricted.size());
                for (std::size_t i = 0; i < filtered.size(); ++i) {
                    CHECK(filtered[i].first == restricted[i].first);
                    CHECK(filtered[i].second == Approx(restricted[i].second).margin(1e-6));
                }
            }
        }
        CHECK(ranking(index, "vector search", all, ragpp::SearchOptions::only(ragpp::DocSet{})).empty());
    }

    SECTION("a duplicate id throws and changes nothing") {
        const auto before = ranking(index, "vector search", all);
        CHECK_THROWS_AS(add(index, id_of(5), ragpp::Document{"other", "banana banana", {}}), ragpp::DuplicateError);
        CHECK(index.size() == docs.size());
        CHECK(ranking(index, "vector search", all) == before);
        CHECK(ranking(index, "banana", all) == ranking(index, "banana", all));
    }

    SECTION("ill-formed UTF-8 reads as U+FFFD (docs/text-analysis.md): indexed, its valid words found") {
        add(index, 1000, ragpp::Document{"bad", "zebra \xC3\x28 \xFF okapi", {}});
        indexed.insert(1000);
        CHECK(index.size() == docs.size() + 1);
        for (const std::string q : {"zebra okapi", "\xC3\x28 \xFF", "vector search"}) {
            const auto list = ranking(index, q, all);
            check_list(list, all, indexed, {});
            if (q == "zebra okapi") {
                REQUIRE(!list.empty());
                CHECK(list.front().first == 1000);
            }
        }
    }

    SECTION("removing an id that is not there throws NotFoundError and changes nothing") {
        const auto before = ranking(index, "fusion ranking score", all);
        CHECK_THROWS_AS(index.remove_document(1), ragpp::NotFoundError);
        CHECK(index.size() == docs.size());
        CHECK(ranking(index, "fusion ranking score", all) == before);
    }

    SECTION("a removed id is never returned, and may be used again") {
        const auto best = ranking(index, "vector search", 1);
        REQUIRE(best.size() == 1);
        const ragpp::DocId gone = best.front().first;
        index.remove_document(gone);
        indexed.erase(gone);
        CHECK(index.size() == docs.size() - 1);
        for (const auto& q : queries) {
            const auto list = ranking(index, q, all);
            check_list(list, all, indexed, {});
            for (const auto& e : list) CHECK(e.first != gone);
        }
        CHECK_THROWS_AS(index.remove_document(gone), ragpp::NotFoundError);
        if constexpr (is_retriever<TestType>) {
            // The Retriever owns its documents' ids: never reused (its stored documents and
            // citations stay unambiguous), so adding under a removed id is a duplicate.
            CHECK_THROWS_AS(add(index, gone, ragpp::Document{"again", "vector search", {}}), ragpp::DuplicateError);
            CHECK(index.size() == docs.size() - 1);
        } else {
            add(index, gone, ragpp::Document{"again", "vector search vector search", {}});
            CHECK(index.size() == docs.size());
            const auto again = ranking(index, "vector search", all);
            CHECK(std::any_of(again.begin(), again.end(), [&](const auto& e) { return e.first == gone; }));
        }
    }
}
