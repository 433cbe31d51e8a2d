// ragpp: the answer stage, the decision `ragpp ask` makes after retrieval: which of the
// ranked passages the model reads, how confident the pipeline is that they answer, and
// then either the evidence block or a reasoned refusal. One function for the tool, the
// engine (Engine::answer, engine/engine.hpp) and C++ users with a Retriever of their own:
//
//   auto ranked = retriever.search(question, 5);              // or search_reranked(...)
//   ragpp::TermStatistics stats{bm25.size(), [&](std::string_view t) { return bm25.document_frequency(t); }};
//   ragpp::Answer a = ragpp::answer(question, std::move(ranked), bm25.analyzer(), stats);
//   if (a.answered) prompt = a.evidence->render(); else for (auto& why : a.reasons) ...
//
// Steps (answer()):
//  1. Passages (answer_passages): the first `passages` results (the caller ranks at
//     least that many); when a reranker re-scored them, the results whose reranker
//     score is below relative_floor times the first one's are dropped (the first stays).
//  2. Confidence (answer/abstain.hpp): the query coverage of those passages, combined
//     with a cross-encoder's calibrated score when `cross_encoder` says the rerank
//     scores are a cross-encoder's logits.
//  3. answered = at least one passage and confidence >= min_confidence. Answered: the
//     evidence block (answer/evidence.hpp) of the passages. Refused: the reasons, the
//     words that matter first (answer_reasons).
// Eval (Engine::evaluate) runs steps 1 and 2 through the same functions, so the threshold
// it suggests is the one to give ask.
#pragma once

#include <cstddef>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <ragpp/answer/abstain.hpp>
#include <ragpp/answer/evidence.hpp>
#include <ragpp/core/concepts.hpp>
#include <ragpp/core/error.hpp>
#include <ragpp/retrieve/retriever.hpp>

namespace ragpp {

struct AnswerOptions {
    /// The most passages handed to the evidence.
    std::size_t passages = 5;
    /// Refuse below this confidence (calibrate it with ragpp eval).
    double min_confidence = default_min_confidence;
    /// With a reranker: drop passages scoring below this share of the first one's score.
    double relative_floor = 0.5;
    CoverageOptions coverage;
    ConfidenceOptions confidence;
    EvidenceOptions evidence;

