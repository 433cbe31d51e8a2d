// The ragpp tool's side of ragpp::Engine (see engine.hpp): options and progress bars.
#include "engine.hpp"

#include "progress.hpp"

#include <ragpp/engine/documents.hpp>
#include <ragpp/engine/engine.hpp>
#include <ragpp/engine/evaluation_run.hpp>
#include <ragpp/engine/index_folder.hpp>

#include <ragpp/chunk/chunk_types.hpp>
#include <ragpp/chunk/front_matter.hpp>
#include <ragpp/text/analyzer.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace cli {

namespace {

/// The library's embedder, a malformed spec reported as a usage error.
ragpp::AnyEmbedder make_embedder(const EngineConfig& c) {
    check_embedder_spec(c.embedder);
    return ragpp::make_any_embedder(c);
}

/// A progress bar fed by the engine's (stage, done, total) callback.
ragpp::EngineProgress bar_for(std::shared_ptr<std::unique_ptr<Progress>> bar, bool enabled) {
    if (!enabled) return {};
    auto last = std::make_shared<std::size_t>(0);
    return [bar, last](std::string_view stage, std::size_t done, std::size_t total) {
        if (!*bar) *bar = std::make_unique<Progress>(std::string(stage), total, true);
        if (done > *last) (*bar)->tick(done - *last);
        *last = done;
    };
}

}  // namespace

// --- options ----------------------------------------------------------------------

void check_embedder_spec(const std::string& spec) {
    usage_of([&] { ragpp::check_embedder_spec(spec, "--embedder"); });
}

void declare_engine_options(ArgParser& p, bool with_chunking) {
    p.option("analyzer", "NAME",
             "BM25 analyzer: multilingual (each document in its language, English or French; queries in both; CJK "
             "bigrams), standard, english, french or cjk",
             "multilingual");
    declare_embedder_options(p);
    p.option("variant", "NAME", "BM25 variant: lucene, robertson, atire, bm25l, bm25+, rank_bm25.BM25Okapi, ...",
             "lucene")
        .option("delta", "X", "BM25L/BM25+ delta", "0.5");
    if (with_chunking)
        p.option("max-tokens", "N", "largest chunk of a .md/.rst/.txt file, in words", "400")
            .option("overlap", "N", "words shared by consecutive parts of a long section [default: 15% of max-tokens]");
    p.option("unlabelled", "public|private",
             "who reads a note without a groups field: everyone (public), or only --as-all (private)", "public");
}

void declare_embedder_options(ArgParser& p) {
    p.option("embedder", "SPEC", "vector embedder: " + ragpp::choice_help(ragpp::embedder_kinds), "hashing")
        .option("query-prefix", "TEXT", "prepended to queries before embedding; E5 models need \"query: \"", "")
        .option("passage-prefix", "TEXT", "prepended to passages before embedding; E5 models need \"passage: \"", "")
        .flag("e5", "the E5 prefixes: --query-prefix 'query: ' --passage-prefix 'passage: '")
        .option("quantize", "none|int8",
                "transformer embedders: linear layers in float32 (none) or dynamic int8 (about 2.8x faster, 4.7x on CPUs with AMX; cosine >= 0.99)",
                "none");
}

void declare_threads_option(ArgParser& p) {
    p.option("threads", "N", "threads of transformer embedding and cross-encoder reranking (0: every core)", "0");
}

void declare_search_options(ArgParser& p) {
    p.option("k1", "X", "BM25 k1 (term frequency saturation)", "0.9")
        .option("b", "X", "BM25 b (length normalisation)", "0.4")
        .option("rrf-k", "X", "reciprocal rank fusion constant", "60")
        .option("weights", "W1,W2", "fusion weights of BM25 and vector search in hybrid mode", "1,1")
        .option("candidates", "N", "results each index contributes to the fusion", "100")
        .option("per-source", "N", "at most N chunks of one source file in the top k (0: no cap)", "3")
        .option("field-weights", "T,H,P",
                "BM25F weights of the title, heading path and source path fields (body 1) [default: the index's, 3,1,1]");
}

std::vector<double> parse_weights(const std::string& text, const std::string& what) {
    return number_list(text, what, 2, "BM25's weight and the vector index's");
}

