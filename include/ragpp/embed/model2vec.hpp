// ragpp: StaticEmbedder, Model2Vec static embedding models ("potion" models and any
// model distilled with MinishLab's model2vec), loaded from a local folder.
//
// A text's vector is the mean of its tokens' vectors, optionally L2-normalised
// (model2vec's StaticModel.encode, https://github.com/MinishLab/model2vec):
//   ids   = tokenizer.encode(text[:max_length * median_token_length]), without special
//           tokens and without the unknown token, cut to the first max_length ids;
//   v     = (1/|ids|) sum_{t in ids} weights[t] * E[mapping[t]]   (weights and mapping
//           are optional tensors of vocabulary-quantized models; absent means 1 and t);
//   out   = v / (|v| + 1e-32) when normalize, else v; no token gives the zero vector.
// max_length defaults to 512 (model2vec's default); median_token_length is the median
// length in characters of the vocabulary's tokens, truncated to an integer.
//
// Folder layouts (the first that matches):
//   1. DIR/model.safetensors + DIR/tokenizer.json (+ DIR/config.json), tensor
//      "embeddings" (model2vec's own layout);
//   2. the same files with tensor "embedding.weight" and the settings in
//      config_sentence_transformers.json (sentence-transformers' StaticEmbedding saved
//      at the top level);
//   3. DIR/0_StaticEmbedding/ holding model.safetensors and tokenizer.json, DIR/modules.json
//      naming the modules (sentence-transformers' full layout); a module of type
//      ...StaticEmbedding in modules.json with another path is followed too.
// `normalize`: the option if given, else config.json's "normalize", else
// config_sentence_transformers.json's, else true when modules.json has a Normalize
// module, else false.
// Embeddings may be F32, F16, BF16, F64 or I8 (I8 values are used as they are, as
// model2vec does: with normalisation the scale does not matter).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Core>
#include <nlohmann/json.hpp>

#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>
#include <ragpp/embed/detail/json_file.hpp>
#include <ragpp/detail/json.hpp>
#include <ragpp/embed/embedder.hpp>
#include <ragpp/embed/safetensors.hpp>
#include <ragpp/embed/tokenizer_json.hpp>

