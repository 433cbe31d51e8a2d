// ragpp detail: the hot kernels of vector search (row-by-row dot products over float32,
// float16 and int8 rows), each in a portable scalar version and in AVX2 and AVX-512
// versions chosen at run time from what the CPU supports (__builtin_cpu_supports), so
// a default build (no -march flag) runs at the machine's speed. The scalar versions are
// the oracles the tests compare the others with.
//
// Layout contracts:
// - float32 rows: `rows + i * stride`, `dim` valid floats each (any dim, any stride >= dim);
// - float16 rows (IEEE binary16 bits): `stride` a multiple of 16, zero padding after
//   `dim`, the query padded with zeros to `stride` floats;
// - int8 rows: `stride` a multiple of 32, zero padded, the query given as int16 values
//   in [-127, 127] padded with zeros to `stride`. Sums are exact in int32 for
//   dim <= 130,000 (127 * 127 * 130,000 < 2^31).
// - one int8 row against another (dot_i8, the HNSW graph's int8 rows and queries): `n`
//   a multiple of 32, both zero padded, values in [-127, 127]; exact in int32 likewise.
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include <ragpp/detail/cpu.hpp>

namespace ragpp::detail::simd {

enum class Isa { scalar, avx2, avx512 };

[[nodiscard]] constexpr std::string_view isa_name(Isa isa) noexcept {
    switch (isa) {
        case Isa::avx2: return "avx2";
        case Isa::avx512: return "avx512";
        default: return "scalar";
    }
}

// --- float16 <-> float32, portable (IEEE 754 binary16, round to nearest even) ------
[[nodiscard]] inline float f16_to_f32(std::uint16_t h) noexcept {
    const std::uint32_t sign = std::uint32_t{h & 0x8000U} << 16;
    std::uint32_t exp = (h >> 10) & 0x1FU;
    std::uint32_t mant = h & 0x3FFU;
    std::uint32_t bits = 0;
    if (exp == 0) {
        if (mant == 0) {
            bits = sign;
        } else {  // subnormal: renormalise
            exp = 127 - 15 + 1;
            while ((mant & 0x400U) == 0) {
                mant <<= 1;
                --exp;
            }
            mant &= 0x3FFU;
            bits = sign | (exp << 23) | (mant << 13);
        }
    } else if (exp == 0x1F) {
        bits = sign | 0x7F800000U | (mant << 13);  // inf or NaN
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
    return std::bit_cast<float>(bits);
}

[[nodiscard]] inline std::uint16_t f32_to_f16(float f) noexcept {
    const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
    const std::uint32_t sign = (x >> 16) & 0x8000U;
    const std::uint32_t absx = x & 0x7FFFFFFFU;
    if (absx >= 0x7F800000U) return static_cast<std::uint16_t>(sign | 0x7C00U | (absx > 0x7F800000U ? 0x200U : 0U));
    if (absx >= 0x477FF000U) return static_cast<std::uint16_t>(sign | 0x7C00U);  // rounds to >= 65520: inf
    if (absx < 0x38800000U) {  // below the smallest normal half: subnormal or zero
        if (absx < 0x33000000U) return static_cast<std::uint16_t>(sign);  // < 2^-25: rounds to 0
        const std::uint32_t e = absx >> 23;
        const std::uint32_t m = (absx & 0x7FFFFFU) | 0x800000U;
        const std::uint32_t shift = 126U - e;  // 14 + (113 - e) - ... : value = m * 2^(e-150), half unit 2^-24
        const std::uint32_t q = m >> shift;
        const std::uint32_t rem = m & ((1U << shift) - 1U);
        const std::uint32_t half = 1U << (shift - 1U);
        std::uint32_t r = q + ((rem > half || (rem == half && (q & 1U) != 0)) ? 1U : 0U);
        return static_cast<std::uint16_t>(sign | r);
    }
    // normal: rebias exponent, round mantissa 23 -> 10 bits to nearest even
    std::uint32_t r = absx - 0x38000000U;  // exponent 127 -> 15
    const std::uint32_t rem = r & 0x1FFFU;
    r >>= 13;
    if (rem > 0x1000U || (rem == 0x1000U && (r & 1U) != 0)) ++r;
    return static_cast<std::uint16_t>(sign | r);
}

// --- scalar kernels (the oracles) --------------------------------------------------
[[nodiscard]] inline float dot_f32_scalar(const float* a, const float* b, std::size_t n) noexcept {
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    std::size_t j = 0;
    for (; j + 4 <= n; j += 4) {
        s0 += a[j] * b[j];
        s1 += a[j + 1] * b[j + 1];
        s2 += a[j + 2] * b[j + 2];
        s3 += a[j + 3] * b[j + 3];
    }
    for (; j < n; ++j) s0 += a[j] * b[j];
    return (s0 + s1) + (s2 + s3);
}
inline void rows_f32_scalar(const float* rows, std::size_t n, std::size_t stride, std::size_t dim, const float* q,
                            float* out) noexcept {
    for (std::size_t i = 0; i < n; ++i) out[i] = dot_f32_scalar(rows + i * stride, q, dim);
}
inline void rows4q_f32_scalar(const float* rows, std::size_t n, std::size_t stride, std::size_t dim, const float* q,
                              std::size_t qstride, float* out, std::size_t out_stride) noexcept {
    for (std::size_t k = 0; k < 4; ++k) rows_f32_scalar(rows, n, stride, dim, q + k * qstride, out + k * out_stride);
}
inline void rows_f16_scalar(const std::uint16_t* rows, std::size_t n, std::size_t stride, const float* q,
                            float* out) noexcept {
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint16_t* r = rows + i * stride;
        float s = 0;
        for (std::size_t j = 0; j < stride; ++j) s += f16_to_f32(r[j]) * q[j];
        out[i] = s;
    }
}
inline void rows_i8_scalar(const std::int8_t* rows, std::size_t n, std::size_t stride, const std::int16_t* q,
                           std::int32_t* out) noexcept {
    for (std::size_t i = 0; i < n; ++i) {
        const std::int8_t* r = rows + i * stride;
        std::int32_t s = 0;
        for (std::size_t j = 0; j < stride; ++j) s += std::int32_t{r[j]} * std::int32_t{q[j]};
        out[i] = s;
    }
}

[[nodiscard]] inline std::int32_t dot_i8_scalar(const std::int8_t* a, const std::int8_t* b, std::size_t n) noexcept {
    std::int32_t s = 0;
    for (std::size_t j = 0; j < n; ++j) s += std::int32_t{a[j]} * std::int32_t{b[j]};
    return s;
}

#if RAGPP_X86_DISPATCH
// GCC 12's AVX-512 intrinsic headers trip -W(maybe-)uninitialized on their own
// _mm512_undefined_* placeholders (GCC bug 105593, fixed in 12.3 and 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
// --- AVX2 + FMA + F16C ---------------------------------------------------------------
__attribute__((target("avx2,fma"))) inline float hsum256(__m256 v) noexcept {
    const __m128 lo = _mm256_castps256_ps128(v);
    const __m128 hi = _mm256_extractf128_ps(v, 1);
    __m128 s = _mm_add_ps(lo, hi);
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 0x55));
    return _mm_cvtss_f32(s);
}
__attribute__((target("avx2,fma"))) inline float dot_f32_avx2(const float* a, const float* b, std::size_t n) noexcept {
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps(), acc2 = _mm256_setzero_ps(),
           acc3 = _mm256_setzero_ps();
    std::size_t j = 0;
    for (; j + 32 <= n; j += 32) {
        acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + j), _mm256_loadu_ps(b + j), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + j + 8), _mm256_loadu_ps(b + j + 8), acc1);
        acc2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + j + 16), _mm256_loadu_ps(b + j + 16), acc2);
        acc3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + j + 24), _mm256_loadu_ps(b + j + 24), acc3);
    }
    for (; j + 8 <= n; j += 8) acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + j), _mm256_loadu_ps(b + j), acc0);
    float s = hsum256(_mm256_add_ps(_mm256_add_ps(acc0, acc1), _mm256_add_ps(acc2, acc3)));
    for (; j < n; ++j) s += a[j] * b[j];
    return s;
}
/// One row exactly as rows_f32_avx2's four-row loop scores each of its rows (one
/// accumulator, the same order of additions): a row's score does not depend on where it
/// lies in the scan (which rows share its block of four), so the same vectors score the
/// same whatever else the index holds.
__attribute__((target("avx2,fma"))) inline float row_f32_avx2(const float* r, const float* q, std::size_t dim) noexcept {
    const std::size_t body = dim / 8 * 8;
    __m256 a = _mm256_setzero_ps();
    for (std::size_t j = 0; j < body; j += 8) a = _mm256_fmadd_ps(_mm256_loadu_ps(r + j), _mm256_loadu_ps(q + j), a);
    float s = hsum256(a);
    for (std::size_t j = body; j < dim; ++j) s = std::fma(r[j], q[j], s);
    return s;
}
/// Four rows at a time (each query chunk loaded once for four rows), prefetching the
/// rows eight ahead: the scan then runs at the memory's sequential read speed.
__attribute__((target("avx2,fma"))) inline void rows_f32_avx2(const float* rows, std::size_t n, std::size_t stride,
                                                              std::size_t dim, const float* q, float* out) noexcept {
    std::size_t i = 0;
    const std::size_t body = dim / 8 * 8;
    for (; i + 4 <= n; i += 4) {
        const float* r0 = rows + i * stride;
        const float* r1 = r0 + stride;
        const float* r2 = r1 + stride;
        const float* r3 = r2 + stride;
        const char* pf = reinterpret_cast<const char*>(r0 + 8 * stride);
        for (std::size_t b = 0; b < 4 * stride * sizeof(float); b += 64) _mm_prefetch(pf + b, _MM_HINT_T0);
        __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
        for (std::size_t j = 0; j < body; j += 8) {
            const __m256 qq = _mm256_loadu_ps(q + j);
            a0 = _mm256_fmadd_ps(_mm256_loadu_ps(r0 + j), qq, a0);
            a1 = _mm256_fmadd_ps(_mm256_loadu_ps(r1 + j), qq, a1);
            a2 = _mm256_fmadd_ps(_mm256_loadu_ps(r2 + j), qq, a2);
            a3 = _mm256_fmadd_ps(_mm256_loadu_ps(r3 + j), qq, a3);
        }
        float s0 = hsum256(a0), s1 = hsum256(a1), s2 = hsum256(a2), s3 = hsum256(a3);
        for (std::size_t j = body; j < dim; ++j) {  // fused, as in row_f32_avx2: the same bits
            s0 = std::fma(r0[j], q[j], s0);
            s1 = std::fma(r1[j], q[j], s1);
            s2 = std::fma(r2[j], q[j], s2);
            s3 = std::fma(r3[j], q[j], s3);
        }
        out[i] = s0;
        out[i + 1] = s1;
        out[i + 2] = s2;
        out[i + 3] = s3;
    }
    for (; i < n; ++i) out[i] = row_f32_avx2(rows + i * stride, q, dim);
}
__attribute__((target("avx2,fma"))) inline void rows4q_f32_avx2(const float* rows, std::size_t n, std::size_t stride,
                                                                std::size_t dim, const float* q, std::size_t qstride,
                                                                float* out, std::size_t out_stride) noexcept {
    const std::size_t body = dim / 8 * 8;
    for (std::size_t i = 0; i < n; ++i) {
        const float* r = rows + i * stride;
        __m256 a[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
        for (std::size_t j = 0; j < body; j += 8) {
            const __m256 x = _mm256_loadu_ps(r + j);
            for (std::size_t k = 0; k < 4; ++k) a[k] = _mm256_fmadd_ps(x, _mm256_loadu_ps(q + k * qstride + j), a[k]);
        }
        for (std::size_t k = 0; k < 4; ++k) {
            float s = hsum256(a[k]);
            for (std::size_t j = body; j < dim; ++j) s += r[j] * q[k * qstride + j];
            out[k * out_stride + i] = s;
        }
    }
}
__attribute__((target("avx2,fma,f16c"))) inline void rows_f16_avx2(const std::uint16_t* rows, std::size_t n,
                                                                   std::size_t stride, const float* q,
                                                                   float* out) noexcept {
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint16_t* r = rows + i * stride;
        const char* pf = reinterpret_cast<const char*>(r + 8 * stride);
        for (std::size_t b = 0; b < stride * sizeof(std::uint16_t); b += 64) _mm_prefetch(pf + b, _MM_HINT_T0);
        __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
        for (std::size_t j = 0; j < stride; j += 16) {
            const __m256 x0 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r + j)));
            const __m256 x1 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r + j + 8)));
            acc0 = _mm256_fmadd_ps(x0, _mm256_loadu_ps(q + j), acc0);
            acc1 = _mm256_fmadd_ps(x1, _mm256_loadu_ps(q + j + 8), acc1);
        }
        out[i] = hsum256(_mm256_add_ps(acc0, acc1));
    }
}
__attribute__((target("avx2"))) inline void rows_i8_avx2(const std::int8_t* rows, std::size_t n, std::size_t stride,
                                                         const std::int16_t* q, std::int32_t* out) noexcept {
    for (std::size_t i = 0; i < n; ++i) {
        const std::int8_t* r = rows + i * stride;
        const char* pf = reinterpret_cast<const char*>(r + 16 * stride);
        for (std::size_t b = 0; b < stride; b += 64) _mm_prefetch(pf + b, _MM_HINT_T0);
        __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
        for (std::size_t j = 0; j < stride; j += 32) {
            const __m256i x0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r + j)));
            const __m256i x1 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r + j + 16)));
            acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(x0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + j))));
            acc1 = _mm256_add_epi32(acc1,
                                    _mm256_madd_epi16(x1, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + j + 16))));
        }
        __m256i acc = _mm256_add_epi32(acc0, acc1);
        __m128i s = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
        s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
        s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
        out[i] = _mm_cvtsi128_si32(s);
    }
}

