// ragpp: an index folder whose parts are replaced atomically, as a whole.
//
// A folder `dir` holds generations: sub-folders "gen-NNNNNN", each with its parts (any
// files: bm25.idx, documents.jsonl, ...) and a manifest "generation.json" listing every
// part with its size and FNV-1a-64 checksum (detail/hash.hpp) plus the caller's `info`.
// The file "CURRENT" names the current generation and the size and checksum of its
// manifest:
//
//     ragpp-generations 1
//     gen-000007 1234 0123456789abcdef
//
// A GenerationWriter writes a new generation in "gen-NNNNNN.partial" beside the current
// one; commit() fsyncs every part, writes and fsyncs the manifest, renames the folder to
// "gen-NNNNNN", fsyncs `dir`, then switches with ONE rename of "CURRENT.tmp-<pid>" over
// "CURRENT" (and fsyncs `dir` again). Until that rename a reader opens the old
// generation, after it the new one; never a mix, since a reader follows only CURRENT and
// every name a manifest lists lives in that manifest's folder. A kill -9 at any instant
// or a full disk (any write failing with ENOSPC or EFBIG) therefore leaves `dir` opening
// as the old or the new generation. This is the design of LevelDB's CURRENT file and of
// Git's "write the objects, then move the ref" (cited for the idea; no code taken).
//
// Cleaning: after the switch, commit() removes generations other than the new one and
// the one that was current before it, leftover partial folders and pointer tmp files.
// The previous generation is kept until the next commit, so a reader that opened it
// just before the switch can still read its parts; open_generation() retries when a
// commit removes the generation it was checking. A reader that keeps opening part files
// by name after opening must finish before the second next commit; one that read them
// whole or mapped them keeps its bytes (an unlinked file stays readable through an open
// mapping on POSIX systems: docs/persistence.md).
//
// One writer at a time: a GenerationWriter holds an exclusive flock on "LOCK" in `dir`
// from its construction to its destruction (released by the kernel if the process
// dies); a second writer gets an IoError. Readers take no lock.
//
// Old layout: an index folder written by ragpp before generations (a top-level
// manifest.json of format "ragpp-index", version 1) is refused by open_generation() with
// a FormatError asking to rebuild it; the first commit into such a folder removes its
// files (manifest.json, documents.jsonl, bm25.idx, vector.idx) once the switch is done.
// Files that are not ragpp's are never removed.
#pragma once

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <sys/file.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <ragpp/core/error.hpp>
#include <ragpp/detail/file_io.hpp>
#include <ragpp/detail/hash.hpp>
#include <ragpp/io/detail/generations.hpp>
#include <ragpp/io/detail/open_generation.hpp>
#include <ragpp/io/generation_parts.hpp>

namespace ragpp {

/// Writes a new generation of the folder `dir` beside the current one; nothing is
/// visible until commit(). Not copyable; one writer per folder at a time (see above).
class GenerationWriter {
public:
    /// Creates `dir` if needed, takes its writer lock and creates the new generation's
    /// folder "gen-NNNNNN.partial" (N one more than any generation present, partial ones
    /// included), after removing the partial folders and pointer tmp files a dead writer left (it holds
    /// the lock, so no live writer owns them). IoError when `dir` cannot be created or
    /// another writer holds the lock.
    explicit GenerationWriter(std::filesystem::path dir) : dir_(std::move(dir)) {
        namespace fs = std::filesystem;
        namespace g = detail::generations;
        std::error_code ec;
        fs::create_directories(dir_, ec);
        if (ec) throw IoError("cannot create the index folder '" + dir_.string() + "': " + ec.message());
        lock_.emplace(dir_, false);
        try {
            previous_ = g::read_pointer(dir_).value_or(g::Pointer{}).generation;
            if (*previous_ == 0) previous_.reset();
        } catch (const Error&) {
            previous_.reset();  // an unreadable pointer: the new generation replaces it
        }
        std::uint64_t top = previous_.value_or(0);
        for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
            const auto name = it->path().filename().string();
            if (auto n = g::parse_folder(name, false)) top = std::max(top, *n);
            if (auto n = g::parse_folder(name, true)) top = std::max(top, *n);
        }
        if (ec) throw IoError("cannot list the index folder '" + dir_.string() + "': " + ec.message());
        generation_ = top + 1;  // above a dead writer's number too: a number is never used twice
        g::remove_partials(dir_);  // a dead writer's leftovers: this writer holds the lock
        legacy_ = g::legacy_version(dir_).has_value();
        partial_ = dir_ / (g::folder_name(generation_) + ".partial");
        if (::mkdir(partial_.c_str(), 0755) != 0) throw detail::io_error("create", partial_, errno);
    }
    GenerationWriter(const GenerationWriter&) = delete;
    GenerationWriter& operator=(const GenerationWriter&) = delete;

