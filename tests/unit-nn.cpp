// detail/nn.hpp: every kernel on every code path this CPU runs, against plain oracles
// written here (double accumulation for the products, the std:: functions in double
// for the element kernels), on random shapes with remainders and the MiniLM-L6 shapes.
#include <ragpp/detail/nn.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace nn = ragpp::detail::nn;

namespace {

/// The code paths this CPU runs (the others are reported, not silently passed).
std::vector<nn::Isa> isas() {
    std::vector<nn::Isa> out;
    for (nn::Isa isa : nn::all_isas) {
        if (nn::supported(isa)) out.push_back(isa);
        else WARN("this CPU lacks " << nn::isa_name(isa) << ": its kernels are not tested here");
    }
    return out;
}

std::vector<float> randn(std::size_t n, std::mt19937& rng, float sd = 1.0f) {
    std::normal_distribution<float> d(0.0f, sd);
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
}

struct Shape {
    std::size_t m, n_in, n_out;
};

/// Random shapes with every dimension in [1, 70] (all remainders of 4, 6, 12, 16 and
/// 32), plus the MiniLM-L6 shapes with row counts off the micro-kernel multiples, and
/// shapes with more rows than one row block (fp32: 384 where K <= 384, else 192; int8
/// 192) and several K blocks.
std::vector<Shape> shapes(std::mt19937& rng, std::size_t count) {
    std::uniform_int_distribution<std::size_t> d(1, 70);
    std::vector<Shape> s{{1, 1, 1},       {12, 32, 32},    {13, 33, 33},  {64, 64, 64},
                         {37, 384, 384},  {29, 384, 1536}, {25, 1536, 384},
                         {131, 385, 97},  {200, 1536, 40}, {401, 200, 70},  // several row blocks and K blocks
                         {800, 40, 33},                                      // three fp32 blocks of 384 rows
                         {70, 1000, 45}};  // AMX-BF16: K padded to 1024, blocks of 768 and 256 parts
    for (std::size_t i = 0; i < count; ++i) s.push_back({d(rng), d(rng), d(rng)});
    return s;
}

std::string describe(nn::Isa isa, const Shape& s) {
    std::ostringstream o;
    o << nn::isa_name(isa) << " m=" << s.m << " n_in=" << s.n_in << " n_out=" << s.n_out;
    return o.str();
}

}  // namespace

TEST_CASE("nn: ISA selection", "[nn]") {
    CHECK(nn::supported(nn::Isa::scalar));
    CHECK(nn::usable(nn::Isa::scalar) == nn::Isa::scalar);
    for (nn::Isa isa : nn::all_isas) {
        const nn::Isa u = nn::usable(isa);
        CHECK(nn::supported(u));
        if (nn::supported(isa)) CHECK(u == isa);
    }
    CHECK(nn::supported(nn::active_isa()));
    CHECK(nn::isa_name(nn::Isa::avx512_vnni) == "avx512_vnni");
}

TEST_CASE("nn: LinearF32 equals the double-accumulation oracle on every ISA", "[nn][gemm]") {
    std::mt19937 rng(1234);
    for (const Shape& s : shapes(rng, 60)) {
        const auto w = randn(s.n_out * s.n_in, rng, 0.1f), b = randn(s.n_out, rng), x = randn(s.m * s.n_in, rng);
        // The oracle, and the bound of float rounding for the sum: 2e-5 of sum |terms|.
        std::vector<double> ref(s.m * s.n_out), mag(s.m * s.n_out);
        for (std::size_t i = 0; i < s.m; ++i)
            for (std::size_t o = 0; o < s.n_out; ++o) {
                double acc = b[o], a = std::fabs(b[o]);
                for (std::size_t k = 0; k < s.n_in; ++k) {
                    acc += double{x[i * s.n_in + k]} * w[o * s.n_in + k];
                    a += std::fabs(double{x[i * s.n_in + k]} * w[o * s.n_in + k]);
                }
                ref[i * s.n_out + o] = acc;
                mag[i * s.n_out + o] = a;
            }
        const nn::LinearF32 lin(w.data(), s.n_out, s.n_in, b.data());
        REQUIRE(lin.n_out() == s.n_out);
        REQUIRE(lin.n_in() == s.n_in);
        for (nn::Isa isa : isas())
            // K in blocks of this CPU's choice, of 192 (Intel's) and 1536 (AMD's), and of 40
            // (several blocks in most shapes): every blocking runs on every machine.
            for (const std::size_t kb : {std::size_t{0}, std::size_t{192}, std::size_t{1536}, std::size_t{40}}) {
                std::vector<float> y(s.m * s.n_out + 1, 12345.0f);  // one guard float after the end
                lin.forward(x.data(), s.m, y.data(), isa, kb);
                std::size_t bad = 0;
                for (std::size_t j = 0; j < ref.size(); ++j)
                    if (!(std::fabs(y[j] - ref[j]) <= 2e-5 * mag[j] + 1e-6)) ++bad;
                INFO(describe(isa, s) << " k_block=" << kb);
                CHECK(bad == 0);
                CHECK(y.back() == 12345.0f);
                // forward_gelu is forward then gelu_erf, to the float.
                std::vector<float> g(s.m * s.n_out + 1, 12345.0f);
                lin.forward_gelu(x.data(), s.m, g.data(), isa, kb);
                nn::gelu_erf(y.data(), s.m * s.n_out, isa);
                std::size_t differ = 0;
                for (std::size_t j = 0; j < y.size(); ++j) differ += std::memcmp(&y[j], &g[j], sizeof(float)) != 0;
                CHECK(differ == 0);
            }
    }
    SECTION("no bias, and the plain forward() is the active ISA's") {
        const std::size_t m = 19, n_in = 45, n_out = 50;
        const auto w = randn(n_out * n_in, rng), x = randn(m * n_in, rng);
        const nn::LinearF32 lin(w.data(), n_out, n_in, nullptr);
        std::vector<float> y(m * n_out), y2(m * n_out);
        lin.forward(x.data(), m, y.data());
        lin.forward(x.data(), m, y2.data(), nn::active_isa());
        CHECK(y == y2);
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t o = 0; o < n_out; ++o) {
                double acc = 0;
                for (std::size_t k = 0; k < n_in; ++k) acc += double{x[i * n_in + k]} * w[o * n_in + k];
                CHECK(y[i * n_out + o] == Approx(acc).margin(1e-4));
            }
    }
}