/// One int8 row against another (n a multiple of 32): sign-extended to int16, multiplied
/// and summed in pairs (vpmaddwd).
__attribute__((target("avx2"))) inline std::int32_t dot_i8_avx2(const std::int8_t* a, const std::int8_t* b,
                                                               std::size_t n) noexcept {
    __m256i acc = _mm256_setzero_si256();
    for (std::size_t j = 0; j < n; j += 16) {
        const __m256i x = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + j)));
        const __m256i y = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + j)));
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(x, y));
    }
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    return _mm_cvtsi128_si32(s);
}

// --- AVX-512 (F + BW) -----------------------------------------------------------------
// Horizontal sums by lane shuffles (GCC 12's _mm512_reduce_add_* trip
// -Wmaybe-uninitialized inside its own headers).
__attribute__((target("avx512f"))) inline float hsum512(__m512 v) noexcept {
    __m512 s = _mm512_add_ps(v, _mm512_shuffle_f32x4(v, v, 0x4E));
    s = _mm512_add_ps(s, _mm512_shuffle_f32x4(s, s, 0xB1));
    __m128 x = _mm512_castps512_ps128(s);
    x = _mm_add_ps(x, _mm_movehl_ps(x, x));
    x = _mm_add_ss(x, _mm_shuffle_ps(x, x, 0x55));
    return _mm_cvtss_f32(x);
}
__attribute__((target("avx512f"))) inline std::int32_t hsum512i(__m512i v) noexcept {
    __m512i s = _mm512_add_epi32(v, _mm512_shuffle_i32x4(v, v, 0x4E));
    s = _mm512_add_epi32(s, _mm512_shuffle_i32x4(s, s, 0xB1));
    __m128i x = _mm512_castsi512_si128(s);
    x = _mm_add_epi32(x, _mm_shuffle_epi32(x, 0x4E));
    x = _mm_add_epi32(x, _mm_shuffle_epi32(x, 0xB1));
    return _mm_cvtsi128_si32(x);
}
__attribute__((target("avx512f,avx512bw,fma"))) inline float dot_f32_avx512(const float* a, const float* b,
                                                                           std::size_t n) noexcept {
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps(), acc2 = _mm512_setzero_ps(),
           acc3 = _mm512_setzero_ps();
    std::size_t j = 0;
    for (; j + 64 <= n; j += 64) {
        acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + j), _mm512_loadu_ps(b + j), acc0);
        acc1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + j + 16), _mm512_loadu_ps(b + j + 16), acc1);
        acc2 = _mm512_fmadd_ps(_mm512_loadu_ps(a + j + 32), _mm512_loadu_ps(b + j + 32), acc2);
        acc3 = _mm512_fmadd_ps(_mm512_loadu_ps(a + j + 48), _mm512_loadu_ps(b + j + 48), acc3);
    }
    for (; j + 16 <= n; j += 16) acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + j), _mm512_loadu_ps(b + j), acc0);
    if (j < n) {
        const __mmask16 m = static_cast<__mmask16>((1U << (n - j)) - 1U);
        acc1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + j), _mm512_maskz_loadu_ps(m, b + j), acc1);
    }
    return hsum512(_mm512_add_ps(_mm512_add_ps(acc0, acc1), _mm512_add_ps(acc2, acc3)));
}
/// One row exactly as rows_f32_avx512's four-row loop scores each (see row_f32_avx2).
__attribute__((target("avx512f,avx512bw,fma"))) inline float row_f32_avx512(const float* r, const float* q,
                                                                           std::size_t dim) noexcept {
    const std::size_t body = dim / 16 * 16;
    const __mmask16 tail = static_cast<__mmask16>((1U << (dim - body)) - 1U);
    __m512 a = _mm512_setzero_ps();
    for (std::size_t j = 0; j < body; j += 16) a = _mm512_fmadd_ps(_mm512_loadu_ps(r + j), _mm512_loadu_ps(q + j), a);
    if (tail != 0) a = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, r + body), _mm512_maskz_loadu_ps(tail, q + body), a);
    return hsum512(a);
}
/// Four rows at a time, prefetching eight rows ahead (see rows_f32_avx2).
__attribute__((target("avx512f,avx512bw,fma"))) inline void rows_f32_avx512(const float* rows, std::size_t n,
                                                                           std::size_t stride, std::size_t dim,
                                                                           const float* q, float* out) noexcept {
    std::size_t i = 0;
    const std::size_t body = dim / 16 * 16;
    const __mmask16 tail = static_cast<__mmask16>((1U << (dim - body)) - 1U);
    for (; i + 4 <= n; i += 4) {
        const float* r0 = rows + i * stride;
        const float* r1 = r0 + stride;
        const float* r2 = r1 + stride;
        const float* r3 = r2 + stride;
        const char* pf = reinterpret_cast<const char*>(r0 + 8 * stride);
        for (std::size_t b = 0; b < 4 * stride * sizeof(float); b += 64) _mm_prefetch(pf + b, _MM_HINT_T0);
        __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
        for (std::size_t j = 0; j < body; j += 16) {
            const __m512 qq = _mm512_loadu_ps(q + j);
            a0 = _mm512_fmadd_ps(_mm512_loadu_ps(r0 + j), qq, a0);
            a1 = _mm512_fmadd_ps(_mm512_loadu_ps(r1 + j), qq, a1);
            a2 = _mm512_fmadd_ps(_mm512_loadu_ps(r2 + j), qq, a2);
            a3 = _mm512_fmadd_ps(_mm512_loadu_ps(r3 + j), qq, a3);
        }
        if (tail != 0) {
            const __m512 qq = _mm512_maskz_loadu_ps(tail, q + body);
            a0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, r0 + body), qq, a0);
            a1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, r1 + body), qq, a1);
            a2 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, r2 + body), qq, a2);
            a3 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, r3 + body), qq, a3);
        }
        out[i] = hsum512(a0);
        out[i + 1] = hsum512(a1);
        out[i + 2] = hsum512(a2);
        out[i + 3] = hsum512(a3);
    }
    for (; i < n; ++i) out[i] = row_f32_avx512(rows + i * stride, q, dim);
}

