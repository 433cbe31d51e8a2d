#include <ragpp/detail/simd.hpp>

#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace simd = ragpp::detail::simd;

TEST_CASE("float16 conversion: IEEE 754 binary16 reference values", "[simd][f16]") {
    CHECK(simd::f32_to_f16(1.0F) == 0x3C00);
    CHECK(simd::f32_to_f16(-2.0F) == 0xC000);
    CHECK(simd::f32_to_f16(65504.0F) == 0x7BFF);          // largest finite half
    CHECK(simd::f32_to_f16(65520.0F) == 0x7C00);          // rounds up to infinity
    CHECK(simd::f32_to_f16(std::ldexp(1.0F, -24)) == 0x0001);  // smallest subnormal
    CHECK(simd::f32_to_f16(std::ldexp(1.0F, -25)) == 0x0000);  // tie, to even: zero
    CHECK(simd::f32_to_f16(std::ldexp(3.0F, -26)) == 0x0001);  // 0.75 ulp: up
    CHECK(simd::f32_to_f16(1.0F + std::ldexp(1.0F, -11)) == 0x3C00);       // tie, to even
    CHECK(simd::f32_to_f16(1.0F + 3 * std::ldexp(1.0F, -11)) == 0x3C02);   // tie, to even (up)
    CHECK(simd::f32_to_f16(std::numeric_limits<float>::infinity()) == 0x7C00);
    CHECK((simd::f32_to_f16(std::numeric_limits<float>::quiet_NaN()) & 0x7C00) == 0x7C00);
    CHECK(simd::f16_to_f32(0x3555) == Approx(0.333251953125F).epsilon(0));
    CHECK(simd::f16_to_f32(0x0001) == std::ldexp(1.0F, -24));
    CHECK(simd::f16_to_f32(0x8000) == 0.0F);
    CHECK(std::signbit(simd::f16_to_f32(0x8000)));
    // Every finite half survives half -> float -> half unchanged.
    for (std::uint32_t h = 0; h < 0x10000; ++h) {
        if ((h & 0x7C00) == 0x7C00) continue;
        REQUIRE(simd::f32_to_f16(simd::f16_to_f32(static_cast<std::uint16_t>(h))) == h);
    }
}

TEST_CASE("SIMD kernels agree with the scalar oracles on every ISA this CPU has", "[simd]") {
    std::mt19937 rng(42);
    std::normal_distribution<float> normal;
    std::uniform_int_distribution<int> i8(-127, 127);
    for (auto isa : {simd::Isa::avx2, simd::Isa::avx512}) {
        if (!simd::supported(isa)) {
            WARN("this CPU lacks " << simd::isa_name(isa) << ": its kernels are not tested here");
            continue;
        }
        const simd::Kernels k = simd::kernels_for(isa);
        REQUIRE(k.isa == isa);
        for (std::size_t dim : {1U, 7U, 16U, 17U, 33U, 64U, 100U, 256U, 300U}) {
            const std::size_t n = 13, stride = dim + 3;
            std::vector<float> rows(n * stride), q(dim);
            for (auto& x : rows) x = normal(rng);
            for (auto& x : q) x = normal(rng);
            std::vector<float> got(n), want(n);
            k.rows_f32(rows.data(), n, stride, dim, q.data(), got.data());
            simd::rows_f32_scalar(rows.data(), n, stride, dim, q.data(), want.data());
            for (std::size_t i = 0; i < n; ++i) CHECK(got[i] == Approx(want[i]).margin(1e-4).epsilon(1e-5));
            // A row scores the same, bit for bit, wherever it lies in the scan (in a block of
            // four or in the tail): shifted by 1, 2 and 3 rows, every score is equal.
            for (std::size_t shift = 1; shift < 4; ++shift) {
                std::vector<float> shifted(n - shift);
                k.rows_f32(rows.data() + shift * stride, n - shift, stride, dim, q.data(), shifted.data());
                for (std::size_t i = 0; i + shift < n; ++i) CHECK(shifted[i] == got[i + shift]);
            }
            CHECK(k.dot_f32(q.data(), q.data(), dim) == Approx(simd::dot_f32_scalar(q.data(), q.data(), dim)).epsilon(1e-5));
            // Four queries at once (the batch micro-kernel), against four single scans.
            std::vector<float> q4(4 * (dim + 1)), got4(4 * n), want4(4 * n);
            for (auto& x : q4) x = normal(rng);
            k.rows4q_f32(rows.data(), n, stride, dim, q4.data(), dim + 1, got4.data(), n);
            for (std::size_t t = 0; t < 4; ++t)
                simd::rows_f32_scalar(rows.data(), n, stride, dim, q4.data() + t * (dim + 1), want4.data() + t * n);
            for (std::size_t i = 0; i < 4 * n; ++i) CHECK(got4[i] == Approx(want4[i]).margin(1e-4).epsilon(1e-5));

            const std::size_t s16 = (dim + 15) / 16 * 16;
            std::vector<std::uint16_t> h(n * s16, 0);
            std::vector<float> qp(s16, 0.0F);
            for (std::size_t i = 0; i < n; ++i)
                for (std::size_t j = 0; j < dim; ++j) h[i * s16 + j] = simd::f32_to_f16(normal(rng));
            std::copy(q.begin(), q.end(), qp.begin());
            k.rows_f16(h.data(), n, s16, qp.data(), got.data());
            simd::rows_f16_scalar(h.data(), n, s16, qp.data(), want.data());
            for (std::size_t i = 0; i < n; ++i) CHECK(got[i] == Approx(want[i]).margin(1e-4).epsilon(1e-5));

            const std::size_t s8 = (dim + 31) / 32 * 32;
            std::vector<std::int8_t> c(n * s8, 0);
            std::vector<std::int16_t> d(s8, 0);
            for (std::size_t i = 0; i < n; ++i)
                for (std::size_t j = 0; j < dim; ++j) c[i * s8 + j] = static_cast<std::int8_t>(i8(rng));
            for (std::size_t j = 0; j < dim; ++j) d[j] = static_cast<std::int16_t>(i8(rng));
            std::vector<std::int32_t> gi(n), wi(n);
            k.rows_i8(c.data(), n, s8, d.data(), gi.data());
            simd::rows_i8_scalar(c.data(), n, s8, d.data(), wi.data());
            CHECK(gi == wi);  // integer sums: exact
            // One int8 row against another (the HNSW graph's kernel), row by row.
            std::vector<std::int8_t> d8(s8, 0);
            for (std::size_t j = 0; j < dim; ++j) d8[j] = static_cast<std::int8_t>(d[j]);
            for (std::size_t i = 0; i < n; ++i) {
                CHECK(k.dot_i8(c.data() + i * s8, d8.data(), s8) == wi[i]);
                CHECK(simd::dot_i8_scalar(c.data() + i * s8, d8.data(), s8) == wi[i]);
            }
        }
    }
}
