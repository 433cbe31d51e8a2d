// ragpp: Retriever<Indexes...>, the hybrid retriever.
//
// It owns a DocumentStore and one instance of each index type. `add_document` gives a
// document one DocId and hands it to every index; `search` asks each index for its
// best `candidates`, fuses the lists by reciprocal rank fusion (fusion.hpp) and
// returns results that carry the document, the fused score and, for every index, the
// document's rank and score in that index's list (the trace).
//
// A Retriever models SearchIndex itself, so retrievers nest. Each level takes its own
// options, typed: a Retriever's search takes RetrieverSearchOptions<...> (its
// `search_options`), which holds the fusion knobs (candidates, rrf_k, weights) and, in
// `per_index`, the options of each of its indexes in their own types (BM25SearchOptions,
// VectorSearchOptions, a nested Retriever's); index i receives per_index's i-th, its
// allowed set intersected with the caller's. A nested Retriever shares the outer one's
// documents (add_document(DocId, shared_ptr<const Document>)): every document's text is
// stored once.
//
// Threading: `search` and every other const member are safe to call from many threads
// at once (they allocate their own scratch and touch no shared mutable state); any
// write (`add_document`, `remove_document`, option setters) needs exclusive access:
// no search may run concurrently with it. Wrap the Retriever in a std::shared_mutex
// (shared lock for search, unique lock for writes) to mix both.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <ragpp/core/concepts.hpp>
#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>
#include <ragpp/detail/undo_reserve.hpp>
#include <ragpp/index/store.hpp>
#include <ragpp/retrieve/fusion.hpp>

namespace ragpp {

/// A result's position in one index's list: its 1-based rank and that index's score,
/// both empty when the index did not return it.
struct ListTrace {
    std::optional<std::size_t> rank;
    std::optional<double> score;
};

/// A reranked result's history (rerank/reranker.hpp): its 1-based rank and score in
/// the fused list, the reranker's score, and its 1-based rank after reranking.
struct RerankTrace {
    std::size_t fused_rank = 0;
    double fused_score = 0.0;
    double reranker_score = 0.0;
    std::size_t rank = 0;
};

/// One result of Retriever::search.
struct Result {
    DocId id = 0;
    /// The fused (RRF) score.
    double score = 0.0;
    /// The stored document; stays valid even if it is removed later.
    std::shared_ptr<const Document> document;
    /// trace[i] is the result's rank and score in index i's list.
    std::vector<ListTrace> trace;
    /// Set by the rerank stage (rerank/reranker.hpp) on the candidates it re-scored;
    /// `score` is then the stage's score and the fused score is kept here.
    std::optional<RerankTrace> rerank;
};

/// Wall time of one search, per stage, in seconds: each index's search (its query
/// analysis or embedding included) and the fusion.
struct SearchTimings {
    std::vector<double> index_seconds;
    double fusion_seconds = 0.0;
};

struct RetrieverOptions {
    /// The RRF constant k.
    double rrf_k = 60.0;
    /// One weight per index; empty means 1 for every index. An index of weight 0 is
    /// not queried at all.
    std::vector<double> weights;
    /// How many results each index contributes to the fusion.
    std::size_t candidates = 100;
};

/// A Retriever's per-call options: its fusion knobs, unset meaning the Retriever's own
/// (RetrieverOptions), and the options of each index, `per_index`, in the index's own
/// type (search_options_t), for example `o.index<0>().k1 = 1.2` for a BM25 index first.
/// Index i's allowed set is intersected with this one's.
template <class... IndexOptions>
struct RetrieverSearchOptions : SearchOptions {
    /// How many candidates the Retriever asks of each index before fusing.
    std::optional<std::size_t> candidates;
    /// The reciprocal rank fusion constant k.
    std::optional<double> rrf_k;
    /// One fusion weight per index; empty means the Retriever's weights.
    std::vector<double> weights;
    /// The options of each index.
    std::tuple<IndexOptions...> per_index;

