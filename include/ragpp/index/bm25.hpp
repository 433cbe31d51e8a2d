// ragpp: BM25Index<Analyzer>, the lexical index.
//
// Postings keep raw term frequencies and the index keeps exact document lengths, so
// the BM25 variant's idf and length normalisation are computed at query time: k1, b
// and delta can change per query (SearchOptions) without re-indexing, and live
// updates keep N, the average length and every document frequency exact.
//
// ## The formulas (Kamphuis, de Vries, Boytsov, Lin, "Which BM25 do you mean? A
// large-scale reproducibility study of scoring variants", ECIR 2020, Table 1; the
// names and the forms are those of bm25s, which implements that paper)
//
//   N = live documents, df = documents containing t, |d| = length of d (terms),
//   avgdl = mean |d| over live documents, tf = frequency of t in d,
//   L(d) = 1 - b + b * |d| / avgdl.
//   score(q, d) = sum over the distinct terms t of q of qtf(t) * idf(t) * tfpart(tf, d),
//   qtf(t) = how many times t occurs in the query (a repeated term counts each time,
//   as in rank_bm25 and bm25s).
//
//   lucene     idf = ln(1 + (N - df + 0.5) / (df + 0.5))         tfpart = tf / (tf + k1 L)
//   robertson  idf = ln(max(1, (N - df + 0.5) / (df + 0.5)))     tfpart = tf / (tf + k1 L)
//              (negative idf clamped to 0, as bm25s does)
//   atire      idf = ln(N / df)                                    tfpart = (k1 + 1) tf / (tf + k1 L)
//   bm25l      idf = ln((N + 1) / (df + 0.5))                      tfpart = (k1 + 1)(c + delta) / (k1 + c + delta),
//                                                                    c = tf / L  (Lv & Zhai, CIKM 2011)
//   bm25plus   idf = ln((N + 1) / df)                              tfpart = (k1 + 1) tf / (k1 L + tf) + delta
//                                                                    (Lv & Zhai, CIKM 2011)
//
// For bm25l and bm25plus, tfpart(0) is not 0: a query term absent from a matching
// document still adds qtf * idf * tfpart(0) (as in bm25s). Only documents containing
// at least one query term are returned.
//
// rank_bm25 compatibility modes (rank_bm25 0.2.2, the formulas of its BM25Okapi,
// BM25L and BM25Plus classes):
//   rank_bm25_okapi  idf = ln(N - df + 0.5) - ln(df + 0.5); a negative idf becomes
//                    epsilon * (mean idf over the vocabulary, before flooring);
//                    tfpart = (k1 + 1) tf / (tf + k1 L)
//   rank_bm25_l      idf = ln(N + 1) - ln(df + 0.5), tfpart as bm25l
//   rank_bm25_plus   idf = ln((N + 1) / df),          tfpart as bm25plus
// rank_bm25_l and rank_bm25_plus also score the documents that contain no query term
// (sum of qtf * idf * tfpart(0)), as rank_bm25 does; they are returned after every
// matching document, by smaller id, when fewer than k documents match.
//
// A query term unknown to the index contributes nothing; a query without any known
// term returns no result.
//
// ## Top k
// Scores are computed in double and ranked as the float returned in Hit::score
// (higher first, ties by smaller id), so a result list is ordered by its own scores.
// `search` uses MaxScore (Turtle & Flood, "Query evaluation: strategies and
// optimizations", IP&M 1995) with exact per-term upper bounds computed at query time
// from each list's (tf, length) skyline, and returns exactly the ids and scores of the
// exhaustive scorer (`search_exhaustive`). It falls back to the exhaustive scorer when
// a term weight is negative (rank_bm25_okapi with a negative mean idf) and for
// rank_bm25_l / rank_bm25_plus, which score every document.
//
// ## Threading
// `search*` are const and may run from many threads at once; `add_document`,
// `remove_document`, `update_document`, `set_params` need exclusive access.
#pragma once

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <ragpp/core/concepts.hpp>
#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>
#include <ragpp/index/detail/bm25_detail.hpp>
#include <ragpp/text/whitespace.hpp>