void apply_search_options(const ArgParser& p, ragpp::SearchSettings& s) {
    s.k1 = p.number("k1");
    s.b = p.number("b");
    s.rrf_k = p.number("rrf-k");
    s.candidates = p.count("candidates");
    s.weights = parse_weights(p.get("weights"), "--weights");
    s.per_source = p.count("per-source");
    if (p.given("field-weights")) {  // given empty is a mistake, not "the index's"
        const auto w = number_list(p.get("field-weights"), "--field-weights", 3, "title, headings, path");
        s.field_weights = ragpp::FieldWeights{w[0], w[1], w[2]};
    }
}

void check_chunking(const EngineConfig& c) {
    ragpp::ChunkOptions o;
    o.max_tokens = c.max_tokens;
    o.overlap = c.overlap;
    usage_of([&] { o.validate("chunking"); });
}

namespace {

/// The embedder's options into `s`: every one, or (`given_only`) those on the command line.
void read_embedder_settings(const ArgParser& p, bool given_only, ragpp::IndexSettings& s) {
    const auto take = [&](const char* name) { return !given_only || p.given(name); };
    if (take("embedder")) s.embedder = p.get("embedder");
    if (take("quantize")) s.quantize = usage_of([&] { return ragpp::parse_transformer_quantization(p.get("quantize")); });
    if (p.has("e5")) {
        if (p.given("query-prefix") || p.given("passage-prefix"))
            throw UsageError("--e5 sets both prefixes: do not give --query-prefix or --passage-prefix with it");
        s.query_prefix = "query: ";
        s.passage_prefix = "passage: ";
        return;
    }
    if (take("query-prefix")) s.query_prefix = p.get("query-prefix");
    if (take("passage-prefix")) s.passage_prefix = p.get("passage-prefix");
}

/// The index-shaping options: every one, or (`given_only`) those on the command line.
ragpp::IndexSettings read_index_settings(const ArgParser& p, bool given_only) {
    const auto take = [&](const char* name) { return !given_only || p.given(name); };
    ragpp::IndexSettings s;
    if (take("analyzer")) s.analyzer = p.get("analyzer");
    read_embedder_settings(p, given_only, s);
    if (take("variant")) s.variant = usage_of([&] { return ragpp::parse_bm25_variant(p.get("variant")); });
    if (take("delta")) s.delta = p.number("delta");
    if (p.has("max-tokens") && take("max-tokens")) s.max_tokens = p.count("max-tokens");
    if (p.has("overlap")) s.overlap = p.count("overlap");
    if (take("unlabelled")) {
        const std::string unlabelled = p.get("unlabelled");
        if (unlabelled != "public" && unlabelled != "private")
            throw UsageError("--unlabelled must be public or private, not '" + unlabelled + "'");
        s.unlabeled = unlabelled == "public" ? ragpp::Unlabeled::allow : ragpp::Unlabeled::deny;
    }
    return s;
}

}  // namespace

ragpp::IndexSettings index_settings(const ArgParser& p) {
    auto s = read_index_settings(p, true);
    if (s.embedder) check_embedder_spec(*s.embedder);
    return s;
}

EngineConfig engine_config(const ArgParser& p) {
    EngineConfig c = read_index_settings(p, false).over({});
    ragpp::with_analyzer(c.analyzer, [](auto) { return 0; });  // validates the name
    check_chunking(c);
    return c;
}

void apply_embedder_options(const ArgParser& p, EngineConfig& c) {
    ragpp::IndexSettings s;
    read_embedder_settings(p, false, s);
    c = s.over(std::move(c));
}

void declare_rerank_options(ArgParser& p) {
    p.option("rerank-candidates", "N", "fused results the reranker re-scores", "50")
        .option("rerank-weight", "X",
                "weight of the first-stage score added to the reranker's (0: proximity and softmatch add each "
                "list's score over its best with their default weight, a cross-encoder decides alone)",
                "0");
}

void apply_rerank_options(const ArgParser& p, ragpp::SearchSettings& s) {
    s.rerank_candidates = p.count("rerank-candidates");
    if (s.rerank_candidates == 0) throw UsageError("--rerank-candidates must be >= 1");
    s.rerank_weight = p.number("rerank-weight");
    if (!(s.rerank_weight >= 0)) throw UsageError("--rerank-weight must be >= 0");
}

