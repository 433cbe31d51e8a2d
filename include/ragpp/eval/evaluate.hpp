// ragpp: evaluation of a retrieval pipeline over a question set, per question and per
// stage, so a reader sees whether retrieval or ranking failed.
//
// A pipeline is any function from a query to its full candidate list (best first,
// every candidate the pipeline considered, not only the top k): ragpp::Retriever gives
// that list when asked for all its candidates. For each question, the candidate keys
// (chunk ids) are mapped to the labels of the question set: a chunk that satisfies a
// relevance label counts as that label (label_matches: "a.md:12#2" satisfies
// "a.md:12"), any other chunk counts as its section; each label or section is counted
// once, at its best rank. The metrics of eval/metrics.hpp are then computed on that
// ranking at every k.
//
// Where a relevant passage was missed at k:
//   - retrieval: no relevant passage is among the candidates at all;
//   - ranking:   one is among the candidates, but below rank k.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include <ragpp/core/error.hpp>
#include <ragpp/eval/metrics.hpp>
#include <ragpp/eval/question.hpp>

namespace ragpp {

/// One candidate: the document key (chunk id) and the pipeline's score.
struct Retrieved {
    std::string key;
    double score = 0.0;
};

/// Time spent per stage for one query, in seconds, in stage order ("analysis", "bm25",
/// "vector", "fusion", ...). Filled by the pipeline function.
using StageTimes = std::vector<std::pair<std::string, double>>;

/// query -> candidates, best first; may record stage times.
using PipelineFn = std::function<std::vector<Retrieved>(std::string_view query, StageTimes& times)>;

enum class Measure { hit_rate, recall, precision, mrr, ndcg, map };

inline constexpr Measure all_measures[] = {Measure::hit_rate, Measure::recall, Measure::precision,
                                         Measure::mrr,      Measure::ndcg,   Measure::map};

[[nodiscard]] constexpr std::string_view measure_name(Measure m) noexcept {
    switch (m) {
        case Measure::hit_rate: return "hit_rate";
        case Measure::recall: return "recall";
        case Measure::precision: return "precision";
        case Measure::mrr: return "mrr";
        case Measure::ndcg: return "ndcg";
        case Measure::map: return "map";
    }
    return "?";
}

enum class MissStage { none, ranking, retrieval };

[[nodiscard]] constexpr std::string_view miss_stage_name(MissStage s) noexcept {
    return s == MissStage::none ? "ok" : s == MissStage::ranking ? "ranking" : "retrieval";
}

/// One question's outcome in one pipeline.
struct QuestionOutcome {
    /// Labels or sections, best first, each once.
    std::vector<std::string> ranking;
    /// The pipeline's score of each ranking entry.
    std::vector<double> scores;
    /// The chunk id behind each ranking entry (the best-ranked chunk of it).
    std::vector<std::string> keys;
    /// 1-based rank of the first relevant entry; 0 when no candidate is relevant.
    std::size_t first_relevant = 0;
    /// 1-based rank of the first entry whose passage contains the question's reference
    /// answer (eval/containment.hpp, find_answers); 0 when none does or it was not looked for.
    std::size_t answer_rank = 0;
    /// The answer stage's confidence (answer/abstain.hpp) when the pipeline computed it:
    /// Engine::evaluate does, with the function ragpp ask uses.
    std::optional<double> confidence;
    /// Wall time of the whole query and of each stage, in seconds.
    double seconds = 0.0;
    StageTimes stages;
};

/// Percentiles of a sample (nearest rank).
struct Latency {
    double p50 = 0.0, p95 = 0.0, mean = 0.0;
};

[[nodiscard]] inline Latency latency_of(std::vector<double> seconds) {
    Latency l;
    if (seconds.empty()) return l;
    std::sort(seconds.begin(), seconds.end());
    auto pct = [&](double p) {
        const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(seconds.size())));
        return seconds[std::min(seconds.size() - 1, rank == 0 ? 0 : rank - 1)];
    };
    l.p50 = pct(0.50);
    l.p95 = pct(0.95);
    double sum = 0;
    for (double s : seconds) sum += s;
    l.mean = sum / static_cast<double>(seconds.size());
    return l;
}

