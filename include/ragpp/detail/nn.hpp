// ragpp detail: the numeric kernels of transformer encoders (embed/transformer.hpp).
//
// CONTRACT (the API the model code calls):
//
// - LinearF32: y[m, n_out] = x[m, n_in] * W^T + bias, W row-major [n_out, n_in] (the
//   layout of torch.nn.Linear.weight). Built once from the weights (packing happens
//   there), then forward() is const and thread-safe. With AMX-BF16 (Isa::amx) its
//   products run on the tiles, each float split exactly into three bfloat16 parts and
//   six of their products summed in float32 ("bf16x6": split_bf16x3's comment).
// - LinearI8: the same layer, weights quantized per output channel to int8 at build
//   time, activations quantized per row at each call (dynamic quantization).
// - gemm_nt / gemm_nn: small general products for attention (row-major, leading dims).
// - gelu_erf, softmax, layer_norm, add_layer_norm (the residual added in the same pass),
//   tanh_inplace: row-wise element kernels.
//
// Every entry point has an overload taking an `Isa` (scalar, avx2, avx2_vnni, avx512,
// avx512_vnni, amx) so tests run each code path on one machine; the plain overloads use
// active_isa(): the best this CPU runs, capped by the environment variable RAGPP_SIMD
// (`scalar`, `avx2`, `avx512`), as detail/simd.hpp does. An Isa the CPU lacks falls
// back to the best one below it that it has.
//
// How the GEMM works (the GotoBLAS / BLIS loop structure: Goto & van de Geijn, "Anatomy
// of high-performance matrix multiplication", ACM TOMS 34(3), 2008; Van Zee & van de
// Geijn, "BLIS", ACM TOMS 41(3), 2015; the code here is our own):
// - B (the weights, W^T) is packed once into panels of 32 output columns: panel j holds,
//   for each k, the 32 weights of columns 32j..32j+31 contiguously (zero padded).
// - At each call, blocks of MR rows of A are packed k-major (MR floats per k) into a
//   thread_local buffer, and a register-blocked micro-kernel computes an MR x 32 tile
//   of C with MR*2 AVX-512 accumulators (MR = 12: 24 zmm accumulators, 2 zmm of B,
//   one broadcast of A) or, on AVX2, 6 x 16 tiles (12 ymm accumulators).
// - K is blocked (KC) so a B micro-panel stays in L1 across the row micro-panels of a
//   block of MC rows; each strip of 32 columns runs through all K blocks in a row, so
//   its C tiles stay in L1 between them.
// int8 (LinearI8): the weights are packed in panels of 32 columns x 4 consecutive k
// (the vpdpbusd layout: each 32-bit lane of a register is one column's 4 bytes). VNNI's
// vpdpbusd multiplies unsigned by signed bytes, so activations q in [-127, 127] are
// shifted to u = q + 128 and
//     sum_k q_k w_k = sum_k u_k w_k - 128 * sum_k w_k,
// the column sums precomputed at build time. Without VNNI (AVX2): vpmaddubsw on |q| and
// sign(q) * w, whose pairwise int16 sums are at most 2 * 127 * 127 = 32,258 < 32,767,
// so they never saturate, then vpmaddwd with ones to int32 (AVX-512 CPUs without VNNI
// use this AVX2 kernel for int8). With AMX-INT8 (Isa::amx) and n_in a multiple of 64 the
// same layout feeds the tiles: each 128-byte quad row of a panel is two B tile rows of 16
// columns (tileloadd with a stride of 128 bytes), the quantized activation rows are the A
// tiles as they are (stride n_in), and tdpbusd (unsigned by signed bytes, like vpdpbusd)
// makes 32 x 32 int32 blocks in four tiles, which the VNNI kernel's epilogue finishes.
// All int32 sums are exact
// (|sum| <= 127 * 127 * n_in, < 2^31 for n_in <= 133,000), so every ISA gives the
// same integers as the scalar path.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include <ragpp/core/error.hpp>
#include <ragpp/detail/aligned_allocator.hpp>
#include <ragpp/detail/cpu.hpp>

#define RAGPP_NN_X86 RAGPP_X86_DISPATCH

#if RAGPP_NN_X86 && defined(__linux__)
#include <sys/syscall.h>  // SYS_arch_prctl: the AMX tile state (amx_permitted)
#include <unistd.h>
#endif

namespace ragpp::detail::nn {

// --- ISA selection ---------------------------------------------------------------------

/// The code paths. avx2 = AVX2 + FMA; avx2_vnni adds AVX-VNNI (256-bit vpdpbusd);
/// avx512 = AVX-512 F/BW/VL; avx512_vnni adds AVX512-VNNI; amx adds AMX-INT8 (Sapphire
/// Rapids and later): LinearI8's products on tiles where n_in is a multiple of 64, every
/// other kernel as avx512_vnni (the int32 sums are exact either way: the same floats).
/// Float kernels only use the avx2 / avx512 part; int8 kernels use the VNNI (AMX)
/// variants where named.
enum class Isa { scalar, avx2, avx2_vnni, avx512, avx512_vnni, amx };

inline constexpr Isa all_isas[] = {Isa::scalar, Isa::avx2, Isa::avx2_vnni, Isa::avx512, Isa::avx512_vnni, Isa::amx};

[[nodiscard]] constexpr std::string_view isa_name(Isa isa) noexcept {
    switch (isa) {
        case Isa::avx2: return "avx2";
        case Isa::avx2_vnni: return "avx2_vnni";
        case Isa::avx512: return "avx512";
        case Isa::avx512_vnni: return "avx512_vnni";
        case Isa::amx: return "amx";
        default: return "scalar";
    }
}

/// Whether the OS lets this process use the AMX tiles: on Linux (5.16 and later) a process
/// must ask for the tile state once (arch_prctl ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA),
/// after which its signal frames carry 8 KB more. Asked here, once, the first time an AMX
/// path is considered (the transformer kernels' first call: never by a process that only
/// uses BM25 or vectors), and only on a CPU that has AMX-INT8. Refused, or another OS:
/// false, and the VNNI kernels run.
[[nodiscard]] inline bool amx_permitted() noexcept {
#if RAGPP_NN_X86 && defined(__linux__) && defined(SYS_arch_prctl)
    static const bool ok = cpu_features().amx_int8 && syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */,
                                                              18 /* XFEATURE_XTILEDATA */) == 0;
    return ok;
#else
    return false;
#endif
}

/// Whether this CPU (and OS) can run `isa` (detail/cpu.hpp's probe, made once).
[[nodiscard]] inline bool supported(Isa isa) noexcept {
    const CpuFeatures& f = cpu_features();
    const bool avx2 = f.avx2 && f.fma;
    const bool avx512 = avx2 && f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq;
    switch (isa) {
        case Isa::scalar: return true;
        case Isa::avx2: return avx2;
        case Isa::avx2_vnni: return avx2 && f.avxvnni;
        case Isa::avx512: return avx512;
        case Isa::avx512_vnni: return avx512 && f.avx512vnni;
        case Isa::amx: return avx512 && f.avx512vnni && amx_permitted();  // amx_permitted: the CPU's AMX too
    }
    return false;
}

/// `isa` itself when supported, else the best supported path below it.
[[nodiscard]] inline Isa usable(Isa isa) noexcept {
    for (;;) {
        if (supported(isa)) return isa;
        switch (isa) {
            case Isa::amx: isa = Isa::avx512_vnni; break;
            case Isa::avx512_vnni: isa = Isa::avx512; break;
            case Isa::avx512: isa = Isa::avx2_vnni; break;
            case Isa::avx2_vnni: isa = Isa::avx2; break;
            default: return Isa::scalar;
        }
    }
}

/// The best path for this CPU, chosen once, capped by RAGPP_SIMD (detail/cpu.hpp).
[[nodiscard]] inline Isa active_isa() noexcept {
    static const Isa chosen = [] {
        switch (simd_cap()) {
            case SimdCap::scalar: return Isa::scalar;
            case SimdCap::avx2: return usable(Isa::avx2_vnni);
            case SimdCap::avx512: return usable(Isa::avx512_vnni);
            default: return usable(Isa::amx);
        }
    }();
    return chosen;
}

[[nodiscard]] constexpr bool is_avx512(Isa isa) noexcept {
    return isa == Isa::avx512 || isa == Isa::avx512_vnni || isa == Isa::amx;
}
[[nodiscard]] constexpr bool is_avx2(Isa isa) noexcept { return isa == Isa::avx2 || isa == Isa::avx2_vnni; }

// --- aligned storage: AlignedAllocator, AlignedVector (detail/aligned_allocator.hpp) ----

namespace impl {

inline constexpr std::size_t kNR = 32;  // columns per packed panel (float and int8)

/// Per-thread scratch that only grows; slot distinguishes concurrent uses in one call.
template <class T, int Slot>
inline T* scratch(std::size_t n) {
    thread_local AlignedVector<T> buf;
    if (buf.size() < n) {
        buf.clear();
        buf.shrink_to_fit();
        buf.resize(n);
    }
    return buf.data();
}

/// Packs B given as B[k][n] row-major view through (row, col) strides into panels of
/// kNR columns: out[(j * k + p) * kNR + c] = B(p, 32 j + c), zero padded.
inline void pack_b(std::size_t n, std::size_t k, const float* b, std::size_t stride_k, std::size_t stride_n,
                   float* out) noexcept {
    const std::size_t np = (n + kNR - 1) / kNR;
    for (std::size_t j = 0; j < np; ++j) {
        const std::size_t c0 = j * kNR, nc = std::min(kNR, n - c0);
        float* o = out + j * k * kNR;
        if (stride_n == 1) {
            for (std::size_t p = 0; p < k; ++p) {
                std::memcpy(o + p * kNR, b + p * stride_k + c0, nc * sizeof(float));
                for (std::size_t c = nc; c < kNR; ++c) o[p * kNR + c] = 0.0f;
            }
        } else {
            for (std::size_t p = 0; p < k; ++p) {
                for (std::size_t c = 0; c < nc; ++c) o[p * kNR + c] = b[p * stride_k + (c0 + c) * stride_n];
                for (std::size_t c = nc; c < kNR; ++c) o[p * kNR + c] = 0.0f;
            }
        }
    }
}

/// Packs rows [0, mr) x cols [0, kc) of A into out[p * MR + i], rows >= mr zero.
template <std::size_t MR>
inline void pack_a(std::size_t mr, std::size_t kc, const float* a, std::size_t lda, float* out) noexcept {
    if (mr == MR) {
        for (std::size_t p = 0; p < kc; ++p)
            for (std::size_t i = 0; i < MR; ++i) out[p * MR + i] = a[i * lda + p];
    } else {
        for (std::size_t p = 0; p < kc; ++p)
            for (std::size_t i = 0; i < MR; ++i) out[p * MR + i] = i < mr ? a[i * lda + p] : 0.0f;
    }
}

/// What a micro-kernel does with its tile: C = alpha * acc + (beta != 0 ? beta * C : 0)
/// + bias on the first K block; C += alpha * acc on the following ones; then, on the last
/// K block when `gelu`, C = GELU(C) (the same vector function as gelu_erf, so the result
/// is the one of the two passes, without the second pass over memory).
/// Attention's products (AVX-512 kernel only) use three more fields: A read in place
/// (`a_stride` floats between its k steps instead of a packed micro-panel's MR), row i
/// scaled by row_scale[i] in place of alpha, and the running maximum of each stored
/// column kept in col_max.
struct Epilogue {
    float alpha = 1.0f, beta = 0.0f;
    const float* bias = nullptr;  // at the tile's first column, kNR (or 16) valid floats
    bool accumulate = false;
    bool gelu = false;
    std::size_t a_stride = 0;         // 0: packed (MR)
    const float* row_scale = nullptr;  // the tile's first row's
    float* col_max = nullptr;          // the tile's first column's, kNR floats
};

using F32Kernel = void (*)(const float* ap, const float* bp, std::size_t kc, float* c, std::size_t ldc,
                           std::size_t mr, std::size_t nr, const Epilogue& e) noexcept;
using PackA = void (*)(std::size_t mr, std::size_t kc, const float* a, std::size_t lda, float* out) noexcept;

/// The packed weights that the next run of kernel calls reads, asked into L2 a slice
/// before each call of the current run (`calls` of them): the drivers read a model's
/// weights once per block of rows, from L3 or memory (7 MB a MiniLM layer), and with the
/// hardware prefetcher alone the first micro-panel of rows on each weight panel waited for
/// them (`bench_nn`'s encoder_products_f32 lines, 384 rows, on a Sapphire Rapids core:
/// 142 to 157 GFLOP/s with the weights cold against 152 to 172 warm; with this, 164 to 173
/// cold). Runs of fewer than kMinCalls calls (a short query: a few rows) are left to the
/// hardware prefetcher: there the slices are bursts of hundreds of lines, which stalled
/// the loads of the kernel call after them (in one-off builds on that core, cold weights:
/// 4 rows 27 GFLOP/s against 39 without; 16 rows level; 48 rows 130 against 104).
/// `next` null: none.
class PanelPrefetch {
public:
    static constexpr std::size_t kMinCalls = 4;
    PanelPrefetch(const void* next, std::size_t bytes, std::size_t calls) noexcept
        : p_(static_cast<const char*>(next)), lines_(next && calls >= kMinCalls ? (bytes + 63) / 64 : 0),
          per_call_((lines_ + calls - 1) / std::max<std::size_t>(calls, 1)) {}
    void step() noexcept {
        for (const std::size_t end = std::min(lines_, done_ + per_call_); done_ < end; ++done_)
            __builtin_prefetch(p_ + done_ * 64, 0, 2);  // prefetcht1 on x86
    }

private:
    const char* p_;
    std::size_t lines_, per_call_, done_ = 0;
};

/// The blocked driver: C[m, n] (op) A[m, k] * Bpacked (panels of kNR columns, each with
/// `kpanel` rows of which [0, k) are used). `width` is the micro-kernel's column count
/// (32, or 16 = half a panel), MR its row count. bias: n floats padded to the panels,
/// or nullptr.
template <std::size_t MR>
inline void gemm_driver(std::size_t m, std::size_t n, std::size_t k, float alpha, const float* a, std::size_t lda,
                        const float* bp, std::size_t kpanel, float beta, float* c, std::size_t ldc, const float* bias,
                        F32Kernel kernel, std::size_t width, std::size_t KC, std::size_t MC,
                        PackA pack = &pack_a<MR>, bool gelu = false) {
    if (m == 0 || n == 0) return;
    if (k == 0) {  // no products: C = beta * C + bias
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < n; ++j) {
                float v = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
                c[i * ldc + j] = v + (bias ? bias[j] : 0.0f);
            }
        return;
    }
    // K in equal blocks of at most KC (384 = 2 x 192, 1536 = 8 x 192, 64 = 1 x 64).
    KC = (k + (k + KC - 1) / KC - 1) / ((k + KC - 1) / KC);
    const std::size_t mc_max = std::min(MC, (m + MR - 1) / MR * MR);
    float* abuf = scratch<float, 0>(mc_max * k);
    // Rows outermost. All of K of a block of rows is packed once (K block after K block,
    // each mpad x kc), then each column strip runs through the K blocks in a row, so its
    // C tiles stay in L1 between them instead of going round L3 (C of 4096 x 1536 is 25 MB).
    for (std::size_t ic = 0; ic < m; ic += MC) {
        const std::size_t mcur = std::min(MC, m - ic);
        const std::size_t mpad = (mcur + MR - 1) / MR * MR;
        for (std::size_t pc = 0; pc < k; pc += KC) {
            const std::size_t kc = std::min(KC, k - pc);
            for (std::size_t ir = 0; ir < mcur; ir += MR)
                pack(std::min(MR, mcur - ir), kc, a + (ic + ir) * lda + pc, lda, abuf + pc * mpad + ir * kc);
        }
        for (std::size_t col = 0; col < n; col += width) {
            const std::size_t nr = std::min(width, n - col);
            for (std::size_t pc = 0; pc < k; pc += KC) {
                const std::size_t kc = std::min(KC, k - pc);
                const float* bpp = bp + (col / kNR) * kpanel * kNR + pc * kNR + col % kNR;
                Epilogue e;
                e.alpha = alpha;
                e.beta = beta;
                e.bias = bias && pc == 0 ? bias + col : nullptr;
                const bool last_k = pc + kc >= k;
                e.accumulate = pc != 0;
                e.gelu = gelu && last_k;
                // Next: this strip's next K block, else the next strip's first, else the
                // first of the next row block.
                const std::size_t ncol = last_k ? (col + width < n ? col + width : 0) : col;
                const std::size_t npc = last_k ? 0 : pc + kc;
                const bool has_next = !last_k || col + width < n || ic + MC < m;
                PanelPrefetch pf(has_next ? bp + (ncol / kNR) * kpanel * kNR + npc * kNR : nullptr,
                                 std::min(KC, k - npc) * kNR * sizeof(float), (mcur + MR - 1) / MR);
                for (std::size_t ir = 0; ir < mcur; ir += MR) {
                    pf.step();
                    kernel(abuf + pc * mpad + ir * kc, bpp, kc, c + (ic + ir) * ldc + col, ldc,
                           std::min(MR, mcur - ir), nr, e);
                }
            }
        }
    }
}

