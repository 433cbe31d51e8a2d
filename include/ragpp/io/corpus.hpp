// ragpp: walking a corpus folder, the files an index is built from.
//
// scan_corpus(root) lists the regular files under `root` whose extension is one of
// CorpusOptions::extensions, each with its source id (its path relative to the root,
// with '/'), size and modification time, sorted by id. It leaves out what a notes tool
// hides, as ripgrep does (each left-out entry in CorpusScan::skipped, with its reason):
// - hidden files and folders (a name starting with '.': .trash/, .obsidian/, .git/),
//   unless CorpusOptions::hidden; a folder named .git is never walked;
// - what the .gitignore, .ignore and .ragppignore files of the root and of every folder
//   below it exclude (gitignore syntax, io/ignore.hpp; a deeper folder's rules beat its
//   parents'), unless !CorpusOptions::ignore_files. An excluded folder is not entered.
//   Ignore files above the root, git's global excludes and .git/info/exclude are not read;
// - binary files: a NUL byte in the first 8 KiB (git's and ripgrep's test);
// - files whose first 8 KiB are not valid UTF-8 (the rest is checked when the file is
//   read: Engine skips such a file then, with the same reason).
// The walk is safe on folders nobody curated:
// - symbolic links inside the root are followed; a link out of the root is skipped with
//   a note (or followed with `follow_symlinks_outside`: the files found through it get
//   ids under the link's own path, never "../");
// - the same file reached twice (a link to a file already found, a hard link, a path
//   through a linked folder) is an alias: the first path is kept, the other skipped with
//   a note naming both (dedupe by device and inode). Real paths are walked before any
//   link, so a link never displaces the file it points to;
// - link loops terminate (a folder is walked once);
// - an unreadable file or folder is an IoError naming it, or a note when
//   `skip_unreadable`;
// - every other error is an IoError naming the path: no std::filesystem exception
//   escapes.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <map>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ragpp/core/error.hpp>
#include <ragpp/detail/file_io.hpp>
#include <ragpp/io/corpus_scan.hpp>
#include <ragpp/io/detail/corpus.hpp>

namespace ragpp {

/// The files under `root` (see the header comment for the rules). Throws IoError naming
/// the path when `root` is not a readable folder, or when a file or folder under it is
/// unreadable (unless `skip_unreadable`).
[[nodiscard]] inline CorpusScan scan_corpus(const std::filesystem::path& root, const CorpusOptions& options = {}) {
    std::error_code ec;
    const auto canonical = std::filesystem::canonical(root, ec);
    if (ec) throw IoError("cannot read the corpus folder '" + root.string() + "': " + ec.message());
    try {
        return detail::corpus::Walker(canonical, options).run();
    } catch (const std::filesystem::filesystem_error& e) {
        throw IoError("cannot walk the corpus folder '" + root.string() + "': " + e.what());
    }
}

}  // namespace ragpp
