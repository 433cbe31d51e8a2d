// bench_scale: how ragpp's indexes grow with the collection.
//
// A synthetic collection of --docs chunks (fixed seed): each chunk has 20 to 60 terms
// (uniform, mean 40) drawn from --vocab terms with P(rank r) proportional to 1 / r^1.07
// (as bench_bm25_synthetic), and a --dim-dimensional unit vector (default 384) drawn
// around one of 1,024 random centres (uniform noise, then normalised), stored as int8
// without float32 rows (Quantization::int8). Queries: 2 to 5 distinct terms without the
// 100 most frequent ones, and a vector near a random centre.
//
// Prints one JSON line per figure:
//   build      build time (wall and CPU, one thread) of BM25 and of the int8 vectors,
//              peak RSS so far, bytes per posting and per vector;
//   save/open  index size on disk, open time through mmap (OpenOptions{.mmap = true}),
//              RSS right after open, and that the opened indexes answer as the built ones;
//   bm25_open  the mapped BM25 open alone (wall and CPU), RSS before and after it and after
//              10, 100 and every text query ran on it (one thread; the first 100 queries'
//              CPU time, which includes checking each term's list on first use), the anonymous
//              part of the RSS (without the mapped file's page cache), its p50/p99
//              (cold pages, then again warm) beside the built index's, and how many of the
//              queries return identical hits;
//   bm25_first_write  the first add to a copy of the mapped index (it decodes the file: thaw);
//   hnsw       the approximate index (VectorIndex<E, Hnsw> on int8 rows, M --hnsw-m,
//              ef_construction --hnsw-efc, ef_search --hnsw-ef), only up to --hnsw-max
//              chunks: build time (wall, and CPU of the process: the build runs on
//              --hnsw-threads threads), its file size, mapped open time; progress on stderr;
//   search     top-10 p50/p99 latency (wall) and queries per second for bm25, vector
//              (flat int8 scan), vector (HNSW, with its recall@10 against the flat int8
//              scan's ids), and hybrid (bm25 top-100 + vector top-100 fused by RRF,
//              k = 60, the Retriever's fusion without its query embedding; with the flat
//              scan, and with HNSW when it was built), at 1 and 2 threads (each thread
//              runs its share of the queries).
//   peak       peak RSS of the whole run (getrusage), the figure that must fit in 24 GB.
//
// Usage: bench_scale [--docs N] [--dim D] [--vocab V] [--queries Q] [--vector-queries QV]
//                    [--hnsw-max N] [--hnsw-threads T] [--hnsw-m M] [--hnsw-efc E] [--hnsw-ef E]
//                    [--out DIR] [--seed S]
// --out DIR (default: a folder under the system temporary folder) receives bm25.idx,
// vector.idx and hnsw.idx; they are removed at the end unless --keep 1.
#include "bm25_bench.hpp"
#include "clustered_vectors.hpp"

#include <ragpp/embed/hashing.hpp>
#include <ragpp/index/hnsw.hpp>
#include <ragpp/index/vector.hpp>
#include <ragpp/retrieve/fusion.hpp>

#include <sys/resource.h>

#include <cmath>
#include <fstream>
#include <random>
#include <thread>

namespace {

/// Peak resident set of this process so far, in bytes.
std::size_t peak_rss() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<std::size_t>(u.ru_maxrss) * 1024;
}