namespace ragpp {

/// The BM25 variants, named as bm25s names them, and the rank_bm25 compatibility modes.
enum class BM25Variant : std::uint8_t {
    lucene,
    robertson,
    atire,
    bm25l,
    bm25plus,
    rank_bm25_okapi,
    rank_bm25_l,
    rank_bm25_plus,
};

inline constexpr BM25Variant bm25_variants[] = {
    BM25Variant::lucene,          BM25Variant::robertson,   BM25Variant::atire,         BM25Variant::bm25l,
    BM25Variant::bm25plus,        BM25Variant::rank_bm25_okapi, BM25Variant::rank_bm25_l, BM25Variant::rank_bm25_plus,
};

/// "lucene", "robertson", "atire", "bm25l", "bm25+", "rank_bm25.BM25Okapi",
/// "rank_bm25.BM25L", "rank_bm25.BM25Plus".
[[nodiscard]] constexpr std::string_view to_string(BM25Variant v) noexcept {
    switch (v) {
        case BM25Variant::lucene: return "lucene";
        case BM25Variant::robertson: return "robertson";
        case BM25Variant::atire: return "atire";
        case BM25Variant::bm25l: return "bm25l";
        case BM25Variant::bm25plus: return "bm25+";
        case BM25Variant::rank_bm25_okapi: return "rank_bm25.BM25Okapi";
        case BM25Variant::rank_bm25_l: return "rank_bm25.BM25L";
        case BM25Variant::rank_bm25_plus: return "rank_bm25.BM25Plus";
    }
    return "?";
}

/// The variant named `name` (as to_string spells it; "bm25plus" is accepted too).
/// Throws InvalidArgument for an unknown name.
[[nodiscard]] inline BM25Variant parse_bm25_variant(std::string_view name) {
    for (BM25Variant v : bm25_variants)
        if (to_string(v) == name) return v;
    if (name == "bm25plus") return BM25Variant::bm25plus;
    throw InvalidArgument("unknown BM25 variant '" + std::string(name) +
                          "' (lucene, robertson, atire, bm25l, bm25+, rank_bm25.BM25Okapi, rank_bm25.BM25L, "
                          "rank_bm25.BM25Plus)");
}

/// Index-level scoring configuration; k1, b and delta can be overridden per query.
struct BM25Params {
    BM25Variant variant = BM25Variant::lucene;
    double k1 = 1.2;       ///< >= 0 (Lucene's default)
    double b = 0.75;       ///< in [0, 1]
    double delta = 0.5;    ///< >= 0, bm25l and bm25plus only (bm25s's default)
    double epsilon = 0.25; ///< >= 0, rank_bm25_okapi only (rank_bm25's default)
};

/// Which top-k algorithm `search_terms` uses.
enum class BM25Strategy : std::uint8_t {
    automatic,   ///< MaxScore where it is valid, otherwise exhaustive
    exhaustive,  ///< every document containing a query term is scored (the oracle)
};

/// What a search did (for tests and benchmarks).
struct BM25SearchStats {
    std::size_t scored = 0;  ///< documents fully scored
    bool pruned = false;     ///< MaxScore was used
};

/// The idf of each variant (see the table at the top of this header).
/// N = live documents, df = documents containing the term (1 <= df <= N).
/// rank_bm25_okapi returns the raw value, before the epsilon floor.
[[nodiscard]] inline double bm25_idf(BM25Variant v, double n, double df) noexcept {
    switch (v) {
        case BM25Variant::lucene: return std::log(1.0 + (n - df + 0.5) / (df + 0.5));
        case BM25Variant::robertson: return std::log(std::max(1.0, (n - df + 0.5) / (df + 0.5)));
        case BM25Variant::atire: return std::log(n / df);
        case BM25Variant::bm25l: return std::log((n + 1.0) / (df + 0.5));
        case BM25Variant::bm25plus: return std::log((n + 1.0) / df);
        case BM25Variant::rank_bm25_okapi: return std::log(n - df + 0.5) - std::log(df + 0.5);
        case BM25Variant::rank_bm25_l: return std::log(n + 1.0) - std::log(df + 0.5);
        case BM25Variant::rank_bm25_plus: return std::log((n + 1.0) / df);
    }
    return 0.0;
}

/// The term-frequency part of each variant; `norm` is L(d) = 1 - b + b |d| / avgdl.
template <BM25Variant V>
[[nodiscard]] constexpr double bm25_tf_part(double tf, double norm, double k1, double delta) noexcept {
    if constexpr (V == BM25Variant::lucene || V == BM25Variant::robertson) {
        return tf / (tf + k1 * norm);
    } else if constexpr (V == BM25Variant::atire || V == BM25Variant::rank_bm25_okapi) {
        return tf * (k1 + 1.0) / (tf + k1 * norm);
    } else if constexpr (V == BM25Variant::bm25l || V == BM25Variant::rank_bm25_l) {
        const double c = tf / norm;
        return (k1 + 1.0) * (c + delta) / (k1 + c + delta);
    } else {
        return delta + tf * (k1 + 1.0) / (k1 * norm + tf);
    }
}

/// The term-frequency part for a term absent from the document (0 but for the
/// bm25l and bm25plus families, where it does not depend on the document).
[[nodiscard]] constexpr double bm25_tf_part_absent(BM25Variant v, double k1, double delta) noexcept {
    switch (v) {
        case BM25Variant::bm25l:
        case BM25Variant::rank_bm25_l: return k1 + delta > 0.0 ? (k1 + 1.0) * delta / (k1 + delta) : 0.0;
        case BM25Variant::bm25plus:
        case BM25Variant::rank_bm25_plus: return delta;
        default: return 0.0;
    }
}

namespace detail::bm25 {

struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

struct TermData {
    std::vector<Posting> postings;  ///< sorted by doc, strictly increasing
    std::vector<SkyPoint> skyline;  ///< see skyline_add
};

/// The mean rank_bm25_okapi idf over the vocabulary, computed once per index state.
struct MeanIdfCache {
    MeanIdfCache() = default;
    MeanIdfCache(const MeanIdfCache&) noexcept {}
    MeanIdfCache& operator=(const MeanIdfCache&) noexcept {
        valid = false;
        return *this;
    }
    std::mutex mutex;
    bool valid = false;
    std::uint64_t generation = 0;
    double value = 0.0;
};

inline void put_varint(std::vector<std::uint8_t>& out, std::uint32_t v) {
    while (v >= 0x80) {
        out.push_back(static_cast<std::uint8_t>(v | 0x80));
        v >>= 7;
    }
    out.push_back(static_cast<std::uint8_t>(v));
}

/// Calls f(term id) for each id of a forward-index entry (varint deltas of sorted ids).
template <class F>
void for_each_varint_delta(const std::vector<std::uint8_t>& in, F&& f) {
    std::uint32_t prev = 0;
    std::size_t i = 0;
    while (i < in.size()) {
        std::uint32_t v = 0;
        int shift = 0;
        while (in[i] & 0x80) {
            v |= static_cast<std::uint32_t>(in[i++] & 0x7F) << shift;
            shift += 7;
        }
        v |= static_cast<std::uint32_t>(in[i++]) << shift;
        prev += v;
        f(prev);
    }
}

/// One distinct query term, resolved against the index.
struct QueryTerm {
    const Posting* begin;
    const Posting* end;
    const std::vector<SkyPoint>* skyline;
    double weight;  ///< qtf * idf
    double zero;    ///< weight * tfpart(0)
};

}  // namespace detail::bm25

template <Analyzer A>
class BM25Index {
public:
    using analyzer_type = A;

