// Flat vector search at memory speed: one thread, N synthetic unit vectors of D
// dimensions (inner product), fixed seeds. Prints one JSON line per configuration:
//   read      a plain sequential read of the same float32 bytes (the memory's limit)
//   float32   VectorIndex::search_vector, exact: ms/query, GB/s, fraction of `read`
//   batch     VectorIndex::search_batch (one matrix product per block of rows)
//   int8 / float16   quantized scan + re-scoring from the dequantized rows: ms/query, recall@10 vs exact
//   int8_exact_rescore   the same, re-scored from float32 rows in a file (exact_rescore)
//   faiss_flat_ip    FAISS IndexFlatIP on the same vectors and queries (when built with it)
// Usage: bench_vector [--n N] [--dim D] [--queries Q] [--batch B]
// Memory: about 2.3 x N x D x 4 bytes at its peak (2.4 GB for the defaults).
#include <ragpp/index/vector.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

#include "clustered_vectors.hpp"

#ifdef RAGPP_BENCH_FAISS
#include <faiss/IndexFlat.h>
#include <omp.h>
// OpenBLAS (Debian's pthread build) has its own thread pool, which OpenMP's setting
// does not limit: FAISS's batch search (sgemm) must be held to one thread as well.
extern "C" void openblas_set_num_threads(int);
#endif

namespace {

using Clock = std::chrono::steady_clock;
using ragpp::DocId;
using ragpp::Hit;
using ragpp::RowMatrixXf;

/// Precomputed vectors only: the benchmark never embeds text.
struct NoText {
    std::size_t dim = 256;
    [[nodiscard]] std::size_t dimension() const { return dim; }
    [[nodiscard]] Eigen::VectorXf embed(std::string_view, ragpp::Role) const {
        return Eigen::VectorXf::Zero(static_cast<Eigen::Index>(dim));
    }
    [[nodiscard]] RowMatrixXf embed_batch(std::span<const std::string> t, ragpp::Role r) const {
        return ragpp::embed_rows(*this, t, r);
    }
    [[nodiscard]] std::string name() const { return "none"; }
};
using Index = ragpp::VectorIndex<NoText>;

using bench::SplitMix;  // bench/clustered_vectors.hpp

void fill_unit_rows(float* p, std::size_t rows, std::size_t dim, SplitMix& rng) {
    for (std::size_t r = 0; r < rows; ++r) {
        float n2 = 0;
        for (std::size_t j = 0; j < dim; ++j) {
            p[r * dim + j] = rng.gauss();
            n2 += p[r * dim + j] * p[r * dim + j];
        }
        const float inv = 1.0F / std::sqrt(n2);
        for (std::size_t j = 0; j < dim; ++j) p[r * dim + j] *= inv;
    }
}

/// Builds an index of the benchmark's vectors (always the same, seed 1), in chunks.
/// With `exact_rows`, a quantized index keeps float32 rows there for exact re-scoring.
Index build(std::size_t n, std::size_t dim, ragpp::Quantization q, const std::filesystem::path& exact_rows = {}) {
    ragpp::VectorIndexOptions o;
    o.metric = ragpp::Metric::inner_product;
    o.quantization = q;
    o.exact_rescore = !exact_rows.empty();
    o.exact_rows = exact_rows;
    Index idx(NoText{dim}, o);
    SplitMix rng{1};
    const std::size_t chunk = 16384;
    RowMatrixXf block;
    std::vector<DocId> ids;
    for (std::size_t b = 0; b < n; b += chunk) {
        const std::size_t len = std::min(chunk, n - b);
        block.resize(static_cast<Eigen::Index>(len), static_cast<Eigen::Index>(dim));
        fill_unit_rows(block.data(), len, dim, rng);
        ids.resize(len);
        for (std::size_t i = 0; i < len; ++i) ids[i] = static_cast<DocId>(b + i);
        idx.add_vectors(ids, block);
    }
    return idx;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}
double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}
/// This thread's CPU time in ms: unlike wall time, it does not count the time the
/// thread waits for a core on a loaded machine (it still counts memory stalls).
double cpu_ms() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

