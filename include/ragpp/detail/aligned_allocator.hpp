// ragpp detail: AlignedAllocator, a std::allocator with 64-byte alignment (cache lines,
// full zmm loads), and AlignedVector: the storage of VectorIndex's rows and of the
// transformer kernels' weights (detail/nn.hpp).
//
// Arrays of a huge page or more (kHugeFrom, 2 MiB) are aligned on 2 MiB and, on Linux,
// offered to the kernel for transparent huge pages (madvise MADV_HUGEPAGE): an HNSW search
// reads rows and neighbour lists at random across hundreds of megabytes, and with 4 KiB
// pages nearly every such read also misses the TLB; a transformer encoder streams tens of
// megabytes of packed weights per group of sequences (MiniLM-L6: 42 MB in float32, its
// feed-forward matrices 2.4 MB each), and with them on huge pages its float32 encoding ran
// 0.7% faster (bench_transformer built with the threshold at 8 MiB, which left them on
// 4 KiB pages, and at 2 MiB: the median of 8 paired runs on a 2-core EPYC, 2026-12-06,
// per pair 0.98 to 1.04, within the machine's noise).
// Where the kernel's setting is "madvise" (the default of most distributions) only advised
// memory gets huge pages; with "never" the advice is ignored. Only the whole 2 MiB pages
// inside an array can be huge: its tail stays on 4 KiB pages. Smaller arrays are left to
// the allocator as they are.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace ragpp::detail {

/// Allocates on 64-byte (cache line) boundaries, so that a row's vector loads never
/// straddle two lines for dimensions that are multiples of 16; from kHugeFrom bytes on,
/// on 2 MiB boundaries with huge pages advised (above).
template <class T>
struct AlignedAllocator {
    using value_type = T;
    static constexpr std::size_t alignment = 64;
    static constexpr std::size_t kHugePage = std::size_t{2} << 20;
    static constexpr std::size_t kHugeFrom = kHugePage;
    AlignedAllocator() noexcept = default;
    template <class U>
    AlignedAllocator(const AlignedAllocator<U>&) noexcept {}  // NOLINT(google-explicit-constructor)
    [[nodiscard]] T* allocate(std::size_t n) {
        const std::size_t bytes = n * sizeof(T);
        if (bytes < kHugeFrom) return static_cast<T*>(::operator new(bytes, std::align_val_t{alignment}));
        void* p = ::operator new(bytes, std::align_val_t{kHugePage});
#if defined(MADV_HUGEPAGE)
        // Advice only: a kernel without transparent huge pages says no, and nothing changes.
        (void)::madvise(p, bytes, MADV_HUGEPAGE);
#endif
        return static_cast<T*>(p);
    }
    void deallocate(T* p, std::size_t n) noexcept {
        ::operator delete(p, n * sizeof(T) < kHugeFrom ? std::align_val_t{alignment} : std::align_val_t{kHugePage});
    }
    template <class U>
    bool operator==(const AlignedAllocator<U>&) const noexcept {
        return true;
    }
};
template <class T>
using AlignedVector = std::vector<T, AlignedAllocator<T>>;

}  // namespace ragpp::detail
