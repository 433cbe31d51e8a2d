// ragpp: walking a corpus folder (declarations first; implementation follows).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <ragpp/core/error.hpp>

namespace ragpp {

struct CorpusOptions {
    std::vector<std::string> extensions{".md", ".markdown", ".rst", ".txt"};
    bool follow_symlinks_outside = false;
    bool skip_unreadable = false;
};

struct SourceFile {
    std::string path;                // relative to the root, generic ('/') form: the source id
    std::filesystem::path absolute;
    std::uint64_t size = 0;
    std::int64_t mtime_ns = 0;       // modification time, nanoseconds since the epoch
    std::int64_t scanned_ns = -1;    // when size and mtime were read (see sources.hpp)
};

struct CorpusScan {
    std::vector<SourceFile> files;   // sorted by path
    std::vector<std::string> notes;  // what was skipped and why, each naming the path
};

inline CorpusScan scan_corpus(const std::filesystem::path&, const CorpusOptions& = {}) { throw UnsupportedError("not yet"); }

}  // namespace ragpp