    BM25Index() requires std::default_initializable<A> = default;
    explicit BM25Index(BM25Params params, A analyzer = A{}) : analyzer_(std::move(analyzer)) { set_params(params); }
    explicit BM25Index(A analyzer, BM25Params params = {}) : analyzer_(std::move(analyzer)) { set_params(params); }

    // --- configuration --------------------------------------------------------------

    [[nodiscard]] const BM25Params& params() const noexcept { return params_; }
    /// Changes the variant and the default parameters; no re-indexing is needed.
    /// Throws InvalidArgument (nothing changes) for a parameter out of its domain.
    void set_params(const BM25Params& p) {
        check_params(p.k1, p.b, p.delta, "BM25Params");
        if (!(p.epsilon >= 0.0) || !std::isfinite(p.epsilon))
            throw InvalidArgument("BM25Params: epsilon is " + std::to_string(p.epsilon) + " (must be finite and >= 0)");
        params_ = p;
    }
    [[nodiscard]] const A& analyzer() const noexcept { return analyzer_; }

    // --- updates ----------------------------------------------------------------------

    /// Indexes the analyzed `doc.text` under `id`. Throws DuplicateError when `id` is
    /// already indexed; nothing changes then (nor when the analyzer throws).
    void add_document(DocId id, const Document& doc) {
        check_absent(id);
        std::vector<std::string> terms;
        analyzer_.analyze(doc.text, terms);
        add_terms(id, terms);
    }
    /// Indexes `doc` under the next free id (one past the largest id ever used), returned.
    DocId add_document(const Document& doc) {
        const DocId id = next_id();
        add_document(id, doc);
        return id;
    }
    /// Indexes already-analyzed terms under `id` (the analyzer is not called).
    /// Throws DuplicateError when `id` is already indexed; nothing changes then.
    void add_terms(DocId id, std::span<const std::string> terms) {
        check_absent(id);
        if (terms.size() > std::numeric_limits<std::uint32_t>::max())
            throw InvalidArgument("BM25Index: document " + std::to_string(id) + " has more than 2^32-1 terms");
        std::vector<std::uint32_t> ids;
        ids.reserve(terms.size());
        for (const auto& t : terms) ids.push_back(intern(t));
        std::sort(ids.begin(), ids.end());
        const std::size_t slots = std::max(doc_len_.size(), std::size_t{id} + 1);
        doc_len_.resize(slots, 0);
        live_.resize(slots, 0);
        doc_terms_.resize(slots);
        const auto len = static_cast<std::uint32_t>(terms.size());
        std::vector<std::uint8_t> forward;
        forward.reserve(ids.size());
        std::uint32_t prev = 0;
        std::size_t distinct = 0;
        for (std::size_t i = 0; i < ids.size();) {
            std::size_t j = i + 1;
            while (j < ids.size() && ids[j] == ids[i]) ++j;
            auto& td = terms_[ids[i]];
            const detail::bm25::Posting p{id, static_cast<std::uint32_t>(j - i)};
            if (td.postings.empty() || td.postings.back().doc < id) {
                td.postings.push_back(p);
            } else {
                td.postings.insert(lower_bound(td.postings, id), p);
            }
            detail::bm25::skyline_add(td.skyline, {p.tf, len});
            detail::bm25::put_varint(forward, ids[i] - prev);
            prev = ids[i];
            ++distinct;
            i = j;
        }
        forward.shrink_to_fit();
        doc_terms_[id] = std::move(forward);
        doc_len_[id] = len;
        live_[id] = 1;
        ++live_count_;
        total_len_ += len;
        posting_count_ += distinct;
        ++generation_;
    }

    /// Removes document `id`. Throws NotFoundError when it is not indexed; nothing
    /// changes then. Cost: the lengths of the posting lists of its terms.
    void remove_document(DocId id) {
        if (!contains(id))
            throw NotFoundError("BM25Index::remove_document: no document with DocId " + std::to_string(id));
        const std::uint32_t len = doc_len_[id];
        std::size_t distinct = 0;
        detail::bm25::for_each_varint_delta(doc_terms_[id], [&](std::uint32_t t) {
            auto& td = terms_[t];
            auto it = lower_bound(td.postings, id);
            const std::uint32_t tf = it->tf;
            td.postings.erase(it);
            ++distinct;
            auto sp = std::lower_bound(td.skyline.begin(), td.skyline.end(), tf,
                                       [](const detail::bm25::SkyPoint& q, std::uint32_t v) { return q.tf < v; });
            if (sp != td.skyline.end() && sp->tf == tf && sp->len == len) rebuild_skyline(td);
        });
        doc_terms_[id] = {};
        doc_len_[id] = 0;
        live_[id] = 0;
        --live_count_;
        total_len_ -= len;
        posting_count_ -= distinct;
        ++generation_;
    }

    /// Replaces document `id` by `doc` (remove, then add). Throws NotFoundError when
    /// `id` is not indexed; nothing changes then (nor when the analyzer throws).
    void update_document(DocId id, const Document& doc) {
        if (!contains(id))
            throw NotFoundError("BM25Index::update_document: no document with DocId " + std::to_string(id));
        std::vector<std::string> terms;
        analyzer_.analyze(doc.text, terms);
        remove_document(id);
        add_terms(id, terms);
    }

