// ragpp: the per-call options of the indexes (what BM25Index::search and
// VectorIndex::search take), apart from the indexes so that the layers above them (the
// engine's settings, a reranker that weighs words by a reader's statistics) can name
// them without including an index.
//
// Each derives from SearchOptions (core/types.hpp: the allowed set) and converts from
// a plain SearchOptions, exactly that type: a filter alone, every knob at the index's
// default. Options of another index do not convert (passing VectorSearchOptions to a
// BM25Index does not compile: its ef_search would be dropped unseen).
#pragma once

#include <array>
#include <atomic>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include <ragpp/core/types.hpp>

namespace ragpp {

/// BM25F field weights of a chunk's metadata fields (index/bm25.hpp): how much one
/// occurrence of a term in the document title, the heading path or the source path
/// counts, relative to one occurrence in the body (weight 1). 0 turns a field off.
struct FieldWeights {
    double title = 0.0;
    double headings = 0.0;
    double path = 0.0;
    friend bool operator==(const FieldWeights&, const FieldWeights&) = default;
};

/// The corpus statistics of the documents one reader may read: what BM25 scores with
/// (the number of documents, their average lengths, each term's document frequency)
/// when BM25SearchOptions::statistics is set, so that documents a reader cannot read change
/// nothing it sees. Made by BM25Index::reader_statistics(documents); a term's document
/// frequency among `documents` is counted the first time a query asks for it (a pass
/// over its postings) and kept in `term_counts`, so later queries read it in O(1).
/// Belongs to one index state: make new statistics after the index changes.
struct ReaderStatistics {
    /// The documents whose statistics count (live ones among them).
    std::shared_ptr<const DocSet> documents;
    double count = 0;
    double total_length = 0;
    /// Per BM25F field (title, headings, path): documents with the field, their total length.
    std::array<double, 3> field_documents{}, field_total{};
    /// rank_bm25's mean idf over the readers' vocabulary (its negative-idf floor).
    double okapi_mean_idf = 0;

    /// Each term's body document frequency among `documents` plus one, by the index's
    /// term id; 0 while not yet counted. Filled by the index on first use, from any
    /// thread (relaxed atomics: every writer stores the same value). 4 bytes per term of
    /// the index's vocabulary.
    std::shared_ptr<std::atomic<std::uint32_t>[]> term_counts;
    std::size_t term_count_slots = 0;
    /// The cached document frequency of term `id`, or nullopt when not counted yet.
    [[nodiscard]] std::optional<std::uint32_t> cached_df(std::size_t id) const noexcept {
        if (id >= term_count_slots) return std::nullopt;
        const auto v = term_counts[id].load(std::memory_order_relaxed);
        return v == 0 ? std::nullopt : std::optional<std::uint32_t>(v - 1);
    }
    void cache_df(std::size_t id, std::size_t df) const noexcept {
        if (id < term_count_slots && df < 0xFFFFFFFFu)
            term_counts[id].store(static_cast<std::uint32_t>(df + 1), std::memory_order_relaxed);
    }
};

/// BM25Index's per-call options: k1, b, delta and the field weights chosen per query
/// without re-indexing (unset: the index's BM25Params), and the statistics it scores
/// with (null: the whole index's; see ReaderStatistics).
struct BM25SearchOptions : SearchOptions {
    std::optional<double> k1;
    std::optional<double> b;
    std::optional<double> delta;
    /// BM25F field weights (indexes holding chunks with title, headings or path).
    std::optional<FieldWeights> field_weights;
    std::shared_ptr<const ReaderStatistics> statistics;

    BM25SearchOptions() = default;
    /// A filter alone (SearchOptions::only): every BM25 knob at the index's default.
    template <std::same_as<SearchOptions> O>
    BM25SearchOptions(const O& filter) : SearchOptions(filter) {}  // NOLINT(google-explicit-constructor)
};

/// VectorIndex's per-call options.
struct VectorSearchOptions : SearchOptions {
    /// HNSW's candidate list size for this query (VectorIndex<E, Hnsw> uses max(ef, k));
    /// unset: the index's HnswOptions::ef_search. Exact indexes (Flat) ignore it.
    std::optional<std::size_t> ef_search;

    VectorSearchOptions() = default;
    /// A filter alone (SearchOptions::only): the index's own ef_search.
    template <std::same_as<SearchOptions> O>
    VectorSearchOptions(const O& filter) : SearchOptions(filter) {}  // NOLINT(google-explicit-constructor)
};

}  // namespace ragpp