TEST_CASE("nn: gemm_nt and gemm_nn equal the oracle (leading dimensions, alpha, beta)", "[nn][gemm]") {
    std::mt19937 rng(99);
    std::uniform_int_distribution<std::size_t> d(1, 70), pad(0, 5);
    struct Case {
        std::size_t m, n, k;
    };
    std::vector<Case> cases{{128, 128, 32}, {128, 32, 128}, {7, 7, 64}, {200, 200, 64}};
    for (int i = 0; i < 50; ++i) cases.push_back({d(rng), d(rng), d(rng)});
    for (const Case& c : cases) {
        for (const bool nt : {true, false}) {
            const std::size_t lda = c.k + pad(rng), ldb = (nt ? c.k : c.n) + pad(rng), ldc = c.n + pad(rng);
            const auto a = randn(c.m * lda, rng), b = randn((nt ? c.n : c.k) * ldb, rng), c0 = randn(c.m * ldc, rng);
            for (const float beta : {0.0f, 0.5f}) {
                const float alpha = 0.125f;
                std::vector<double> ref(c.m * c.n), mag(c.m * c.n);
                for (std::size_t i = 0; i < c.m; ++i)
                    for (std::size_t j = 0; j < c.n; ++j) {
                        double s = 0, g = 0;
                        for (std::size_t p = 0; p < c.k; ++p) {
                            const double t = double{a[i * lda + p]} * (nt ? b[j * ldb + p] : b[p * ldb + j]);
                            s += t;
                            g += std::fabs(t);
                        }
                        ref[i * c.n + j] = alpha * s + beta * double{c0[i * ldc + j]};
                        mag[i * c.n + j] = alpha * g + std::fabs(beta * double{c0[i * ldc + j]});
                    }
                for (nn::Isa isa : isas()) {
                    std::vector<float> out = c0;
                    // beta == 0: C is not read, so NaN there must not leak into the result.
                    if (beta == 0.0f)
                        for (std::size_t i = 0; i < c.m; ++i) out[i * ldc] = std::numeric_limits<float>::quiet_NaN();
                    if (nt) nn::gemm_nt(c.m, c.n, c.k, alpha, a.data(), lda, b.data(), ldb, beta, out.data(), ldc, isa);
                    else nn::gemm_nn(c.m, c.n, c.k, alpha, a.data(), lda, b.data(), ldb, beta, out.data(), ldc, isa);
                    std::size_t bad = 0, padding_changed = 0;
                    for (std::size_t i = 0; i < c.m; ++i) {
                        for (std::size_t j = 0; j < c.n; ++j)
                            if (!(std::fabs(out[i * ldc + j] - ref[i * c.n + j]) <= 2e-5 * mag[i * c.n + j] + 1e-6)) ++bad;
                        for (std::size_t j = c.n; j < ldc; ++j)
                            if (out[i * ldc + j] != c0[i * ldc + j]) ++padding_changed;
                    }
                    INFO((nt ? "gemm_nt " : "gemm_nn ") << nn::isa_name(isa) << " m=" << c.m << " n=" << c.n
                                                        << " k=" << c.k << " beta=" << beta);
                    CHECK(bad == 0);
                    CHECK(padding_changed == 0);
                }
            }
        }
    }
}

