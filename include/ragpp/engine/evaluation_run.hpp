// ragpp: an evaluation run over an Engine, what `ragpp eval` runs (docs/evaluation.md):
// several pipelines (each mode times each reranker) and TREC runs of other engines over
// the same question set, the labels resolved against the engine's chunks, answer
// containment, and per pipeline the abstention calibration.
//
//   EvaluationPlan plan;                              // empty pipelines: the default, then the others
//   plan.ks = {1, 3, 10};
//   plan.runs.push_back(read_trec_run("bm25s.run"));  // one more row, after the pipelines
//   auto r = run_evaluation(engine, read_questions("questions.json"), plan);
//   for (const auto& row : r.rows) row.summary(Measure::recall, 10);
//   std::cout << r.to_json().dump(2);                 // ragpp eval --json
//
// A light header: with the compiled library it declares only; header-only, it includes
// engine/engine.hpp and the definitions (engine/detail/evaluation_run.ipp).
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <ragpp/answer/abstain.hpp>
#include <ragpp/detail/compiled.hpp>
#include <ragpp/engine/config.hpp>
#include <ragpp/eval/evaluate.hpp>
#include <ragpp/eval/question.hpp>
#include <ragpp/eval/run.hpp>
#include <ragpp/io/trec.hpp>

namespace ragpp {

class Engine;

/// What run_evaluation runs. Each pipeline runs once per reranker, pipeline-major.
struct EvaluationPlan {
    /// Empty: default_search_mode (what search and ask run by default), then the other two.
    std::vector<EvaluationPipeline> pipelines;
    /// none, proximity, softmatch or cross-encoder:DIR; empty: none only.
    std::vector<std::string> rerankers;
    /// Cut-offs of the metrics, each >= 1 (sorted and made unique by the run).
    std::vector<std::size_t> ks{1, 3, 5, 10, 20};
    /// The k at which a question is ok or a miss, and the passages the confidence reads
    /// (as Engine::answer's AnswerOptions::passages); >= 1.
    std::size_t passages = 5;
    /// AnswerOptions::relative_floor of the confidence, in [0, 1].
    double relative_floor = 0.5;
    /// The precision the suggested abstention threshold must reach, in (0, 1].
    double target_precision = 0.9;
    /// The search settings of every pipeline (unset: the engine's, EngineConfig::search).
    std::optional<SearchSettings> search;
    /// Who reads: the pipelines search what it may read, and labels only in documents it
    /// may not read are reported (EvaluationRunReport::hidden_labels).
    Principal principal;
    /// Prefixes a label may carry before a chunk id (corpus_label_prefixes: labels written
    /// relative to the corpus folder's parent); see resolve_labels.
    std::vector<std::string> corpus_prefixes;
    /// TREC runs of other engines (io/trec.hpp's read_trec_run): one row each, after the
    /// pipelines, named "run:TAG" (or "run:FILE" when that name is taken).
    std::vector<TrecRun> runs;
    /// How the runs' docnos meet the labels (eval/run.hpp).
    RunMatch match = RunMatch::chunk;
    /// How errors name the question set and the corpus (their paths, say); may be empty.
    std::string questions_name, corpus_name;
    /// Called with ("evaluating NAME", questions done, questions) during each pipeline.
    EngineProgress progress;
};

/// What run_evaluation found about one TREC run.
struct EvaluatedRun {
    /// Its row's name, its file (TrecRun::source), tag and lines; the queries it has.
    std::string name, file, tag;
    std::size_t lines = 0, queries = 0;
    /// Answerable questions without any line in the run (each counts 0).
    std::size_t questions_missing = 0;
    /// Its queries that are no question id (ignored), sorted.
    std::vector<std::string> unknown_queries;
    /// Its entries whose docno is no chunk id (nor, with RunMatch::document, a document
    /// id) of the engine, and the first of them.
    std::size_t unknown_docnos = 0;
    std::string unknown_docno_example;
};

/// How a confidence threshold separates the answerable questions from the unanswerable
/// ones in one pipeline (answer/abstain.hpp).
struct PipelineAbstention {
    Calibration calibration;
    /// Empty when it is undefined (see auroc).
    std::optional<double> auroc;
};

/// The outcome of run_evaluation.
struct EvaluationRunReport {
    /// ragpp's pipelines, in the plan's order (mode-major, then reranker).
    std::vector<PipelineReport> pipelines;
    /// The pipelines, then one row per TREC run: what the tables and tests compare.
    std::vector<PipelineReport> rows;
    /// Per pipeline, the stem of its files: "bm25", "hybrid-1_0.5", "bm25+proximity".
    std::vector<std::string> pipeline_files;
    /// The questions, labels resolved (what the rows were measured on).
    QuestionSet questions;
    /// The plan's cut-offs (sorted, unique), passages and run match.
    std::vector<std::size_t> ks;
    std::size_t passages = 0;
    RunMatch match = RunMatch::chunk;
    /// Whether the plan named no pipeline (the default one first, then the other two),
    /// and the default pipeline's mode.
    bool default_pipelines = false;
    SearchMode default_mode = SearchMode::bm25;
    /// Chunks the principal may read.
    std::size_t readable_chunks = 0;
    /// How the labels matched the chunks (unmatched: can only be missed; resolved: matched
    /// once a corpus prefix was removed; inside_section: a line inside a section).
    LabelCheck labels;
    /// Labels that match chunks, none of which the principal may read, sorted.
    std::vector<std::string> hidden_labels;
    /// The TREC runs, in the plan's order.
    std::vector<EvaluatedRun> runs;
    /// Whether a question has a reference answer; how many have one that can be looked
    /// for, and how many of those occur in a chunk the principal may read (the ceiling of
    /// answer containment; when 0, containment is not measured).
    bool has_answers = false;
    std::size_t with_answer = 0, answers_in_corpus = 0;
    /// Answerable and unanswerable questions; when both are > 0, one abstention per
    /// pipeline (empty otherwise).
    std::size_t answerable = 0, unanswerable = 0;
    std::vector<PipelineAbstention> abstention;