    /// Releases the spare capacity of the posting lists (after a bulk build).
    void shrink_to_fit() {
        for (auto& td : terms_) td.postings.shrink_to_fit();
    }

    // --- search -----------------------------------------------------------------------

    /// The k best documents for `query`, best first, ties by smaller id. k1, b and
    /// delta come from `options` when set, else from params(). Only documents in
    /// `options.allowed` are scored. Throws InvalidArgument for a parameter out of range.
    [[nodiscard]] std::vector<Hit> search(std::string_view query, std::size_t k, const SearchOptions& options = {}) const {
        std::vector<std::string> terms;
        analyzer_.analyze(query, terms);
        return search_terms(terms, k, options);
    }
    /// The same, scoring every matching document (the oracle of the pruned search).
    [[nodiscard]] std::vector<Hit> search_exhaustive(std::string_view query, std::size_t k,
                                                     const SearchOptions& options = {}) const {
        std::vector<std::string> terms;
        analyzer_.analyze(query, terms);
        return search_terms(terms, k, options, BM25Strategy::exhaustive);
    }
    /// The same for already-analyzed query terms.
    [[nodiscard]] std::vector<Hit> search_terms(std::span<const std::string> query_terms, std::size_t k,
                                                const SearchOptions& options = {},
                                                BM25Strategy strategy = BM25Strategy::automatic,
                                                BM25SearchStats* stats = nullptr) const {
        const double k1 = options.k1.value_or(params_.k1);
        const double b = options.b.value_or(params_.b);
        const double delta = options.delta.value_or(params_.delta);
        check_params(k1, b, delta, "SearchOptions");
        if (stats) *stats = {};
        if (k == 0 || live_count_ == 0 || total_len_ == 0) return {};
        Plan plan;
        plan.k1 = k1;
        plan.b = b;
        plan.delta = delta;
        plan.avgdl = static_cast<double>(total_len_) / static_cast<double>(live_count_);
        plan.allowed = options.allowed.get();
        plan.terms = resolve(query_terms, k1, delta);
        if (plan.terms.empty()) return {};
        const bool nonnegative = std::all_of(plan.terms.begin(), plan.terms.end(),
                                             [](const detail::bm25::QueryTerm& t) { return t.weight >= 0.0; });
        const bool prune = strategy == BM25Strategy::automatic && nonnegative && !scores_every_document();
        switch (params_.variant) {
            case BM25Variant::lucene: return run<BM25Variant::lucene>(plan, k, prune, stats);
            case BM25Variant::robertson: return run<BM25Variant::robertson>(plan, k, prune, stats);
            case BM25Variant::atire: return run<BM25Variant::atire>(plan, k, prune, stats);
            case BM25Variant::bm25l: return run<BM25Variant::bm25l>(plan, k, prune, stats);
            case BM25Variant::bm25plus: return run<BM25Variant::bm25plus>(plan, k, prune, stats);
            case BM25Variant::rank_bm25_okapi: return run<BM25Variant::rank_bm25_okapi>(plan, k, prune, stats);
            case BM25Variant::rank_bm25_l: return run<BM25Variant::rank_bm25_l>(plan, k, prune, stats);
            case BM25Variant::rank_bm25_plus: return run<BM25Variant::rank_bm25_plus>(plan, k, prune, stats);
        }
        return {};
    }

    // --- statistics -------------------------------------------------------------------

    /// Live documents.
    [[nodiscard]] std::size_t size() const noexcept { return live_count_; }
    [[nodiscard]] bool contains(DocId id) const noexcept { return id < live_.size() && live_[id] != 0; }
    /// One past the largest id ever indexed.
    [[nodiscard]] DocId next_id() const noexcept { return static_cast<DocId>(live_.size()); }
    /// The number of terms of document `id` (0 when absent).
    [[nodiscard]] std::uint32_t document_length(DocId id) const noexcept { return contains(id) ? doc_len_[id] : 0; }
    [[nodiscard]] double average_length() const noexcept {
        return live_count_ == 0 ? 0.0 : static_cast<double>(total_len_) / static_cast<double>(live_count_);
    }
    [[nodiscard]] std::uint64_t total_length() const noexcept { return total_len_; }
    /// Documents containing `term` (an index term, i.e. already analyzed).
    [[nodiscard]] std::size_t document_frequency(std::string_view term) const {
        auto it = dict_.find(term);
        return it == dict_.end() ? 0 : terms_[it->second].postings.size();
    }
    /// The frequency of `term` in document `id` (0 when absent).
    [[nodiscard]] std::uint32_t term_frequency(std::string_view term, DocId id) const {
        auto it = dict_.find(term);
        if (it == dict_.end()) return 0;
        const auto& pl = terms_[it->second].postings;
        auto p = std::lower_bound(pl.begin(), pl.end(), id, [](const detail::bm25::Posting& x, DocId d) { return x.doc < d; });
        return p != pl.end() && p->doc == id ? p->tf : 0;
    }
    /// Distinct terms present in at least one live document.
    [[nodiscard]] std::size_t vocabulary_size() const noexcept {
        return static_cast<std::size_t>(
            std::count_if(terms_.begin(), terms_.end(), [](const detail::bm25::TermData& t) { return !t.postings.empty(); }));
    }
    /// (document, term) pairs.
    [[nodiscard]] std::uint64_t posting_count() const noexcept { return posting_count_; }
    /// Bytes held by the index (capacities of its arrays; the term dictionary estimated).
    [[nodiscard]] std::size_t memory_bytes() const noexcept {
        std::size_t n = sizeof(*this);
        for (const auto& td : terms_)
            n += sizeof(td) + td.postings.capacity() * sizeof(detail::bm25::Posting) +
                 td.skyline.capacity() * sizeof(detail::bm25::SkyPoint);
        for (const auto& s : names_) n += sizeof(s) + (s.capacity() > 15 ? s.capacity() + 1 : 0);
        n += dict_.size() * (sizeof(std::string) + sizeof(std::uint32_t) + 2 * sizeof(void*)) +
             dict_.bucket_count() * sizeof(void*);
        n += doc_len_.capacity() * sizeof(std::uint32_t) + live_.capacity();
        for (const auto& f : doc_terms_) n += sizeof(f) + f.capacity();
        return n;
    }

