// Transformer kernels (detail/nn.hpp) on one thread: GFLOP/s of LinearF32 and LinearI8
// on the MiniLM-L6 shapes (hidden 384, intermediate 1536; m = rows = batch x tokens),
// of gemm_nt / gemm_nn and of nn::attention (12 heads, softmax included) on attention
// shapes, and the core's measured FMA peak (a loop of
// independent vfmadd231ps chains: 2 FLOPs x lanes per instruction), with AMX its tdpbusd
// and tdpbf16ps peaks. Where LinearF32 runs on the AMX-BF16 tiles (isa amx; detail/nn.hpp:
// six bfloat16 products per multiply) its fraction_of_peak is of a sixth of tdpbf16ps's
// ("products":"bf16x6"; else "fma", of the FMA loop's). Medians (and best)
// of several samples of at least 5 ms of this thread's CPU time, the kernels of one
// shape measured in turns; one JSON line per kernel and shape, fixed seeds.
// encoder_products_f32: the four float32 products of MiniLM-L6's six layers in the
// encoder's order, each layer with its own weights ("cold": 42 MB, read from L3 or memory
// as in the encoder) or the first layer's six times ("warm": recently used), on 384 rows
// (the encoder's group of three 128-token texts) and on 4 (a short query).
// With OpenBLAS found at configure time, its one-thread sgemm (y = x W^T, no bias) runs
// on the same shapes, in turns with ours. Its CPU detection may not know recent Xeons (it
// picks a generic core here, 30 GFLOP/s): set OPENBLAS_CORETYPE=SkylakeX for its
// AVX-512 kernels; the core it used is printed.
// Usage: bench_nn [--isa scalar|avx2|avx2_vnni|avx512|avx512_vnni|amx] [--runs R] [--quick] [--k-block K]
// --k-block K: the float32 GEMM's K block (default 0: this CPU's, 192 on Intel, 1536 on AMD).
#include <ragpp/detail/nn.hpp>

#include <algorithm>
#include <array>
#include <ctime>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#endif

#ifdef RAGPP_BENCH_OPENBLAS
// OpenBLAS's CBLAS entry points (declared here: Debian's runtime package has no header).
extern "C" void cblas_sgemm(int order, int trans_a, int trans_b, int m, int n, int k, float alpha, const float* a,
                            int lda, const float* b, int ldb, float beta, float* c, int ldc);
extern "C" void openblas_set_num_threads(int);
extern "C" char* openblas_get_corename();
#endif

namespace nn = ragpp::detail::nn;

