// ragpp: the BM25 scoring variants of BM25Index (index/bm25.hpp): their names, the
// index-level parameters, and each variant's idf and term-frequency part.
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
// query (BM25SearchOptions::field_weights). A field of weight 0 is not read.
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
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>
#include <ragpp/index/options.hpp>

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

/// Calls f(std::integral_constant<BM25Variant, v>{}): turns a run-time variant into
/// a compile-time one (the scoring loops are instantiated per variant).
template <class F>
decltype(auto) visit_bm25_variant(BM25Variant v, F&& f) {
    using C = BM25Variant;
    switch (v) {
        case C::lucene: return f(std::integral_constant<C, C::lucene>{});
        case C::robertson: return f(std::integral_constant<C, C::robertson>{});
        case C::atire: return f(std::integral_constant<C, C::atire>{});
        case C::bm25l: return f(std::integral_constant<C, C::bm25l>{});
        case C::bm25plus: return f(std::integral_constant<C, C::bm25plus>{});
        case C::rank_bm25_okapi: return f(std::integral_constant<C, C::rank_bm25_okapi>{});
        case C::rank_bm25_l: return f(std::integral_constant<C, C::rank_bm25_l>{});
        case C::rank_bm25_plus: break;
    }
    return f(std::integral_constant<C, C::rank_bm25_plus>{});
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


/// The idf of each variant (see the table above).
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


}  // namespace ragpp
