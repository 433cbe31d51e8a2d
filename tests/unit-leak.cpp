// Leak tests: over random documents, groups, filters and queries, no result of any
// index, and no result or trace entry of the Retriever, ever names a document
// outside the allowed set (access policy && filter, compiled by MetadataIndex), nor
// a removed document. The allowed set itself is checked against the oracle
// (AccessPolicy::allows && Filter::matches on each document's metadata).
//
// The harness is a template over index types; a deliberately leaky index (which
// ignores SearchOptions::allowed) shows the check can fail. Index types with their
// own construction add a make_index overload below.
#include <ragpp/filter/access.hpp>
#include <ragpp/filter/filter.hpp>
#include <ragpp/filter/metadata_index.hpp>
#include <ragpp/retrieve/retriever.hpp>

#include "term_overlap_index.hpp"

#include <catch2/catch.hpp>

#include <optional>
#include <random>
#include <string>
#include <vector>

using ragpp::AccessPolicy;
using ragpp::DocId;
using ragpp::DocSet;
using ragpp::Document;
using ragpp::Filter;
using ragpp::Metadata;
using ragpp::MetadataIndex;
using ragpp::Principal;
using ragpp::SearchOptions;
using ragpp::Unlabeled;
using ragpp_test::LeakyIndex;
using ragpp_test::TermOverlapIndex;

namespace {

template <class Index>
Index make_index() {
    return Index{};
}

struct Stats {
    std::size_t queries = 0;
    std::size_t hits = 0;          // results returned
    std::size_t leaks = 0;         // results outside the allowed set, or removed
    std::size_t filtered_out = 0;  // documents the unfiltered search returned that the allowed set excludes
};

class World {
public:
    explicit World(unsigned seed) : rng_(seed) {}

    int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

    Document document(std::size_t i) {
        static const char* const vocab[] = {"contract", "rate", "notice", "month", "service", "level", "penalty",
                                            "renewal", "term",     "price", "client", "annex",  "clause",  "date"};
        std::string text;
        for (int n = 3 + pick(10); n > 0; --n) text += std::string(vocab[pick(14)]) + " ";
        Metadata m;
        const int g = pick(5);
        if (g == 1) m["groups"] = std::vector<std::string>{};
        if (g >= 2) {
            std::vector<std::string> groups;
            for (int k = pick(3) + 1; k > 0; --k) groups.push_back("g" + std::to_string(pick(4)));
            m["groups"] = groups;
        }
        if (pick(4) == 0) m["groups"] = "g" + std::to_string(pick(4));  // a single group as a string
        if (pick(3) != 0) m["type"] = std::string(pick(2) == 0 ? "contract" : "memo");
        if (pick(3) != 0) m["year"] = static_cast<double>(2020 + pick(6));
        return Document{"doc" + std::to_string(i), text, m};
    }

    Principal principal() {
        if (pick(12) == 0) return Principal::system();
        std::vector<std::string> groups;
        for (int k = pick(3); k > 0; --k) groups.push_back("g" + std::to_string(pick(5)));
        return Principal::with_groups(groups);
    }

    Filter filter() {
        switch (pick(5)) {
            case 0: return Filter::all();
            case 1: return Filter::eq("type", std::string("contract"));
            case 2: return Filter::range("year", 2022.0, std::nullopt);
            case 3: return !Filter::eq("type", std::string("memo")) || Filter::range("year", std::nullopt, 2021.0);
            default: return Filter::exists("year") && !Filter::eq("year", 2023.0);
        }
    }

