// ragpp: the per-source manifest of an index, its diff against a corpus scan, and
// freshness checks (declarations first; implementation follows).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <ragpp/core/error.hpp>
#include <ragpp/io/corpus.hpp>

namespace ragpp {

struct SourceRecord {
    std::string path;
    std::uint64_t size = 0;
    std::int64_t mtime_ns = 0;
    std::uint64_t hash = 0;
    std::vector<std::string> chunks;  // the chunk ids (Document::id) made from it
    std::int64_t scanned_ns = -1;     // when size and mtime were read; -1: unknown (always re-hashed)
};

class SourceManifest {
public:
    void add(SourceRecord) { throw UnsupportedError("not yet"); }
    void replace(SourceRecord) { throw UnsupportedError("not yet"); }
    bool erase(std::string_view) { throw UnsupportedError("not yet"); }
    [[nodiscard]] const SourceRecord* find(std::string_view) const { throw UnsupportedError("not yet"); }
    [[nodiscard]] std::vector<const SourceRecord*> records() const { throw UnsupportedError("not yet"); }
    [[nodiscard]] std::size_t size() const noexcept { return records_.size(); }
    [[nodiscard]] nlohmann::json to_json() const { throw UnsupportedError("not yet"); }
    static SourceManifest from_json(const nlohmann::json&, std::string_view) { throw UnsupportedError("not yet"); }

private:
    std::map<std::string, SourceRecord, std::less<>> records_;
};

inline std::uint64_t hash_file(const std::filesystem::path&) { throw UnsupportedError("not yet"); }

struct SourceDiff {
    std::vector<SourceFile> added, changed;
    std::vector<std::string> removed;
    std::vector<std::string> unchanged;
    std::vector<SourceFile> touched;  // unchanged content, new mtime: refresh the record
};

inline SourceDiff diff_sources(const SourceManifest&, const CorpusScan&) { throw UnsupportedError("not yet"); }

enum class Freshness { fresh, changed, deleted };

inline Freshness check_source(const std::filesystem::path&, const SourceRecord&) { throw UnsupportedError("not yet"); }

}  // namespace ragpp
