// ragpp detail: FNV-1a, the fixed 64-bit hash used wherever a hash must be the same on
// every platform and in every run (feature hashing, file checksums). Never std::hash,
// whose values are implementation-defined.
// Source: Fowler, Noll, Vo, "FNV hash", http://www.isthe.com/chongo/tech/comp/fnv/
// (64-bit offset basis 14695981039346656037, prime 1099511628211).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ragpp::detail {

inline constexpr std::uint64_t fnv1a64_basis = 14695981039346656037ULL;
inline constexpr std::uint64_t fnv1a64_prime = 1099511628211ULL;

/// FNV-1a over `size` bytes, continuing from `h` (pass the result of a previous call
/// to hash data in pieces).
[[nodiscard]] inline std::uint64_t fnv1a64(const void* data, std::size_t size,
                                           std::uint64_t h = fnv1a64_basis) noexcept {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < size; ++i) {
        h ^= p[i];
        h *= fnv1a64_prime;
    }
    return h;
}
[[nodiscard]] inline std::uint64_t fnv1a64(std::string_view s, std::uint64_t h = fnv1a64_basis) noexcept {
    return fnv1a64(s.data(), s.size(), h);
}

/// A final avalanche (the finaliser of MurmurHash3's fmix64, Austin Appleby, public
/// domain), so that the low bits used as a bucket and the top bit used as a sign are
/// both well mixed even for short keys.
[[nodiscard]] constexpr std::uint64_t mix64(std::uint64_t k) noexcept {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}

}  // namespace ragpp::detail