    // --- persistence ------------------------------------------------------------------
    //
    // File layout (little-endian):
    //   magic "RGPPBM25" (8 bytes) | u32 version (1) | u64 payload size | u64 FNV-1a
    //   of the payload | payload:
    //   str analyzer name | u8 variant | f64 k1, b, delta, epsilon
    //   u64 slots | slots x (u8 live, u32 length)
    //   u64 terms | terms x (str term | u64 n | n x (u32 doc, u32 tf))
    //   (str = u32 byte count + bytes; terms without a live document are not saved)

    static constexpr std::string_view file_magic = "RGPPBM25";
    static constexpr std::uint32_t file_version = 1;

    /// Writes the index to `path` (through a temporary file and a rename). Throws IoError.
    void save(const std::filesystem::path& path) const { detail::bm25::write_file_atomically(path, to_bytes()); }

    /// The index in the file format of `save`.
    [[nodiscard]] std::string to_bytes() const {
        detail::bm25::Writer w;
        w.str(analyzer_.name());
        w.u8(static_cast<std::uint8_t>(params_.variant));
        w.f64(params_.k1);
        w.f64(params_.b);
        w.f64(params_.delta);
        w.f64(params_.epsilon);
        w.u64(live_.size());
        for (std::size_t i = 0; i < live_.size(); ++i) {
            w.u8(live_[i]);
            w.u32(doc_len_[i]);
        }
        w.u64(vocabulary_size());
        for (std::size_t t = 0; t < terms_.size(); ++t) {
            const auto& pl = terms_[t].postings;
            if (pl.empty()) continue;
            w.str(names_[t]);
            w.u64(pl.size());
            for (const auto& p : pl) {
                w.u32(p.doc);
                w.u32(p.tf);
            }
        }
        detail::bm25::Writer file;
        file.bytes.append(file_magic);
        file.u32(file_version);
        file.u64(w.bytes.size());
        file.u64(detail::bm25::fnv1a64(w.bytes));
        file.bytes += w.bytes;
        return std::move(file.bytes);
    }

    /// Reads an index saved by `save`. Throws IoError when the file cannot be read, and
    /// FormatError naming the file and what is wrong when it is not a BM25 index file,
    /// has another version, is truncated or corrupted, or was built with another
    /// analyzer than `analyzer`.
    [[nodiscard]] static BM25Index load(const std::filesystem::path& path, A analyzer = A{}) {
        return from_bytes(detail::bm25::read_whole_file(path), path.string(), std::move(analyzer));
    }

