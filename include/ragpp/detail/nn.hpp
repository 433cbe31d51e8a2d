// ragpp detail: the numeric kernels of transformer encoders (embed/transformer.hpp).
//
// CONTRACT (the API the model code calls; the bodies below are the plain reference
// versions, to be replaced by packed, runtime-dispatched kernels that give the same
// results within float rounding):
//
// - LinearF32: y[m, n_out] = x[m, n_in] * W^T + bias, W row-major [n_out, n_in] (the
//   layout of torch.nn.Linear.weight). Built once from the weights (packing happens
//   there), then forward() is const and thread-safe.
// - LinearI8: the same layer, weights quantized per output channel to int8 at build
//   time, activations quantized per row at each call (dynamic quantization).
// - gemm_nt / gemm_nn: small general products for attention (row-major, leading dims).
// - gelu_erf, softmax, layer_norm, tanh_inplace: row-wise element kernels.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <ragpp/core/error.hpp>

namespace ragpp::detail::nn {

/// y = x W^T + b for a torch-layout weight matrix.
class LinearF32 {
public:
    LinearF32() = default;
    /// `weights`: n_out rows of n_in floats; `bias`: n_out floats or nullptr (no bias).
    LinearF32(const float* weights, std::size_t n_out, std::size_t n_in, const float* bias)
        : n_out_(n_out), n_in_(n_in), w_(weights, weights + n_out * n_in),
          b_(bias ? std::vector<float>(bias, bias + n_out) : std::vector<float>(n_out, 0.0f)) {}

    [[nodiscard]] std::size_t n_out() const noexcept { return n_out_; }
    [[nodiscard]] std::size_t n_in() const noexcept { return n_in_; }

    /// x: m rows of n_in floats (contiguous); y: m rows of n_out floats (contiguous).
    void forward(const float* x, std::size_t m, float* y) const {
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t o = 0; o < n_out_; ++o) {
                float s = 0;
                const float* w = w_.data() + o * n_in_;
                for (std::size_t k = 0; k < n_in_; ++k) s += x[i * n_in_ + k] * w[k];
                y[i * n_out_ + o] = s + b_[o];
            }
    }

private:
    std::size_t n_out_ = 0, n_in_ = 0;
    std::vector<float> w_, b_;
};

/// The same layer with int8 weights (per output channel) and per-row dynamic int8
/// activations. Reference version: symmetric quantization, int32 sums.
class LinearI8 {
public:
    LinearI8() = default;
    LinearI8(const float* weights, std::size_t n_out, std::size_t n_in, const float* bias)
        : n_out_(n_out), n_in_(n_in), w_(n_out * n_in), scale_(n_out),
          b_(bias ? std::vector<float>(bias, bias + n_out) : std::vector<float>(n_out, 0.0f)) {
        for (std::size_t o = 0; o < n_out; ++o) {
            float mx = 0;
            for (std::size_t k = 0; k < n_in; ++k) mx = std::max(mx, std::fabs(weights[o * n_in + k]));
            const float s = mx > 0 ? mx / 127.0f : 1.0f;
            scale_[o] = s;
            for (std::size_t k = 0; k < n_in; ++k)
                w_[o * n_in + k] = static_cast<std::int8_t>(std::lrint(weights[o * n_in + k] / s));
        }
    }
    [[nodiscard]] std::size_t n_out() const noexcept { return n_out_; }
    [[nodiscard]] std::size_t n_in() const noexcept { return n_in_; }

    void forward(const float* x, std::size_t m, float* y) const {
        std::vector<std::int8_t> q(n_in_);
        for (std::size_t i = 0; i < m; ++i) {
            float mx = 0;
            for (std::size_t k = 0; k < n_in_; ++k) mx = std::max(mx, std::fabs(x[i * n_in_ + k]));
            const float sx = mx > 0 ? mx / 127.0f : 1.0f;
            for (std::size_t k = 0; k < n_in_; ++k) q[k] = static_cast<std::int8_t>(std::lrint(x[i * n_in_ + k] / sx));
            for (std::size_t o = 0; o < n_out_; ++o) {
                std::int32_t s = 0;
                for (std::size_t k = 0; k < n_in_; ++k) s += std::int32_t{q[k]} * std::int32_t{w_[o * n_in_ + k]};
                y[i * n_out_ + o] = static_cast<float>(s) * sx * scale_[o] + b_[o];
            }
        }
    }

private:
    std::size_t n_out_ = 0, n_in_ = 0;
    std::vector<std::int8_t> w_;
    std::vector<float> scale_, b_;
};

/// C[m, n] = alpha * A[m, k] * B[n, k]^T + beta * C.
inline void gemm_nt(std::size_t m, std::size_t n, std::size_t k, float alpha, const float* a, std::size_t lda,
                    const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc) {
    for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            float s = 0;
            for (std::size_t p = 0; p < k; ++p) s += a[i * lda + p] * b[j * ldb + p];
            c[i * ldc + j] = alpha * s + (beta == 0.0f ? 0.0f : beta * c[i * ldc + j]);
        }
}

/// C[m, n] = alpha * A[m, k] * B[k, n] + beta * C.
inline void gemm_nn(std::size_t m, std::size_t n, std::size_t k, float alpha, const float* a, std::size_t lda,
                    const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc) {
    for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            float s = 0;
            for (std::size_t p = 0; p < k; ++p) s += a[i * lda + p] * b[p * ldb + j];
            c[i * ldc + j] = alpha * s + (beta == 0.0f ? 0.0f : beta * c[i * ldc + j]);
        }
}

/// x <- x * (1 + erf(x / sqrt(2))) / 2 (the exact GELU of BERT's "gelu").
inline void gelu_erf(float* x, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) x[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * 0.70710678118654752f));
}

/// x <- softmax(x), one row, max subtracted first.
inline void softmax(float* x, std::size_t n) {
    if (n == 0) return;
    const float mx = *std::max_element(x, x + n);
    float s = 0;
    for (std::size_t i = 0; i < n; ++i) s += (x[i] = std::exp(x[i] - mx));
    for (std::size_t i = 0; i < n; ++i) x[i] /= s;
}

/// x <- (x - mean) / sqrt(var + eps) * gamma + beta, one row (biased variance, as torch).
inline void layer_norm(float* x, std::size_t n, const float* gamma, const float* beta, float eps) {
    double mean = 0, var = 0;
    for (std::size_t i = 0; i < n; ++i) mean += x[i];
    mean /= static_cast<double>(n);
    for (std::size_t i = 0; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
    var /= static_cast<double>(n);
    const float inv = static_cast<float>(1.0 / std::sqrt(var + eps));
    for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>(x[i] - mean) * inv * gamma[i] + beta[i];
}

inline void tanh_inplace(float* x, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) x[i] = std::tanh(x[i]);
}

}  // namespace ragpp::detail::nn