/// Scores 4 queries against n rows: out[k * out_stride + i] = rows[i] . q_k, k < 4.
/// Each row chunk is loaded once for the four queries: the micro-kernel of the
/// blocked matrix product S = Q X^T that batch search computes.
__attribute__((target("avx512f,avx512bw,fma"))) inline void rows4q_f32_avx512(const float* rows, std::size_t n,
                                                                             std::size_t stride, std::size_t dim,
                                                                             const float* q, std::size_t qstride,
                                                                             float* out, std::size_t out_stride) noexcept {
    const std::size_t body = dim / 16 * 16;
    const __mmask16 tail = static_cast<__mmask16>((1U << (dim - body)) - 1U);
    const float* q0 = q;
    const float* q1 = q + qstride;
    const float* q2 = q + 2 * qstride;
    const float* q3 = q + 3 * qstride;
    std::size_t i = 0;
    // 4 rows x 4 queries per pass: 16 accumulators, 8 loads for 16 FMAs.
    for (; i + 4 <= n && tail == 0; i += 4) {
        const float* r0 = rows + i * stride;
        __m512 acc[4][4];
        for (auto& row : acc)
            for (auto& a : row) a = _mm512_setzero_ps();
        for (std::size_t j = 0; j < body; j += 16) {
            const __m512 x0 = _mm512_loadu_ps(r0 + j);
            const __m512 x1 = _mm512_loadu_ps(r0 + stride + j);
            const __m512 x2 = _mm512_loadu_ps(r0 + 2 * stride + j);
            const __m512 x3 = _mm512_loadu_ps(r0 + 3 * stride + j);
            const __m512 qs[4] = {_mm512_loadu_ps(q0 + j), _mm512_loadu_ps(q1 + j), _mm512_loadu_ps(q2 + j),
                                  _mm512_loadu_ps(q3 + j)};
            for (std::size_t t = 0; t < 4; ++t) {
                acc[0][t] = _mm512_fmadd_ps(x0, qs[t], acc[0][t]);
                acc[1][t] = _mm512_fmadd_ps(x1, qs[t], acc[1][t]);
                acc[2][t] = _mm512_fmadd_ps(x2, qs[t], acc[2][t]);
                acc[3][t] = _mm512_fmadd_ps(x3, qs[t], acc[3][t]);
            }
        }
        for (std::size_t rr = 0; rr < 4; ++rr)
            for (std::size_t t = 0; t < 4; ++t) out[t * out_stride + i + rr] = hsum512(acc[rr][t]);
    }
    for (; i < n; ++i) {
        const float* r = rows + i * stride;
        __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
        for (std::size_t j = 0; j < body; j += 16) {
            const __m512 x = _mm512_loadu_ps(r + j);
            a0 = _mm512_fmadd_ps(x, _mm512_loadu_ps(q0 + j), a0);
            a1 = _mm512_fmadd_ps(x, _mm512_loadu_ps(q1 + j), a1);
            a2 = _mm512_fmadd_ps(x, _mm512_loadu_ps(q2 + j), a2);
            a3 = _mm512_fmadd_ps(x, _mm512_loadu_ps(q3 + j), a3);
        }
        if (tail != 0) {
            const __m512 x = _mm512_maskz_loadu_ps(tail, r + body);
            a0 = _mm512_fmadd_ps(x, _mm512_maskz_loadu_ps(tail, q0 + body), a0);
            a1 = _mm512_fmadd_ps(x, _mm512_maskz_loadu_ps(tail, q1 + body), a1);
            a2 = _mm512_fmadd_ps(x, _mm512_maskz_loadu_ps(tail, q2 + body), a2);
            a3 = _mm512_fmadd_ps(x, _mm512_maskz_loadu_ps(tail, q3 + body), a3);
        }
        out[i] = hsum512(a0);
        out[out_stride + i] = hsum512(a1);
        out[2 * out_stride + i] = hsum512(a2);
        out[3 * out_stride + i] = hsum512(a3);
    }
}
__attribute__((target("avx512f,avx512bw,fma"))) inline void rows_f16_avx512(const std::uint16_t* rows, std::size_t n,
                                                                           std::size_t stride, const float* q,
                                                                           float* out) noexcept {
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint16_t* r = rows + i * stride;
        const char* pf = reinterpret_cast<const char*>(r + 8 * stride);
        for (std::size_t b = 0; b < stride * sizeof(std::uint16_t); b += 64) _mm_prefetch(pf + b, _MM_HINT_T0);
        __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
        std::size_t j = 0;
        for (; j + 32 <= stride; j += 32) {
            const __m512 x0 = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r + j)));
            const __m512 x1 = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r + j + 16)));
            acc0 = _mm512_fmadd_ps(x0, _mm512_loadu_ps(q + j), acc0);
            acc1 = _mm512_fmadd_ps(x1, _mm512_loadu_ps(q + j + 16), acc1);
        }
        if (j < stride) {
            const __m512 x0 = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r + j)));
            acc0 = _mm512_fmadd_ps(x0, _mm512_loadu_ps(q + j), acc0);
        }
        out[i] = hsum512(_mm512_add_ps(acc0, acc1));
    }
}
__attribute__((target("avx512f,avx512bw"))) inline void rows_i8_avx512(const std::int8_t* rows, std::size_t n,
                                                                      std::size_t stride, const std::int16_t* q,
                                                                      std::int32_t* out) noexcept {
    for (std::size_t i = 0; i < n; ++i) {
        const std::int8_t* r = rows + i * stride;
        const char* pf = reinterpret_cast<const char*>(r + 16 * stride);
        for (std::size_t b = 0; b < stride; b += 64) _mm_prefetch(pf + b, _MM_HINT_T0);
        __m512i acc0 = _mm512_setzero_si512(), acc1 = _mm512_setzero_si512();
        std::size_t j = 0;
        for (; j + 64 <= stride; j += 64) {
            const __m512i x0 = _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r + j)));
            const __m512i x1 = _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r + j + 32)));
            acc0 = _mm512_add_epi32(acc0, _mm512_madd_epi16(x0, _mm512_loadu_si512(q + j)));
            acc1 = _mm512_add_epi32(acc1, _mm512_madd_epi16(x1, _mm512_loadu_si512(q + j + 32)));
        }
        if (j < stride) {
            const __m512i x0 = _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r + j)));
            acc0 = _mm512_add_epi32(acc0, _mm512_madd_epi16(x0, _mm512_loadu_si512(q + j)));
        }
        out[i] = hsum512i(_mm512_add_epi32(acc0, acc1));
    }
}
/// One int8 row against another (n a multiple of 32), as dot_i8_avx2 on 512-bit registers.
__attribute__((target("avx512f,avx512bw"))) inline std::int32_t dot_i8_avx512(const std::int8_t* a, const std::int8_t* b,
                                                                             std::size_t n) noexcept {
    __m512i acc = _mm512_setzero_si512();
    std::size_t j = 0;
    for (; j + 32 <= n; j += 32) {
        const __m512i x = _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + j)));
        const __m512i y = _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + j)));
        acc = _mm512_add_epi32(acc, _mm512_madd_epi16(x, y));
    }
    return hsum512i(acc);
}
/// int8 rows with AVX-512 VNNI (vpdpbusd multiplies unsigned by signed bytes): the
/// query d (in [-127, 127]) is offset to u = d + 128 and
///   sum_i c_i d_i = sum_i c_i u_i - 128 sum_i c_i,
/// both sums by vpdpbusd (the second against a vector of ones). Four rows per pass,
/// prefetching ahead.
__attribute__((target("avx512f,avx512bw,avx512vnni"))) inline void rows_i8_vnni(const std::int8_t* rows, std::size_t n,
                                                                               std::size_t stride, const std::int16_t* q,
                                                                               std::int32_t* out) noexcept {
    alignas(64) std::uint8_t u[4096];
    if (stride > sizeof u) {  // very long vectors: the portable AVX-512BW kernel
        rows_i8_avx512(rows, n, stride, q, out);
        return;
    }
    for (std::size_t j = 0; j < stride; ++j) u[j] = static_cast<std::uint8_t>(q[j] + 128);
    const __m512i ones = _mm512_set1_epi8(1);
    const std::size_t body = stride / 64 * 64;
    const __mmask64 tail = stride == body ? 0 : (~__mmask64{0}) >> (64 - (stride - body));
    std::size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const std::int8_t* r0 = rows + i * stride;
        const char* pf = reinterpret_cast<const char*>(r0 + 32 * stride);  // 8 KB ahead for 256-d
        for (std::size_t b = 0; b < 4 * stride; b += 64) _mm_prefetch(pf + b, _MM_HINT_T0);
        __m512i d[4], c[4];
        for (std::size_t k = 0; k < 4; ++k) d[k] = c[k] = _mm512_setzero_si512();
        for (std::size_t j = 0; j < body; j += 64) {
            const __m512i uu = _mm512_load_si512(u + j);
            for (std::size_t k = 0; k < 4; ++k) {
                const __m512i x = _mm512_loadu_si512(r0 + k * stride + j);
                d[k] = _mm512_dpbusd_epi32(d[k], uu, x);
                c[k] = _mm512_dpbusd_epi32(c[k], ones, x);
            }
        }
        if (tail != 0) {
            const __m512i uu = _mm512_maskz_loadu_epi8(tail, u + body);
            for (std::size_t k = 0; k < 4; ++k) {
                const __m512i x = _mm512_maskz_loadu_epi8(tail, r0 + k * stride + body);
                d[k] = _mm512_dpbusd_epi32(d[k], uu, x);
                c[k] = _mm512_dpbusd_epi32(c[k], ones, x);
            }
        }
        for (std::size_t k = 0; k < 4; ++k) out[i + k] = hsum512i(_mm512_sub_epi32(d[k], _mm512_slli_epi32(c[k], 7)));
    }
    if (i < n) rows_i8_avx512(rows + i * stride, n - i, stride, q, out + i);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