    void validate() const {
        if (passages == 0) throw InvalidArgument("AnswerOptions: passages is 0");
        if (!(min_confidence >= 0 && min_confidence <= 1))
            throw InvalidArgument("AnswerOptions: min_confidence must be in [0, 1]");
        if (!(relative_floor >= 0 && relative_floor <= 1))
            throw InvalidArgument("AnswerOptions: relative_floor must be in [0, 1]");
        coverage.validate();
        confidence.validate();
    }
};

/// The decision of the answer stage.
struct Answer {
    std::string question;
    bool answered = false;
    double confidence = 0.0;
    double min_confidence = default_min_confidence;
    ConfidenceSignals signals;
    /// The query coverage of the passages: units, per-passage coverage, missing words.
    CoverageReport coverage;
    /// The passages the confidence read (and, answered, the evidence quotes), best first.
    std::vector<Result> passages;
    /// Set when answered.
    std::optional<Evidence> evidence;
    /// Why it refused (empty when answered), the most telling first.
    std::vector<std::string> reasons;
};

/// Step 1: the passages (see the header comment).
[[nodiscard]] inline std::vector<Result> answer_passages(std::vector<Result> ranked, std::size_t passages,
                                                         double relative_floor) {
    if (ranked.size() > passages) ranked.resize(passages);
    if (!ranked.empty() && ranked.front().rerank) {
        const double cut = relative_floor * ranked.front().rerank->reranker_score;
        std::size_t keep = 1;
        while (keep < ranked.size() && ranked[keep].rerank && ranked[keep].rerank->reranker_score >= cut) ++keep;
        ranked.resize(keep);
    }
    return ranked;
}

/// Step 2: the signals of `passages` and their query coverage.
template <Analyzer A>
[[nodiscard]] std::pair<ConfidenceSignals, CoverageReport> answer_signals(const A& analyzer, std::string_view question,
                                                                          std::span<const Result> passages,
                                                                          const TermStatistics& stats,
                                                                          const CoverageOptions& options = {},
                                                                          bool cross_encoder = false) {
    std::vector<const Document*> docs;
    docs.reserve(passages.size());
    for (const auto& r : passages) docs.push_back(r.document.get());
    std::pair<ConfidenceSignals, CoverageReport> out{{}, query_coverage(analyzer, question, docs, stats, options)};
    out.first.coverage = out.second.score;
    out.first.results = passages.size();
    if (cross_encoder && !passages.empty() && passages.front().rerank)
        out.first.reranker = calibrated_logit(passages.front().rerank->reranker_score);
    return out;
}

/// Why an answer with these signals was refused, the most telling first: no passage;
/// question words the corpus does not hold; words the best passage lacks (identifiers
/// first); a low cross-encoder score; then the coverage against the threshold.
[[nodiscard]] inline std::vector<std::string> answer_reasons(const Answer& a) {
    std::vector<std::string> out;
    if (a.passages.empty()) {
        out.emplace_back("no passage of the index matches the question");
        return out;
    }
    auto list = [](const std::vector<std::string>& words, std::size_t at_most) {
        std::string s;
        for (std::size_t i = 0; i < words.size() && i < at_most; ++i) s += (i ? ", " : "") + words[i];
        if (words.size() > at_most) s += ", ...";
        return s;
    };
    const auto& c = a.coverage;
    if (!c.unknown.empty())
        out.push_back(std::to_string(c.unknown.size()) + " question word" + (c.unknown.size() == 1 ? "" : "s") +
                      " occur" + (c.unknown.size() == 1 ? "s" : "") + " in no passage of the index: " + list(c.unknown, 8));
    std::vector<std::string> lacking;
    for (const auto& w : c.missing)
        if (std::find(c.unknown.begin(), c.unknown.end(), w) == c.unknown.end()) lacking.push_back(w);
    if (!lacking.empty())
        out.push_back("the best passage lacks " + list(lacking, 8));
    char buf[200];
    if (a.signals.reranker && *a.signals.reranker < 0.5) {
        std::snprintf(buf, sizeof buf, "the cross-encoder gives the best passage %.3f of 1", *a.signals.reranker);
        out.emplace_back(buf);
    }
    std::snprintf(buf, sizeof buf,
                  "the passages cover %.0f%% of the question's weight of rare words (coverage %.3f; confidence %.3f < "
                  "%.3f)",
                  100 * a.signals.coverage, a.signals.coverage, a.confidence, a.min_confidence);
    out.emplace_back(buf);
    return out;
}

/// The answer stage on `ranked` (best first; see the header comment). `analyzer` and
/// `stats`: the index's analyzer and the statistics of what the reader may read;
/// `cross_encoder`: the rerank scores are a cross-encoder's logits; `neighbours`: for
/// the evidence's neighbour expansion; `stale`: which passages' sources changed since
/// indexing (EvidenceBuilder::build's notes). Throws InvalidArgument for bad options.
template <Analyzer A>
[[nodiscard]] Answer answer(std::string_view question, std::vector<Result> ranked, const A& analyzer,
                            const TermStatistics& stats, const AnswerOptions& options = {}, bool cross_encoder = false,
                            const NeighbourFn& neighbours = {}, const StaleFn& stale = {}) {
    options.validate();
    Answer a;
    a.question = std::string(question);
    a.min_confidence = options.min_confidence;
    a.passages = answer_passages(std::move(ranked), options.passages, options.relative_floor);
    std::tie(a.signals, a.coverage) = answer_signals(analyzer, question, a.passages, stats, options.coverage, cross_encoder);
    a.confidence = confidence(a.signals, options.confidence);
    a.answered = !a.passages.empty() && a.confidence >= options.min_confidence;
    if (a.answered) a.evidence = EvidenceBuilder(options.evidence).build(question, a.passages, neighbours, stale);
    else a.reasons = answer_reasons(a);
    return a;
}

}  // namespace ragpp