namespace {

/// This thread's CPU time: the machine is shared, so other processes' time slices do
/// not count against the kernels (the wall-clock figure is printed beside it).
double thread_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
// The FMA loops in inline assembly (compilers otherwise keep the accumulators of such a
// loop in memory): 24 (AVX-512) / 12 (AVX2) independent vfmadd231ps chains, enough to
// cover the 4-cycle latency on two FMA ports, per iteration.
// What the AVX-512 loops write: the two sources and the 24 accumulators.
#define RAGPP_ZMM_CLOBBERS                                                                                          \
    "xmm0", "xmm1", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm18", \
        "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", "xmm24", "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30",  \
        "xmm31", "cc"
#define RAGPP_FMA8(W, R) "vfmadd231ps %%" W "1, %%" W "0, %%" W #R "\n\t"
__attribute__((target("avx512f"))) __attribute__((noinline)) void fma_loop_avx512(std::size_t iters) {
    __asm__ volatile(
        "vxorps %%xmm0, %%xmm0, %%xmm0\n\t"
        "vxorps %%xmm1, %%xmm1, %%xmm1\n\t"
        "1:\n\t"
        RAGPP_FMA8("zmm", 8) RAGPP_FMA8("zmm", 9) RAGPP_FMA8("zmm", 10) RAGPP_FMA8("zmm", 11)
        RAGPP_FMA8("zmm", 12) RAGPP_FMA8("zmm", 13) RAGPP_FMA8("zmm", 14) RAGPP_FMA8("zmm", 15)
        RAGPP_FMA8("zmm", 16) RAGPP_FMA8("zmm", 17) RAGPP_FMA8("zmm", 18) RAGPP_FMA8("zmm", 19)
        RAGPP_FMA8("zmm", 20) RAGPP_FMA8("zmm", 21) RAGPP_FMA8("zmm", 22) RAGPP_FMA8("zmm", 23)
        RAGPP_FMA8("zmm", 24) RAGPP_FMA8("zmm", 25) RAGPP_FMA8("zmm", 26) RAGPP_FMA8("zmm", 27)
        RAGPP_FMA8("zmm", 28) RAGPP_FMA8("zmm", 29) RAGPP_FMA8("zmm", 30) RAGPP_FMA8("zmm", 31)
        "dec %0\n\t"
        "jnz 1b\n\t"
        : "+r"(iters)
        :
        : RAGPP_ZMM_CLOBBERS);
}
__attribute__((target("avx2,fma"))) __attribute__((noinline)) void fma_loop_avx2(std::size_t iters) {
    __asm__ volatile(
        "vxorps %%xmm0, %%xmm0, %%xmm0\n\t"
        "vxorps %%xmm1, %%xmm1, %%xmm1\n\t"
        "1:\n\t"
        RAGPP_FMA8("ymm", 4) RAGPP_FMA8("ymm", 5) RAGPP_FMA8("ymm", 6) RAGPP_FMA8("ymm", 7)
        RAGPP_FMA8("ymm", 8) RAGPP_FMA8("ymm", 9) RAGPP_FMA8("ymm", 10) RAGPP_FMA8("ymm", 11)
        RAGPP_FMA8("ymm", 12) RAGPP_FMA8("ymm", 13) RAGPP_FMA8("ymm", 14) RAGPP_FMA8("ymm", 15)
        "dec %0\n\t"
        "jnz 1b\n\t"
        : "+r"(iters)
        :
        : "xmm0", "xmm1", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13",
          "xmm14", "xmm15", "cc");
}
#undef RAGPP_FMA8
// The int8 peak: the same with vpdpbusd (16 lanes x 4 u8*s8 multiply-adds, 128 ops per
// instruction), 24 independent chains.
#define RAGPP_DP8(R) "vpdpbusd %%zmm1, %%zmm0, %%zmm" #R "\n\t"
__attribute__((target("avx512f,avx512vnni"))) __attribute__((noinline)) void vnni_loop_avx512(std::size_t iters) {
    __asm__ volatile(
        "vpxord %%zmm0, %%zmm0, %%zmm0\n\t"
        "vpxord %%zmm1, %%zmm1, %%zmm1\n\t"
        "1:\n\t"
        RAGPP_DP8(8) RAGPP_DP8(9) RAGPP_DP8(10) RAGPP_DP8(11) RAGPP_DP8(12) RAGPP_DP8(13) RAGPP_DP8(14) RAGPP_DP8(15)
        RAGPP_DP8(16) RAGPP_DP8(17) RAGPP_DP8(18) RAGPP_DP8(19) RAGPP_DP8(20) RAGPP_DP8(21) RAGPP_DP8(22) RAGPP_DP8(23)
        RAGPP_DP8(24) RAGPP_DP8(25) RAGPP_DP8(26) RAGPP_DP8(27) RAGPP_DP8(28) RAGPP_DP8(29) RAGPP_DP8(30) RAGPP_DP8(31)
        "dec %0\n\t"
        "jnz 1b\n\t"
        : "+r"(iters)
        :
        : RAGPP_ZMM_CLOBBERS);
}
#undef RAGPP_DP8
#undef RAGPP_ZMM_CLOBBERS
#endif

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
/// G operations a second of `loop(iters)` doing `ops_per_iter` each (median of `runs`
/// timings of this thread's CPU time): the peaks below.
double loop_rate(std::size_t runs, std::size_t iters, double ops_per_iter, void (*loop)(std::size_t)) {
    std::vector<double> g;
    for (std::size_t r = 0; r < runs; ++r) {
        const double t0 = thread_seconds();
        loop(iters);
        g.push_back(ops_per_iter * static_cast<double>(iters) / (thread_seconds() - t0) * 1e-9);
    }
    return median(g);
}
#endif

/// GFLOP/s of the FMA loop, or 0 when the ISA is missing.
double fma_peak(bool wide, std::size_t runs) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    if (!nn::supported(wide ? nn::Isa::avx512 : nn::Isa::avx2)) return 0;
    return wide ? loop_rate(runs, 10'000'000, 24.0 * 32, &fma_loop_avx512)
                : loop_rate(runs, 10'000'000, 12.0 * 16, &fma_loop_avx2);
#else
    (void)wide, (void)runs;
    return 0;
#endif
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__)) && defined(__linux__)
/// Four independent tile products a step: tdpbf16ps when Bf16, else tdpbusd.
template <bool Bf16>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma,avx2,avx512vnni,amx-tile,amx-int8,amx-bf16")))
__attribute__((noinline)) void amx_loop(std::size_t iters) {
    nn::impl::amx_begin();
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    for (std::size_t i = 0; i < iters; ++i) {
        if constexpr (Bf16) {
            _tile_dpbf16ps(4, 0, 2);
            _tile_dpbf16ps(5, 0, 3);
            _tile_dpbf16ps(6, 1, 2);
            _tile_dpbf16ps(7, 1, 3);
        } else {
            _tile_dpbusd(4, 0, 2);
            _tile_dpbusd(5, 0, 3);
            _tile_dpbusd(6, 1, 2);
            _tile_dpbusd(7, 1, 3);
        }
    }
    nn::impl::amx_end();
}
#endif