    std::string query() {
        static const char* const words[] = {"contract", "rate", "notice", "penalty", "annex", "missing"};
        std::string q;
        for (int n = 1 + pick(3); n > 0; --n) q += std::string(words[pick(6)]) + " ";
        return q;
    }

private:
    std::mt19937 rng_;
};

/// The allowed set by the oracle: every live document's metadata checked one by one.
DocSet oracle_allowed(const std::vector<std::optional<Metadata>>& docs, const AccessPolicy& policy,
                      const Principal& who, const Filter& filter) {
    DocSet s(docs.size());
    for (std::size_t i = 0; i < docs.size(); ++i)
        if (docs[i] && policy.allows(who, *docs[i]) && filter.matches(*docs[i])) s.set(static_cast<DocId>(i));
    return s;
}

/// One query's situation: who asks, under which policy and filter, and the allowed
/// set compiled by the metadata index (checked against the oracle).
struct Ask {
    AccessPolicy policy;
    Principal who;
    Filter filter;
    DocSet allowed;
    std::string query;
    std::size_t k = 0;
};

/// Runs 25 random queries; `check(ask, stats)` searches and counts.
template <class Check>
Stats run_queries(World& w, const MetadataIndex& meta, const std::vector<std::optional<Metadata>>& docs, Check check) {
    Stats st;
    for (int q = 0; q < 25; ++q) {
        Ask a{AccessPolicy(w.pick(2) == 0 ? Unlabeled::deny : Unlabeled::allow), w.principal(), w.filter(), {}, {}, 0};
        a.allowed = meta.compile(a.policy.filter_for(a.who) && a.filter);
        REQUIRE(a.allowed == oracle_allowed(docs, a.policy, a.who, a.filter));
        a.query = w.query();
        a.k = 1 + static_cast<std::size_t>(w.pick(60));
        ++st.queries;
        check(a, st);
    }
    return st;
}

/// Documents are added to `index` (and the metadata index) under DocIds 0..n-1, some
/// are removed, then random queries run with random principals and filters.
template <class Index>
Stats index_trial(unsigned seed, Index index) {
    World w(seed);
    MetadataIndex meta;
    std::vector<std::optional<Metadata>> docs;
    const std::size_t n = 40 + static_cast<std::size_t>(w.pick(80));
    for (std::size_t i = 0; i < n; ++i) {
        const Document d = w.document(i);
        index.add_document(static_cast<DocId>(i), d);
        meta.add_document(static_cast<DocId>(i), d.metadata);
        docs.push_back(d.metadata);
    }
    for (std::size_t i = 0; i < n; ++i)
        if (w.pick(6) == 0) {
            index.remove_document(static_cast<DocId>(i));
            meta.remove_document(static_cast<DocId>(i));
            docs[i].reset();
        }
    return run_queries(w, meta, docs, [&](const Ask& a, Stats& st) {
        const auto hits = index.search(a.query, a.k, SearchOptions::only(a.allowed));
        st.hits += hits.size();
        for (const auto& h : hits)
            if (!a.allowed.test(static_cast<DocId>(h.id)) || !docs[h.id]) ++st.leaks;
        for (const auto& h : index.search(a.query, n, {}))
            if (!a.allowed.test(static_cast<DocId>(h.id))) ++st.filtered_out;
    });
}

/// The same through a Retriever fusing `Index` with the oracle index.
template <class Index>
Stats retriever_trial(unsigned seed, Index index) {
    World w(seed);
    ragpp::Retriever<Index, TermOverlapIndex> r(std::move(index), TermOverlapIndex{});
    MetadataIndex meta;
    std::vector<std::optional<Metadata>> docs;
    const std::size_t n = 40 + static_cast<std::size_t>(w.pick(80));
    for (std::size_t i = 0; i < n; ++i) {
        const Document d = w.document(i);
        const DocId id = r.add_document(d);
        meta.add_document(id, d.metadata);
        if (docs.size() <= id) docs.resize(std::size_t{id} + 1);
        docs[id] = d.metadata;
    }
    for (std::size_t i = 0; i < docs.size(); ++i)
        if (w.pick(6) == 0) {
            r.remove_document(static_cast<DocId>(i));
            meta.remove_document(static_cast<DocId>(i));
            docs[i].reset();
        }
    return run_queries(w, meta, docs, [&](const Ask& a, Stats& st) {
        const auto results = r.search(a.query, a.k, SearchOptions::only(a.allowed));
        st.hits += results.size();
        for (const auto& res : results) {
            // The result, its document (checked by the oracle on its own metadata) and
            // every trace entry, which is this document's place in an index's list.
            const bool ok = a.allowed.test(res.id) && docs[res.id] && res.document &&
                            a.policy.allows(a.who, res.document->metadata) && a.filter.matches(res.document->metadata);
            if (!ok) ++st.leaks;
            for (const auto& t : res.trace)
                if (t.rank && !a.allowed.test(res.id)) ++st.leaks;
        }
        for (const auto& res : r.search(a.query, n, {}))
            if (!a.allowed.test(res.id)) ++st.filtered_out;
    });
}

}  // namespace

TEMPLATE_TEST_CASE("No index result names a document outside the allowed set", "[leak][property]", TermOverlapIndex) {
    const auto seed = static_cast<unsigned>(GENERATE(range(1, 31)));
    const Stats st = index_trial(seed, make_index<TestType>());
    INFO("seed " << seed);
    CHECK(st.leaks == 0);
    CHECK(st.hits > 0);          // not vacuous: results were returned
    CHECK(st.filtered_out > 0);  // and the allowed set did exclude documents that match
}

TEMPLATE_TEST_CASE("No Retriever result or trace entry names a document outside the allowed set", "[leak][property]",
                   TermOverlapIndex) {
    const auto seed = static_cast<unsigned>(GENERATE(range(1, 31)));
    const Stats st = retriever_trial(seed, make_index<TestType>());
    INFO("seed " << seed);
    CHECK(st.leaks == 0);
    CHECK(st.hits > 0);
    CHECK(st.filtered_out > 0);
}

TEST_CASE("The leak check catches an index that ignores the allowed set", "[leak]") {
    std::size_t leaks = 0, retriever_leaks = 0;
    for (unsigned seed = 1; seed <= 5; ++seed) {
        leaks += index_trial(seed, LeakyIndex{}).leaks;
        retriever_leaks += retriever_trial(seed, LeakyIndex{}).leaks;
    }
    CHECK(leaks > 0);
    CHECK(retriever_leaks > 0);
}
