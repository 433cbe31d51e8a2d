// ragpp detail: one BM25 query against a BM25Index (not API): its terms resolved to
// posting lists and weights (the cursors start at each list's begin), the length
// normalisation, and the score of one document, unfielded or BM25F. Every top-k
// algorithm (bm25_exhaustive.hpp, bm25_accumulate.hpp, bm25_maxscore.hpp) scores a
// document with these functions, summing over the query terms in query order, so they
// all compute the same double.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include <ragpp/core/bitset.hpp>
#include <ragpp/core/types.hpp>
#include <ragpp/index/bm25/scoring.hpp>
#include <ragpp/index/detail/bm25_blocks.hpp>
#include <ragpp/index/detail/bm25_postings.hpp>

namespace ragpp::detail::bm25 {

/// One distinct query term, resolved against the index.
struct QueryTerm {
    const PostingList* list;
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

/// An unfielded query: its terms, the parameters and the index's document tables.
struct Plan {
    using Cursor = ListCursor;
    static Cursor start(const QueryTerm& t) noexcept { return ListCursor(*t.list); }
    double k1 = 0, b = 0, delta = 0, avgdl = 1;
    double one_minus_b = 1, b_over_avgdl = 0;  // L(d) = (1 - b) + (b / avgdl) |d|
    const DocSet* allowed = nullptr;
    std::vector<QueryTerm> terms;
    const std::span<const std::uint32_t>* doc_len = nullptr;  // the index's, by DocId (memory or a loaded file)
    const std::span<const std::uint8_t>* live = nullptr;      // the index's, by DocId
    bool all = false;  // the variant scores every document (rank_bm25_l, rank_bm25_plus)
    [[nodiscard]] bool allows(DocId d) const noexcept { return allowed == nullptr || allowed->test(d); }
    [[nodiscard]] double norm(std::uint32_t len) const noexcept {
        return one_minus_b + b_over_avgdl * static_cast<double>(len);
    }
};

/// The score of a document given the frequency of each query term in it: the sum
/// over the query terms, in query order, so every path computes the same double.
template <BM25Variant V>
[[nodiscard]] double score_doc(const Plan& plan, const std::uint32_t* tfs, std::uint32_t len) noexcept {
    const double norm = plan.norm(len);
    double s = 0.0;
    for (std::size_t i = 0; i < plan.terms.size(); ++i) {
        const auto& t = plan.terms[i];
        s += tfs[i] != 0 ? t.weight * bm25_tf_part<V>(static_cast<double>(tfs[i]), norm, plan.k1, plan.delta) : t.zero;
    }
    return s;
}

/// A BM25F query (see "Fields" in index/bm25/scoring.hpp).
struct FieldedPlan {
    using Cursor = std::array<const Posting*, 4>;
    static Cursor start(const FieldedTerm& t) noexcept { return t.begin; }
    double k1 = 0, delta = 0;
    std::array<double, 4> w{1.0, 0.0, 0.0, 0.0};       // field weights, body first
    std::array<double, 4> one_minus_b{1.0, 1.0, 1.0, 1.0};
    std::array<double, 4> b_over_avg{0.0, 0.0, 0.0, 0.0};
    const DocSet* allowed = nullptr;
    std::vector<FieldedTerm> terms;
    const std::span<const std::uint32_t>* doc_len = nullptr;  // the index's, by DocId (memory or a loaded file)
    const std::span<const std::uint8_t>* live = nullptr;      // the index's, by DocId
    std::array<std::span<const std::uint32_t>, 3> field_len{};  // title, headings, path lengths by DocId (may be shorter)
    bool all = false;
    [[nodiscard]] bool allows(DocId d) const noexcept { return allowed == nullptr || allowed->test(d); }
    [[nodiscard]] double norm(std::size_t f, std::uint32_t len) const noexcept {
        return one_minus_b[f] + b_over_avg[f] * static_cast<double>(len);
    }
    /// The length of field f (0 the body) of document d.
    [[nodiscard]] std::uint32_t len(std::size_t f, DocId d) const noexcept {
        return f == 0 ? (*doc_len)[d] : d < field_len[f - 1].size() ? field_len[f - 1][d] : 0;
    }
};

/// x of term i (see "Fields"): fields in order, body first, so every path sums alike.
[[nodiscard]] inline double field_x(const FieldedPlan& plan, const std::uint32_t* tfs,
                                   const std::array<double, 4>& norms) noexcept {
    double x = 0.0;
    for (std::size_t f = 0; f < 4; ++f)
        if (tfs[f] != 0) x += plan.w[f] * static_cast<double>(tfs[f]) / norms[f];
    return x;
}

[[nodiscard]] inline std::array<double, 4> field_norms(const FieldedPlan& plan, DocId d) noexcept {
    std::array<double, 4> norms{};
    for (std::size_t f = 0; f < 4; ++f) norms[f] = plan.norm(f, plan.len(f, d));
    return norms;
}

/// A term's contribution: weight * tfpartF(x), or `zero` when it is absent.
template <BM25Variant V>
[[nodiscard]] double field_contribution(const FieldedPlan& plan, std::size_t i, const std::uint32_t* tfs,
                                        const std::array<double, 4>& norms) noexcept {
    const double x = field_x(plan, tfs, norms);
    const auto& t = plan.terms[i];
    return x > 0.0 ? t.weight * bm25f_tf_part<V>(x, plan.k1, plan.delta) : t.zero;
}

/// The score of document d given tfs (4 per query term, body first).
template <BM25Variant V>
[[nodiscard]] double score_fielded(const FieldedPlan& plan, const std::uint32_t* tfs, DocId d) noexcept {
    const auto norms = field_norms(plan, d);
    double s = 0.0;
    for (std::size_t i = 0; i < plan.terms.size(); ++i) s += field_contribution<V>(plan, i, tfs + 4 * i, norms);
    return s;
}

/// The cursors of a document-at-a-time scan, one per query term at the start of its
/// list (or lists, one per field), and the frequencies read at the current document,
/// `stride` per term.
template <class P>
struct Cursors {
    std::vector<typename P::Cursor> cur;
    std::vector<std::uint32_t> tfs;
    Cursors(const P& plan, std::size_t stride) : tfs(stride * plan.terms.size()) {
        cur.reserve(plan.terms.size());
        for (const auto& t : plan.terms) cur.push_back(P::start(t));
    }
};

/// The smallest document at or after the cursors of term i (max() when none).
inline DocId min_doc(const FieldedTerm& t, const std::array<const Posting*, 4>& cur) noexcept {
    DocId d = std::numeric_limits<DocId>::max();
    for (std::size_t f = 0; f < 4; ++f)
        if (cur[f] != t.end[f] && cur[f]->doc < d) d = cur[f]->doc;
    return d;
}

/// Reads term i's frequencies in d into tfs[0..4) and moves its cursors past d;
/// true when d has the term in a read field.
inline bool take_doc(const FieldedTerm& t, std::array<const Posting*, 4>& cur, DocId d,
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

}  // namespace ragpp::detail::bm25