    RetrieverSearchOptions() = default;
    /// A filter alone (SearchOptions::only): every knob of every level at its default.
    template <std::same_as<SearchOptions> O>
    RetrieverSearchOptions(const O& filter) : SearchOptions(filter) {}  // NOLINT(google-explicit-constructor)

    /// Index I's options.
    template <std::size_t I>
    [[nodiscard]] auto& index() noexcept { return std::get<I>(per_index); }
    template <std::size_t I>
    [[nodiscard]] const auto& index() const noexcept { return std::get<I>(per_index); }
};

// Long members are defined after the class (see index/bm25.hpp).
template <SearchIndex... Indexes>
class Retriever {
public:
    static constexpr std::size_t index_count = sizeof...(Indexes);
    static_assert(index_count > 0, "a Retriever needs at least one index");
    /// What search takes per call: fusion knobs and each index's own options.
    using search_options = RetrieverSearchOptions<search_options_t<Indexes>...>;

    explicit Retriever(Indexes... indexes) : indexes_(std::move(indexes)...) {}
    explicit Retriever(RetrieverOptions options, Indexes... indexes) : indexes_(std::move(indexes)...) {
        set_options(std::move(options));
    }
    Retriever()
        requires(std::default_initializable<Indexes> && ...)
    = default;

    /// Reassembles a Retriever from a store and indexes loaded from disk (each index
    /// must hold exactly the store's documents, under the same ids). Throws
    /// InvalidArgument when an index's size differs from the store's.
    Retriever(DocumentStore store, RetrieverOptions options, Indexes... indexes)
        : store_(std::move(store)), indexes_(std::move(indexes)...) {
        set_options(std::move(options));
        std::size_t i = 0;
        std::apply(
            [&](const auto&... idx) {
                ((idx.size() == store_.size()
                      ? void(++i)
                      : throw InvalidArgument("Retriever: index " + std::to_string(i) + " holds " +
                                              std::to_string(idx.size()) + " documents, the store " +
                                              std::to_string(store_.size()))),
                 ...);
            },
            indexes_);
    }

    /// Validates and installs new defaults. Throws InvalidArgument (and keeps the old
    /// options) on a negative or non-finite k or weight, or a wrong number of weights.
    void set_options(RetrieverOptions options) {
        check_fusion_options(options.rrf_k, options.weights, index_count, "RetrieverOptions", "indexes");
        options_ = std::move(options);
    }
    [[nodiscard]] const RetrieverOptions& options() const noexcept { return options_; }

    /// Stores `doc`, gives it the next DocId and indexes it in every index. Returns the
    /// id. On any exception (duplicate key, an index rejecting the text), no index and
    /// not the store keep the document: the Retriever is as it was.
    DocId add_document(Document doc);

    /// The concept's form: index `doc` under a caller-chosen id (used when this
    /// Retriever is nested inside another one). Same all-or-nothing guarantee.
    void add_document(DocId id, Document doc);

    /// The nested form: the outer Retriever hands its own stored document to an inner one,
    /// which keeps the same pointer (no second copy of the text). Same guarantees;
    /// InvalidArgument for a null pointer.
    void add_document(DocId id, std::shared_ptr<const Document> doc);

    /// Stores and indexes many documents at once; returns their ids, in order. An index
    /// with `add_documents(ids, docs)` (VectorIndex: embed_batch calls of up to 4,096
    /// texts, which a transformer batches and threads) receives them together, the
    /// others one by one.
    /// All or nothing: on any exception no index and not the store keep any of them.
    std::vector<DocId> add_documents(std::vector<Document> docs);

    /// Removes the document from every index and from the store. Throws NotFoundError
    /// (and changes nothing) when there is no document `id`.
    void remove_document(DocId id);
    /// Removes the documents `ids` at once: an index that can remove a batch
    /// (BM25Index::remove_documents: each list rewritten once) is given them all, with the
    /// stored documents; the others remove them one by one. Throws NotFoundError (nothing
    /// changes) when an id is absent, InvalidArgument when an id is given twice.
    void remove_documents(std::span<const DocId> ids);
    /// Removes the document whose key (Document::id) is `key`.
    void remove_document(std::string_view key);