// --- scalar element kernels (the oracles) ----------------------------------------------
inline void gelu_scalar(float* x, std::size_t n) noexcept {
    for (std::size_t i = 0; i < n; ++i) x[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * 0.70710678118654752f));
}
inline void softmax_scalar(float* x, std::size_t n) noexcept {
    if (n == 0) return;
    const float mx = *std::max_element(x, x + n);
    float s = 0;
    for (std::size_t i = 0; i < n; ++i) s += (x[i] = std::exp(x[i] - mx));
    for (std::size_t i = 0; i < n; ++i) x[i] /= s;
}
inline void layer_norm_scalar(float* x, std::size_t n, const float* gamma, const float* beta, float eps) noexcept {
    double mean = 0, var = 0;
    for (std::size_t i = 0; i < n; ++i) mean += x[i];
    mean /= static_cast<double>(n);
    for (std::size_t i = 0; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
    var /= static_cast<double>(n);
    const float inv = static_cast<float>(1.0 / std::sqrt(var + eps));
    for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>(x[i] - mean) * inv * gamma[i] + beta[i];
}
inline void tanh_scalar(float* x, std::size_t n) noexcept {
    for (std::size_t i = 0; i < n; ++i) x[i] = std::tanh(x[i]);
}

// Constants of the vectorized element functions.
// exp: x = n ln2 + r, |r| <= ln2 / 2, ln2 split in two (Cody & Waite) so n ln2 is exact
// to float precision; e^r by its Taylor polynomial of degree 7 (truncation < 1e-8
// relative); e^x = 2^n e^r.
inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kLn2Hi = 0.693359375f;
inline constexpr float kLn2Lo = -2.12194440e-4f;
inline constexpr float kExpHi = 88.7228317f;   // e^x overflows above
inline constexpr float kExpLo = -87.3365448f;  // e^x below the smallest normal float
// GELU(x) = x Phi(x), Phi(x) = 1/2 + r(x) with r(x) = erf(x / sqrt 2) / 2 odd: for |x| <= 5.6,
// r(x) ~ x P(x^2) / Q(x^2), P and Q of degree 5 (Q(0) = 1), a minimax rational fitted by
// scripts/fit_gelu.py (max error 9.3e-9 in double on [0, 5.6]); beyond, x is clamped to
// +-5.6, where r rounds to +-0.5 in float (1 - Phi(5.6) = 1.1e-8), so GELU(x) = x or -0.
// Evaluated in float the error of Phi is about 1e-7 absolute: the GELU's error is within
// 3e-7 |x|, of the order of torch's own x (1 + erf(x / sqrt 2)) / 2 in float (whose 1 + erf
// cancels in the negative tail: 3e-8 |x|), and within 3e-7 relative for x >= 0. 22 vector operations
// (an erfc with relative precision in both tails took 49).
inline constexpr float kGeluClamp = 5.6f;
inline constexpr float kGeluP[6] = {3.989422216e-01f, 3.437624844e-02f, 4.707265578e-03f,
                                    1.738517435e-04f, 6.356500555e-06f, 2.214498438e-08f};
inline constexpr float kGeluQ[6] = {1.0f, 2.528341895e-01f, 2.894016204e-02f,
                                    1.912984371e-03f, 7.510203581e-05f, 1.180199909e-06f};
// tanh: the odd Taylor series to x^15 for |x| < 0.55 (truncation < 1e-7 relative),
// 1 - 2 / (e^{2|x|} + 1) with the sign of x beyond.
inline constexpr float kTanhSmall = 0.55f;
inline constexpr float kTanh[8] = {1.0f,
                                   -1.0f / 3.0f,
                                   2.0f / 15.0f,
                                   -17.0f / 315.0f,
                                   62.0f / 2835.0f,
                                   -1382.0f / 155925.0f,
                                   21844.0f / 6081075.0f,
                                   -929569.0f / 638512875.0f};

// int8 scalar helpers -------------------------------------------------------------------
/// The reference activation quantization of one row: q = lrint(x / sx), sx = max|x| / 127.
inline float quantize_row_scalar(const float* x, std::size_t k, std::int8_t* q) noexcept {
    float mx = 0;
    for (std::size_t p = 0; p < k; ++p) mx = std::max(mx, std::fabs(x[p]));
    const float sx = mx > 0 ? mx / 127.0f : 1.0f;
    for (std::size_t p = 0; p < k; ++p) q[p] = static_cast<std::int8_t>(std::lrint(x[p] / sx));
    return sx;
}

struct I8Epilogue {
    const std::int32_t* csum = nullptr;  // 128 * column sums to subtract (VNNI), or nullptr
    const float* scale = nullptr;        // per column
    const float* bias = nullptr;         // per column
    const float* sx = nullptr;           // per row
    float* y = nullptr;                  // float output, or
    std::int32_t* yi = nullptr;          // the exact int32 sums
    bool gelu = false;                   // y = GELU(y) (float output only)
};
using I8Kernel = void (*)(const std::uint8_t* ap, const std::int8_t* bp, std::size_t kq, std::size_t ldc,
                          std::size_t mr, std::size_t nr, const I8Epilogue& e) noexcept;

}  // namespace impl

#if RAGPP_NN_X86
// GCC 12's AVX-512 intrinsic headers trip -W(maybe-)uninitialized on their own
// _mm512_undefined_* placeholders (GCC bug 105593), as in detail/simd.hpp.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
namespace impl {

#define RAGPP_NN_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma,avx2")))
#define RAGPP_NN_AVX512VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma,avx2,avx512vnni")))
#define RAGPP_NN_AVX2 __attribute__((target("avx2,fma")))
#define RAGPP_NN_AVXVNNI __attribute__((target("avx2,fma,avxvnni")))

// GELU of a vector (defined with the element functions below), for the kernels' epilogue.
RAGPP_NN_AVX512 inline __m512 gelu512(__m512 x) noexcept;
RAGPP_NN_AVX2 inline __m256 gelu256(__m256 x) noexcept;

// --- AVX-512 fp32 micro-kernel: 12 x 32 ------------------------------------------------
inline constexpr std::size_t kMR512 = 12;

RAGPP_NN_AVX512 inline __mmask16 tail_mask16(std::size_t n) noexcept {
    return n >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1U << n) - 1U);
}

/// What the AVX-512 micro-kernel's epilogue needs of a tile, read once (see kernel_f32_avx512).
enum : int { kTileScaled = 1, kTileRowScale = 2, kTileAccumulate = 4, kTileBeta = 8, kTileGelu = 16, kTileColMax = 32 };
struct F32Tile {
    float* c;
    std::size_t ldc, mr;
    __mmask16 m0, m1;
    __m512 alpha, beta, bias0, bias1, mx0, mx1;
    const float* row_scale;
    int mode;
};

/// Row i of the tile: C = alpha * acc (or row_scale[i] * acc) + beta * C + bias, or C +=
/// alpha * acc; then GELU; the columns' maxima kept. Mode: kTile* bits known at compile
/// time (a whole tile), or -1 for t.mode's at run time (and rows past t.mr skipped).
template <int Mode>
RAGPP_NN_AVX512 __attribute__((always_inline)) inline void f32_tile_row(F32Tile& t, std::size_t i, __m512 v0,
                                                                           __m512 v1) noexcept {
    if (Mode < 0 && i >= t.mr) return;
    const int mode = Mode < 0 ? t.mode : Mode;
    float* ci = t.c + i * t.ldc;
    if (mode & kTileScaled) {
        const __m512 scale = (mode & kTileRowScale) ? _mm512_set1_ps(t.row_scale[i]) : t.alpha;
        v0 = _mm512_mul_ps(v0, scale);
        v1 = _mm512_mul_ps(v1, scale);
    }
    if (mode & kTileAccumulate) {
        v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(t.m0, ci));
        v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(t.m1, ci + 16));
    } else {
        if (mode & kTileBeta) {
            v0 = _mm512_fmadd_ps(t.beta, _mm512_maskz_loadu_ps(t.m0, ci), v0);
            v1 = _mm512_fmadd_ps(t.beta, _mm512_maskz_loadu_ps(t.m1, ci + 16), v1);
        }
        v0 = _mm512_add_ps(v0, t.bias0);
        v1 = _mm512_add_ps(v1, t.bias1);
    }
    if (mode & kTileGelu) {
        v0 = gelu512(v0);
        v1 = gelu512(v1);
    }
    _mm512_mask_storeu_ps(ci, t.m0, v0);
    _mm512_mask_storeu_ps(ci + 16, t.m1, v1);
    if (mode & kTileColMax) {
        t.mx0 = _mm512_max_ps(t.mx0, v0);
        t.mx1 = _mm512_max_ps(t.mx1, v1);
    }
}

RAGPP_NN_AVX512 inline void kernel_f32_avx512(const float* ap, const float* bp, std::size_t kc, float* c,
                                              std::size_t ldc, std::size_t mr, std::size_t nr,
                                              const Epilogue& e) noexcept {
    constexpr std::size_t MR = kMR512;
    // Named accumulators: with an array, GCC 12 may store them to the stack at every
    // step of the loop (it does in the int8 and AVX2 kernels).
#define RAGPP_NN_Z(i) __m512 c##i##a = _mm512_setzero_ps(), c##i##b = _mm512_setzero_ps();
    RAGPP_NN_Z(0) RAGPP_NN_Z(1) RAGPP_NN_Z(2) RAGPP_NN_Z(3) RAGPP_NN_Z(4) RAGPP_NN_Z(5)
    RAGPP_NN_Z(6) RAGPP_NN_Z(7) RAGPP_NN_Z(8) RAGPP_NN_Z(9) RAGPP_NN_Z(10) RAGPP_NN_Z(11)
#undef RAGPP_NN_Z
    const std::size_t as = e.a_stride != 0 ? e.a_stride : MR;
    for (std::size_t p = 0; p < kc; ++p) {
        const __m512 b0 = _mm512_load_ps(bp + p * kNR);
        const __m512 b1 = _mm512_load_ps(bp + p * kNR + 16);
        const float* a = ap + p * as;
#define RAGPP_NN_ROW(i)                                   \
    {                                                     \
        const __m512 av = _mm512_set1_ps(a[i]);           \
        c##i##a = _mm512_fmadd_ps(av, b0, c##i##a);       \
        c##i##b = _mm512_fmadd_ps(av, b1, c##i##b);       \
    }
        RAGPP_NN_ROW(0) RAGPP_NN_ROW(1) RAGPP_NN_ROW(2) RAGPP_NN_ROW(3) RAGPP_NN_ROW(4) RAGPP_NN_ROW(5)
        RAGPP_NN_ROW(6) RAGPP_NN_ROW(7) RAGPP_NN_ROW(8) RAGPP_NN_ROW(9) RAGPP_NN_ROW(10) RAGPP_NN_ROW(11)
#undef RAGPP_NN_ROW
    }
    // The epilogue reads the tile's fields once (stores to C could alias a reference to
    // them: GCC reloaded each after every row's store), works on the named accumulators
    // (an array of them went through the stack), and for a whole tile in the modes the
    // drivers use, runs with its choices known at compile time instead of seven tests a
    // row (the epilogue took a fifth of a 32-step call of attention's scores; these calls
    // 3 to 9% faster with it, in one-off scratch measurements on a Sapphire Rapids core).
    F32Tile t;
    t.c = c;
    t.ldc = ldc;
    t.mr = mr;
    t.m0 = tail_mask16(nr);
    t.m1 = nr > 16 ? tail_mask16(nr - 16) : static_cast<__mmask16>(0);
    t.alpha = _mm512_set1_ps(e.alpha);
    t.beta = _mm512_set1_ps(e.beta);
    t.bias0 = e.bias ? _mm512_maskz_loadu_ps(t.m0, e.bias) : _mm512_setzero_ps();
    t.bias1 = e.bias ? _mm512_maskz_loadu_ps(t.m1, e.bias + 16) : _mm512_setzero_ps();
    t.row_scale = e.row_scale;
    t.mx0 = t.mx1 = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
    // x * 1 is x: the linear layers skip the multiply.
    t.mode = (e.row_scale != nullptr || e.alpha != 1.0f ? kTileScaled : 0) | (e.row_scale ? kTileRowScale : 0) |
             (e.accumulate ? kTileAccumulate : 0) | (!e.accumulate && e.beta != 0.0f ? kTileBeta : 0) |
             (e.gelu ? kTileGelu : 0) | (e.col_max ? kTileColMax : 0);
#define RAGPP_NN_TILE(M)                                                                                   \
    f32_tile_row<M>(t, 0, c0a, c0b); f32_tile_row<M>(t, 1, c1a, c1b); f32_tile_row<M>(t, 2, c2a, c2b);    \
    f32_tile_row<M>(t, 3, c3a, c3b); f32_tile_row<M>(t, 4, c4a, c4b); f32_tile_row<M>(t, 5, c5a, c5b);    \
    f32_tile_row<M>(t, 6, c6a, c6b); f32_tile_row<M>(t, 7, c7a, c7b); f32_tile_row<M>(t, 8, c8a, c8b);    \
    f32_tile_row<M>(t, 9, c9a, c9b); f32_tile_row<M>(t, 10, c10a, c10b); f32_tile_row<M>(t, 11, c11a, c11b);
    const int full = mr == MR ? t.mode : -1;
    if (full == 0) { RAGPP_NN_TILE(0) }  // a linear layer's first K block (bias)
    else if (full == kTileAccumulate) { RAGPP_NN_TILE(kTileAccumulate) }
    else if (full == (kTileAccumulate | kTileGelu)) { RAGPP_NN_TILE(kTileAccumulate | kTileGelu) }
    else if (full == kTileGelu) { RAGPP_NN_TILE(kTileGelu) }
    else if (full == (kTileScaled | kTileColMax)) { RAGPP_NN_TILE(kTileScaled | kTileColMax) }  // scores
    else if (full == (kTileScaled | kTileRowScale)) { RAGPP_NN_TILE(kTileScaled | kTileRowScale) }  // P V
    else { RAGPP_NN_TILE(-1) }  // any other mode, or a tile of fewer rows
#undef RAGPP_NN_TILE
    if (float* const col_max = e.col_max) {
        _mm512_mask_storeu_ps(col_max, t.m0, _mm512_max_ps(t.mx0, _mm512_maskz_loadu_ps(t.m0, col_max)));
        _mm512_mask_storeu_ps(col_max + 16, t.m1, _mm512_max_ps(t.mx1, _mm512_maskz_loadu_ps(t.m1, col_max + 16)));
    }
}