/// GFLOP/s of AMX-BF16's tdpbf16ps (4 independent 16 x 16 float32 tiles, each
/// instruction 16 x 16 x 32 multiply-adds); 0 where LinearF32 does not use the tiles.
double amx_bf16_peak(std::size_t runs) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__)) && defined(__linux__)
    if (!nn::f32_on_amx(nn::usable(nn::Isa::amx))) return 0;
    return loop_rate(runs, 2'000'000, 4.0 * 2 * 16 * 16 * 32, &amx_loop<true>);
#else
    (void)runs;
    return 0;
#endif
}

/// GOP/s (2 ops per multiply-add) of the vpdpbusd loop: the int8 kernels' peak; 0
/// without AVX-512 VNNI.
double vnni_peak(std::size_t runs) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    if (!nn::supported(nn::Isa::avx512_vnni)) return 0;
    return loop_rate(runs, 10'000'000, 24.0 * 128, &vnni_loop_avx512);
#else
    (void)runs;
    return 0;
#endif
}

/// GOP/s of AMX-INT8's tdpbusd: 4 independent 16 x 16 int32 tiles, each instruction
/// 16 x 16 x 64 multiply-adds; 0 without AMX (or the OS's permission).
double amx_peak(std::size_t runs) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__)) && defined(__linux__)
    if (!nn::supported(nn::Isa::amx)) return 0;
    return loop_rate(runs, 2'000'000, 4.0 * 2 * 16 * 16 * 64, &amx_loop<false>);
#else
    (void)runs;
    return 0;
#endif
}

struct Rate {
    double median = 0, best = 0;
};

/// Rate of f (flops / s of this thread's CPU time): median and best of the runs (the
/// best is the figure least disturbed by other processes on a shared machine).
template <class F>
Rate gflops(double flops, std::size_t runs, F&& f) {
    f();  // warm-up (packs scratch, faults pages)
    std::vector<double> g;
    double budget = 0;
    for (std::size_t r = 0; r < runs || budget < 0.2; ++r) {
        const double t0 = thread_seconds();
        f();
        const double s = thread_seconds() - t0;
        budget += s;
        g.push_back(flops / s * 1e-9);
        if (r > 200) break;
    }
    return {median(g), *std::max_element(g.begin(), g.end())};
}

/// Rates of several kernels measured in turns (one run of each per round), so that all
/// of them see the same machine load.
std::vector<Rate> interleaved(double flops, std::size_t runs, const std::vector<std::function<void()>>& fs) {
    // Warm-up, and repetitions per sample so that each sample lasts >= 5 ms.
    std::vector<std::size_t> reps;
    for (const auto& f : fs) {
        f();
        const double t0 = thread_seconds();
        f();
        reps.push_back(static_cast<std::size_t>(0.005 / std::max(thread_seconds() - t0, 1e-7)) + 1);
    }
    std::vector<std::vector<double>> g(fs.size());
    for (std::size_t r = 0; r < runs; ++r)
        for (std::size_t i = 0; i < fs.size(); ++i) {
            const double t0 = thread_seconds();
            for (std::size_t j = 0; j < reps[i]; ++j) fs[i]();
            g[i].push_back(flops * static_cast<double>(reps[i]) / (thread_seconds() - t0) * 1e-9);
        }
    std::vector<Rate> out;
    for (const auto& v : g) out.push_back({median(v), *std::max_element(v.begin(), v.end())});
    return out;
}

