// ragpp detail: the checked tensor reader and the linear layer of the encoder in embed/transformer.hpp.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ragpp/core/error.hpp>
#include <ragpp/detail/nn.hpp>
#include <ragpp/embed/safetensors.hpp>
#include <ragpp/embed/transformer_quantization.hpp>

namespace ragpp {

namespace detail {

/// Reads float tensors of a safetensors file, checking each against the shape the
/// config implies. Names are looked up with the detected prefix ("bert.", "roberta."
/// or none) unless `absolute`.
class TensorReader {
public:
    TensorReader(const SafeTensors& st, std::string prefix, std::string config_source)
        : st_(st), prefix_(std::move(prefix)), config_(std::move(config_source)) {}

    /// The prefix in front of "embeddings.word_embeddings.weight" (FormatError when no
    /// tensor has that name).
    static std::string detect_prefix(const SafeTensors& st) {
        static constexpr std::string_view key = "embeddings.word_embeddings.weight";
        std::string found;
        bool any = false;
        for (const auto& n : st.names())
            if (n.ends_with(key)) {
                const std::string p = n.substr(0, n.size() - key.size());
                if (!p.empty() && p.back() != '.') continue;
                if (!any || p.size() < found.size()) found = p;  // the shortest: the encoder itself
                any = true;
            }
        if (!any)
            throw FormatError("'" + st.file_name() + "': missing tensor 'embeddings.word_embeddings.weight' (with or without a "
                              "'bert.' / 'roberta.' prefix)");
        return found;
    }

    [[nodiscard]] const std::string& prefix() const noexcept { return prefix_; }
    [[nodiscard]] bool has(std::string_view name, bool absolute = false) const {
        return st_.contains(absolute ? std::string(name) : prefix_ + std::string(name));
    }

    /// The view of a tensor, checked: present, a float dtype (F32, F16, BF16), `shape`.
    [[nodiscard]] const TensorView& view(std::string_view name, std::vector<std::size_t> shape, bool absolute = false) const {
        const std::string full = absolute ? std::string(name) : prefix_ + std::string(name);
        if (!st_.contains(full))
            throw FormatError("'" + st_.file_name() + "': missing tensor '" + full + "' (expected shape " + fmt(shape) +
                              " from '" + config_ + "')");
        const TensorView& t = st_.tensor(full);
        if (t.dtype != Dtype::F32 && t.dtype != Dtype::F16 && t.dtype != Dtype::BF16) {
            std::string dt = "?";
            for (const auto& [n, d] : dtype_names)
                if (d == t.dtype) dt = std::string(n);
            throw FormatError("'" + st_.file_name() + "': tensor '" + full + "' has dtype " + dt +
                              " (ragpp reads F32, F16 or BF16 weights)");
        }
        if (t.shape != shape)
            throw FormatError("'" + st_.file_name() + "': tensor '" + full + "' has shape " + fmt(t.shape) + ", but '" +
                              config_ + "' implies " + fmt(shape));
        return t;
    }
    /// The tensor converted to float32 (F16 and BF16 widened exactly).
    [[nodiscard]] std::vector<float> floats(std::string_view name, std::vector<std::size_t> shape, bool absolute = false) const {
        const TensorView& t = view(name, std::move(shape), absolute);
        std::vector<float> out(t.elements());
        st_.to_floats(t, out);
        return out;
    }
    [[nodiscard]] const SafeTensors& file() const noexcept { return st_; }

    static std::string fmt(const std::vector<std::size_t>& s) {
        std::string out = "[";
        for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
        return out + "]";
    }

private:
    const SafeTensors& st_;
    std::string prefix_;
    std::string config_;
};

/// One linear layer, float32 or int8 (detail::nn::LinearF32 / detail::nn::LinearI8).
class Dense {
public:
    Dense() = default;
    Dense(const std::vector<float>& w, std::size_t n_out, std::size_t n_in, const std::vector<float>& b, TransformerQuantization q)
        : int8_(q == TransformerQuantization::int8) {
        if (int8_) i8_ = detail::nn::LinearI8(w.data(), n_out, n_in, b.data());
        else f32_ = detail::nn::LinearF32(w.data(), n_out, n_in, b.data());
    }
    [[nodiscard]] std::size_t n_out() const noexcept { return int8_ ? i8_.n_out() : f32_.n_out(); }
    void forward(const float* x, std::size_t m, float* y) const {
        if (int8_) i8_.forward(x, m, y);
        else f32_.forward(x, m, y);
    }
    /// y = GELU(x W^T + b), the GELU applied in the product's epilogue.
    void forward_gelu(const float* x, std::size_t m, float* y) const {
        if (int8_) i8_.forward_gelu(x, m, y);
        else f32_.forward_gelu(x, m, y);
    }

private:
    bool int8_ = false;
    detail::nn::LinearF32 f32_;
    detail::nn::LinearI8 i8_;
};

}  // namespace detail

}  // namespace ragpp
