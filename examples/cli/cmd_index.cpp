// ragpp index CORPUS --out DIR: chunk and index a corpus, save the index folder.
#include "cli.hpp"
#include "engine.hpp"

#include <chrono>
#include <cstdio>
#include <set>
#include <string>
#include <variant>

namespace {

int run_index(cli::ArgParser& p) {
    const auto start = std::chrono::steady_clock::now();
    const bool progress = !p.has("quiet") && cli::stderr_is_terminal();
    cli::EngineConfig config = cli::usage_of([&] { return cli::engine_config(p); });
    cli::check_embedder_spec(config.embedder);
    config.threads = p.count("threads");
    auto docs = cli::load_corpus(p.get("CORPUS"), config, progress);
    const std::size_t n = docs.size();
    // Files: the distinct sources of the chunks (a .jsonl or BEIR corpus has documents, no "source").
    std::set<std::string> sources;
    bool from_files = true;
    for (const auto& d : docs) {
        const auto it = d.metadata.find("source");
        const auto* s = it == d.metadata.end() ? nullptr : std::get_if<std::string>(&it->second);
        from_files = from_files && s;
        sources.insert(s ? *s : d.id);
    }
    const auto engine = cli::Engine::build(std::move(docs), config, progress);
    engine.save(p.get("out"));
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("indexed %zu chunks from %zu %s of %s into %s in %.1f s (analyzer %s, embedder %s)\n", n, sources.size(),
                from_files ? "files" : "documents", p.get("CORPUS").c_str(), p.get("out").c_str(), s,
                config.analyzer.c_str(), config.embedder.c_str());
    return 0;
}

const cli::Register reg{{"index", "chunk and index a corpus into an index folder",
                         [](cli::ArgParser& p) {
                             p.positional("CORPUS", "a folder of .md/.rst/.txt files, a .jsonl file or a BEIR folder")
                                 .option("out", "DIR", "the index folder to write")
                                 .flag("quiet", "no progress bar");
                             cli::declare_engine_options(p);
                             cli::declare_threads_option(p);
                             p.epilog(
                                 "Role prefixes: E5 models (intfloat/e5-*, multilingual-e5-*) expect \"query: \" before "
                                 "a query and \"passage: \" before a passage; without them their results degrade "
                                 "silently. Pass --query-prefix 'query: ' --passage-prefix 'passage: ' for them.\n"
                                 "Chunk ids are the file paths relative to CORPUS as given, with the line of each "
                                 "section's heading: 'guide/install.md:12'.");
                         },
                         run_index}};

}  // namespace
