// The synthetic vectors of bench_scale (and of bench_hnsw --clustered): unit vectors
// drawn around one of 1,024 random centres (uniform noise of about the centre's norm,
// then normalised), from a fixed seed, so that two benchmarks measure the same data.
// Vector i is the same whatever else is drawn; bench_scale's queries are the vectors
// numbered query_base + q.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace bench {

/// splitmix64 (Steele, Lea, Flood 2014): a fast seeded generator, the same numbers
/// everywhere (the vectors' noise here, bench_vector's rows).
struct SplitMix {
    std::uint64_t s;
    std::uint64_t next() {
        std::uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }
    /// Uniform in [-1, 1).
    float sym() { return static_cast<float>(static_cast<double>(next() >> 11) * 0x1.0p-52 - 1.0); }
    /// Roughly normal: the sum of four uniforms on [-1, 1).
    float gauss() {
        float s4 = 0;
        for (int i = 0; i < 4; ++i) s4 += static_cast<float>(next() >> 40) / 8388608.0F - 1.0F;
        return s4;
    }
};

inline void normalise(float* v, std::size_t dim) {
    double n2 = 0;
    for (std::size_t i = 0; i < dim; ++i) n2 += static_cast<double>(v[i]) * v[i];
    const auto inv = static_cast<float>(1.0 / std::sqrt(n2 > 0 ? n2 : 1.0));
    for (std::size_t i = 0; i < dim; ++i) v[i] *= inv;
}

class ClusteredVectors {
public:
    static constexpr std::size_t centre_count = 1024;
    /// The number of the first query vector (bench_scale's --vector-queries).
    static constexpr std::uint64_t query_base = 0xF000'0000'0000ULL;

    ClusteredVectors(std::size_t dim, std::uint64_t seed) : dim_(dim), seed_(seed), centres_(centre_count * dim) {
        SplitMix noise{seed ^ 0xABCDEF};
        for (auto& x : centres_) x = noise.sym();
        for (std::size_t c = 0; c < centre_count; ++c) normalise(centres_.data() + c * dim, dim);
    }
    /// Writes vector `i` (dim floats) to `v`: its centre plus uniform noise, normalised
    /// (neighbours are found inside a cluster, not by the centre alone).
    void make(std::uint64_t i, float* v) const {
        SplitMix g{seed_ * 31 + i};
        const float* c = centres_.data() + (g.next() % centre_count) * dim_;
        const float a = 1.7F / std::sqrt(static_cast<float>(dim_));
        for (std::size_t j = 0; j < dim_; ++j) v[j] = c[j] + a * g.sym();
        normalise(v, dim_);
    }
    [[nodiscard]] std::size_t dimension() const noexcept { return dim_; }

private:
    std::size_t dim_;
    std::uint64_t seed_;
    std::vector<float> centres_;
};

}  // namespace bench
