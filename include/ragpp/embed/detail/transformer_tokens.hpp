// ragpp detail: the tokenizer calls and tokenizer files of the encoders in embed/transformer.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include <ragpp/core/error.hpp>
#include <ragpp/embed/detail/json_file.hpp>
#include <ragpp/embed/detail/safetensors.hpp>
#include <ragpp/embed/tokenizer_json.hpp>

namespace ragpp {

// =====================================================================================
// Tokenizer calls (with special tokens, truncation)
// =====================================================================================

namespace detail {

/// The ids (with special tokens) and type ids of one encoded text or pair.
struct EncodedInput {
    std::vector<HfTokenizer::TokenId> ids;
    std::vector<std::uint32_t> type_ids;
};

inline EncodedInput encode_single(const HfTokenizer& tok, std::string_view text, std::size_t max_length) {
    auto e = tok.encode_special(text, max_length);
    return {std::move(e.ids), std::move(e.type_ids)};
}
inline EncodedInput encode_pair(const HfTokenizer& tok, std::string_view a, std::string_view b, std::size_t max_length) {
    auto e = tok.encode_pair(a, b, max_length);
    return {std::move(e.ids), std::move(e.type_ids)};
}

/// tokenizer_config.json's model_max_length, when present and finite.
inline std::optional<std::size_t> model_max_length(const std::filesystem::path& dir) {
    const auto j = read_json_if_exists(dir / "tokenizer_config.json");
    if (!j || !j->is_object() || !j->contains("model_max_length") || !(*j)["model_max_length"].is_number()) return std::nullopt;
    const double v = (*j)["model_max_length"].get<double>();
    if (!(v >= 1) || v > 1e9) return std::nullopt;  // transformers writes 1e30 for "no limit"
    return static_cast<std::size_t>(v);
}

/// The folder's tokenizer.json (IoError naming the path when it is missing).
inline std::shared_ptr<const HfTokenizer> load_tokenizer(const std::filesystem::path& model_dir, const std::filesystem::path& root) {
    std::filesystem::path p = model_dir / "tokenizer.json";
    if (!detail::path_exists(p) && detail::path_exists(root / "tokenizer.json")) p = root / "tokenizer.json";
    if (!detail::path_exists(p))
        throw IoError("cannot open '" + (model_dir / "tokenizer.json").string() +
                      "' (no such file; ragpp reads tokenizers from tokenizer.json only)");
    return std::make_shared<const HfTokenizer>(HfTokenizer::from_file(p));
}

}  // namespace detail

}  // namespace ragpp