    /// Without a successful commit(): removes the new generation's folder; the current
    /// generation is untouched.
    ~GenerationWriter() {
        if (committed_) return;
        std::error_code ec;
        std::filesystem::remove_all(renamed_ ? dir_ / detail::generations::folder_name(generation_) : partial_, ec);
        if (!pointer_tmp_.empty()) std::filesystem::remove(pointer_tmp_, ec);
    }

    /// The number the generation will have once committed.
    [[nodiscard]] std::uint64_t generation() const noexcept { return generation_; }

    /// Where to write part `name` (a plain file name): the caller may write the file
    /// itself, e.g. BM25Index::save(w.path("bm25.idx")). InvalidArgument on a bad name.
    [[nodiscard]] std::filesystem::path path(std::string_view name) const {
        detail::generations::check_part_name(name, "GenerationWriter::path");
        return partial_ / std::string(name);
    }

    /// Writes part `name` with `bytes` (replacing a part of that name). IoError naming the
    /// file when the write fails (the part is then absent; the writer stays usable).
    void write(std::string_view name, std::string_view bytes) {
        check_open("write");
        detail::write_whole_file(path(name), bytes, false);
    }

    /// Makes the generation current (see the header comment for the steps) and returns
    /// its number. `info` is stored in the manifest and returned by open_generation().
    /// InvalidArgument when a file in the generation's folder is not a regular file or
    /// when called twice; IoError when a write, fsync or rename fails: then nothing
    /// changed (the current generation is still current) and this writer is spent.
    std::uint64_t commit(const nlohmann::json& info) {
        namespace fs = std::filesystem;
        namespace g = detail::generations;
        check_open("commit");
        failed_ = true;  // until the switch succeeds
        // 1. every part: fsync'ed, sized, checksummed.
        std::vector<GenerationPart> parts;
        std::error_code ec;
        for (fs::directory_iterator it(partial_, ec), end; !ec && it != end; it.increment(ec)) {
            const auto name = it->path().filename().string();
            if (name == g::manifest_name) continue;
            std::error_code sec;
            if (!fs::is_regular_file(it->symlink_status(sec)))
                throw InvalidArgument("GenerationWriter::commit: '" + it->path().string() + "' is not a regular file");
            parts.push_back({name, 0, 0});
        }
        if (ec) throw IoError("cannot list '" + partial_.string() + "': " + ec.message());
        std::sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
        for (auto& part : parts) {
            const auto file = partial_ / part.name;
            const auto fd = detail::open_fd_for_reading(file);
            const auto h = detail::hash_fd(fd.get(), file);
            if (::fsync(fd.get()) != 0) throw detail::io_error("fsync", file, errno);
            part.size = h.size;
            part.checksum = h.hash;
        }
        g::step("parts");
        // 2. the manifest, then the folder's entries, made durable.
        nlohmann::json m{{"format", g::manifest_format}, {"version", g::manifest_version}, {"generation", generation_}};
        m["parts"] = nlohmann::json::array();
        for (const auto& p : parts) m["parts"].push_back({{"name", p.name}, {"size", p.size}, {"fnv1a64", detail::hex64(p.checksum)}});
        m["info"] = info;
        std::string text;
        try {
            text = m.dump(1) + "\n";
        } catch (const nlohmann::json::exception& e) {
            throw InvalidArgument(std::string("GenerationWriter::commit: info cannot be written as JSON: ") + e.what());
        }
        detail::write_whole_file(partial_ / g::manifest_name, text, true);
        detail::fsync_path(partial_);
        g::step("manifest");
        // 3. the complete generation gets its final name.
        const auto final_dir = dir_ / g::folder_name(generation_);
        if (::rename(partial_.c_str(), final_dir.c_str()) != 0) throw detail::io_error("rename", partial_, errno);
        renamed_ = true;
        detail::fsync_path(dir_);
        g::step("renamed");
        // 4. the switch: one rename of the pointer.
        const g::Pointer pointer{generation_, text.size(), detail::fnv1a64(text)};
        pointer_tmp_ = dir_ / (std::string(g::pointer_name) + ".tmp-" + std::to_string(::getpid()));
        detail::write_whole_file(pointer_tmp_, g::pointer_text(pointer), true);
        g::step("pointer");
        const auto pointer_file = dir_ / g::pointer_name;
        if (::rename(pointer_tmp_.c_str(), pointer_file.c_str()) != 0) throw detail::io_error("rename", pointer_tmp_, errno);
        committed_ = true;
        failed_ = false;
        pointer_tmp_.clear();
        // From here the new generation is current: nothing may throw.
        try {
            detail::fsync_path(dir_);
        } catch (const Error&) {
            // the switch is visible; only its durability across a power cut is uncertain
        }
        g::step("switched");
        g::remove_leftovers(dir_, generation_, previous_, legacy_);
        return generation_;
    }

private:
    void check_open(const char* what) const {
        if (committed_) throw InvalidArgument(std::string("GenerationWriter::") + what + ": the generation is already committed");
        if (failed_) throw InvalidArgument(std::string("GenerationWriter::") + what + ": a previous commit failed; start a new writer");
    }

