// ragpp detail: the exhaustive BM25 top k (BM25Algorithm::exhaustive), document at a
// time over every matching document, unfielded and BM25F: the oracle every other
// algorithm is tested against (PISA's ranked_or).
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include <ragpp/detail/topk.hpp>
#include <ragpp/index/bm25/scoring.hpp>
#include <ragpp/index/detail/bm25_plan.hpp>

namespace ragpp::detail::bm25 {

/// rank_bm25 scores every document: the live, allowed documents without any query
/// term (not `matched`) all get `score`, the sum of the absent-term parts; the k
/// smallest such ids can enter. Returns how many were offered.
template <class P>
std::size_t push_unmatched(const P& plan, const std::vector<std::uint8_t>& matched, float score, std::size_t k, TopK& top) {
    std::size_t added = 0;
    for (std::size_t d = 0; d < plan.live->size() && added < k; ++d) {
        if (!(*plan.live)[d] || matched[d] || !plan.allows(static_cast<DocId>(d))) continue;
        ++added;
        top.push(static_cast<DocId>(d), score);
    }
    return added;
}

/// The next document of a scan, the smallest at the cursors; false when every list is done.
inline bool next_doc(const Plan&, const std::vector<ListCursor>& cur, DocId& d) noexcept {
    d = std::numeric_limits<DocId>::max();
    bool any = false;
    for (const auto& c : cur)
        if (!c.done() && c.doc() <= d) {
            d = c.doc();
            any = true;
        }
    return any;
}
inline bool next_doc(const FieldedPlan& plan, const std::vector<std::array<const Posting*, 4>>& cur, DocId& d) noexcept {
    d = std::numeric_limits<DocId>::max();
    for (std::size_t i = 0; i < cur.size(); ++i) d = std::min(d, min_doc(plan.terms[i], cur[i]));
    return d != std::numeric_limits<DocId>::max();
}

/// Reads the frequencies of every term in d (0 when absent) and moves the cursors past d.
inline void read_doc(const Plan&, std::vector<ListCursor>& cur, DocId d, std::vector<std::uint32_t>& tfs) noexcept {
    for (std::size_t i = 0; i < cur.size(); ++i) {
        if (!cur[i].done() && cur[i].doc() == d) {
            tfs[i] = cur[i].tf();
            cur[i].next();
        } else {
            tfs[i] = 0;
        }
    }
}
inline void read_doc(const FieldedPlan& plan, std::vector<std::array<const Posting*, 4>>& cur, DocId d,
                     std::vector<std::uint32_t>& tfs) noexcept {
    for (std::size_t i = 0; i < cur.size(); ++i) take_doc(plan.terms[i], cur[i], d, &tfs[4 * i]);
}

template <BM25Variant V>
[[nodiscard]] double score_at(const Plan& plan, const std::uint32_t* tfs, DocId d) noexcept {
    return score_doc<V>(plan, tfs, (*plan.doc_len)[d]);
}
template <BM25Variant V>
[[nodiscard]] double score_at(const FieldedPlan& plan, const std::uint32_t* tfs, DocId d) noexcept {
    return score_fielded<V>(plan, tfs, d);
}

/// Document at a time over every matching document, unfielded (Plan) or BM25F
/// (FieldedPlan); rank_bm25_l / rank_bm25_plus then offer the unmatched documents too.
template <BM25Variant V, class P>
std::size_t exhaustive(const P& plan, TopK& top, std::size_t k) {
    Cursors scan(plan, std::is_same_v<P, FieldedPlan> ? 4 : 1);
    std::vector<std::uint8_t> matched(plan.all ? plan.live->size() : 0, 0);
    std::size_t scored = 0;
    for (DocId d = 0; next_doc(plan, scan.cur, d);) {
        read_doc(plan, scan.cur, d, scan.tfs);
        if (plan.all) matched[d] = 1;
        if (!plan.allows(d)) continue;
        ++scored;
        top.push(d, static_cast<float>(score_at<V>(plan, scan.tfs.data(), d)));
    }
    if (plan.all) {
        // The score of a document without any query term: the sum of the absent-term parts.
        double base = 0.0;
        for (const auto& t : plan.terms) base += t.zero;
        scored += push_unmatched(plan, matched, static_cast<float>(base), k, top);
    }
    return scored;
}

}  // namespace ragpp::detail::bm25