TEST_CASE("nn: attention equals the double oracle on every ISA (lengths, heads, head sizes)", "[nn][attention]") {
    std::mt19937 rng(314);
    struct Case {
        std::size_t n, heads, d;
    };
    // Lengths around the 12-key micro-panels and the 32 / 96-query blocks; head sizes
    // around the 32-column panels (MiniLM: 12 heads of 32 over 128 tokens; base models: 64).
    std::vector<Case> cases{{1, 1, 1},   {1, 2, 32},   {2, 1, 5},   {11, 2, 32}, {12, 1, 32},  {13, 3, 32},
                            {31, 1, 16}, {32, 2, 32},  {33, 1, 33}, {95, 1, 32}, {96, 2, 32},  {97, 1, 8},
                            {128, 12, 32}, {128, 2, 64}, {130, 1, 48}, {200, 2, 31}, {5, 1, 100}, {193, 1, 64},
                            {64, 3, 1}};
    std::uniform_int_distribution<std::size_t> dn(1, 150), dh(1, 3), dd(1, 70);
    for (int i = 0; i < 12; ++i) cases.push_back({dn(rng), dh(rng), dd(rng)});
    for (const Case& c : cases) {
        // The fused-QKV layout: rows of 3 x width, q / k / v at columns 0, width, 2 width
        // (width > heads x d), and ctx rows wider than heads x d, whose other columns stay.
        const std::size_t hd = c.heads * c.d, width = hd + 3, ld = 3 * width, ldc = hd + 5;
        const float scale = 1.0f / std::sqrt(static_cast<float>(c.d));
        const auto qkv = randn(c.n * ld, rng, 1.5f), c0 = randn(c.n * ldc, rng);
        const float* q = qkv.data();
        const float* k = qkv.data() + width;
        const float* v = qkv.data() + 2 * width;
        std::vector<double> ref(c.n * hd, 0.0), mag(c.n * hd, 0.0);
        for (std::size_t h = 0; h < c.heads; ++h)
            for (std::size_t i = 0; i < c.n; ++i) {
                std::vector<double> s(c.n);
                double mx = -1e300, sum = 0;
                for (std::size_t j = 0; j < c.n; ++j) {
                    double t = 0;
                    for (std::size_t p = 0; p < c.d; ++p) t += double{q[i * ld + h * c.d + p]} * k[j * ld + h * c.d + p];
                    s[j] = t * scale;
                    mx = std::max(mx, s[j]);
                }
                for (double& t : s) sum += (t = std::exp(t - mx));
                for (std::size_t j = 0; j < c.n; ++j)
                    for (std::size_t p = 0; p < c.d; ++p) {
                        ref[i * hd + h * c.d + p] += s[j] / sum * v[j * ld + h * c.d + p];
                        mag[i * hd + h * c.d + p] += s[j] / sum * std::fabs(v[j * ld + h * c.d + p]);
                    }
            }
        for (nn::Isa isa : isas()) {
            std::vector<float> ctx = c0;
            nn::attention(c.n, c.heads, c.d, scale, q, k, v, ld, ctx.data(), ldc, isa);
            std::size_t bad = 0, other_changed = 0;
            double worst = 0;
            for (std::size_t i = 0; i < c.n; ++i) {
                for (std::size_t p = 0; p < hd; ++p) {
                    const double err = std::fabs(ctx[i * ldc + p] - ref[i * hd + p]);
                    worst = std::max(worst, err / (mag[i * hd + p] + 1e-30));
                    if (!(err <= 1e-5 * mag[i * hd + p] + 1e-6)) ++bad;
                }
                for (std::size_t p = hd; p < ldc; ++p) other_changed += ctx[i * ldc + p] != c0[i * ldc + p];
            }
            INFO(nn::isa_name(isa) << " n=" << c.n << " heads=" << c.heads << " d=" << c.d << " worst relative error "
                                   << worst);
            CHECK(bad == 0);
            CHECK(other_changed == 0);
        }
    }
}

