// bench_bm25_synthetic: a synthetic corpus with a Zipfian vocabulary (fixed seed):
// --docs documents (default 1,000,000) of 50 to 150 terms (uniform, mean 100) drawn
// from --vocab terms (default 500,000) with P(rank r) proportional to 1 / r^1.07.
// Queries: --queries queries (default 1,000) of 2 to 5 distinct terms drawn from the
// same distribution without its 100 most frequent terms (an analyzer's stop words).
// Prints one JSON line per algorithm (automatic, maxscore, accumulate, exhaustive):
// build time (from terms, one thread), index bytes per posting, and the p50/p99/mean
// latency of top-10 queries; every algorithm's results are checked against the
// exhaustive one's.
// Side by side in the same run (when the build found git history, bench/bm25.cmake):
// the uncompressed postings of BM25 format 3 (BM25IndexV3, 8 bytes a posting and a
// forward index), built from the same documents first, its automatic and maxscore
// lines marked "format": 3, its results compared with the compressed index's.
// Then the compressed index is saved, and opened read and mapped: open time, RSS
// after open, file size; and 20 documents are removed (removal goes through the
// postings, there is no forward index): the time of one removal.
// Usage: bench_bm25_synthetic [--docs N] [--vocab V] [--queries Q] [--seed S]
#include "bm25_bench.hpp"

#ifdef RAGPP_BENCH_BM25_V3
#include "bm25_v3/index/bm25.hpp"
#endif

#include <cmath>
#include <fstream>
#include <random>
#include <unistd.h>

