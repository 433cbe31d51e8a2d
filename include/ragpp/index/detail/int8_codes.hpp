// ragpp detail: the int8 codes of VectorIndex's quantized storage, shared by its backends
// (Flat, index/vector.hpp, and Hnsw, index/hnsw.hpp), so that both store the same codes
// and scales and give the same scores for the same row.
//
//   a stored row x:  c_i = round(127 x_i / max_i |x_i|), clamped to [-127, 127], kept
//                    with the least-squares scale a = x.c / c.c (x ~ a c);
//   a query q:       d_i = round(q_i / t), t = max_i |q_i| / 127 (no least-squares step:
//                    one query, scored against every row);
//   the scan score   x.q ~ a * t * sum c_i d_i (integer dot products, detail/simd.hpp);
//   the re-score     x.q ~ a * sum c_i q_i (the dequantized row, float32 query).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace ragpp::detail {

/// Writes the codes of x[0, dim) to c[0, dim) and returns the row's scale a.
inline float int8_encode_row(const float* x, std::size_t dim, std::int8_t* c) noexcept {
    float amax = 0.0F;
    for (std::size_t j = 0; j < dim; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float scale = amax > 0.0F ? amax / 127.0F : 1.0F;
    double xc = 0.0, cc = 0.0;
    for (std::size_t j = 0; j < dim; ++j) {
        const float v = std::clamp(std::nearbyint(x[j] / scale), -127.0F, 127.0F);
        c[j] = static_cast<std::int8_t>(v);
        xc += static_cast<double>(x[j]) * v;
        cc += static_cast<double>(v) * v;
    }
    // The least-squares scale of the codes, argmin_a |x - a c|^2 = x.c / c.c: the
    // dequantized row's dot products err less than with max|x_i| / 127.
    return cc > 0.0 ? static_cast<float>(xc / cc) : scale;
}

/// Writes the query codes of q[0, dim) to d[0, dim) (int8 or int16 values in [-127,
/// 127]) and returns the query's scale t.
template <class Int>
float int8_encode_query(const float* q, std::size_t dim, Int* d) noexcept {
    float amax = 0.0F;
    for (std::size_t j = 0; j < dim; ++j) amax = std::max(amax, std::fabs(q[j]));
    const float t = amax > 0.0F ? amax / 127.0F : 1.0F;
    for (std::size_t j = 0; j < dim; ++j) d[j] = static_cast<Int>(std::clamp(std::nearbyint(q[j] / t), -127.0F, 127.0F));
    return t;
}

/// a * sum c_i q_i: the dequantized row's dot product with a float32 query.
inline float int8_rescore(const std::int8_t* c, float a, const float* q, std::size_t dim) noexcept {
    float dot = 0.0F;
    for (std::size_t j = 0; j < dim; ++j) dot += static_cast<float>(c[j]) * q[j];
    return dot * a;
}

}  // namespace ragpp::detail