    /// Reads an index from the bytes of a file written by `save` (or `to_bytes`);
    /// `source` names them in error messages. Throws FormatError as `load` does.
    [[nodiscard]] static BM25Index from_bytes(std::string_view bytes, std::string_view source = "<memory>",
                                              A analyzer = A{}) {
        const std::string file = "'" + std::string(source) + "'";
        constexpr std::size_t header = 8 + 4 + 8 + 8;
        if (bytes.size() < file_magic.size() || bytes.substr(0, file_magic.size()) != file_magic)
            throw FormatError(file + ": not a ragpp BM25 index file (bad magic)");
        detail::bm25::Reader h(bytes.substr(file_magic.size(), header - file_magic.size()), file,
                               file_magic.size());
        const std::uint32_t version = h.u32("format version");
        if (version != file_version)
            throw FormatError(file + ": unsupported BM25 index format version " + std::to_string(version) +
                              " (this build reads version " + std::to_string(file_version) + ")");
        const std::uint64_t payload_size = h.u64("payload size");
        const std::uint64_t checksum = h.u64("checksum");
        const std::size_t actual = bytes.size() - header;
        if (payload_size != actual)
            throw FormatError(file + ": " + (payload_size > actual ? "truncated" : "has trailing bytes") +
                              ": the header announces " + std::to_string(payload_size) + " payload bytes, the file has " +
                              std::to_string(actual));
        const std::string_view payload = bytes.substr(header);
        if (detail::bm25::fnv1a64(payload) != checksum)
            throw FormatError(file + ": checksum mismatch, the file is corrupted");

        BM25Index index(std::move(analyzer));
        detail::bm25::Reader r(payload, file, header);
        const std::string_view analyzer_name = r.str("analyzer name");
        if (analyzer_name != std::string_view(index.analyzer_.name()))
            r.fail("the index was built with analyzer '" + std::string(analyzer_name) + "', this BM25Index uses '" +
                   std::string(index.analyzer_.name()) + "'");
        BM25Params p;
        const std::uint8_t variant = r.u8("variant");
        if (variant > static_cast<std::uint8_t>(BM25Variant::rank_bm25_plus))
            r.fail("unknown BM25 variant " + std::to_string(variant));
        p.variant = static_cast<BM25Variant>(variant);
        p.k1 = r.f64("k1");
        p.b = r.f64("b");
        p.delta = r.f64("delta");
        p.epsilon = r.f64("epsilon");
        try {
            index.set_params(p);
        } catch (const InvalidArgument& e) {
            r.fail(std::string("bad parameters: ") + e.what());
        }
        const std::size_t slots = r.count("document slots", 5);
        if (slots > std::size_t{std::numeric_limits<DocId>::max()} + 1) r.fail("too many document slots");
        index.live_.resize(slots);
        index.doc_len_.resize(slots);
        index.doc_terms_.resize(slots);
        for (std::size_t i = 0; i < slots; ++i) {
            const std::uint8_t live = r.u8("document live flag");
            if (live > 1) r.fail("document " + std::to_string(i) + " has live flag " + std::to_string(live));
            index.live_[i] = live;
            index.doc_len_[i] = r.u32("document length");
            if (!live && index.doc_len_[i] != 0) r.fail("removed document " + std::to_string(i) + " has a length");
            index.live_count_ += live;
            index.total_len_ += index.doc_len_[i];
        }
        const std::size_t nterms = r.count("term count", 4 + 8 + 8);
        std::vector<std::uint64_t> tf_sum(slots, 0);
        std::vector<std::uint32_t> prev_term(slots, 0);
        for (std::size_t t = 0; t < nterms; ++t) {
            const std::string_view name = r.str("term");
            if (index.dict_.find(name) != index.dict_.end()) r.fail("term '" + std::string(name) + "' appears twice");
            const std::uint32_t tid = index.intern(name);
            const std::size_t n = r.count("posting count", 8);
            if (n == 0) r.fail("term '" + std::string(name) + "' has no posting");
            auto& td = index.terms_[tid];
            td.postings.resize(n);
            for (std::size_t i = 0; i < n; ++i) {
                const DocId doc = r.u32("posting document");
                const std::uint32_t tf = r.u32("posting frequency");
                if (doc >= slots || !index.live_[doc])
                    r.fail("term '" + std::string(name) + "' has a posting for absent document " + std::to_string(doc));
                if (i > 0 && doc <= td.postings[i - 1].doc)
                    r.fail("postings of term '" + std::string(name) + "' are not in increasing document order");
                if (tf == 0) r.fail("term '" + std::string(name) + "' has a zero frequency");
                td.postings[i] = {doc, tf};
                tf_sum[doc] += tf;
                detail::bm25::skyline_add(td.skyline, {tf, index.doc_len_[doc]});
                detail::bm25::put_varint(index.doc_terms_[doc], tid - prev_term[doc]);
                prev_term[doc] = tid;
            }
            index.posting_count_ += n;
        }
        if (r.remaining() != 0) r.fail("unexpected bytes after the postings");
        for (std::size_t i = 0; i < slots; ++i)
            if (tf_sum[i] != index.doc_len_[i])
                r.fail("document " + std::to_string(i) + " has length " + std::to_string(index.doc_len_[i]) +
                       " but its postings sum to " + std::to_string(tf_sum[i]));
        for (auto& f : index.doc_terms_) f.shrink_to_fit();
        return index;
    }

private:
    struct Plan {
        double k1 = 0, b = 0, delta = 0, avgdl = 1;
        const DocSet* allowed = nullptr;
        std::vector<detail::bm25::QueryTerm> terms;
        [[nodiscard]] bool allows(DocId d) const noexcept { return allowed == nullptr || allowed->test(d); }
        [[nodiscard]] double norm(std::uint32_t len) const noexcept {
            return 1.0 - b + b * static_cast<double>(len) / avgdl;
        }
    };

    static void check_params(double k1, double b, double delta, const char* where) {
        auto bad = [&](const char* field, double v, const char* domain) {
            return InvalidArgument(std::string(where) + ": " + field + " is " + std::to_string(v) + " (must be " + domain + ")");
        };
        if (!std::isfinite(k1) || k1 < 0.0) throw bad("k1", k1, "finite and >= 0");
        if (!(b >= 0.0 && b <= 1.0)) throw bad("b", b, "in [0, 1]");
        if (!std::isfinite(delta) || delta < 0.0) throw bad("delta", delta, "finite and >= 0");
    }

    void check_absent(DocId id) const {
        if (contains(id)) throw DuplicateError("BM25Index: DocId " + std::to_string(id) + " is already indexed");
    }

    [[nodiscard]] bool scores_every_document() const noexcept {
        return params_.variant == BM25Variant::rank_bm25_l || params_.variant == BM25Variant::rank_bm25_plus;
    }

    static auto lower_bound(std::vector<detail::bm25::Posting>& pl, DocId id) {
        return std::lower_bound(pl.begin(), pl.end(), id, [](const detail::bm25::Posting& p, DocId d) { return p.doc < d; });
    }

    std::uint32_t intern(std::string_view term) {
        auto it = dict_.find(term);
        if (it != dict_.end()) return it->second;
        if (terms_.size() >= std::numeric_limits<std::uint32_t>::max())
            throw InvalidArgument("BM25Index: vocabulary exceeds 2^32-1 terms");
        const auto id = static_cast<std::uint32_t>(terms_.size());
        names_.emplace_back(term);
        terms_.emplace_back();
        dict_.emplace(names_.back(), id);
        return id;
    }

    void rebuild_skyline(detail::bm25::TermData& td) const {
        td.skyline.clear();
        for (const auto& p : td.postings) detail::bm25::skyline_add(td.skyline, {p.tf, doc_len_[p.doc]});
    }