const std::string& check_reranker(const std::string& name) {
    usage_of([&] { ragpp::check_reranker_name(name, "--rerank"); });
    return name;
}

ragpp::EvaluationPipeline parse_pipeline(const std::string& spec) {
    const auto colon = spec.find(':');
    ragpp::EvaluationPipeline p{parse_mode(spec.substr(0, colon)), {}};
    if (colon != std::string::npos) {
        if (p.mode != Mode::hybrid) throw UsageError("--mode '" + spec + "': only hybrid takes weights (hybrid:W1,W2)");
        p.weights = parse_weights(spec.substr(colon + 1), "--mode " + spec);
    }
    return p;
}

Mode parse_mode(const std::string& name) {
    return usage_of([&] { return ragpp::parse_search_mode(name, "--mode"); });
}
std::string mode_help() {
    return ragpp::choice_help(ragpp::search_modes) +
           " [default: bm25 with the built-in hashing embedder, hybrid with a semantic one]";
}
Mode default_mode(const EngineConfig& c) { return ragpp::default_search_mode(c); }
Mode parse_mode_or_default(const std::string& name, const EngineConfig& c) {
    return name.empty() ? default_mode(c) : parse_mode(name);
}
std::string mode_name(Mode m) { return ragpp::search_mode_name(m); }
std::string vector_list_note(Mode mode, const std::string& mode_option, const std::string& embedder,
                             const ragpp::SearchSettings& s) {
    if (mode == Mode::bm25 && mode_option.empty())  // the default pipeline: bm25 only with a hashing embedder
        return "vector list not used: the " + embedder + " embedder is not semantic, so the default pipeline is bm25 "
               "(--mode hybrid or --mode vector consults it; ragpp index --embedder model2vec:DIR gives semantic vectors)";
    if (mode == Mode::bm25) return "vector list not used (--mode bm25)";
    if (mode == Mode::hybrid && s.weights.size() == 2 && s.weights[1] == 0)
        return "vector list not used (--weights gives it weight 0)";
    return "";
}

ragpp::RowMatrixXf embed_texts(const EngineConfig& config, const std::vector<std::string>& texts, ragpp::Role role,
                               bool progress) {
    const ragpp::AnyEmbedder embedder = make_embedder(config);
    ragpp::RowMatrixXf out(static_cast<Eigen::Index>(texts.size()), static_cast<Eigen::Index>(embedder.dimension()));
    Progress bar("embedding", texts.size(), progress);
    constexpr std::size_t slice = 256;
    for (std::size_t i = 0; i < texts.size(); i += slice) {
        const std::size_t n = std::min(slice, texts.size() - i);
        out.middleRows(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(n)) =
            embedder.embed_batch(std::span<const std::string>(texts.data() + i, n), role);
        bar.tick(n);
    }
    bar.finish();
    return out;
}

std::vector<double> rerank_texts(const EngineConfig& config, const std::string& spec, const std::string& query,
                                 const std::vector<std::string>& passages) {
    check_reranker(spec);
    const auto reranker = ragpp::make_cross_encoder(config, spec);
    const std::vector<std::string_view> views(passages.begin(), passages.end());
    return (*reranker)(query, views);
}

std::string citation(const ragpp::Document& doc) {
    std::string out = doc.id;
    if (auto it = doc.metadata.find("heading_path"); it != doc.metadata.end())
        if (const auto* path = std::get_if<std::vector<std::string>>(&it->second); path && !path->empty()) {
            out += "  ";
            for (std::size_t i = 0; i < path->size(); ++i) out += (i ? " > " : "") + (*path)[i];
        }
    return out;
}

// --- access, freshness, corpus -------------------------------------------------------

void declare_access_options(ArgParser& p) {
    p.option("as", "GROUP[,GROUP...]",
             "search as a member of these groups: documents with a groups field are visible only to their groups "
             "(without --as: only documents without groups, none if indexed with --unlabelled private)")
        .flag("as-all", "see every document whatever its groups (administrators)");
}

