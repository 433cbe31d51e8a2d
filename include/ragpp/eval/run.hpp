// ragpp: a TREC run of any engine (io/trec.hpp) evaluated on a question set, so that it
// sits next to ragpp's own pipelines in a report (same metrics, same significance
// tests: eval/report.hpp).
//
// Queries: a question matches the run's qid trec_id(question id) (ids are written that
// way by write_trec_run). A question the run has no line for gets an empty ranking:
// every metric is 0 for it, as trec_eval -c counts a missing query (the average is
// over the question set, not over the run's queries). Run queries that are not
// question ids are ignored and listed (RunEvaluation::unknown_queries).
//
// Docnos are matched to the relevance labels exactly as ragpp's own candidates are
// (eval/evaluate.hpp, collapse_to_labels): a docno is treated as a chunk id, so the
// chunk "a.md:12#2" satisfies the label "a.md:12" and any chunk of a.md the bare-path
// label "a.md"; labels are compared through trec_id (a label with a space matches the
// docno written with '_'). That is RunMatch::chunk, the default: a run is measured at
// the granularity ragpp's pipelines are, which is what makes the rows comparable.
// RunMatch::document is for an engine that indexed whole documents: a docno that
// satisfies no label but names a label's document ("a.md" for the label "a.md:12",
// "doc7" for "doc7#3") counts as that label (the smallest such label: one label per
// retrieved document). It is more lenient than the chunk level (a whole document is
// credited with the passage), so such a row is not comparable with ragpp's rows as is.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <ragpp/chunk/chunk.hpp>  // section_of
#include <ragpp/eval/evaluate.hpp>
#include <ragpp/eval/question.hpp>
#include <ragpp/io/trec.hpp>

namespace ragpp {

/// How a run's docnos satisfy chunk-level labels (see the header comment).
enum class RunMatch { chunk, document };

/// The document a chunk id or label belongs to: "a.md:12#2" -> "a.md", "a.md:12" ->
/// "a.md", "doc7#3" -> "doc7", "a.md" -> "a.md".
[[nodiscard]] inline std::string_view document_of(std::string_view id) noexcept {
    const std::string_view s = section_of(id);
    const auto colon = s.rfind(':');
    if (colon == std::string_view::npos || colon + 1 == s.size()) return s;
    if (s.substr(colon + 1).find_first_not_of("0123456789") != std::string_view::npos) return s;
    return s.substr(0, colon);
}

struct RunEvaluation {
    PipelineReport report;
    /// Answerable questions (a label of grade > 0) without any line in the run: each
    /// counts 0 in every measure. (An unanswerable question is left out of the averages
    /// whether the run has it or not.)
    std::size_t questions_missing = 0;
    /// Run queries that are no question id of the set (ignored), sorted.
    std::vector<std::string> unknown_queries;
};

/// Evaluates `run` on `questions` under the name `name` (the row of the report).
[[nodiscard]] inline RunEvaluation evaluate_run(std::string name, const QuestionSet& questions, const TrecRun& run,
                                                RunMatch match = RunMatch::chunk) {
    std::vector<QuestionOutcome> outcomes;
    outcomes.reserve(questions.size());
    std::size_t missing = 0;
    std::unordered_map<std::string, bool> asked;  // trec_id(question id) -> true
    for (const auto& q : questions) asked.emplace(trec_id(q.id), true);
    for (const auto& q : questions) {
        // The question with its labels as TREC tokens; back maps them to the labels.
        Question tq;
        std::unordered_map<std::string, std::string> back;
        for (const auto& [label, grade] : q.relevant) {
            std::string t = trec_id(label);
            auto [it, fresh] = tq.relevant.emplace(t, grade);
            if (!fresh) it->second = std::max(it->second, grade);
            auto [b, added] = back.emplace(std::move(t), label);
            if (!added && label < b->second) b->second = label;
        }
        std::vector<Retrieved> candidates;
        std::unordered_map<std::string, std::string> docnos;  // a key rewritten to a label -> the run's docno
        const auto found = run.queries.find(trec_id(q.id));
        const bool answerable =
            std::any_of(q.relevant.begin(), q.relevant.end(), [](const auto& entry) { return entry.second > 0; });
        if (found == run.queries.end()) missing += answerable ? 1 : 0;
        else
            for (const auto& e : found->second) {
                Retrieved r{e.docno, e.score};
                if (match == RunMatch::document) {
                    bool satisfies = false;
                    std::string whole;  // the smallest label whose document is this docno
                    for (const auto& entry : tq.relevant) {
                        satisfies = satisfies || label_matches(entry.first, e.docno);
                        if (document_of(entry.first) == e.docno && (whole.empty() || entry.first < whole))
                            whole = entry.first;
                    }
                    if (!satisfies && !whole.empty()) {
                        docnos.emplace(whole, e.docno);
                        r.key = whole;
                    }
                }
                candidates.push_back(std::move(r));
            }
        QuestionOutcome o = collapse_to_labels(candidates, tq);
        for (auto& entry : o.ranking)
            if (const auto b = back.find(entry); b != back.end()) entry = b->second;
        for (auto& key : o.keys)
            if (const auto d = docnos.find(key); d != docnos.end()) key = d->second;
        outcomes.push_back(std::move(o));
    }
    std::vector<std::string> unknown;
    for (const auto& entry : run.queries)
        if (!asked.contains(entry.first)) unknown.push_back(entry.first);
    return RunEvaluation{PipelineReport(std::move(name), questions, std::move(outcomes)), missing, std::move(unknown)};
}

}  // namespace ragpp
