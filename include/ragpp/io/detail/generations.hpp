// ragpp detail: the not-API helpers of io/generations.hpp (namespace detail::generations): pointer and manifest.
#pragma once

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <sys/file.h>

#include <nlohmann/json.hpp>

#include <ragpp/core/error.hpp>
#include <ragpp/detail/file_io.hpp>
#include <ragpp/detail/hash.hpp>

namespace ragpp {

namespace detail::generations {

inline constexpr std::string_view pointer_name = "CURRENT";
inline constexpr std::string_view pointer_magic = "ragpp-generations 1";
inline constexpr std::string_view manifest_name = "generation.json";
inline constexpr std::string_view lock_name = "LOCK";
inline constexpr std::string_view manifest_format = "ragpp-generation";
inline constexpr int manifest_version = 1;
// The files of the layout before generations (tools/ragpp/engine.cpp, version 1).
inline constexpr std::string_view legacy_files[] = {"manifest.json", "documents.jsonl", "bm25.idx", "vector.idx"};

/// Testing only: when set, commit() calls it with the name of each step it has just
/// done ("parts", "manifest", "renamed", "pointer", "switched"), so that a test can kill
/// the process or throw at every step. Never set by ragpp.
inline void (*commit_hook)(std::string_view step) = nullptr;
inline void step(std::string_view name) {
    if (commit_hook) commit_hook(name);
}

[[nodiscard]] inline std::string folder_name(std::uint64_t generation) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "gen-%06llu", static_cast<unsigned long long>(generation));
    return buf;
}

[[nodiscard]] inline std::optional<std::uint64_t> parse_number(std::string_view s) {
    if (s.empty() || s.size() > 19) return std::nullopt;
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
    return v;
}

/// The generation number of a folder name "gen-N" (or "gen-N.partial" when `partial`).
[[nodiscard]] inline std::optional<std::uint64_t> parse_folder(std::string_view name, bool partial) {
    constexpr std::string_view suffix = ".partial";
    if (!name.starts_with("gen-")) return std::nullopt;
    name.remove_prefix(4);
    if (partial) {
        if (!name.ends_with(suffix)) return std::nullopt;
        name.remove_suffix(suffix.size());
    }
    return parse_number(name);
}

/// A part name is one plain file name: not empty, no '/', no NUL, not "." or "..", not
/// the manifest's name, at most 255 bytes.
inline void check_part_name(std::string_view name, const char* who) {
    const bool bad = name.empty() || name.size() > 255 || name == "." || name == ".." || name == manifest_name ||
                     name.find('/') != std::string_view::npos || name.find('\0') != std::string_view::npos;
    if (bad)
        throw InvalidArgument(std::string(who) + ": part name '" + std::string(name) +
                              "' must be a plain file name (no '/', not '.', '..' or '" + std::string(manifest_name) + "')");
}

/// What CURRENT says.
struct Pointer {
    std::uint64_t generation = 0;
    std::uint64_t manifest_size = 0;
    std::uint64_t manifest_checksum = 0;
    friend bool operator==(const Pointer&, const Pointer&) = default;
};

[[nodiscard]] inline std::string pointer_text(const Pointer& p) {
    return std::string(pointer_magic) + "\n" + folder_name(p.generation) + " " + std::to_string(p.manifest_size) + " " +
           hex64(p.manifest_checksum) + "\n";
}

[[nodiscard]] inline Pointer parse_pointer(std::string_view text, const std::filesystem::path& file) {
    auto bad = [&](const std::string& why) {
        return FormatError("'" + file.string() + "' is not a ragpp generation pointer (" + why + ")");
    };
    if (!text.starts_with(pointer_magic) || text.size() <= pointer_magic.size() || text[pointer_magic.size()] != '\n')
        throw bad("wrong first line");
    text.remove_prefix(pointer_magic.size() + 1);
    if (!text.ends_with('\n')) throw bad("truncated");
    text.remove_suffix(1);
    const auto sp1 = text.find(' ');
    const auto sp2 = sp1 == std::string_view::npos ? sp1 : text.find(' ', sp1 + 1);
    if (sp2 == std::string_view::npos) throw bad("expected 'gen-N size checksum'");
    const auto gen = parse_folder(text.substr(0, sp1), false);
    const auto size = parse_number(text.substr(sp1 + 1, sp2 - sp1 - 1));
    const auto sum = detail::parse_hex64(text.substr(sp2 + 1));
    if (!gen || !size || !sum) throw bad("expected 'gen-N size checksum'");
    return {*gen, *size, *sum};
}

