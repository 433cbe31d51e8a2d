// ragpp index CORPUS --out DIR: chunk and index a corpus, save the index folder.
#include "cli.hpp"
#include "engine.hpp"

#include <ragpp/io/generations.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <algorithm>
#include <optional>
#include <system_error>

namespace {

/// The settings of an update: the saved index's, with the index-shaping options given on
/// this command line over them (so `ragpp index notes --out idx` updates an index built
/// with --embedder X without repeating it; a different value asks for a rebuild).
cli::EngineConfig settings_for_update(const cli::ArgParser& p, cli::EngineConfig saved, const cli::EngineConfig& asked) {
    if (p.given("analyzer")) saved.analyzer = asked.analyzer;
    if (p.given("embedder")) saved.embedder = asked.embedder;
    if (p.given("query-prefix") || p.has("e5")) saved.query_prefix = asked.query_prefix;
    if (p.given("passage-prefix") || p.has("e5")) saved.passage_prefix = asked.passage_prefix;
    if (p.given("quantize")) saved.quantize = asked.quantize;
    if (p.given("variant")) saved.variant = asked.variant;
    if (p.given("delta")) saved.delta = asked.delta;
    if (p.given("max-tokens")) saved.max_tokens = asked.max_tokens, saved.overlap = asked.overlap;
    if (p.given("overlap")) saved.overlap = asked.overlap;
    if (p.given("unlabelled")) saved.unlabeled = asked.unlabeled;
    saved.threads = asked.threads;
    return saved;
}

/// UsageError when the index folder `out` is the corpus folder or inside it: the walk
/// would read the index's own files (refused rather than excluded, so that a corpus
/// means the same with and without its index).
void refuse_out_inside_corpus(const std::filesystem::path& corpus, const std::filesystem::path& out) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(corpus, ec)) return;  // a .jsonl file: nothing is walked
    const auto resolved = [&](const fs::path& p) {
        fs::path r = fs::weakly_canonical(fs::absolute(p, ec), ec);
        if (!ec && r.filename().empty()) r = r.parent_path();  // "corpus/" -> "corpus"
        return r;
    };
    const fs::path root = resolved(corpus), dir = resolved(out);
    if (ec) return;  // the build says what is wrong
    const auto [r, d] = std::mismatch(root.begin(), root.end(), dir.begin(), dir.end());
    if (r != root.end()) return;  // not inside
    throw cli::UsageError("--out '" + cli::printable(out.string()) + "' is " +
                          (d == dir.end() ? std::string("the corpus folder") : "inside the corpus folder '" +
                                                                                   cli::printable(corpus.string()) + "'") +
                          ": the index would be part of the corpus it indexes; write it elsewhere");
}

int run_index(cli::ArgParser& p) {
    const auto start = std::chrono::steady_clock::now();
    const bool progress = !p.has("quiet") && cli::stderr_is_terminal();
    cli::EngineConfig config = cli::usage_of([&] { return cli::engine_config(p); });
    cli::check_embedder_spec(config.embedder);
    config.threads = p.count("threads");
    const auto corpus_options = cli::corpus_options(p);
    const std::string out = p.get("out");
    refuse_out_inside_corpus(p.get("CORPUS"), out);
    ragpp::remove_partial_generations(out);  // what a killed run left (docs/persistence.md)
    // An existing index is brought up to date (only what changed is re-read), unless
    // --rebuild or other index settings ask for a new one.
    std::optional<cli::Engine> engine;
    if (!p.has("rebuild")) {
        try {
            // Verified: the chunks carried over into the new generation must be intact.
            engine.emplace(cli::Engine::open(out, config.threads, true));
        } catch (const ragpp::NotFoundError&) {  // no index there yet
        } catch (const ragpp::FormatError& e) {
            // An index of an older ragpp, or a damaged one: `index` is the command that
            // writes indexes, so it builds a new generation beside it (the old files stay
            // until the switch), saying why.
            std::fprintf(stderr, "note: the index in '%s' cannot be updated (%s): rebuilding it\n",
                         cli::printable(out).c_str(), cli::printable(e.what()).c_str());
        }
        if (engine) {
            config = settings_for_update(p, engine->config(), config);
            cli::check_chunking(config);  // --overlap given against the saved --max-tokens
            if (!ragpp::same_index_settings(engine->config(), config)) {
                std::fprintf(stderr, "note: '%s' was built with other settings (analyzer, embedder, BM25 variant, "
                                     "chunking or --unlabelled) than the ones given: rebuilding it\n", out.c_str());
                engine.reset();
            }
        }
    }
    if (engine) {
        const auto c = engine->sync(p.get("CORPUS"), corpus_options, progress);
        std::printf("%zu added, %zu changed, %zu removed, %zu unchanged\n", c.added, c.changed, c.removed, c.unchanged);
    } else {
        engine.emplace(cli::Engine::build(p.get("CORPUS"), config, corpus_options, progress));
    }
    engine->save(out);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // A folder of files, or one .jsonl / BEIR corpus of documents.
    const std::filesystem::path corpus = p.get("CORPUS");
    std::error_code ec;
    const bool files = std::filesystem::is_directory(corpus, ec) && !std::filesystem::exists(corpus / "corpus.jsonl", ec);
    std::printf("indexed %zu chunks from %zu %s of %s into %s in %.1f s (analyzer %s, embedder %s)\n", engine->size(),
                files ? engine->source_count() : engine->size(), files ? "files" : "documents", corpus.string().c_str(),
                out.c_str(), s, config.analyzer.c_str(), config.embedder.c_str());
    return 0;
}

const cli::Register reg{{"index", "chunk and index a corpus into an index folder",
                         [](cli::ArgParser& p) {
                             p.positional("CORPUS", "a folder of .md/.rst/.txt files, a .jsonl file or a BEIR folder")
                                 .option("out", "DIR", "the index folder to write, or to update when it holds an index")
                                 .flag("rebuild", "start over instead of updating an existing index")
                                 .flag("quiet", "no progress bar");
                             cli::declare_corpus_options(p);
                             cli::declare_engine_options(p);
                             cli::declare_threads_option(p);
                             p.epilog(
                                 "Role prefixes: E5 models (intfloat/e5-*, multilingual-e5-*) expect \"query: \" before "
                                 "a query and \"passage: \" before a passage; without them their results degrade "
                                 "silently. Pass --query-prefix 'query: ' --passage-prefix 'passage: ' for them.\n"
                                 "Chunk ids are the file paths relative to CORPUS as given, with the line of each "
                                 "section's heading: 'guide/install.md:12'.\n"
                                 "Over an existing index, only new, changed and deleted files are re-read; it prints "
                                 "'3 added, 1 changed, 2 removed, 410 unchanged'. A .jsonl or BEIR corpus is one source: "
                                 "re-read whole when it changed.");
                         },
                         run_index}};

}  // namespace
