// ragpp: the light half of engine/engine.hpp: EngineConfig, SearchMode, EngineQuery,
// EngineResults, EngineAnswer, EvaluationOptions, EvaluationPipeline, SyncCounts. A translation unit that only fills these in (a command-line
// front end, say) does not pay for the indexes and embedders engine.hpp instantiates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ragpp/answer/answer.hpp>
#include <ragpp/core/choices.hpp>
#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>
#include <ragpp/embed/spec.hpp>
#include <ragpp/embed/transformer_quantization.hpp>
#include <ragpp/filter/access.hpp>
#include <ragpp/index/bm25/scoring.hpp>
#include <ragpp/index/options.hpp>
#include <ragpp/io/corpus.hpp>
#include <ragpp/retrieve/retriever.hpp>

namespace ragpp {

/// The search-time knobs of an engine. Its defaults are saved with the index
/// (EngineConfig::search) and a query may bring its own (EngineQuery::search): changing
/// them changes no index.
struct SearchSettings {
    /// BM25's term frequency saturation and length normalisation.
    double k1 = 0.9, b = 0.4;
    /// Reciprocal rank fusion: 1 / (rrf_k + rank) per list, times the list's weight (BM25,
    /// vectors) in hybrid mode.
    double rrf_k = 60;
    std::vector<double> weights{1.0, 1.0};
    /// Results each index contributes to the fusion.
    std::size_t candidates = 100;
    /// At most this many chunks of one source file in the top k (0: no cap).
    std::size_t per_source = 3;
    /// BM25F weights of title, headings and path per query (unset: the index's).
    std::optional<FieldWeights> field_weights;
    /// Fused results the reranker re-scores.
    std::size_t rerank_candidates = 50;
    /// Weight of the first-stage score in the rerank stage (rerank/reranker.hpp): the
    /// lexical rerankers (proximity, softmatch) combine by RerankFusion::lists with this
    /// weight, or lexical_fused_weight when it is 0; a cross-encoder by
    /// RerankFusion::score (0: its score alone).
    double rerank_weight = 0.0;