/// One set of kernels. `rows_*` write one score per row into `out`.
struct Kernels {
    Isa isa = Isa::scalar;
    float (*dot_f32)(const float*, const float*, std::size_t) noexcept = &dot_f32_scalar;
    void (*rows_f32)(const float*, std::size_t, std::size_t, std::size_t, const float*, float*) noexcept =
        &rows_f32_scalar;
    void (*rows_f16)(const std::uint16_t*, std::size_t, std::size_t, const float*, float*) noexcept = &rows_f16_scalar;
    void (*rows_i8)(const std::int8_t*, std::size_t, std::size_t, const std::int16_t*, std::int32_t*) noexcept =
        &rows_i8_scalar;
    void (*rows4q_f32)(const float*, std::size_t, std::size_t, std::size_t, const float*, std::size_t, float*,
                       std::size_t) noexcept = &rows4q_f32_scalar;
    std::int32_t (*dot_i8)(const std::int8_t*, const std::int8_t*, std::size_t) noexcept = &dot_i8_scalar;
};

/// Whether this CPU (and OS) can run `isa` (detail/cpu.hpp's probe).
[[nodiscard]] inline bool supported(Isa isa) noexcept {
    const CpuFeatures& f = cpu_features();
    switch (isa) {
        case Isa::avx2: return f.avx2 && f.fma && f.f16c;
        case Isa::avx512: return f.avx512f && f.avx512bw && f.fma;
        default: return true;
    }
}

