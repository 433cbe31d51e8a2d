// ragpp: TransformerQuantization, how a transformer encoder (embed/transformer.hpp) computes its linear layers.
#pragma once

namespace ragpp {

/// How the encoder's linear layers are computed: float32, or int8 weights (per output
/// channel) with per-row dynamic int8 activations (detail::nn::LinearI8).
enum class TransformerQuantization { none, int8 };

}  // namespace ragpp
