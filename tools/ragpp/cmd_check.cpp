// ragpp check DIR: verify every byte of an index folder (search, ask and eval open it
// mapped and check sizes and structure only).
#include "cli.hpp"
#include "engine.hpp"

#include <cstdio>
#include <filesystem>

namespace {

int run_check(cli::ArgParser& p) {
    const std::string dir = p.get("DIR");
    const auto engine = ragpp::Engine::check(dir, 1);
    // The index may be intact and still read from a folder that is gone.
    std::error_code ec;
    if (!std::filesystem::is_directory(engine.corpus_root(), ec)) {
        std::fprintf(stderr,
                     "error: %s: generation %llu is intact, but its corpus root '%s' is not found: every source "
                     "looks deleted; re-index it (ragpp index) from the corpus's new place\n",
                     dir.c_str(), static_cast<unsigned long long>(engine.generation()),
                     engine.corpus_root().string().c_str());
        return 1;
    }
    std::printf("%s: generation %llu is intact: %zu chunks from %zu sources, every checksum verified\n", dir.c_str(),
                static_cast<unsigned long long>(engine.generation()), engine.size(), engine.source_count());
    return 0;
}

const cli::Register register_check{{"check", "verify every checksum and the consistency of an index folder",
                         [](cli::ArgParser& p) {
                             p.positional("DIR", "an index folder written by ragpp index")
                                 .epilog("Reads every byte of the current generation: each part's checksum, the\n"
                                         "structure of documents.bin, sources.bin, places.bin, metadata.bin, bm25.idx\n"
                                         "and vector.idx (every place and posting), that they hold the same chunks,\n"
                                         "and the source manifest. Exit status 0 when intact,\n"
                                         "1 with a message naming the damaged part otherwise, or when the corpus\n"
                                         "folder it was built from is gone. (search, ask and eval\n"
                                         "check sizes and structure on open, not every checksum.)");
                         },
                         run_check}};

}  // namespace
