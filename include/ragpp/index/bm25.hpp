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
// ## Fields (BM25F)
// A chunk's document title, heading path and source path are fields of their own
// beside the body (the document's text): see bm25_document_fields for where they come
// from. They are scored with the "simple BM25F" of Robertson, Zaragoza and Taylor
// ("Simple BM25 extension to multiple weighted fields", CIKM 2004) in the form of
// Zaragoza, Craswell, Taylor, Saria and Robertson ("Microsoft Cambridge at TREC-13:
// Web and HARD tracks", 2004): per-field length normalisation, weighted frequencies
// summed before one saturation, one idf per term over the whole document:
//
//   x(t, d) = tf_body / L_body(d) + sum over fields f of w_f * tf_f / L_f(d),
//   L_body(d) = 1 - b + b * |d| / avgdl,   L_f(d) = 1 - b_f + b_f * |d_f| / avglen_f,
//   score(q, d) = sum over t of qtf(t) * idf(t) * tfpartF(x(t, d)),
//   df = documents containing t in any field (body or metadata field),
//   avglen_f = mean length of field f over the live documents that have the field,
//   tfpartF(x) = x / (x + k1)                   lucene, robertson
//              = (k1 + 1) x / (x + k1)          atire, rank_bm25_okapi
//              = (k1 + 1)(x + delta) / (k1 + x + delta)   bm25l family (c = x)
//              = delta + (k1 + 1) x / (k1 + x)  bm25plus family.
// With no field term, x = tf / L and tfpartF(x) is the tfpart of the table above (the
// same value; e.g. x / (x + k1) = tf / (tf + k1 L)). The body's weight is 1: scaling
// every weight by c is the same as dividing k1 by c, so it would add no freedom.
// Weights and b_f are BM25Params (saved with the index); the weights can change per
// query (SearchOptions::field_weights). A field of weight 0 is not read.
//
// Fielded scoring is used only when the index holds at least one document with a
// field term and some field weight is > 0; otherwise search is exactly the unfielded
// BM25 above (same doubles): a collection without fields (BEIR, plain documents)
// scores as it always did. Fielded top k: exhaustive or MaxScore (accumulation is not
// implemented for fields; BM25Strategy::accumulate falls back to exhaustive); MaxScore
// bounds a term's x by the sum over fields of w_f * max tf_f / L_f(d) over that
// field's (tf, length) skyline, and tfpartF is increasing in x, so the bound is exact
// as in the unfielded case.
//
// ## Top k
// Scores are computed in double and ranked as the float returned in Hit::score
// (higher first, ties by smaller id), so a result list is ordered by its own scores.
// Three algorithms return exactly the same ids and scores (every per-document sum runs
// over the query terms in query order, so it is the same double):
// - exhaustive: document at a time over every matching document (`search_exhaustive`,
//   the oracle);
// - accumulate: term at a time into one accumulator per document; valid when
//   tfpart(0) = 0 (not the bm25l / bm25plus families unless delta = 0);
// - maxscore: MaxScore (Turtle & Flood, "Query evaluation: strategies and
//   optimizations", IP&M 1995) with exact per-term upper bounds computed at query
//   time from each list's (tf, length) skyline; valid when every term weight is >= 0.
// Neither shortcut applies to rank_bm25_l / rank_bm25_plus (they score every
// document), and MaxScore not to rank_bm25_okapi with a negative term weight: those
// fall back to the exhaustive scorer. `search` chooses (BM25Strategy::automatic):
// accumulate on small indexes when the query's lists are long relative to the
// collection, else MaxScore where valid.
//
// ## Threading
// `search*` are const and may run from many threads at once; `add_document`,
// `remove_document`, `update_document`, `set_params` need exclusive access.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
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
#include <variant>
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
    /// BM25F weights of the title, heading path and source path fields (the body's is
    /// 1); used only by indexes holding fielded documents (see "Fields" above).
    /// Chosen on the demo's identifier look-ups and questions (docs/bm25.md).
    FieldWeights field_weights{3.0, 1.0, 1.0};
    /// Length normalisation b_f of the title, heading path and source path, in [0, 1].
    double field_b = 0.5;
};

/// The metadata fields of a document, as BM25Index indexes them: title, heading path,
/// source path (in that order). A document has fields when its metadata has "source"
/// (a string) or "heading_path" (a list), as chunks have (Chunk::to_document):
///   title    = metadata "title" when it is a non-empty string, else the first heading,
///              else the file name without its extension (a page without a heading,
///              like CMake's module stubs, is known by its file name);
///   headings = the heading path, without a first heading used as the title, one a line;
///   path     = "source" with its directory separators turned into spaces and its
///              extension dropped ("policy/CMP0077.rst" -> "policy CMP0077").
/// Other documents (BEIR, plain ones) have three empty fields.
[[nodiscard]] inline std::array<std::string, 3> bm25_document_fields(const Document& doc) {
    std::array<std::string, 3> out;
    const auto src = doc.metadata.find("source");
    const auto hp = doc.metadata.find("heading_path");
    const auto* source = src == doc.metadata.end() ? nullptr : std::get_if<std::string>(&src->second);
    const auto* headings = hp == doc.metadata.end() ? nullptr : std::get_if<std::vector<std::string>>(&hp->second);
    if (source == nullptr && headings == nullptr) return out;
    if (auto t = doc.metadata.find("title"); t != doc.metadata.end())
        if (const auto* title = std::get_if<std::string>(&t->second)) out[0] = *title;
    std::size_t first = 0;
    if (out[0].empty() && headings != nullptr && !headings->empty()) {
        out[0] = headings->front();
        first = 1;
    }
    if (headings != nullptr)
        for (std::size_t i = first; i < headings->size(); ++i) {
            if (i == 0 && (*headings)[0] == out[0]) continue;
            if (!out[1].empty()) out[1] += '\n';
            out[1] += (*headings)[i];
        }
    if (source != nullptr) {
        if (out[0].empty()) {
            const auto slash = source->find_last_of("/\\");
            std::string name = source->substr(slash == std::string::npos ? 0 : slash + 1);
            if (const auto dot = name.find_last_of('.'); dot != std::string::npos && dot > 0) name.resize(dot);
            out[0] = std::move(name);
        }
        std::string p = *source;
        const auto slash = p.find_last_of("/\\");
        const auto dot = p.find_last_of('.');
        if (dot != std::string::npos && (slash == std::string::npos || dot > slash + 1)) p.resize(dot);
        for (char& c : p)
            if (c == '/' || c == '\\') c = ' ';
        out[2] = std::move(p);
    }
    return out;
}

/// The top-k algorithms. All return exactly the same ids and scores.
enum class BM25Algorithm : std::uint8_t {
    exhaustive,  ///< document at a time over every matching document (the oracle)
    accumulate,  ///< term at a time into one accumulator per document
    maxscore,    ///< document at a time with MaxScore dynamic pruning
};