/// pack_a<MR> (MR a multiple of 4) with 4 x 8 transposes (AVX): rows 4g..4g+3, k p..p+7
/// per step. MR = 12 for the GEMM's A, 32 for attention's queries as a B panel.
template <std::size_t MR>
RAGPP_NN_AVX2 inline void pack_a_avx(std::size_t mr, std::size_t kc, const float* a, std::size_t lda,
                                     float* out) noexcept {
    static_assert(MR % 4 == 0);
    if (mr != MR) return pack_a<MR>(mr, kc, a, lda, out);
    std::size_t p = 0;
    for (; p + 8 <= kc; p += 8) {
        for (std::size_t g = 0; g < MR; g += 4) {
            const float* r = a + g * lda + p;
            const __m256 r0 = _mm256_loadu_ps(r), r1 = _mm256_loadu_ps(r + lda), r2 = _mm256_loadu_ps(r + 2 * lda),
                         r3 = _mm256_loadu_ps(r + 3 * lda);
            const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
            const __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
            const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
            const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
            float* o = out + p * MR + g;
            _mm_storeu_ps(o, _mm256_castps256_ps128(u0));
            _mm_storeu_ps(o + MR, _mm256_castps256_ps128(u1));
            _mm_storeu_ps(o + 2 * MR, _mm256_castps256_ps128(u2));
            _mm_storeu_ps(o + 3 * MR, _mm256_castps256_ps128(u3));
            _mm_storeu_ps(o + 4 * MR, _mm256_extractf128_ps(u0, 1));
            _mm_storeu_ps(o + 5 * MR, _mm256_extractf128_ps(u1, 1));
            _mm_storeu_ps(o + 6 * MR, _mm256_extractf128_ps(u2, 1));
            _mm_storeu_ps(o + 7 * MR, _mm256_extractf128_ps(u3, 1));
        }
    }
    // The last kc % 8 columns (counted from 0: with kc a constant multiple of 8 after
    // inlining, a loop on p made GCC 12 warn of overflow in code it cannot reach).
    const std::size_t rest = kc - p;
    for (std::size_t t = 0; t < rest; ++t)
        for (std::size_t i = 0; i < MR; ++i) out[(p + t) * MR + i] = a[i * lda + p + t];
}
RAGPP_NN_AVX2 inline void pack_a12_avx(std::size_t mr, std::size_t kc, const float* a, std::size_t lda,
                                       float* out) noexcept {
    pack_a_avx<12>(mr, kc, a, lda, out);
}

// --- AVX2 fp32 micro-kernel: 6 x 16 (half a panel) -------------------------------------
inline constexpr std::size_t kMR256 = 6;

RAGPP_NN_AVX2 inline __m256i tail_mask8(std::size_t n) noexcept {
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(std::min<std::size_t>(n, 8))), idx);
}

RAGPP_NN_AVX2 inline void kernel_f32_avx2(const float* ap, const float* bp, std::size_t kc, float* c, std::size_t ldc,
                                          std::size_t mr, std::size_t nr, const Epilogue& e) noexcept {
    constexpr std::size_t MR = kMR256;
#define RAGPP_NN_Z(i) __m256 c##i##a = _mm256_setzero_ps(), c##i##b = _mm256_setzero_ps();
    RAGPP_NN_Z(0) RAGPP_NN_Z(1) RAGPP_NN_Z(2) RAGPP_NN_Z(3) RAGPP_NN_Z(4) RAGPP_NN_Z(5)
#undef RAGPP_NN_Z
    for (std::size_t p = 0; p < kc; ++p) {
        const __m256 b0 = _mm256_loadu_ps(bp + p * kNR);
        const __m256 b1 = _mm256_loadu_ps(bp + p * kNR + 8);
        const float* a = ap + p * MR;
#define RAGPP_NN_ROW(i)                                   \
    {                                                     \
        const __m256 av = _mm256_broadcast_ss(a + (i));   \
        c##i##a = _mm256_fmadd_ps(av, b0, c##i##a);       \
        c##i##b = _mm256_fmadd_ps(av, b1, c##i##b);       \
    }
        RAGPP_NN_ROW(0) RAGPP_NN_ROW(1) RAGPP_NN_ROW(2) RAGPP_NN_ROW(3) RAGPP_NN_ROW(4) RAGPP_NN_ROW(5)
#undef RAGPP_NN_ROW
    }
    // The fields read once and the named accumulators used row by row, as in the AVX-512
    // kernel (an array of them went through the stack, and stores to C reloaded the fields).
    const __m256i m0 = tail_mask8(nr), m1 = tail_mask8(nr > 8 ? nr - 8 : 0);
    const __m256 alpha = _mm256_set1_ps(e.alpha), beta = _mm256_set1_ps(e.beta);
    const __m256 bias0 = e.bias ? _mm256_maskload_ps(e.bias, m0) : _mm256_setzero_ps();
    const __m256 bias1 = e.bias ? _mm256_maskload_ps(e.bias + 8, m1) : _mm256_setzero_ps();
    const bool accumulate = e.accumulate, has_beta = e.beta != 0.0f, gelu = e.gelu;
#define RAGPP_NN_ROW_OUT(i, acc0, acc1)                                    \
    if ((i) < mr) {                                                        \
        float* ci = c + (i) * ldc;                                         \
        __m256 v0 = _mm256_mul_ps(acc0, alpha), v1 = _mm256_mul_ps(acc1, alpha); \
        if (accumulate) {                                                  \
            v0 = _mm256_add_ps(v0, _mm256_maskload_ps(ci, m0));            \
            v1 = _mm256_add_ps(v1, _mm256_maskload_ps(ci + 8, m1));        \
        } else {                                                           \
            if (has_beta) {                                                \
                v0 = _mm256_fmadd_ps(beta, _mm256_maskload_ps(ci, m0), v0);     \
                v1 = _mm256_fmadd_ps(beta, _mm256_maskload_ps(ci + 8, m1), v1); \
            }                                                              \
            v0 = _mm256_add_ps(v0, bias0);                                 \
            v1 = _mm256_add_ps(v1, bias1);                                 \
        }                                                                  \
        if (gelu) {                                                        \
            v0 = gelu256(v0);                                              \
            v1 = gelu256(v1);                                              \
        }                                                                  \
        _mm256_maskstore_ps(ci, m0, v0);                                   \
        _mm256_maskstore_ps(ci + 8, m1, v1);                               \
    }
    RAGPP_NN_ROW_OUT(0, c0a, c0b) RAGPP_NN_ROW_OUT(1, c1a, c1b) RAGPP_NN_ROW_OUT(2, c2a, c2b)
    RAGPP_NN_ROW_OUT(3, c3a, c3b) RAGPP_NN_ROW_OUT(4, c4a, c4b) RAGPP_NN_ROW_OUT(5, c5a, c5b)
#undef RAGPP_NN_ROW_OUT
}

// --- int8 micro-kernels ---------------------------------------------------------------
// A is packed as 4-byte quads: ap[(q * MR + i) * 4 + r] = row i, k = 4q + r. B panels:
// bp[q * 128 + c * 4 + r] = column c, k = 4q + r.

/// Shared epilogue of one row of 8 / 16 int32 sums (after the VNNI correction).
RAGPP_NN_AVX512 inline void i8_store16(__m512i s, std::size_t i, std::size_t col, __mmask16 m, std::size_t ldc,
                                       const I8Epilogue& e) noexcept {
    if (e.yi) {
        _mm512_mask_storeu_epi32(e.yi + i * ldc + col, m, s);
        return;
    }
    __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(s), _mm512_set1_ps(e.sx[i]));
    v = _mm512_mul_ps(v, _mm512_loadu_ps(e.scale + col));
    v = _mm512_add_ps(v, _mm512_loadu_ps(e.bias + col));
    if (e.gelu) v = gelu512(v);
    _mm512_mask_storeu_ps(e.y + i * ldc + col, m, v);
}

inline constexpr std::size_t kMRvnni512 = 12;

// acc += a (u8) . b (s8), four bytes per 32-bit lane.
RAGPP_NN_AVX512VNNI inline void dpbusd512(__m512i& acc, __m512i a, __m512i b) noexcept {
    acc = _mm512_dpbusd_epi32(acc, a, b);
}
RAGPP_NN_AVXVNNI inline void dpbusd256(__m256i& acc, __m256i a, __m256i b) noexcept {
    acc = _mm256_dpbusd_avx_epi32(acc, a, b);
}

/// AVX512-VNNI: 12 rows x 32 columns, 24 zmm accumulators.
RAGPP_NN_AVX512VNNI inline void kernel_i8_avx512vnni(const std::uint8_t* ap, const std::int8_t* bp, std::size_t kq,
                                                     std::size_t ldc, std::size_t mr, std::size_t nr,
                                                     const I8Epilogue& e) noexcept {
    constexpr std::size_t MR = kMRvnni512;
    // Named accumulators (an array of them is copied and spilled around every vpdpbusd
    // by GCC 12: 240 instead of 600+ GOPS).
#define RAGPP_NN_Z(i) __m512i c##i##a = _mm512_setzero_si512(), c##i##b = _mm512_setzero_si512();
    RAGPP_NN_Z(0) RAGPP_NN_Z(1) RAGPP_NN_Z(2) RAGPP_NN_Z(3) RAGPP_NN_Z(4) RAGPP_NN_Z(5)
    RAGPP_NN_Z(6) RAGPP_NN_Z(7) RAGPP_NN_Z(8) RAGPP_NN_Z(9) RAGPP_NN_Z(10) RAGPP_NN_Z(11)
#undef RAGPP_NN_Z
    for (std::size_t q = 0; q < kq; ++q) {
        const __m512i b0 = _mm512_load_si512(bp + q * 128);
        const __m512i b1 = _mm512_load_si512(bp + q * 128 + 64);
        const std::uint8_t* a = ap + q * MR * 4;
#define RAGPP_NN_ROW(i)                                          \
    {                                                            \
        std::int32_t quad;                                       \
        std::memcpy(&quad, a + (i) * 4, 4);                      \
        const __m512i av = _mm512_set1_epi32(quad);              \
        dpbusd512(c##i##a, av, b0);                              \
        dpbusd512(c##i##b, av, b1);                              \
    }
        RAGPP_NN_ROW(0) RAGPP_NN_ROW(1) RAGPP_NN_ROW(2) RAGPP_NN_ROW(3) RAGPP_NN_ROW(4) RAGPP_NN_ROW(5)
        RAGPP_NN_ROW(6) RAGPP_NN_ROW(7) RAGPP_NN_ROW(8) RAGPP_NN_ROW(9) RAGPP_NN_ROW(10) RAGPP_NN_ROW(11)
#undef RAGPP_NN_ROW
    }
    const __m512i acc[MR][2] = {{c0a, c0b}, {c1a, c1b}, {c2a, c2b}, {c3a, c3b}, {c4a, c4b},   {c5a, c5b},
                                {c6a, c6b}, {c7a, c7b}, {c8a, c8b}, {c9a, c9b}, {c10a, c10b}, {c11a, c11b}};
    const __m512i cs0 = _mm512_loadu_si512(e.csum), cs1 = _mm512_loadu_si512(e.csum + 16);
    const __mmask16 m0 = tail_mask16(nr), m1 = nr > 16 ? tail_mask16(nr - 16) : static_cast<__mmask16>(0);
    for (std::size_t i = 0; i < MR; ++i) {
        if (i >= mr) break;
        i8_store16(_mm512_sub_epi32(acc[i][0], cs0), i, 0, m0, ldc, e);
        if (m1) i8_store16(_mm512_sub_epi32(acc[i][1], cs1), i, 16, m1, ldc, e);
    }
}

RAGPP_NN_AVX2 inline void i8_store8(__m256i s, std::size_t i, std::size_t col, __m256i m, std::size_t ldc,
                                    const I8Epilogue& e) noexcept {
    if (e.yi) {
        _mm256_maskstore_epi32(reinterpret_cast<int*>(e.yi + i * ldc + col), m, s);
        return;
    }
    __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(s), _mm256_set1_ps(e.sx[i]));
    v = _mm256_mul_ps(v, _mm256_loadu_ps(e.scale + col));
    v = _mm256_add_ps(v, _mm256_loadu_ps(e.bias + col));
    if (e.gelu) v = gelu256(v);
    _mm256_maskstore_ps(e.y + i * ldc + col, m, v);
}

#if defined(__linux__)
#define RAGPP_NN_AMX \
    __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma,avx2,avx512vnni,amx-tile,amx-int8")))

/// The tile configuration (Intel SDM vol. 1, 18.2: palette 1; every tile 16 rows x 64 bytes).
struct alignas(64) AmxConfig {
    std::uint8_t palette = 1, start_row = 0;
    std::uint8_t reserved[14] = {};
    std::uint16_t colsb[16] = {64, 64, 64, 64, 64, 64, 64, 64};
    std::uint8_t rows[16] = {16, 16, 16, 16, 16, 16, 16, 16};
};

RAGPP_NN_AMX inline void amx_begin() noexcept {
    static const AmxConfig config;
    _tile_loadconfig(&config);
}
RAGPP_NN_AMX inline void amx_end() noexcept { _tile_release(); }

/// AMX-INT8 (between amx_begin and amx_end): c[32 x 32] = the int32 sums of rows [0, 32)
/// of A (unsigned bytes, `lda` bytes apart, 4 * kq of them, kq a multiple of 16) by the
/// 32 columns of the B panel bp (kq quad rows of 128 bytes). Tiles 0-1: A, rows 0-15 and
/// 16-31; 2-3: B, columns 0-15 and 16-31; 4-7: C.
RAGPP_NN_AMX inline void amx_block32(const std::uint8_t* a, std::size_t lda, const std::int8_t* bp, std::size_t kq,
                                     std::int32_t* c) noexcept {
    _tile_zero(4);
    _tile_zero(5);
    _tile_zero(6);
    _tile_zero(7);
    for (std::size_t q = 0; q < kq; q += 16) {
        _tile_loadd(0, a + q * 4, lda);
        _tile_loadd(1, a + 16 * lda + q * 4, lda);
        _tile_loadd(2, bp + q * 128, 128);
        _tile_loadd(3, bp + q * 128 + 64, 128);
        _tile_dpbusd(4, 0, 2);
        _tile_dpbusd(5, 0, 3);
        _tile_dpbusd(6, 1, 2);
        _tile_dpbusd(7, 1, 3);
    }
    _tile_stored(4, c, 128);
    _tile_stored(5, c + 16, 128);
    _tile_stored(6, c + 16 * 32, 128);
    _tile_stored(7, c + 16 * 32 + 16, 128);
}

/// The VNNI epilogue on a 32 x 32 block of sums (rows [0, mr), columns [0, nr)).
RAGPP_NN_AMX inline void amx_finish32(const std::int32_t* c, std::size_t ldc, std::size_t mr, std::size_t nr,
                                      const I8Epilogue& e) noexcept {
    const __m512i cs0 = _mm512_loadu_si512(e.csum), cs1 = _mm512_loadu_si512(e.csum + 16);
    const __mmask16 m0 = tail_mask16(nr), m1 = nr > 16 ? tail_mask16(nr - 16) : static_cast<__mmask16>(0);
    for (std::size_t i = 0; i < mr; ++i) {
        i8_store16(_mm512_sub_epi32(_mm512_load_si512(c + i * 32), cs0), i, 0, m0, ldc, e);
        if (m1) i8_store16(_mm512_sub_epi32(_mm512_load_si512(c + i * 32 + 16), cs1), i, 16, m1, ldc, e);
    }
}

// --- float32 on AMX-BF16: six bfloat16 products per multiply (LinearF32) ---------------

#define RAGPP_NN_AMXBF16 \
    __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma,avx2,amx-tile,amx-bf16")))

/// The float32 products of LinearF32 on AMX-BF16 (Isa::amx where the CPU has AMX-BF16).
/// Each float splits exactly into three bfloat16 parts, x = x0 + x1 + x2 (x0 = the top 16
/// bits of x, x1 those of x - x0, x2 those of x - x0 - x1: each part holds the next 8
/// significant bits of the 24, so the sum is exact for normal floats), and a product is
/// the six terms of the split whose parts' orders add to at most 2:
///     a b ~ a0 b0 + a0 b1 + a0 b2 + a1 b1 + a1 b0 + a2 b0
/// (the three left out are below 2^-24 of |a b|: "bf16x6", Henry, Tang & Heinecke,
/// "Leveraging the bfloat16 artificial intelligence datatype for higher-precision
/// computations", ARITH 2019). tdpbf16ps multiplies bfloat16 pairs exactly and adds them
/// to float32 sums; the six terms of each 32-wide K chunk go into the same sums in that
/// order, whichever row block or tile a row is in, so a row's result does not depend on
/// the other rows of the call.

/// x[0, n) split into three planes (plane j at p + j * plane), each part the top 16 bits
/// of what remains; p[n, pad) zero in every plane.
RAGPP_NN_AVX512 inline void split_bf16x3(const float* x, std::size_t n, std::size_t pad, std::uint16_t* p,
                                         std::size_t plane) noexcept {
    const __m512i top = _mm512_set1_epi32(static_cast<int>(0xFFFF0000U));
    for (std::size_t i = 0; i < pad; i += 16) {
        const __mmask16 in = i < n ? tail_mask16(n - i) : static_cast<__mmask16>(0);
        const __mmask16 out = tail_mask16(pad - i);
        const __m512 a = _mm512_maskz_loadu_ps(in, x + i);
        const __m512i h0 = _mm512_and_si512(_mm512_castps_si512(a), top);
        const __m512 r1 = _mm512_sub_ps(a, _mm512_castsi512_ps(h0));
        const __m512i h1 = _mm512_and_si512(_mm512_castps_si512(r1), top);
        const __m512i h2 = _mm512_castps_si512(_mm512_sub_ps(r1, _mm512_castsi512_ps(h1)));
        _mm256_mask_storeu_epi16(p + i, out, _mm512_cvtepi32_epi16(_mm512_srli_epi32(h0, 16)));
        _mm256_mask_storeu_epi16(p + plane + i, out, _mm512_cvtepi32_epi16(_mm512_srli_epi32(h1, 16)));
        _mm256_mask_storeu_epi16(p + 2 * plane + i, out, _mm512_cvtepi32_epi16(_mm512_srli_epi32(h2, 16)));
    }
}

/// Rows x 32 floats of C (Rows 32 or 16; `ldc` bytes apart) = cin (`ldin` bytes apart;
/// null: zeros) + the bf16x6 products of the A rows by one K block of a B panel, between
/// amx_begin and amx_end. A in whole tiles: plane j's tile of rows 0-15 for K chunk t (32
/// parts) at a + j * aplane + 512 t, 16 rows of 64 bytes one after the other (one tile
/// load reads 1 KB in a row: 15% faster than rows `K` parts apart, read from L2, in a
/// one-off scratch program on a Sapphire Rapids core; the float32 encoder 2-3% faster,
/// whole-process paired runs), rows 16-31 `ahalf` parts further. kq (pairs of k) a
/// multiple of 16. B in whole tiles too: for K chunk t, plane j's tile of columns 0-15 at
/// b + 3072 t + 1024 j (16 pair rows of 16 columns x 2 k, 64 bytes each), columns 16-31
/// 512 parts further (3% faster than pair rows holding all three planes, in that scratch
/// program; the encoder level within the noise). Tiles 0-1: A (rows 0-15, 16-31); 2-3: B
/// (columns 0-15, 16-31); 4-7: C.
template <int Rows>
RAGPP_NN_AMXBF16 inline void amx_bf16x6_block(const std::uint16_t* a, std::size_t aplane, std::size_t ahalf,
                                             const std::uint16_t* b, std::size_t kq, const float* cin,
                                             std::size_t ldin, float* c, std::size_t ldc) noexcept {
    static_assert(Rows == 16 || Rows == 32);
    if (cin) {
        _tile_loadd(4, cin, ldin);
        _tile_loadd(5, cin + 16, ldin);
        if constexpr (Rows == 32) {
            _tile_loadd(6, reinterpret_cast<const char*>(cin) + 16 * ldin, ldin);
            _tile_loadd(7, reinterpret_cast<const char*>(cin) + 16 * ldin + 64, ldin);
        }
    } else {
        _tile_zero(4);
        _tile_zero(5);
        if constexpr (Rows == 32) {
            _tile_zero(6);
            _tile_zero(7);
        }
    }
    for (std::size_t q = 0; q < kq; q += 16) {
        const std::uint16_t* bq = b + q * 192;
        const std::uint16_t* aq = a + 32 * q;
#define RAGPP_NN_LA(j)                          \
    _tile_loadd(0, aq + (j) * aplane, 64);      \
    if constexpr (Rows == 32) _tile_loadd(1, aq + (j) * aplane + ahalf, 64);
#define RAGPP_NN_LB(j)                     \
    _tile_loadd(2, bq + (j) * 1024, 64);   \
    _tile_loadd(3, bq + (j) * 1024 + 512, 64);
#define RAGPP_NN_DP              \
    _tile_dpbf16ps(4, 0, 2);     \
    _tile_dpbf16ps(5, 0, 3);     \
    if constexpr (Rows == 32) {  \
        _tile_dpbf16ps(6, 1, 2); \
        _tile_dpbf16ps(7, 1, 3); \
    }
        // a0 b0, a0 b1, a0 b2, a1 b1, a1 b0, a2 b0: 16 tile loads for 24 products.
        RAGPP_NN_LA(0) RAGPP_NN_LB(0) RAGPP_NN_DP
        RAGPP_NN_LB(1) RAGPP_NN_DP
        RAGPP_NN_LB(2) RAGPP_NN_DP
        RAGPP_NN_LA(1) RAGPP_NN_LB(1) RAGPP_NN_DP
        RAGPP_NN_LB(0) RAGPP_NN_DP
        RAGPP_NN_LA(2) RAGPP_NN_DP
#undef RAGPP_NN_LA
#undef RAGPP_NN_LB
#undef RAGPP_NN_DP
    }
    _tile_stored(4, c, ldc);
    _tile_stored(5, c + 16, ldc);
    if constexpr (Rows == 32) {
        _tile_stored(6, reinterpret_cast<char*>(c) + 16 * ldc, ldc);
        _tile_stored(7, reinterpret_cast<char*>(c) + 16 * ldc + 64, ldc);
    }
}

/// y rows [0, mr) x columns [0, nr) (`ldy` floats apart) = the sums in cs (32 floats a
/// row) + bias (32 floats), then the GELU if `gelu` (gelu512: gelu_erf's function).
RAGPP_NN_AVX512 inline void amx_bf16_finish(const float* cs, std::size_t mr, std::size_t nr, const float* bias, float* y,
                                            std::size_t ldy, bool gelu) noexcept {
    const __m512 b0 = _mm512_loadu_ps(bias), b1 = _mm512_loadu_ps(bias + 16);
    const __mmask16 m0 = tail_mask16(nr), m1 = nr > 16 ? tail_mask16(nr - 16) : static_cast<__mmask16>(0);
    for (std::size_t i = 0; i < mr; ++i) {
        __m512 v0 = _mm512_add_ps(_mm512_load_ps(cs + i * 32), b0);
        __m512 v1 = _mm512_add_ps(_mm512_load_ps(cs + i * 32 + 16), b1);
        if (gelu) {
            v0 = gelu512(v0);
            v1 = gelu512(v1);
        }
        _mm512_mask_storeu_ps(y + i * ldy, m0, v0);
        _mm512_mask_storeu_ps(y + i * ldy + 16, m1, v1);
    }
}
#endif

inline constexpr std::size_t kMRvnni256 = 6;

/// AVX-VNNI (256-bit): 6 rows x 16 columns (half a panel), 12 ymm accumulators.
RAGPP_NN_AVXVNNI inline void kernel_i8_avxvnni(const std::uint8_t* ap, const std::int8_t* bp, std::size_t kq,
                                               std::size_t ldc, std::size_t mr, std::size_t nr,
                                               const I8Epilogue& e) noexcept {
    constexpr std::size_t MR = kMRvnni256;
#define RAGPP_NN_Z(i) __m256i c##i##a = _mm256_setzero_si256(), c##i##b = _mm256_setzero_si256();
    RAGPP_NN_Z(0) RAGPP_NN_Z(1) RAGPP_NN_Z(2) RAGPP_NN_Z(3) RAGPP_NN_Z(4) RAGPP_NN_Z(5)
#undef RAGPP_NN_Z
    for (std::size_t q = 0; q < kq; ++q) {
        const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bp + q * 128));
        const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bp + q * 128 + 32));
        const std::uint8_t* a = ap + q * MR * 4;
