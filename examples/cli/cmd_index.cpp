// ragpp index CORPUS --out DIR: chunk and index a corpus, save the index folder.
#include "cli.hpp"
#include "engine.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <system_error>

namespace {

int run_index(cli::ArgParser& p) {
    const auto start = std::chrono::steady_clock::now();
    const bool progress = !p.has("quiet") && cli::stderr_is_terminal();
    cli::EngineConfig config = cli::usage_of([&] { return cli::engine_config(p); });
    cli::check_embedder_spec(config.embedder);
    config.threads = p.count("threads");
    const auto corpus_options = cli::corpus_options(p);
    const std::string out = p.get("out");
    // An existing index is brought up to date (only what changed is re-read), unless
    // --rebuild or other index settings ask for a new one.
    std::optional<cli::Engine> engine;
    if (!p.has("rebuild")) {
        try {
            engine.emplace(cli::Engine::open(out, config.threads));
        } catch (const ragpp::NotFoundError&) {  // no index there yet
        }
        if (engine && !ragpp::same_index_settings(engine->config(), config)) {
            std::fprintf(stderr, "note: '%s' was built with other settings (analyzer, embedder, BM25 variant or "
                                 "chunking): rebuilding it\n", out.c_str());
            engine.reset();
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