/// The kernels of `isa`; the scalar ones when this CPU cannot run it.
[[nodiscard]] inline Kernels kernels_for(Isa isa) noexcept {
    Kernels k;
    if (!supported(isa)) return k;
#if RAGPP_X86_DISPATCH
    if (isa == Isa::avx2) {
        k = Kernels{Isa::avx2, &dot_f32_avx2, &rows_f32_avx2, &rows_f16_avx2, &rows_i8_avx2, &rows4q_f32_avx2, &dot_i8_avx2};
    } else if (isa == Isa::avx512) {
        k = Kernels{Isa::avx512, &dot_f32_avx512, &rows_f32_avx512, &rows_f16_avx512, &rows_i8_avx512, &rows4q_f32_avx512,
                    &dot_i8_avx512};
        if (cpu_features().avx512vnni) k.rows_i8 = &rows_i8_vnni;
    }
#endif
    return k;
}

/// The best kernels for this CPU, chosen once, capped by RAGPP_SIMD (detail/cpu.hpp).
[[nodiscard]] inline const Kernels& kernels() noexcept {
    static const Kernels chosen = [] {
        Isa best = supported(Isa::avx512) ? Isa::avx512 : supported(Isa::avx2) ? Isa::avx2 : Isa::scalar;
        if (simd_cap() == SimdCap::scalar) best = Isa::scalar;
        else if (simd_cap() == SimdCap::avx2 && best == Isa::avx512) best = Isa::avx2;
        return kernels_for(best);
    }();
    return chosen;
}

}  // namespace ragpp::detail::simd
