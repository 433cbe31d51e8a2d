// The ragpp tool's side of ragpp::Engine (include/ragpp/engine/engine.hpp): the
// options that shape an engine and a query, read from the command line, and progress
// bars. The engine itself (corpus, index folder, incremental sync, freshness, access) is
// the library's; the tool links its compiled objects and parses its interface only.
#pragma once

#include <ragpp/answer/evidence.hpp>
#include <ragpp/core/types.hpp>
#include <ragpp/embed/embedder.hpp>
#include <ragpp/engine/config.hpp>
#include <ragpp/engine/engine.hpp>
#include <ragpp/engine/index_folder.hpp>
#include <ragpp/eval/evaluate.hpp>
#include <ragpp/eval/question.hpp>

#include <filesystem>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"

namespace ragpp {
struct EvaluationPlan;
struct EvaluationRunReport;
}  // namespace ragpp

namespace cli {

using EngineConfig = ragpp::EngineConfig;
using Mode = ragpp::SearchMode;

/// Declares the index-shaping options on a parser, and reads them back.
void declare_engine_options(ArgParser& p, bool with_chunking = true);
/// Only the embedder's options (--embedder, prefixes, --e5, --quantize), and reading them.
void declare_embedder_options(ArgParser& p);
void apply_embedder_options(const ArgParser& p, EngineConfig& c);
EngineConfig engine_config(const ArgParser& p);
/// Only the index-shaping options given on the command line (ragpp index: an option not
/// given keeps the existing index's value).
ragpp::IndexSettings index_settings(const ArgParser& p);
/// UsageError unless c's --overlap is smaller than its --max-tokens (every command that
/// chunks says so alike, exit 2).
void check_chunking(const EngineConfig& c);
/// Declares and reads the search-time knobs (--rrf-k, --weights, --candidates, --k1, --b).
void declare_search_options(ArgParser& p);
void apply_search_options(const ArgParser& p, ragpp::SearchSettings& s);

/// Declares and reads the rerank knobs (--rerank-candidates, --rerank-weight; --rerank
/// itself is declared by each command, repeated for eval, single for ask).
void declare_rerank_options(ArgParser& p);
void apply_rerank_options(const ArgParser& p, ragpp::SearchSettings& s);
/// Throws UsageError unless `name` is none, proximity, softmatch or cross-encoder:DIR.
const std::string& check_reranker(const std::string& name);

/// --as GROUP[,GROUP...] and --as-all (search, ask, eval), and the Principal they name:
/// without either, a principal with no group (documents without groups only, none under
/// --unlabelled private).
void declare_access_options(ArgParser& p);
ragpp::Principal principal(const ArgParser& p);
/// --check-sources on|off (search, ask).
void declare_check_sources_option(ArgParser& p);
bool check_sources(const ArgParser& p);
/// The corpus walk's options, and whether to list every skipped entry.
struct CorpusSettings {
    ragpp::CorpusOptions options;
    /// Whether any of the walk's flags was given (ragpp index: none given, the index's walk).
    bool walk_given = false;
    bool verbose = false;
};
/// --follow-symlinks, --skip-unreadable, --hidden, --no-ignore, --verbose and the context
/// options (index, eval).
void declare_corpus_options(ArgParser& p);
/// The help of a CORPUS argument (index, eval), its extensions from CorpusOptions's defaults.
std::string corpus_help();
CorpusSettings corpus_options(const ArgParser& p);
/// --contexts, --context-command and --context-timeout as given (unset: the index's) for index.
void apply_context_options(const ArgParser& p, ragpp::IndexFolderOptions& o);
/// The scan's notes and one warning per stale source, on stderr.
void print_notes(const std::vector<std::string>& notes);
void warn_stale(const std::vector<std::string>& stale_sources);

Mode parse_mode(const std::string& name);
/// --mode's help: the modes, each with what it is, and the default.
std::string mode_help();
/// The pipeline without --mode (ragpp::default_search_mode).
Mode default_mode(const EngineConfig& c);
/// --mode's value, or default_mode(c) when it is empty.
Mode parse_mode_or_default(const std::string& name, const EngineConfig& c);
std::string mode_name(Mode m);
/// Why a search in `mode` (`mode_option`: --mode's value, empty for the default) leaves the
/// vector list unconsulted (the default pipeline of the hashing embedder is bm25, --mode
/// bm25, or a vector weight of 0), or "" when it consults it. search and ask say it once,
/// since every result's trace then shows "vector -".
std::string vector_list_note(Mode mode, const std::string& mode_option, const std::string& embedder,
                             const ragpp::SearchSettings& s);
/// A pipeline of ragpp eval: "bm25", "vector", "hybrid" or "hybrid:W1,W2".
ragpp::EvaluationPipeline parse_pipeline(const std::string& spec);
/// "W1,W2" -> two weights >= 0; UsageError naming `what` otherwise.
std::vector<double> parse_weights(const std::string& text, const std::string& what);

/// ragpp::index_folder (what ragpp index does) with a progress bar on stderr when
/// `progress`, then what Engine::build prints after it (`verbose`: every skipped entry);
/// an IndexRequestError is a UsageError.
ragpp::IndexFolderReport index_folder(const std::filesystem::path& corpus, const std::filesystem::path& out,
                                      ragpp::IndexFolderOptions options, bool verbose, bool progress);

/// The library's engine: the tool holds no engine of its own (ragpp/engine/engine.hpp is
/// its interface only, the definitions being in ragpp::compiled's engine objects).
using Engine = ragpp::Engine;

/// ragpp::Engine::build, with a progress bar on stderr when `progress`; then, on stderr,
/// the scan's notes, the binary and not-UTF-8 files skipped, the summary of what was
/// skipped (every entry with options.verbose) and a warning per locked note. A malformed
/// --embedder is a usage error.
[[nodiscard]] Engine build_engine(const std::filesystem::path& corpus, const EngineConfig& config,
                                  const CorpusSettings& options, bool progress);
/// engine.search, a reranker name the tool does not know and a query without any
/// searchable term being usage errors (exit 2).
[[nodiscard]] ragpp::EngineResults search(const Engine& engine, const std::string& query, const ragpp::EngineQuery& q);
/// ragpp::run_evaluation with a progress bar per pipeline.
[[nodiscard]] ragpp::EvaluationRunReport evaluate(const Engine& engine, ragpp::QuestionSet questions,
                                                  const ragpp::EvaluationPlan& plan, bool progress);

/// Embeds `texts` with the embedder `config` names (the `ragpp embed` subcommand);
/// a progress bar on stderr when `progress`.
ragpp::RowMatrixXf embed_texts(const EngineConfig& config, const std::vector<std::string>& texts, ragpp::Role role,
                               bool progress);
/// Scores each passage with the cross-encoder `reranker` names (`ragpp rerank`): a
/// cross-encoder's raw logit.
std::vector<double> rerank_texts(const EngineConfig& config, const std::string& reranker, const std::string& query,
                                 const std::vector<std::string>& passages);
/// Declares --threads (0: every core).
void declare_threads_option(ArgParser& p);

/// "path:line" and heading path of a stored chunk, for citations.
std::string citation(const ragpp::Document& doc);

}  // namespace cli