    [[nodiscard]] double okapi_mean_idf() const {
        std::lock_guard lock(okapi_cache_.mutex);
        if (!okapi_cache_.valid || okapi_cache_.generation != generation_) {
            // Summed by increasing df, so the value does not depend on term ids (an index
            // rebuilt from scratch gets the same double).
            std::vector<std::size_t> dfs;
            dfs.reserve(terms_.size());
            for (const auto& td : terms_)
                if (!td.postings.empty()) dfs.push_back(td.postings.size());
            std::sort(dfs.begin(), dfs.end());
            const auto n = static_cast<double>(live_count_);
            double sum = 0.0;
            const std::size_t count = dfs.size();
            for (std::size_t i = 0; i < count;) {
                std::size_t j = i;
                while (j < count && dfs[j] == dfs[i]) ++j;
                sum += static_cast<double>(j - i) * bm25_idf(BM25Variant::rank_bm25_okapi, n, static_cast<double>(dfs[i]));
                i = j;
            }
            okapi_cache_.value = count == 0 ? 0.0 : sum / static_cast<double>(count);
            okapi_cache_.generation = generation_;
            okapi_cache_.valid = true;
        }
        return okapi_cache_.value;
    }

    /// The distinct known query terms, in order of first occurrence, with their weights.
    [[nodiscard]] std::vector<detail::bm25::QueryTerm> resolve(std::span<const std::string> query_terms, double k1,
                                                               double delta) const {
        std::vector<std::pair<std::uint32_t, std::uint32_t>> counts;  // term id, qtf
        for (const auto& t : query_terms) {
            auto it = dict_.find(std::string_view(t));
            if (it == dict_.end() || terms_[it->second].postings.empty()) continue;
            auto c = std::find_if(counts.begin(), counts.end(), [&](const auto& x) { return x.first == it->second; });
            if (c == counts.end()) counts.emplace_back(it->second, 1);
            else ++c->second;
        }
        std::vector<detail::bm25::QueryTerm> out;
        out.reserve(counts.size());
        const auto n = static_cast<double>(live_count_);
        const double absent = bm25_tf_part_absent(params_.variant, k1, delta);
        for (const auto& [tid, qtf] : counts) {
            const auto& td = terms_[tid];
            double idf = bm25_idf(params_.variant, n, static_cast<double>(td.postings.size()));
            if (params_.variant == BM25Variant::rank_bm25_okapi && idf < 0.0) idf = params_.epsilon * okapi_mean_idf();
            const double weight = static_cast<double>(qtf) * idf;
            out.push_back({td.postings.data(), td.postings.data() + td.postings.size(), &td.skyline, weight, weight * absent});
        }
        return out;
    }

    /// The score of a document given the frequency of each query term in it: the sum
    /// over the query terms, in query order, so every path computes the same double.
    template <BM25Variant V>
    [[nodiscard]] static double score_doc(const Plan& plan, const std::uint32_t* tfs, std::uint32_t len) noexcept {
        const double norm = plan.norm(len);
        double s = 0.0;
        for (std::size_t i = 0; i < plan.terms.size(); ++i) {
            const auto& t = plan.terms[i];
            s += tfs[i] != 0 ? t.weight * bm25_tf_part<V>(static_cast<double>(tfs[i]), norm, plan.k1, plan.delta) : t.zero;
        }
        return s;
    }

    template <BM25Variant V>
    [[nodiscard]] std::vector<Hit> run(const Plan& plan, std::size_t k, bool prune, BM25SearchStats* stats) const {
        detail::bm25::TopK top(k);
        const std::size_t scored = prune ? maxscore<V>(plan, top) : exhaustive<V>(plan, top, k);
        if (stats) *stats = {scored, prune};
        return top.take();
    }

    template <BM25Variant V>
    std::size_t exhaustive(const Plan& plan, detail::bm25::TopK& top, std::size_t k) const {
        const std::size_t m = plan.terms.size();
        std::vector<const detail::bm25::Posting*> cur(m);
        std::vector<std::uint32_t> tfs(m);
        for (std::size_t i = 0; i < m; ++i) cur[i] = plan.terms[i].begin;
        const bool all = scores_every_document();
        std::vector<std::uint8_t> matched(all ? live_.size() : 0, 0);
        std::size_t scored = 0;
        for (;;) {
            DocId d = std::numeric_limits<DocId>::max();
            bool any = false;
            for (std::size_t i = 0; i < m; ++i)
                if (cur[i] != plan.terms[i].end && cur[i]->doc <= d) {
                    d = cur[i]->doc;
                    any = true;
                }
            if (!any) break;
            for (std::size_t i = 0; i < m; ++i) {
                if (cur[i] != plan.terms[i].end && cur[i]->doc == d) {
                    tfs[i] = cur[i]->tf;
                    ++cur[i];
                } else {
                    tfs[i] = 0;
                }
            }
            if (all) matched[d] = 1;
            if (!plan.allows(d)) continue;
            ++scored;
            top.push({static_cast<float>(score_doc<V>(plan, tfs.data(), doc_len_[d])), d});
        }
        if (all) {
            // rank_bm25 scores every document: those without any query term all get
            // the sum of the absent-term parts; the k smallest such ids can enter.
            std::fill(tfs.begin(), tfs.end(), 0U);
            const auto base = static_cast<float>(score_doc<V>(plan, tfs.data(), 1));
            std::size_t added = 0;
            for (std::size_t d = 0; d < live_.size() && added < k; ++d) {
                if (!live_[d] || matched[d] || !plan.allows(static_cast<DocId>(d))) continue;
                ++added;
                ++scored;
                top.push({base, static_cast<DocId>(d)});
            }
        }
        return scored;
    }