int main(int argc, char** argv) try {
    const auto ndocs = static_cast<std::size_t>(bench::option(argc, argv, "docs", 1'000'000));
    const auto nvocab = static_cast<std::size_t>(bench::option(argc, argv, "vocab", 500'000));
    const auto nqueries = static_cast<std::size_t>(bench::option(argc, argv, "queries", 1'000));
    const auto seed = static_cast<std::uint64_t>(bench::option(argc, argv, "seed", 20260101));
    constexpr double exponent = 1.07;
    constexpr std::size_t stop_ranks = 100;

    const bench::ZipfVocabulary zipf(nvocab, exponent);
    const auto& vocab = zipf.words;
    std::mt19937_64 rng(seed);
    auto draw = [&](std::size_t from_rank) { return zipf.draw(rng, from_rank); };

    // Builds `index` from the documents of the seed (the generator restarts each time,
    // so every build sees the same documents); returns {wall s, CPU s}.
    auto build = [&](auto& index) {
        rng.seed(seed);
        std::vector<std::string> terms;
        std::uniform_int_distribution<std::size_t> length(50, 150);
        double wall = 0, cpu = 0;
        for (std::size_t d = 0; d < ndocs; ++d) {
            terms.clear();
            const std::size_t n = length(rng);
            for (std::size_t i = 0; i < n; ++i) terms.push_back(vocab[draw(0)]);
            const double t0 = bench::now_s(), c0 = bench::cpu_now_s();
            index.add_terms(static_cast<ragpp::DocId>(d), terms);
            wall += bench::now_s() - t0;
            cpu += bench::cpu_now_s() - c0;
        }
        const double t0 = bench::now_s(), c0 = bench::cpu_now_s();
        index.shrink_to_fit();
        return std::pair{wall + bench::now_s() - t0, cpu + bench::cpu_now_s() - c0};
    };
    const ragpp::BM25Params params{ragpp::BM25Variant::lucene, 0.9, 0.4, 0.5, 0.25};

    std::vector<std::vector<std::string>> queries;
    auto make_queries = [&] {  // after the documents, from the same generator
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
    };

    // One JSON line per strategy for `index`; results into `results` (by query), and
    // compared with `expected` when it is not empty.
    // The file format of the index under test (its "format" field; 3 marks the old index).
    const int current_format = static_cast<int>(ragpp::detail::bm25::file_format.version);
    auto run = [&](const auto& index, ragpp::BM25Strategy strategy, int format, std::pair<double, double> built,
                   std::vector<std::vector<ragpp::Hit>>& results, const std::vector<std::vector<ragpp::Hit>>& expected,
                   const char* compared_with) {
        std::vector<double> ms, cpu_ms;
        std::size_t mismatches = 0, scored = 0;
        std::map<std::string, std::size_t> used;
        results.clear();
        for (std::size_t q = 0; q < queries.size(); ++q) {
            ragpp::BM25SearchStats stats;
            const double s0 = bench::now_s(), q0 = bench::cpu_now_s();
            auto hits = index.search_terms(queries[q], 10, {}, strategy, &stats);
            ms.push_back((bench::now_s() - s0) * 1e3);
            cpu_ms.push_back((bench::cpu_now_s() - q0) * 1e3);
            scored += stats.scored;
            ++used[std::string(ragpp::to_string(stats.algorithm))];
            if (!expected.empty() && hits != expected[q]) ++mismatches;
            results.push_back(std::move(hits));
        }
        double mean = 0;
        for (double v : ms) mean += v;
        mean /= static_cast<double>(ms.size());
        const char* name = strategy == ragpp::BM25Strategy::exhaustive ? "exhaustive"
                           : strategy == ragpp::BM25Strategy::automatic ? "automatic"
                           : strategy == ragpp::BM25Strategy::maxscore  ? "maxscore"
                                                                         : "accumulate";
        nlohmann::json line{{"bench", "bm25_synthetic"}, {"engine", "ragpp"}, {"format", format}, {"strategy", name},
                            {"algorithms_used", used}, {"docs", ndocs}, {"vocab", nvocab}, {"zipf_exponent", exponent},
                            {"seed", seed}, {"postings", index.posting_count()},
                            {"vocabulary_used", index.vocabulary_size()}, {"build_s", built.first},
                            {"build_cpu_s", built.second}, {"index_bytes", index.memory_bytes()},
                            {"bytes_per_posting",
                             static_cast<double>(index.memory_bytes()) / static_cast<double>(index.posting_count())},
                            {"queries", queries.size()}, {"k", 10}, {"p50_ms", bench::quantile(ms, 0.5)},
                            {"p99_ms", bench::quantile(ms, 0.99)}, {"mean_ms", mean},
                            {"p50_cpu_ms", bench::quantile(cpu_ms, 0.5)}, {"p99_cpu_ms", bench::quantile(cpu_ms, 0.99)},
                            {"mean_scored", static_cast<double>(scored) / static_cast<double>(queries.size())}};
        if (!expected.empty()) line[std::string("mismatches_vs_") + compared_with] = mismatches;
        bench::print(line);
    };

    std::vector<std::vector<ragpp::Hit>> v3_results, exhaustive, results;
    const std::vector<std::vector<ragpp::Hit>> none;
#ifdef RAGPP_BENCH_BM25_V3
    {
        ragpp::BM25IndexV3<ragpp::WhitespaceAnalyzer> old(params);
        const auto built = build(old);
        make_queries();
        run(old, ragpp::BM25Strategy::automatic, 3, built, v3_results, none, "");
        run(old, ragpp::BM25Strategy::maxscore, 3, built, results, v3_results, "format3_automatic");
    }
#else
    std::fprintf(stderr, "bench_bm25_synthetic: the format-3 side was not built (no git history at configure time)\n");
#endif

    using Index = ragpp::BM25Index<ragpp::WhitespaceAnalyzer>;
    Index index(params);
    const auto built = build(index);
    if (queries.empty()) make_queries();
    run(index, ragpp::BM25Strategy::exhaustive, current_format, built, exhaustive, v3_results, "format3_automatic");
    for (auto strategy : {ragpp::BM25Strategy::automatic, ragpp::BM25Strategy::maxscore, ragpp::BM25Strategy::accumulate})
        run(index, strategy, current_format, built, results, exhaustive, "exhaustive");

    // Save, then open read and mapped.
    const auto path = std::filesystem::temp_directory_path() / ("bench_bm25_synthetic-" + std::to_string(::getpid()) + ".bm25");
    double save_s = bench::now_s();
    index.save(path);
    save_s = bench::now_s() - save_s;
    for (const auto& [mmap, verify] : {std::pair{false, true}, std::pair{true, false}}) {
        const std::size_t rss0 = bench::rss_bytes();
        const double t0 = bench::now_s(), c0 = bench::cpu_now_s();
        const Index opened = Index::load(path, {}, {mmap, verify});
        const double open_s = bench::now_s() - t0, open_cpu_s = bench::cpu_now_s() - c0;
        const std::size_t rss1 = bench::rss_bytes();
        std::size_t mismatches = 0;
        for (std::size_t q = 0; q < std::min<std::size_t>(100, queries.size()); ++q)
            mismatches += opened.search_terms(queries[q], 10) != exhaustive[q];
        bench::print({{"bench", "bm25_synthetic"}, {"engine", "ragpp"}, {"format", current_format}, {"open", mmap ? "mmap" : "read"},
                      {"verify", verify}, {"file_bytes", std::filesystem::file_size(path)}, {"save_s", save_s},
                      {"open_s", open_s}, {"open_cpu_s", open_cpu_s}, {"rss_after_open_bytes", rss1},
                      {"rss_added_by_open_bytes", rss1 > rss0 ? rss1 - rss0 : 0},
                      {"mismatches_vs_exhaustive_first_100", mismatches}});
    }
    std::filesystem::remove(path);

    // Removal through the postings (no forward index): 20 documents spread over the ids.
    std::vector<double> remove_ms;
    for (std::size_t i = 0; i < 20 && i < ndocs; ++i) {
        const auto id = static_cast<ragpp::DocId>(i * (ndocs / 20));
        const double c0 = bench::cpu_now_s();
        index.remove_document(id);
        remove_ms.push_back((bench::cpu_now_s() - c0) * 1e3);
    }
    bench::print({{"bench", "bm25_synthetic"}, {"engine", "ragpp"}, {"format", current_format}, {"removals", remove_ms.size()},
                  {"remove_p50_cpu_ms", bench::quantile(remove_ms, 0.5)},
                  {"remove_max_cpu_ms", bench::quantile(remove_ms, 1.0)}});
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "bench_bm25_synthetic: %s\n", e.what());
    return 1;
}