/// The anonymous part of the resident set (resident minus file-backed pages, from
/// /proc/self/statm): what the process allocated, without the mapped files' page cache.
std::size_t anon_rss_bytes() {
    std::ifstream in("/proc/self/statm");
    std::size_t pages = 0, resident = 0, shared = 0;
    in >> pages >> resident >> shared;
    return (resident - shared) * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

/// CPU time of the whole process (every thread), in seconds.
double process_cpu_s() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Latency {
    double p50_ms = 0, p99_ms = 0, qps = 0;
};

/// Runs `run(q)` for every query q in [0, nq), split across `threads` threads; the
/// latency of each query (wall) and the aggregate queries per second.
template <class Run>
Latency measure(std::size_t nq, unsigned threads, const Run& run) {
    std::vector<double> ms(nq);
    const double t0 = bench::now_s();
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            for (std::size_t q = t; q < nq; q += threads) {
                const double s0 = bench::now_s();
                run(q);
                ms[q] = (bench::now_s() - s0) * 1e3;
            }
        });
    for (auto& th : pool) th.join();
    const double wall = bench::now_s() - t0;
    return {bench::quantile(ms, 0.5), bench::quantile(ms, 0.99), static_cast<double>(nq) / wall};
}

std::vector<ragpp::DocId> ids_of(const std::vector<ragpp::Hit>& hits) {
    std::vector<ragpp::DocId> out;
    out.reserve(hits.size());
    for (const auto& h : hits) out.push_back(h.id);
    return out;
}

}  // namespace