TEST_CASE("nn: LinearI8 integer sums are exact and equal on every ISA", "[nn][int8]") {
    std::mt19937 rng(777);
    for (const Shape& s : shapes(rng, 60)) {
        const auto w = randn(s.n_out * s.n_in, rng, 0.1f), b = randn(s.n_out, rng);
        auto x = randn(s.m * s.n_in, rng);
        if (s.m > 2)
            for (std::size_t k = 0; k < s.n_in; ++k) x[s.n_in + k] = 0.0f;  // an all-zero row: scale 1, sums 0
        if (s.m > 4)
            for (std::size_t k = 0; k < s.n_in; ++k) {
                x[k] *= 1e-25f;             // tiny and huge rows: the vector paths divide there
                x[3 * s.n_in + k] *= 1e32f;  // (no Markstein correction, see quantize_row_avx512)
            }
        const nn::LinearI8 lin(w.data(), s.n_out, s.n_in, b.data());
        // The independent oracle: quantize here (symmetric, per channel / per row).
        std::vector<std::int32_t> wq(s.n_out * s.n_in), xq(s.m * s.n_in);
        std::vector<float> ws(s.n_out), xs(s.m);
        std::size_t weights_differ = 0;
        for (std::size_t o = 0; o < s.n_out; ++o) {
            float mx = 0;
            for (std::size_t k = 0; k < s.n_in; ++k) mx = std::max(mx, std::fabs(w[o * s.n_in + k]));
            ws[o] = mx > 0 ? mx / 127.0f : 1.0f;
            for (std::size_t k = 0; k < s.n_in; ++k) {
                wq[o * s.n_in + k] = static_cast<std::int32_t>(std::nearbyint(w[o * s.n_in + k] / ws[o]));
                if (lin.weight_q(o, k) != wq[o * s.n_in + k]) ++weights_differ;
            }
            CHECK(lin.weight_scale(o) == ws[o]);
        }
        CHECK(weights_differ == 0);
        for (std::size_t i = 0; i < s.m; ++i) {
            float mx = 0;
            for (std::size_t k = 0; k < s.n_in; ++k) mx = std::max(mx, std::fabs(x[i * s.n_in + k]));
            xs[i] = mx > 0 ? mx / 127.0f : 1.0f;
            for (std::size_t k = 0; k < s.n_in; ++k)
                xq[i * s.n_in + k] = static_cast<std::int32_t>(std::nearbyint(x[i * s.n_in + k] / xs[i]));
        }
        std::vector<std::int32_t> ref(s.m * s.n_out);
        for (std::size_t i = 0; i < s.m; ++i)
            for (std::size_t o = 0; o < s.n_out; ++o) {
                std::int64_t acc = 0;
                for (std::size_t k = 0; k < s.n_in; ++k) acc += std::int64_t{xq[i * s.n_in + k]} * wq[o * s.n_in + k];
                ref[i * s.n_out + o] = static_cast<std::int32_t>(acc);
            }
        std::vector<float> y_scalar(s.m * s.n_out);
        lin.forward(x.data(), s.m, y_scalar.data(), nn::Isa::scalar);
        for (nn::Isa isa : isas()) {
            INFO(describe(isa, s));
            std::vector<std::int32_t> acc(s.m * s.n_out, -1);
            std::vector<float> rs(s.m, -1.0f);
            lin.forward_i32(x.data(), s.m, acc.data(), rs.data(), isa);
            CHECK(acc == ref);
            CHECK(rs == xs);
            // Float outputs: float(sum) * sx * sw + b, equal to the scalar path's up to the
            // rounding of that last product and sum (one FMA or not): 2^-21 relative.
            std::vector<float> y(s.m * s.n_out + 1, 12345.0f);
            lin.forward(x.data(), s.m, y.data(), isa);
            std::size_t bad = 0;
            for (std::size_t i = 0; i < s.m; ++i)
                for (std::size_t o = 0; o < s.n_out; ++o) {
                    const std::size_t j = i * s.n_out + o;
                    const double prod = static_cast<double>(static_cast<float>(ref[j])) * xs[i] * ws[o];
                    const double tol = std::ldexp(std::fabs(prod) + std::fabs(b[o]), -21);
                    if (!(std::fabs(double{y[j]} - y_scalar[j]) <= tol) || !(std::fabs(y[j] - (prod + b[o])) <= tol)) ++bad;
                }
            CHECK(bad == 0);
            CHECK(y.back() == 12345.0f);
        }
    }
}

TEST_CASE("nn: LinearI8 on AMX tiles gives the VNNI kernel's numbers, bit for bit", "[nn][int8][amx]") {
    if (!nn::supported(nn::Isa::amx)) {
        WARN("this CPU (or OS) lacks AMX-INT8: the tile path is not tested here");
        CHECK(nn::usable(nn::Isa::amx) != nn::Isa::amx);
        return;
    }
    CHECK(nn::usable(nn::Isa::amx) == nn::Isa::amx);
    if (std::getenv("RAGPP_SIMD") == nullptr) CHECK(nn::active_isa() == nn::Isa::amx);
    std::mt19937 rng(4242);
    // n_in a multiple of 64 takes the tiles (65: the VNNI kernel, under the same name);
    // rows around the 16-row tiles, the 32-row blocks and the 192-row blocks; columns
    // around the 16-column tiles and the 32-column panels.
    for (std::size_t n_in : {64, 128, 384, 1536, 65})
        for (std::size_t m : {1, 16, 17, 31, 32, 33, 191, 193, 400})
            for (std::size_t n_out : {1, 17, 32, 45, 384}) {
                const auto w = randn(n_out * n_in, rng, 0.1f), b = randn(n_out, rng), x = randn(m * n_in, rng);
                const nn::LinearI8 lin(w.data(), n_out, n_in, b.data());
                INFO("m=" << m << " n_in=" << n_in << " n_out=" << n_out);
                std::vector<std::int32_t> acc_vnni(m * n_out, -1), acc_amx(m * n_out, -2);
                std::vector<float> rs_vnni(m, -1.0f), rs_amx(m, -2.0f);
                lin.forward_i32(x.data(), m, acc_vnni.data(), rs_vnni.data(), nn::Isa::avx512_vnni);
                lin.forward_i32(x.data(), m, acc_amx.data(), rs_amx.data(), nn::Isa::amx);
                CHECK(acc_amx == acc_vnni);
                CHECK(rs_amx == rs_vnni);
                for (bool gelu : {false, true}) {
                    std::vector<float> y_vnni(m * n_out + 1, 7.0f), y_amx(m * n_out + 1, 7.0f);
                    if (gelu) {
                        lin.forward_gelu(x.data(), m, y_vnni.data(), nn::Isa::avx512_vnni);
                        lin.forward_gelu(x.data(), m, y_amx.data(), nn::Isa::amx);
                    } else {
                        lin.forward(x.data(), m, y_vnni.data(), nn::Isa::avx512_vnni);
                        lin.forward(x.data(), m, y_amx.data(), nn::Isa::amx);
                    }
                    CHECK(std::memcmp(y_amx.data(), y_vnni.data(), y_amx.size() * sizeof(float)) == 0);
                    CHECK(y_amx.back() == 7.0f);
                }
            }
}