#define RAGPP_NN_ROW(i)                                          \
    {                                                            \
        std::int32_t quad;                                       \
        std::memcpy(&quad, a + (i) * 4, 4);                      \
        const __m256i av = _mm256_set1_epi32(quad);              \
        dpbusd256(c##i##a, av, b0);                              \
        dpbusd256(c##i##b, av, b1);                              \
    }
        RAGPP_NN_ROW(0) RAGPP_NN_ROW(1) RAGPP_NN_ROW(2) RAGPP_NN_ROW(3) RAGPP_NN_ROW(4) RAGPP_NN_ROW(5)
#undef RAGPP_NN_ROW
    }
    const __m256i acc[MR][2] = {{c0a, c0b}, {c1a, c1b}, {c2a, c2b}, {c3a, c3b}, {c4a, c4b}, {c5a, c5b}};
    const __m256i cs0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(e.csum));
    const __m256i cs1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(e.csum + 8));
    const __m256i m0 = tail_mask8(nr), m1 = tail_mask8(nr > 8 ? nr - 8 : 0);
    for (std::size_t i = 0; i < MR; ++i) {
        if (i >= mr) break;
        i8_store8(_mm256_sub_epi32(acc[i][0], cs0), i, 0, m0, ldc, e);
        if (nr > 8) i8_store8(_mm256_sub_epi32(acc[i][1], cs1), i, 8, m1, ldc, e);
    }
}

inline constexpr std::size_t kMRi8avx2 = 4;

/// AVX2 without VNNI: 4 rows x 16 columns; A holds signed q (not shifted). vpsignb puts
/// q's sign on the weights, vpmaddubsw multiplies |q| (unsigned) by them: pair sums
/// <= 2 * 127 * 127, no int16 saturation; vpmaddwd with ones widens to int32.
RAGPP_NN_AVX2 inline void kernel_i8_avx2(const std::uint8_t* ap, const std::int8_t* bp, std::size_t kq,
                                         std::size_t ldc, std::size_t mr, std::size_t nr,
                                         const I8Epilogue& e) noexcept {
    constexpr std::size_t MR = kMRi8avx2;
#define RAGPP_NN_Z(i) __m256i c##i##a = _mm256_setzero_si256(), c##i##b = _mm256_setzero_si256();
    RAGPP_NN_Z(0) RAGPP_NN_Z(1) RAGPP_NN_Z(2) RAGPP_NN_Z(3)
#undef RAGPP_NN_Z
    const __m256i ones = _mm256_set1_epi16(1);
    for (std::size_t q = 0; q < kq; ++q) {
        const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bp + q * 128));
        const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bp + q * 128 + 32));
        const std::uint8_t* a = ap + q * MR * 4;
#define RAGPP_NN_ROW(i)                                                                   \
    {                                                                                     \
        std::int32_t quad;                                                                \
        std::memcpy(&quad, a + (i) * 4, 4);                                               \
        const __m256i av = _mm256_set1_epi32(quad);                                       \
        const __m256i aa = _mm256_abs_epi8(av);                                           \
        const __m256i p0 = _mm256_maddubs_epi16(aa, _mm256_sign_epi8(b0, av));            \
        const __m256i p1 = _mm256_maddubs_epi16(aa, _mm256_sign_epi8(b1, av));            \
        c##i##a = _mm256_add_epi32(c##i##a, _mm256_madd_epi16(p0, ones));                 \
        c##i##b = _mm256_add_epi32(c##i##b, _mm256_madd_epi16(p1, ones));                 \
    }
        RAGPP_NN_ROW(0) RAGPP_NN_ROW(1) RAGPP_NN_ROW(2) RAGPP_NN_ROW(3)
#undef RAGPP_NN_ROW
    }
    const __m256i acc[MR][2] = {{c0a, c0b}, {c1a, c1b}, {c2a, c2b}, {c3a, c3b}};
    const __m256i m0 = tail_mask8(nr), m1 = tail_mask8(nr > 8 ? nr - 8 : 0);
    for (std::size_t i = 0; i < MR; ++i) {
        if (i >= mr) break;
        i8_store8(acc[i][0], i, 0, m0, ldc, e);
        if (nr > 8) i8_store8(acc[i][1], i, 8, m1, ldc, e);
    }
}

/// Interleaves 12 rows of kq 4-byte quads (row r at rows + r * stride) into
/// out[(q * 12 + r) * 4 ...]: 4 x 8 transposes of 32-bit lanes.
RAGPP_NN_AVX2 inline void pack_quads12_avx(std::size_t kq, const std::uint8_t* rows, std::size_t stride,
                                           std::uint8_t* out) noexcept {
    constexpr std::size_t MR = 12;
    std::size_t q = 0;
    for (; q + 8 <= kq; q += 8) {
        for (std::size_t g = 0; g < MR; g += 4) {
            const std::uint8_t* r = rows + g * stride + q * 4;
            const __m256i r0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r));
            const __m256i r1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r + stride));
            const __m256i r2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r + 2 * stride));
            const __m256i r3 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r + 3 * stride));
            const __m256i t0 = _mm256_unpacklo_epi32(r0, r1), t1 = _mm256_unpackhi_epi32(r0, r1);
            const __m256i t2 = _mm256_unpacklo_epi32(r2, r3), t3 = _mm256_unpackhi_epi32(r2, r3);
            const __m256i u[4] = {_mm256_unpacklo_epi64(t0, t2), _mm256_unpackhi_epi64(t0, t2),
                                  _mm256_unpacklo_epi64(t1, t3), _mm256_unpackhi_epi64(t1, t3)};
            std::uint8_t* o = out + (q * MR + g) * 4;
            for (std::size_t j = 0; j < 4; ++j) {
                _mm_storeu_si128(reinterpret_cast<__m128i*>(o + j * MR * 4), _mm256_castsi256_si128(u[j]));
                _mm_storeu_si128(reinterpret_cast<__m128i*>(o + (4 + j) * MR * 4), _mm256_extracti128_si256(u[j], 1));
            }
        }
    }
    for (; q < kq; ++q)
        for (std::size_t r = 0; r < MR; ++r) std::memcpy(out + (q * MR + r) * 4, rows + r * stride + q * 4, 4);
}

/// Row quantization, bit-identical to quantize_row_scalar: the max is exact, vcvtps2dq
/// rounds to nearest even as lrint does in the default rounding mode, and x / sx is the
/// correctly rounded quotient in both. The vector paths get it without vdivps (slow)
/// by Markstein's correction: with y = RN(1 / b) and q = RN(a y), r = a - q b is exact
/// (an FMA) and RN(q + r y) = RN(a / b) (P. Markstein, IBM J. Res. Dev. 34(1), 1990;
/// Muller et al., "Handbook of Floating-Point Arithmetic", 2nd ed., sec. 4.9). It
/// needs no underflow or overflow on the way: used for max |x| in [2^-60, 2^100] (the
/// quotients that matter, >= 1/2, then have residuals far above the subnormals), with
/// the division elsewhere. Checked against vdivps on 3.2e8 random and near-half-integer
/// quotients, and by the tests against the scalar path.
RAGPP_NN_AVX512 inline __m512 div_rn512(__m512 a, __m512 b, __m512 y, bool markstein) noexcept {
    if (!markstein) return _mm512_div_ps(a, b);
    const __m512 q = _mm512_mul_ps(a, y);
    return _mm512_fmadd_ps(_mm512_fnmadd_ps(q, b, a), y, q);
}
RAGPP_NN_AVX2 inline __m256 div_rn256(__m256 a, __m256 b, __m256 y, bool markstein) noexcept {
    if (!markstein) return _mm256_div_ps(a, b);
    const __m256 q = _mm256_mul_ps(a, y);
    return _mm256_fmadd_ps(_mm256_fnmadd_ps(q, b, a), y, q);
}
inline bool markstein_ok(float max_abs) noexcept { return max_abs >= 0x1p-60f && max_abs <= 0x1p100f; }