/// A plain sequential read of `bytes` bytes: 64-bit adds into four vector
/// accumulators with software prefetch 8 KB ahead (the fastest plain read we found on
/// this machine), for the best ISA the CPU has (the search kernels' run-time choice).
#if defined(__x86_64__)
__attribute__((target("avx512f"))) std::uint64_t read_avx512(const std::uint64_t* p, std::size_t n) {
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
    std::size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        for (std::size_t b = 0; b < 32; b += 8) _mm_prefetch(reinterpret_cast<const char*>(p + i + 1024 + b), _MM_HINT_T0);
        a0 = _mm512_add_epi64(a0, _mm512_loadu_si512(p + i));
        a1 = _mm512_add_epi64(a1, _mm512_loadu_si512(p + i + 8));
        a2 = _mm512_add_epi64(a2, _mm512_loadu_si512(p + i + 16));
        a3 = _mm512_add_epi64(a3, _mm512_loadu_si512(p + i + 24));
    }
    alignas(64) std::uint64_t t[8];
    _mm512_store_si512(t, _mm512_add_epi64(_mm512_add_epi64(a0, a1), _mm512_add_epi64(a2, a3)));
    std::uint64_t s = 0;
    for (auto x : t) s += x;
    for (; i < n; ++i) s += p[i];
    return s;
}
__attribute__((target("avx2"))) std::uint64_t read_avx2(const std::uint64_t* p, std::size_t n) {
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        for (std::size_t b = 0; b < 16; b += 8) _mm_prefetch(reinterpret_cast<const char*>(p + i + 1024 + b), _MM_HINT_T0);
        a0 = _mm256_add_epi64(a0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i)));
        a1 = _mm256_add_epi64(a1, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 4)));
        a2 = _mm256_add_epi64(a2, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 8)));
        a3 = _mm256_add_epi64(a3, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 12)));
    }
    alignas(32) std::uint64_t t[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(t), _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3)));
    std::uint64_t s = 0;
    for (auto x : t) s += x;
    for (; i < n; ++i) s += p[i];
    return s;
}
#endif
std::uint64_t sequential_read(const void* data, std::size_t bytes) {
    const auto* p = static_cast<const std::uint64_t*>(data);
    const std::size_t n = bytes / 8;
#if defined(__x86_64__)
    const auto isa = ragpp::detail::simd::kernels().isa;
    if (isa == ragpp::detail::simd::Isa::avx512) return read_avx512(p, n);
    if (isa == ragpp::detail::simd::Isa::avx2) return read_avx2(p, n);
#endif
    std::uint64_t s = 0;
    for (std::size_t i = 0; i < n; ++i) s += p[i];
    return s;
}

double recall_at(const std::vector<std::vector<Hit>>& got, const std::vector<std::vector<Hit>>& exact) {
    std::size_t hit = 0, total = 0;
    for (std::size_t q = 0; q < exact.size(); ++q) {
        for (const Hit& e : exact[q])
            hit += static_cast<std::size_t>(std::count_if(got[q].begin(), got[q].end(), [&](const Hit& h) { return h.id == e.id; }));
        total += exact[q].size();
    }
    return total == 0 ? 0.0 : static_cast<double>(hit) / static_cast<double>(total);
}

std::size_t arg(int argc, char** argv, const char* name, std::size_t fallback) {
    for (int i = 1; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], name) == 0) return static_cast<std::size_t>(std::stoull(argv[i + 1]));
    return fallback;
}

}  // namespace