TEST_CASE("nn: LinearI8 rounds quotients next to half-integers as the scalar path does", "[nn][int8]") {
    // Rows of values (j + 1/2) sx and their float neighbours, where the rounding of x / sx
    // decides q: every path must give the scalar path's integers.
    std::mt19937 rng(31);
    std::uniform_int_distribution<int> j(-127, 126), e(-40, 40);
    const std::size_t n_in = 67, n_out = 9, m = 40;
    std::vector<float> w(n_out * n_in, 0.0f);
    for (std::size_t o = 0; o < n_out; ++o) w[o * n_in + (o * 7) % n_in] = 1.0f;  // one-hot: sums = single q
    for (std::size_t k = 0; k < n_in; ++k) w[(n_out - 1) * n_in + k] = 0.5f;       // and one dense row
    std::vector<float> x(m * n_in);
    for (std::size_t i = 0; i < m; ++i) {
        const float mx = std::ldexp(1.0f + static_cast<float>(i) / 41.0f, e(rng));
        const float sx = mx / 127.0f;
        x[i * n_in] = mx;
        for (std::size_t k = 1; k < n_in; ++k) {
            float v = (static_cast<float>(j(rng)) + 0.5f) * sx;
            if (k % 3 == 1) v = std::nextafter(v, 1e30f);
            if (k % 3 == 2) v = std::nextafter(v, -1e30f);
            x[i * n_in + k] = std::clamp(v, -mx, mx);
        }
    }
    const nn::LinearI8 lin(w.data(), n_out, n_in, nullptr);
    std::vector<std::int32_t> want(m * n_out), got(m * n_out);
    std::vector<float> rs(m), rs2(m);
    lin.forward_i32(x.data(), m, want.data(), rs.data(), nn::Isa::scalar);
    for (nn::Isa isa : isas()) {
        INFO(nn::isa_name(isa));
        lin.forward_i32(x.data(), m, got.data(), rs2.data(), isa);
        CHECK(got == want);
        CHECK(rs2 == rs);
    }
}

TEST_CASE("nn: each row of LinearF32 is the same alone as in any call", "[nn][gemm]") {
    // A text embedded alone or in a batch gets the same vector: a row's sums must not
    // depend on the rows beside it (row blocks, micro-panels, the AMX tiles' 16 or 32 rows).
    std::mt19937 rng(77);
    for (const Shape& s : std::vector<Shape>{{75, 384, 100}, {40, 1000, 33}, {19, 45, 50}}) {
        const auto w = randn(s.n_out * s.n_in, rng, 0.1f), b = randn(s.n_out, rng), x = randn(s.m * s.n_in, rng);
        for (nn::Isa isa : isas()) {
            const nn::LinearF32 lin(w.data(), s.n_out, s.n_in, b.data(), isa);
            std::vector<float> all(s.m * s.n_out), one(s.n_out), tail(7 * s.n_out);
            lin.forward(x.data(), s.m, all.data(), isa);
            std::size_t differ = 0;
            for (std::size_t i = 0; i < s.m; ++i) {
                lin.forward(x.data() + i * s.n_in, 1, one.data(), isa);
                differ += std::memcmp(one.data(), all.data() + i * s.n_out, s.n_out * sizeof(float)) != 0;
            }
            // the last 7 rows as a call of their own
            lin.forward(x.data() + (s.m - 7) * s.n_in, 7, tail.data(), isa);
            differ += std::memcmp(tail.data(), all.data() + (s.m - 7) * s.n_out, tail.size() * sizeof(float)) != 0;
            INFO(describe(isa, s));
            CHECK(differ == 0);
        }
    }
}

