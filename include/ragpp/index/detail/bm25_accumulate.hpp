// ragpp detail: the term-at-a-time BM25 top k (BM25Algorithm::accumulate), one
// accumulator per document; unfielded only.
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

/// Term at a time: each posting adds weight * tfpart to its document's accumulator,
/// terms in query order, so each sum is the document-at-a-time sum (absent terms
/// add exactly 0 there).
template <BM25Variant V>
std::size_t accumulate(const Plan& plan, TopK& top) {
    std::vector<double> acc(plan.live->size(), 0.0);
    std::vector<std::uint64_t> seen((plan.live->size() + 63) / 64, 0);  // documents touched
    for (const auto& t : plan.terms) {
        t.list->for_each([&](DocId d, std::uint32_t tf) {
            if (!plan.allows(d)) return;
            seen[d >> 6] |= std::uint64_t{1} << (d & 63);
            acc[d] += t.weight * bm25_tf_part<V>(static_cast<double>(tf), plan.norm((*plan.doc_len)[d]), plan.k1, plan.delta);
        });
    }
    std::size_t touched = 0;
    for (std::size_t w = 0; w < seen.size(); ++w) {
        for (std::uint64_t bits = seen[w]; bits != 0; bits &= bits - 1) {
            const auto d = static_cast<DocId>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
            ++touched;
            const auto score = static_cast<float>(acc[d]);
            // Documents come by increasing id: one scoring no more than the k-th cannot enter.
            if (top.full() && static_cast<double>(score) <= top.threshold()) continue;
            top.push(d, score);
        }
    }
    return touched;
}

}  // namespace ragpp::detail::bm25