int main(int argc, char** argv) {
    const std::size_t n = arg(argc, argv, "--n", 1'000'000);
    const std::size_t dim = arg(argc, argv, "--dim", 256);
    const std::size_t nq = arg(argc, argv, "--queries", 30);
    const std::size_t nb = arg(argc, argv, "--batch", 64);
    const std::size_t k = 10;
    bool only_quantized = false;  // --only-quantized: skip the float32 and FAISS figures
    for (int i = 1; i < argc; ++i) only_quantized = only_quantized || std::strcmp(argv[i], "--only-quantized") == 0;
    const double gb = static_cast<double>(n * dim * sizeof(float)) / 1e9;
    const char* isa = ragpp::detail::simd::isa_name(ragpp::detail::simd::kernels().isa).data();

    RowMatrixXf queries(static_cast<Eigen::Index>(std::max(nq, nb)), static_cast<Eigen::Index>(dim));
    SplitMix qrng{2};
    fill_unit_rows(queries.data(), static_cast<std::size_t>(queries.rows()), dim, qrng);
    auto query = [&](std::size_t i) { return std::span<const float>(queries.row(static_cast<Eigen::Index>(i)).data(), dim); };
    std::setvbuf(stdout, nullptr, _IOLBF, 0);  // one line at a time, even into a file
    auto head = [&](const char* config) {
        std::printf(R"({"bench":"vector_flat","config":"%s","n":%zu,"dim":%zu,"threads":1,"isa":"%s")", config, n, dim, isa);
    };

    // --- float32: memory read speed, exact search, batch search --------------------
    std::vector<std::vector<Hit>> exact(nq);
    double read_gbps = 0.0, f32_ms = 0.0, f32_cpu_ms = 0.0;
    {
        const Index idx = build(n, dim, ragpp::Quantization::none);
        if (only_quantized) {  // the exact results only, for recall
            for (std::size_t q = 0; q < nq; ++q) {
                const auto t0 = Clock::now();
                const double c0 = cpu_ms();
                exact[q] = idx.search_vector(query(q), k);
                f32_cpu_ms += (cpu_ms() - c0) / static_cast<double>(nq);
                f32_ms += ms_since(t0) / static_cast<double>(nq);
            }
            goto quantized;
        }
        const auto m = idx.matrix();
        // Reads and searches alternate, so that both see the same load on the machine.
        std::vector<double> reads, times, reads_cpu, times_cpu;
        std::uint64_t sink = 0;
        for (std::size_t q = 0; q < nq; ++q) {
            auto t0 = Clock::now();
            double c0 = cpu_ms();
            sink += sequential_read(m.data(), n * dim * sizeof(float));
            reads_cpu.push_back(cpu_ms() - c0);
            reads.push_back(ms_since(t0));
            t0 = Clock::now();
            c0 = cpu_ms();
            exact[q] = idx.search_vector(query(q), k);
            times_cpu.push_back(cpu_ms() - c0);
            times.push_back(ms_since(t0));
        }
        read_gbps = gb / (median(reads) / 1e3);
        const double read_cpu_gbps = gb / (median(reads_cpu) / 1e3);
        head("read");
        std::printf(R"(,"bytes":%zu,"runs":%zu,"ms":%.3f,"gb_per_s":%.2f,"cpu_ms":%.3f,"cpu_gb_per_s":%.2f,"checksum":%llu})" "\n",
                    n * dim * sizeof(float), nq, median(reads), read_gbps, median(reads_cpu), read_cpu_gbps,
                    static_cast<unsigned long long>(sink % 1000));
        f32_ms = median(times);
        const double f32_cpu = median(times_cpu);
        f32_cpu_ms = f32_cpu;
        head("float32");
        std::printf(R"(,"k":%zu,"queries":%zu,"ms_per_query":%.3f,"gb_per_s":%.2f,"fraction_of_read":%.3f,"cpu_ms_per_query":%.3f,"cpu_gb_per_s":%.2f,"cpu_fraction_of_read":%.3f,"recall_at_10":1.0})" "\n",
                    k, nq, f32_ms, gb / (f32_ms / 1e3), gb / (f32_ms / 1e3) / read_gbps, f32_cpu, gb / (f32_cpu / 1e3),
                    gb / (f32_cpu / 1e3) / read_cpu_gbps);

        const RowMatrixXf batch = queries.topRows(static_cast<Eigen::Index>(nb));
        const auto t0 = Clock::now();
        const auto res = idx.search_batch(batch, k);
        const double ms = ms_since(t0);
        std::size_t same = 0;
        auto same_ids = [](const std::vector<Hit>& a, const std::vector<Hit>& b) {
            return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](const Hit& x, const Hit& y) { return x.id == y.id; });
        };
        for (std::size_t q = 0; q < std::min(nq, nb); ++q) same += same_ids(res[q], exact[q]) ? 1 : 0;
        head("float32_batch");
        std::printf(R"(,"k":%zu,"queries":%zu,"ms_per_query":%.3f,"same_as_single":%zu,"compared":%zu})" "\n", k, nb,
                    ms / static_cast<double>(nb), same, std::min(nq, nb));