/// One row: q[p] = lrint(x[p] / sx) ^ flip, sx = max |x| / 127 (1 for a zero row); returns
/// sx. flip 0x80 gives VNNI's unsigned bytes q + 128.
RAGPP_NN_AVX512 inline float quantize_row_avx512(const float* x, std::size_t k, std::uint8_t* q,
                                                 std::uint8_t flip) noexcept {
    __m512 mx = _mm512_setzero_ps();
    std::size_t p = 0;
    for (; p + 16 <= k; p += 16) mx = _mm512_max_ps(mx, _mm512_abs_ps(_mm512_loadu_ps(x + p)));
    if (p < k) mx = _mm512_max_ps(mx, _mm512_abs_ps(_mm512_maskz_loadu_ps(tail_mask16(k - p), x + p)));
    const float m = _mm512_reduce_max_ps(mx);
    const float sx = m > 0 ? m / 127.0f : 1.0f;
    const __m512 s = _mm512_set1_ps(sx), y = _mm512_set1_ps(1.0f / sx);
    const bool mk = markstein_ok(m);
    const __m128i fl = _mm_set1_epi8(static_cast<char>(flip));
    for (p = 0; p + 16 <= k; p += 16) {
        const __m512i v = _mm512_cvtps_epi32(div_rn512(_mm512_loadu_ps(x + p), s, y, mk));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(q + p), _mm_xor_si128(_mm512_cvtsepi32_epi8(v), fl));
    }
    if (p < k) {
        const __mmask16 t = tail_mask16(k - p);
        const __m512i v = _mm512_cvtps_epi32(div_rn512(_mm512_maskz_loadu_ps(t, x + p), s, y, mk));
        _mm_mask_storeu_epi8(q + p, t, _mm_xor_si128(_mm512_cvtsepi32_epi8(v), fl));
    }
    return sx;
}

RAGPP_NN_AVX2 inline float quantize_row_avx2(const float* x, std::size_t k, std::uint8_t* q, std::uint8_t flip) noexcept {
    const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
    __m256 mx = _mm256_setzero_ps();
    std::size_t p = 0;
    for (; p + 8 <= k; p += 8) mx = _mm256_max_ps(mx, _mm256_and_ps(absmask, _mm256_loadu_ps(x + p)));
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(mx), _mm256_extractf128_ps(mx, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 0x55));
    float m = _mm_cvtss_f32(h);
    for (std::size_t r = p; r < k; ++r) m = std::max(m, std::fabs(x[r]));
    const float sx = m > 0 ? m / 127.0f : 1.0f;
    const __m256 s = _mm256_set1_ps(sx), y = _mm256_set1_ps(1.0f / sx);
    const bool mk = markstein_ok(m);
    alignas(32) std::int32_t tmp[8];
    for (p = 0; p + 8 <= k; p += 8) {
        _mm256_store_si256(reinterpret_cast<__m256i*>(tmp),
                           _mm256_cvtps_epi32(div_rn256(_mm256_loadu_ps(x + p), s, y, mk)));
        for (std::size_t r = 0; r < 8; ++r) q[p + r] = static_cast<std::uint8_t>(tmp[r] ^ flip);
    }
    for (; p < k; ++p) q[p] = static_cast<std::uint8_t>(std::lrint(x[p] / sx) ^ flip);
    return sx;
}

// --- vectorized element functions -------------------------------------------------------
/// e^r for |r| <= ln2 / 2: the Taylor polynomial of degree 7 by Estrin's scheme.
RAGPP_NN_AVX512 inline __m512 exp_poly512(__m512 r) noexcept {
    const __m512 r2 = _mm512_mul_ps(r, r), r4 = _mm512_mul_ps(r2, r2);
    const __m512 a = _mm512_fmadd_ps(r, _mm512_set1_ps(1.0f), _mm512_set1_ps(1.0f));
    const __m512 b = _mm512_fmadd_ps(r, _mm512_set1_ps(1.0f / 6.0f), _mm512_set1_ps(0.5f));
    const __m512 c = _mm512_fmadd_ps(r, _mm512_set1_ps(1.0f / 120.0f), _mm512_set1_ps(1.0f / 24.0f));
    const __m512 d = _mm512_fmadd_ps(r, _mm512_set1_ps(1.0f / 5040.0f), _mm512_set1_ps(1.0f / 720.0f));
    return _mm512_fmadd_ps(_mm512_fmadd_ps(d, r2, c), r4, _mm512_fmadd_ps(b, r2, a));
}
/// NonPositive: x <= 0 known (attention's s - max), the clamp above skipped (the same floats).
template <bool NonPositive = false>
RAGPP_NN_AVX512 inline __m512 exp512(__m512 x) noexcept {
    // Below kExpLo the result is subnormal or 0: vscalefps produces it (down to 2^-150).
    x = _mm512_max_ps(x, _mm512_set1_ps(-104.0f));
    if constexpr (!NonPositive) x = _mm512_min_ps(x, _mm512_set1_ps(kExpHi));
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(kLog2e)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Hi), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Lo), r);
    const __m512 p = exp_poly512(r);
    return _mm512_scalef_ps(p, n);
}

/// e^r for |r| <= ln2 / 2: the Taylor polynomial of degree 7 by Estrin's scheme.
RAGPP_NN_AVX2 inline __m256 exp_poly256(__m256 r) noexcept {
    const __m256 r2 = _mm256_mul_ps(r, r), r4 = _mm256_mul_ps(r2, r2);
    const __m256 a = _mm256_fmadd_ps(r, _mm256_set1_ps(1.0f), _mm256_set1_ps(1.0f));
    const __m256 b = _mm256_fmadd_ps(r, _mm256_set1_ps(1.0f / 6.0f), _mm256_set1_ps(0.5f));
    const __m256 c = _mm256_fmadd_ps(r, _mm256_set1_ps(1.0f / 120.0f), _mm256_set1_ps(1.0f / 24.0f));
    const __m256 d = _mm256_fmadd_ps(r, _mm256_set1_ps(1.0f / 5040.0f), _mm256_set1_ps(1.0f / 720.0f));
    return _mm256_fmadd_ps(_mm256_fmadd_ps(d, r2, c), r4, _mm256_fmadd_ps(b, r2, a));
}
RAGPP_NN_AVX2 inline __m256 exp256(__m256 x) noexcept {
    const __m256 under = _mm256_cmp_ps(x, _mm256_set1_ps(kExpLo), _CMP_LT_OQ);
    x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(kExpLo)), _mm256_set1_ps(kExpHi));
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Hi), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Lo), r);
    const __m256 p = exp_poly256(r);
    // 2^n for n in [-126, 128]: split in two halves so n = 128 (x near kExpHi) stays finite.
    const __m256i ni = _mm256_cvtps_epi32(n);
    const __m256i h1 = _mm256_srai_epi32(ni, 1), h2 = _mm256_sub_epi32(ni, h1);
    const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(h1, _mm256_set1_epi32(127)), 23));
    const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(h2, _mm256_set1_epi32(127)), 23));
    return _mm256_andnot_ps(under, _mm256_mul_ps(_mm256_mul_ps(p, s1), s2));
}

RAGPP_NN_AVX512 inline __m512 gelu512(__m512 x) noexcept {
    const __m512 t = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-kGeluClamp)), _mm512_set1_ps(kGeluClamp));
    const __m512 s = _mm512_mul_ps(t, t);
    __m512 p = _mm512_set1_ps(kGeluP[5]), q = _mm512_set1_ps(kGeluQ[5]);
    for (int i = 4; i >= 0; --i) {  // two independent Horner chains
        p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(kGeluP[i]));
        q = _mm512_fmadd_ps(q, s, _mm512_set1_ps(kGeluQ[i]));
    }
    // 1 / q by vrcp14ps and one Newton step (relative error ~2^-28; vdivps is slow on Intel).
    const __m512 r0 = _mm512_rcp14_ps(q);
    const __m512 inv = _mm512_mul_ps(r0, _mm512_fnmadd_ps(q, r0, _mm512_set1_ps(2.0f)));
    const __m512 r = _mm512_mul_ps(_mm512_mul_ps(t, p), inv);
    // Phi in [0, 1]: at the clamp the compiler may fuse the + 0.5 with the product above, and
    // 0.5 + r unrounded falls a few 1e-9 outside.
    const __m512 phi = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(r, _mm512_set1_ps(0.5f)), _mm512_setzero_ps()),
                                     _mm512_set1_ps(1.0f));
    return _mm512_mul_ps(x, phi);
}

RAGPP_NN_AVX2 inline __m256 gelu256(__m256 x) noexcept {
    const __m256 t = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-kGeluClamp)), _mm256_set1_ps(kGeluClamp));
    const __m256 s = _mm256_mul_ps(t, t);
    __m256 p = _mm256_set1_ps(kGeluP[5]), q = _mm256_set1_ps(kGeluQ[5]);
    for (int i = 4; i >= 0; --i) {
        p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(kGeluP[i]));
        q = _mm256_fmadd_ps(q, s, _mm256_set1_ps(kGeluQ[i]));
    }
    // vrcpps has 12 bits (one Newton step leaves ~1e-7): the division.
    const __m256 r = _mm256_div_ps(_mm256_mul_ps(t, p), q);
    const __m256 phi = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(r, _mm256_set1_ps(0.5f)), _mm256_setzero_ps()),
                                     _mm256_set1_ps(1.0f));
    return _mm256_mul_ps(x, phi);
}

RAGPP_NN_AVX512 inline __m512 tanh512(__m512 x) noexcept {
    const __m512 ax = _mm512_abs_ps(x);
    const __m512 x2 = _mm512_mul_ps(x, x);
    __m512 p = _mm512_set1_ps(kTanh[7]);
    for (int i = 6; i >= 1; --i) p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(kTanh[i]));
    const __m512 small = _mm512_fmadd_ps(_mm512_mul_ps(p, x2), x, x);
    const __m512 e = exp512(_mm512_add_ps(ax, ax));
    const __m512 big = _mm512_sub_ps(_mm512_set1_ps(1.0f),
                                     _mm512_div_ps(_mm512_set1_ps(2.0f), _mm512_add_ps(e, _mm512_set1_ps(1.0f))));
    const __m512 bigs = _mm512_or_ps(big, _mm512_and_ps(x, _mm512_set1_ps(-0.0f)));  // sign of x
    const __mmask16 is_small = _mm512_cmp_ps_mask(ax, _mm512_set1_ps(kTanhSmall), _CMP_LT_OQ);
    return _mm512_mask_blend_ps(is_small, bigs, small);
}

RAGPP_NN_AVX2 inline __m256 tanh256(__m256 x) noexcept {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256 ax = _mm256_andnot_ps(sign, x);
    const __m256 x2 = _mm256_mul_ps(x, x);
    __m256 p = _mm256_set1_ps(kTanh[7]);
    for (int i = 6; i >= 1; --i) p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(kTanh[i]));
    const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(p, x2), x, x);
    const __m256 e = exp256(_mm256_add_ps(ax, ax));
    const __m256 big = _mm256_sub_ps(_mm256_set1_ps(1.0f),
                                     _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(e, _mm256_set1_ps(1.0f))));
    const __m256 bigs = _mm256_or_ps(big, _mm256_and_ps(x, sign));
    const __m256 is_small = _mm256_cmp_ps(ax, _mm256_set1_ps(kTanhSmall), _CMP_LT_OQ);
    return _mm256_blendv_ps(bigs, small, is_small);
}

RAGPP_NN_AVX512 inline void gelu_avx512(float* x, std::size_t n) noexcept {
    std::size_t i = 0;
    for (; i + 32 <= n; i += 32) {  // two independent vectors per step
        const __m512 a = gelu512(_mm512_loadu_ps(x + i)), b = gelu512(_mm512_loadu_ps(x + i + 16));
        _mm512_storeu_ps(x + i, a);
        _mm512_storeu_ps(x + i + 16, b);
    }
    for (; i < n; i += 16) {
        const __mmask16 m = tail_mask16(n - i);
        _mm512_mask_storeu_ps(x + i, m, gelu512(_mm512_maskz_loadu_ps(m, x + i)));
    }
}
RAGPP_NN_AVX2 inline void gelu_avx2(float* x, std::size_t n) noexcept {
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, gelu256(_mm256_loadu_ps(x + i)));
    if (i < n) {
        const __m256i m = tail_mask8(n - i);
        _mm256_maskstore_ps(x + i, m, gelu256(_mm256_maskload_ps(x + i, m)));
    }
}
RAGPP_NN_AVX512 inline void tanh_avx512(float* x, std::size_t n) noexcept {
    for (std::size_t i = 0; i < n; i += 16) {
        const __mmask16 m = tail_mask16(n - i);
        _mm512_mask_storeu_ps(x + i, m, tanh512(_mm512_maskz_loadu_ps(m, x + i)));
    }
}
RAGPP_NN_AVX2 inline void tanh_avx2(float* x, std::size_t n) noexcept {
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, tanh256(_mm256_loadu_ps(x + i)));
    if (i < n) {
        const __m256i m = tail_mask8(n - i);
        _mm256_maskstore_ps(x + i, m, tanh256(_mm256_maskload_ps(x + i, m)));
    }
}

RAGPP_NN_AVX512 inline void softmax_avx512(float* x, std::size_t n) noexcept {
    if (n == 0) return;
    __m512 mx = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
    for (std::size_t i = 0; i < n; i += 16)
        mx = _mm512_max_ps(mx, _mm512_mask_loadu_ps(mx, tail_mask16(n - i), x + i));
    const __m512 m = _mm512_set1_ps(_mm512_reduce_max_ps(mx));
    __m512 s = _mm512_setzero_ps();
    for (std::size_t i = 0; i < n; i += 16) {
        const __mmask16 t = tail_mask16(n - i);
        const __m512 e = exp512(_mm512_sub_ps(_mm512_maskz_loadu_ps(t, x + i), m));
        s = _mm512_mask_add_ps(s, t, s, e);
        _mm512_mask_storeu_ps(x + i, t, e);
    }
    const __m512 inv = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(s));  // x * (1 / s): within 1.5 ulp of x / s
    for (std::size_t i = 0; i < n; i += 16) {
        const __mmask16 t = tail_mask16(n - i);
        _mm512_mask_storeu_ps(x + i, t, _mm512_mul_ps(_mm512_maskz_loadu_ps(t, x + i), inv));
    }
}