    /// MaxScore. Each term's contribution is either `zero` (absent) or
    /// weight * tfpart(tf, L) <= ub (the maximum over the term's skyline), so a
    /// document's score is at most base + the sum of the excesses (ub - zero) of the
    /// terms it contains, base = sum of zero. Terms sorted by excess; the shortest
    /// prefix whose excesses (plus base) cannot beat the k-th score is non-essential:
    /// candidates come from the essential lists only, and the non-essential lists are
    /// probed, largest excess first, while the candidate can still enter the top k.
    /// Bounds carry a 1e-9 relative slack so rounding can never prune a document
    /// the exhaustive scorer would keep; a document enters only with its full score.
    template <BM25Variant V>
    std::size_t maxscore(const Plan& plan, detail::bm25::TopK& top) const {
        const std::size_t m = plan.terms.size();
        std::vector<double> excess(m);
        double base = 0.0, magnitude = 0.0;
        for (std::size_t i = 0; i < m; ++i) {
            const auto& t = plan.terms[i];
            double ub = t.zero;
            for (const auto& p : *t.skyline)
                ub = std::max(ub, t.weight * bm25_tf_part<V>(static_cast<double>(p.tf), plan.norm(p.len), plan.k1, plan.delta));
            excess[i] = ub - t.zero;
            base += t.zero;
            magnitude += std::abs(ub) + std::abs(t.zero);
        }
        const double slack = 1e-9 * magnitude + 1e-300;
        std::vector<std::size_t> order(m);
        for (std::size_t i = 0; i < m; ++i) order[i] = i;
        std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return excess[a] < excess[b]; });
        std::vector<double> prefix(m + 1, 0.0);  // prefix[j] = excesses of order[0..j)
        for (std::size_t j = 0; j < m; ++j) prefix[j + 1] = prefix[j] + excess[order[j]];

        std::vector<const detail::bm25::Posting*> cur(m);
        std::vector<std::uint32_t> tfs(m);
        for (std::size_t i = 0; i < m; ++i) cur[i] = plan.terms[i].begin;
        std::size_t ne = 0;  // order[0..ne) are non-essential
        std::size_t scored = 0;
        for (;;) {
            if (top.full())
                while (ne < m && base + prefix[ne + 1] + slack <= top.threshold()) ++ne;
            if (ne == m) break;
            DocId d = std::numeric_limits<DocId>::max();
            bool any = false;
            for (std::size_t j = ne; j < m; ++j) {
                const std::size_t i = order[j];
                if (cur[i] != plan.terms[i].end && cur[i]->doc <= d) {
                    d = cur[i]->doc;
                    any = true;
                }
            }
            if (!any) break;
            std::fill(tfs.begin(), tfs.end(), 0U);
            for (std::size_t j = ne; j < m; ++j) {
                const std::size_t i = order[j];
                if (cur[i] != plan.terms[i].end && cur[i]->doc == d) {
                    tfs[i] = cur[i]->tf;
                    ++cur[i];
                }
            }
            if (!plan.allows(d)) continue;
            const std::uint32_t len = doc_len_[d];
            if (top.full()) {
                const double theta = top.threshold();
                const double norm = plan.norm(len);
                double bound = base + prefix[ne];
                for (std::size_t j = ne; j < m; ++j) {
                    const std::size_t i = order[j];
                    if (tfs[i] != 0)
                        bound += plan.terms[i].weight * bm25_tf_part<V>(static_cast<double>(tfs[i]), norm, plan.k1, plan.delta) -
                                 plan.terms[i].zero;
                }
                bool skip = false;
                for (std::size_t j = ne; j-- > 0;) {
                    if (bound + slack <= theta) {
                        skip = true;
                        break;
                    }
                    const std::size_t i = order[j];
                    cur[i] = detail::bm25::next_geq(cur[i], plan.terms[i].end, d);
                    bound -= excess[i];
                    if (cur[i] != plan.terms[i].end && cur[i]->doc == d) {
                        tfs[i] = cur[i]->tf;
                        bound += plan.terms[i].weight * bm25_tf_part<V>(static_cast<double>(tfs[i]), norm, plan.k1, plan.delta) -
                                 plan.terms[i].zero;
                    }
                }
                if (skip || bound + slack <= theta) continue;
            } else {
                for (std::size_t j = 0; j < ne; ++j) {
                    const std::size_t i = order[j];
                    cur[i] = detail::bm25::next_geq(cur[i], plan.terms[i].end, d);
                    if (cur[i] != plan.terms[i].end && cur[i]->doc == d) tfs[i] = cur[i]->tf;
                }
            }
            ++scored;
            top.push({static_cast<float>(score_doc<V>(plan, tfs.data(), len)), d});
        }
        return scored;
    }

    A analyzer_{};
    BM25Params params_{};
    std::unordered_map<std::string, std::uint32_t, detail::bm25::StringHash, std::equal_to<>> dict_;
    std::vector<std::string> names_;
    std::vector<detail::bm25::TermData> terms_;
    std::vector<std::uint32_t> doc_len_;             // by DocId; 0 for absent slots
    std::vector<std::uint8_t> live_;                 // by DocId
    std::vector<std::vector<std::uint8_t>> doc_terms_;  // forward index: varint deltas of sorted term ids
    std::size_t live_count_ = 0;
    std::uint64_t total_len_ = 0;
    std::uint64_t posting_count_ = 0;
    std::uint64_t generation_ = 0;
    mutable detail::bm25::MeanIdfCache okapi_cache_;
};

static_assert(SearchIndex<BM25Index<WhitespaceAnalyzer>>);

}  // namespace ragpp