ragpp::Principal principal(const ArgParser& p) {
    if (p.has("as-all")) {
        if (p.has("as")) throw UsageError("--as and --as-all exclude each other");
        return ragpp::Principal::system();
    }
    std::vector<std::string> groups;
    if (p.has("as")) {
        std::stringstream ss(p.get("as"));
        for (std::string g; std::getline(ss, g, ',');) {
            // " hr" is hr: spaces around a name are not part of it.
            const auto b = g.find_first_not_of(" \t"), e = g.find_last_not_of(" \t");
            g = b == std::string::npos ? std::string() : g.substr(b, e - b + 1);
            if (g.empty()) throw UsageError("--as '" + p.get("as") + "': an empty group name");
            if (const std::string why = ragpp::group_name_problem(g); !why.empty())
                throw UsageError("--as '" + printable(p.get("as")) + "': '" + printable(g) + "' is no group name: it " + why);
            groups.push_back(g);
        }
        if (groups.empty()) throw UsageError("--as needs at least one group");
    }
    return ragpp::Principal::with_groups(std::move(groups));
}

void declare_check_sources_option(ArgParser& p) {
    p.option("check-sources", "on|off",
             "check each result's source file: a deleted one is never served, a changed one is flagged stale", "on");
}

bool check_sources(const ArgParser& p) {
    const std::string v = p.get("check-sources");
    if (v != "on" && v != "off") throw UsageError("--check-sources must be on or off, not '" + v + "'");
    return v == "on";
}

std::string corpus_help() {
    std::string exts;
    for (const auto& e : ragpp::CorpusOptions{}.extensions) exts += (exts.empty() ? "" : "/") + e;
    return "a folder of " + exts + " files, a .jsonl file or a BEIR folder";
}

void declare_corpus_options(ArgParser& p) {
    p.flag("follow-symlinks", "follow symbolic links that lead out of the corpus folder (skipped with a note otherwise)")
        .flag("skip-unreadable", "skip unreadable files and folders with a note (an error otherwise)")
        .flag("hidden", "walk hidden files and folders too (a name starting with '.'; .git never)")
        .flag("no-ignore", "do not read .gitignore, .ignore and .ragppignore files")
        .flag("verbose", "list every file and folder the walk skipped, with the reason")
        .option("contexts", "FILE",
                "a contexts file: lines 'PATTERN: description' whose description is added before each chunk of the "
                "files the pattern matches (besides the corpus root's .ragpp-contexts; docs/contexts.md); none: no file")
        .option("context-command", "CMD",
                "a shell command asked for one line of context per chunk (a JSON object of the document and the chunk "
                "on its stdin); answers are kept in the index and asked again only for new chunks; none: no command")
        .option("context-timeout", "S", "seconds the context command may take for one chunk", "60");
}

namespace {
/// An option's value, "none" as "".
std::string unless_none(const std::string& v) { return v == "none" ? std::string() : v; }
}  // namespace

void apply_context_options(const ArgParser& p, ragpp::IndexFolderOptions& o) {
    if (p.given("contexts")) o.contexts_file = unless_none(p.get("contexts"));
    if (p.given("context-command")) o.context_command = unless_none(p.get("context-command"));
    if (p.given("context-timeout")) o.context_timeout = p.number("context-timeout");
}

CorpusSettings corpus_options(const ArgParser& p) {
    CorpusSettings s;
    s.options.follow_symlinks_outside = p.has("follow-symlinks");
    s.options.skip_unreadable = p.has("skip-unreadable");
    s.options.hidden = p.has("hidden");
    s.options.ignore_files = !p.has("no-ignore");
    s.walk_given = p.has("follow-symlinks") || p.has("skip-unreadable") || p.has("hidden") || p.has("no-ignore");
    if (p.given("contexts")) s.options.contexts_file = unless_none(p.get("contexts"));
    if (p.given("context-command")) s.options.context_command = unless_none(p.get("context-command"));
    s.options.context_timeout = p.number("context-timeout");
    s.verbose = p.has("verbose");
    return s;
}

void print_notes(const std::vector<std::string>& notes) {
    for (const auto& n : notes) std::fprintf(stderr, "note: %s\n", printable(n).c_str());
}

