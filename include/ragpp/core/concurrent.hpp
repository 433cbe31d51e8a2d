// ragpp: Concurrent<T>, searches that never wait for writes (left-right concurrency
// control: Ramalhete & Correia, "Left-Right: A Concurrency Control Technique with
// Wait-Free Population Oblivious Reads", 2015).
//
//   ragpp::Concurrent<Collection<Hybrid>> docs(std::move(collection));
//   auto hits = docs.read([&](const auto& c) { return c.search(question, 10); });
//   docs.write([&](auto& c) { c.update(source); });        // readers keep searching meanwhile
//
// Two copies of T. Readers search the active copy; a read is one atomic increment and one
// decrement of a striped counter around the callback, never a lock, a retry or a wait, so
// a read is never delayed by a write. A write (writers are serialised by a mutex) is applied
// to the inactive copy, the copies are switched (new reads see the write from then on), the
// writer waits until the reads still on the old copy are done, then applies the same write
// to the old copy. A read therefore sees T as it was between two writes: every write before
// it, none after it, never half of one.
//
// The price, said plainly: memory is twice T's; a write costs twice its work plus the wait
// for the longest read in progress on the old copy (the writer yields, then sleeps, while
// it waits: it never spins a core). See docs/concurrency.md for the design, the rules and
// why not immutable snapshots (RCU) or Lucene-style segments.
//
// Rules (checked where they can be):
//  - The write callback is called twice, once per copy, with equal copies: it must make
//    the same change both times (a deterministic write). So it must not consume what it
//    captures (no std::move of a captured document), nor draw random numbers or clocks
//    outside T. Every ragpp write (add_document, remove_document, Collection::add/update/
//    remove, set_options) is deterministic given equal indexes.
//  - T's copies must be independent: no mutable state shared between two copies (ragpp's
//    indexes, Retriever and Collection share only immutable documents).
//  - The callbacks must not let a reference or pointer into T escape: read() returns by
//    value (a reference returned by the callback is copied).
//  - Calling write() from inside read() or write() of the same object on the same thread
//    would wait for itself: it throws InvalidArgument instead.
// Exceptions: an exception of a read callback propagates to its caller, nothing else
// happens. An exception of the first application of a write propagates and the write is
// not made (version() unchanged); the copy it touched is re-copied from the other one at
// the start of the next write, unless the call says WriteGuarantee::strong (the callback
// leaves T unchanged when it throws, as every ragpp write method does). An exception of
// the second application is not propagated: the write is already visible; the copy is
// re-copied at the start of the next write. read() is noexcept when its callback is.
#pragma once

#include <array>
#include <atomic>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>

#include <ragpp/core/detail/read_indicator.hpp>
#include <ragpp/core/error.hpp>

namespace ragpp {

/// What a write callback promises when it throws.
enum class WriteGuarantee {
    /// It may leave T half changed: Concurrent re-copies that copy before the next write.
    basic,
    /// It leaves T unchanged (every ragpp write method): no copy is needed.
    strong,
};

template <class T>
    requires std::copy_constructible<T> && std::is_copy_assignable_v<T>
class Concurrent {
public:
    /// Both copies start as `initial` (memory: twice T's).
    explicit Concurrent(T initial) : instances_{{initial, std::move(initial)}} {}

    Concurrent(const Concurrent&) = delete;
    Concurrent& operator=(const Concurrent&) = delete;

    /// Calls f(const T&) or f(const T&, std::uint64_t version) on the current copy and
    /// returns its result by value. `version` is the number of writes the copy holds. Never
    /// waits: any number of threads may read while one writes.
    template <class F>
        requires std::invocable<F&, const T&> || std::invocable<F&, const T&, std::uint64_t>
    auto read(F&& f) const noexcept(nothrow_callable<F>()) {
        const int vi = version_index_.load(std::memory_order_seq_cst);
        const Departure departure(indicators_[vi], indicators_[vi].arrive(), this);
        const int lr = left_right_.load(std::memory_order_seq_cst);
        return call(f, instances_[lr], versions_[lr]);
    }

