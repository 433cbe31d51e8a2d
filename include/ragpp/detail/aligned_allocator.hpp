// ragpp detail: AlignedAllocator, a std::allocator with 64-byte alignment (cache lines,
// full zmm loads), and AlignedVector: the storage of VectorIndex's rows and of the
// transformer kernels' weights (detail/nn.hpp).
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace ragpp::detail {

/// Allocates on 64-byte (cache line) boundaries, so that a row's vector loads never
/// straddle two lines for dimensions that are multiples of 16.
template <class T>
struct AlignedAllocator {
    using value_type = T;
    static constexpr std::size_t alignment = 64;
    AlignedAllocator() noexcept = default;
    template <class U>
    AlignedAllocator(const AlignedAllocator<U>&) noexcept {}  // NOLINT(google-explicit-constructor)
    [[nodiscard]] T* allocate(std::size_t n) {
        return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{alignment}));
    }
    void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, std::align_val_t{alignment}); }
    template <class U>
    bool operator==(const AlignedAllocator<U>&) const noexcept {
        return true;
    }
};
template <class T>
using AlignedVector = std::vector<T, AlignedAllocator<T>>;

}  // namespace ragpp::detail