/// A pipeline's outcomes over a question set.
class PipelineReport {
public:
    PipelineReport(std::string name, const QuestionSet& questions, std::vector<QuestionOutcome> outcomes)
        : name_(std::move(name)), questions_(questions), outcomes_(std::move(outcomes)) {}

    [[nodiscard]] const std::string& name() const noexcept { return name_; }
    [[nodiscard]] const QuestionSet& questions() const noexcept { return questions_; }
    [[nodiscard]] const std::vector<QuestionOutcome>& outcomes() const noexcept { return outcomes_; }

    /// Measure m at k for question i; empty when the question has no relevant label.
    /// For mrr and map, k = no_cutoff gives the uncut values.
    [[nodiscard]] std::optional<double> value(std::size_t i, Measure m, std::size_t k) const {
        const auto& r = outcomes_[i].ranking;
        const auto& j = questions_[i].relevant;
        const std::span<const std::string> s(r);
        switch (m) {
            case Measure::hit_rate: return hit_at_k<std::string>(s, j, k);
            case Measure::recall: return recall_at_k<std::string>(s, j, k);
            case Measure::precision: return precision_at_k<std::string>(s, j, k);
            case Measure::mrr: return reciprocal_rank<std::string>(s, j, k);
            case Measure::ndcg: return ndcg_at_k<std::string>(s, j, k);
            case Measure::map: return average_precision<std::string>(s, j, k);
        }
        return std::nullopt;
    }

    /// The metric averaged over the answerable questions.
    [[nodiscard]] MetricSummary summary(Measure m, std::size_t k) const {
        MetricSummary s;
        double sum = 0;
        for (std::size_t i = 0; i < outcomes_.size(); ++i) {
            if (auto v = value(i, m, k)) {
                sum += *v;
                ++s.questions;
            } else {
                ++s.without_relevant;
            }
        }
        s.mean = s.questions ? sum / static_cast<double>(s.questions) : 0.0;
        return s;
    }

    /// Per-question values of the answerable questions, in question order (for
    /// significance tests between pipelines evaluated on the same set).
    [[nodiscard]] std::vector<double> per_question(Measure m, std::size_t k) const {
        std::vector<double> out;
        for (std::size_t i = 0; i < outcomes_.size(); ++i)
            if (auto v = value(i, m, k)) out.push_back(*v);
        return out;
    }

    /// Where question i missed at k (MissStage::none for a hit; unanswerable questions
    /// are MissStage::none too, see Question::relevant).
    [[nodiscard]] MissStage miss(std::size_t i, std::size_t k) const {
        const auto& o = outcomes_[i];
        if (questions_[i].relevant.empty()) return MissStage::none;
        if (o.first_relevant == 0) return MissStage::retrieval;
        return o.first_relevant <= k ? MissStage::none : MissStage::ranking;
    }

    /// Answer containment at k (eval/containment.hpp): the share of the questions with a
    /// reference answer whose answer occurs in one of the first k ranking entries' passages;
    /// empty until find_answers() ran, or when no question has an answer.
    [[nodiscard]] std::optional<double> answer_containment(std::size_t k) const {
        if (!answers_checked_) return std::nullopt;
        std::size_t with = 0, found = 0;
        for (std::size_t i = 0; i < outcomes_.size(); ++i) {
            if (!questions_[i].answer || questions_[i].answer->empty()) continue;
            ++with;
            if (outcomes_[i].answer_rank != 0 && outcomes_[i].answer_rank <= k) ++found;
        }
        if (with == 0) return std::nullopt;
        return static_cast<double>(found) / static_cast<double>(with);
    }
    /// Questions with a reference answer.
    [[nodiscard]] std::size_t questions_with_answer() const {
        return static_cast<std::size_t>(std::count_if(questions_.begin(), questions_.end(),
                                                      [](const Question& q) { return q.answer && !q.answer->empty(); }));
    }
    /// Sets each question's answer_rank (find_answers in eval/containment.hpp does).
    void set_answer_ranks(const std::vector<std::size_t>& ranks) {
        if (ranks.size() != outcomes_.size())
            throw DimensionError("set_answer_ranks: " + std::to_string(ranks.size()) + " ranks for " +
                                 std::to_string(outcomes_.size()) + " questions");
        for (std::size_t i = 0; i < ranks.size(); ++i) outcomes_[i].answer_rank = ranks[i];
        answers_checked_ = true;
    }

