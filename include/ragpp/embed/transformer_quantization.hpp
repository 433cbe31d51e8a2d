// ragpp: TransformerQuantization, how a transformer encoder (embed/transformer.hpp) computes its linear layers.
#pragma once

#include <string>
#include <string_view>

#include <ragpp/core/error.hpp>

namespace ragpp {

/// How the encoder's linear layers are computed: float32, or int8 weights (per output
/// channel) with per-row dynamic int8 activations (detail::nn::LinearI8).
enum class TransformerQuantization { none, int8 };

/// "none" or "int8" (the names of --quantize and of an index's config.json).
[[nodiscard]] constexpr std::string_view to_string(TransformerQuantization q) noexcept {
    return q == TransformerQuantization::int8 ? "int8" : "none";
}
/// The quantization named `name`; InvalidArgument otherwise.
[[nodiscard]] inline TransformerQuantization parse_transformer_quantization(std::string_view name) {
    if (name == "none") return TransformerQuantization::none;
    if (name == "int8") return TransformerQuantization::int8;
    throw InvalidArgument("quantize must be none or int8, not '" + std::string(name) + "'");
}

}  // namespace ragpp
