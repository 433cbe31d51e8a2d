// ragpp detail: the MaxScore BM25 top k (BM25Algorithm::maxscore; Turtle & Flood,
// "Query evaluation: strategies and optimizations", IP&M 1995), with exact per-term
// upper bounds from each list's (tf, length) skyline, unfielded and BM25F.
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

/// What MaxScore prunes with. A term's contribution is `zero` (absent) or at most its
/// upper bound ub; its excess is ub - zero. Terms sorted by excess (order); prefix[j]
/// is the sum of the excesses of order[0..j); a document's score is at most base (the
/// sum of the zeros) plus the excesses of the terms it contains. slack is 1e-9 of the
/// magnitude of the bounds, so rounding never prunes a document that would enter.
struct MaxScoreOrder {
    std::vector<double> excess;
    double base = 0.0;
    double slack = 0.0;
    std::vector<std::size_t> order;
    std::vector<double> prefix;
};

/// The MaxScoreOrder of a plan's terms given upper_bound(term).
template <class P, class F>
[[nodiscard]] MaxScoreOrder order_by_excess(const P& plan, F&& upper_bound) {
    const std::size_t m = plan.terms.size();
    MaxScoreOrder o;
    o.excess.resize(m);
    double magnitude = 0.0;
    for (std::size_t i = 0; i < m; ++i) {
        const auto& t = plan.terms[i];
        const double ub = upper_bound(t);
        o.excess[i] = ub - t.zero;
        o.base += t.zero;
        magnitude += std::abs(ub) + std::abs(t.zero);
    }
    o.slack = 1e-9 * magnitude + 1e-300;
    o.order.resize(m);
    for (std::size_t i = 0; i < m; ++i) o.order[i] = i;
    std::sort(o.order.begin(), o.order.end(), [&](std::size_t a, std::size_t b) { return o.excess[a] < o.excess[b]; });
    o.prefix.assign(m + 1, 0.0);
    for (std::size_t j = 0; j < m; ++j) o.prefix[j + 1] = o.prefix[j] + o.excess[o.order[j]];
    return o;
}

/// MaxScore with block-max bounds. Each term's contribution is either `zero`
/// (absent) or weight * tfpart(tf, L) <= ub (the maximum over the term's skyline),
/// so a document's score is at most base + the sum of the excesses (ub - zero) of
/// the terms it contains, base = sum of zero. Terms sorted by excess; the shortest
/// prefix whose excesses (plus base) cannot beat the k-th score is non-essential:
/// candidates come from the essential lists only. A candidate's bound then uses, for
/// each non-essential term, the excess of the block that may hold it (its max tf and
/// min length, bm25_blocks.hpp; 0 when no block can hold it), found without decoding:
/// a candidate whose block bounds cannot enter the top k is dropped before any of
/// those blocks is decoded (block-max MaxScore, as PISA's block_max_maxscore; Ding &
/// Suel, "Faster top-k document retrieval using block-max indexes", SIGIR 2011). The
/// essential terms' part of that bound is first taken at the shortest length the
/// candidate can have (the largest min length of the essential blocks holding it):
/// most candidates are dropped before their length is read, a cache miss in a table
/// of every document. The survivors are probed, largest excess first, while they can
/// still enter. Bounds carry a 1e-9 relative slack so rounding can never prune a
/// document the exhaustive scorer would keep; a document enters only with its full score.
/// How many postings ahead a scan prefetches the length of the document it will read.
inline constexpr std::uint32_t prefetch_distance = 16;