    /// The k best documents for `query`, fused. `options` may override this Retriever's
    /// fusion defaults (candidates, rrf_k, weights); index i receives `per_index`'s i-th
    /// options with the allowed set intersected with `options.allowed`. Throws
    /// InvalidArgument, naming the level ("options.per_index[0]"), when the fusion
    /// knobs of any nested level are invalid.
    [[nodiscard]] std::vector<Result> search(std::string_view query, std::size_t k,
                                             const search_options& options = {}) const;

    /// The same, recording the time of each stage in `timings`.
    [[nodiscard]] std::vector<Result> search(std::string_view query, std::size_t k, const search_options& options,
                                             SearchTimings& timings) const;

    /// Live documents.
    [[nodiscard]] std::size_t size() const noexcept { return store_.size(); }
    [[nodiscard]] const DocumentStore& store() const noexcept { return store_; }
    /// The stored document `id`, or null.
    [[nodiscard]] std::shared_ptr<const Document> document(DocId id) const { return store_.get(id); }

    /// The I-th index. Changing it directly bypasses the all-or-nothing guarantees.
    template <std::size_t I>
    [[nodiscard]] auto& index() noexcept { return std::get<I>(indexes_); }
    template <std::size_t I>
    [[nodiscard]] const auto& index() const noexcept { return std::get<I>(indexes_); }

    /// Validates the options of a search at every level: this Retriever's fusion knobs
    /// and, for each nested Retriever, the options it will receive. Throws
    /// InvalidArgument naming the level (`level`, then ".per_index[i]" for each step down).
    static void check_search_options(const search_options& options, const std::string& level = "options");

private:
    template <std::size_t I>
    using index_options = search_options_t<std::tuple_element_t<I, std::tuple<Indexes...>>>;

    template <std::size_t I>
    static void check_nested(const search_options& options, const std::string& level) {
        if constexpr (I < index_count) {
            using Child = std::tuple_element_t<I, std::tuple<Indexes...>>;
            if constexpr (requires { Child::check_search_options(std::get<I>(options.per_index), level); })
                Child::check_search_options(std::get<I>(options.per_index), level + ".per_index[" + std::to_string(I) + "]");
            check_nested<I + 1>(options, level);
        }
    }

    /// The options index I receives (see search): per_index's I-th, with the allowed
    /// set intersected with the caller's (copied into `scratch` only then).
    template <std::size_t I>
    static const index_options<I>& forwarded(const search_options& options, index_options<I>& scratch);

    /// Index I's add_document: a nested Retriever shares the stored document, any other
    /// index reads it.
    template <std::size_t I>
    void add_one(DocId id, const std::shared_ptr<const Document>& doc) {
        auto& index = std::get<I>(indexes_);
        if constexpr (requires { index.add_document(id, doc); }) index.add_document(id, doc);
        else index.add_document(id, *doc);
    }

