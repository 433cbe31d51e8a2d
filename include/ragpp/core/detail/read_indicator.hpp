// ragpp detail: the read indicator of Concurrent<T> (core/concurrent.hpp) and the
// per-thread record of the reads in progress.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <thread>

namespace ragpp {

namespace detail {

/// Counts the readers in progress: striped counters, one cache line each, so readers on
/// different threads rarely touch the same line (Ramalhete & Correia, "Left-Right: A
/// Concurrency Control Technique with Wait-Free Population Oblivious Reads", 2015, use
/// the same kind of striped counter). A reader arrives on its thread's stripe and
/// departs from the same stripe; empty() is true when no reader is in progress.
class ReadIndicator {
public:
    static constexpr std::size_t stripes = 16;

    /// One atomic increment (never waits); returns the stripe to depart from.
    std::size_t arrive() noexcept {
        const std::size_t s = thread_stripe();
        counters_[s].value.fetch_add(1, std::memory_order_seq_cst);
        return s;
    }
    /// The release orders the reader's accesses before the writer's that follow empty().
    void depart(std::size_t stripe) noexcept { counters_[stripe].value.fetch_sub(1, std::memory_order_release); }
    [[nodiscard]] bool empty() const noexcept {
        for (const auto& c : counters_)
            if (c.value.load(std::memory_order_seq_cst) != 0) return false;
        return true;
    }

private:
    struct alignas(64) Counter {
        std::atomic<std::int64_t> value{0};
    };
    std::array<Counter, stripes> counters_{};

    /// Threads take stripes round robin, in the order they first read.
    static std::size_t thread_stripe() noexcept {
        static std::atomic<std::size_t> next{0};
        thread_local const std::size_t stripe = next.fetch_add(1, std::memory_order_relaxed) % stripes;
        return stripe;
    }
};

/// Waits until `indicator` is empty without burning a core: yields first, then sleeps
/// 1 us, 2 us, ... up to 1 ms between looks.
inline void wait_until_empty(const ReadIndicator& indicator) {
    for (unsigned round = 0; !indicator.empty(); ++round) {
        if (round < 32) {
            std::this_thread::yield();
        } else {
            const unsigned shift = round - 32 < 10 ? round - 32 : 10;
            std::this_thread::sleep_for(std::chrono::microseconds(1U << shift));
        }
    }
}

/// The objects the calling thread is reading, innermost first: a linked list of nodes that
/// live on the readers' stacks (no allocation), so write() can refuse to wait for itself.
struct ReadFrame {
    const void* object;
    const ReadFrame* outer;
};

inline const ReadFrame*& reads_in_progress() noexcept {
    thread_local const ReadFrame* top = nullptr;
    return top;
}

[[nodiscard]] inline bool reading(const void* object) noexcept {
    for (const ReadFrame* f = reads_in_progress(); f != nullptr; f = f->outer)
        if (f->object == object) return true;
    return false;
}

}  // namespace detail

}  // namespace ragpp