namespace ragpp {

struct StaticEmbedderOptions {
    /// Overrides the model's own setting when set.
    std::optional<bool> normalize;
    /// Tokens kept per text (model2vec's max_length); 0 keeps every token.
    std::size_t max_length = 512;
    /// Read the weights into memory or memory-map them.
    SafeTensors::Load load = SafeTensors::Load::read;
    RolePrefixes prefixes;
};

class StaticEmbedder {
public:
    /// Loads the model in `dir`. Throws IoError when the folder or a file is missing or
    /// unreadable (no layout matches), FormatError / ParseError naming the file at fault
    /// (a missing tensor, sizes that disagree, a non-finite embedding, dimension 0),
    /// UnsupportedError for a tokenizer feature ragpp does not implement.
    explicit StaticEmbedder(const std::filesystem::path& dir, StaticEmbedderOptions options = {})
        : options_(std::move(options)) {
        namespace fs = std::filesystem;
        const auto exists = detail::path_exists;
        std::error_code ec;
        if (!fs::is_directory(dir, ec)) throw IoError("StaticEmbedder: '" + dir.string() + "' is not a folder");
        fs::path model_dir = dir;
        if (!exists(dir / "model.safetensors")) {
            model_dir = dir / "0_StaticEmbedding";
            if (const auto p = static_module_path(dir)) model_dir = dir / *p;
            if (!exists(model_dir / "model.safetensors"))
                throw IoError("StaticEmbedder: no model.safetensors in '" + dir.string() + "', its 0_StaticEmbedding/ "
                              "or a StaticEmbedding module of modules.json");
        }
        const fs::path tok = exists(model_dir / "tokenizer.json") ? model_dir / "tokenizer.json" : dir / "tokenizer.json";
        tokenizer_ = std::make_shared<const HfTokenizer>(HfTokenizer::from_file(tok));

        const SafeTensors st(model_dir / "model.safetensors", options_.load);
        std::string tensor_name;
        for (const char* cand : {"embeddings", "embedding.weight", "0"})
            if (st.contains(cand)) {
                tensor_name = cand;
                break;
            }
        if (tensor_name.empty())
            throw FormatError("StaticEmbedder: '" + st.file_name() + "' has no 'embeddings' or 'embedding.weight' tensor");
        embeddings_ = st.matrix(tensor_name);
        if (embeddings_.cols() == 0)
            throw FormatError("'" + st.file_name() + "': tensor '" + tensor_name + "' has dimension 0");
        for (Eigen::Index r = 0; r < embeddings_.rows(); ++r)
            if (!embeddings_.row(r).allFinite())
                throw FormatError("'" + st.file_name() + "': row " + std::to_string(r) + " of tensor '" + tensor_name +
                                  "' has a non-finite value");
        dtype_ = st.tensor(tensor_name).dtype;
        const std::size_t vocab = tokenizer_->vocab_size();
        if (st.contains("mapping")) {
            const auto m = st.integers("mapping");
            if (m.size() != vocab)
                throw FormatError("'" + st.file_name() + "': mapping has " + std::to_string(m.size()) +
                                  " entries for a vocabulary of " + std::to_string(vocab));
            mapping_.resize(m.size());
            for (std::size_t i = 0; i < m.size(); ++i) {
                if (m[i] < 0 || m[i] >= embeddings_.rows())
                    throw FormatError("'" + st.file_name() + "': mapping[" + std::to_string(i) + "] = " + std::to_string(m[i]) +
                                      " is not a row of the embeddings (" + std::to_string(embeddings_.rows()) + ")");
                mapping_[i] = static_cast<std::uint32_t>(m[i]);
            }
        } else if (static_cast<std::size_t>(embeddings_.rows()) != vocab) {
            throw FormatError("'" + st.file_name() + "': " + std::to_string(embeddings_.rows()) +
                              " embedding rows for a vocabulary of " + std::to_string(vocab) + " tokens ('" + tok.string() + "')");
        }
        if (st.contains("weights")) {
            weights_ = st.doubles("weights");
            if (weights_.size() != vocab)
                throw FormatError("'" + st.file_name() + "': weights has " + std::to_string(weights_.size()) +
                                  " entries for a vocabulary of " + std::to_string(vocab));
            for (std::size_t i = 0; i < weights_.size(); ++i)
                if (!std::isfinite(weights_[i]))
                    throw FormatError("'" + st.file_name() + "': weights[" + std::to_string(i) + "] is not finite");
        }
        normalize_ = options_.normalize ? *options_.normalize : model_normalize(dir, model_dir);
        std::vector<std::size_t> lens;
        lens.reserve(vocab);
        for (std::size_t i = 0; i < vocab; ++i) lens.push_back(detail::decode_utf8(tokenizer_->token(static_cast<HfTokenizer::TokenId>(i))).size());
        median_token_length_ = median_floor(lens);
        name_ = "model2vec:" + detail::folder_name(dir) + ";dim=" +
                std::to_string(dimension()) + ";normalize=" + (normalize_ ? "1" : "0") + ";max_length=" +
                std::to_string(options_.max_length) + options_.prefixes.describe();
    }

    [[nodiscard]] std::size_t dimension() const noexcept { return static_cast<std::size_t>(embeddings_.cols()); }
    [[nodiscard]] std::string name() const { return name_; }
    [[nodiscard]] bool normalize() const noexcept { return normalize_; }
    [[nodiscard]] std::size_t median_token_length() const noexcept { return median_token_length_; }
    [[nodiscard]] const HfTokenizer& tokenizer() const noexcept { return *tokenizer_; }
    /// The dtype the embeddings were stored in.
    [[nodiscard]] Dtype stored_dtype() const noexcept { return dtype_; }

