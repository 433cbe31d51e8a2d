// bench_bm25_synthetic: a synthetic corpus with a Zipfian vocabulary (fixed seed):
// --docs documents (default 1,000,000) of 50 to 150 terms (uniform, mean 100) drawn
// from --vocab terms (default 500,000) with P(rank r) proportional to 1 / r^1.07.
// Queries: --queries queries (default 1,000) of 2 to 5 distinct terms drawn from the
// same distribution without its 100 most frequent terms (an analyzer's stop words).
// Prints one JSON line per algorithm (automatic, maxscore, accumulate, exhaustive):
// build time (from terms, one thread), index bytes per posting, and the p50/p99/mean
// latency of top-10 queries; every algorithm's results are checked against the
// exhaustive one's.
// Usage: bench_bm25_synthetic [--docs N] [--vocab V] [--queries Q] [--seed S]
#include "bm25_bench.hpp"

#include <cmath>
#include <random>

int main(int argc, char** argv) try {
    const auto ndocs = static_cast<std::size_t>(bench::option(argc, argv, "docs", 1'000'000));
    const auto nvocab = static_cast<std::size_t>(bench::option(argc, argv, "vocab", 500'000));
    const auto nqueries = static_cast<std::size_t>(bench::option(argc, argv, "queries", 1'000));
    const auto seed = static_cast<std::uint64_t>(bench::option(argc, argv, "seed", 20260101));
    constexpr double exponent = 1.07;
    constexpr std::size_t stop_ranks = 100;

    std::vector<std::string> vocab(nvocab);
    std::vector<double> cdf(nvocab);
    double total = 0;
    for (std::size_t r = 0; r < nvocab; ++r) {
        vocab[r] = "w" + std::to_string(r);
        total += 1.0 / std::pow(static_cast<double>(r + 1), exponent);
        cdf[r] = total;
    }
    for (auto& c : cdf) c /= total;
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    auto draw = [&](std::size_t from_rank) {
        const double lo = from_rank == 0 ? 0.0 : cdf[from_rank - 1];
        const double u = lo + (1.0 - lo) * unit(rng);
        const auto r = static_cast<std::size_t>(std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
        return std::min(r, nvocab - 1);
    };

    using Index = ragpp::BM25Index<ragpp::WhitespaceAnalyzer>;
    Index index(ragpp::BM25Params{ragpp::BM25Variant::lucene, 0.9, 0.4, 0.5, 0.25});
    std::vector<std::string> terms;
    std::uniform_int_distribution<std::size_t> length(50, 150);
    double build = 0, build_cpu = 0;
    for (std::size_t d = 0; d < ndocs; ++d) {
        terms.clear();
        const std::size_t n = length(rng);
        for (std::size_t i = 0; i < n; ++i) terms.push_back(vocab[draw(0)]);
        const double t0 = bench::now_s(), c0 = bench::cpu_now_s();
        index.add_terms(static_cast<ragpp::DocId>(d), terms);
        build += bench::now_s() - t0;
        build_cpu += bench::cpu_now_s() - c0;
    }
    const double t0 = bench::now_s(), c0 = bench::cpu_now_s();
    index.shrink_to_fit();
    build += bench::now_s() - t0;
    build_cpu += bench::cpu_now_s() - c0;

    std::vector<std::vector<std::string>> queries;
    std::uniform_int_distribution<std::size_t> qlen(2, 5);
    for (std::size_t q = 0; q < nqueries; ++q) {
        std::vector<std::string> t;
        const std::size_t n = qlen(rng);
        while (t.size() < n) {
            auto w = vocab[draw(stop_ranks)];
            if (std::find(t.begin(), t.end(), w) == t.end()) t.push_back(std::move(w));
        }
        queries.push_back(std::move(t));
    }

    std::vector<std::vector<ragpp::Hit>> expected;
    for (auto strategy : {ragpp::BM25Strategy::exhaustive, ragpp::BM25Strategy::automatic, ragpp::BM25Strategy::maxscore,
                          ragpp::BM25Strategy::accumulate}) {
        std::vector<double> ms, cpu_ms;
        std::size_t mismatches = 0, scored = 0;
        std::map<std::string, std::size_t> used;
        for (std::size_t q = 0; q < queries.size(); ++q) {
            ragpp::BM25SearchStats stats;
            const double s0 = bench::now_s(), q0 = bench::cpu_now_s();
            auto hits = index.search_terms(queries[q], 10, {}, strategy, &stats);
            ms.push_back((bench::now_s() - s0) * 1e3);
            cpu_ms.push_back((bench::cpu_now_s() - q0) * 1e3);
            scored += stats.scored;
            ++used[std::string(ragpp::to_string(stats.algorithm))];
            if (strategy == ragpp::BM25Strategy::exhaustive) expected.push_back(std::move(hits));
            else if (hits != expected[q]) ++mismatches;
        }
        double mean = 0;
        for (double v : ms) mean += v;
        mean /= static_cast<double>(ms.size());
        const char* name = strategy == ragpp::BM25Strategy::exhaustive ? "exhaustive"
                           : strategy == ragpp::BM25Strategy::automatic ? "automatic"
                           : strategy == ragpp::BM25Strategy::maxscore  ? "maxscore"
                                                                         : "accumulate";
        bench::print({{"bench", "bm25_synthetic"}, {"engine", "ragpp"}, {"strategy", name}, {"algorithms_used", used},
                      {"docs", ndocs}, {"vocab", nvocab}, {"zipf_exponent", exponent}, {"seed", seed},
                      {"postings", index.posting_count()}, {"vocabulary_used", index.vocabulary_size()},
                      {"build_s", build}, {"build_cpu_s", build_cpu}, {"index_bytes", index.memory_bytes()},
                      {"bytes_per_posting",
                       static_cast<double>(index.memory_bytes()) / static_cast<double>(index.posting_count())},
                      {"queries", queries.size()}, {"k", 10}, {"p50_ms", bench::quantile(ms, 0.5)},
                      {"p99_ms", bench::quantile(ms, 0.99)}, {"mean_ms", mean},
                      {"p50_cpu_ms", bench::quantile(cpu_ms, 0.5)}, {"p99_cpu_ms", bench::quantile(cpu_ms, 0.99)},
                      {"mean_scored", static_cast<double>(scored) / static_cast<double>(queries.size())},
                      {"mismatches_vs_exhaustive", mismatches}});
    }
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "bench_bm25_synthetic: %s\n", e.what());
    return 1;
}