/// CURRENT of `dir`, or nullopt when there is none (IoError when it cannot be read,
/// FormatError when it is malformed).
[[nodiscard]] inline std::optional<Pointer> read_pointer(const std::filesystem::path& dir) {
    const auto file = dir / pointer_name;
    std::string text;
    try {
        text = read_small_file(file, 4096);
    } catch (const IoError&) {
        std::error_code ec;
        if (!std::filesystem::exists(std::filesystem::symlink_status(file, ec))) return std::nullopt;
        throw;
    }
    return parse_pointer(text, file);
}

/// The exclusive lock of a folder's writer: flock on `dir`/LOCK.
class FolderLock {
public:
    /// Throws IoError when the lock is held by another writer (or cannot be taken),
    /// unless `try_only`: then owns() says whether it was taken.
    FolderLock(const std::filesystem::path& dir, bool try_only) {
        const auto file = dir / lock_name;
        int fd;
        do fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        while (fd < 0 && errno == EINTR);
        if (fd < 0) {
            if (try_only) return;
            throw io_error("create the lock file", file, errno);
        }
        UniqueFd f(fd);
        int r;
        do r = ::flock(f.get(), LOCK_EX | LOCK_NB);
        while (r != 0 && errno == EINTR);
        if (r != 0) {
            if (try_only) return;
            if (errno == EWOULDBLOCK)
                throw IoError("'" + dir.string() + "' is being written by another GenerationWriter (its LOCK is held)");
            throw io_error("lock", file, errno);
        }
        fd_ = std::move(f);
    }
    [[nodiscard]] bool owns() const noexcept { return static_cast<bool>(fd_); }

private:
    UniqueFd fd_;  // closing it releases the lock
};

/// Removes, best effort, the entries of `dir` whose name `doomed` accepts. Returns the
/// number removed. Never throws.
template <class Pred>
inline std::size_t remove_entries_if(const std::filesystem::path& dir, Pred doomed) noexcept {
    namespace fs = std::filesystem;
    std::size_t removed = 0;
    try {
        std::error_code ec;
        std::vector<fs::path> found;
        for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
            if (doomed(it->path().filename().string())) found.push_back(it->path());
        for (const auto& p : found) {
            std::error_code rec;
            if (fs::remove_all(p, rec) != static_cast<std::uintmax_t>(-1) && !rec) ++removed;
        }
    } catch (...) {
        // best effort: a failure to clean is not an error
    }
    return removed;
}

/// Whether `name` is a "gen-N.partial" folder or a "CURRENT.tmp-*" file.
[[nodiscard]] inline bool partial_entry(const std::string& name) {
    return parse_folder(name, true).has_value() || name.starts_with(std::string(pointer_name) + ".tmp-");
}

/// Removes, best effort, every entry of `dir` that ragpp's generations own and that is
/// neither generation `keep1` nor `keep2`: other "gen-N" folders, "gen-N.partial"
/// folders, "CURRENT.tmp-*" files and, when `legacy` (its manifest.json is there), the
/// files of the old layout.
/// Returns the number of entries removed. Never throws.
inline std::size_t remove_leftovers(const std::filesystem::path& dir, std::optional<std::uint64_t> keep1,
                                    std::optional<std::uint64_t> keep2, bool legacy) noexcept {
    return remove_entries_if(dir, [&](const std::string& name) {
        bool remove = partial_entry(name);
        if (const auto g = parse_folder(name, false)) remove = g != keep1 && g != keep2;
        if (legacy)
            for (auto f : legacy_files) remove = remove || name == f || name.starts_with(std::string(f) + ".tmp");
        return remove;
    });
}

/// Removes, best effort, the "gen-N.partial" folders and "CURRENT.tmp-*" files of `dir`:
/// called by a writer that holds the folder's lock, so they are leftovers of a writer
/// that died (kill -9, SIGXFSZ, a power cut) before it could remove them. Returns the
/// number of entries removed. Never throws.
inline std::size_t remove_partials(const std::filesystem::path& dir) noexcept {
    return remove_entries_if(dir, partial_entry);
}

/// Whether `dir` holds an index of the layout before generations.
[[nodiscard]] inline std::optional<int> legacy_version(const std::filesystem::path& dir) {
    const auto file = dir / "manifest.json";
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec)) return std::nullopt;
    try {
        const auto j = nlohmann::json::parse(read_small_file(file, 1 << 20));
        if (j.is_object() && j.value("format", std::string()) == "ragpp-index")
            return j.contains("version") && j["version"].is_number_integer() ? j["version"].get<int>() : 0;
    } catch (const std::exception&) {
    }
    return std::nullopt;
}

}  // namespace detail::generations

}  // namespace ragpp
