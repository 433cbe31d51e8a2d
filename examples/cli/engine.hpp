// The ragpp tool's engine: a BM25 + vector hybrid retriever whose analyzer and
// embedder are chosen by name at run time, built from a corpus or loaded from an index
// folder. Heavy templates are instantiated once, in engine.cpp; the subcommands see
// only this small interface.
#pragma once

#include <ragpp/answer/evidence.hpp>
#include <ragpp/core/types.hpp>
#include <ragpp/embed/embedder.hpp>
#include <ragpp/eval/evaluate.hpp>
#include <ragpp/rerank/proximity.hpp>
#include <ragpp/eval/question.hpp>
#include <ragpp/retrieve/retriever.hpp>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"

namespace cli {

/// Everything that shapes an index, from the command line.
struct EngineConfig {
    std::string analyzer = "english";
    /// hashing[:DIM] | model2vec:DIR | vectors:FILE
    std::string embedder = "hashing";
    std::string query_prefix, passage_prefix;
    /// Transformer embedders and cross-encoders: weights as float32 ("none") or "int8".
    std::string quantize = "none";
    /// Threads of transformer embedding and reranking (0: every core).
    std::size_t threads = 0;
    std::string variant = "lucene";
    double k1 = 0.9, b = 0.4, delta = 0.5;
    std::size_t max_tokens = 400;
    std::optional<std::size_t> overlap;
    double rrf_k = 60;
    std::vector<double> weights{1.0, 1.0};
    std::size_t candidates = 100;
    /// At most this many chunks of one source file in the top k (0: no cap).
    std::size_t per_source = 3;
    /// BM25F weights of title, headings and path per query (unset: the index's).
    std::optional<ragpp::FieldWeights> field_weights;
    // --- reranking: none | proximity | softmatch | cross-encoder:DIR ---
    std::string reranker = "none";
    std::size_t rerank_candidates = 50;
    double rerank_weight = 0.0;
};

/// Declares the index-shaping options on a parser, and reads them back.
void declare_engine_options(ArgParser& p, bool with_chunking = true);
/// Only the embedder's options (--embedder, prefixes, --e5, --quantize), and reading them.
void declare_embedder_options(ArgParser& p);
void apply_embedder_options(const ArgParser& p, EngineConfig& c);
EngineConfig engine_config(const ArgParser& p);
/// Declares and reads the search-time knobs (--rrf-k, --weights, --candidates, --k1, --b).
void declare_search_options(ArgParser& p);
void apply_search_options(const ArgParser& p, EngineConfig& c);

/// Declares and reads the rerank knobs (--rerank-candidates, --rerank-weight; --rerank
/// itself is declared by each command, repeated for eval, single for ask).
void declare_rerank_options(ArgParser& p);
void apply_rerank_options(const ArgParser& p, EngineConfig& c);
/// Throws UsageError unless `name` is none, proximity, softmatch or cross-encoder:DIR.
const std::string& check_reranker(const std::string& name);

enum class Mode { bm25, vector, hybrid };
Mode parse_mode(const std::string& name);
/// The pipeline without --mode: bm25 with the built-in hashing embedder (not a semantic
/// model: fused with it, BM25 gets worse), hybrid with a semantic one (model2vec:,
/// vectors:, transformer:).
Mode default_mode(const EngineConfig& c);
/// --mode's value, or default_mode(c) when it is empty.
Mode parse_mode_or_default(const std::string& name, const EngineConfig& c);
std::string mode_name(Mode m);
/// A pipeline of ragpp eval: "bm25", "vector", "hybrid" or "hybrid:W1,W2".
struct PipelineSpec {
    Mode mode;
    std::vector<double> weights;  // hybrid only; empty: --weights
};
PipelineSpec parse_pipeline(const std::string& spec);
/// "W1,W2" -> two weights >= 0; UsageError naming `what` otherwise.
std::vector<double> parse_weights(const std::string& text, const std::string& what);

/// Documents of a corpus: a folder of .md/.rst/.txt files (chunked; ids are paths
/// relative to the folder), a .jsonl file ({"_id"|"id", "title"?, "text", "metadata"?}
/// per line) or a BEIR folder (corpus.jsonl).
std::vector<ragpp::Document> load_corpus(const std::filesystem::path& corpus, const EngineConfig& config, bool progress);

class Engine {
public:
    /// Indexes `docs` (progress on stderr when `progress`).
    static Engine build(std::vector<ragpp::Document> docs, EngineConfig config, bool progress);
    /// Loads an index folder written by save(); `threads` for a transformer embedder
    /// and cross-encoders (0: every core).
    static Engine load(const std::filesystem::path& dir, std::size_t threads = 0);
    /// Writes manifest.json, documents.jsonl, bm25.idx and vector.idx into `dir`.
    void save(const std::filesystem::path& dir) const;

    [[nodiscard]] const EngineConfig& config() const;
    EngineConfig& config();
    [[nodiscard]] std::size_t size() const;

    /// The k best results of one pipeline; `filter` in the parse_filter syntax (empty: none).
    [[nodiscard]] std::vector<ragpp::Result> search(const std::string& query, std::size_t k, Mode mode,
                                                    const std::string& filter = {}) const;
    /// Every question through one pipeline: the whole candidate list is evaluated;
    /// stages are analysis, bm25, embedding, vector, fusion.
    [[nodiscard]] ragpp::PipelineReport evaluate(const ragpp::QuestionSet& questions, Mode mode, const std::string& name,
                                                 bool progress) const;
    /// The same, reranked by `reranker` (none, proximity, softmatch): the first
    /// config().rerank_candidates fused results re-scored, k kept.
    [[nodiscard]] std::vector<ragpp::Result> search(const std::string& query, std::size_t k, Mode mode,
                                                    const std::string& filter, const std::string& reranker) const;
    /// evaluate() with a rerank stage (stage "rerank"); when `confidences` is given, it
    /// receives each question's abstention confidence (answer/abstain.hpp), in order.
    [[nodiscard]] ragpp::PipelineReport evaluate(const ragpp::QuestionSet& questions, Mode mode, const std::string& name,
                                                 bool progress, const std::string& reranker,
                                                 std::vector<double>* confidences,
                                                 const std::vector<double>& weights = {}) const;
    /// Which words of `question` occur in `doc` (the proximity reranker's breakdown).
    [[nodiscard]] ragpp::ProximityBreakdown explain(const std::string& question, const ragpp::Document& doc) const;
    /// The chunks around a chunk, for evidence neighbour expansion.
    [[nodiscard]] ragpp::NeighbourFn neighbours() const;
    /// Labels of `questions` that match no document of the index (reported, not hidden).
    [[nodiscard]] std::vector<std::string> unmatched_labels(const ragpp::QuestionSet& questions) const;

    struct Impl;

private:
    explicit Engine(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
    std::shared_ptr<Impl> impl_;
};

/// Embeds `texts` with the embedder `config` names (the `ragpp embed` subcommand);
/// a progress bar on stderr when `progress`.
ragpp::RowMatrixXf embed_texts(const EngineConfig& config, const std::vector<std::string>& texts, ragpp::Role role,
                               bool progress);
/// Scores each passage with the reranker `config.reranker` names (`ragpp rerank`): a
/// cross-encoder's raw logit.
std::vector<double> rerank_texts(const EngineConfig& config, const std::string& query,
                                 const std::vector<std::string>& passages);
/// Declares --threads (0: every core).
void declare_threads_option(ArgParser& p);

/// "path:line" and heading path of a stored chunk, for citations.
std::string citation(const ragpp::Document& doc);

}  // namespace cli
