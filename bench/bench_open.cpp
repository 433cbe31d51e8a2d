// bench_open: how long Engine::open takes on a large index folder, and what memory it
// and the first queries cost, for the three ways of opening it side by side:
//   read-verify  OpenOptions{.mmap = false, .verify = true}   every part read and checksummed
//   read         OpenOptions{.mmap = false, .verify = false}  read, sizes and structure checked
//   mmap         OpenOptions{.mmap = true,  .verify = false}  Engine::open's default
// each with a cold page cache (the generation's files evicted with
// posix_fadvise(POSIX_FADV_DONTNEED), which drops only their clean pages) and a warm one.
// Every run is a child process, so its RSS is its own. One JSON line per run: open wall
// and CPU seconds, RSS (anonymous and file-backed) after open and after the queries,
// the first query's and the median query's wall time; then one line splitting a warm
// mmap open into its steps, each timed alone (wall and CPU): generation.json,
// documents.bin, bm25.idx, vector.idx, places.bin + metadata.bin (the collection,
// frozen), the whole Engine::open. Until BM25's load is zero-copy, bm25_load_s is most
// of the whole; the other parts show what the Engine's own open costs.
//
//   bench_open --make-corpus corpus.jsonl [--docs 1000000] [--seed 7] [--words 40-80]
//   bench_open --make-corpus FOLDER --files 20000 [--docs ...]   (a folder of Markdown files)
//   ragpp index corpus.jsonl --out idx
//   bench_open --index idx [--queries 100] [--only breakdown]
//   bench_open --build corpus.jsonl --out idx [--embedder hashing:64]   (Engine::build + save, timed)
//   bench_open --sync FOLDER [--repeat 3]   (Engine::sync with nothing changed, then after one file changed)
//
// The corpus: --docs documents of 40 to 80 words (mean 60; --words MIN-MAX) drawn from 200,000 words
// "w<rank>" with P(rank r) ~ 1/r^1.07 (fixed seed), with metadata "type" (4 values),
// "priority" (a number, 0 to 9), "date" (one of 365 days of 2025) and, on one document in
// 5, "groups" (admins or sales). Queries: 2 to 4 words of ranks 100 to 20,000, hybrid
// mode, k = 10, sources checked (as `ragpp search` does), as the default principal (only
// documents without groups); every other query also with the filter
// "type=guide, date>=2025-03-01" (the metadata index's postings are read).
// An index built before the metadata fields were added (type only) works too.
// With --files F the corpus is a folder of F Markdown files (many sources): file f holds
// documents [f * docs / F, (f + 1) * docs / F), each a "## s<d>" section (one chunk), with
// the metadata of its first document as front matter.
#include <ragpp/engine/documents.hpp>
#include <ragpp/engine/engine.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using Clock = std::chrono::steady_clock;