namespace {

/// After a build or sync: the scan's notes, each binary (note) and not-UTF-8 (warning)
/// file, every other skipped entry with --verbose, the summary of what was skipped, and
/// a warning per locked note.
void report_corpus(const std::vector<std::string>& notes, const std::vector<ragpp::SkippedPath>& skipped,
                   const std::vector<std::pair<std::string, std::string>>& locked, bool verbose) {
    print_notes(notes);
    for (const auto& s : skipped) {
        const std::string name = printable(s.path + (s.folder ? "/" : ""));
        if (s.reason == ragpp::SkipReason::binary)
            std::fprintf(stderr, "note: skipped '%s': binary (a NUL byte in its first 8 KiB)\n", name.c_str());
        else if (s.reason == ragpp::SkipReason::not_utf8)
            std::fprintf(stderr, "warning: skipped '%s': not valid UTF-8 (%s)\n", name.c_str(), s.detail.c_str());
        else if (verbose)
            std::fprintf(stderr, "note: skipped '%s' (%s)\n", name.c_str(), std::string(ragpp::skip_reason_name(s.reason)).c_str());
    }
    if (const std::string summary = ragpp::skipped_summary(skipped); !summary.empty())
        std::fprintf(stderr, "note: skipped: %s%s\n", summary.c_str(), verbose ? "" : " (--verbose lists them)");
    for (const auto& [source, reason] : locked)
        std::fprintf(stderr, "warning: '%s' is readable by nobody but --as-all: %s\n", printable(source).c_str(),
                     printable(reason).c_str());
}

void report_corpus(const ragpp::Engine& engine, bool verbose) {
    report_corpus(engine.notes(), engine.skipped(), engine.locked_sources(), verbose);
}

}  // namespace

void warn_stale(const std::vector<std::string>& stale_sources) {
    for (const auto& s : stale_sources)
        std::fprintf(stderr, "warning: '%s' changed after it was indexed: its passages may be outdated (run ragpp index "
                             "again)\n", printable(s).c_str());
}

// --- the engine, with progress bars ------------------------------------------------------

ragpp::IndexFolderReport index_folder(const std::filesystem::path& corpus, const std::filesystem::path& out,
                                      ragpp::IndexFolderOptions options, bool verbose, bool progress) {
    auto bar = std::make_shared<std::unique_ptr<Progress>>();
    options.progress = bar_for(bar, progress);
    const auto report = [&] {
        try {
            return ragpp::index_folder(corpus, out, options);
        } catch (const ragpp::IndexRequestError& e) {  // the options asked for something impossible
            throw UsageError(e.what());
        }
    }();
    if (*bar) (*bar)->finish();
    report_corpus(report.notes, report.skipped, report.locked, verbose);
    return report;
}

Engine build_engine(const std::filesystem::path& corpus, const EngineConfig& config, const CorpusSettings& options,
                    bool progress) {
    make_embedder(config);  // a malformed --embedder is a usage error
    auto bar = std::make_shared<std::unique_ptr<Progress>>();
    auto engine = ragpp::Engine::build(corpus, config, options.options, bar_for(bar, progress));
    if (*bar) (*bar)->finish();
    report_corpus(engine, options.verbose);
    return engine;
}

ragpp::EngineResults search(const Engine& engine, const std::string& query, const ragpp::EngineQuery& q) {
    check_reranker(q.reranker);
    try {
        return engine.search(query, q);
    } catch (const ragpp::InvalidArgument& e) {  // a query without any searchable term
        throw UsageError(e.what());
    }
}

ragpp::EvaluationRunReport evaluate(const Engine& engine, ragpp::QuestionSet questions, const ragpp::EvaluationPlan& plan,
                                    bool progress) {
    auto p = plan;
    std::unique_ptr<Progress> bar;  // one per pipeline
    if (progress)
        p.progress = [&](std::string_view stage, std::size_t done, std::size_t total) {
            if (done == 0) bar = std::make_unique<Progress>(std::string(stage), total, true);
            else if (bar) bar->tick();
            if (bar && done == total) bar.reset();
        };
    return ragpp::run_evaluation(engine, std::move(questions), p);
}

}  // namespace cli
