// ragpp: what a corpus walk (scan_corpus, io/corpus.hpp) takes and gives: CorpusOptions, SourceFile, CorpusScan.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace ragpp {

struct CorpusOptions {
    /// The extensions of the files to keep (with the dot, compared exactly); empty: all.
    std::vector<std::string> extensions{".md", ".markdown", ".rst", ".txt"};
    /// A link whose target is outside the root: skipped with a note unless true.
    bool follow_symlinks_outside = false;
    /// An unreadable file or folder: a note instead of an IoError.
    bool skip_unreadable = false;
};

struct SourceFile {
    std::string path;               // relative to the root, generic ('/') form: the source id
    std::filesystem::path absolute; // the canonical root / path (through any link)
    std::uint64_t size = 0;
    std::int64_t mtime_ns = 0;      // modification time, nanoseconds since the epoch
    /// The file-system clock when the scan started (CLOCK_REALTIME_COARSE, the clock file
    /// times are taken from), before size and mtime were read. sources.hpp uses it to
    /// tell a file modified after it was recorded from one that was not (see there).
    std::int64_t scanned_ns = -1;
};

struct CorpusScan {
    std::vector<SourceFile> files;   // sorted by path
    std::vector<std::string> notes;  // what was skipped and why, each naming the path(s)
};

}  // namespace ragpp
