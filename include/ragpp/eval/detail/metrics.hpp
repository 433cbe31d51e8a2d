// ragpp detail: the argument checks, judgment look-ups and set averaging behind eval/metrics.hpp.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <unordered_set>

#include <ragpp/core/error.hpp>
#include <ragpp/eval/metric_types.hpp>

namespace ragpp {

namespace detail {
template <class Id>
void check_ranking(std::span<const Id> ranking, const char* where) {
    std::unordered_set<Id> seen;
    seen.reserve(ranking.size());
    for (std::size_t i = 0; i < ranking.size(); ++i)
        if (!seen.insert(ranking[i]).second)
            throw InvalidArgument(std::string(where) + ": the ranking repeats an id at rank " + std::to_string(i + 1));
}
template <class Id>
std::size_t relevant_count(const Judgments<Id>& judgments) {
    return static_cast<std::size_t>(
        std::count_if(judgments.begin(), judgments.end(), [](const auto& kv) { return kv.second > 0; }));
}
template <class Id>
double grade_of(const Judgments<Id>& judgments, const Id& id) {
    auto it = judgments.find(id);
    return it == judgments.end() ? 0.0 : it->second;
}
inline void check_k(std::size_t k, const char* where) {
    if (k == 0) throw InvalidArgument(std::string(where) + ": k must be >= 1");
}
}  // namespace detail

namespace detail {
/// What a per-question metric counts over: the relevant documents, and the ranks within
/// the cut-off (the top min(k, |ranking|)).
struct MetricCut {
    std::size_t relevant = 0;
    std::size_t ranks = 0;
};
/// The start of every per-question metric: k >= 1 and no repeated id (InvalidArgument
/// naming `where`), then nullopt when nothing is relevant (the metric has no value).
template <class Id>
std::optional<MetricCut> cut_at_k(std::span<const Id> ranking, const Judgments<Id>& judgments, std::size_t k, const char* where) {
    check_k(k, where);
    check_ranking(ranking, where);
    const std::size_t rel = relevant_count(judgments);
    if (rel == 0) return std::nullopt;
    return MetricCut{rel, std::min(k, ranking.size())};
}
/// The relevant documents among the first `ranks` of `ranking`.
template <class Id>
std::size_t relevant_in_top(std::span<const Id> ranking, const Judgments<Id>& judgments, std::size_t ranks) {
    std::size_t found = 0;
    for (std::size_t r = 0; r < ranks; ++r) found += grade_of(judgments, ranking[r]) > 0 ? 1 : 0;
    return found;
}
/// The 1-based rank of the first relevant document among the first `ranks`, or nullopt.
template <class Id>
std::optional<std::size_t> first_relevant_rank(std::span<const Id> ranking, const Judgments<Id>& judgments, std::size_t ranks) {
    for (std::size_t r = 0; r < ranks; ++r)
        if (grade_of(judgments, ranking[r]) > 0) return r + 1;
    return std::nullopt;
}
}  // namespace detail

namespace detail {
template <class Id, class F>
MetricSummary summarize(std::span<const RankedQuestion<Id>> set, F&& per_question) {
    MetricSummary s;
    double sum = 0.0;
    for (const auto& q : set) {
        const std::optional<double> v = per_question(q);
        if (!v) {
            ++s.without_relevant;
            continue;
        }
        sum += *v;
        ++s.questions;
    }
    s.mean = s.questions ? sum / static_cast<double>(s.questions) : 0.0;
    return s;
}
}  // namespace detail

}  // namespace ragpp