    /// Applies f(T&) to both copies (see the rules above) and returns the result of the
    /// first application. New reads see the write once the first application is done;
    /// write() returns when both copies hold it. Writers wait for each other.
    template <class F>
        requires std::invocable<F&, T&>
    auto write(F&& f, WriteGuarantee guarantee = WriteGuarantee::basic) {
        using R = std::invoke_result_t<F&, T&>;
        static_assert(!std::is_reference_v<R>, "Concurrent::write: the callback must not return a reference into T");
        if (writer_.load() == std::this_thread::get_id() || detail::reading(this))
            throw InvalidArgument("Concurrent::write: called inside read() or write() of the same object on the "
                                  "same thread (it would wait for itself)");
        std::lock_guard lock(writer_mutex_);
        const WriterMark mark(writer_);
        const int active = left_right_.load(std::memory_order_relaxed);  // only writers store it
        const int inactive = 1 - active;
        if (stale_) {  // a failed application left the inactive copy behind: nothing is visible yet
            instances_[inactive] = instances_[active];
            versions_[inactive] = versions_[active];
            stale_ = false;
        }
        std::optional<std::conditional_t<std::is_void_v<R>, char, R>> result;
        bool applied = false;  // f returned: a later throw (moving its result) leaves the copy changed
        try {
            if constexpr (std::is_void_v<R>) {
                std::invoke(f, instances_[inactive]);
            } else {
                R r = std::invoke(f, instances_[inactive]);
                applied = true;
                result.emplace(std::move(r));
            }
        } catch (...) {
            stale_ = applied || guarantee == WriteGuarantee::basic;
            throw;
        }
        versions_[inactive] = versions_[active] + 1;
        left_right_.store(inactive, std::memory_order_seq_cst);  // new reads see the write
        version_.store(versions_[inactive], std::memory_order_seq_cst);
        drain();
        try {
            std::invoke(f, instances_[active]);  // no reader is on this copy any more
        } catch (...) {
            stale_ = true;  // the write is visible: the copy catches up at the next write
        }
        versions_[active] = versions_[inactive];
        if constexpr (!std::is_void_v<R>) return R(std::move(*result));
    }

    /// The number of writes committed (visible to new reads).
    [[nodiscard]] std::uint64_t version() const noexcept { return version_.load(std::memory_order_seq_cst); }

private:
    template <class F>
    static constexpr bool nothrow_callable() {
        const auto nothrow = []<class... A>() {
            using R = std::decay_t<std::invoke_result_t<F&, A...>>;
            return std::is_nothrow_invocable_v<F&, A...> && (std::is_void_v<R> || std::is_nothrow_move_constructible_v<R>);
        };
        if constexpr (std::invocable<F&, const T&, std::uint64_t>) return nothrow.template operator()<const T&, std::uint64_t>();
        else return nothrow.template operator()<const T&>();
    }

    template <class F>
    static decltype(auto) call(F& f, const T& t, std::uint64_t version) {
        if constexpr (std::invocable<F&, const T&, std::uint64_t>) return std::invoke(f, t, version);
        else return std::invoke(f, t);
    }

    /// Departs from the read indicator when the read ends, also by an exception.
    class Departure {
    public:
        Departure(detail::ReadIndicator& indicator, std::size_t stripe, const void* object) noexcept
            : indicator_(indicator), stripe_(stripe), frame_{object, detail::reads_in_progress()} {
            detail::reads_in_progress() = &frame_;
        }
        Departure(const Departure&) = delete;
        Departure& operator=(const Departure&) = delete;
        ~Departure() {
            detail::reads_in_progress() = frame_.outer;
            indicator_.depart(stripe_);
        }

    private:
        detail::ReadIndicator& indicator_;
        std::size_t stripe_;
        detail::ReadFrame frame_;
    };

    class WriterMark {
    public:
        explicit WriterMark(std::atomic<std::thread::id>& writer) noexcept : writer_(writer) {
            writer_.store(std::this_thread::get_id());
        }
        WriterMark(const WriterMark&) = delete;
        WriterMark& operator=(const WriterMark&) = delete;
        ~WriterMark() { writer_.store(std::thread::id()); }

    private:
        std::atomic<std::thread::id>& writer_;
    };

    /// Waits until no read can be on the inactive copy (the left-right writer's two steps):
    /// readers that took the other indicator before the switch leave it, the readers' next
    /// indicator becomes that one, then the readers of the current indicator leave it.
    void drain() {
        const int vi = version_index_.load(std::memory_order_relaxed);  // only writers store it
        const int next = 1 - vi;
        detail::wait_until_empty(indicators_[next]);
        version_index_.store(next, std::memory_order_seq_cst);
        detail::wait_until_empty(indicators_[vi]);
    }

    std::array<T, 2> instances_;
    std::array<std::uint64_t, 2> versions_{0, 0};  // writes each copy holds
    alignas(64) std::atomic<int> left_right_{0};    // the copy new reads use
    alignas(64) std::atomic<int> version_index_{0};  // the indicator new reads arrive on
    mutable std::array<detail::ReadIndicator, 2> indicators_;
    alignas(64) std::atomic<std::uint64_t> version_{0};
    std::mutex writer_mutex_;
    std::atomic<std::thread::id> writer_{};
    bool stale_ = false;  // the inactive copy must be re-copied before the next write (guarded by writer_mutex_)
};

}  // namespace ragpp