/// The encoder's four float32 products as the encoder runs them: MiniLM-L6's six layers,
/// each with its own weights (42 MB in all: read from L3 or memory once per pass, as in
/// the encoder), QKV, attention output, intermediate, FFN output in turn on m rows; or
/// ("warm") the first layer's weights six times (7 MB, recently used: in L3 at least).
/// One JSON line each: GFLOP/s of each product, medians of the samples, the two in turns.
void encoder_products(nn::Isa isa, std::size_t k_block, std::size_t runs, double peak, std::mt19937& rng) {
    constexpr std::size_t kLayers = 6;
    constexpr std::size_t dims[4][2] = {{384, 1152}, {384, 384}, {384, 1536}, {1536, 384}};  // n_in, n_out
    constexpr const char* names[4] = {"qkv", "attn_out", "inter", "out"};
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<std::array<nn::LinearF32, 4>> layers(kLayers);
    for (auto& layer : layers)
        for (std::size_t p = 0; p < 4; ++p) {
            std::vector<float> w(dims[p][0] * dims[p][1]), b(dims[p][1]);
            for (auto& v : w) v = normal(rng) * 0.05f;
            for (auto& v : b) v = normal(rng);
            layer[p] = nn::LinearF32(w.data(), dims[p][1], dims[p][0], b.data(), isa);
        }
    for (const std::size_t m : {std::size_t{384}, std::size_t{4}}) {
        std::vector<float> x(m * 1536), y(m * 1536);
        for (auto& v : x) v = normal(rng);
        const std::size_t passes = m >= 96 ? 1 : 40;  // samples of at least a few ms
        double sec[2][4][64] = {};                      // [warm][product][sample]
        const std::size_t samples = std::min<std::size_t>(std::max<std::size_t>(runs, 5), 64);
        for (std::size_t r = 0; r <= samples; ++r)  // sample 0: warm-up
            for (int warm = 0; warm < 2; ++warm)
                for (std::size_t pass = 0; pass < passes; ++pass)
                    for (std::size_t l = 0; l < kLayers; ++l)
                        for (std::size_t p = 0; p < 4; ++p) {
                            const double t0 = thread_seconds();
                            layers[warm ? 0 : l][p].forward(x.data(), m, y.data(), isa, k_block);
                            if (r > 0) sec[warm][p][r - 1] += thread_seconds() - t0;
                        }
        for (int warm = 0; warm < 2; ++warm) {
            std::string line = R"({"bench":"nn","kernel":"encoder_products_f32","isa":")" +
                               std::string(nn::isa_name(isa)) + R"(","m":)" + std::to_string(m) +
                               R"(,"weights":")" + (warm ? "warm" : "cold") + R"(")";
            for (std::size_t p = 0; p < 4; ++p) {
                std::vector<double> g;
                const double flops = 2.0 * static_cast<double>(m * dims[p][0] * dims[p][1] * kLayers * passes);
                for (std::size_t r = 0; r < samples; ++r) g.push_back(flops / sec[warm][p][r] * 1e-9);
                char buf[96];
                std::snprintf(buf, sizeof buf, R"(,"%s_gflops":%.1f)", names[p], median(g));
                line += buf;
                if (p == 3) {
                    std::snprintf(buf, sizeof buf, R"(,"out_fraction_of_peak":%.3f)", peak > 0 ? median(g) / peak : 0.0);
                    line += buf;
                }
            }
            std::printf("%s,\"checksum\":%.4f}\n", line.c_str(), static_cast<double>(y[0]));
        }
        std::fflush(stdout);
    }
}

}  // namespace

int main(int argc, char** argv) {
    nn::Isa isa = nn::active_isa();
    std::size_t runs = 7, k_block = 0;
    bool quick = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--isa" && i + 1 < argc) {
            const std::string_view v = argv[++i];
            for (nn::Isa c : nn::all_isas)
                if (nn::isa_name(c) == v) isa = c;
        } else if (a == "--runs" && i + 1 < argc) {
            runs = std::stoul(argv[++i]);
        } else if (a == "--k-block" && i + 1 < argc) {
            k_block = std::stoul(argv[++i]);
        } else if (a == "--quick") {
            quick = true;
        } else {
            std::fprintf(stderr, "usage: bench_nn [--isa NAME] [--runs R] [--quick] [--k-block K]\n");
            return 2;
        }
    }
    isa = nn::usable(isa);
