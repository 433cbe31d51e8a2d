// ragpp detail: the one CPU probe of the library. What this CPU (and OS) can run, read
// once, and the cap the environment variable RAGPP_SIMD puts on it (`scalar`, `avx2`,
// `avx512`: no AMX; unset: no cap), read once. The vector kernels (detail/simd.hpp) and the
// transformer kernels (detail/nn.hpp) both choose their code path from these two.
#pragma once

#include <cstdlib>
#include <string_view>

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <cpuid.h>
#include <immintrin.h>
#define RAGPP_X86_DISPATCH 1
#else
#define RAGPP_X86_DISPATCH 0
#endif

namespace ragpp::detail {

/// The instruction set extensions the kernels use.
struct CpuFeatures {
    bool avx2 = false;
    bool fma = false;
    bool f16c = false;
    bool avx512f = false;
    bool avx512bw = false;
    bool avx512vl = false;
    bool avx512dq = false;
    bool avx512vnni = false;
    bool avxvnni = false;  // VEX-encoded vpdpbusd (256-bit)
    bool amd = false;      // vendor "AuthenticAMD" (CPUID leaf 0): the GEMM's K blocking (detail/nn.hpp)
    // AMX-TILE and AMX-INT8 in the CPU (CPUID.(EAX=7, ECX=0):EDX bits 24 and 25). The OS must
    // also let the process use the tiles: detail/nn.hpp asks Linux for that (amx_permitted)
    // only when a transformer kernel first wants them, not here.
    bool amx_int8 = false;
    // AMX-BF16 (CPUID.(EAX=7, ECX=0):EDX bit 22): the float32 products of detail/nn.hpp's
    // LinearF32 as six bfloat16 products (LinearF32's comment).
    bool amx_bf16 = false;
};

/// This CPU's features, probed once (cpuid exits to the hypervisor in a virtual machine:
/// too slow for every call of a kernel). __builtin_cpu_supports where every compiler we
/// support knows the name; cpuid directly for F16C (CPUID.1:ECX bit 29, unknown to
/// clang 14's builtin), AVX-VNNI (CPUID.(EAX=7, ECX=1):EAX bit 4, Intel SDM vol. 2) and AMX.
[[nodiscard]] inline const CpuFeatures& cpu_features() noexcept {
    static const CpuFeatures features = [] {
        CpuFeatures f;
#if RAGPP_X86_DISPATCH
        f.avx2 = __builtin_cpu_supports("avx2");
        f.fma = __builtin_cpu_supports("fma");
        f.avx512f = __builtin_cpu_supports("avx512f");
        f.avx512bw = __builtin_cpu_supports("avx512bw");
        f.avx512vl = __builtin_cpu_supports("avx512vl");
        f.avx512dq = __builtin_cpu_supports("avx512dq");
        f.avx512vnni = __builtin_cpu_supports("avx512vnni");
        unsigned a = 0, b = 0, c = 0, d = 0;
        f.f16c = __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & (1U << 29)) != 0;
        a = b = c = d = 0;
        f.avxvnni = __get_cpuid_count(7, 1, &a, &b, &c, &d) != 0 && (a & (1U << 4)) != 0;
        a = b = c = d = 0;
        f.amx_int8 = __get_cpuid_count(7, 0, &a, &b, &c, &d) != 0 && (d & (1U << 24)) != 0 && (d & (1U << 25)) != 0;
        f.amx_bf16 = f.amx_int8 && (d & (1U << 22)) != 0;
        a = b = c = d = 0;
        // The vendor string is EBX, EDX, ECX of leaf 0: "Auth" "enti" "cAMD".
        f.amd = __get_cpuid(0, &a, &b, &c, &d) != 0 && b == 0x68747541U && d == 0x69746E65U && c == 0x444D4163U;
#endif
        return f;
    }();
    return features;
}

/// What RAGPP_SIMD allows: every path (unset, anything else), AVX-512 at most (`avx512`:
/// no AMX tiles), AVX2 at most (`avx2`), or the scalar path only (`scalar`). For tests,
/// benchmarks, and tools that do not know AMX (valgrind).
enum class SimdCap { none, avx512, avx2, scalar };

/// RAGPP_SIMD, read once.
[[nodiscard]] inline SimdCap simd_cap() noexcept {
    static const SimdCap cap = [] {
        const char* value = std::getenv("RAGPP_SIMD");
        if (value == nullptr) return SimdCap::none;
        const std::string_view v(value);
        return v == "scalar" ? SimdCap::scalar
               : v == "avx2" ? SimdCap::avx2
               : v == "avx512" ? SimdCap::avx512
                               : SimdCap::none;
    }();
    return cap;
}

}  // namespace ragpp::detail