/// Which top-k algorithm `search_terms` uses.
enum class BM25Strategy : std::uint8_t {
    automatic,   ///< accumulate when the query's lists cover much of the collection,
                 ///< else MaxScore where valid, else exhaustive
    exhaustive,  ///< BM25Algorithm::exhaustive
    accumulate,  ///< BM25Algorithm::accumulate where valid, else exhaustive
    maxscore,    ///< BM25Algorithm::maxscore where valid, else exhaustive
};

[[nodiscard]] constexpr std::string_view to_string(BM25Algorithm a) noexcept {
    switch (a) {
        case BM25Algorithm::exhaustive: return "exhaustive";
        case BM25Algorithm::accumulate: return "accumulate";
        case BM25Algorithm::maxscore: return "maxscore";
    }
    return "?";
}

/// What a search did (for tests and benchmarks).
struct BM25SearchStats {
    std::size_t scored = 0;  ///< documents fully scored
    BM25Algorithm algorithm = BM25Algorithm::exhaustive;
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

/// The exact-title key of a text: U+001F, then the text in ASCII lower case with
/// whitespace runs as one space and the punctuation around it trimmed; "" when
/// nothing is left. A title adds its key to the title field; a query adds the key of
/// its whole text and of each whitespace-separated token that looks like an
/// identifier (bm25_identifier_like), so a query that is or contains a page's title
/// (an identifier: "CMP0077", "CMAKE_CXX_STANDARD") meets that page's title key, a rare
/// term, weighted as a title term; a plain word of a question ("file") does not.
[[nodiscard]] inline std::string bm25_title_key(std::string_view text) {
    constexpr std::string_view trim_chars = " \t\r\n\"'`()[]{}<>,.;:!?*";
    const auto b = text.find_first_not_of(trim_chars);
    if (b == std::string_view::npos) return {};
    text = text.substr(b, text.find_last_not_of(trim_chars) - b + 1);
    std::string key = "\x1f";
    bool space = false;
    for (char c : text) {
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
            space = true;
            continue;
        }
        if (space) key += ' ';
        space = false;
        key += c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    }
    return key;
}

/// Whether a query token is identifier-like: it has a digit, an underscore, or an
/// upper-case ASCII letter after its first character ("CMP0077", "MX-200",
/// "target_link_libraries", "FetchContent"; not "file", "Install").
[[nodiscard]] constexpr bool bm25_identifier_like(std::string_view token) noexcept {
    for (std::size_t i = 0; i < token.size(); ++i) {
        const char c = token[i];
        if ((c >= '0' && c <= '9') || c == '_' || (i > 0 && c >= 'A' && c <= 'Z')) return true;
    }
    return false;
}