    std::filesystem::path dir_;
    std::optional<detail::generations::FolderLock> lock_;
    std::optional<std::uint64_t> previous_;  // the generation current when the writer was made
    std::uint64_t generation_ = 0;
    std::filesystem::path partial_;
    std::filesystem::path pointer_tmp_;
    bool legacy_ = false;  // dir_ holds an index of the old layout, removed after the switch
    bool renamed_ = false;
    bool committed_ = false;
    bool failed_ = false;
};

/// Opens the current generation of `dir`: reads CURRENT, checks the manifest against it,
/// and checks that every part listed exists with its size and (when `verify_checksums`)
/// its checksum. Throws NotFoundError when `dir` holds no index, FormatError naming the
/// part and the folder when a part is missing, truncated or corrupted, or when `dir`
/// holds an index of the layout before generations ("... built by an older ragpp:
/// rebuild it with ragpp index --rebuild"), IoError when CURRENT cannot be read. When a
/// concurrent commit removes the generation being checked, it retries on the new one.
inline OpenedGeneration open_generation(const std::filesystem::path& dir, bool verify_checksums = true) {
    namespace fs = std::filesystem;
    namespace g = detail::generations;
    std::error_code ec;
    const auto st = fs::status(dir, ec);
    if (!fs::exists(st)) throw NotFoundError("no ragpp index in '" + dir.string() + "': the folder does not exist");
    if (!fs::is_directory(st)) throw NotFoundError("no ragpp index in '" + dir.string() + "': it is not a folder");
    for (int attempt = 0;; ++attempt) {
        const auto pointer = g::read_pointer(dir);
        if (!pointer) {
            if (const auto v = g::legacy_version(dir))
                throw FormatError("'" + dir.string() + "' holds an index (manifest.json, format version " + std::to_string(*v) +
                                  ") built by an older ragpp: rebuild it with ragpp index --rebuild");
            throw NotFoundError("no ragpp index in '" + dir.string() + "' (no " + std::string(g::pointer_name) + " file)");
        }
        try {
            return g::open_at(dir, *pointer, verify_checksums);
        } catch (const FormatError&) {
            // A commit may have switched and removed this generation meanwhile: retry
            // on the new one; otherwise the folder really is damaged.
            std::optional<g::Pointer> now;
            try {
                now = g::read_pointer(dir);
            } catch (const Error&) {
            }
            if (attempt >= 16 || !now || *now == *pointer) throw;
        }
    }
}

/// Removes everything in `dir` that ragpp's generations own and that is not the current
/// generation (the previous one included: call it when no reader may still read it),
/// i.e. leftovers of killed saves, and the files of the old layout. Does nothing when
/// `dir` has no valid CURRENT or while a writer holds the folder's lock. Returns the
/// number of entries removed; never throws for a failure to remove.
inline std::size_t clean_generations(const std::filesystem::path& dir) {
    namespace g = detail::generations;
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) return 0;
    const g::FolderLock lock(dir, true);
    if (!lock.owns()) return 0;
    std::optional<g::Pointer> pointer;
    try {
        pointer = g::read_pointer(dir);
    } catch (const Error&) {
        return 0;
    }
    if (!pointer) return 0;
    return g::remove_leftovers(dir, pointer->generation, std::nullopt, g::legacy_version(dir).has_value());
}

/// Removes the "gen-N.partial" folders and "CURRENT.tmp-*" files of `dir` that a writer
/// killed mid-save left (kill -9, SIGXFSZ, a power cut), and nothing else: the current
/// and the previous generation stay. Does nothing while a writer holds the folder's
/// lock (its partial folder is alive). A GenerationWriter does it when it is made; call
/// it at the start of a long run that writes a generation only at its end (`ragpp
/// index` does), so that a run killed before it saves leaves no growing leftovers.
/// Returns the number of entries removed; never throws for a failure to remove.
inline std::size_t remove_partial_generations(const std::filesystem::path& dir) {
    namespace g = detail::generations;
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) return 0;
    const g::FolderLock lock(dir, true);
    if (!lock.owns()) return 0;
    return g::remove_partials(dir);
}

}  // namespace ragpp
