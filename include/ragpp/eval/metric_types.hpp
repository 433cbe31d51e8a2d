// ragpp: the types of the retrieval metrics of eval/metrics.hpp (Judgments, no_cutoff, RankedQuestion, MetricSummary).
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

namespace ragpp {

/// A question's graded judgments: id -> grade (> 0 relevant).
template <class Id = std::string>
using Judgments = std::unordered_map<Id, double>;

/// "No cut-off".
inline constexpr std::size_t no_cutoff = std::numeric_limits<std::size_t>::max();

/// One question's ranking and judgments.
template <class Id = std::string>
struct RankedQuestion {
    std::vector<Id> ranking;
    Judgments<Id> judgments;
};

/// A metric averaged over the questions that have at least one relevant document.
struct MetricSummary {
    /// Mean over the `questions` counted; 0 when none was.
    double mean = 0.0;
    /// Questions averaged (with at least one relevant document).
    std::size_t questions = 0;
    /// Questions left out because nothing is relevant to them (unanswerable).
    std::size_t without_relevant = 0;
};

}  // namespace ragpp