/// tfpartF of BM25F (see "Fields" above): the term-frequency part as a function of the
/// length-normalised, weighted frequency x = sum over fields of w_f tf_f / L_f.
template <BM25Variant V>
[[nodiscard]] constexpr double bm25f_tf_part(double x, double k1, double delta) noexcept {
    if constexpr (V == BM25Variant::lucene || V == BM25Variant::robertson) {
        return x / (x + k1);
    } else if constexpr (V == BM25Variant::atire || V == BM25Variant::rank_bm25_okapi) {
        return x * (k1 + 1.0) / (x + k1);
    } else if constexpr (V == BM25Variant::bm25l || V == BM25Variant::rank_bm25_l) {
        return (k1 + 1.0) * (x + delta) / (k1 + x + delta);
    } else {
        return delta + x * (k1 + 1.0) / (k1 + x);
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

struct TermData {
    std::vector<Posting> postings;  ///< sorted by doc, strictly increasing
    std::vector<SkyPoint> skyline;  ///< see skyline_add
    SkyPoint front{0, 0};           ///< skyline.front() when not empty: the lowest tf, shortest

    /// skyline_add, with the common case (a point dominated by the front, e.g. tf 1 in
    /// a document not shorter than the shortest one) decided without reading the skyline.
    void add_point(SkyPoint p) {
        if (!skyline.empty() && p.tf <= front.tf && p.len >= front.len) return;
        skyline_add(skyline, p);
        front = skyline.front();
    }
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

/// One distinct query term of a fielded search: a posting list per field (0 the body,
/// then title, headings, path; empty when the term is absent from the field or the
/// field's weight is 0).
struct FieldedTerm {
    std::array<const Posting*, 4> begin{};
    std::array<const Posting*, 4> end{};
    std::array<const std::vector<SkyPoint>*, 4> skyline{};
    double weight = 0;  ///< qtf * idf
    double zero = 0;    ///< weight * tfpartF(0)
};

/// The postings of the metadata fields of an index (see "Fields" in bm25.hpp).
struct FieldData {
    std::vector<TermData> terms;                   ///< by term id; may be shorter than the dictionary
    std::vector<std::uint32_t> len;                ///< by DocId; 0 for absent slots
    std::vector<std::vector<std::uint8_t>> fwd;    ///< by DocId: varint deltas of sorted term ids
    std::uint64_t total = 0;                       ///< sum of len over live documents
    std::size_t docs = 0;                          ///< live documents with len > 0
    [[nodiscard]] std::uint32_t length(DocId d) const noexcept { return d < len.size() ? len[d] : 0; }
    [[nodiscard]] const TermData* term(std::uint32_t t) const noexcept {
        return t < terms.size() && !terms[t].postings.empty() ? &terms[t] : nullptr;
    }
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
        check_field_weights(p.field_weights, "BM25Params");
        if (!(p.field_b >= 0.0 && p.field_b <= 1.0))
            throw InvalidArgument("BM25Params: field_b is " + std::to_string(p.field_b) + " (must be in [0, 1])");
        params_ = p;
    }
    [[nodiscard]] const A& analyzer() const noexcept { return analyzer_; }

    // --- updates ----------------------------------------------------------------------

    /// Indexes the analyzed `doc.text` under `id`. Throws DuplicateError when `id` is
    /// already indexed; nothing changes then (nor when the analyzer throws).
    /// A document with metadata fields (bm25_document_fields) also gets its title,
    /// heading path and source path indexed as BM25F fields.
    void add_document(DocId id, const Document& doc) {
        check_absent(id);
        std::vector<std::string> terms;
        analyzer_.analyze(doc.text, terms);
        const auto fields = analyze_fields(doc);
        add_terms(id, terms);
        add_field_terms(id, fields);
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
        // Hash every term first and prefetch its dictionary slot, so the lookups of a
        // document overlap their cache misses instead of waiting for each in turn.
        std::vector<std::uint64_t> hashes(terms.size());
        for (std::size_t i = 0; i < terms.size(); ++i) {
            hashes[i] = detail::bm25::TermDict::hash(terms[i]);
            dict_.prefetch(hashes[i]);
        }
        std::vector<std::uint32_t> ids;
        ids.reserve(terms.size());
        for (std::size_t i = 0; i < terms.size(); ++i) ids.push_back(intern(terms[i], hashes[i]));
        std::sort(ids.begin(), ids.end());
        std::vector<detail::bm25::Posting> unique;  // (term id, tf)
        unique.reserve(ids.size());
        for (std::size_t i = 0; i < ids.size();) {
            std::size_t j = i + 1;
            while (j < ids.size() && ids[j] == ids[i]) ++j;
            unique.push_back({ids[i], static_cast<std::uint32_t>(j - i)});
            i = j;
        }
        const std::size_t slots = std::max(doc_len_.size(), std::size_t{id} + 1);
        doc_len_.resize(slots, 0);
        live_.resize(slots, 0);
        doc_terms_.resize(slots);
        const auto len = static_cast<std::uint32_t>(terms.size());
        std::vector<std::uint8_t> forward;
        forward.reserve(unique.size() + unique.size() / 2);
        std::uint32_t prev = 0;
        const std::size_t distinct = unique.size();
        for (std::size_t i = 0; i < distinct; ++i) {
            // Prefetch the term record 8 terms ahead, then its list's tail 4 terms ahead.
            if (i + 8 < distinct) detail::bm25::prefetch(&terms_[unique[i + 8].doc]);
            if (i + 4 < distinct) {
                const auto& ahead = terms_[unique[i + 4].doc].postings;
                if (!ahead.empty()) detail::bm25::prefetch(ahead.data() + ahead.size() - 1);
            }
            const std::uint32_t tid = unique[i].doc;
            auto& td = terms_[tid];
            const detail::bm25::Posting p{id, unique[i].tf};
            if (td.postings.empty() || td.postings.back().doc < id) {
                td.postings.push_back(p);
            } else {
                td.postings.insert(lower_bound(td.postings, id), p);
            }
            td.add_point({p.tf, len});
            detail::bm25::put_varint(forward, tid - prev);
            prev = tid;
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
        remove_field_terms(id);
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
        const auto fields = analyze_fields(doc);
        remove_document(id);
        add_terms(id, terms);
        add_field_terms(id, fields);
    }

    /// Releases the spare capacity of the posting lists (after a bulk build).
    void shrink_to_fit() {
        for (auto& td : terms_) td.postings.shrink_to_fit();
        for (auto& f : fields_)
            for (auto& td : f.terms) td.postings.shrink_to_fit();
    }

    // --- search -----------------------------------------------------------------------

    /// The k best documents for `query`, best first, ties by smaller id. k1, b and
    /// delta come from `options` when set, else from params(). Only documents in
    /// `options.allowed` are scored. Throws InvalidArgument for a parameter out of range.
    /// With fielded documents, the query's title keys (bm25_title_key) are added to its terms.
    [[nodiscard]] std::vector<Hit> search(std::string_view query, std::size_t k, const SearchOptions& options = {}) const {
        return search_terms(query_terms(query), k, options);
    }
    /// The same, scoring every matching document (the oracle of the pruned search).
    [[nodiscard]] std::vector<Hit> search_exhaustive(std::string_view query, std::size_t k,
                                                     const SearchOptions& options = {}) const {
        return search_terms(query_terms(query), k, options, BM25Strategy::exhaustive);
    }
    /// The terms `search` looks up for `query`: the analyzer's, then, when the index
    /// holds fielded documents, the title keys of the whole query and of each
    /// identifier-like whitespace-separated token (each distinct key once).
    [[nodiscard]] std::vector<std::string> query_terms(std::string_view query) const {
        std::vector<std::string> terms;
        analyzer_.analyze(query, terms);
        if (fielded_docs_ == 0) return terms;
        std::vector<std::string> keys;
        auto add = [&](std::string key) {
            if (!key.empty() && std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(std::move(key));
        };
        for (std::size_t i = 0; i < query.size();) {
            const auto b = query.find_first_not_of(" \t\r\n", i);
            if (b == std::string_view::npos) break;
            auto e = query.find_first_of(" \t\r\n", b);
            if (e == std::string_view::npos) e = query.size();
            if (bm25_identifier_like(query.substr(b, e - b))) add(bm25_title_key(query.substr(b, e - b)));
            i = e;
        }
        add(bm25_title_key(query));
        for (auto& k : keys) terms.push_back(std::move(k));
        return terms;
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
        plan.one_minus_b = 1.0 - b;
        plan.b_over_avgdl = b / plan.avgdl;
        plan.allowed = options.allowed.get();
        const FieldWeights fw = options.field_weights.value_or(params_.field_weights);
        check_field_weights(fw, "SearchOptions");
        if (fielded_docs_ > 0 && (fw.title > 0.0 || fw.headings > 0.0 || fw.path > 0.0))
            return search_fielded(plan, fw, query_terms, k, strategy, stats);
        plan.terms = resolve(query_terms, k1, delta);
        if (plan.terms.empty()) return {};
        const BM25Algorithm algorithm = choose(plan, strategy);
        switch (params_.variant) {
            case BM25Variant::lucene: return run<BM25Variant::lucene>(plan, k, algorithm, stats);
            case BM25Variant::robertson: return run<BM25Variant::robertson>(plan, k, algorithm, stats);
            case BM25Variant::atire: return run<BM25Variant::atire>(plan, k, algorithm, stats);
            case BM25Variant::bm25l: return run<BM25Variant::bm25l>(plan, k, algorithm, stats);
            case BM25Variant::bm25plus: return run<BM25Variant::bm25plus>(plan, k, algorithm, stats);
            case BM25Variant::rank_bm25_okapi: return run<BM25Variant::rank_bm25_okapi>(plan, k, algorithm, stats);
            case BM25Variant::rank_bm25_l: return run<BM25Variant::rank_bm25_l>(plan, k, algorithm, stats);
            case BM25Variant::rank_bm25_plus: return run<BM25Variant::rank_bm25_plus>(plan, k, algorithm, stats);
        }
        return {};
    }

    // --- statistics -------------------------------------------------------------------

    /// Live documents.
    [[nodiscard]] std::size_t size() const noexcept { return live_count_; }
    /// Live documents with at least one metadata field term (see "Fields").
    [[nodiscard]] std::size_t fielded_size() const noexcept { return fielded_docs_; }
    /// The number of terms of field `field` (0 title, 1 headings, 2 path) of document `id`.
    [[nodiscard]] std::uint32_t field_length(std::size_t field, DocId id) const noexcept {
        return field < fields_.size() && contains(id) ? fields_[field].length(id) : 0;
    }
    /// The frequency of `term` in field `field` (0 title, 1 headings, 2 path) of `id`.
    [[nodiscard]] std::uint32_t field_term_frequency(std::size_t field, std::string_view term, DocId id) const {
        const auto tid = dict_.find(term);
        if (field >= fields_.size() || tid == dict_.npos) return 0;
        const auto* td = fields_[field].term(tid);
        if (td == nullptr) return 0;
        auto p = std::lower_bound(td->postings.begin(), td->postings.end(), id,
                                  [](const detail::bm25::Posting& x, DocId d) { return x.doc < d; });
        return p != td->postings.end() && p->doc == id ? p->tf : 0;
    }
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
        const auto id = dict_.find(term);
        return id == dict_.npos ? 0 : terms_[id].postings.size();
    }
    /// The idf of `term` (an index term) as this index's variant scores it now (the table at
    /// the top; rank_bm25_okapi's floor included); 0 for a term no live document contains.
    [[nodiscard]] double idf(std::string_view term) const {
        const std::size_t df = document_frequency(term);
        if (df == 0) return 0.0;
        double w = bm25_idf(params_.variant, static_cast<double>(live_count_), static_cast<double>(df));
        if (params_.variant == BM25Variant::rank_bm25_okapi && w < 0.0) w = params_.epsilon * okapi_mean_idf();
        return w;
    }
    /// The frequency of `term` in document `id` (0 when absent).
    [[nodiscard]] std::uint32_t term_frequency(std::string_view term, DocId id) const {
        const auto tid = dict_.find(term);
        if (tid == dict_.npos) return 0;
        const auto& pl = terms_[tid].postings;
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
        n += dict_.memory_bytes();
        n += doc_len_.capacity() * sizeof(std::uint32_t) + live_.capacity();
        for (const auto& f : doc_terms_) n += sizeof(f) + f.capacity();
        for (const auto& fd : fields_) {
            for (const auto& td : fd.terms)
                n += sizeof(td) + td.postings.capacity() * sizeof(detail::bm25::Posting) +
                     td.skyline.capacity() * sizeof(detail::bm25::SkyPoint);
            n += fd.len.capacity() * sizeof(std::uint32_t);
            for (const auto& f : fd.fwd) n += sizeof(f) + f.capacity();
        }
        return n;
    }

    // --- persistence ------------------------------------------------------------------
    //
    // File layout (little-endian):
    //   magic "RGPPBM25" (8 bytes) | u32 version (2) | u64 payload size | u64 FNV-1a
    //   of the payload | payload:
    //   str analyzer name | u8 variant | f64 k1, b, delta, epsilon
    //   f64 title, headings, path weights, field_b                      (version 2)
    //   u64 slots | slots x (u8 live, u32 length)
    //   u64 terms | terms x (str term | u64 n | n x (u32 doc, u32 tf))
    //   3 x (title, headings, path; version 2): the same terms section for the field
    //   (a field's length is the sum of its frequencies)
    //   (str = u32 byte count + bytes; terms without a live document are not saved)
    // Version 1 files (no fields) are read as indexes without fields, with the default
    // field parameters; rebuild them to get fielded scoring.

    static constexpr std::string_view file_magic = "RGPPBM25";
    static constexpr std::uint32_t file_version = 2;

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
        w.f64(params_.field_weights.title);
        w.f64(params_.field_weights.headings);
        w.f64(params_.field_weights.path);
        w.f64(params_.field_b);
        w.u64(live_.size());
        for (std::size_t i = 0; i < live_.size(); ++i) {
            w.u8(live_[i]);
            w.u32(doc_len_[i]);
        }
        w.u64(vocabulary_size());
        for (std::size_t t = 0; t < terms_.size(); ++t) {
            const auto& pl = terms_[t].postings;
            if (pl.empty()) continue;
            w.str(dict_.name(static_cast<std::uint32_t>(t)));
            w.u64(pl.size());
            for (const auto& p : pl) {
                w.u32(p.doc);
                w.u32(p.tf);
            }
        }
        for (const auto& fd : fields_) {
            std::uint64_t count = 0;
            for (const auto& td : fd.terms) count += td.postings.empty() ? 0 : 1;
            w.u64(count);
            for (std::size_t t = 0; t < fd.terms.size(); ++t) {
                const auto& pl = fd.terms[t].postings;
                if (pl.empty()) continue;
                w.str(dict_.name(static_cast<std::uint32_t>(t)));
                w.u64(pl.size());
                for (const auto& p : pl) {
                    w.u32(p.doc);
                    w.u32(p.tf);
                }
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
        if (version != 1 && version != file_version)
            throw FormatError(file + ": unsupported BM25 index format version " + std::to_string(version) +
                              " (this build reads versions 1 and " + std::to_string(file_version) +
                              "; rebuild the index)");
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
        if (version >= 2) {
            p.field_weights.title = r.f64("title weight");
            p.field_weights.headings = r.f64("headings weight");
            p.field_weights.path = r.f64("path weight");
            p.field_b = r.f64("field_b");
        }
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
            if (index.dict_.find(name) != index.dict_.npos) r.fail("term '" + std::string(name) + "' appears twice");
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
                td.add_point({tf, index.doc_len_[doc]});
                detail::bm25::put_varint(index.doc_terms_[doc], tid - prev_term[doc]);
                prev_term[doc] = tid;
            }
            index.posting_count_ += n;
        }
        if (version >= 2) {
            static constexpr const char* names[3] = {"title", "headings", "path"};
            for (std::size_t f = 0; f < index.fields_.size(); ++f) {
                auto& fd = index.fields_[f];
                const std::size_t nf = r.count("field term count", 4 + 8 + 8);
                std::vector<std::vector<std::uint32_t>> ids(slots);  // term ids of each document
                fd.len.assign(slots, 0);
                fd.fwd.assign(slots, {});
                for (std::size_t t = 0; t < nf; ++t) {
                    const std::string_view name = r.str("field term");
                    const std::uint32_t tid = index.intern(name);
                    if (tid < fd.terms.size() && !fd.terms[tid].postings.empty())
                        r.fail(std::string(names[f]) + " term '" + std::string(name) + "' appears twice");
                    if (fd.terms.size() < index.terms_.size()) fd.terms.resize(index.terms_.size());
                    const std::size_t n = r.count("posting count", 8);
                    if (n == 0) r.fail(std::string(names[f]) + " term '" + std::string(name) + "' has no posting");
                    auto& pl = fd.terms[tid].postings;
                    pl.resize(n);
                    for (std::size_t i = 0; i < n; ++i) {
                        const DocId doc = r.u32("posting document");
                        const std::uint32_t tf = r.u32("posting frequency");
                        if (doc >= slots || !index.live_[doc])
                            r.fail(std::string(names[f]) + " term '" + std::string(name) +
                                   "' has a posting for absent document " + std::to_string(doc));
                        if (i > 0 && doc <= pl[i - 1].doc)
                            r.fail("postings of " + std::string(names[f]) + " term '" + std::string(name) +
                                   "' are not in increasing document order");
                        if (tf == 0) r.fail(std::string(names[f]) + " term '" + std::string(name) + "' has a zero frequency");
                        if (std::uint64_t{fd.len[doc]} + tf > std::numeric_limits<std::uint32_t>::max())
                            r.fail("document " + std::to_string(doc) + " has a " + names[f] + " field too long");
                        pl[i] = {doc, tf};
                        fd.len[doc] += tf;
                        ids[doc].push_back(tid);
                    }
                }
                for (std::size_t d = 0; d < slots; ++d) {
                    fd.total += fd.len[d];
                    fd.docs += fd.len[d] > 0 ? 1 : 0;
                    std::sort(ids[d].begin(), ids[d].end());
                    std::uint32_t prev = 0;
                    for (const std::uint32_t t : ids[d]) {
                        detail::bm25::put_varint(fd.fwd[d], t - prev);
                        prev = t;
                    }
                }
                for (auto& td : fd.terms)
                    for (const auto& q : td.postings) td.add_point({q.tf, fd.len[q.doc]});
            }
            for (std::size_t d = 0; d < slots; ++d)
                if (index.fields_[0].length(static_cast<DocId>(d)) + index.fields_[1].length(static_cast<DocId>(d)) +
                        index.fields_[2].length(static_cast<DocId>(d)) >
                    0)
                    ++index.fielded_docs_;
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
    using FieldTerms = std::array<std::vector<std::string>, 3>;

    [[nodiscard]] FieldTerms analyze_fields(const Document& doc) const {
        FieldTerms out;
        const auto texts = bm25_document_fields(doc);
        for (std::size_t f = 0; f < 3; ++f)
            if (!texts[f].empty()) analyzer_.analyze(texts[f], out[f]);
        if (auto key = bm25_title_key(texts[0]); !key.empty()) out[0].push_back(std::move(key));
        return out;
    }

    /// Indexes the field terms of a document just added by add_terms.
    void add_field_terms(DocId id, const FieldTerms& fields) {
        bool any = false;
        for (std::size_t f = 0; f < 3; ++f) {
            const auto& terms = fields[f];
            if (terms.empty()) continue;
            if (terms.size() > std::numeric_limits<std::uint32_t>::max())
                throw InvalidArgument("BM25Index: a field of document " + std::to_string(id) + " has more than 2^32-1 terms");
            any = true;
            std::vector<std::uint32_t> ids;
            ids.reserve(terms.size());
            for (const auto& t : terms) ids.push_back(intern(t));
            std::sort(ids.begin(), ids.end());
            auto& fd = fields_[f];
            if (fd.terms.size() < terms_.size()) fd.terms.resize(terms_.size());
            const std::size_t slots = std::max(fd.len.size(), std::size_t{id} + 1);
            fd.len.resize(slots, 0);
            fd.fwd.resize(slots);
            const auto len = static_cast<std::uint32_t>(terms.size());
            std::vector<std::uint8_t> forward;
            std::uint32_t prev = 0;
            for (std::size_t i = 0; i < ids.size();) {
                std::size_t j = i + 1;
                while (j < ids.size() && ids[j] == ids[i]) ++j;
                auto& td = fd.terms[ids[i]];
                const detail::bm25::Posting p{id, static_cast<std::uint32_t>(j - i)};
                if (td.postings.empty() || td.postings.back().doc < id) td.postings.push_back(p);
                else td.postings.insert(lower_bound(td.postings, id), p);
                td.add_point({p.tf, len});
                detail::bm25::put_varint(forward, ids[i] - prev);
                prev = ids[i];
                i = j;
            }
            forward.shrink_to_fit();
            fd.fwd[id] = std::move(forward);
            fd.len[id] = len;
            fd.total += len;
            ++fd.docs;
        }
        if (any) {
            ++fielded_docs_;
            ++generation_;
        }
    }

    void remove_field_terms(DocId id) {
        bool any = false;
        for (auto& fd : fields_) {
            const std::uint32_t len = fd.length(id);
            if (len == 0) continue;
            any = true;
            detail::bm25::for_each_varint_delta(fd.fwd[id], [&](std::uint32_t t) {
                auto& td = fd.terms[t];
                auto it = lower_bound(td.postings, id);
                const std::uint32_t tf = it->tf;
                td.postings.erase(it);
                auto sp = std::lower_bound(td.skyline.begin(), td.skyline.end(), tf,
                                           [](const detail::bm25::SkyPoint& q, std::uint32_t v) { return q.tf < v; });
                if (sp != td.skyline.end() && sp->tf == tf && sp->len == len) {
                    // The point may go: rebuild from the remaining postings (this one erased).
                    td.skyline.clear();
                    for (const auto& p : td.postings) td.add_point({p.tf, fd.len[p.doc]});
                }
            });
            fd.fwd[id] = {};
            fd.len[id] = 0;
            fd.total -= len;
            --fd.docs;
        }
        if (any) --fielded_docs_;
    }

    static void check_field_weights(const FieldWeights& w, const char* where) {
        auto check = [&](const char* field, double v) {
            if (!std::isfinite(v) || v < 0.0)
                throw InvalidArgument(std::string(where) + ": field weight " + field + " is " + std::to_string(v) +
                                      " (must be finite and >= 0)");
        };
        check("title", w.title);
        check("headings", w.headings);
        check("path", w.path);
    }

    struct Plan {
        double k1 = 0, b = 0, delta = 0, avgdl = 1;
        double one_minus_b = 1, b_over_avgdl = 0;  // L(d) = (1 - b) + (b / avgdl) |d|
        const DocSet* allowed = nullptr;
        std::vector<detail::bm25::QueryTerm> terms;
        [[nodiscard]] bool allows(DocId d) const noexcept { return allowed == nullptr || allowed->test(d); }
        [[nodiscard]] double norm(std::uint32_t len) const noexcept {
            return one_minus_b + b_over_avgdl * static_cast<double>(len);
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

    std::uint32_t intern(std::string_view term) { return intern(term, detail::bm25::TermDict::hash(term)); }
    std::uint32_t intern(std::string_view term, std::uint64_t hash) {
        const std::uint32_t id = dict_.intern(term, hash);
        if (id == terms_.size()) terms_.emplace_back();
        return id;
    }

    void rebuild_skyline(detail::bm25::TermData& td) const {
        td.skyline.clear();
        for (const auto& p : td.postings) td.add_point({p.tf, doc_len_[p.doc]});
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
            const auto tid = dict_.find(t);
            if (tid == dict_.npos || terms_[tid].postings.empty()) continue;
            auto c = std::find_if(counts.begin(), counts.end(), [&](const auto& x) { return x.first == tid; });
            if (c == counts.end()) counts.emplace_back(tid, 1);
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

    // --- fielded search (BM25F, see "Fields") -------------------------------------------

    struct FieldedPlan {
        double k1 = 0, delta = 0;
        std::array<double, 4> w{1.0, 0.0, 0.0, 0.0};       // field weights, body first
        std::array<double, 4> one_minus_b{1.0, 1.0, 1.0, 1.0};
        std::array<double, 4> b_over_avg{0.0, 0.0, 0.0, 0.0};
        const DocSet* allowed = nullptr;
        std::vector<detail::bm25::FieldedTerm> terms;
        [[nodiscard]] bool allows(DocId d) const noexcept { return allowed == nullptr || allowed->test(d); }
        [[nodiscard]] double norm(std::size_t f, std::uint32_t len) const noexcept {
            return one_minus_b[f] + b_over_avg[f] * static_cast<double>(len);
        }
    };

    /// The length of field f (0 the body) of document d.
    [[nodiscard]] std::uint32_t flen(std::size_t f, DocId d) const noexcept {
        return f == 0 ? doc_len_[d] : fields_[f - 1].length(d);
    }

    [[nodiscard]] std::vector<Hit> search_fielded(const Plan& base, const FieldWeights& fw,
                                                  std::span<const std::string> query_terms, std::size_t k,
                                                  BM25Strategy strategy, BM25SearchStats* stats) const {
        FieldedPlan plan;
        plan.k1 = base.k1;
        plan.delta = base.delta;
        plan.allowed = base.allowed;
        plan.w = {1.0, fw.title, fw.headings, fw.path};
        plan.one_minus_b[0] = base.one_minus_b;
        plan.b_over_avg[0] = base.b_over_avgdl;
        for (std::size_t f = 1; f < 4; ++f) {
            const auto& fd = fields_[f - 1];
            const double avg = fd.docs == 0 ? 1.0 : static_cast<double>(fd.total) / static_cast<double>(fd.docs);
            plan.one_minus_b[f] = 1.0 - params_.field_b;
            plan.b_over_avg[f] = params_.field_b / avg;
        }
        // The distinct query terms known in any field, in order of first occurrence.
        std::vector<std::pair<std::uint32_t, std::uint32_t>> counts;  // term id, qtf
        for (const auto& t : query_terms) {
            const auto tid = dict_.find(t);
            if (tid == dict_.npos) continue;
            auto c = std::find_if(counts.begin(), counts.end(), [&](const auto& x) { return x.first == tid; });
            if (c == counts.end()) counts.emplace_back(tid, 1);
            else ++c->second;
        }
        const auto n = static_cast<double>(live_count_);
        const double absent = bm25_tf_part_absent(params_.variant, plan.k1, plan.delta);
        for (const auto& [tid, qtf] : counts) {
            std::array<const detail::bm25::TermData*, 4> lists{};
            if (!terms_[tid].postings.empty()) lists[0] = &terms_[tid];
            for (std::size_t f = 1; f < 4; ++f) lists[f] = fields_[f - 1].term(tid);
            // df: documents with the term in any field (a merge of the lists).
            std::array<const detail::bm25::Posting*, 4> cur{}, end{};
            for (std::size_t f = 0; f < 4; ++f)
                if (lists[f] != nullptr) {
                    cur[f] = lists[f]->postings.data();
                    end[f] = cur[f] + lists[f]->postings.size();
                }
            std::size_t df = 0;
            for (;;) {
                DocId d = std::numeric_limits<DocId>::max();
                bool any = false;
                for (std::size_t f = 0; f < 4; ++f)
                    if (cur[f] != end[f] && cur[f]->doc <= d) {
                        d = cur[f]->doc;
                        any = true;
                    }
                if (!any) break;
                ++df;
                for (std::size_t f = 0; f < 4; ++f)
                    if (cur[f] != end[f] && cur[f]->doc == d) ++cur[f];
            }
            if (df == 0) continue;
            detail::bm25::FieldedTerm ft;
            bool read = false;
            for (std::size_t f = 0; f < 4; ++f) {
                if (lists[f] == nullptr || plan.w[f] <= 0.0) continue;  // a field of weight 0 is not read
                ft.begin[f] = lists[f]->postings.data();
                ft.end[f] = ft.begin[f] + lists[f]->postings.size();
                ft.skyline[f] = &lists[f]->skyline;
                read = true;
            }
            if (!read) continue;
            double idf = bm25_idf(params_.variant, n, static_cast<double>(df));
            if (params_.variant == BM25Variant::rank_bm25_okapi && idf < 0.0) idf = params_.epsilon * okapi_mean_idf();
            ft.weight = static_cast<double>(qtf) * idf;
            ft.zero = ft.weight * absent;
            plan.terms.push_back(ft);
        }
        if (plan.terms.empty()) return {};
        const bool all = scores_every_document();
        const bool nonnegative = std::all_of(plan.terms.begin(), plan.terms.end(),
                                             [](const detail::bm25::FieldedTerm& t) { return t.weight >= 0.0; });
        const bool prune = !all && nonnegative &&
                           (strategy == BM25Strategy::automatic || strategy == BM25Strategy::maxscore);
        switch (params_.variant) {
            case BM25Variant::lucene: return run_fielded<BM25Variant::lucene>(plan, k, prune, stats);
            case BM25Variant::robertson: return run_fielded<BM25Variant::robertson>(plan, k, prune, stats);
            case BM25Variant::atire: return run_fielded<BM25Variant::atire>(plan, k, prune, stats);
            case BM25Variant::bm25l: return run_fielded<BM25Variant::bm25l>(plan, k, prune, stats);
            case BM25Variant::bm25plus: return run_fielded<BM25Variant::bm25plus>(plan, k, prune, stats);
            case BM25Variant::rank_bm25_okapi: return run_fielded<BM25Variant::rank_bm25_okapi>(plan, k, prune, stats);
            case BM25Variant::rank_bm25_l: return run_fielded<BM25Variant::rank_bm25_l>(plan, k, prune, stats);
            case BM25Variant::rank_bm25_plus: return run_fielded<BM25Variant::rank_bm25_plus>(plan, k, prune, stats);
        }
        return {};
    }

    /// x of term i (see "Fields"): fields in order, body first, so every path sums alike.
    [[nodiscard]] static double field_x(const FieldedPlan& plan, const std::uint32_t* tfs,
                                        const std::array<double, 4>& norms) noexcept {
        double x = 0.0;
        for (std::size_t f = 0; f < 4; ++f)
            if (tfs[f] != 0) x += plan.w[f] * static_cast<double>(tfs[f]) / norms[f];
        return x;
    }

    [[nodiscard]] std::array<double, 4> field_norms(const FieldedPlan& plan, DocId d) const noexcept {
        std::array<double, 4> norms{};
        for (std::size_t f = 0; f < 4; ++f) norms[f] = plan.norm(f, flen(f, d));
        return norms;
    }

    /// A term's contribution: weight * tfpartF(x), or `zero` when it is absent.
    template <BM25Variant V>
    [[nodiscard]] static double field_contribution(const FieldedPlan& plan, std::size_t i, const std::uint32_t* tfs,
                                                   const std::array<double, 4>& norms) noexcept {
        const double x = field_x(plan, tfs, norms);
        const auto& t = plan.terms[i];
        return x > 0.0 ? t.weight * bm25f_tf_part<V>(x, plan.k1, plan.delta) : t.zero;
    }

    /// The score of document d given tfs (4 per query term, body first).
    template <BM25Variant V>
    [[nodiscard]] double score_fielded(const FieldedPlan& plan, const std::uint32_t* tfs, DocId d) const noexcept {
        const auto norms = field_norms(plan, d);
        double s = 0.0;
        for (std::size_t i = 0; i < plan.terms.size(); ++i) s += field_contribution<V>(plan, i, tfs + 4 * i, norms);
        return s;
    }

    template <BM25Variant V>
    [[nodiscard]] std::vector<Hit> run_fielded(const FieldedPlan& plan, std::size_t k, bool prune,
                                               BM25SearchStats* stats) const {
        detail::bm25::TopK top(k);
        const std::size_t scored = prune ? maxscore_fielded<V>(plan, top) : exhaustive_fielded<V>(plan, top, k);
        if (stats) *stats = {scored, prune ? BM25Algorithm::maxscore : BM25Algorithm::exhaustive};
        return top.take();
    }

    /// The smallest document at or after the cursors of term i (max() when none).
    static DocId min_doc(const detail::bm25::FieldedTerm& t, const std::array<const detail::bm25::Posting*, 4>& cur) noexcept {
        DocId d = std::numeric_limits<DocId>::max();
        for (std::size_t f = 0; f < 4; ++f)
            if (cur[f] != t.end[f] && cur[f]->doc < d) d = cur[f]->doc;
        return d;
    }

    /// Reads term i's frequencies in d into tfs[0..4) and moves its cursors past d;
    /// true when d has the term in a read field.
    static bool take_doc(const detail::bm25::FieldedTerm& t, std::array<const detail::bm25::Posting*, 4>& cur, DocId d,
                         std::uint32_t* tfs) noexcept {
        bool any = false;
        for (std::size_t f = 0; f < 4; ++f) {
            if (cur[f] != t.end[f] && cur[f]->doc == d) {
                tfs[f] = cur[f]->tf;
                ++cur[f];
                any = true;
            } else {
                tfs[f] = 0;
            }
        }
        return any;
    }

    template <BM25Variant V>
    std::size_t exhaustive_fielded(const FieldedPlan& plan, detail::bm25::TopK& top, std::size_t k) const {
        const std::size_t m = plan.terms.size();
        std::vector<std::array<const detail::bm25::Posting*, 4>> cur(m);
        std::vector<std::uint32_t> tfs(4 * m);
        for (std::size_t i = 0; i < m; ++i) cur[i] = plan.terms[i].begin;
        const bool all = scores_every_document();
        std::vector<std::uint8_t> matched(all ? live_.size() : 0, 0);
        std::size_t scored = 0;
        for (;;) {
            DocId d = std::numeric_limits<DocId>::max();
            for (std::size_t i = 0; i < m; ++i) d = std::min(d, min_doc(plan.terms[i], cur[i]));
            if (d == std::numeric_limits<DocId>::max()) break;
            for (std::size_t i = 0; i < m; ++i) take_doc(plan.terms[i], cur[i], d, &tfs[4 * i]);
            if (all) matched[d] = 1;
            if (!plan.allows(d)) continue;
            ++scored;
            top.push({static_cast<float>(score_fielded<V>(plan, tfs.data(), d)), d});
        }
        if (all) {
            std::fill(tfs.begin(), tfs.end(), 0U);
            double base = 0.0;
            for (const auto& t : plan.terms) base += t.zero;
            std::size_t added = 0;
            for (std::size_t d = 0; d < live_.size() && added < k; ++d) {
                if (!live_[d] || matched[d] || !plan.allows(static_cast<DocId>(d))) continue;
                ++added;
                ++scored;
                top.push({static_cast<float>(base), static_cast<DocId>(d)});
            }
        }
        return scored;
    }

    /// MaxScore over fielded terms: as `maxscore`, a term's excess being the bound of
    /// its contribution minus `zero`; the bound is weight * tfpartF(sum over read fields
    /// of w_f * the largest tf / L_f on the field's skyline).
    template <BM25Variant V>
    std::size_t maxscore_fielded(const FieldedPlan& plan, detail::bm25::TopK& top) const {
        const std::size_t m = plan.terms.size();
        std::vector<double> excess(m);
        double base = 0.0, magnitude = 0.0;
        for (std::size_t i = 0; i < m; ++i) {
            const auto& t = plan.terms[i];
            double xmax = 0.0;
            for (std::size_t f = 0; f < 4; ++f) {
                if (t.skyline[f] == nullptr) continue;
                double best = 0.0;
                for (const auto& p : *t.skyline[f])
                    best = std::max(best, static_cast<double>(p.tf) / plan.norm(f, p.len));
                xmax += plan.w[f] * best;
            }
            const double ub = std::max(t.zero, t.weight * bm25f_tf_part<V>(xmax, plan.k1, plan.delta));
            excess[i] = ub - t.zero;
            base += t.zero;
            magnitude += std::abs(ub) + std::abs(t.zero);
        }
        const double slack = 1e-9 * magnitude + 1e-300;
        std::vector<std::size_t> order(m);
        for (std::size_t i = 0; i < m; ++i) order[i] = i;
        std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return excess[a] < excess[b]; });
        std::vector<double> prefix(m + 1, 0.0);
        for (std::size_t j = 0; j < m; ++j) prefix[j + 1] = prefix[j] + excess[order[j]];

        std::vector<std::array<const detail::bm25::Posting*, 4>> cur(m);
        std::vector<std::uint32_t> tfs(4 * m);
        for (std::size_t i = 0; i < m; ++i) cur[i] = plan.terms[i].begin;
        // Moves the cursors of term i to d and reads its frequencies; true when present.
        auto probe = [&](std::size_t i, DocId d) {
            const auto& t = plan.terms[i];
            for (std::size_t f = 0; f < 4; ++f) cur[i][f] = detail::bm25::next_geq(cur[i][f], t.end[f], d);
            return take_doc(t, cur[i], d, &tfs[4 * i]);
        };
        std::size_t ne = 0;
        std::size_t scored = 0;
        for (;;) {
            if (top.full())
                while (ne < m && base + prefix[ne + 1] + slack <= top.threshold()) ++ne;
            if (ne == m) break;
            DocId d = std::numeric_limits<DocId>::max();
            for (std::size_t j = ne; j < m; ++j) d = std::min(d, min_doc(plan.terms[order[j]], cur[order[j]]));
            if (d == std::numeric_limits<DocId>::max()) break;
            std::fill(tfs.begin(), tfs.end(), 0U);
            for (std::size_t j = ne; j < m; ++j) take_doc(plan.terms[order[j]], cur[order[j]], d, &tfs[4 * order[j]]);
            if (!plan.allows(d)) continue;
            if (top.full()) {
                const double theta = top.threshold();
                const auto norms = field_norms(plan, d);
                double bound = base + prefix[ne];
                for (std::size_t j = ne; j < m; ++j) {
                    const std::size_t i = order[j];
                    bound += field_contribution<V>(plan, i, &tfs[4 * i], norms) - plan.terms[i].zero;
                }
                bool skip = false;
                for (std::size_t j = ne; j-- > 0;) {
                    if (bound + slack <= theta) {
                        skip = true;
                        break;
                    }
                    const std::size_t i = order[j];
                    bound -= excess[i];
                    if (probe(i, d)) bound += field_contribution<V>(plan, i, &tfs[4 * i], norms) - plan.terms[i].zero;
                }
                if (skip || bound + slack <= theta) continue;
            } else {
                for (std::size_t j = 0; j < ne; ++j) probe(order[j], d);
            }
            ++scored;
            top.push({static_cast<float>(score_fielded<V>(plan, tfs.data(), d)), d});
        }
        return scored;
    }

    /// `automatic` accumulates only up to this many document slots (1 MiB of
    /// accumulators): beyond, allocating and clearing them costs more than MaxScore.
    static constexpr std::size_t accumulate_max_slots = std::size_t{1} << 17;

    /// MaxScore needs non-negative term weights and no score for non-matching
    /// documents; accumulation needs a zero absent-term part (the per-document sum must
    /// skip absent terms to equal the document-at-a-time sum bit for bit) and no score
    /// for non-matching documents. Accumulation wins when the query's lists cover a
    /// good part of a collection small enough for its accumulators to stay in cache
    /// (its cost is the postings plus one slot per document).
    [[nodiscard]] BM25Algorithm choose(const Plan& plan, BM25Strategy strategy) const {
        const bool all = scores_every_document();
        const bool zero_free = std::all_of(plan.terms.begin(), plan.terms.end(),
                                           [](const detail::bm25::QueryTerm& t) { return t.zero == 0.0; });
        const bool nonnegative = std::all_of(plan.terms.begin(), plan.terms.end(),
                                             [](const detail::bm25::QueryTerm& t) { return t.weight >= 0.0; });
        const bool can_accumulate = !all && zero_free;
        const bool can_prune = !all && nonnegative;
        switch (strategy) {
            case BM25Strategy::exhaustive: return BM25Algorithm::exhaustive;
            case BM25Strategy::accumulate: return can_accumulate ? BM25Algorithm::accumulate : BM25Algorithm::exhaustive;
            case BM25Strategy::maxscore: return can_prune ? BM25Algorithm::maxscore : BM25Algorithm::exhaustive;
            case BM25Strategy::automatic: break;
        }
        std::size_t postings = 0;
        for (const auto& t : plan.terms) postings += static_cast<std::size_t>(t.end - t.begin);
        const bool cache_sized = live_.size() <= accumulate_max_slots;
        if (can_accumulate && ((cache_sized && postings * 8 >= live_.size()) || !can_prune))
            return BM25Algorithm::accumulate;
        return can_prune ? BM25Algorithm::maxscore : BM25Algorithm::exhaustive;
    }

    template <BM25Variant V>
    [[nodiscard]] std::vector<Hit> run(const Plan& plan, std::size_t k, BM25Algorithm algorithm,
                                       BM25SearchStats* stats) const {
        detail::bm25::TopK top(k);
        std::size_t scored = 0;
        switch (algorithm) {
            case BM25Algorithm::exhaustive: scored = exhaustive<V>(plan, top, k); break;
            case BM25Algorithm::accumulate: scored = accumulate<V>(plan, top); break;
            case BM25Algorithm::maxscore: scored = maxscore<V>(plan, top); break;
        }
        if (stats) *stats = {scored, algorithm};
        return top.take();
    }

    /// Term at a time: each posting adds weight * tfpart to its document's accumulator,
    /// terms in query order, so each sum is the document-at-a-time sum (absent terms
    /// add exactly 0 there).
    template <BM25Variant V>
    std::size_t accumulate(const Plan& plan, detail::bm25::TopK& top) const {
        std::vector<double> acc(live_.size(), 0.0);
        std::vector<std::uint64_t> seen((live_.size() + 63) / 64, 0);  // documents touched
        for (const auto& t : plan.terms) {
            for (const auto* p = t.begin; p != t.end; ++p) {
                const DocId d = p->doc;
                if (!plan.allows(d)) continue;
                seen[d >> 6] |= std::uint64_t{1} << (d & 63);
                acc[d] += t.weight * bm25_tf_part<V>(static_cast<double>(p->tf), plan.norm(doc_len_[d]), plan.k1, plan.delta);
            }
        }
        std::size_t touched = 0;
        for (std::size_t w = 0; w < seen.size(); ++w) {
            for (std::uint64_t bits = seen[w]; bits != 0; bits &= bits - 1) {
                const auto d = static_cast<DocId>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
                ++touched;
                const auto score = static_cast<float>(acc[d]);
                // Documents come by increasing id: one scoring no more than the k-th cannot enter.
                if (top.full() && static_cast<double>(score) <= top.threshold()) continue;
                top.push({score, d});
            }
        }
        return touched;
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
    detail::bm25::TermDict dict_;
    std::vector<detail::bm25::TermData> terms_;
    std::vector<std::uint32_t> doc_len_;             // by DocId; 0 for absent slots
    std::vector<std::uint8_t> live_;                 // by DocId
    std::vector<std::vector<std::uint8_t>> doc_terms_;  // forward index: varint deltas of sorted term ids
    std::size_t live_count_ = 0;
    std::uint64_t total_len_ = 0;
    std::uint64_t posting_count_ = 0;
    std::uint64_t generation_ = 0;
    mutable detail::bm25::MeanIdfCache okapi_cache_;
    std::array<detail::bm25::FieldData, 3> fields_;  // title, headings, path (empty without fielded documents)
    std::size_t fielded_docs_ = 0;                   // live documents with a field term
};

static_assert(SearchIndex<BM25Index<WhitespaceAnalyzer>>);

}  // namespace ragpp