    template <std::size_t I>
    void add_to_indexes(DocId id, const std::shared_ptr<const Document>& doc) {
        if constexpr (I < index_count) {
            try {
                add_one<I>(id, doc);
            } catch (...) {
                undo_add<I>(id);
                throw;
            }
            add_to_indexes<I + 1>(id, doc);
        }
    }
    template <std::size_t I>
    void add_batch_to_indexes(const std::vector<DocId>& ids, const std::vector<std::shared_ptr<const Document>>& docs,
                              detail::UndoReserve& reserve) {
        if constexpr (I < index_count) {
            auto& index = std::get<I>(indexes_);
            std::size_t done = 0;  // documents index I holds when it fails one by one
            try {
                if constexpr (requires { index.add_documents(std::span<const DocId>(ids),
                                                             std::span<const Document* const>()); }) {
                    std::vector<const Document*> raw;
                    raw.reserve(docs.size());
                    for (const auto& d : docs) raw.push_back(d.get());
                    index.add_documents(std::span<const DocId>(ids), std::span<const Document* const>(raw));
                } else {
                    for (; done < ids.size(); ++done) add_one<I>(ids[done], docs[done]);
                }
            } catch (...) {
                reserve.release();
                // The documents index I took before it failed, then every earlier index's.
                remove_from_index<I>(std::span<const DocId>(ids.data(), done), docs);
                undo_batch<I>(ids, ids.size());
                throw;
            }
            add_batch_to_indexes<I + 1>(ids, docs, reserve);
        }
    }
    /// Removes `ids` from indexes [0, I) and the first `stored` of them from the store,
    /// newest first (so the store gives the ids back).
    template <std::size_t I>
    void undo_batch(const std::vector<DocId>& ids, std::size_t stored) noexcept {
        if constexpr (I > 0) {
            std::vector<std::shared_ptr<const Document>> docs;
            try {
                for (std::size_t j = 0; j < std::min(stored, ids.size()); ++j) docs.push_back(store_.get(ids[j]));
            } catch (...) {
                docs.clear();
            }
            if (docs.size() != ids.size()) docs.clear();
            remove_from_indexes<I>(ids, docs);
            undo_batch<0>(ids, stored);
        } else {
            for (std::size_t j = std::min(stored, ids.size()); j-- > 0;) {
                try {
                    store_.undo_insert(ids[j]);
                } catch (...) {
                }
            }
        }
    }

    /// Removes `ids` from indexes [0, I) (`docs`: their stored documents, or empty), in a
    /// batch where the index can (all or nothing there), else one by one; a failure of the
    /// batch (out of memory) falls back to one by one, and an id an index does not hold
    /// is passed over. Never throws: what an undo needs.
    template <std::size_t I>
    void remove_from_indexes(std::span<const DocId> ids, const std::vector<std::shared_ptr<const Document>>& docs) noexcept {
        if constexpr (I > 0) {
            remove_from_index<I - 1>(ids, docs);
            remove_from_indexes<I - 1>(ids, docs);
        }
    }
    /// The same for index I alone (`docs`: empty, or the documents of `ids` first).
    template <std::size_t I>
    void remove_from_index(std::span<const DocId> ids, const std::vector<std::shared_ptr<const Document>>& docs) noexcept {
        {
            auto& index = std::get<I>(indexes_);
            std::size_t from = 0;  // ids before it are removed
            if constexpr (requires { index.remove_documents(ids, std::span<const Document* const>()); }) {
                // In batches: the whole, else (memory short) quarters of it, down to 64 ids;
                // each batch rewrites a list once.
                std::size_t step = ids.size();
                while (from < ids.size()) {
                    const std::size_t n = std::min(step, ids.size() - from);
                    try {
                        std::vector<DocId> held;
                        std::vector<const Document*> raw;
                        for (std::size_t j = from; j < from + n; ++j)
                            if (index.contains(ids[j])) {
                                held.push_back(ids[j]);
                                if (!docs.empty()) raw.push_back(docs[j].get());
                            }
                        index.remove_documents(std::span<const DocId>(held), std::span<const Document* const>(raw));
                        from += n;
                    } catch (...) {
                        if (step <= 64) break;
                        step = std::max<std::size_t>(64, step / 4);
                    }
                }
            }
            if (from < ids.size())
                for (std::size_t j = from; j < ids.size(); ++j) {
                    try {
                        if constexpr (requires { index.remove_document(ids[j], *docs[j]); }) {
                            if (!docs.empty()) {
                                index.remove_document(ids[j], *docs[j]);
                                continue;
                            }
                        }
                        index.remove_document(ids[j]);
                    } catch (...) {
                    }
                }
        }
    }