    /// The token ids that are averaged for `text` (after truncation and unknown removal).
    [[nodiscard]] std::vector<HfTokenizer::TokenId> token_ids(std::string_view text) const {
        if (options_.max_length > 0) {
            const std::size_t max_chars = options_.max_length * median_token_length_;
            std::size_t i = 0, chars = 0;
            while (i < text.size() && chars < max_chars) {
                detail::next_codepoint(text, i);
                ++chars;
            }
            text = text.substr(0, i);
        }
        auto ids = tokenizer_->encode(text);
        if (const auto unk = tokenizer_->unk_id())
            ids.erase(std::remove(ids.begin(), ids.end(), *unk), ids.end());
        if (options_.max_length > 0 && ids.size() > options_.max_length) ids.resize(options_.max_length);
        return ids;
    }

    [[nodiscard]] Eigen::VectorXf embed(std::string_view text, Role role = Role::passage) const {
        const std::string& prefix = options_.prefixes.of(role);
        const auto ids = prefix.empty() ? token_ids(text) : token_ids(options_.prefixes.apply(role, text));
        Eigen::VectorXd sum = Eigen::VectorXd::Zero(embeddings_.cols());
        for (const auto t : ids) {
            const Eigen::Index row = mapping_.empty() ? static_cast<Eigen::Index>(t) : static_cast<Eigen::Index>(mapping_[t]);
            const double w = weights_.empty() ? 1.0 : weights_[t];
            sum += w * embeddings_.row(row).transpose().cast<double>();
        }
        if (!ids.empty()) sum /= static_cast<double>(ids.size());
        if (normalize_) sum /= sum.norm() + 1e-32;
        return sum.cast<float>();
    }

    [[nodiscard]] RowMatrixXf embed_batch(std::span<const std::string> texts, Role role = Role::passage) const {
        return embed_rows(*this, texts, role);
    }

private:
    static std::optional<nlohmann::json> read_json(const std::filesystem::path& p) { return detail::read_json_if_exists(p); }
    /// The string field "type" of a module entry, or "".
    static std::string module_type(const nlohmann::json& m) {
        return m.is_object() && m.contains("type") && m["type"].is_string() ? m["type"].get<std::string>() : std::string();
    }
    static std::optional<std::string> static_module_path(const std::filesystem::path& dir) {
        const auto modules = read_json(dir / "modules.json");
        if (!modules || !modules->is_array()) return std::nullopt;
        for (const auto& m : *modules)
            if (module_type(m).ends_with("StaticEmbedding") && m.contains("path") && m["path"].is_string())
                return m["path"].get<std::string>();
        return std::nullopt;
    }
    static bool model_normalize(const std::filesystem::path& dir, const std::filesystem::path& model_dir) {
        for (const auto& p : {dir / "config.json", model_dir / "config.json", dir / "config_sentence_transformers.json",
                              model_dir / "config_sentence_transformers.json"}) {
            const auto j = read_json(p);
            if (j && j->is_object() && j->contains("normalize") && (*j)["normalize"].is_boolean())
                return (*j)["normalize"].get<bool>();
        }
        const auto modules = read_json(dir / "modules.json");
        if (modules && modules->is_array())
            for (const auto& m : *modules)
                if (module_type(m).ends_with("Normalize")) return true;
        return false;
    }
    /// int(numpy.median(lens)): the mean of the two middle values for an even count, truncated.
    static std::size_t median_floor(std::vector<std::size_t> v) {
        if (v.empty()) return 1;
        std::sort(v.begin(), v.end());
        const std::size_t h = v.size() / 2;
        const std::size_t m = v.size() % 2 == 1 ? v[h] : (v[h - 1] + v[h]) / 2;
        return std::max<std::size_t>(m, 1);
    }

    StaticEmbedderOptions options_;
    std::shared_ptr<const HfTokenizer> tokenizer_;
    RowMatrixXf embeddings_;
    std::vector<std::uint32_t> mapping_;
    std::vector<double> weights_;
    Dtype dtype_ = Dtype::F32;
    bool normalize_ = false;
    std::size_t median_token_length_ = 1;
    std::string name_;
};
static_assert(Embedder<StaticEmbedder>);

}  // namespace ragpp
