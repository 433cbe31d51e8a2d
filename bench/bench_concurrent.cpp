// bench_concurrent [DOCS] [SECONDS]: search throughput and latency of a BM25Index of DOCS
// synthetic documents (default 50,000; Zipfian words, fixed seed) on 1 and 2 reader
// threads, for SECONDS per configuration (default 2), in four set-ups:
//   plain        const search on the index itself, no writer (the baseline)
//   concurrent   Concurrent<BM25Index>::read, no writer (the read indicator's cost)
//   concurrent+w Concurrent<BM25Index>::read while a writer adds a document every ms
//   rwlock+w     the old way: std::shared_mutex, shared lock to search, unique lock to add
//                (a document every ms): readers wait while the writer holds the lock
// then the cost of a write: add_document on the index alone, and through
// Concurrent::write (applied to both copies), in microseconds per document.
// One JSON line per configuration; times are wall clock (steady_clock) and the reader
// threads' CPU time (CLOCK_THREAD_CPUTIME_ID), which differ on a loaded machine.
#include <ragpp/core/concurrent.hpp>
#include <ragpp/index/bm25.hpp>
#include <ragpp/text/analyzer.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <latch>
#include <random>
#include <shared_mutex>
#include <string>
#include <thread>
#include <time.h>
#include <vector>