    /// Removes `id` from indexes [0, I) and from the store, after index I failed.
    template <std::size_t I>
    void undo_add(DocId id) noexcept {
        if constexpr (I > 0) {
            try {
                std::get<I - 1>(indexes_).remove_document(id);
            } catch (...) {  // an index that just accepted id must be able to remove it
            }
            undo_add<I - 1>(id);
        } else {
            try {
                store_.undo_insert(id);
            } catch (...) {
            }
        }
    }

    template <std::size_t I>
    void query_all(std::string_view query, std::size_t candidates, const search_options& options,
                   const std::vector<double>& weights, std::array<std::vector<DocId>, index_count>& ids,
                   std::array<std::vector<double>, index_count>& scores, SearchTimings& timings) const {
        if constexpr (I < index_count) {
            if (weights.empty() || weights[I] > 0) {
                const auto start = std::chrono::steady_clock::now();
                index_options<I> scratch;
                auto hits = std::get<I>(indexes_).search(query, candidates, forwarded<I>(options, scratch));
                timings.index_seconds[I] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
                ids[I].reserve(hits.size());
                scores[I].reserve(hits.size());
                for (const auto& h : hits) {
                    ids[I].push_back(static_cast<DocId>(h.id));
                    scores[I].push_back(static_cast<double>(h.score));
                }
            }
            query_all<I + 1>(query, candidates, options, weights, ids, scores, timings);
        }
    }

    DocumentStore store_;
    std::tuple<Indexes...> indexes_;
    RetrieverOptions options_;
};

template <SearchIndex... Indexes>
DocId Retriever<Indexes...>::add_document(Document doc) {
    const DocId id = store_.next_id();
    add_document(id, std::move(doc));
    return id;
}

template <SearchIndex... Indexes>
void Retriever<Indexes...>::add_document(DocId id, Document doc) { add_document(id, std::make_shared<const Document>(std::move(doc))); }
                                         
                                         template <SearchIndex... Indexes>
                                         std::vector<DocId> Retriever<Indexes...>::add_documents(std::vector<Document> docs) {
    // Memory set aside for the undo, released before it runs: when memory runs out
    // midway, taking the batch back must not need memory the batch used up. Address
    // space only (never written, so no page is touched): 96 bytes a document + 16 MiB.
    detail::UndoReserve reserve(docs.size());
    std::vector<DocId> ids;
    std::vector<std::shared_ptr<const Document>> stored;
    ids.reserve(docs.size());
    stored.reserve(docs.size());
    try {
        for (auto& d : docs) {
            const DocId id = store_.next_id();
            stored.push_back(store_.insert(id, std::move(d)));
            ids.push_back(id);
        }
    } catch (...) {
        reserve.release();
        undo_batch<0>(ids, ids.size());
        throw;
    }
    add_batch_to_indexes<0>(ids, stored, reserve);
    return ids;
}

template <SearchIndex... Indexes>
void Retriever<Indexes...>::remove_document(DocId id) {
    if (!store_.contains(id)) throw NotFoundError("Retriever::remove_document: no document with DocId " +
                                                  std::to_string(id));
    // An index that can remove a document faster knowing its content (BM25Index reads
    // only the lists of its terms) is given the stored document.
    const auto doc = store_.get(id);
    std::apply(
        [&](auto&... idx) {
            (
                [&](auto& index) {
                    if constexpr (requires { index.remove_document(id, *doc); }) index.remove_document(id, *doc);
                    else index.remove_document(id);
                }(idx),
                ...);
        },
        indexes_);
    store_.erase(id);
}

template <SearchIndex... Indexes>
void Retriever<Indexes...>::remove_documents(std::span<const DocId> ids) {
    std::vector<DocId> sorted(ids.begin(), ids.end());
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 0; i < sorted.size(); ++i) {
        if (!store_.contains(sorted[i]))
            throw NotFoundError("Retriever::remove_documents: no document with DocId " + std::to_string(sorted[i]));
        if (i > 0 && sorted[i] == sorted[i - 1])
            throw InvalidArgument("Retriever::remove_documents: DocId " + std::to_string(sorted[i]) + " given twice");
    }
    std::vector<std::shared_ptr<const Document>> docs;
    docs.reserve(ids.size());
    for (const DocId id : ids) docs.push_back(store_.get(id));
    remove_from_indexes<index_count>(ids, docs);
    for (const DocId id : ids) store_.erase(id);
}