#ifdef RAGPP_BENCH_FAISS
        omp_set_num_threads(1);
        openblas_set_num_threads(1);
        faiss::IndexFlatIP fi(static_cast<faiss::Index::idx_t>(dim));
        fi.add(static_cast<faiss::Index::idx_t>(n), m.data());
        std::vector<float> dist(k * std::max(nq, nb));
        std::vector<faiss::Index::idx_t> labels(k * std::max(nq, nb));
        std::vector<double> ft, ftc;
        std::vector<std::vector<Hit>> fres(nq);
        for (std::size_t q = 0; q < nq; ++q) {
            const auto t1 = Clock::now();
            const double c1 = cpu_ms();
            fi.search(1, query(q).data(), static_cast<faiss::Index::idx_t>(k), dist.data(), labels.data());
            ftc.push_back(cpu_ms() - c1);
            ft.push_back(ms_since(t1));
            for (std::size_t j = 0; j < k; ++j) fres[q].push_back(Hit{static_cast<DocId>(labels[j]), dist[j]});
        }
        const double fms = median(ft);
        head("faiss_flat_ip");
        std::printf(R"(,"k":%zu,"queries":%zu,"ms_per_query":%.3f,"gb_per_s":%.2f,"fraction_of_read":%.3f,"cpu_ms_per_query":%.3f,"recall_at_10":%.4f,"ragpp_speedup":%.2f,"ragpp_speedup_cpu":%.2f})" "\n",
                    k, nq, fms, gb / (fms / 1e3), gb / (fms / 1e3) / read_gbps, median(ftc), recall_at(fres, exact), fms / f32_ms,
                    median(ftc) / f32_cpu);
        const auto t2 = Clock::now();
        fi.search(static_cast<faiss::Index::idx_t>(nb), batch.data(), static_cast<faiss::Index::idx_t>(k), dist.data(),
                  labels.data());
        head("faiss_flat_ip_batch");
        std::printf(R"(,"k":%zu,"queries":%zu,"ms_per_query":%.3f})" "\n", k, nb, ms_since(t2) / static_cast<double>(nb));
#else
        std::printf(R"({"bench":"vector_flat","config":"faiss_flat_ip","skipped":"built without FAISS"})" "\n");
#endif
    }

quantized:
    // --- quantized: speed and recall@10 against the exact results -------------------
    // int8 and float16 re-score from their own rows; int8_exact from float32 rows on disk.
    const auto exact_rows = std::filesystem::temp_directory_path() / ("ragpp-bench-vector-" + std::to_string(::getpid()) + ".f32");
    for (int config = 0; config < 3; ++config) {
        const auto q = config == 1 ? ragpp::Quantization::float16 : ragpp::Quantization::int8;
        const Index idx = build(n, dim, q, config == 2 ? exact_rows : std::filesystem::path{});
        std::vector<double> times, cpu;
        std::vector<std::vector<Hit>> got(nq);
        for (std::size_t i = 0; i < nq; ++i) {
            const auto t0 = Clock::now();
            const double c0 = cpu_ms();
            got[i] = idx.search_vector(query(i), k);
            cpu.push_back(cpu_ms() - c0);
            times.push_back(ms_since(t0));
        }
        const double ms = median(times);
        const double bytes = static_cast<double>(n * (q == ragpp::Quantization::int8 ? ((dim + 31) / 32 * 32) : 2 * ((dim + 15) / 16 * 16))) / 1e9;
        head(config == 0 ? "int8" : config == 1 ? "float16" : "int8_exact_rescore");
        std::printf(R"(,"k":%zu,"queries":%zu,"rescored":%zu,"ms_per_query":%.3f,"scan_gb_per_s":%.2f,"speedup_vs_float32":%.2f,"cpu_ms_per_query":%.3f,"cpu_speedup_vs_float32":%.2f,"recall_at_10":%.4f})" "\n",
                    k, nq, std::max(k * idx.options().rescore_factor, idx.options().min_rescore), ms, bytes / (ms / 1e3),
                    f32_ms / ms, median(cpu), f32_cpu_ms / median(cpu), recall_at(got, exact));
    }
    std::filesystem::remove(exact_rows);
    std::fflush(stdout);
    return 0;
}
