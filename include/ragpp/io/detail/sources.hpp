// ragpp detail: the size-and-mtime test of io/sources.hpp (racily clean records excepted).
#pragma once

#include <cstdint>

#include <ragpp/io/source_record.hpp>

namespace ragpp {

namespace detail::sources {

/// Whether size and mtime alone say that `r` is unchanged in a file of `size`, `mtime_ns`.
[[nodiscard]] inline bool stat_says_unchanged(const SourceRecord& r, std::uint64_t size, std::int64_t mtime_ns) noexcept {
    const bool racy = r.scanned_ns < 0 || r.mtime_ns >= r.scanned_ns - racy_margin_ns;
    return !racy && r.size == size && r.mtime_ns == mtime_ns;
}

}  // namespace detail::sources

}  // namespace ragpp
