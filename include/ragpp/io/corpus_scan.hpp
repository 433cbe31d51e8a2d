// ragpp: what a corpus walk (scan_corpus, io/corpus.hpp) takes and gives: CorpusOptions,
// SourceFile, SkippedPath, CorpusScan.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ragpp {

struct CorpusOptions {
    /// The extensions of the files to keep (with the dot, compared exactly); empty: all.
    std::vector<std::string> extensions{".md", ".markdown", ".rst", ".txt"};
    /// A link whose target is outside the root: skipped with a note unless true.
    bool follow_symlinks_outside = false;
    /// An unreadable file or folder: a note instead of an IoError.
    bool skip_unreadable = false;
    /// Walk hidden files and folders (a name starting with '.'); skipped unless true.
    /// A folder named .git is never walked.
    bool hidden = false;
    /// Honour .gitignore, .ignore and .ragppignore files (io/ignore.hpp) in the root and
    /// in every folder below it.
    bool ignore_files = true;

    // Contexts (io/contexts.hpp), used by the Engine's build and sync of a folder of
    // files (not by the walk): rules from the corpus root's .ragpp-contexts file, then
    // from `contexts_file`; and a command asked for one line of context per chunk.
    /// A contexts file read besides the root's .ragpp-contexts ("": none).
    std::string contexts_file;
    /// A shell command run for each chunk: a JSON object on its stdin (source, document,
    /// chunk, heading_path, first_line, last_line), one line of context on its stdout ("": none).
    std::string context_command;
    /// Seconds the command may take for one chunk before it is killed and the run fails.
    double context_timeout = 60;
    /// Answers of the command known from an earlier generation (ContextAnswers), so a
    /// rebuild asks only about chunks it has not seen; null: none.
    std::shared_ptr<const std::map<std::uint64_t, std::string>> known_contexts;
};

/// Why the walk left a path out (SkippedPath::reason).
enum class SkipReason {
    hidden,    // a name starting with '.' (CorpusOptions::hidden)
    ignored,   // matched by an ignore file (CorpusOptions::ignore_files)
    binary,    // a NUL byte in its first 8 KiB
    not_utf8   // not valid UTF-8: its content, or its name (a folder's too)
};

[[nodiscard]] inline std::string_view skip_reason_name(SkipReason r) noexcept {
    switch (r) {
        case SkipReason::hidden: return "hidden";
        case SkipReason::ignored: return "ignored";
        case SkipReason::binary: return "binary";
        case SkipReason::not_utf8: return "not UTF-8";
    }
    return "?";
}

/// A file or folder the walk left out. Hidden and ignored entries are counted once per
/// folder (its content is not walked) and, for files, only when their extension is
/// wanted; binary and not-UTF-8 files are wanted files.
struct SkippedPath {
    std::string path;    // relative to the root, '/' (a folder's without a trailing '/')
    SkipReason reason = SkipReason::hidden;
    bool folder = false;
    std::string detail;  // not_utf8: where ("line 3, byte 0xE9", or "its name, byte 0xFF"); else empty
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
    /// Links, aliases and unreadable entries skipped, each naming the path(s).
    std::vector<std::string> notes;
    /// Hidden, ignored, binary and not-UTF-8 entries left out, in walk order.
    std::vector<SkippedPath> skipped;
};

/// "3 hidden, 2 ignored, 1 binary, 1 not UTF-8" (reasons with a count only; "" when none).
[[nodiscard]] inline std::string skipped_summary(const std::vector<SkippedPath>& skipped) {
    std::string out;
    for (SkipReason r : {SkipReason::hidden, SkipReason::ignored, SkipReason::binary, SkipReason::not_utf8}) {
        std::size_t n = 0;
        for (const auto& s : skipped) n += s.reason == r ? 1 : 0;
        if (n == 0) continue;
        if (!out.empty()) out += ", ";
        out += std::to_string(n) + " " + std::string(skip_reason_name(r));
    }
    return out;
}

}  // namespace ragpp
