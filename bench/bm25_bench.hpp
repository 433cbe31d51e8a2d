// Helpers shared by the BM25 benchmarks: timing, medians, BEIR builds and scoring.
#pragma once

#include <ragpp/eval/metrics.hpp>
#include <ragpp/index/bm25.hpp>
#include <ragpp/io/beir.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

namespace bench {

inline double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// CPU time of the calling thread, in seconds (the machine may be shared: wall-clock
/// figures then include time spent waiting for a core, CPU figures do not).
inline double cpu_now_s() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

/// The median (upper median for an even count) of `v`.
inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

/// The p-quantile (0..1) of `v`, nearest rank.
inline double quantile(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    if (v.empty()) return 0.0;
    auto i = static_cast<std::size_t>(p * static_cast<double>(v.size()));
    return v[std::min(i, v.size() - 1)];
}

inline void print(const nlohmann::json& j) {
    std::printf("%s\n", j.dump().c_str());
    std::fflush(stdout);
}

/// The shared data folder: argv's --data DIR, else the build-time default.
inline std::filesystem::path data_dir(int argc, char** argv) {
    for (int i = 1; i + 1 < argc; ++i)
        if (std::string(argv[i]) == "--data") return argv[i + 1];
    return std::filesystem::path(RAGPP_SHARED_DIR) / "data";
}

/// An integer option --name N, else `fallback`.
inline long option(int argc, char** argv, const std::string& name, long fallback) {
    for (int i = 1; i + 1 < argc; ++i)
        if (argv[i] == "--" + name) return std::stol(argv[i + 1]);
    return fallback;
}

/// A Zipfian vocabulary: words "w0", "w1", ... with P(rank r) proportional to
/// 1 / (r + 1)^exponent; draw(rng, from_rank) samples a rank >= from_rank (from_rank > 0
/// leaves out the most frequent words, an analyzer's stop words).
struct ZipfVocabulary {
    std::vector<std::string> words;
    std::vector<double> cdf;

    ZipfVocabulary(std::size_t n, double exponent) : words(n), cdf(n) {
        double total = 0;
        for (std::size_t r = 0; r < n; ++r) {
            words[r] = "w" + std::to_string(r);
            total += 1.0 / std::pow(static_cast<double>(r + 1), exponent);
            cdf[r] = total;
        }
        for (auto& c : cdf) c /= total;
    }
    template <class Rng>
    std::size_t draw(Rng& rng, std::size_t from_rank = 0) const {
        std::uniform_real_distribution<double> unit(0.0, 1.0);
        const double lo = from_rank == 0 ? 0.0 : cdf[from_rank - 1];
        const double u = lo + (1.0 - lo) * unit(rng);
        const auto r = static_cast<std::size_t>(std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
        return std::min(r, words.size() - 1);
    }
};

/// The resident set size of this process, in bytes (/proc/self/statm).
inline std::size_t rss_bytes() {
    std::ifstream in("/proc/self/statm");
    std::size_t pages = 0, resident = 0;
    in >> pages >> resident;
    return resident * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

/// A document as the BEIR loaders give it to an index: "title\ntext".
inline std::string document_text(const ragpp::BeirDocument& d) {
    return d.title.empty() ? d.text : d.title + "\n" + d.text;
}

struct Quality {
    double ndcg10 = 0, recall100 = 0, mrr10 = 0;
    std::size_t queries = 0;
};

/// nDCG@10, recall@100 and MRR@10 of `index` (built over `c.corpus` in order, DocId =
/// position) on the judged queries of `c`.
template <class Index>
Quality evaluate(const Index& index, const ragpp::BeirCollection& c, const ragpp::SearchOptions& options = {}) {
    std::vector<ragpp::RankedQuestion<std::string>> set;
    for (const auto& q : c.queries) {
        ragpp::RankedQuestion<std::string> rq;
        for (const auto& h : index.search(q.text, 100, options)) rq.ranking.push_back(c.corpus[h.id].id);
        rq.judgments = c.qrels.at(q.id);
        set.push_back(std::move(rq));
    }
    Quality out;
    out.ndcg10 = ragpp::mean_ndcg_at_k(set, 10).mean;
    out.recall100 = ragpp::mean_recall_at_k(set, 100).mean;
    out.mrr10 = ragpp::mrr(set, 10).mean;
    out.queries = ragpp::mean_ndcg_at_k(set, 10).questions;
    return out;
}

}  // namespace bench