std::string arg(int argc, char** argv, const std::string& name, const std::string& fallback) {
    for (int i = 1; i + 1 < argc; ++i)
        if (argv[i] == "--" + name) return argv[i + 1];
    return fallback;
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double cpu_seconds() {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

/// RssAnon and RssFile of this process, in MB.
std::pair<double, double> rss_mb() {
    std::ifstream in("/proc/self/status");
    std::string line;
    double anon = 0, file = 0;
    while (std::getline(in, line)) {
        if (line.rfind("RssAnon:", 0) == 0) anon = std::atof(line.c_str() + 8) / 1024.0;
        if (line.rfind("RssFile:", 0) == 0) file = std::atof(line.c_str() + 8) / 1024.0;
    }
    return {anon, file};
}

double peak_rss_mb() {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_maxrss) / 1024.0;
}

void evict(const std::filesystem::path& dir) {
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
        const int fd = ::open(e.path().c_str(), O_RDONLY);
        if (fd < 0) continue;
        ::fdatasync(fd);
        (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        ::close(fd);
    }
}

int make_corpus(const std::string& file, std::size_t docs, std::uint64_t seed, const std::string& words, std::size_t files) {
    constexpr std::size_t vocab = 200'000;
    std::vector<double> cdf(vocab);
    double total = 0;
    for (std::size_t r = 0; r < vocab; ++r) cdf[r] = total += 1.0 / std::pow(static_cast<double>(r + 1), 1.07);
    for (auto& c : cdf) c /= total;
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const auto dash = words.find('-');
    std::uniform_int_distribution<int> length(std::stoi(words.substr(0, dash)), std::stoi(words.substr(dash + 1)));
    const char* types[] = {"guide", "ticket", "wiki", "code"};
    std::ofstream out;
    if (files == 0) out.open(file, std::ios::binary);
    else std::filesystem::create_directories(file);
    std::string line;
    auto text = [&] {
        std::string t;
        const int n = length(rng);
        for (int i = 0; i < n; ++i) {
            const auto r = static_cast<std::size_t>(std::lower_bound(cdf.begin(), cdf.end(), unit(rng)) - cdf.begin());
            t += (i ? " w" : "w") + std::to_string(std::min(r, vocab - 1));
        }
        return t;
    };
    auto date_of = [](std::size_t d) {
        char date[16];
        std::snprintf(date, sizeof date, "2025-%02d-%02d", static_cast<int>(1 + (d / 28) % 12), static_cast<int>(1 + d % 28));
        return std::string(date);
    };
    for (std::size_t f = 0; f < files; ++f) {  // a folder of Markdown files
        const std::size_t b = f * docs / files, e = (f + 1) * docs / files;
        std::string md = "---\ntype: " + std::string(types[b % 4]) + "\npriority: " + std::to_string(b % 10) + "\ndate: " + date_of(b) +
                         (b % 5 == 0 ? (b % 10 == 0 ? "\ngroups: [admins]" : "\ngroups: [sales]") : "") + "\n---\n# f" +
                         std::to_string(f) + "\n\n";
        for (std::size_t d = b; d < e; ++d) md += "## s" + std::to_string(d) + "\n\n" + text() + "\n\n";
        std::ofstream(std::filesystem::path(file) / ("f" + std::to_string(f) + ".md"), std::ios::binary) << md;
    }
    for (std::size_t d = 0; files == 0 && d < docs; ++d) {
        line = "{\"id\":\"d" + std::to_string(d) + "\",\"text\":\"" + text();
        const std::string date = date_of(d);
        line += std::string("\",\"metadata\":{\"type\":\"") + types[d % 4] + "\",\"priority\":" + std::to_string(d % 10) +
                ",\"date\":{\"date\":\"" + date + "\"}" + (d % 5 == 0 ? (d % 10 == 0 ? ",\"groups\":[\"admins\"]" : ",\"groups\":[\"sales\"]") : "") +
                "}}\n";
        out << line;
    }
    if (files == 0 && !out) throw ragpp::IoError("cannot write '" + file + "'");
    std::printf("{\"corpus\":\"%s\",\"docs\":%zu}\n", file.c_str(), docs);
    return 0;
}

void run(const std::filesystem::path& dir, const char* mode, ragpp::OpenOptions options, bool cold, std::size_t queries) {
    const auto g = ragpp::open_generation(dir, false);
    if (cold) evict(g.dir);
    const auto [anon0, file0] = rss_mb();
    const double c0 = cpu_seconds();
    const auto t0 = Clock::now();
    const auto e = ragpp::Engine::open(dir, 1, options);
    const double open_s = seconds_since(t0), open_cpu = cpu_seconds() - c0;
    const auto [anon1, file1] = rss_mb();
    std::mt19937 rng(3);
    std::uniform_int_distribution<int> rank(100, 20'000), words(2, 4);
    std::vector<double> times;
    for (std::size_t q = 0; q < queries; ++q) {
        std::string query;
        for (int i = words(rng); i > 0; --i) query += "w" + std::to_string(rank(rng)) + " ";
        ragpp::EngineQuery eq;
        eq.k = 10;
        eq.mode = ragpp::SearchMode::hybrid;
        if (q % 2 == 1) eq.filter = "type=guide, date>=2025-03-01";
        const auto tq = Clock::now();
        const auto r = e.search(query, eq);
        times.push_back(seconds_since(tq));
        if (r.results.empty()) std::fprintf(stderr, "no result for '%s'\n", query.c_str());
    }
    const auto [anon2, file2] = rss_mb();
    const double first = times.empty() ? 0 : times.front();
    std::sort(times.begin(), times.end());
    std::printf("{\"mode\":\"%s\",\"cache\":\"%s\",\"chunks\":%zu,\"open_s\":%.4f,\"open_cpu_s\":%.4f,"
                "\"rss_open_anon_mb\":%.1f,\"rss_open_file_mb\":%.1f,\"queries\":%zu,\"first_query_s\":%.4f,"
                "\"median_query_s\":%.4f,\"rss_queries_anon_mb\":%.1f,\"rss_queries_file_mb\":%.1f,"
                "\"rss_before_open_mb\":%.1f}\n",
                mode, cold ? "cold" : "warm", e.size(), open_s, open_cpu, anon1, file1, times.size(), first,
                times.empty() ? 0 : times[times.size() / 2], anon2, file2, anon0 + file0);
    std::fflush(stdout);
}

void breakdown(const std::filesystem::path& dir) {
    using ragpp::Engine;
    struct Step {
        const char* name;
        double wall, cpu;
    };
    std::vector<Step> steps;
    auto timed = [&](const char* name, auto&& f) {
        const double c0 = cpu_seconds();
        const auto t0 = Clock::now();
        auto r = f();
        steps.push_back({name, seconds_since(t0), cpu_seconds() - c0});
        return r;
    };
    const auto g = timed("open_generation", [&] { return ragpp::open_generation(dir, false); });
    auto store = timed("documents_bin_open", [&] { return ragpp::DocumentStore::open(g.dir / "documents.bin", Engine::default_open); });
    const auto config = Engine::config_from_json(g.info.at("settings"));
    auto bm25 = timed("bm25_load", [&] {
        return ragpp::EngineBm25::load(g.dir / "bm25.idx", ragpp::AnyAnalyzer(config.analyzer), Engine::default_open);
    });
    auto vectors = timed("vector_load", [&] {
        return ragpp::EngineVectors::load(g.dir / "vector.idx", ragpp::make_any_embedder(config), {}, Engine::default_open);
    });
    const std::size_t chunks = store.size();
    ragpp::EngineHybrid hybrid(std::move(store), ragpp::RetrieverOptions{}, std::move(bm25), std::move(vectors));
    const ragpp::CollectionOptions collection;
    const auto docs = timed("places_metadata_load", [&] {
        return ragpp::EngineDocuments::load(std::move(hybrid), collection, g.dir / "places.bin", g.dir / "metadata.bin",
                                       Engine::default_open);
    });
    const auto e = timed("engine_open", [&] { return Engine::open(dir, 1); });
    std::printf("{\"breakdown\":\"mmap warm\",\"generation_json_bytes\":%llu,\"chunks\":%zu,\"sources\":%zu",
                static_cast<unsigned long long>(std::filesystem::file_size(g.dir / "generation.json")), chunks, docs.source_count());
    for (const auto& s : steps) std::printf(",\"%s_s\":%.4f,\"%s_cpu_s\":%.4f", s.name, s.wall, s.name, s.cpu);
    std::printf("}\n");
    (void)e;
}

}  // namespace

int main(int argc, char** argv) try {
    if (const auto file = arg(argc, argv, "make-corpus", ""); !file.empty())
        return make_corpus(file, std::stoul(arg(argc, argv, "docs", "1000000")), std::stoull(arg(argc, argv, "seed", "7")),
                           arg(argc, argv, "words", "40-80"), std::stoul(arg(argc, argv, "files", "0")));
    if (const auto corpus = arg(argc, argv, "build", ""); !corpus.empty()) {  // the folder, as `ragpp index` writes it
        ragpp::EngineConfig config;
        config.embedder = arg(argc, argv, "embedder", "hashing:64");
        const double c0 = cpu_seconds();
        const auto t0 = Clock::now();
        const auto e = ragpp::Engine::build(corpus, config);
        e.save(arg(argc, argv, "out", "idx"));
        std::printf("{\"built\":\"%s\",\"chunks\":%zu,\"sources\":%zu,\"build_s\":%.1f,\"build_cpu_s\":%.1f,\"peak_rss_mb\":%.0f}\n",
                    corpus.c_str(), e.size(), e.documents().source_count(), seconds_since(t0), cpu_seconds() - c0, peak_rss_mb());
        return 0;
    }
    if (const auto folder = arg(argc, argv, "sync", ""); !folder.empty()) {
        // Engine::sync on an in-memory engine built from a folder corpus: --repeat syncs
        // with nothing changed, then --repeat syncs after appending a line to one file
        // (the first file in the scan's order). Restores nothing: use a copy of the folder.
        ragpp::EngineConfig config;
        config.embedder = arg(argc, argv, "embedder", "hashing:64");
        auto e = ragpp::Engine::build(folder, config);
        const int repeat = std::stoi(arg(argc, argv, "repeat", "3"));
        std::string first;
        for (const auto& f : std::filesystem::recursive_directory_iterator(folder))
            if (f.is_regular_file() && f.path().extension() == ".md" && (first.empty() || f.path().string() < first))
                first = f.path().string();
        for (const bool change : {false, true})
            for (int i = 0; i < repeat; ++i) {
                if (change) std::ofstream(first, std::ios::app) << "\nappended line " << i << "\n";
                const double c0 = cpu_seconds();
                const auto t0 = Clock::now();
                const auto n = e.sync(folder);
                std::printf("{\"sync\":\"%s\",\"chunks\":%zu,\"changed\":%zu,\"unchanged\":%zu,\"sync_s\":%.4f,\"sync_cpu_s\":%.4f}\n",
                            change ? "one file changed" : "nothing changed", e.size(), n.changed, n.unchanged, seconds_since(t0),
                            cpu_seconds() - c0);
            }
        return 0;
    }
    const std::string dir = arg(argc, argv, "index", "");
    if (dir.empty()) {
        std::fprintf(stderr, "usage: bench_open --make-corpus FILE [--docs N] | --index DIR [--queries N]\n");
        return 2;
    }
    const std::size_t queries = std::stoul(arg(argc, argv, "queries", "100"));
    if (arg(argc, argv, "only", "") == "breakdown") {  // --only breakdown: the last line alone
        breakdown(dir);
        return 0;
    }
    struct Mode {
        const char* name;
        ragpp::OpenOptions options;
    };
    const Mode modes[] = {{"read-verify", {.mmap = false, .verify = true}},
                          {"read", {.mmap = false, .verify = false}},
                          {"mmap", {.mmap = true, .verify = false}}};
    std::printf("{\"note\":\"2 cores shared with other jobs: wall times are noisy, CPU times beside them\"}\n");
    std::fflush(stdout);
    for (const bool cold : {true, false})
        for (const auto& m : modes) {
            const pid_t pid = ::fork();
            if (pid == 0) {
                try {
                    run(dir, m.name, m.options, cold, queries);
                } catch (const std::exception& e) {
                    std::fprintf(stderr, "bench_open: %s\n", e.what());
                    std::_Exit(1);
                }
                std::_Exit(0);
            }
            int status = 0;
            ::waitpid(pid, &status, 0);
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
        }
    breakdown(dir);
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "bench_open: %s\n", e.what());
    return 1;
}
