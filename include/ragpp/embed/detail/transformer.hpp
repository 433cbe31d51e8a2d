// ragpp detail: the worker pool (parallel_for) behind embed/transformer.hpp.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace ragpp {

namespace detail {

/// Runs f(item, worker) for item in [0, n) on up to `threads` threads (the calling
/// thread is worker 0). Items are taken in order from a shared counter. The first
/// exception a worker throws stops the others and is rethrown here.
template <class F>
void parallel_for(std::size_t n, std::size_t threads, F&& f) {
    if (threads == 0) threads = std::max<std::size_t>(1, std::thread::hardware_concurrency());
    threads = std::min(threads, n);
    if (threads <= 1) {
        for (std::size_t i = 0; i < n; ++i) f(i, std::size_t{0});
        return;
    }
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
    std::exception_ptr error;
    std::mutex error_mutex;
    auto work = [&](std::size_t worker) {
        try {
            for (std::size_t i; !failed.load() && (i = next.fetch_add(1)) < n;) f(i, worker);
        } catch (...) {
            std::lock_guard<std::mutex> lock(error_mutex);
            if (!error) error = std::current_exception();
            failed = true;
        }
    };
    std::vector<std::thread> pool;
    pool.reserve(threads - 1);
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work, t);
    work(0);
    for (auto& t : pool) t.join();
    if (error) std::rethrow_exception(error);
}

inline std::size_t resolve_threads(std::size_t threads) {
    return threads == 0 ? std::max<std::size_t>(1, std::thread::hardware_concurrency()) : threads;
}

}  // namespace detail

}  // namespace ragpp
