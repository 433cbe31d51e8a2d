// ragpp detail: the one worker pool of the library (parallel_for), used by the
// transformer encoders, the cross-encoder and the HNSW batch build.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace ragpp::detail {

/// `threads`, or every core when it is 0.
inline std::size_t resolve_threads(std::size_t threads) {
    return threads == 0 ? std::max<std::size_t>(1, std::thread::hardware_concurrency()) : threads;
}

/// Runs f(item, worker), or f(item), for item in [0, n) on up to `threads` threads (0:
/// every core; the calling thread is worker 0). Items are taken in order from a shared
/// counter. The first exception a worker throws stops the others and is rethrown here,
/// once every thread stopped. A thread that cannot be started leaves its share to the
/// others.
template <class F>
void parallel_for(std::size_t n, std::size_t threads, F&& f) {
    const auto call = [&](std::size_t i, std::size_t worker) {
        if constexpr (std::is_invocable_v<F&, std::size_t, std::size_t>) f(i, worker);
        else f(i);
    };
    threads = std::min(resolve_threads(threads), n);
    if (threads <= 1) {
        for (std::size_t i = 0; i < n; ++i) call(i, 0);
        return;
    }
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
    std::exception_ptr error;
    std::mutex error_mutex;
    const auto work = [&](std::size_t worker) noexcept {
        try {
            for (std::size_t i; !failed.load() && (i = next.fetch_add(1)) < n;) call(i, worker);
        } catch (...) {
            const std::lock_guard<std::mutex> lock(error_mutex);
            if (!error) error = std::current_exception();
            failed = true;
        }
    };
    std::vector<std::thread> pool;
    pool.reserve(threads - 1);
    for (std::size_t t = 1; t < threads; ++t) {
        try {
            pool.emplace_back(work, t);
        } catch (...) {  // no more threads: the others share the work
            break;
        }
    }
    work(0);
    for (auto& t : pool) t.join();
    if (error) std::rethrow_exception(error);
}

}  // namespace ragpp::detail