template <BM25Variant V>
std::size_t maxscore(const Plan& plan, TopK& top) {
    const std::size_t m = plan.terms.size();
    const MaxScoreOrder o = order_by_excess(plan, [&](const QueryTerm& t) {
        double ub = t.zero;
        for (const auto& p : *t.skyline)
            ub = std::max(ub, t.weight * bm25_tf_part<V>(static_cast<double>(p.tf), plan.norm(p.len), plan.k1, plan.delta));
        return ub;
    });
    const auto& [excess, base, slack, order, prefix] = o;

    Cursors scan(plan, 1);
    auto& cur = scan.cur;
    auto& tfs = scan.tfs;
    // Term i's contribution at frequency tf (> 0) and normalised length norm, minus its zero.
    auto gain = [&](std::size_t i, std::uint32_t tf, double norm) {
        const auto& t = plan.terms[i];
        return t.weight * bm25_tf_part<V>(static_cast<double>(tf), norm, plan.k1, plan.delta) - t.zero;
    };
    // The excess of the block of term i's cursor that may hold d, cached per block
    // (serial); -1 when no block can hold d (the term is absent from d).
    std::vector<double> block_excess(m, 0.0);
    std::vector<std::uint32_t> block_serial(m, 0);
    std::vector<double> probe_excess(m, 0.0);
    auto excess_at = [&](std::size_t i, DocId d) {  // (o.excess: clang 14 captures no structured binding)
        auto& c = cur[i];
        if (!c.shallow(d)) return -1.0;
        if (c.in_tail()) return o.excess[i];
        if (block_serial[i] != c.serial()) {
            const auto& h = c.block();
            block_excess[i] = std::min(o.excess[i], std::max(0.0, gain(i, h.max_tf, plan.norm(h.min_len))));
            block_serial[i] = c.serial();
        }
        return block_excess[i];
    };
    std::size_t ne = 0;  // order[0..ne) are non-essential
    std::size_t scored = 0;
    for (;;) {
        if (top.full())
            while (ne < m && base + prefix[ne + 1] + slack <= top.threshold()) ++ne;
        if (ne == m) break;
        DocId d = std::numeric_limits<DocId>::max();
        bool any = false;
        for (std::size_t j = ne; j < m; ++j) {
            const auto& c = cur[order[j]];
            if (!c.done() && c.doc() <= d) {
                d = c.doc();
                any = true;
            }
        }
        if (!any) break;
        std::uint32_t shortest = 0;  // a lower bound of d's length: its blocks' min length
        for (std::size_t j = 0; j < m; ++j) {
            const std::size_t i = order[j];
            auto& c = cur[i];
            tfs[i] = 0;
            if (j >= ne && !c.done() && c.doc() == d) {
                tfs[i] = c.tf();
                if (!c.in_tail()) shortest = std::max(shortest, c.block().min_len);
                prefetch(plan.doc_len->data() + c.ahead(prefetch_distance));
                c.next();
            }
        }
        if (!plan.allows(d)) continue;
        if (top.full()) {
            const double theta = top.threshold();
            double bound = base;
            for (std::size_t j = 0; j < ne; ++j) {
                const std::size_t i = order[j];
                probe_excess[i] = excess_at(i, d);
                bound += std::max(0.0, probe_excess[i]);
            }
            double early = bound;
            const double shortest_norm = plan.norm(shortest);
            for (std::size_t j = ne; j < m; ++j)
                if (tfs[order[j]] != 0) early += gain(order[j], tfs[order[j]], shortest_norm);
            if (early + slack <= theta) continue;
            const double norm = plan.norm((*plan.doc_len)[d]);
            for (std::size_t j = ne; j < m; ++j)
                if (tfs[order[j]] != 0) bound += gain(order[j], tfs[order[j]], norm);
            bool skip = false;
            for (std::size_t j = ne; j-- > 0;) {
                if (bound + slack <= theta) {
                    skip = true;
                    break;
                }
                const std::size_t i = order[j];
                if (probe_excess[i] < 0.0) continue;  // absent from d: tfs[i] stays 0
                bound -= probe_excess[i];
                cur[i].next_geq(d);
                if (!cur[i].done() && cur[i].doc() == d) {
                    tfs[i] = cur[i].tf();
                    bound += gain(i, tfs[i], norm);
                }
            }
            if (skip || bound + slack <= theta) continue;
        } else {
            for (std::size_t j = 0; j < ne; ++j) {
                const std::size_t i = order[j];
                cur[i].next_geq(d);
                if (!cur[i].done() && cur[i].doc() == d) tfs[i] = cur[i].tf();
            }
        }
        ++scored;
        top.push(d, static_cast<float>(score_doc<V>(plan, tfs.data(), (*plan.doc_len)[d])));
    }
    return scored;
}

/// MaxScore over fielded terms: as `maxscore`, a term's excess being the bound of
/// its contribution minus `zero`; the bound is weight * tfpartF(sum over read fields
/// of w_f * the largest tf / L_f on the field's skyline).
template <BM25Variant V>
std::size_t maxscore_fielded(const FieldedPlan& plan, TopK& top) {
    const std::size_t m = plan.terms.size();
    const MaxScoreOrder o = order_by_excess(plan, [&](const FieldedTerm& t) {
        double xmax = 0.0;
        for (std::size_t f = 0; f < 4; ++f) {
            if (t.skyline[f] == nullptr) continue;
            double best = 0.0;
            for (const auto& p : *t.skyline[f])
                best = std::max(best, static_cast<double>(p.tf) / plan.norm(f, p.len));
            xmax += plan.w[f] * best;
        }
        return std::max(t.zero, t.weight * bm25f_tf_part<V>(xmax, plan.k1, plan.delta));
    });
    const auto& [excess, base, slack, order, prefix] = o;

    Cursors scan(plan, 4);
    auto& cur = scan.cur;
    auto& tfs = scan.tfs;
    // Moves the cursors of term i to d and reads its frequencies; true when present.
    auto probe = [&](std::size_t i, DocId d) {
        const auto& t = plan.terms[i];
        for (std::size_t f = 0; f < 4; ++f) cur[i][f] = next_geq(cur[i][f], t.end[f], d);
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
        top.push(d, static_cast<float>(score_fielded<V>(plan, tfs.data(), d)));
    }
    return scored;
}

}  // namespace ragpp::detail::bm25