    /// Throws InvalidArgument naming the first value out of its domain: k1, rrf_k or
    /// rerank_weight negative, b outside [0, 1], not two weights >= 0, candidates or
    /// rerank_candidates 0, a field weight negative, any of them not finite.
    void validate() const {
        const auto finite = [](double v) { return v == v && v - v == 0; };
        const auto at_least_0 = [&](double v, const char* name) {
            if (!finite(v) || v < 0) throw InvalidArgument(std::string("search settings: ") + name + " must be a finite number >= 0");
        };
        at_least_0(k1, "k1");
        if (!finite(b) || b < 0 || b > 1) throw InvalidArgument("search settings: b must be in [0, 1]");
        at_least_0(rrf_k, "rrf_k");
        if (weights.size() != 2) throw InvalidArgument("search settings: weights needs two numbers (BM25, vectors)");
        for (double w : weights) at_least_0(w, "each fusion weight");
        if (candidates == 0) throw InvalidArgument("search settings: candidates must be >= 1");
        if (rerank_candidates == 0) throw InvalidArgument("search settings: rerank_candidates must be >= 1");
        at_least_0(rerank_weight, "rerank_weight");
        if (field_weights)
            for (double w : {field_weights->title, field_weights->headings, field_weights->path}) at_least_0(w, "each field weight");
    }
};

/// Everything that shapes an engine: the index settings, what a generation is built with
/// (a change needs a rebuild, see same_index_settings; fixed once the engine exists),
/// the threads it runs on, and its search defaults.
struct EngineConfig {
    /// text/analyzer.hpp's with_analyzer names; "multilingual": each document in its
    /// language (English or French), queries in both, CJK bigrams.
    std::string analyzer = "multilingual";
    /// hashing[:DIM] | model2vec:DIR | vectors:FILE | transformer:DIR (embed/dispatch.hpp)
    std::string embedder = "hashing";
    std::string query_prefix, passage_prefix;
    /// Transformer embedders and cross-encoders: weights as float32 (none) or int8.
    TransformerQuantization quantize = TransformerQuantization::none;
    /// The BM25 variant (index/bm25/scoring.hpp).
    BM25Variant variant = BM25Variant::lucene;
    double delta = 0.5;
    std::size_t max_tokens = 400;
    std::optional<std::size_t> overlap;
    /// Who reads a chunk without the "groups" field: everyone (allow, the tool's
    /// --unlabelled public, the default) or only Principal::system() (deny: private).
    /// Collection's own default is deny; the engine's is allow (docs/filters.md).
    Unlabeled unlabeled = Unlabeled::allow;
    /// Threads of transformer embedding and reranking (0: every core); not saved.
    std::size_t threads = 0;
    /// The search defaults, saved with the index (Engine::set_search_defaults changes them).
    SearchSettings search;
};

/// Whether two configurations build the same index (analyzer, embedder, prefixes,
/// quantization, BM25 variant and delta, chunking, who reads unlabelled chunks).
[[nodiscard]] inline bool same_index_settings(const EngineConfig& a, const EngineConfig& b) {
    return a.analyzer == b.analyzer && a.embedder == b.embedder && a.query_prefix == b.query_prefix &&
           a.passage_prefix == b.passage_prefix && a.quantize == b.quantize && a.variant == b.variant &&
           a.delta == b.delta && a.max_tokens == b.max_tokens && a.overlap == b.overlap && a.unlabeled == b.unlabeled;
}

enum class SearchMode { bm25, vector, hybrid };
/// The search modes, in SearchMode's order.
inline constexpr Choice search_modes[] = {
    {"bm25", "lexical: exact words and identifiers"},
    {"vector", "the embedder's nearest neighbours"},
    {"hybrid", "both, fused by reciprocal rank fusion"},
};
[[nodiscard]] inline std::string search_mode_name(SearchMode m) {
    return std::string(search_modes[static_cast<std::size_t>(m)].name);
}
/// The mode called `name`; InvalidArgument, naming `what`, otherwise.
[[nodiscard]] inline SearchMode parse_search_mode(std::string_view name, std::string_view what = "search mode") {
    for (std::size_t i = 0; i < std::size(search_modes); ++i)
        if (search_modes[i].name == name) return static_cast<SearchMode>(i);
    throw InvalidArgument(std::string(what) + " '" + std::string(name) + "' is not " + choice_names(search_modes));
}
/// bm25 with the built-in hashing embedder (not a semantic model: fused with it, BM25 gets
/// worse), hybrid with a semantic one.
[[nodiscard]] inline SearchMode default_search_mode(const EngineConfig& c) {
    return c.embedder.rfind("hashing", 0) == 0 ? SearchMode::bm25 : SearchMode::hybrid;
}
/// The rerankers (rerank/reranker.hpp; docs/reranking.md).
inline constexpr Choice reranker_kinds[] = {
    {"none", "the first stage's order"},
    {"proximity", "the question's rare words close together"},
    {"softmatch", "the question's words or their nearest vectors"},
    {"cross-encoder:DIR", "a cross-encoder model folder scoring question and passage together"},
};
/// Throws InvalidArgument, naming `what`, unless `name` is one of reranker_kinds.
inline void check_reranker_name(std::string_view name, std::string_view what = "reranker") {
    if (name != "none" && name != "proximity" && name != "softmatch" &&
        !(name.starts_with("cross-encoder:") && name.size() > 14))
        throw InvalidArgument(std::string(what) + " '" + std::string(name) + "' is not " + choice_names(reranker_kinds));
}

/// One query to Engine::search.
struct EngineQuery {
    std::size_t k = 5;
    SearchMode mode = SearchMode::bm25;
    /// A filter in parse_filter's syntax (filter/filter.hpp); empty: none.
    std::string filter;
    /// More filters, and-ed with `filter` (the tool's repeated --filter): each is parsed
    /// on its own (parse_filters), so each may nest max_filter_depth levels and an error
    /// quotes it as written.
    std::vector<std::string> filters;
    /// Who asks. The default has no group: it sees only documents without "groups"
    /// (none when EngineConfig::unlabeled is deny).
    Principal principal;
    /// none, proximity, softmatch or cross-encoder:DIR.
    std::string reranker = "none";
    /// Check each result's source against the manifest (see the header comment).
    bool check_sources = true;
    /// This query's search settings (unset: the engine's, EngineConfig::search).
    std::optional<SearchSettings> search;
};

/// One result of Engine::search: the retrieval's Result, and what the engine knows of
/// its source.
struct EngineResult : Result {
    /// The chunk's source changed after it was indexed: its text may be outdated (set
    /// when EngineQuery::check_sources).
    bool stale = false;
};

struct EngineResults {
    /// Best first.
    std::vector<EngineResult> results;
    /// Sources of returned chunks that changed since indexing, and deleted sources whose
    /// chunks were excluded (paths, sorted).
    std::vector<std::string> stale_sources, deleted_sources;
};

/// What Engine::answer decided (answer/answer.hpp's Answer), and the sources it checked.
struct EngineAnswer : Answer {
    /// Sources of the passages that changed since indexing, and deleted sources whose
    /// chunks were excluded (paths, sorted).
    std::vector<std::string> stale_sources, deleted_sources;
};

/// A source reopened (Engine::reopen): its lines as the file holds them now, with their
/// citation, and whether the file still holds what was indexed.
struct SourceText {
    /// The source's path relative to the corpus root.
    std::string source;
    /// "path:first-last" ("path:first" for one line), or "path" for the whole file.
    std::string citation;
    /// The lines returned, 1-based and inclusive, numbered as the index numbers them (a
    /// leading BOM dropped, CRLF and CR as LF: chunk/chunk.hpp's normalize_source); 0 and 0
    /// when none are (the file is gone, or shorter now than the lines asked for).
    std::size_t first_line = 0, last_line = 0;
    /// The section asked for by "path:line" (its id, "path:line" of its heading), else empty.
    std::string section;
    /// Those lines now, joined by '\n' (no final line end).
    std::string text;
    /// Lines in the file now.
    std::size_t line_count = 0;
    /// The file's content differs from what was indexed: the lines of a section may have moved.
    bool changed = false;
    /// The file is gone (or no longer a regular file): no text.
    bool deleted = false;
};

/// What an index holds for one reader, and how fresh it is (Engine::status).
struct IndexStatus {
    /// The generation opened (0 when built in memory).
    std::uint64_t generation = 0;
    /// Chunks and sources the reader may read (a source with at least one such chunk).
    std::size_t chunks = 0, sources = 0;
    /// The folder the sources are read from.
    std::string corpus_root;
    /// Of those sources, the ones whose file changed since indexing, and the deleted ones
    /// (paths, sorted).
    std::vector<std::string> changed_sources, deleted_sources;
};

/// One pipeline of Engine::evaluate: the retrieval of an EngineQuery (mode, principal,
/// reranker; no filter, sources not checked) and the answer stage of `answer`.
struct EvaluationOptions {
    SearchMode mode = SearchMode::bm25;
    /// The report's name (empty: the mode's name).
    std::string name;
    Principal principal;
    std::string reranker = "none";
    /// Hybrid fusion weights of this pipeline (empty: the search settings').
    std::vector<double> weights;
    /// The search settings of this pipeline (unset: the engine's, EngineConfig::search).
    std::optional<SearchSettings> search;
    /// Ranking depth evaluated (0: the search settings' candidates). Up to candidates, the first
    /// answer.passages entries are exactly what Engine::answer reads.
    std::size_t depth = 0;
    /// The answer stage whose confidence is computed per question (passages, floor,
    /// coverage and confidence options; the evidence is not built).
    AnswerOptions answer;
    /// Called after each question.
    std::function<void()> tick;
};

/// A pipeline of an evaluation run (engine/evaluation_run.hpp): a mode, and for hybrid its fusion weights.
struct EvaluationPipeline {
    SearchMode mode = SearchMode::bm25;
    /// Hybrid only; empty: the search settings' (EngineConfig::search).
    std::vector<double> weights;
};

/// What sync() did, in sources (files) and chunks.
struct SyncCounts {
    std::size_t added = 0, changed = 0, removed = 0, unchanged = 0;
    /// Among `changed`, the sources re-indexed only because their contexts changed (the
    /// rules that apply to them, or the context command).
    std::size_t contexts = 0;
    /// Among `unchanged`, the sources whose record was refreshed (same content, another
    /// modification time).
    std::size_t touched = 0;
    /// Chunks and sources in the engine afterwards.
    std::size_t chunks = 0, sources = 0;
};

/// Progress of build/sync: (stage, done, total).
using EngineProgress = std::function<void(std::string_view, std::size_t, std::size_t)>;

}  // namespace ragpp