TEST_CASE("nn: float32 on the AMX-BF16 tiles keeps the weights exactly", "[nn][gemm][amx]") {
#if RAGPP_X86_DISPATCH && defined(__linux__)  // the tiles' code exists only there
    if (!nn::f32_on_amx(nn::usable(nn::Isa::amx))) {
        WARN("this CPU (or OS) has no AMX-BF16: the bfloat16 parts of LinearF32 are not tested here");
        return;
    }
    std::mt19937 rng(78);
    // Three bfloat16 parts sum back to every float exactly, across the exponent range.
    std::vector<float> v;
    std::uniform_real_distribution<float> mant(1.0f, 2.0f);
    for (int e = -100; e <= 100; e += 3)
        for (int k = 0; k < 8; ++k) v.push_back((k % 2 ? -1.0f : 1.0f) * std::ldexp(mant(rng), e));
    v.push_back(0.0f);
    v.push_back(1.0f + 0x1p-23f);
    v.push_back(-std::numeric_limits<float>::max());
    const std::size_t pad = (v.size() + 15) / 16 * 16 + 16;
    std::vector<std::uint16_t> parts(3 * pad, 0xABCD);
    nn::impl::split_bf16x3(v.data(), v.size(), pad, parts.data(), pad);
    std::size_t inexact = 0, dirty_pad = 0;
    for (std::size_t i = 0; i < pad; ++i) {
        float sum = 0.0f;
        for (std::size_t j = 0; j < 3; ++j) {
            const std::uint32_t bits = std::uint32_t{parts[j * pad + i]} << 16;
            float part;
            std::memcpy(&part, &bits, 4);
            sum += part;
        }
        if (i < v.size()) inexact += std::memcmp(&sum, &v[i], 4) != 0;
        else dirty_pad += sum != 0.0f;
    }
    CHECK(inexact == 0);
    CHECK(dirty_pad == 0);
    // Built for the tiles (bfloat16 parts) and run by the FMA kernels (the floats back from
    // the parts), and the other way round: the same floats as built for that path.
    for (const Shape& s : std::vector<Shape>{{37, 384, 384}, {70, 1000, 45}, {5, 33, 65}}) {
        const auto w = randn(s.n_out * s.n_in, rng, 0.1f), b = randn(s.n_out, rng), x = randn(s.m * s.n_in, rng);
        const nn::LinearF32 tiles(w.data(), s.n_out, s.n_in, b.data(), nn::Isa::amx);
        const nn::LinearF32 fma(w.data(), s.n_out, s.n_in, b.data(), nn::Isa::avx512);
        for (nn::Isa isa : {nn::Isa::avx512, nn::Isa::amx}) {
            std::vector<float> y1(s.m * s.n_out), y2(s.m * s.n_out);
            tiles.forward(x.data(), s.m, y1.data(), isa);
            fma.forward(x.data(), s.m, y2.data(), isa);
            INFO(describe(isa, s));
            CHECK(std::memcmp(y1.data(), y2.data(), y1.size() * sizeof(float)) == 0);
        }
    }
#else
    WARN("no AMX code on this platform: the bfloat16 parts of LinearF32 are not tested here");
#endif
}

TEST_CASE("nn: LinearI8 is within the quantization error bound of LinearF32", "[nn][int8]") {
    // x = sx (qx + ex), w = sw (qw + ew), |ex|, |ew| <= 1/2, so per term
    // |x w - sx sw qx qw| <= sx sw (|qx| / 2 + |qw| / 2 + 1/4): the bound summed over k.
    std::mt19937 rng(4242);
    for (const Shape& s : {Shape{9, 384, 384}, Shape{31, 1536, 384}, Shape{5, 67, 45}}) {
        const auto w = randn(s.n_out * s.n_in, rng, 0.05f), b = randn(s.n_out, rng), x = randn(s.m * s.n_in, rng);
        const nn::LinearI8 q(w.data(), s.n_out, s.n_in, b.data());
        const nn::LinearF32 f(w.data(), s.n_out, s.n_in, b.data());
        std::vector<float> yq(s.m * s.n_out), yf(s.m * s.n_out), rs(s.m);
        std::vector<std::int32_t> acc(s.m * s.n_out);
        q.forward_i32(x.data(), s.m, acc.data(), rs.data(), nn::Isa::scalar);
        f.forward(x.data(), s.m, yf.data());
        double worst_ratio = 0, mean_rel = 0;
        for (nn::Isa isa : isas()) {
            q.forward(x.data(), s.m, yq.data(), isa);
            {  // forward_gelu is forward then gelu_erf, to the float
                std::vector<float> g(s.m * s.n_out), two = yq;
                q.forward_gelu(x.data(), s.m, g.data(), isa);
                nn::gelu_erf(two.data(), two.size(), isa);
                INFO("forward_gelu " << describe(isa, s));
                CHECK(std::memcmp(g.data(), two.data(), g.size() * sizeof(float)) == 0);
            }
            std::size_t bad = 0;
            for (std::size_t i = 0; i < s.m; ++i)
                for (std::size_t o = 0; o < s.n_out; ++o) {
                    double bound = 0, mag = 0;
                    for (std::size_t k = 0; k < s.n_in; ++k) {
                        const double qx = std::nearbyint(x[i * s.n_in + k] / rs[i]);
                        const double qw = q.weight_q(o, k);
                        bound += rs[i] * double{q.weight_scale(o)} * (std::fabs(qx) / 2 + std::fabs(qw) / 2 + 0.25);
                        mag += std::fabs(double{x[i * s.n_in + k]} * w[o * s.n_in + k]);
                    }
                    const double err = std::fabs(double{yq[i * s.n_out + o]} - yf[i * s.n_out + o]);
                    if (!(err <= bound + 1e-5 * (mag + std::fabs(b[o])))) ++bad;
                    worst_ratio = std::max(worst_ratio, err / bound);
                    mean_rel += err / mag;
                }
            INFO(describe(isa, s));
            CHECK(bad == 0);
        }
        // The typical error is far below the bound (errors of opposite signs cancel).
        CHECK(worst_ratio < 0.5);
        CHECK(mean_rel / static_cast<double>(s.m * s.n_out * isas().size()) < 0.02);
    }
}

