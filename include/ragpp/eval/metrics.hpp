// ragpp: retrieval metrics, per question and over a question set.
//
// A question's judgments map a document id to a grade; grade > 0 means relevant
// (trec_eval's default relevance level 1 for binary measures; grades are used as
// gains by nDCG). A ranking is the list of retrieved ids, best first, without repeats.
//
// Definitions (k is a cut-off; "top k" is the first min(k, |ranking|) results):
//   hit@k        1 if a relevant document is in the top k, else 0. Averaged over
//                questions it is the "hit rate" (the "rappel à k" of many RAG guides).
//   recall@k     |relevant in top k| / |relevant|                     (trec_eval recall_k)
//   precision@k  |relevant in top k| / k, k fixed even if fewer results (trec_eval P_k)
//   RR@k         1 / rank of the first relevant result within the top k, 0 if none
//                                                                      (trec_eval recip_rank)
//   nDCG@k       DCG@k / IDCG@k, DCG@k = sum_{r=1..k} grade(d_r) / log2(r + 1), the ideal
//                from the judgments sorted by grade (trec_eval ndcg_cut, Järvelin &
//                Kekäläinen 2002 with linear gains)
//   AP@k         (sum over relevant d_r in top k of precision@r) / |relevant|  (trec_eval map)
//
// A question with no relevant document has no value for any of these: the per-question
// functions return std::nullopt, and the aggregates count such questions apart
// (MetricSummary::without_relevant) instead of averaging them in as 0 or 1.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <type_traits>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <ragpp/core/error.hpp>
#include <ragpp/eval/detail/metrics.hpp>
#include <ragpp/eval/metric_types.hpp>

namespace ragpp {

// --- per question -----------------------------------------------------------------

template <class Id>
[[nodiscard]] std::optional<double> hit_at_k(std::span<const std::type_identity_t<Id>> ranking, const Judgments<Id>& judgments,
                                             std::size_t k) {
    const auto cut = detail::cut_at_k(ranking, judgments, k, "hit_at_k");
    if (!cut) return std::nullopt;
    return detail::first_relevant_rank(ranking, judgments, cut->ranks) ? 1.0 : 0.0;
}

template <class Id>
[[nodiscard]] std::optional<double> recall_at_k(std::span<const std::type_identity_t<Id>> ranking, const Judgments<Id>& judgments,
                                                std::size_t k) {
    const auto cut = detail::cut_at_k(ranking, judgments, k, "recall_at_k");
    if (!cut) return std::nullopt;
    return static_cast<double>(detail::relevant_in_top(ranking, judgments, cut->ranks)) / static_cast<double>(cut->relevant);
}

template <class Id>
[[nodiscard]] std::optional<double> precision_at_k(std::span<const std::type_identity_t<Id>> ranking, const Judgments<Id>& judgments,
                                                   std::size_t k) {
    const auto cut = detail::cut_at_k(ranking, judgments, k, "precision_at_k");
    if (!cut) return std::nullopt;
    return static_cast<double>(detail::relevant_in_top(ranking, judgments, cut->ranks)) / static_cast<double>(k);
}

/// Reciprocal rank of the first relevant result, cut at k (no_cutoff by default).
template <class Id>
[[nodiscard]] std::optional<double> reciprocal_rank(std::span<const std::type_identity_t<Id>> ranking, const Judgments<Id>& judgments,
                                                    std::size_t k = no_cutoff) {
    const auto cut = detail::cut_at_k(ranking, judgments, k, "reciprocal_rank");
    if (!cut) return std::nullopt;
    const auto rank = detail::first_relevant_rank(ranking, judgments, cut->ranks);
    return rank ? 1.0 / static_cast<double>(*rank) : 0.0;
}

template <class Id>
[[nodiscard]] std::optional<double> ndcg_at_k(std::span<const std::type_identity_t<Id>> ranking, const Judgments<Id>& judgments,
                                              std::size_t k) {
    const auto cut = detail::cut_at_k(ranking, judgments, k, "ndcg_at_k");
    if (!cut) return std::nullopt;
    double dcg = 0.0;
    for (std::size_t r = 0; r < cut->ranks; ++r) {
        const double g = detail::grade_of(judgments, ranking[r]);
        if (g > 0) dcg += g / std::log2(static_cast<double>(r) + 2.0);
    }
    std::vector<double> grades;
    for (const auto& [id, g] : judgments)
        if (g > 0) grades.push_back(g);
    std::sort(grades.begin(), grades.end(), std::greater<>());
    double idcg = 0.0;
    for (std::size_t r = 0; r < std::min(k, grades.size()); ++r) idcg += grades[r] / std::log2(static_cast<double>(r) + 2.0);
    return dcg / idcg;
}

/// Average precision, cut at k (no_cutoff by default, as trec_eval's map).
template <class Id>
[[nodiscard]] std::optional<double> average_precision(std::span<const std::type_identity_t<Id>> ranking, const Judgments<Id>& judgments,
                                                      std::size_t k = no_cutoff) {
    const auto cut = detail::cut_at_k(ranking, judgments, k, "average_precision");
    if (!cut) return std::nullopt;
    double sum = 0.0;
    std::size_t found = 0;
    for (std::size_t r = 0; r < cut->ranks; ++r)
        if (detail::grade_of(judgments, ranking[r]) > 0) {
            ++found;
            sum += static_cast<double>(found) / static_cast<double>(r + 1);
        }
    return sum / static_cast<double>(cut->relevant);
}

// --- over a question set ----------------------------------------------------------

#define RAGPP_DEFINE_SET_METRIC(NAME, PER_QUESTION)                                                         \
    template <class Id>                                                                                     \
    [[nodiscard]] MetricSummary NAME(std::span<const RankedQuestion<Id>> set, std::size_t k) {              \
        return detail::summarize<Id>(set, [&](const RankedQuestion<Id>& q) {                                \
            return PER_QUESTION<Id>(std::span<const Id>(q.ranking), q.judgments, k);                        \
        });                                                                                                 \
    }                                                                                                       \
    template <class Id>                                                                                     \
    [[nodiscard]] MetricSummary NAME(const std::vector<RankedQuestion<Id>>& set, std::size_t k) {           \
        return NAME<Id>(std::span<const RankedQuestion<Id>>(set), k);                                       \
    }

/// Share of questions with at least one relevant result in the top k.
RAGPP_DEFINE_SET_METRIC(hit_rate_at_k, hit_at_k)
/// Mean recall@k.
RAGPP_DEFINE_SET_METRIC(mean_recall_at_k, recall_at_k)
/// Mean precision@k.
RAGPP_DEFINE_SET_METRIC(mean_precision_at_k, precision_at_k)
/// Mean nDCG@k.
RAGPP_DEFINE_SET_METRIC(mean_ndcg_at_k, ndcg_at_k)
/// Mean reciprocal rank cut at k (pass no_cutoff for the uncut MRR).
RAGPP_DEFINE_SET_METRIC(mrr, reciprocal_rank)
/// Mean average precision cut at k (pass no_cutoff for trec_eval's map).
RAGPP_DEFINE_SET_METRIC(mean_average_precision, average_precision)

#undef RAGPP_DEFINE_SET_METRIC

/// Uncut mean reciprocal rank.
template <class Id>
[[nodiscard]] MetricSummary mrr(const std::vector<RankedQuestion<Id>>& set) {
    return mrr<Id>(set, no_cutoff);
}

}  // namespace ragpp
