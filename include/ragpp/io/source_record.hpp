// ragpp: what an index knows of one source file (SourceRecord, racy_margin_ns), for io/sources.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ragpp {

/// What an index knows of one source file.
struct SourceRecord {
    std::string path;                 // the source id: relative to the corpus root, with '/'
    std::uint64_t size = 0;
    std::int64_t mtime_ns = 0;
    std::uint64_t hash = 0;           // source_hash of its content
    std::vector<std::string> chunks;  // the chunk ids (Document::id) made from it
    std::int64_t scanned_ns = -1;     // SourceFile::scanned_ns when recorded; -1: unknown
};

/// A file whose size and mtime are this close to its scan's start is checked by content.
inline constexpr std::int64_t racy_margin_ns = 2'000'000'000;

}  // namespace ragpp