TEST_CASE("nn: element kernels equal the std:: functions within the stated tolerance", "[nn][elementwise]") {
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> wide(-12.0f, 12.0f);
    std::vector<float> xs{0.0f, -0.0f, 1e-30f, -1e-30f, 1e-6f, -1e-6f, 0.5499f, 0.55f, -0.55f, 0.5501f, 1.0f, -1.0f,
                          5.0f, -5.0f, 9.0f, -9.0f, 20.0f, -20.0f, 50.0f, -50.0f, 100.0f, -100.0f};
    for (int i = 0; i < 3000; ++i) xs.push_back(wide(rng));
    for (int i = 0; i < 1000; ++i) xs.push_back(wide(rng) / 12.0f);
    for (int i = -14000; i <= 14000; ++i) xs.push_back(static_cast<float>(i) / 2000.0f);  // [-7, 7] densely
    const std::size_t n = xs.size();
    for (nn::Isa isa : isas()) {
        INFO(nn::isa_name(isa));
        // GELU: within 3e-7 |x| absolute on every path (torch's own float formula
        // x (1 + erf(x / sqrt 2)) / 2, the scalar path, cancels in the negative tail: 3e-8 |x|
        // there), and within 3e-7 relative for x >= 0. Beyond the vector paths' clamp (5.6)
        // the value is x itself or a zero.
        for (std::size_t len : {n, std::size_t{1}, std::size_t{7}, std::size_t{13}, std::size_t{17}}) {
            std::vector<float> g(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(len));
            nn::gelu_erf(g.data(), len, isa);
            std::size_t bad = 0;
            double worst_abs = 0, worst_rel = 0;
            for (std::size_t i = 0; i < len; ++i) {
                const double x = xs[i];
                const double ref = 0.5 * x * std::erfc(-x / std::sqrt(2.0));
                const double err = std::fabs(g[i] - ref);
                if (!(err <= 3e-7 * std::fabs(x) + 1e-37)) ++bad;
                if (x >= 0 && !(err <= 3e-7 * ref + 1e-37)) ++bad;
                if (isa != nn::Isa::scalar && x >= 5.6 && g[i] != xs[i]) ++bad;
                if (isa != nn::Isa::scalar && x <= -5.6 && g[i] != 0.0f) ++bad;
                if (x != 0) worst_abs = std::max(worst_abs, err / std::fabs(x));
                if (x > 0) worst_rel = std::max(worst_rel, err / ref);
            }
            INFO("worst error / |x| " << worst_abs << ", worst relative (x > 0) " << worst_rel);
            CHECK(bad == 0);
        }
        // tanh: relative 1e-6 (values below 1e-30 exact: tanh x = x there).
        {
            std::vector<float> t = xs;
            nn::tanh_inplace(t.data(), n, isa);
            std::size_t bad = 0;
            for (std::size_t i = 0; i < n; ++i) {
                const double ref = std::tanh(double{xs[i]});
                if (!(std::fabs(t[i] - ref) <= 1e-6 * std::fabs(ref) + 1e-37)) ++bad;
            }
            CHECK(bad == 0);
        }
    }
}

