// ragpp: the per-source manifest of an index (which file each chunk came from, in what
// state), its diff against a new corpus scan, and the freshness of one source.
//
// A source's content hash is FNV-1a-64 (detail/hash.hpp) over its bytes:
// hash_file(p) == source_hash(content of p).
//
// Size and modification time decide "unchanged" without reading the file, except for a
// "racily clean" record: one whose mtime is not older than the time its scan started
// (SourceFile::scanned_ns) minus `racy_margin_ns`. Such a file could have been modified
// again, after it was recorded, within the same tick of the file-system clock and with
// the same size; its content hash decides instead. This is Git's rule for its index
// (Documentation/technical/racy-git.txt); a record whose scan time is unknown (-1) is
// always checked by its hash.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include <ragpp/core/error.hpp>
#include <ragpp/detail/file_io.hpp>
#include <ragpp/detail/hash.hpp>
#include <ragpp/io/corpus.hpp>
#include <ragpp/io/detail/sources.hpp>
#include <ragpp/io/source_record.hpp>

namespace ragpp {

/// The record of a scanned file whose content hashes to `hash`.
[[nodiscard]] inline SourceRecord make_source_record(const SourceFile& f, std::uint64_t hash, std::vector<std::string> chunks) {
    return {f.path, f.size, f.mtime_ns, hash, std::move(chunks), f.scanned_ns};
}

/// The content hash of a source: FNV-1a-64 of its bytes.
[[nodiscard]] inline std::uint64_t source_hash(std::string_view content) noexcept { return detail::fnv1a64(content); }

/// The content hash of the file `p`, read in blocks. IoError naming the file.
[[nodiscard]] inline std::uint64_t hash_file(const std::filesystem::path& p) {
    const auto fd = detail::open_regular_for_reading(p);
    return detail::hash_fd(fd.get(), p).hash;
}

/// The per-source manifest, keyed by path.
class SourceManifest {
public:
    /// Adds `r`; DuplicateError when its path is already there.
    void add(SourceRecord r) {
        if (records_.contains(r.path)) throw DuplicateError("SourceManifest::add: source '" + r.path + "' is already recorded");
        auto key = r.path;
        records_.emplace(std::move(key), std::move(r));
    }
    /// Adds `r` or replaces the record of its path.
    void replace(SourceRecord r) {
        auto key = r.path;
        records_.insert_or_assign(std::move(key), std::move(r));
    }
    /// Takes a scanned file's size, mtime and scan time, keeping the record's hash and
    /// chunks (for SourceDiff::touched). NotFoundError when its path is not recorded.
    void refresh(const SourceFile& f) {
        const auto it = records_.find(f.path);
        if (it == records_.end()) throw NotFoundError("SourceManifest::refresh: source '" + f.path + "' is not recorded");
        it->second.size = f.size;
        it->second.mtime_ns = f.mtime_ns;
        it->second.scanned_ns = f.scanned_ns;
    }
    /// Removes the record of `path`; false when there was none.
    bool erase(std::string_view path) {
        const auto it = records_.find(path);
        if (it == records_.end()) return false;
        records_.erase(it);
        return true;
    }
    /// The record of `path`, or nullptr.
    [[nodiscard]] const SourceRecord* find(std::string_view path) const {
        const auto it = records_.find(path);
        return it == records_.end() ? nullptr : &it->second;
    }
    /// Every record, sorted by path (pointers valid until the next change).
    [[nodiscard]] std::vector<const SourceRecord*> records() const {
        std::vector<const SourceRecord*> out;
        out.reserve(records_.size());
        for (const auto& [path, r] : records_) out.push_back(&r);
        return out;
    }
    [[nodiscard]] std::size_t size() const noexcept { return records_.size(); }
    [[nodiscard]] bool empty() const noexcept { return records_.empty(); }
    friend bool operator==(const SourceManifest& a, const SourceManifest& b) {
        return std::equal(a.records_.begin(), a.records_.end(), b.records_.begin(), b.records_.end(), [](const auto& x, const auto& y) {
            const auto& r = x.second;
            const auto& s = y.second;
            return r.path == s.path && r.size == s.size && r.mtime_ns == s.mtime_ns && r.hash == s.hash &&
                   r.chunks == s.chunks && r.scanned_ns == s.scanned_ns;
        });
    }

    /// {"version": 1, "sources": [{"path", "size", "mtime_ns", "scanned_ns", "hash" (16 hex
    /// digits of FNV-1a-64), "chunks": [...]}, ...]}, sorted by path.
    [[nodiscard]] nlohmann::json to_json() const {
        nlohmann::json sources = nlohmann::json::array();
        for (const auto& [path, r] : records_)
            sources.push_back({{"path", r.path},
                               {"size", r.size},
                               {"mtime_ns", r.mtime_ns},
                               {"scanned_ns", r.scanned_ns},
                               {"hash", detail::hex64(r.hash)},
                               {"chunks", r.chunks}});
        return {{"version", 1}, {"sources", std::move(sources)}};
    }

