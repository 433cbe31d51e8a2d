// ragpp detail: the exhaustive BM25 top k (BM25Algorithm::exhaustive), document at a
// time over every matching document, unfielded and BM25F: the oracle every other
// algorithm is tested against (PISA's ranked_or).
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
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

template <BM25Variant V>
std::size_t exhaustive(const Plan& plan, TopK& top, std::size_t k) {
    const std::size_t m = plan.terms.size();
    std::vector<const Posting*> cur(m);
    std::vector<std::uint32_t> tfs(m);
    for (std::size_t i = 0; i < m; ++i) cur[i] = plan.terms[i].begin;
    const bool all = plan.all;
    std::vector<std::uint8_t> matched(all ? plan.live->size() : 0, 0);
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
        top.push(d, static_cast<float>(score_doc<V>(plan, tfs.data(), (*plan.doc_len)[d])));
    }
    if (all) {
        // rank_bm25 scores every document: those without any query term all get
        // the sum of the absent-term parts; the k smallest such ids can enter.
        std::fill(tfs.begin(), tfs.end(), 0U);
        scored += push_unmatched(plan, matched, static_cast<float>(score_doc<V>(plan, tfs.data(), 1)), k, top);
    }
    return scored;
}

template <BM25Variant V>
std::size_t exhaustive_fielded(const FieldedPlan& plan, TopK& top, std::size_t k) {
    const std::size_t m = plan.terms.size();
    std::vector<std::array<const Posting*, 4>> cur(m);
    std::vector<std::uint32_t> tfs(4 * m);
    for (std::size_t i = 0; i < m; ++i) cur[i] = plan.terms[i].begin;
    const bool all = plan.all;
    std::vector<std::uint8_t> matched(all ? plan.live->size() : 0, 0);
    std::size_t scored = 0;
    for (;;) {
        DocId d = std::numeric_limits<DocId>::max();
        for (std::size_t i = 0; i < m; ++i) d = std::min(d, min_doc(plan.terms[i], cur[i]));
        if (d == std::numeric_limits<DocId>::max()) break;
        for (std::size_t i = 0; i < m; ++i) take_doc(plan.terms[i], cur[i], d, &tfs[4 * i]);
        if (all) matched[d] = 1;
        if (!plan.allows(d)) continue;
        ++scored;
        top.push(d, static_cast<float>(score_fielded<V>(plan, tfs.data(), d)));
    }
    if (all) {
        std::fill(tfs.begin(), tfs.end(), 0U);
        double base = 0.0;
        for (const auto& t : plan.terms) base += t.zero;
        scored += push_unmatched(plan, matched, static_cast<float>(base), k, top);
    }
    return scored;
}

}  // namespace ragpp::detail::bm25