TEST_CASE("nn: softmax, layer_norm and add_layer_norm equal double oracles on every ISA", "[nn][elementwise]") {
    std::mt19937 rng(11);
    std::uniform_int_distribution<std::size_t> len(1, 70);
    std::vector<std::size_t> lens{1, 2, 15, 16, 17, 128, 384, 512};
    for (int i = 0; i < 40; ++i) lens.push_back(len(rng));
    for (nn::Isa isa : isas()) {
        for (std::size_t n : lens) {
            INFO(nn::isa_name(isa) << " n=" << n);
            auto x = randn(n, rng, 4.0f);
            // Masked positions as the models write them: the float minimum, and -inf.
            if (n > 3) {
                x[1] = std::numeric_limits<float>::lowest();
                x[n - 1] = -std::numeric_limits<float>::infinity();
            }
            std::vector<float> s = x;
            nn::softmax(s.data(), n, isa);
            double mx = -std::numeric_limits<double>::infinity(), sum = 0;
            for (float v : x) mx = std::max(mx, double{v});
            for (float v : x) sum += std::exp(v - mx);
            std::size_t bad = 0;
            double total = 0;
            for (std::size_t i = 0; i < n; ++i) {
                const double ref = std::exp(x[i] - mx) / sum;
                if (!(std::fabs(s[i] - ref) <= 2e-6 * ref + 1e-37)) ++bad;
                total += s[i];
            }
            CHECK(bad == 0);
            CHECK(total == Approx(1.0).epsilon(1e-5));

            const auto gamma = randn(n, rng), beta = randn(n, rng);
            // The oracle: two passes in double over the row y (the float sum of the
            // residual and the product for add_layer_norm).
            auto check_ln = [&](const std::vector<float>& y, const std::vector<float>& l) {
                double mean = 0, var = 0;
                for (float v : y) mean += v;
                mean /= static_cast<double>(n);
                for (float v : y) var += (v - mean) * (v - mean);
                var /= static_cast<double>(n);
                std::size_t wrong = 0;
                for (std::size_t i = 0; i < n; ++i) {
                    const double z = (y[i] - mean) / std::sqrt(var + 1e-12);
                    const double ref = z * gamma[i] + beta[i];
                    if (!(std::fabs(l[i] - ref) <= 1e-6 * (std::fabs(z * gamma[i]) + std::fabs(beta[i])) + 1e-6)) ++wrong;
                }
                return wrong;
            };
            // Offset means, as residual streams have (10), and a mean 1e6 times the spread,
            // where a one-pass variance in double without the shift is off by percents.
            for (float offset : {10.0f, 1e6f}) {
                INFO("offset " << offset);
                auto y = randn(n, rng, offset > 100 ? 1.0f : 3.0f);
                for (auto& v : y) v += offset;
                std::vector<float> l = y;
                nn::layer_norm(l.data(), n, gamma.data(), beta.data(), 1e-12f, isa);
                CHECK(check_ln(y, l) == 0);
                // add_layer_norm: LN(y + r), the sum rounded to float first.
                const auto r = randn(n, rng, 2.0f);
                std::vector<float> in(n), a = y;
                for (std::size_t i = 0; i < n; ++i) in[i] = y[i] + r[i];
                nn::add_layer_norm(a.data(), r.data(), n, gamma.data(), beta.data(), 1e-12f, isa);
                CHECK(check_ln(in, a) == 0);
            }
        }
    }
}

TEST_CASE("nn: forward is thread-safe (concurrent calls, different inputs)", "[nn][threads]") {
    std::mt19937 rng(3);
    const std::size_t n_in = 96, n_out = 80;
    const auto w = randn(n_out * n_in, rng), b = randn(n_out, rng);
    const nn::LinearF32 f(w.data(), n_out, n_in, b.data());
    const nn::LinearI8 q(w.data(), n_out, n_in, b.data());
    constexpr int kThreads = 4;
    std::vector<std::vector<float>> xs, want_f(kThreads), want_q(kThreads), got_f(kThreads), got_q(kThreads);
    std::vector<std::size_t> ms;
    for (int t = 0; t < kThreads; ++t) {
        ms.push_back(50 + 37 * static_cast<std::size_t>(t));
        xs.push_back(randn(ms.back() * n_in, rng));
        want_f[t].resize(ms.back() * n_out);
        want_q[t].resize(ms.back() * n_out);
        f.forward(xs[t].data(), ms[t], want_f[t].data());
        q.forward(xs[t].data(), ms[t], want_q[t].data());
    }
    std::vector<std::thread> pool;
    for (int t = 0; t < kThreads; ++t)
        pool.emplace_back([&, t] {
            got_f[t].resize(ms[t] * n_out);
            got_q[t].resize(ms[t] * n_out);
            for (int rep = 0; rep < 20; ++rep) {
                f.forward(xs[t].data(), ms[t], got_f[t].data());
                q.forward(xs[t].data(), ms[t], got_q[t].data());
                std::vector<float> scores(ms[t] * ms[t]);
                nn::gemm_nt(ms[t], ms[t], n_in, 1.0f, xs[t].data(), n_in, xs[t].data(), n_in, 0.0f, scores.data(), ms[t]);
            }
        });
    for (auto& th : pool) th.join();
    for (int t = 0; t < kThreads; ++t) {
        CHECK(got_f[t] == want_f[t]);
        CHECK(got_q[t] == want_q[t]);
    }
}

TEST_CASE("nn: layers are copyable and empty layers are harmless", "[nn]") {
    std::mt19937 rng(8);
    const auto w = randn(40 * 24, rng), x = randn(3 * 24, rng);
    const nn::LinearF32 f(w.data(), 40, 24, nullptr);
    const nn::LinearF32 g = f;  // NOLINT(performance-unnecessary-copy-initialization)
    std::vector<float> a(3 * 40), c(3 * 40);
    f.forward(x.data(), 3, a.data());
    g.forward(x.data(), 3, c.data());
    CHECK(a == c);
    const nn::LinearI8 qi(w.data(), 40, 24, nullptr);
    const nn::LinearI8 qj = qi;  // NOLINT(performance-unnecessary-copy-initialization)
    qi.forward(x.data(), 3, a.data());
    qj.forward(x.data(), 3, c.data());
    CHECK(a == c);
    const nn::LinearF32 empty;
    empty.forward(x.data(), 0, a.data());
    const nn::LinearI8 empty8;
    empty8.forward(x.data(), 0, a.data());
    for (nn::Isa isa : isas()) f.forward(x.data(), 0, a.data(), isa);
    CHECK(empty.n_out() == 0);
}