/// Attention over the heads of one sequence (see nn::attention), each head computed
/// transposed so that every step is a product of the micro-kernel or a pass on whole
/// vectors, without horizontal reductions:
/// - K, V and Q of all heads are packed first, row by row across the heads (the
///   sequence's rows are read in order, once): K as the micro-kernel's A (12 keys x d),
///   V as B panels (32 of its columns x every key), Q as B panels (32 queries x d);
/// - per head, for blocks of up to 96 queries (3 panels of 32): S^T = K Q^T * scale, keys
///   x queries, row-major, the kernel keeping each query's maximum as it stores S^T;
/// - the softmax of a query is a column of S^T: exp(s - max) and the sums run down the
///   keys on whole vectors of queries;
/// - ctx = P V with P read in place from S^T (12 queries = 12 adjacent columns, every key),
///   each row scaled by its query's 1 / sum in the kernel's epilogue.
/// The sums run in the order of the two-pass path (q . k over d, then over the keys); the
/// softmax's sum is added in another order, and its 1 / sum multiplies the row of the
/// product instead of each weight (a difference of an ulp or two).
RAGPP_NN_AVX512 inline void attention_avx512(std::size_t n, std::size_t heads, std::size_t d, float scale,
                                             const float* q, const float* k, const float* v, std::size_t ld,
                                             float* ctx, std::size_t ldc) noexcept {
    constexpr std::size_t MR = kMR512, QB = 3 * kNR;
    const std::size_t kpanels = (n + MR - 1) / MR, vpanels = (d + kNR - 1) / kNR, qpanels = (n + kNR - 1) / kNR;
    const std::size_t kstep = kpanels * MR * d, vstep = vpanels * kNR * n, qstep = qpanels * kNR * d;
    float* kp = scratch<float, 5>(heads * kstep);
    float* vp = scratch<float, 6>(heads * vstep);
    float* qp = scratch<float, 7>(heads * qstep);
    float* st = scratch<float, 8>(n * QB + 16);  // + 16: P's last micro-panel reads past its columns
    for (std::size_t kb = 0; kb < kpanels; ++kb)
        for (std::size_t h = 0; h < heads; ++h)
            pack_a_avx<MR>(std::min(MR, n - kb * MR), d, k + kb * MR * ld + h * d, ld, kp + h * kstep + kb * MR * d);
    // V as pack_b lays it out, but row by row across the heads (pack_b per head, reading
    // each head's columns down the rows: 2% slower for the whole attention at 128 x 12 x 32),
    // a panel's row by two vector copies (by memcpy and a zeroing loop: 16 us of 250 a
    // 128-token sequence, 12 heads of 32, on a Sapphire Rapids core).
    for (std::size_t r = 0; r < n; ++r)
        for (std::size_t h = 0; h < heads; ++h)
            for (std::size_t jv = 0; jv < vpanels; ++jv) {
                const std::size_t nc = std::min(kNR, d - jv * kNR);
                const __mmask16 m0 = tail_mask16(nc), m1 = nc > 16 ? tail_mask16(nc - 16) : static_cast<__mmask16>(0);
                const float* src = v + r * ld + h * d + jv * kNR;
                float* o = vp + h * vstep + (jv * n + r) * kNR;
                _mm512_storeu_ps(o, _mm512_maskz_loadu_ps(m0, src));
                _mm512_storeu_ps(o + 16, _mm512_maskz_loadu_ps(m1, src + 16));
            }
    for (std::size_t j = 0; j < qpanels; ++j)
        for (std::size_t h = 0; h < heads; ++h)
            pack_a_avx<kNR>(std::min(kNR, n - j * kNR), d, q + j * kNR * ld + h * d, ld, qp + h * qstep + j * kNR * d);
    alignas(64) float mx[QB], inv[QB];
    for (std::size_t h = 0; h < heads; ++h) {
        for (std::size_t q0 = 0; q0 < n; q0 += QB) {
            const std::size_t nb = std::min(QB, n - q0), blk = (nb + kNR - 1) / kNR, w = blk * kNR, vecs = w / 16;
            for (std::size_t c = 0; c < w; ++c) mx[c] = -std::numeric_limits<float>::infinity();
            Epilogue scores;
            scores.alpha = scale;
            for (std::size_t kb = 0; kb < kpanels; ++kb)
                for (std::size_t j = 0; j < blk; ++j) {
                    scores.col_max = mx + j * kNR;
                    kernel_f32_avx512(kp + h * kstep + kb * MR * d, qp + h * qstep + (q0 / kNR + j) * kNR * d, d,
                                      st + kb * MR * w + j * kNR, w, std::min(MR, n - kb * MR), kNR, scores);
                }
            // A panel of 32 queries at a time: its two sums and maxima stay in registers.
            for (std::size_t c = 0; c < vecs; c += 2) {
                __m512 sum0 = _mm512_setzero_ps(), sum1 = sum0;
                const __m512 m0 = _mm512_load_ps(mx + 16 * c), m1 = _mm512_load_ps(mx + 16 * c + 16);
                for (std::size_t r = 0; r < n; ++r) {
                    float* row = st + r * w + 16 * c;
                    const __m512 e0 = exp512<true>(_mm512_sub_ps(_mm512_loadu_ps(row), m0));
                    const __m512 e1 = exp512<true>(_mm512_sub_ps(_mm512_loadu_ps(row + 16), m1));
                    sum0 = _mm512_add_ps(sum0, e0);
                    sum1 = _mm512_add_ps(sum1, e1);
                    _mm512_storeu_ps(row, e0);
                    _mm512_storeu_ps(row + 16, e1);
                }
                _mm512_store_ps(inv + 16 * c, _mm512_div_ps(_mm512_set1_ps(1.0f), sum0));
                _mm512_store_ps(inv + 16 * c + 16, _mm512_div_ps(_mm512_set1_ps(1.0f), sum1));
            }
            Epilogue product;
            product.a_stride = w;
            for (std::size_t i0 = 0; i0 < nb; i0 += MR) {
                product.row_scale = inv + i0;
                for (std::size_t jv = 0; jv < vpanels; ++jv)
                    kernel_f32_avx512(st + i0, vp + h * vstep + jv * kNR * n, n, ctx + (q0 + i0) * ldc + h * d + jv * kNR,
                                      ldc, std::min(MR, nb - i0), std::min(kNR, d - jv * kNR), product);
            }
        }
    }
}

RAGPP_NN_AVX2 inline float hsum256(__m256 v) noexcept {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 0x55));
    return _mm_cvtss_f32(s);
}
RAGPP_NN_AVX2 inline double hsum256d(__m256d v) noexcept {
    __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    s = _mm_add_sd(s, _mm_unpackhi_pd(s, s));
    return _mm_cvtsd_f64(s);
}

RAGPP_NN_AVX2 inline void softmax_avx2(float* x, std::size_t n) noexcept {
    if (n == 0) return;
    float mxs = *std::max_element(x, x + n);
    const __m256 m = _mm256_set1_ps(mxs);
    __m256 s = _mm256_setzero_ps();
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 e = exp256(_mm256_sub_ps(_mm256_loadu_ps(x + i), m));
        s = _mm256_add_ps(s, e);
        _mm256_storeu_ps(x + i, e);
    }
    if (i < n) {
        const __m256i t = tail_mask8(n - i);
        const __m256 e = _mm256_and_ps(_mm256_castsi256_ps(t), exp256(_mm256_sub_ps(_mm256_maskload_ps(x + i, t), m)));
        s = _mm256_add_ps(s, e);
        _mm256_maskstore_ps(x + i, t, e);
    }
    const float inv = 1.0f / hsum256(s);
    const __m256 invv = _mm256_set1_ps(inv);
    for (i = 0; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), invv));
    for (; i < n; ++i) x[i] *= inv;
}

/// LayerNorm of one row, y <- LN(y + add) when `add` (the residual stream: the sum
/// rounded to float first, as torch adds it), else y <- LN(y). Mean and variance in
/// double, in one pass over the row: the sums of d = v - v[0] and of d^2 (shifted by the
/// first value, so that no large mean cancels in the variance: var = E[d^2] - E[d]^2,
/// each term exact in double to 2^-53 of E[d^2]); the scalar oracle takes two passes.
/// Two chains a sum, four in all. In the encoder (`bench_transformer`'s add & LayerNorm
/// stages, MiniLM-L6, 2026-12-06) 0.29 ms a 128-token text against 0.42 for the add, then
/// the three passes of the earlier kernel.
template <bool Add>
RAGPP_NN_AVX512 inline void layer_norm_avx512(float* y, const float* add, std::size_t n, const float* gamma,
                                              const float* beta, float eps) noexcept {
    if (n == 0) return;
    const double first = static_cast<double>(Add ? y[0] + add[0] : y[0]);
    const __m512d shift = _mm512_set1_pd(first);
    __m512d s0 = _mm512_setzero_pd(), s1 = s0, q0 = s0, q1 = s0;
    for (std::size_t i = 0; i < n; i += 16) {
        const __mmask16 t = tail_mask16(n - i);
        __m512 v = _mm512_maskz_loadu_ps(t, y + i);
        if constexpr (Add) {
            v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(t, add + i));
            _mm512_mask_storeu_ps(y + i, t, v);
        }
        const __m512d d0 = _mm512_maskz_sub_pd(static_cast<__mmask8>(t & 0xFF), _mm512_cvtps_pd(_mm512_castps512_ps256(v)), shift);
        const __m512d d1 = _mm512_maskz_sub_pd(static_cast<__mmask8>(t >> 8),
            _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))), shift);
        s0 = _mm512_add_pd(s0, d0);
        s1 = _mm512_add_pd(s1, d1);
        q0 = _mm512_fmadd_pd(d0, d0, q0);
        q1 = _mm512_fmadd_pd(d1, d1, q1);
    }
    const double dn = static_cast<double>(n);
    const double ds = _mm512_reduce_add_pd(_mm512_add_pd(s0, s1)) / dn;
    const double var = std::max(0.0, _mm512_reduce_add_pd(_mm512_add_pd(q0, q1)) / dn - ds * ds);
    const __m512d mv = _mm512_set1_pd(first + ds);
    const __m512 inv = _mm512_set1_ps(static_cast<float>(1.0 / std::sqrt(var + eps)));
    for (std::size_t i = 0; i < n; i += 16) {
        const __mmask16 t = tail_mask16(n - i);
        const __m512 v = _mm512_maskz_loadu_ps(t, y + i);
        const __m256 lo = _mm512_cvtpd_ps(_mm512_sub_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(v)), mv));
        const __m256 hi = _mm512_cvtpd_ps(
            _mm512_sub_pd(_mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))), mv));
        const __m512 d = _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(lo)), _mm256_castps_pd(hi), 1));
        const __m512 r = _mm512_mul_ps(_mm512_mul_ps(d, inv), _mm512_maskz_loadu_ps(t, gamma + i));
        _mm512_mask_storeu_ps(y + i, t, _mm512_add_ps(r, _mm512_maskz_loadu_ps(t, beta + i)));
    }
}

/// The same on AVX2 (four doubles a vector, two chains a sum).
template <bool Add>
RAGPP_NN_AVX2 inline void layer_norm_avx2(float* y, const float* add, std::size_t n, const float* gamma,
                                          const float* beta, float eps) noexcept {
    if (n == 0) return;
    const double first = static_cast<double>(Add ? y[0] + add[0] : y[0]);
    const __m256d shift = _mm256_set1_pd(first);
    __m256d s0 = _mm256_setzero_pd(), s1 = s0, q0 = s0, q1 = s0;
    // The tails count from 0 (i < n after a loop with constant n makes GCC 12 warn,
    // falsely, -Waggressive-loop-optimizations).
    const std::size_t full = n / 8 * 8, tail = n - full;
    for (std::size_t i = 0; i < full; i += 8) {
        __m256 v = _mm256_loadu_ps(y + i);
        if constexpr (Add) {
            v = _mm256_add_ps(v, _mm256_loadu_ps(add + i));
            _mm256_storeu_ps(y + i, v);
        }
        const __m256d d0 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), shift);
        const __m256d d1 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)), shift);
        s0 = _mm256_add_pd(s0, d0);
        s1 = _mm256_add_pd(s1, d1);
        q0 = _mm256_fmadd_pd(d0, d0, q0);
        q1 = _mm256_fmadd_pd(d1, d1, q1);
    }
    double sum = hsum256d(_mm256_add_pd(s0, s1)), sq = hsum256d(_mm256_add_pd(q0, q1));
    for (std::size_t t = 0; t < tail; ++t) {
        const std::size_t j = full + t;
        if constexpr (Add) y[j] += add[j];
        const double d = static_cast<double>(y[j]) - first;
        sum += d;
        sq += d * d;
    }
    const double dn = static_cast<double>(n);
    const double ds = sum / dn, mean = first + ds;
    const double var = std::max(0.0, sq / dn - ds * ds);
    const float invs = static_cast<float>(1.0 / std::sqrt(var + eps));
    const __m256d mv = _mm256_set1_pd(mean);
    const __m256 inv = _mm256_set1_ps(invs);
    for (std::size_t i = 0; i < full; i += 8) {
        const __m256 v = _mm256_loadu_ps(y + i);
        const __m128 lo = _mm256_cvtpd_ps(_mm256_sub_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), mv));
        const __m128 hi = _mm256_cvtpd_ps(_mm256_sub_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)), mv));
        const __m256 d = _mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1);
        _mm256_storeu_ps(y + i, _mm256_add_ps(_mm256_mul_ps(_mm256_mul_ps(d, inv), _mm256_loadu_ps(gamma + i)),
                                              _mm256_loadu_ps(beta + i)));
    }
    for (std::size_t t = 0; t < tail; ++t) {
        const std::size_t j = full + t;
        y[j] = static_cast<float>(y[j] - mean) * invs * gamma[j] + beta[j];
    }
}

#undef RAGPP_NN_AVX512
#undef RAGPP_NN_AVX512VNNI
#undef RAGPP_NN_AVX2
#undef RAGPP_NN_AVXVNNI
}  // namespace impl
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif  // RAGPP_NN_X86

namespace impl {

// Blocking of the fp32 driver. K blocks of at most 192 (kKC) on Intel cores: tuned on a
// Sapphire Rapids core (48 KB L1d, 2 MB L2), where a B micro-panel (192 x 32 floats,
// 24 KB) and an A micro-panel (12 x 192, 9 KB) stay in L1 together (the hot micro-kernel
// measured 8% faster than at 384). On AMD cores (Zen 4: a 512-bit FMA every cycle, half
// the rate per cycle of Sapphire Rapids, so half the bandwidth from L2 to keep it fed)
// K is not blocked up to 1536 (kKCwide): the B micro-panel streams from L2 and each C
// tile is written once; on an EPYC (2026-12-06, `bench_nn --k-block 192` and `1536`, the
// three MiniLM shapes at 4096 rows, two runs each) 101-110 against 99-106 GFLOP/s.
// Blocks of MC = 192 rows (16 micro-panels; all of their K packed, 288 KB at K = 384,
// 1.2 MB at 1536, in L2) sweep all of N, each B micro-panel serving the 16 in turn while
// the next one is asked into L2 (PanelPrefetch). With the prefetch, on the Sapphire Rapids
// core (2026-12-06, bench_transformer float32 at one thread, four interleaved rounds of
// builds with the constant changed, medians): MC 96 51.3 texts/s, 192 54.2, 384 55.2
// (within the rounds' spread of 192, and twice the packed rows); without it (MC 96)
// 48.1. On the EPYC, before the prefetch, 48 / 144 / 192 measured within 1%.
inline constexpr std::size_t kKC = 192, kKCwide = 1536, kMC = 192;
// Twice the rows where K is short (K <= 384: the packed rows 576 KB, in L2 beside the
// weights streaming through): each B micro-panel, read from L3, then serves 32 micro-panels
// of rows instead of 16 (MiniLM's QKV and attention output on a group of 384 rows; on the
// Sapphire Rapids core, 2026-12-07, the driver alone on those shapes with six layers'
// weights 1 to 4% faster; bench_transformer's stage times in five rounds in turns with a
// build of MC 192: QKV 4.37 against 4.58 ms a text, attention output 1.51 against 1.54;
// the whole encoder within that machine's noise). At K = 1536 the rows of 384 would be
// 2.4 MB, past L2.
inline constexpr std::size_t kMCshortK = 384, kShortK = 384;
// The AMX-BF16 path's K block (LinearF32::run_amx), in parts: the rows' three planes
// (mc x kc x 6 bytes) in L2, a B panel's block (kc x 192 bytes) beside them.
inline constexpr std::size_t kKCbf16 = 768;
[[nodiscard]] constexpr std::size_t f32_row_block(std::size_t k) noexcept { return k <= kShortK ? kMCshortK : kMC; }
// Rows per block of the int8 driver (quantized once, then swept over all of N): 192
// (K = 1536: 288 KB of packed rows, in L2); on the EPYC about 2% faster than 48 and 96 on
// the MiniLM shapes at 4096 rows, 384 and 768 within 1% of it (one-off builds with the
// constant changed; end to end the difference was within the noise).
inline constexpr std::size_t kMCi8 = 192;

/// The K block of this CPU (see kKC).
[[nodiscard]] inline std::size_t default_k_block() noexcept { return cpu_features().amd ? kKCwide : kKC; }

/// C = alpha * A * Bpacked + beta * C (+ bias) on the best kernel of `isa`; Bpacked as
/// pack_b makes it. Scalar: a plain loop over the packed panels.
/// `k_block`: the K block (0: default_k_block()). `gelu`: C = GELU(C) at the end (the
/// vector kernels in their epilogue; the scalar path by gelu_scalar). k > 0 with gelu.
inline void gemm_packed(Isa isa, std::size_t m, std::size_t n, std::size_t k, float alpha, const float* a,
                        std::size_t lda, const float* bp, float beta, float* c, std::size_t ldc, const float* bias,
                        std::size_t k_block = 0, bool gelu = false) {
    isa = usable(isa);
    if (k_block == 0) k_block = default_k_block();
#if RAGPP_NN_X86
    if (is_avx512(isa)) {
        gemm_driver<kMR512>(m, n, k, alpha, a, lda, bp, k, beta, c, ldc, bias, &kernel_f32_avx512, kNR, k_block, f32_row_block(k),
                            &pack_a12_avx, gelu);
        return;
    }
    if (is_avx2(isa)) {
        gemm_driver<kMR256>(m, n, k, alpha, a, lda, bp, k, beta, c, ldc, bias, &kernel_f32_avx2, 16, k_block, f32_row_block(k),
                            &pack_a<kMR256>, gelu);
        return;
    }
#endif
    const std::size_t np = (n + kNR - 1) / kNR;
    for (std::size_t i = 0; i < m; ++i) {
        const float* ai = a + i * lda;
        for (std::size_t j = 0; j < np; ++j) {
            float acc[kNR] = {};
            const float* pj = bp + j * k * kNR;
            for (std::size_t p = 0; p < k; ++p) {
                const float av = ai[p];
                for (std::size_t col = 0; col < kNR; ++col) acc[col] += av * pj[p * kNR + col];
            }
            const std::size_t c0 = j * kNR, nc = std::min(kNR, n - c0);
            for (std::size_t col = 0; col < nc; ++col) {
                float& out = c[i * ldc + c0 + col];
                out = alpha * acc[col] + (beta == 0.0f ? 0.0f : beta * out) + (bias ? bias[c0 + col] : 0.0f);
                if (gelu) gelu_scalar(&out, 1);
            }
        }
    }
}

}  // namespace impl