int main(int argc, char** argv) try {
    const auto ndocs = static_cast<std::size_t>(bench::option(argc, argv, "docs", 100'000));
    const auto dim = static_cast<std::size_t>(bench::option(argc, argv, "dim", 384));
    const auto nvocab = static_cast<std::size_t>(bench::option(argc, argv, "vocab", 1'000'000));
    const auto nqueries = static_cast<std::size_t>(bench::option(argc, argv, "queries", 1'000));
    const auto nvq = static_cast<std::size_t>(
        bench::option(argc, argv, "vector-queries", static_cast<long>(std::min<std::size_t>(nqueries, 100))));
    const auto hnsw_max = static_cast<std::size_t>(bench::option(argc, argv, "hnsw-max", 200'000));
    const auto hnsw_threads = static_cast<unsigned>(bench::option(argc, argv, "hnsw-threads", 2));
    ragpp::HnswOptions hnsw_opts;
    hnsw_opts.M = static_cast<std::size_t>(bench::option(argc, argv, "hnsw-m", 16));
    hnsw_opts.ef_construction = static_cast<std::size_t>(bench::option(argc, argv, "hnsw-efc", 200));
    hnsw_opts.ef_search = static_cast<std::size_t>(bench::option(argc, argv, "hnsw-ef", 64));
    const auto seed = static_cast<std::uint64_t>(bench::option(argc, argv, "seed", 20261201));
    const bool keep = bench::option(argc, argv, "keep", 0) != 0;
    std::filesystem::path out = std::filesystem::temp_directory_path() / ("ragpp-bench-scale-" + std::to_string(::getpid()));
    for (int i = 1; i + 1 < argc; ++i)
        if (std::string(argv[i]) == "--out") out = argv[i + 1];
    std::filesystem::create_directories(out);
    constexpr double exponent = 1.07;
    constexpr std::size_t stop_ranks = 100, k = 10, fuse_depth = 100;
    const nlohmann::json base{{"bench", "scale"}, {"docs", ndocs}, {"dim", dim}, {"vocab", nvocab}, {"seed", seed}};
    auto line = [&](nlohmann::json j) {
        j.update(base);
        bench::print(j);
    };

    // --- the vocabulary and its Zipf law (as bench_bm25_synthetic) --------------------
    const bench::ZipfVocabulary zipf(nvocab, exponent);
    const auto& vocab = zipf.words;
    std::mt19937_64 rng(seed);
    auto draw = [&](std::size_t from_rank) { return zipf.draw(rng, from_rank); };

    // --- BM25 --------------------------------------------------------------------------
    using Bm25 = ragpp::BM25Index<ragpp::WhitespaceAnalyzer>;
    Bm25 bm25(ragpp::BM25Params{ragpp::BM25Variant::lucene, 0.9, 0.4, 0.5, 0.25});
    {
        std::vector<std::string> terms;
        std::uniform_int_distribution<std::size_t> length(20, 60);
        double wall = 0, cpu = 0;
        for (std::size_t d = 0; d < ndocs; ++d) {
            terms.clear();
            const std::size_t n = length(rng);
            for (std::size_t i = 0; i < n; ++i) terms.push_back(vocab[draw(0)]);
            const double t0 = bench::now_s(), c0 = bench::cpu_now_s();
            bm25.add_terms(static_cast<ragpp::DocId>(d), terms);
            wall += bench::now_s() - t0;
            cpu += bench::cpu_now_s() - c0;
        }
        const double t0 = bench::now_s(), c0 = bench::cpu_now_s();
        bm25.shrink_to_fit();
        wall += bench::now_s() - t0;
        cpu += bench::cpu_now_s() - c0;
        line({{"figure", "build"}, {"index", "bm25"}, {"build_s", wall}, {"build_cpu_s", cpu},
              {"postings", bm25.posting_count()}, {"memory_bytes", bm25.memory_bytes()},
              {"bytes_per_posting", static_cast<double>(bm25.memory_bytes()) / static_cast<double>(bm25.posting_count())},
              {"peak_rss_bytes", peak_rss()}});
    }

    // --- int8 vectors, no float32 rows ---------------------------------------------------
    ragpp::HashingOptions ho;
    ho.dimension = dim;
    ragpp::VectorIndexOptions vo;
    vo.metric = ragpp::Metric::cosine;
    vo.quantization = ragpp::Quantization::int8;
    using Vectors = ragpp::VectorIndex<ragpp::HashingEmbedder>;
    Vectors vectors(ragpp::HashingEmbedder(ho), vo);
    const bench::ClusteredVectors clustered(dim, seed);  // bench/clustered_vectors.hpp
    auto make_vector = [&](std::uint64_t i, float* v) { clustered.make(i, v); };
    // Builds a vector index by batches of 65,536 generated rows: add(ids, rows) each, then
    // progress(rows so far, wall, CPU); returns the wall and process-CPU seconds of add.
    auto build_by_batches = [&](auto&& add, auto&& progress) {
        constexpr std::size_t batch = 65'536;
        ragpp::RowMatrixXf rows(static_cast<Eigen::Index>(batch), static_cast<Eigen::Index>(dim));
        std::vector<ragpp::DocId> ids;
        double wall = 0, cpu = 0;
        for (std::size_t first = 0; first < ndocs; first += batch) {
            const std::size_t n = std::min(batch, ndocs - first);
            ids.resize(n);
            for (std::size_t i = 0; i < n; ++i) {
                ids[i] = static_cast<ragpp::DocId>(first + i);
                make_vector(first + i, rows.data() + i * dim);
            }
            const double t0 = bench::now_s(), c0 = process_cpu_s();
            add(ids, rows.topRows(static_cast<Eigen::Index>(n)));
            wall += bench::now_s() - t0;
            cpu += process_cpu_s() - c0;
            progress(first + n, wall, cpu);
        }
        return std::pair{wall, cpu};
    };
    {
        // The total is known: reserve it (no growth, no copy of the rows; 10M peaked at
        // 9.4 GB with growth and a final shrink_to_fit). shrink_to_fit below is then a no-op.
        vectors.reserve(ndocs);
        auto [wall, cpu] = build_by_batches([&](const auto& ids, const auto& rows) { vectors.add_vectors(ids, rows); },
                                            [](std::size_t, double, double) {});
        // A build by batches ends with up to a third of its capacity spare; give it back
        // (as bm25.shrink_to_fit above), timed with the build.
        const double t0 = bench::now_s(), c0 = process_cpu_s();
        vectors.shrink_to_fit();
        wall += bench::now_s() - t0;
        cpu += process_cpu_s() - c0;
        line({{"figure", "build"}, {"index", "vector_int8"}, {"build_s", wall}, {"build_cpu_s", cpu},
              {"memory_bytes", vectors.memory_bytes()},
              {"bytes_per_vector", static_cast<double>(vectors.memory_bytes()) / static_cast<double>(ndocs)},
              {"peak_rss_bytes", peak_rss()}});
    }

    // --- queries ----------------------------------------------------------------------
    std::vector<std::string> text_queries;
    {
        std::uniform_int_distribution<std::size_t> qlen(2, 5);
        for (std::size_t q = 0; q < nqueries; ++q) {
            std::vector<std::string> t;
            const std::size_t n = qlen(rng);
            while (t.size() < n) {
                auto w = vocab[draw(stop_ranks)];
                if (std::find(t.begin(), t.end(), w) == t.end()) t.push_back(std::move(w));
            }
            std::string s;
            for (const auto& w : t) s += (s.empty() ? "" : " ") + w;
            text_queries.push_back(std::move(s));
        }
    }
    const std::size_t nvec_queries = std::min(nvq, nqueries);
    std::vector<float> vector_queries(nqueries * dim);
    for (std::size_t q = 0; q < nqueries; ++q) make_vector(bench::ClusteredVectors::query_base + q, vector_queries.data() + q * dim);
    auto vq = [&](std::size_t q) { return std::span<const float>(vector_queries.data() + q * dim, dim); };

    // --- save, size on disk, mapped open ---------------------------------------------------
    {
        const double t0 = bench::now_s();
        bm25.save(out / "bm25.idx");
        vectors.save(out / "vector.idx");
        const double save_s = bench::now_s() - t0;
        const auto bytes = std::filesystem::file_size(out / "bm25.idx") + std::filesystem::file_size(out / "vector.idx");
        const std::size_t rss0 = bench::rss_bytes(), anon0 = anon_rss_bytes();
        const double o0 = bench::now_s(), oc0 = bench::cpu_now_s();
        auto bm25_m = Bm25::load(out / "bm25.idx", {}, ragpp::OpenOptions{.mmap = true, .verify = false});
        const double bm25_open_s = bench::now_s() - o0, bm25_open_cpu_s = bench::cpu_now_s() - oc0;
        const std::size_t rss_bm25 = bench::rss_bytes(), anon_bm25 = anon_rss_bytes();
        auto vectors_m = Vectors::load(out / "vector.idx", ragpp::HashingEmbedder(ho), vo,
                                       ragpp::OpenOptions{.mmap = true, .verify = false});
        const double open_s = bench::now_s() - o0;
        const std::size_t rss1 = bench::rss_bytes();
        // The mapped BM25 index against the built one over every text query: same results,
        // latency (one thread), and the RSS its queries add (the pages they touch).
        std::size_t rss_10 = 0, rss_100 = 0;  // after the first 10 and 100 queries
        const double q0 = bench::cpu_now_s();
        for (std::size_t q = 0; q < std::min<std::size_t>(100, nqueries); ++q) {
            (void)bm25_m.search(text_queries[q], k);
            if (q + 1 == 10) rss_10 = bench::rss_bytes();
            if (q + 1 == 100) rss_100 = bench::rss_bytes();
        }
        const double first_100_cpu_s = bench::cpu_now_s() - q0;
        const Latency mapped_l = measure(nqueries, 1, [&](std::size_t q) { (void)bm25_m.search(text_queries[q], k); });
        const std::size_t rss_queries = bench::rss_bytes(), anon_queries = anon_rss_bytes();
        const Latency built_l = measure(nqueries, 1, [&](std::size_t q) { (void)bm25.search(text_queries[q], k); });
        const Latency mapped_again = measure(nqueries, 1, [&](std::size_t q) { (void)bm25_m.search(text_queries[q], k); });
        std::size_t identical = 0;
        for (std::size_t q = 0; q < nqueries; ++q) identical += bm25_m.search(text_queries[q], k) == bm25.search(text_queries[q], k) ? 1 : 0;
        line({{"figure", "bm25_open"}, {"open_mmap_s", bm25_open_s}, {"open_mmap_cpu_s", bm25_open_cpu_s},
              {"frozen", bm25_m.frozen()}, {"rss_before_open_bytes", rss0}, {"rss_after_open_bytes", rss_bm25},
              {"anon_rss_before_open_bytes", anon0}, {"anon_rss_after_open_bytes", anon_bm25},
              {"anon_rss_after_queries_bytes", anon_queries}, {"rss_after_10_queries_bytes", rss_10}, {"rss_after_100_queries_bytes", rss_100},
              {"first_100_queries_cpu_s", first_100_cpu_s}, {"rss_after_queries_bytes", rss_queries}, {"queries", nqueries},
              {"mapped_p50_ms", mapped_l.p50_ms}, {"mapped_p99_ms", mapped_l.p99_ms}, {"built_p50_ms", built_l.p50_ms},
              {"built_p99_ms", built_l.p99_ms}, {"mapped_again_p50_ms", mapped_again.p50_ms},
              {"mapped_again_p99_ms", mapped_again.p99_ms},
              {"identical", std::to_string(identical) + "/" + std::to_string(nqueries)}});
        // The first write to a frozen index decodes and checks the whole file first (thaw).
        {
            auto writable = bm25_m;
            const std::vector<std::string> one{vocab[0]};
            const double w0 = bench::now_s(), wc0 = bench::cpu_now_s();
            writable.add_terms(writable.next_id(), one);
            line({{"figure", "bm25_first_write"}, {"first_add_s", bench::now_s() - w0},
                  {"first_add_cpu_s", bench::cpu_now_s() - wc0}, {"frozen_after", writable.frozen()},
                  {"memory_bytes_after", writable.memory_bytes()}});
        }
        std::size_t same = 0;
        const std::size_t check = std::min<std::size_t>(20, nvec_queries);
        for (std::size_t q = 0; q < check; ++q) {
            same += bm25_m.search(text_queries[q], k) == bm25.search(text_queries[q], k) ? 1 : 0;
            same += vectors_m.search_vector(vq(q), k) == vectors.search_vector(vq(q), k) ? 1 : 0;
        }
        line({{"figure", "save_open"}, {"save_s", save_s}, {"disk_bytes", bytes},
              {"bm25_disk_bytes", std::filesystem::file_size(out / "bm25.idx")},
              {"vector_disk_bytes", std::filesystem::file_size(out / "vector.idx")}, {"open_mmap_s", open_s},
              {"rss_before_open_bytes", rss0}, {"rss_after_open_bytes", rss1},
              {"opened_answer_as_built", std::to_string(same) + "/" + std::to_string(2 * check)}});
    }

    // --- HNSW (int8 rows), up to --hnsw-max chunks -------------------------------------------
    using Hnsw = ragpp::VectorIndex<ragpp::HashingEmbedder, ragpp::Hnsw>;
    std::optional<Hnsw> hnsw;
    if (ndocs <= hnsw_max) {
        hnsw.emplace(ragpp::HashingEmbedder(ho), vo, hnsw_opts);
        const double start = bench::now_s();
        const auto [wall, cpu] = build_by_batches(
            [&](const auto& ids, const auto& rows) { hnsw->add_vectors(ids, rows, hnsw_threads); },
            [&](std::size_t done, double w, double c) {
                std::fprintf(stderr, "bench_scale: hnsw %zu / %zu nodes, %.0f s wall, %.0f s CPU, %.0f s since the start\n",
                             done, ndocs, w, c, bench::now_s() - start);
            });
        line({{"figure", "build"}, {"index", "vector_hnsw_int8"}, {"build_s", wall}, {"build_cpu_s", cpu},
              {"threads", hnsw_threads}, {"M", hnsw_opts.M}, {"ef_construction", hnsw_opts.ef_construction},
              {"peak_rss_bytes", peak_rss()}});
        hnsw->save(out / "hnsw.idx");
        const double o0 = bench::now_s();
        auto hnsw_m = Hnsw::load(out / "hnsw.idx", ragpp::HashingEmbedder(ho), vo,
                                 ragpp::OpenOptions{.mmap = true, .verify = false});
        const double open_s = bench::now_s() - o0;
        std::size_t same = 0;
        const std::size_t check = std::min<std::size_t>(20, nvec_queries);
        for (std::size_t q = 0; q < check; ++q) same += hnsw_m.search_vector(vq(q), k) == hnsw->search_vector(vq(q), k) ? 1 : 0;
        line({{"figure", "save_open"}, {"index", "vector_hnsw_int8"},
              {"disk_bytes", std::filesystem::file_size(out / "hnsw.idx")}, {"open_mmap_s", open_s},
              {"opened_answer_as_built", std::to_string(same) + "/" + std::to_string(check)}});
    } else {
        line({{"figure", "build"}, {"index", "vector_hnsw_int8"}, {"skipped", "docs > --hnsw-max"}});
    }

    // --- search latency at 1 and 2 threads ----------------------------------------------------
    for (unsigned threads : {1U, 2U}) {
        auto report = [&](const char* index, std::size_t nq, const Latency& l, nlohmann::json extra = {}) {
            nlohmann::json j{{"figure", "search"}, {"index", index},     {"threads", threads}, {"queries", nq},
                             {"k", k},             {"p50_ms", l.p50_ms}, {"p99_ms", l.p99_ms}, {"qps", l.qps}};
            if (!extra.is_null()) j.update(extra);
            line(j);
        };
        report("bm25", nqueries, measure(nqueries, threads, [&](std::size_t q) { (void)bm25.search(text_queries[q], k); }));
        report("vector_flat_int8", nvec_queries,
               measure(nvec_queries, threads, [&](std::size_t q) { (void)vectors.search_vector(vq(q), k); }));
        if (hnsw) {
            // recall@10 of the graph against the flat int8 scan's ids (the flat index is exact
            // up to int8 re-scoring; see docs/vector-search.md).
            std::size_t found = 0, wanted = 0;
            for (std::size_t q = 0; q < nvec_queries; ++q) {
                const auto exact = ids_of(vectors.search_vector(vq(q), k));
                const auto approx = ids_of(hnsw->search_vector(vq(q), k));
                for (auto id : exact) found += std::find(approx.begin(), approx.end(), id) != approx.end() ? 1 : 0;
                wanted += exact.size();
            }
            report("vector_hnsw_int8", nqueries,
                   measure(nqueries, threads, [&](std::size_t q) { (void)hnsw->search_vector(vq(q), k); }),
                   {{"recall_at_10_vs_flat", static_cast<double>(found) / static_cast<double>(std::max<std::size_t>(wanted, 1))},
                    {"ef_search", hnsw->hnsw_options().ef_search}});
        }
        const auto hybrid = [&](const auto& vec) {
            return [&](std::size_t q) {
                const std::vector<std::vector<ragpp::DocId>> lists{ids_of(bm25.search(text_queries[q], fuse_depth)),
                                                                   ids_of(vec.search_vector(vq(q), fuse_depth))};
                auto fused = ragpp::reciprocal_rank_fusion(lists);
                if (fused.size() > k) fused.erase(fused.begin() + static_cast<std::ptrdiff_t>(k), fused.end());
            };
        };
        report("hybrid_rrf", nvec_queries, measure(nvec_queries, threads, hybrid(vectors)));
        if (hnsw) report("hybrid_rrf_hnsw", nqueries, measure(nqueries, threads, hybrid(*hnsw)));
    }
    line({{"figure", "peak"}, {"peak_rss_bytes", peak_rss()}});
    if (!keep) std::filesystem::remove_all(out);
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "bench_scale: %s\n", e.what());
    return 1;
}