    /// The manifest of to_json()'s output. FormatError starting with `where` (the file it
    /// came from) and naming the field at fault (e.g. "sources[3].hash"); DuplicateError
    /// when a path is listed twice.
    static SourceManifest from_json(const nlohmann::json& j, std::string_view where) {
        const std::string w(where);
        auto bad = [&](const std::string& field, const char* what) { return FormatError(w + ": field '" + field + "' " + what); };
        if (!j.is_object()) throw FormatError(w + ": the source manifest is not a JSON object");
        if (!j.contains("version") || !j["version"].is_number_integer()) throw bad("version", "is missing or not an integer");
        if (j["version"] != 1) throw FormatError(w + ": source manifest version " + j["version"].dump() + " is not supported (1 is)");
        if (!j.contains("sources") || !j["sources"].is_array()) throw bad("sources", "is missing or not an array");
        SourceManifest m;
        const auto& sources = j["sources"];
        for (std::size_t i = 0; i < sources.size(); ++i) {
            const auto& s = sources[i];
            const std::string at = "sources[" + std::to_string(i) + "]";
            if (!s.is_object()) throw bad(at, "is not an object");
            auto need = [&](const char* name, bool ok, const char* what) -> const nlohmann::json& {
                if (!s.contains(name)) throw bad(at + "." + name, "is missing");
                if (!ok) throw bad(at + "." + name, what);
                return s[name];
            };
            SourceRecord r;
            r.path = need("path", s.contains("path") && s["path"].is_string(), "is not a string").get<std::string>();
            if (r.path.empty()) throw bad(at + ".path", "is empty");
            r.size = need("size", s.contains("size") && s["size"].is_number_unsigned(), "is not an unsigned integer").get<std::uint64_t>();
            r.mtime_ns = need("mtime_ns", s.contains("mtime_ns") && s["mtime_ns"].is_number_integer(), "is not an integer").get<std::int64_t>();
            if (s.contains("scanned_ns")) {
                if (!s["scanned_ns"].is_number_integer()) throw bad(at + ".scanned_ns", "is not an integer");
                r.scanned_ns = s["scanned_ns"].get<std::int64_t>();
            }
            const auto& h = need("hash", s.contains("hash") && s["hash"].is_string(), "is not a string");
            const auto hash = detail::parse_hex64(h.get<std::string>());
            if (!hash) throw bad(at + ".hash", "is not 16 hex digits");
            r.hash = *hash;
            const auto& chunks = need("chunks", s.contains("chunks") && s["chunks"].is_array(), "is not an array");
            for (std::size_t c = 0; c < chunks.size(); ++c) {
                if (!chunks[c].is_string()) throw bad(at + ".chunks[" + std::to_string(c) + "]", "is not a string");
                r.chunks.push_back(chunks[c].get<std::string>());
            }
            if (m.records_.contains(r.path)) throw DuplicateError(w + ": field '" + at + ".path': source '" + r.path + "' is listed twice");
            m.add(std::move(r));
        }
        return m;
    }

private:
    std::map<std::string, SourceRecord, std::less<>> records_;
};

/// What changed between an index's manifest and a new scan of its corpus.
struct SourceDiff {
    std::vector<SourceFile> added;      // in the scan, not in the manifest
    std::vector<SourceFile> changed;    // in both, another content
    std::vector<std::string> removed;   // in the manifest, not in the scan
    std::vector<std::string> unchanged; // in both, the same content
    /// Among `unchanged`, the files whose record should be refreshed
    /// (SourceManifest::refresh): the content is the same but the mtime differs, or the
    /// record was racily clean. Without it they would be re-hashed at every diff.
    std::vector<SourceFile> touched;
};

/// What changed between `manifest` and `scan`: same size and mtime => unchanged without
/// reading (unless racily clean, see above); a different size => changed without
/// reading; otherwise the content hash decides (a touched but identical file is
/// unchanged). Every list is sorted by path. IoError naming a file that cannot be read.
[[nodiscard]] inline SourceDiff diff_sources(const SourceManifest& manifest, const CorpusScan& scan) {
    SourceDiff d;
    std::vector<std::string_view> seen;
    seen.reserve(scan.files.size());
    for (const auto& f : scan.files) {
        seen.push_back(f.path);
        const SourceRecord* r = manifest.find(f.path);
        if (!r) {
            d.added.push_back(f);
        } else if (detail::sources::stat_says_unchanged(*r, f.size, f.mtime_ns)) {
            d.unchanged.push_back(f.path);
        } else if (r->size != f.size || hash_file(f.absolute) != r->hash) {
            d.changed.push_back(f);
        } else {
            d.unchanged.push_back(f.path);
            d.touched.push_back(f);
        }
    }
    std::sort(seen.begin(), seen.end());
    for (const auto* r : manifest.records())
        if (!std::binary_search(seen.begin(), seen.end(), std::string_view(r->path))) d.removed.push_back(r->path);
    auto by_path = [](const auto& a, const auto& b) { return a.path < b.path; };
    std::sort(d.added.begin(), d.added.end(), by_path);
    std::sort(d.changed.begin(), d.changed.end(), by_path);
    std::sort(d.touched.begin(), d.touched.end(), by_path);
    std::sort(d.unchanged.begin(), d.unchanged.end());
    return d;
}

enum class Freshness { fresh, changed, deleted };

/// The state of the recorded source `record` under `root` now: deleted when the file is
/// gone (or no longer a regular file), fresh when size and mtime match (and the record
/// is not racily clean), otherwise its content hash decides. IoError naming the file
/// when it exists but cannot be read.
[[nodiscard]] inline Freshness check_source(const std::filesystem::path& root, const SourceRecord& record) {
    const auto file = root / record.path;
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR) return Freshness::deleted;
        throw detail::io_error("check the source", file, errno);
    }
    if (!S_ISREG(st.st_mode)) return Freshness::deleted;
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (detail::sources::stat_says_unchanged(record, size, detail::corpus::ns_of(st.st_mtim))) return Freshness::fresh;
    if (size != record.size) return Freshness::changed;
    return hash_file(file) == record.hash ? Freshness::fresh : Freshness::changed;
}

}  // namespace ragpp