#ifdef RAGPP_BENCH_OPENBLAS
    openblas_set_num_threads(1);
#endif
    const double peak512 = fma_peak(true, runs), peak256 = fma_peak(false, runs), peak_i8 = vnni_peak(runs),
                 peak_amx = amx_peak(runs), peak_bf16 = amx_bf16_peak(runs);
    std::printf(R"({"bench":"nn","kernel":"fma_peak","threads":1,"avx512_gflops":%.1f,"avx2_gflops":%.1f,"avx512_vnni_gops":%.1f,"amx_int8_gops":%.1f,"amx_bf16_gflops":%.1f})" "\n",
                peak512, peak256, peak_i8, peak_amx, peak_bf16);
    // The float32 products' peak: the FMA loop's, or a sixth of tdpbf16ps's (bf16x6).
    const bool tiles = nn::f32_on_amx(isa);
    const double fma_peak_isa = nn::is_avx512(isa) ? peak512 : peak256;  // attention's (FMA on every path)
    const double peak = tiles ? peak_bf16 / 6 : fma_peak_isa;

    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    struct Shape {
        std::size_t m, n_in, n_out;
    };
    std::vector<Shape> shapes;
    for (std::size_t m : quick ? std::vector<std::size_t>{128} : std::vector<std::size_t>{128, 4096})
        for (auto [ni, no] : {std::pair<std::size_t, std::size_t>{384, 384}, {384, 1536}, {1536, 384}})
            shapes.push_back({m, ni, no});
    for (const Shape& s : shapes) {
        std::vector<float> w(s.n_out * s.n_in), b(s.n_out), x(s.m * s.n_in), y(s.m * s.n_out);
        for (auto& v : w) v = normal(rng) * 0.05f;
        for (auto& v : b) v = normal(rng);
        for (auto& v : x) v = normal(rng);
        const double flops = 2.0 * static_cast<double>(s.m * s.n_in * s.n_out);
        const nn::LinearF32 f32(w.data(), s.n_out, s.n_in, b.data(), isa);
        const nn::LinearI8 i8(w.data(), s.n_out, s.n_in, b.data());
        std::vector<float> yi(s.m * s.n_out);
        std::vector<std::function<void()>> fs{[&] { f32.forward(x.data(), s.m, y.data(), isa, k_block); },
                                              [&] { i8.forward(x.data(), s.m, yi.data(), isa); }};
#ifdef RAGPP_BENCH_OPENBLAS
        // y = x W^T (no bias) by OpenBLAS, one thread, in turns with ours.
        std::vector<float> yb(s.m * s.n_out);
        fs.emplace_back([&] {
            cblas_sgemm(101 /* row major */, 111 /* no trans */, 112 /* trans */, static_cast<int>(s.m),
                        static_cast<int>(s.n_out), static_cast<int>(s.n_in), 1.0f, x.data(), static_cast<int>(s.n_in),
                        w.data(), static_cast<int>(s.n_in), 0.0f, yb.data(), static_cast<int>(s.n_out));
        });
#endif
        const std::vector<Rate> rates = interleaved(flops, std::max<std::size_t>(runs, 3), fs);
        const Rate gf = rates[0], gi = rates[1];
        std::printf(R"({"bench":"nn","kernel":"linear_f32","isa":"%s","products":"%s","m":%zu,"n_in":%zu,"n_out":%zu,"gflops":%.1f,"gflops_best":%.1f,"fraction_of_peak":%.3f,"checksum":%.4f})" "\n",
                    std::string(nn::isa_name(isa)).c_str(), tiles ? "bf16x6" : "fma", s.m, s.n_in, s.n_out, gf.median, gf.best,
                    peak > 0 ? gf.median / peak : 0.0, static_cast<double>(y[0] + y[y.size() - 1]));
#ifdef RAGPP_BENCH_OPENBLAS
        const Rate gb = rates[2];
        std::printf(R"({"bench":"nn","kernel":"openblas_sgemm","core":"%s","m":%zu,"n_in":%zu,"n_out":%zu,"gflops":%.1f,"gflops_best":%.1f,"ragpp_f32_speedup":%.2f,"ragpp_i8_speedup":%.2f})" "\n",
                    openblas_get_corename(), s.m, s.n_in, s.n_out, gb.median, gb.best, gf.median / gb.median,
                    gi.median / gb.median);
#endif
        // Share of the int8 peak: the vpdpbusd loop's when these kernels are VNNI's, the
        // tdpbusd loop's on AMX (n_in a multiple of 64: every shape here).
        const double i8_peak = isa == nn::Isa::avx512_vnni ? peak_i8 : isa == nn::Isa::amx ? peak_amx : 0.0;
        std::printf(R"({"bench":"nn","kernel":"linear_i8","isa":"%s","m":%zu,"n_in":%zu,"n_out":%zu,"gops":%.1f,"gops_best":%.1f,"speedup_vs_f32":%.2f,"fraction_of_peak":%.3f,"checksum":%.4f})" "\n",
                    std::string(nn::isa_name(isa)).c_str(), s.m, s.n_in, s.n_out, gi.median, gi.best,
                    gi.median / gf.median, i8_peak > 0 ? gi.median / i8_peak : 0.0,
                    static_cast<double>(yi[0] + yi[yi.size() - 1]));
        std::fflush(stdout);
    }
    encoder_products(isa, k_block, runs, peak, rng);
    // Attention: 12 heads x 32 dims (MiniLM: hidden 384), scores = Q K^T / sqrt(d), then P V.
    for (std::size_t seq : {128U, 512U}) {
        const std::size_t d = 32, hidden = 384;
        std::vector<float> q(seq * hidden), k(seq * hidden), v(seq * hidden), p(seq * seq), o(seq * hidden);
        for (auto& t : q) t = normal(rng);
        for (auto& t : k) t = normal(rng);
        for (auto& t : v) t = normal(rng);
        const double flops = 2.0 * static_cast<double>(seq * seq * d);
        const Rate gnt = gflops(flops, runs, [&] {
            nn::gemm_nt(seq, seq, d, 0.17f, q.data(), hidden, k.data(), hidden, 0.0f, p.data(), seq, isa);
        });
        const Rate gnn = gflops(flops, runs, [&] {
            nn::gemm_nn(seq, d, seq, 1.0f, p.data(), seq, v.data(), hidden, 0.0f, o.data(), hidden, isa);
        });
        // nn::attention, the encoder's: all 12 heads of one sequence, softmax included (its
        // FLOPs: the two products), and its share of the FMA peak.
        const std::size_t heads = hidden / d;
        std::vector<float> qkv(seq * 3 * hidden), ctx(seq * hidden);
        for (auto& t : qkv) t = normal(rng);
        const Rate ga = gflops(2.0 * flops * static_cast<double>(heads), runs, [&] {
            nn::attention(seq, heads, d, 0.17f, qkv.data(), qkv.data() + hidden, qkv.data() + 2 * hidden, 3 * hidden,
                          ctx.data(), hidden, isa);
        });
        std::printf(R"({"bench":"nn","kernel":"attention","isa":"%s","seq":%zu,"head_dim":%zu,"gemm_nt_gflops":%.1f,"gemm_nn_gflops":%.1f,"attention_gflops":%.1f,"attention_fraction_of_peak":%.3f})" "\n",
                    std::string(nn::isa_name(isa)).c_str(), seq, d, gnt.median, gnn.median, ga.median, ga.median / fma_peak_isa);
    }
    // Element kernels: ns per element on a 128 x 1536 GELU and 128-long softmax rows.
    {
        std::vector<float> x(128 * 1536);
        for (auto& t : x) t = normal(rng);
        std::vector<float> work = x;
        const Rate g = gflops(static_cast<double>(x.size()), runs, [&] {
            std::memcpy(work.data(), x.data(), x.size() * sizeof(float));
            nn::gelu_erf(work.data(), work.size(), isa);
        });
        std::vector<float> rows = x;
        const Rate sm = gflops(static_cast<double>(x.size()), runs, [&] {
            std::memcpy(rows.data(), x.data(), x.size() * sizeof(float));
            for (std::size_t r = 0; r < rows.size() / 128; ++r) nn::softmax(rows.data() + r * 128, 128, isa);
        });
        std::printf(R"({"bench":"nn","kernel":"elementwise","isa":"%s","gelu_gelem_per_s":%.2f,"softmax128_gelem_per_s":%.2f,"checksum":%.3f})" "\n",
                    std::string(nn::isa_name(isa)).c_str(), g.median, sm.median, static_cast<double>(work[5] + rows[5]));
    }
    return 0;
}