namespace {

using Index = ragpp::BM25Index<ragpp::WhitespaceAnalyzer>;
using Clock = std::chrono::steady_clock;

double thread_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Corpus {
    std::vector<std::string> texts;
    std::vector<std::string> queries;
};

/// Words "w0".."w19999" with Zipfian frequencies; documents of 10-60 words; queries of 2-3 words.
Corpus make_corpus(std::size_t docs, std::size_t extra) {
    std::mt19937_64 rng(42);
    std::vector<double> weights(20000);
    for (std::size_t i = 0; i < weights.size(); ++i) weights[i] = 1.0 / static_cast<double>(i + 1);
    std::discrete_distribution<std::size_t> word(weights.begin(), weights.end());
    std::uniform_int_distribution<int> length(10, 60), qlength(2, 3);
    Corpus c;
    for (std::size_t d = 0; d < docs + extra; ++d) {
        std::string t;
        for (int i = length(rng); i > 0; --i) t += "w" + std::to_string(word(rng)) + " ";
        c.texts.push_back(std::move(t));
    }
    for (int q = 0; q < 200; ++q) {
        std::string t;
        for (int i = qlength(rng); i > 0; --i) t += "w" + std::to_string(word(rng) % 2000) + " ";
        c.queries.push_back(std::move(t));
    }
    return c;
}

struct Run {
    std::size_t searches = 0;
    double wall = 0, reader_cpu = 0;
    std::vector<double> latencies_us;
    std::size_t writes = 0;
};

/// `readers` threads call search(q) for `seconds`; `writer(stop)` runs beside them when given.
template <class Search, class Writer>
Run run(std::size_t readers, double seconds, const Corpus& c, const Search& search, const Writer& writer,
        bool with_writer) {
    Run r;
    std::atomic<bool> stop{false};
    std::atomic<std::size_t> writes{0};
    std::vector<std::vector<double>> lat(readers);
    std::vector<double> cpu(readers);
    std::latch start(static_cast<std::ptrdiff_t>(readers + 1));
    std::vector<std::thread> pool;
    for (std::size_t t = 0; t < readers; ++t)
        pool.emplace_back([&, t] {
            start.arrive_and_wait();
            const double c0 = thread_cpu_seconds();
            for (std::size_t i = t * 37; !stop.load(std::memory_order_relaxed); ++i) {
                const auto a = Clock::now();
                search(c.queries[i % c.queries.size()]);
                lat[t].push_back(std::chrono::duration<double, std::micro>(Clock::now() - a).count());
            }
            cpu[t] = thread_cpu_seconds() - c0;
        });
    std::thread w;
    if (with_writer) w = std::thread([&] { writes = writer(stop); });
    start.arrive_and_wait();
    const auto t0 = Clock::now();
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    stop.store(true);
    for (auto& th : pool) th.join();
    if (w.joinable()) w.join();
    r.wall = std::chrono::duration<double>(Clock::now() - t0).count();
    for (std::size_t t = 0; t < readers; ++t) {
        r.latencies_us.insert(r.latencies_us.end(), lat[t].begin(), lat[t].end());
        r.reader_cpu += cpu[t];
    }
    r.searches = r.latencies_us.size();
    r.writes = writes.load();
    std::sort(r.latencies_us.begin(), r.latencies_us.end());
    return r;
}

double quantile(const std::vector<double>& sorted, double q) {
    if (sorted.empty()) return 0;
    return sorted[std::min(sorted.size() - 1, static_cast<std::size_t>(q * static_cast<double>(sorted.size())))];
}

void print(const char* setup, std::size_t readers, const Run& r, std::size_t docs) {
    std::printf("{\"bench\":\"concurrent\",\"setup\":\"%s\",\"docs\":%zu,\"readers\":%zu,\"searches_per_s\":%.0f,"
                "\"cpu_us_per_search\":%.1f,\"p50_us\":%.1f,\"p99_us\":%.1f,\"max_us\":%.0f,\"writes\":%zu}\n",
                setup, docs, readers, static_cast<double>(r.searches) / r.wall,
                r.reader_cpu * 1e6 / static_cast<double>(std::max<std::size_t>(r.searches, 1)),
                quantile(r.latencies_us, 0.5), quantile(r.latencies_us, 0.99),
                r.latencies_us.empty() ? 0.0 : r.latencies_us.back(), r.writes);
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    const std::size_t docs = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 50000;
    const double seconds = argc > 2 ? std::atof(argv[2]) : 2.0;
    constexpr std::size_t extra = 20000;  // documents the writers add
    const Corpus c = make_corpus(docs, extra);
    Index base;
    for (std::size_t d = 0; d < docs; ++d)
        base.add_document(static_cast<ragpp::DocId>(d), ragpp::Document{"d" + std::to_string(d), c.texts[d], {}});

    std::size_t sink = 0;  // keeps the searches from being optimised away
    for (std::size_t readers : {std::size_t{1}, std::size_t{2}}) {
        {
            const Run r = run(readers, seconds, c, [&](const std::string& q) { return base.search(q, 10).size(); },
                              [](std::atomic<bool>&) { return std::size_t{0}; }, false);
            print("plain", readers, r, docs);
        }
        for (bool with_writer : {false, true}) {
            ragpp::Concurrent<Index> shared(base);
            const Run r = run(
                readers, seconds, c,
                [&](const std::string& q) { return shared.read([&](const Index& x) { return x.search(q, 10).size(); }); },
                [&](std::atomic<bool>& stop) {
                    std::size_t n = 0;
                    for (; !stop.load() && n < extra; ++n) {
                        const auto id = static_cast<ragpp::DocId>(docs + n);
                        const ragpp::Document d{"d" + std::to_string(id), c.texts[id], {}};
                        shared.write([&](Index& x) { x.add_document(id, d); }, ragpp::WriteGuarantee::strong);
                        std::this_thread::sleep_for(std::chrono::milliseconds(1));
                    }
                    return n;
                },
                with_writer);
            print(with_writer ? "concurrent+w" : "concurrent", readers, r, docs);
        }
        {
            Index index = base;
            std::shared_mutex mutex;
            const Run r = run(
                readers, seconds, c,
                [&](const std::string& q) {
                    std::shared_lock lock(mutex);
                    return index.search(q, 10).size();
                },
                [&](std::atomic<bool>& stop) {
                    std::size_t n = 0;
                    for (; !stop.load() && n < extra; ++n) {
                        const auto id = static_cast<ragpp::DocId>(docs + n);
                        const ragpp::Document d{"d" + std::to_string(id), c.texts[id], {}};
                        {
                            std::unique_lock lock(mutex);
                            index.add_document(id, d);
                        }
                        std::this_thread::sleep_for(std::chrono::milliseconds(1));
                    }
                    return n;
                },
                true);
            print("rwlock+w", readers, r, docs);
        }
    }

    // The cost of a write, no reader running: the same 5,000 documents added to the index
    // alone and through Concurrent::write (both copies).
    constexpr std::size_t adds = 5000;
    const auto add_all = [&](auto&& add) {
        const double c0 = thread_cpu_seconds();
        const auto t0 = Clock::now();
        for (std::size_t n = 0; n < adds; ++n) {
            const auto id = static_cast<ragpp::DocId>(docs + n);
            add(id, ragpp::Document{"d" + std::to_string(id), c.texts[id], {}});
        }
        return std::pair(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / adds,
                         (thread_cpu_seconds() - c0) * 1e6 / adds);
    };
    Index alone = base;
    const auto [plain_wall, plain_cpu] = add_all([&](ragpp::DocId id, const ragpp::Document& d) { alone.add_document(id, d); });
    ragpp::Concurrent<Index> shared(base);
    const auto [conc_wall, conc_cpu] = add_all([&](ragpp::DocId id, const ragpp::Document& d) {
        shared.write([&](Index& x) { x.add_document(id, d); }, ragpp::WriteGuarantee::strong);
    });
    sink += shared.read([](const Index& x) { return x.size(); }) + alone.size();
    std::printf("{\"bench\":\"concurrent_write\",\"docs\":%zu,\"adds\":%zu,\"plain_us_per_add\":%.1f,"
                "\"plain_cpu_us_per_add\":%.1f,\"concurrent_us_per_add\":%.1f,\"concurrent_cpu_us_per_add\":%.1f,"
                "\"ratio_cpu\":%.2f,\"sink\":%zu}\n",
                docs, adds, plain_wall, plain_cpu, conc_wall, conc_cpu, conc_cpu / plain_cpu, sink);
}