template <SearchIndex... Indexes>
void Retriever<Indexes...>::remove_document(std::string_view key) {
    auto id = store_.find(key);
    if (!id) throw NotFoundError("Retriever::remove_document: no document with id '" + std::string(key) + "'");
    remove_document(*id);
}

template <SearchIndex... Indexes>
std::vector<Result> Retriever<Indexes...>::search(std::string_view query, std::size_t k,
                                                  const search_options& options) const {
    SearchTimings unused;
    return search(query, k, options, unused);
}

template <SearchIndex... Indexes>
void Retriever<Indexes...>::check_search_options(const search_options& options, const std::string& level) {
    const std::string where = "Retriever::search: " + level;
    check_fusion_options(options.rrf_k.value_or(0.0), options.weights, index_count, where, "indexes");
    check_nested<0>(options, level);
}

template <SearchIndex... Indexes>
template <std::size_t I>
auto Retriever<Indexes...>::forwarded(const search_options& options, index_options<I>& scratch)
    -> const index_options<I>& {
    const auto& own = std::get<I>(options.per_index);
    if (!options.allowed) return own;
    scratch = own;
    if (scratch.allowed) {
        DocSet both = *scratch.allowed;
        both &= *options.allowed;
        scratch.allowed = std::make_shared<const DocSet>(std::move(both));
    } else {
        scratch.allowed = options.allowed;
    }
    return scratch;
}

template <SearchIndex... Indexes>
void Retriever<Indexes...>::add_document(DocId id, std::shared_ptr<const Document> doc) {
    auto stored = store_.insert(id, std::move(doc));
    add_to_indexes<0>(id, stored);
}

template <SearchIndex... Indexes>
std::vector<Result> Retriever<Indexes...>::search(std::string_view query, std::size_t k, const search_options& options,
                                                  SearchTimings& timings) const {
    check_search_options(options);
    const double rrf_k = options.rrf_k.value_or(options_.rrf_k);
    const std::vector<double>& weights = options.weights.empty() ? options_.weights : options.weights;
    const std::size_t candidates = std::max(options.candidates.value_or(options_.candidates), k);

    // Each index's list, as ids and scores.
    std::array<std::vector<DocId>, index_count> ids;
    std::array<std::vector<double>, index_count> scores;
    timings.index_seconds.assign(index_count, 0.0);
    query_all<0>(query, candidates, options, weights, ids, scores, timings);

    const auto fusion_start = std::chrono::steady_clock::now();
    auto fused = reciprocal_rank_fusion(ids, FusionOptions{rrf_k, weights});
    if (fused.size() > k) fused.resize(k);

    std::vector<Result> out;
    out.reserve(fused.size());
    for (auto& f : fused) {
        Result r;
        r.id = f.id;
        r.score = f.score;
        r.document = store_.get(f.id);
        r.trace.resize(index_count);
        for (std::size_t i = 0; i < index_count; ++i)
            if (f.ranks[i]) r.trace[i] = ListTrace{f.ranks[i], scores[i][*f.ranks[i] - 1]};
        out.push_back(std::move(r));
    }
    timings.fusion_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - fusion_start).count();
    return out;
}

template <class... I>
Retriever(I...) -> Retriever<I...>;
template <class... I>
Retriever(RetrieverOptions, I...) -> Retriever<I...>;

}  // namespace ragpp

// With ragpp::compiled (RAGPP_COMPILED), the README's Retriever comes compiled from the
// library (src/instances.cpp), declared once all three templates are (detail/readme_instances.hpp).
#define RAGPP_DETAIL_HAS_RETRIEVER 1
#include <ragpp/detail/readme_instances.hpp>
