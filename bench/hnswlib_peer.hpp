// bench_hnsw's peer: Debian's hnswlib (libhnswlib-dev, header-only) behind a small
// interface, in its own translation unit (bench/hnswlib_peer.cpp) so that it is compiled
// with the flags its users compile it with (-O3 -march=native: hnswlib picks its SIMD at
// compile time) while ragpp's side keeps the project's flags and picks its kernels at run
// time. Inner product over unit rows (cosine), as bench_hnsw runs ragpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace bench {

class HnswlibPeer {
public:
    /// False when the benchmark was built without hnswlib.
    static bool available();
    /// The flags its translation unit was compiled with (printed by the benchmark).
    static std::string flags();
    HnswlibPeer(std::size_t dim, std::size_t capacity, std::size_t M, std::size_t ef_construction);
    ~HnswlibPeer();
    HnswlibPeer(const HnswlibPeer&) = delete;
    HnswlibPeer& operator=(const HnswlibPeer&) = delete;
    void add(const float* row, std::size_t label);
    /// The k nearest labels, best first, with a candidate list of `ef`.
    [[nodiscard]] std::vector<std::uint32_t> search(const float* query, std::size_t k, std::size_t ef);
    void save(const std::string& path) const;
    /// Replaces the graph by the one saved at `path` (built with the same dim).
    void load(const std::string& path, std::size_t capacity);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace bench