    /// Sets each question's confidence (Engine::evaluate does).
    void set_confidences(const std::vector<double>& confidences) {
        if (confidences.size() != outcomes_.size())
            throw DimensionError("set_confidences: " + std::to_string(confidences.size()) + " confidences for " +
                                 std::to_string(outcomes_.size()) + " questions");
        for (std::size_t i = 0; i < confidences.size(); ++i) outcomes_[i].confidence = confidences[i];
    }

    /// Latency of the whole query, and of each stage by name, over all questions.
    [[nodiscard]] Latency total_latency() const {
        std::vector<double> s;
        for (const auto& o : outcomes_) s.push_back(o.seconds);
        return latency_of(std::move(s));
    }
    [[nodiscard]] std::vector<std::pair<std::string, Latency>> stage_latencies() const {
        std::vector<std::pair<std::string, std::vector<double>>> by_stage;
        for (const auto& o : outcomes_)
            for (const auto& entry : o.stages) {
                const auto& stage = entry.first;  // not a structured binding: clang 14 cannot capture those
                auto it = std::find_if(by_stage.begin(), by_stage.end(), [&](const auto& p) { return p.first == stage; });
                if (it == by_stage.end()) by_stage.push_back({stage, {entry.second}});
                else it->second.push_back(entry.second);
            }
        std::vector<std::pair<std::string, Latency>> out;
        for (auto& [stage, v] : by_stage) out.emplace_back(stage, latency_of(std::move(v)));
        return out;
    }

private:
    std::string name_;
    QuestionSet questions_;  // a copy: the report stands alone
    std::vector<QuestionOutcome> outcomes_;
    bool answers_checked_ = false;
};

/// Maps a candidate list to the question's labels (see the header comment).
[[nodiscard]] inline QuestionOutcome collapse_to_labels(const std::vector<Retrieved>& candidates, const Question& q) {
    QuestionOutcome o;
    std::unordered_set<std::string> seen;
    for (const auto& c : candidates) {
        std::string label;
        bool relevant = false;
        for (const auto& [lab, grade] : q.relevant)
            if (label_matches(lab, c.key)) {
                if (label.empty() || lab < label) label = lab;  // deterministic when labels overlap
                relevant = relevant || grade > 0;
            }
        if (label.empty()) label = std::string(section_of(c.key));
        if (!seen.insert(label).second) continue;
        o.ranking.push_back(label);
        o.scores.push_back(c.score);
        o.keys.push_back(c.key);
        if (relevant && o.first_relevant == 0) o.first_relevant = o.ranking.size();
    }
    return o;
}

/// Runs `pipeline` on every question; `progress(done, total)` is called after each.
[[nodiscard]] inline PipelineReport evaluate(std::string name, const QuestionSet& questions, const PipelineFn& pipeline,
                                             const std::function<void(std::size_t, std::size_t)>& progress = {}) {
    std::vector<QuestionOutcome> outcomes;
    outcomes.reserve(questions.size());
    for (std::size_t i = 0; i < questions.size(); ++i) {
        StageTimes times;
        const auto t0 = std::chrono::steady_clock::now();
        auto candidates = pipeline(questions[i].text, times);
        const auto t1 = std::chrono::steady_clock::now();
        QuestionOutcome o = collapse_to_labels(candidates, questions[i]);
        o.seconds = std::chrono::duration<double>(t1 - t0).count();
        o.stages = std::move(times);
        outcomes.push_back(std::move(o));
        if (progress) progress(i + 1, questions.size());
    }
    return PipelineReport(std::move(name), questions, std::move(outcomes));
}

}  // namespace ragpp