    /// Everything as JSON (`ragpp eval --json`): report_json of the rows, "runs" when
    /// there are runs, "answers_in_corpus" when a question has an answer.
    [[nodiscard]] nlohmann::json to_json() const;
};

/// "a/b/notes/", "b/notes/", "notes/" for the corpus a/b/notes: the prefixes a label
/// written from a parent folder of the corpus starts with, longest first.
[[nodiscard]] std::vector<std::string> corpus_label_prefixes(const std::filesystem::path& corpus);

/// The pipelines `plan` names on an engine of `config`, each with its options (name:
/// "bm25", "hybrid(1,0.5)", "bm25+proximity"; depth: max(candidates, largest k)).
/// Throws InvalidArgument for a value out of range, a reranker that is none of the known
/// ones, a pipeline given twice or a run given twice: every mistake of the plan, before
/// any work (run_evaluation checks the same).
[[nodiscard]] std::vector<EvaluationOptions> evaluation_pipelines(const EvaluationPlan& plan, const EngineConfig& config);

/// Runs `plan` on `engine` with `questions`: resolves the labels against its chunks,
/// evaluates every pipeline (Engine::evaluate) and run (evaluate_run), looks for the
/// reference answers in what the principal may read. Throws what evaluation_pipelines
/// throws, and for an empty question set; NotFoundError when no label matches a chunk,
/// or no query of a run is a question id.
[[nodiscard]] EvaluationRunReport run_evaluation(const Engine& engine, QuestionSet questions,
                                                 const EvaluationPlan& plan);

}  // namespace ragpp

#ifndef RAGPP_COMPILED
#include <ragpp/engine/engine.hpp>
#include <ragpp/engine/detail/evaluation_run.ipp>
#endif
