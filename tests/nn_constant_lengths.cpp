// Compiled, not run: the element kernels of detail/nn.hpp called with lengths known at
// compile time, as a program with a fixed hidden size may call them. GCC 12 specialises
// the kernels for the constant (IPA constant propagation) and warned, falsely, that their
// tail loops `for (; i < n; ++i)` overflow (-Waggressive-loop-optimizations): with the
// project's -Werror that was a build failure for such a program. The tails now count from
// 0; this translation unit, built with the project's warnings at the build's optimisation
// level, fails the build if one comes back.
#include <ragpp/detail/nn.hpp>

float ragpp_nn_constant_lengths(float* x, const float* r, const float* gamma, const float* beta) {
    namespace nn = ragpp::detail::nn;
    nn::layer_norm(x, 384, gamma, beta, 1e-12f);
    nn::add_layer_norm(x, r, 384, gamma, beta, 1e-12f);
    nn::gelu_erf(x, 1536);
    nn::softmax(x, 128);
    nn::tanh_inplace(x, 384);
    return x[0];
}
