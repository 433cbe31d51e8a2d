// bench_save: memory of VectorIndex::save, the streaming writer against the in-memory
// one it replaced (detail/binary_file.hpp), in the same run on the same index.
//
// Builds a flat VectorIndex of --docs random unit vectors of --dim dimensions (fixed seed,
// --quant none|int8|float16, default int8 as bench_scale's), then saves it twice: with the
// streaming writer (the default: 1 MiB buffer) and with the whole file assembled in memory
// first (detail::binary_write_buffer_bytes = 0, what save() did before). For each: wall
// and CPU time, the file's size, RSS before, and the peak RSS during the save minus it
// (the peak is reset before each save by writing 5 to /proc/self/clear_refs). Checks that
// both files are equal, byte for byte. One JSON line per save.
//
// Usage: bench_save [--docs 1000000] [--dim 384] [--quant int8] [--dir /tmp]
#include "bm25_bench.hpp"

#include <ragpp/detail/binary_file.hpp>
#include <ragpp/embed/hashing.hpp>
#include <ragpp/index/vector.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

/// A field of /proc/self/status in bytes ("VmHWM", "VmRSS"), or 0.
std::size_t status_bytes(const std::string& field) {
    std::ifstream in("/proc/self/status");
    for (std::string line; std::getline(in, line);)
        if (line.rfind(field + ":", 0) == 0) return std::stoull(line.substr(field.size() + 1)) * 1024;
    return 0;
}

/// Resets VmHWM to the current RSS (Linux 4.0+); false when the kernel refuses.
bool reset_peak() {
    std::ofstream out("/proc/self/clear_refs");
    out << "5";
    out.flush();
    return static_cast<bool>(out);
}

bool same_files(const std::filesystem::path& a, const std::filesystem::path& b) {
    std::ifstream x(a, std::ios::binary), y(b, std::ios::binary);
    std::string bx(1 << 20, '\0'), by(1 << 20, '\0');
    while (x && y) {
        x.read(bx.data(), static_cast<std::streamsize>(bx.size()));
        y.read(by.data(), static_cast<std::streamsize>(by.size()));
        if (x.gcount() != y.gcount() || bx.compare(0, static_cast<std::size_t>(x.gcount()), by, 0,
                                                   static_cast<std::size_t>(y.gcount())) != 0)
            return false;
    }
    return !x && !y;
}

}  // namespace

int main(int argc, char** argv) {
    std::size_t ndocs = 1'000'000, dim = 384;
    std::string quant = "int8";
    std::filesystem::path dir = std::filesystem::temp_directory_path();
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i], v = argv[i + 1];
        if (a == "--docs") ndocs = std::stoull(v);
        else if (a == "--dim") dim = std::stoull(v);
        else if (a == "--quant") quant = v;
        else if (a == "--dir") dir = v;
        else {
            std::fprintf(stderr, "unknown option %s\n", a.c_str());
            return 2;
        }
    }
    ragpp::VectorIndexOptions o;
    o.quantization = quant == "int8" ? ragpp::Quantization::int8
                     : quant == "float16" ? ragpp::Quantization::float16
                                          : ragpp::Quantization::none;
    ragpp::HashingOptions ho;
    ho.dimension = dim;
    ragpp::VectorIndex<ragpp::HashingEmbedder> index(ragpp::HashingEmbedder(ho), o);
    {
        const double t0 = bench::now_s();
        std::uint64_t s = 42;
        auto next = [&] {  // splitmix64
            std::uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
            return z ^ (z >> 31);
        };
        constexpr std::size_t batch = 10'000;
        ragpp::RowMatrixXf rows;
        std::vector<ragpp::DocId> ids;
        for (std::size_t first = 0; first < ndocs; first += batch) {
            const std::size_t n = std::min(batch, ndocs - first);
            rows.resize(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(dim));
            ids.resize(n);
            for (std::size_t r = 0; r < n; ++r) {
                ids[r] = static_cast<ragpp::DocId>(first + r);
                for (std::size_t c = 0; c < dim; ++c)
                    rows(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c)) =
                        static_cast<float>(static_cast<double>(next() >> 11) * 0x1.0p-52 - 1.0);
                rows.row(static_cast<Eigen::Index>(r)).normalize();
            }
            index.add_vectors(ids, rows);
        }
        std::printf("{\"figure\": \"build\", \"docs\": %zu, \"dim\": %zu, \"quant\": \"%s\", \"build_s\": %.2f, "
                    "\"rss_bytes\": %zu}\n",
                    ndocs, dim, quant.c_str(), bench::now_s() - t0, bench::rss_bytes());
        std::fflush(stdout);
    }
    const auto streamed = dir / ("bench-save-" + std::to_string(::getpid()) + "-streaming.idx");
    const auto in_memory = dir / ("bench-save-" + std::to_string(::getpid()) + "-in-memory.idx");
    const std::size_t default_buffer = ragpp::detail::binary_write_buffer_bytes;
    for (const bool stream : {true, false}) {
        ragpp::detail::binary_write_buffer_bytes = stream ? default_buffer : 0;
        const auto& path = stream ? streamed : in_memory;
        const bool reset = reset_peak();
        const std::size_t rss0 = status_bytes("VmRSS");
        const double t0 = bench::now_s(), c0 = bench::cpu_now_s();
        index.save(path);
        const double wall = bench::now_s() - t0, cpu = bench::cpu_now_s() - c0;
        const std::size_t peak = status_bytes("VmHWM");
        std::printf("{\"figure\": \"save\", \"writer\": \"%s\", \"save_wall_s\": %.3f, \"save_cpu_s\": %.3f, "
                    "\"file_bytes\": %ju, \"rss_before_bytes\": %zu, \"peak_during_save_bytes\": %zu, "
                    "\"peak_minus_before_bytes\": %zd, \"peak_reset\": %s}\n",
                    stream ? "streaming" : "in-memory (before)", wall, cpu,
                    static_cast<std::uintmax_t>(std::filesystem::file_size(path)), rss0, peak,
                    static_cast<std::ptrdiff_t>(peak) - static_cast<std::ptrdiff_t>(rss0), reset ? "true" : "false");
        std::fflush(stdout);
    }
    ragpp::detail::binary_write_buffer_bytes = default_buffer;
    const bool same = same_files(streamed, in_memory);
    std::printf("{\"figure\": \"same_bytes\", \"equal\": %s}\n", same ? "true" : "false");
    std::filesystem::remove(streamed);
    std::filesystem::remove(in_memory);
    return same ? 0 : 1;
}