void gelu_erf(float* x, std::size_t n, Isa isa);

/// Whether LinearF32 runs its products on the AMX-BF16 tiles on the path `isa` (already
/// usable): Isa::amx on a CPU with AMX-BF16 (every AMX CPU so far has it).
[[nodiscard]] inline bool f32_on_amx(Isa isa) noexcept {
#if RAGPP_NN_X86 && defined(__linux__)
    return isa == Isa::amx && cpu_features().amx_bf16;
#else
    (void)isa;
    return false;
#endif
}

/// y = x W^T + b for a torch-layout weight matrix.
///
/// The weights are kept in the one layout the path they are built for reads (by default
/// this CPU's): float32 panels for the FMA kernels, or, where f32_on_amx, their exact
/// bfloat16 parts for the AMX tiles (six products per multiply: split_bf16x3's comment;
/// 6 bytes a weight instead of 4, the float32 panels not kept). A call on a path of the
/// other layout converts the weights for that call: exact both ways, but slow.
class LinearF32 {
public:
    LinearF32() = default;
    /// `weights`: n_out rows of n_in floats; `bias`: n_out floats or nullptr (no bias).
    /// `isa`: the path whose layout is kept (the one forward() without an Isa runs).
    LinearF32(const float* weights, std::size_t n_out, std::size_t n_in, const float* bias, Isa isa = active_isa())
        : n_out_(n_out), n_in_(n_in), kpad_((n_in + 31) / 32 * 32), b_(panels() * impl::kNR, 0.0f) {
        // W^T viewed as B[k = n_in][n = n_out]: element (p, o) at weights[o * n_in + p].
        if (n_out > 0 && n_in > 0) {
            if (f32_on_amx(usable(isa))) {
                wb_ = pack_bf16([&](std::size_t o, std::size_t p) { return weights[o * n_in + p]; });
            } else {
                w_.resize(panels() * impl::kNR * n_in);
                impl::pack_b(n_out, n_in, weights, 1, n_in, w_.data());
            }
        }
        if (bias) std::copy(bias, bias + n_out, b_.begin());
    }

    [[nodiscard]] std::size_t n_out() const noexcept { return n_out_; }
    [[nodiscard]] std::size_t n_in() const noexcept { return n_in_; }

    /// x: m rows of n_in floats (contiguous); y: m rows of n_out floats (contiguous).
    void forward(const float* x, std::size_t m, float* y) const { forward(x, m, y, active_isa()); }
    /// The same on the code path `isa` (tests; an unsupported one falls back), with K in
    /// blocks of `k_block` (0: this CPU's; tests run the others; the AMX path's blocks
    /// are its own, and do not change its sums).
    void forward(const float* x, std::size_t m, float* y, Isa isa, std::size_t k_block = 0) const {
        run(x, m, y, isa, k_block, false);
    }
    /// y = GELU(x W^T + b): forward() then gelu_erf() in one pass (the GELU applied to each
    /// tile of y as it is computed, the same function: the same floats).
    void forward_gelu(const float* x, std::size_t m, float* y) const { forward_gelu(x, m, y, active_isa()); }
    void forward_gelu(const float* x, std::size_t m, float* y, Isa isa, std::size_t k_block = 0) const;

private:
    [[nodiscard]] std::size_t panels() const noexcept { return (n_out_ + impl::kNR - 1) / impl::kNR; }

    /// Where weight (o, p)'s part 0 is in wb_ (part j: 1024 j further): per panel of 32
    /// columns, per chunk of 32 k (kpad_ / 32 of them, zeros past n_in), per plane, per half
    /// of the columns, a whole tile: 16 pair rows of 16 columns x 2 k
    /// ([panel][chunk][plane][half][pair][column][k & 1]: amx_bf16x6_block's B).
    [[nodiscard]] std::size_t bf16_at(std::size_t o, std::size_t p) const noexcept {
        return ((o / impl::kNR) * (kpad_ / 32) + p / 32) * 3072 + (o % 32) / 16 * 512 + (p % 32) / 2 * 32 + (o % 16) * 2 +
               p % 2;
    }

    /// The bfloat16 parts of W^T (weight(o, p) = W[o][p]) at bf16_at.
    template <class Weight>
    [[nodiscard]] AlignedVector<std::uint16_t> pack_bf16(Weight weight) const {
        AlignedVector<std::uint16_t> out(panels() * kpad_ * 96, 0);
        for (std::size_t o = 0; o < n_out_; ++o)
            for (std::size_t p = 0; p < n_in_; ++p) {
                const float w = weight(o, p);
                std::uint32_t bits;
                std::memcpy(&bits, &w, 4);
                std::uint16_t* e = out.data() + bf16_at(o, p);
                for (int j = 0; j < 3; ++j) {
                    const std::uint32_t part = bits & 0xFFFF0000U;
                    e[j * 1024] = static_cast<std::uint16_t>(part >> 16);
                    float fp, rest;
                    std::memcpy(&fp, &part, 4);
                    std::memcpy(&rest, &bits, 4);
                    rest -= fp;
                    std::memcpy(&bits, &rest, 4);
                }
            }
        return out;
    }

    /// The float32 panels back from the parts (each weight their exact sum).
    [[nodiscard]] AlignedVector<float> unpack_bf16() const {
        AlignedVector<float> out(panels() * impl::kNR * n_in_, 0.0f);
        for (std::size_t o = 0; o < n_out_; ++o)
            for (std::size_t p = 0; p < n_in_; ++p) {
                const std::uint16_t* e = wb_.data() + bf16_at(o, p);
                float sum = 0.0f;
                for (int j = 0; j < 3; ++j) {
                    const std::uint32_t bits = std::uint32_t{e[j * 1024]} << 16;
                    float part;
                    std::memcpy(&part, &bits, 4);
                    sum += part;
                }
                out[((o / impl::kNR) * n_in_ + p) * impl::kNR + o % impl::kNR] = sum;
            }
        return out;
    }

    void run(const float* x, std::size_t m, float* y, Isa isa, std::size_t k_block, bool gelu) const {
        isa = usable(isa);
        if (n_in_ == 0 || n_out_ == 0) {  // no products: the bias alone (then the GELU)
            for (std::size_t i = 0; i < m; ++i) std::copy_n(b_.data(), n_out_, y + i * n_out_);
            if (gelu) gelu_erf(y, m * n_out_, isa);
            return;
        }
#if RAGPP_NN_X86 && defined(__linux__)
        if (f32_on_amx(isa)) {
            if (!wb_.empty()) {
                run_amx(x, m, y, wb_.data(), gelu);
            } else {
                const AlignedVector<std::uint16_t> wb = pack_bf16([&](std::size_t o, std::size_t p) {
                    return w_[((o / impl::kNR) * n_in_ + p) * impl::kNR + o % impl::kNR];
                });
                run_amx(x, m, y, wb.data(), gelu);
            }
            return;
        }
#endif
        const AlignedVector<float> converted = w_.empty() ? unpack_bf16() : AlignedVector<float>{};
        impl::gemm_packed(isa, m, n_out_, n_in_, 1.0f, x, n_in_, w_.empty() ? converted.data() : w_.data(), 0.0f, y,
                          n_out_, b_.data(), k_block, gelu);
    }

#if RAGPP_NN_X86 && defined(__linux__)
    /// Isa::amx with AMX-BF16: blocks of rows split into their bfloat16 planes, K block by
    /// K block (kKCbf16 parts); each B panel's block runs down the rows 32 at a time (16 for
    /// a last block of at most 16), the sums kept in y between K blocks (in a 32 x 32
    /// scratch where the block is not whole), bias and GELU applied on the last.
    RAGPP_NN_AMXBF16 void run_amx(const float* x, std::size_t m, float* y, const std::uint16_t* wb,
                                  bool gelu) const {
        const std::size_t K = kpad_, N = n_out_, kh = K / 2;
        const std::size_t KC = std::min(K, impl::kKCbf16), MC = n_in_ <= impl::kShortK ? impl::kMCshortK : impl::kMC;
        const std::size_t mc_max = (std::min(MC, m) + 15) / 16 * 16;
        std::uint16_t* planes = impl::scratch<std::uint16_t, 2>(3 * mc_max * KC);
        float* cs = impl::scratch<float, 3>(32 * 32);
        impl::amx_begin();
        for (std::size_t ic = 0; ic < m; ic += MC) {
            const std::size_t mc = std::min(MC, m - ic), mpad = (mc + 15) / 16 * 16;
            for (std::size_t k0 = 0; k0 < K; k0 += KC) {
                const std::size_t kc = std::min(KC, K - k0), plane = mpad * kc;
                const bool first = k0 == 0, last = k0 + kc == K;
                const std::size_t valid = n_in_ > k0 ? std::min(kc, n_in_ - k0) : 0;
                // Row r's parts t..t+31 at tile (r / 16, t / 32), row r % 16 of it; rows past
                // mc zeros.
                const std::size_t chunks = kc / 32, ahalf = 16 * kc;
                for (std::size_t r = 0; r < mpad; ++r)
                    for (std::size_t t = 0; t < kc; t += 32)
                        impl::split_bf16x3(x + (ic + std::min(r, mc - 1)) * n_in_ + k0 + t,
                                           r < mc && valid > t ? std::min<std::size_t>(32, valid - t) : 0, 32,
                                           planes + ((r / 16) * chunks + t / 32) * 512 + (r % 16) * 32, plane);
                for (std::size_t col = 0; col < N; col += impl::kNR) {
                    const std::uint16_t* bp = wb + ((col / impl::kNR) * kh + k0 / 2) * 192;
                    const std::size_t nr = std::min(impl::kNR, N - col);
                    const bool more = col + impl::kNR < N;
                    impl::PanelPrefetch pf(more ? bp + kh * 192 : nullptr, kc * 192, (mc + 31) / 32);
                    for (std::size_t ir = 0; ir < mc; ir += 32) {
                        pf.step();
                        const std::size_t mr = std::min<std::size_t>(32, mc - ir), rows = mr <= 16 ? 16 : 32;
                        const bool whole = mr == rows && nr == impl::kNR;
                        float* yc = y + (ic + ir) * N + col;
                        const float* cin = nullptr;
                        std::size_t ldin = 128;
                        if (!first && whole) {
                            cin = yc;
                            ldin = N * 4;
                        } else if (!first) {
                            for (std::size_t i = 0; i < mr; ++i) std::memcpy(cs + i * 32, yc + i * N, nr * 4);
                            cin = cs;
                        }
                        float* c = !last && whole ? yc : cs;
                        const std::size_t ldc = !last && whole ? N * 4 : 128;
                        const std::uint16_t* a = planes + ir * kc;  // tile row block ir / 16
                        if (rows == 32) impl::amx_bf16x6_block<32>(a, plane, ahalf, bp, kc / 2, cin, ldin, c, ldc);
                        else impl::amx_bf16x6_block<16>(a, plane, ahalf, bp, kc / 2, cin, ldin, c, ldc);
                        if (last) {
                            impl::amx_bf16_finish(cs, mr, nr, b_.data() + col, yc, N, gelu);
                        } else if (!whole) {
                            for (std::size_t i = 0; i < mr; ++i) std::memcpy(yc + i * N, cs + i * 32, nr * 4);
                        }
                    }
                }
            }
        }
        impl::amx_end();
    }

#endif

    std::size_t n_out_ = 0, n_in_ = 0, kpad_ = 0;
    AlignedVector<float> w_;           // panels of 32 output columns x n_in, zero padded (FMA paths)
    AlignedVector<std::uint16_t> wb_;  // or the bfloat16 parts (pack_bf16; f32_on_amx)
    AlignedVector<float> b_;           // n_out, zero padded to the panels
};

/// The same layer with int8 weights (per output channel) and per-row dynamic int8
/// activations: symmetric quantization (scale = max |v| / 127, q = lrint(v / scale)),
/// exact int32 sums, y = float(sum) * sx * sw + b.
class LinearI8 {
public:
    LinearI8() = default;
    LinearI8(const float* weights, std::size_t n_out, std::size_t n_in, const float* bias)
        : n_out_(n_out), n_in_(n_in), kq_((n_in + 3) / 4), w_(panels() * impl::kNR * kq_ * 4, 0),
          csum_(panels() * impl::kNR, 0), scale_(panels() * impl::kNR, 1.0f), b_(panels() * impl::kNR, 0.0f) {
        if (n_in > 133000) throw InvalidArgument("LinearI8: n_in " + std::to_string(n_in) + " > 133,000 overflows int32 sums");
        std::vector<std::int8_t> row(n_in);
        for (std::size_t o = 0; o < n_out; ++o) {
            const float* wo = weights + o * n_in;
            float mx = 0;
            for (std::size_t k = 0; k < n_in; ++k) mx = std::max(mx, std::fabs(wo[k]));
            const float s = mx > 0 ? mx / 127.0f : 1.0f;
            scale_[o] = s;
            std::int32_t sum = 0;
            for (std::size_t k = 0; k < n_in; ++k) {
                const long v = std::clamp(std::lrint(wo[k] / s), -127L, 127L);
                row[k] = static_cast<std::int8_t>(v);
                sum += static_cast<std::int32_t>(v);
            }
            csum_[o] = 128 * sum;
            std::int8_t* panel = w_.data() + (o / impl::kNR) * kq_ * 128 + (o % impl::kNR) * 4;
            for (std::size_t k = 0; k < n_in; ++k) panel[(k / 4) * 128 + k % 4] = row[k];
        }
        if (bias) std::copy(bias, bias + n_out, b_.begin());
    }
    [[nodiscard]] std::size_t n_out() const noexcept { return n_out_; }
    [[nodiscard]] std::size_t n_in() const noexcept { return n_in_; }

    void forward(const float* x, std::size_t m, float* y) const { forward(x, m, y, active_isa()); }
    /// The same on the code path `isa` (tests; an unsupported one falls back).
    void forward(const float* x, std::size_t m, float* y, Isa isa) const { run(x, m, y, nullptr, nullptr, isa); }
    /// y = GELU(x W^T + b): forward() then gelu_erf() in one pass, the same floats.
    void forward_gelu(const float* x, std::size_t m, float* y) const { forward_gelu(x, m, y, active_isa()); }
    void forward_gelu(const float* x, std::size_t m, float* y, Isa isa) const {
        run(x, m, y, nullptr, nullptr, isa, true);
    }

    /// The exact integer part (tests): acc[i * n_out + o] = sum_k q_ik w_ok and
    /// row_scale[i] = the activation scale of row i.
    void forward_i32(const float* x, std::size_t m, std::int32_t* acc, float* row_scale, Isa isa) const {
        run(x, m, nullptr, acc, row_scale, isa);
    }
    /// The quantized weight of (o, k) and the scale of output o (tests, inspection).
    [[nodiscard]] std::int8_t weight_q(std::size_t o, std::size_t k) const noexcept {
        return w_[(o / impl::kNR) * kq_ * 128 + (k / 4) * 128 + (o % impl::kNR) * 4 + k % 4];
    }
    [[nodiscard]] float weight_scale(std::size_t o) const noexcept { return scale_[o]; }

private:
    [[nodiscard]] std::size_t panels() const noexcept { return (n_out_ + impl::kNR - 1) / impl::kNR; }
    /// The weight panel of the strip at column `col` (whole panels: a half-panel strip's
    /// other half is the same lines), the first one when past the end and `more_rows`,
    /// else null: what impl::PanelPrefetch brings in while the current strip runs.
    [[nodiscard]] const std::int8_t* next_panel(std::size_t col, bool more_rows) const noexcept {
        if (col < n_out_) return w_.data() + (col / impl::kNR) * kq_ * 128;
        return more_rows ? w_.data() : nullptr;
    }

