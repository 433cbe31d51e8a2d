// ragpp index CORPUS --out DIR: chunk and index a corpus, save the index folder.
#include "cli.hpp"
#include "engine.hpp"

#include <chrono>
#include <cstdio>
#include <string>

namespace {

int run_index(cli::ArgParser& p) {
    const auto start = std::chrono::steady_clock::now();
    const bool progress = !p.has("quiet") && cli::stderr_is_terminal();
    // The decision (update, or rebuild and why) is the library's: ragpp::index_folder.
    ragpp::IndexFolderOptions options;
    options.settings = cli::index_settings(p);
    options.rebuild = p.has("rebuild");
    options.threads = p.count("threads");
    const auto corpus_settings = cli::corpus_options(p);
    // No walk flag: walk as the index was walked (its recorded options); any: as given.
    if (corpus_settings.walk_given) options.corpus = corpus_settings.options;
    cli::apply_context_options(p, options);
    const std::string corpus = p.get("CORPUS"), out = p.get("out");
    options.decided = [&](const ragpp::IndexFolderReport& r) {
        if (r.action == ragpp::IndexAction::rebuilt_unreadable)
            std::fprintf(stderr, "note: the index in '%s' cannot be updated (%s): rebuilding it\n",
                         cli::printable(out).c_str(), cli::printable(r.reason).c_str());
        else if (r.action == ragpp::IndexAction::rebuilt_settings)
            std::fprintf(stderr, "note: '%s' was built with other settings than the ones given (%s): rebuilding it\n",
                         cli::printable(out).c_str(), cli::printable(r.reason).c_str());
    };
    const auto r = cli::index_folder(corpus, out, options, corpus_settings.verbose, progress);
    for (const auto& rule : r.unused_context_rules)
        std::fprintf(stderr, "note: the context rule %s applies to no file\n", cli::printable(rule).c_str());
    if (r.action == ragpp::IndexAction::updated)
        std::printf("%zu added, %zu changed%s, %zu removed, %zu unchanged\n", r.counts.added, r.counts.changed,
                    r.counts.contexts ? (" (" + std::to_string(r.counts.contexts) + " for their contexts)").c_str() : "",
                    r.counts.removed, r.counts.unchanged);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // A folder of files, or one .jsonl / BEIR corpus of documents.
    std::printf("indexed %zu chunks from %zu %s of %s into %s in %.1f s (analyzer %s, embedder %s)\n", r.counts.chunks,
                r.files ? r.counts.sources : r.counts.chunks, r.files ? "files" : "documents",
                cli::printable(corpus).c_str(), cli::printable(out).c_str(), s, r.config.analyzer.c_str(),
                r.config.embedder.c_str());
    return 0;
}

const cli::Register register_index{{"index", "chunk and index a corpus into an index folder",
                         [](cli::ArgParser& p) {
                             p.positional("CORPUS", cli::corpus_help())
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
                                 "re-read whole when it changed.\n"
                                 "The walk flags (--hidden, --no-ignore, --follow-symlinks, --skip-unreadable) are "
                                 "recorded with the index: an update given none of them walks the corpus as the index "
                                 "was walked; given any, as given (those not given are off); --rebuild starts from the "
                                 "defaults.");
                         },
                         run_index}};

}  // namespace