    void run(const float* x, std::size_t m, float* y, std::int32_t* yi, float* row_scale, Isa isa,
             bool gelu = false) const {
        if (m == 0 || n_out_ == 0) return;
        isa = usable(isa);
        const std::size_t k4 = kq_ * 4;
#if RAGPP_NN_X86
#if defined(__linux__)
        if (isa == Isa::amx && n_in_ % 64 == 0) {
            run_amx(x, m, y, yi, row_scale, gelu);
            return;
        }
#endif
        if (isa == Isa::amx) isa = Isa::avx512_vnni;
        if (isa != Isa::scalar) {
            impl::I8Kernel kernel = &impl::kernel_i8_avx2;
            std::size_t mr = impl::kMRi8avx2, width = 16;
            bool shift = false;  // VNNI: u = q + 128
            if (isa == Isa::avx512_vnni) {
                kernel = &impl::kernel_i8_avx512vnni;
                mr = impl::kMRvnni512;
                width = 32;
                shift = true;
            } else if (isa == Isa::avx2_vnni) {
                kernel = &impl::kernel_i8_avxvnni;
                mr = impl::kMRvnni256;
                shift = true;
            }
            const bool wide = is_avx512(isa);
            // AVX-512 without VNNI runs the AVX2 kernel, whose epilogue has the AVX2 GELU:
            // the AVX-512 one is applied after, as gelu_erf does on that path.
            const bool unfused_gelu = isa == Isa::avx512;
            constexpr std::size_t MC = impl::kMCi8;  // a multiple of 12, 6 and 4
            const std::size_t mc_max = std::min(MC, (m + mr - 1) / mr * mr);
            std::uint8_t* abuf = impl::scratch<std::uint8_t, 1>(mc_max * k4);
            // Rows quantized row-major (k4 bytes each, zero padded, + 128 for VNNI), then
            // interleaved by quads into the micro-panels.
            std::uint8_t* qrows = impl::scratch<std::uint8_t, 2>(mc_max * k4);
            float* sx = impl::scratch<float, 3>(mc_max);
            const std::uint8_t flip = shift ? 0x80 : 0;
            for (std::size_t ic = 0; ic < m; ic += MC) {
                const std::size_t mcur = std::min(MC, m - ic);
                for (std::size_t r = 0; r < mcur; ++r) {
                    const float* xr = x + (ic + r) * n_in_;
                    std::uint8_t* qr = qrows + r * k4;
                    sx[r] = wide ? impl::quantize_row_avx512(xr, n_in_, qr, flip) : impl::quantize_row_avx2(xr, n_in_, qr, flip);
                    for (std::size_t p = n_in_; p < k4; ++p) qr[p] = flip;  // zero, shifted
                    if (row_scale) row_scale[ic + r] = sx[r];
                }
                for (std::size_t ir = 0; ir < mcur; ir += mr) {
                    const std::size_t rows = std::min(mr, mcur - ir);
                    std::uint8_t* blk = abuf + ir * k4;
                    if (rows == 12 && mr == 12) {
                        impl::pack_quads12_avx(kq_, qrows + ir * k4, k4, blk);
                        continue;
                    }
                    for (std::size_t q = 0; q < kq_; ++q)
                        for (std::size_t r = 0; r < mr; ++r) {
                            if (r < rows) std::memcpy(blk + (q * mr + r) * 4, qrows + (ir + r) * k4 + q * 4, 4);
                            else std::memset(blk + (q * mr + r) * 4, 0, 4);
                        }
                }
                for (std::size_t col = 0; col < n_out_; col += width) {
                    const std::int8_t* bp = w_.data() + (col / impl::kNR) * kq_ * 128 + (col % impl::kNR) * 4;
                    impl::I8Epilogue e;
                    e.csum = csum_.data() + col;
                    e.scale = scale_.data() + col;
                    e.bias = b_.data() + col;
                    e.gelu = gelu && !unfused_gelu;
                    const std::size_t nr = std::min(width, n_out_ - col);
                    impl::PanelPrefetch pf(next_panel(col + width, ic + MC < m), kq_ * 128, (mcur + mr - 1) / mr);
                    for (std::size_t ir = 0; ir < mcur; ir += mr) {
                        pf.step();
                        e.sx = sx + ir;
                        e.y = y ? y + (ic + ir) * n_out_ + col : nullptr;
                        e.yi = yi ? yi + (ic + ir) * n_out_ + col : nullptr;
                        kernel(abuf + ir * k4, bp, kq_, n_out_, std::min(mr, mcur - ir), nr, e);
                    }
                }
            }
            if (gelu && unfused_gelu) impl::gelu_avx512(y, m * n_out_);
            return;
        }
#endif
        std::vector<std::int8_t> q(k4, 0);
        for (std::size_t i = 0; i < m; ++i) {
            const float sx = impl::quantize_row_scalar(x + i * n_in_, n_in_, q.data());
            if (row_scale) row_scale[i] = sx;
            for (std::size_t o = 0; o < n_out_; ++o) {
                const std::int8_t* w = w_.data() + (o / impl::kNR) * kq_ * 128 + (o % impl::kNR) * 4;
                std::int32_t s = 0;
                for (std::size_t k = 0; k < n_in_; ++k) s += std::int32_t{q[k]} * std::int32_t{w[(k / 4) * 128 + k % 4]};
                if (yi) {
                    yi[i * n_out_ + o] = s;
                } else {
                    y[i * n_out_ + o] = static_cast<float>(s) * sx * scale_[o] + b_[o];
                    if (gelu) impl::gelu_scalar(y + i * n_out_ + o, 1);
                }
            }
        }
    }

#if RAGPP_NN_X86 && defined(__linux__)
    /// Isa::amx (n_in a multiple of 64): blocks of 192 rows quantized (shifted, as for
    /// VNNI) into rows of n_in bytes, the A tiles; each B panel then runs down the block by
    /// 32 rows, a 32 x 32 block of sums at a time, finished by the VNNI epilogue.
    void run_amx(const float* x, std::size_t m, float* y, std::int32_t* yi, float* row_scale, bool gelu) const {
        constexpr std::size_t MC = impl::kMCi8;  // a multiple of 32
        const std::size_t k4 = kq_ * 4;
        const std::size_t mc_max = std::min(MC, (m + 31) / 32 * 32);
        std::uint8_t* qrows = impl::scratch<std::uint8_t, 2>(mc_max * k4);
        float* sx = impl::scratch<float, 3>(mc_max);
        std::int32_t* sums = impl::scratch<std::int32_t, 4>(32 * 32);
        impl::amx_begin();
        for (std::size_t ic = 0; ic < m; ic += MC) {
            const std::size_t mcur = std::min(MC, m - ic), mpad = (mcur + 31) / 32 * 32;
            for (std::size_t r = 0; r < mcur; ++r) {
                sx[r] = impl::quantize_row_avx512(x + (ic + r) * n_in_, n_in_, qrows + r * k4, 0x80);
                if (row_scale) row_scale[ic + r] = sx[r];
            }
            // The tiles read whole blocks of 32 rows: the rows past the end are zeros.
            std::memset(qrows + mcur * k4, 0, (mpad - mcur) * k4);
            for (std::size_t col = 0; col < n_out_; col += impl::kNR) {
                const std::int8_t* bp = w_.data() + (col / impl::kNR) * kq_ * 128;
                impl::I8Epilogue e;
                e.csum = csum_.data() + col;
                e.scale = scale_.data() + col;
                e.bias = b_.data() + col;
                e.gelu = gelu;
                const std::size_t nr = std::min(impl::kNR, n_out_ - col);
                impl::PanelPrefetch pf(next_panel(col + impl::kNR, ic + MC < m), kq_ * 128, (mcur + 31) / 32);
                for (std::size_t ir = 0; ir < mcur; ir += 32) {
                    pf.step();
                    impl::amx_block32(qrows + ir * k4, k4, bp, kq_, sums);
                    e.sx = sx + ir;
                    e.y = y ? y + (ic + ir) * n_out_ + col : nullptr;
                    e.yi = yi ? yi + (ic + ir) * n_out_ + col : nullptr;
                    impl::amx_finish32(sums, n_out_, std::min<std::size_t>(32, mcur - ir), nr, e);
                }
            }
        }
        impl::amx_end();
    }
#endif

    std::size_t n_out_ = 0, n_in_ = 0, kq_ = 0;
    AlignedVector<std::int8_t> w_;    // panels of 32 columns x kq_ quads of 4 k: [panel][q][col][4]
    AlignedVector<std::int32_t> csum_;  // 128 * sum_k w_ok (the VNNI correction), padded
    AlignedVector<float> scale_, b_;    // per output channel, padded
};

/// C[m, n] = alpha * A[m, k] * B[n, k]^T + beta * C (beta == 0: C is not read).
inline void gemm_nt(std::size_t m, std::size_t n, std::size_t k, float alpha, const float* a, std::size_t lda,
                    const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc, Isa isa) {
    isa = usable(isa);
    if (isa == Isa::scalar) {
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < n; ++j) {
                float s = 0;
                for (std::size_t p = 0; p < k; ++p) s += a[i * lda + p] * b[j * ldb + p];
                c[i * ldc + j] = alpha * s + (beta == 0.0f ? 0.0f : beta * c[i * ldc + j]);
            }
        return;
    }
    float* bp = impl::scratch<float, 4>((n + impl::kNR - 1) / impl::kNR * impl::kNR * std::max<std::size_t>(k, 1));
    impl::pack_b(n, k, b, 1, ldb, bp);  // B^T viewed as [k][n]: (p, j) at b[j * ldb + p]
    impl::gemm_packed(isa, m, n, k, alpha, a, lda, bp, beta, c, ldc, nullptr);
}
inline void gemm_nt(std::size_t m, std::size_t n, std::size_t k, float alpha, const float* a, std::size_t lda,
                    const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc) {
    gemm_nt(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, active_isa());
}

/// C[m, n] = alpha * A[m, k] * B[k, n] + beta * C (beta == 0: C is not read).
inline void gemm_nn(std::size_t m, std::size_t n, std::size_t k, float alpha, const float* a, std::size_t lda,
                    const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc, Isa isa) {
    isa = usable(isa);
    if (isa == Isa::scalar) {
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < n; ++j) {
                float s = 0;
                for (std::size_t p = 0; p < k; ++p) s += a[i * lda + p] * b[p * ldb + j];
                c[i * ldc + j] = alpha * s + (beta == 0.0f ? 0.0f : beta * c[i * ldc + j]);
            }
        return;
    }
    float* bp = impl::scratch<float, 4>((n + impl::kNR - 1) / impl::kNR * impl::kNR * std::max<std::size_t>(k, 1));
    impl::pack_b(n, k, b, ldb, 1, bp);
    impl::gemm_packed(isa, m, n, k, alpha, a, lda, bp, beta, c, ldc, nullptr);
}
inline void gemm_nn(std::size_t m, std::size_t n, std::size_t k, float alpha, const float* a, std::size_t lda,
                    const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc) {
    gemm_nn(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, active_isa());
}

/// x <- x * (1 + erf(x / sqrt(2))) / 2 (the exact GELU of BERT's "gelu"). Vector paths:
/// a rational fit, error within 3e-7 |x| (see kGeluP).
inline void gelu_erf(float* x, std::size_t n, Isa isa) {
    isa = usable(isa);
#if RAGPP_NN_X86
    if (is_avx512(isa)) return impl::gelu_avx512(x, n);
    if (is_avx2(isa)) return impl::gelu_avx2(x, n);
#endif
    impl::gelu_scalar(x, n);
}
inline void gelu_erf(float* x, std::size_t n) { gelu_erf(x, n, active_isa()); }

/// x <- softmax(x), one row, max subtracted first.
inline void softmax(float* x, std::size_t n, Isa isa) {
    isa = usable(isa);
#if RAGPP_NN_X86
    if (is_avx512(isa)) return impl::softmax_avx512(x, n);
    if (is_avx2(isa)) return impl::softmax_avx2(x, n);
#endif
    impl::softmax_scalar(x, n);
}

/// Scaled dot-product attention of `heads` heads over one sequence of n tokens: for head
/// h, ctx[i, hd + c] = sum_j softmax_j(scale * q_i . k_j) v_j[c] for i, j < n, c < d,
/// where q_i, k_j, v_j are the d floats at column h d of rows i, j of q, k, v (row stride
/// ld) and ctx rows have stride ldc: the layout of BERT's fused QKV projection (q, k, v
/// = one buffer + 0, H, 2H; ld = 3H). Columns of ctx past heads x d are not touched.
/// AVX-512: impl::attention_avx512; the other paths, per head: the scores by gemm_nt,
/// a softmax per row, then gemm_nn.
inline void attention(std::size_t n, std::size_t heads, std::size_t d, float scale, const float* q, const float* k,
                      const float* v, std::size_t ld, float* ctx, std::size_t ldc, Isa isa) {
    if (n == 0 || d == 0 || heads == 0) return;
    isa = usable(isa);
#if RAGPP_NN_X86
    if (is_avx512(isa)) return impl::attention_avx512(n, heads, d, scale, q, k, v, ld, ctx, ldc);
#endif
    float* scores = impl::scratch<float, 10>(n * n);
    for (std::size_t h = 0; h < heads; ++h) {
        gemm_nt(n, n, d, scale, q + h * d, ld, k + h * d, ld, 0.0f, scores, n, isa);
        for (std::size_t i = 0; i < n; ++i) softmax(scores + i * n, n, isa);
        gemm_nn(n, d, n, 1.0f, scores, n, v + h * d, ld, 0.0f, ctx + h * d, ldc, isa);
    }
}
inline void attention(std::size_t n, std::size_t heads, std::size_t d, float scale, const float* q, const float* k,
                      const float* v, std::size_t ld, float* ctx, std::size_t ldc) {
    attention(n, heads, d, scale, q, k, v, ld, ctx, ldc, active_isa());
}

inline void LinearF32::forward_gelu(const float* x, std::size_t m, float* y, Isa isa, std::size_t k_block) const {
    run(x, m, y, isa, k_block, true);
}
inline void softmax(float* x, std::size_t n) { softmax(x, n, active_isa()); }

/// x <- (x - mean) / sqrt(var + eps) * gamma + beta, one row (biased variance, as torch);
/// mean and variance accumulated in double.
inline void layer_norm(float* x, std::size_t n, const float* gamma, const float* beta, float eps, Isa isa) {
    isa = usable(isa);
#if RAGPP_NN_X86
    if (is_avx512(isa)) return impl::layer_norm_avx512<false>(x, nullptr, n, gamma, beta, eps);
    if (is_avx2(isa)) return impl::layer_norm_avx2<false>(x, nullptr, n, gamma, beta, eps);
#endif
    impl::layer_norm_scalar(x, n, gamma, beta, eps);
}
inline void layer_norm(float* x, std::size_t n, const float* gamma, const float* beta, float eps) {
    layer_norm(x, n, gamma, beta, eps, active_isa());
}
/// y <- layer_norm(y + x): the residual sum rounded to float (as torch adds it), then the
/// LayerNorm, in one pass less over the row on the vector paths.
inline void add_layer_norm(float* y, const float* x, std::size_t n, const float* gamma, const float* beta, float eps,
                           Isa isa) {
    isa = usable(isa);
#if RAGPP_NN_X86
    if (is_avx512(isa)) return impl::layer_norm_avx512<true>(y, x, n, gamma, beta, eps);
    if (is_avx2(isa)) return impl::layer_norm_avx2<true>(y, x, n, gamma, beta, eps);
#endif
    for (std::size_t i = 0; i < n; ++i) y[i] += x[i];
    impl::layer_norm_scalar(y, n, gamma, beta, eps);
}
inline void add_layer_norm(float* y, const float* x, std::size_t n, const float* gamma, const float* beta, float eps) {
    add_layer_norm(y, x, n, gamma, beta, eps, active_isa());
}

inline void tanh_inplace(float* x, std::size_t n, Isa isa) {
    isa = usable(isa);
#if RAGPP_NN_X86
    if (is_avx512(isa)) return impl::tanh_avx512(x, n);
    if (is_avx2(isa)) return impl::tanh_avx2(x, n);
#endif
    impl::tanh_scalar(x, n);
}
inline void tanh_inplace(float* x, std::size_t n) { tanh_inplace(x, n, active_isa()); }

}  // namespace ragpp::detail::nn
