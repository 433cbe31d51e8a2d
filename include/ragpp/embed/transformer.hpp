// ragpp: transformer encoders (BERT and XLM-RoBERTa) loaded from Hugging Face /
// sentence-transformers folders, and TransformerEmbedder (an Embedder).
//
// The forward pass follows the equations of transformers' modeling_bert.py and
// modeling_xlm_roberta.py (BertEmbeddings, BertSelfAttention, BertSelfOutput,
// BertIntermediate, BertOutput, BertPooler), post-LayerNorm, in float32:
//   x0  = LayerNorm(word[id] + type[type_id] + position[pos])
//         pos = i (BERT) or padding_idx + 1 + i (XLM-R: create_position_ids_from_input_ids,
//         i = index among the real tokens)
//   per layer:  q, k, v = x Wq^T + bq, ...   (one fused [3H, H] product)
//               per head: A = softmax(q k^T / sqrt(d_head)), ctx = A v
//               x = LayerNorm(ctx Wo^T + bo + x)
//               x = LayerNorm(gelu_erf(x Wi^T + bi) Wo2^T + bo2 + x)
//   pooler:     tanh(x[0] Wp^T + bp)
// Every matrix product and element kernel goes through detail/nn.hpp.
//
// Batches are not padded: the sequences of a batch are packed one after another (every
// linear layer runs once on all the batch's tokens) and attention runs per sequence over
// its own keys only. This is the same result as torch's padded batch with the additive
// mask (1 - mask) * finfo.min: exp(min - max) is exactly 0 in float32, so padded keys
// have zero weight there, and here they do not exist. A text embedded in a batch gives
// the vector it gets alone (up to the kernels' summation order, about 1e-7).
//
// sentence-transformers folders (https://sbert.net, models.Transformer / Pooling /
// Normalize as saved by SentenceTransformer.save):
//   modules.json             the module list; Transformer, Pooling and Normalize are
//                            supported, any other module (Dense, ...) is an UnsupportedError
//                            naming it. No modules.json: a plain Hugging Face model, with
//                            mean pooling and no normalization (what sentence-transformers
//                            itself does with such a folder: "Creating a new one with mean
//                            pooling").
//   1_Pooling/config.json    pooling_mode_cls_token, _max_tokens, _mean_tokens,
//                            _mean_sqrt_len_tokens; several on at once are concatenated in
//                            sentence-transformers' order: cls, max, mean, mean_sqrt_len.
//                            weightedmean, lasttoken and include_prompt = false are refused.
//   sentence_bert_config.json  max_seq_length (tokens, special tokens included; capped
//                            by the position embeddings); when absent: min(position
//                            capacity, tokenizer_config.json's model_max_length, or 512
//                            when that is absent), as sentence-transformers' Transformer.
//                            do_lower_case = true is refused (UnsupportedError).
//   config_sentence_transformers.json  "prompts": {"query": ..., "passage" or "document": ...}
//                            become the role prefixes unless the options give prefixes.
// Truncation: texts are cut to max_seq_length tokens including the special tokens, as
// the tokenizer call of sentence-transformers (truncation=True, max_length) does.
//
// RAGPP_TRANSFORMER_STAGE_TIMES, defined before this header (bench_transformer), times
// the stages of the layers: embed/detail/stage_times.hpp.
#pragma once


#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <Eigen/Core>
#include <nlohmann/json.hpp>

#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>
#include <ragpp/embed/detail/json_file.hpp>
#include <ragpp/detail/json.hpp>
#include <ragpp/detail/nn.hpp>
#include <ragpp/detail/parallel.hpp>
#include <ragpp/embed/detail/transformer_tokens.hpp>
#include <ragpp/embed/detail/stage_times.hpp>
#include <ragpp/embed/detail/transformer_weights.hpp>
#include <ragpp/embed/embedder.hpp>
#include <ragpp/embed/safetensors.hpp>
#include <ragpp/embed/tokenizer_json.hpp>
#include <ragpp/embed/transformer_quantization.hpp>

namespace ragpp {

enum class TransformerFamily { bert, xlm_roberta };

// =====================================================================================
// config.json
// =====================================================================================

/// The fields of a Hugging Face config.json that the encoder needs.
struct TransformerConfig {
    TransformerFamily family = TransformerFamily::bert;
    std::string model_type;
    std::size_t hidden_size = 0;
    std::size_t num_hidden_layers = 0;
    std::size_t num_attention_heads = 0;
    std::size_t intermediate_size = 0;
    std::size_t max_position_embeddings = 0;
    std::size_t type_vocab_size = 0;
    std::size_t vocab_size = 0;
    std::size_t pad_token_id = 0;
    float layer_norm_eps = 1e-12f;
    /// Labels of a classification head: num_labels, names from id2label when given
    /// ("LABEL_i" otherwise). Hugging Face's default without either key is 2.
    std::size_t num_labels = 2;
    std::vector<std::string> labels;
    std::vector<std::string> architectures;
    std::string source;  ///< the file it was read from

    [[nodiscard]] std::size_t head_dim() const noexcept { return hidden_size / num_attention_heads; }
    /// The longest token sequence the position embeddings cover: max_position_embeddings
    /// for BERT, max_position_embeddings - padding_idx - 1 for XLM-R (514 -> 512).
    [[nodiscard]] std::size_t max_tokens() const noexcept {
        if (family == TransformerFamily::bert) return max_position_embeddings;
        return max_position_embeddings > pad_token_id + 1 ? max_position_embeddings - pad_token_id - 1 : 0;
    }

    /// The most labels a classification head may declare.
    static constexpr std::size_t max_labels = std::size_t{1} << 20;

    static TransformerConfig from_file(const std::filesystem::path& path) {
        return from_json(detail::read_json_file(path), path.string());
    }

    /// Throws FormatError (missing or ill-typed field) or UnsupportedError (model_type,
    /// hidden_act, position_embedding_type), naming `source` and the field.
    static TransformerConfig from_json(const nlohmann::json& j, const std::string& source) {
        TransformerConfig c;
        c.source = source;
        auto bad = [&](const std::string& what) -> void { throw FormatError("'" + source + "': " + what); };
        if (!j.is_object()) bad("not a JSON object");
        auto size_field = [&](const char* key, std::optional<std::size_t> fallback) -> std::size_t {
            if (!j.contains(key)) {
                if (fallback) return *fallback;
                bad(std::string("has no field '") + key + "'");
            }
            if (!j[key].is_number_unsigned()) bad(std::string("field '") + key + "' is not a non-negative integer");
            const auto v = j[key].get<std::uint64_t>();
            if (v > (std::uint64_t{1} << 32)) bad(std::string("field '") + key + "' is absurdly large");
            return static_cast<std::size_t>(v);
        };
        if (!j.contains("model_type") || !j["model_type"].is_string()) bad("has no string field 'model_type'");
        c.model_type = j["model_type"].get<std::string>();
        if (c.model_type == "bert") c.family = TransformerFamily::bert;
        else if (c.model_type == "xlm-roberta" || c.model_type == "roberta") c.family = TransformerFamily::xlm_roberta;
        else
            throw UnsupportedError("'" + source + "': model_type '" + c.model_type +
                                   "' is not supported (ragpp runs bert, xlm-roberta and roberta)");
        c.hidden_size = size_field("hidden_size", std::nullopt);
        c.num_hidden_layers = size_field("num_hidden_layers", std::nullopt);
        c.num_attention_heads = size_field("num_attention_heads", std::nullopt);
        c.intermediate_size = size_field("intermediate_size", std::nullopt);
        c.max_position_embeddings = size_field("max_position_embeddings", std::nullopt);
        c.vocab_size = size_field("vocab_size", std::nullopt);
        c.type_vocab_size = size_field("type_vocab_size", std::size_t{2});
        c.pad_token_id = size_field("pad_token_id", c.family == TransformerFamily::bert ? 0 : 1);
        if (c.hidden_size == 0 || c.num_attention_heads == 0 || c.hidden_size % c.num_attention_heads != 0)
            bad("hidden_size " + std::to_string(c.hidden_size) + " is not a positive multiple of num_attention_heads " +
                std::to_string(c.num_attention_heads));
        if (c.intermediate_size == 0 || c.vocab_size == 0 || c.max_position_embeddings == 0 || c.type_vocab_size == 0)
            bad("intermediate_size, vocab_size, max_position_embeddings and type_vocab_size must be positive");
        if (c.family == TransformerFamily::xlm_roberta && c.max_tokens() == 0)
            bad("max_position_embeddings " + std::to_string(c.max_position_embeddings) + " leaves no position after pad_token_id " +
                std::to_string(c.pad_token_id));
        if (j.contains("layer_norm_eps")) {
            if (!j["layer_norm_eps"].is_number() || !(j["layer_norm_eps"].get<double>() > 0))
                bad("field 'layer_norm_eps' is not a positive number");
            c.layer_norm_eps = static_cast<float>(j["layer_norm_eps"].get<double>());
        }
        const std::string act = j.contains("hidden_act") && j["hidden_act"].is_string() ? j["hidden_act"].get<std::string>()
                                                                                          : std::string("gelu");
        if (act != "gelu")
            throw UnsupportedError("'" + source + "': hidden_act '" + act + "' is not supported (ragpp runs \"gelu\", the exact erf GELU)");
        if (j.contains("position_embedding_type") && j["position_embedding_type"].is_string() &&
            j["position_embedding_type"].get<std::string>() != "absolute")
            throw UnsupportedError("'" + source + "': position_embedding_type '" +
                                   j["position_embedding_type"].get<std::string>() + "' is not supported (only \"absolute\")");
        if (j.contains("architectures") && j["architectures"].is_array())
            for (const auto& a : j["architectures"])
                if (a.is_string()) c.architectures.push_back(a.get<std::string>());
        if (j.contains("id2label") && j["id2label"].is_object()) {
            const std::size_t n = j["id2label"].size();
            c.labels.assign(n, std::string());
            for (const auto& [k, v] : j["id2label"].items()) {
                std::size_t idx = n;
                const auto [end, err] = std::from_chars(k.data(), k.data() + k.size(), idx);
                if (err != std::errc() || end != k.data() + k.size() || k.empty())
                    bad("id2label key '" + k + "' is not an integer");
                if (idx >= n) bad("id2label key '" + k + "' is out of range");
                c.labels[idx] = v.is_string() ? v.get<std::string>() : v.dump();
            }
            c.num_labels = n;
        }
        if (j.contains("num_labels")) c.num_labels = size_field("num_labels", std::nullopt);
        // Labels are made for every class below: bounded before that allocation (a
        // classification head has one row per label, so real heads are far smaller).
        if (c.num_labels > max_labels)
            bad("field 'num_labels' is " + std::to_string(c.num_labels) + ", more than ragpp's limit of " +
                std::to_string(max_labels));
        if (c.labels.size() != c.num_labels) {
            c.labels.clear();
            for (std::size_t i = 0; i < c.num_labels; ++i) c.labels.push_back("LABEL_" + std::to_string(i));
        }
        return c;
    }
};

// =====================================================================================
// Weights
// =====================================================================================

struct TransformerModelOptions {
    TransformerQuantization quantize = TransformerQuantization::none;
    /// Memory-map model.safetensors (default) or read it into memory.
    SafeTensors::Load load = SafeTensors::Load::mmap;
    /// forward() runs a batch's sequences by groups of at most this many tokens (a longer
    /// sequence alone), each group through every layer while its activations are in the
    /// core's caches; 0: the whole batch at once. The vectors do not depend on it (to the
    /// bit); the speed does: 384 measured best on a Zen 4 core (1 MB L2) with MiniLM-L6
    /// (docs/transformers.md, `bench_transformer --group-tokens`).
    std::size_t group_tokens = 384;
};

/// The encoder: embeddings, layers and (when the file has one) the pooler. Immutable
/// after construction; forward() is const and may run on many threads at once, each
/// with its own Workspace.
class TransformerModel {
public:
    using TokenId = HfTokenizer::TokenId;

    /// One input sequence: token ids with special tokens, and their token type ids
    /// (empty: all 0). Views: they must outlive the forward() call.
    struct Input {
        std::span<const TokenId> ids;
        std::span<const std::uint32_t> type_ids;
    };

    /// Per-thread scratch memory, reused across calls.
    struct Workspace {
        std::vector<float> x, qkv, ctx, tmp, inter;
    };

    /// Loads `dir`/config.json and `dir`/model.safetensors.
    explicit TransformerModel(const std::filesystem::path& dir, TransformerModelOptions options = {})
        : TransformerModel(TransformerConfig::from_file(dir / "config.json"),
                           std::make_shared<const SafeTensors>(open_weights(dir / "model.safetensors", options.load)),
                           options) {}

    /// From a parsed config and an open safetensors file (kept alive when the word
    /// embeddings are read from it in place).
    TransformerModel(TransformerConfig config, std::shared_ptr<const SafeTensors> weights, TransformerModelOptions options = {})
        : config_(std::move(config)), options_(options) {
        const TransformerConfig& c = config_;
        detail::TensorReader r(*weights, detail::TensorReader::detect_prefix(*weights), c.source);
        prefix_ = r.prefix();
        const std::size_t H = c.hidden_size, I = c.intermediate_size;
        // Word embeddings: F32 ones are read in place from the (mapped) file, the others
        // converted once.
        const TensorView& word = r.view("embeddings.word_embeddings.weight", {c.vocab_size, H});
        if (word.dtype == Dtype::F32) {
            word_in_file_ = word.bytes.data();
            file_ = weights;
        } else {
            word_ = r.floats("embeddings.word_embeddings.weight", {c.vocab_size, H});
        }
        position_ = r.floats("embeddings.position_embeddings.weight", {c.max_position_embeddings, H});
        type_ = r.floats("embeddings.token_type_embeddings.weight", {c.type_vocab_size, H});
        emb_ln_g_ = ln(r, "embeddings.LayerNorm", true, H);
        emb_ln_b_ = ln(r, "embeddings.LayerNorm", false, H);
        layers_.resize(c.num_hidden_layers);
        for (std::size_t l = 0; l < c.num_hidden_layers; ++l) {
            const std::string p = "encoder.layer." + std::to_string(l) + ".";
            Layer& L = layers_[l];
            std::vector<float> w(3 * H * H), b(3 * H);
            const char* qkv[] = {"query", "key", "value"};
            for (std::size_t k = 0; k < 3; ++k) {
                const auto wk = r.floats(p + "attention.self." + qkv[k] + ".weight", {H, H});
                const auto bk = r.floats(p + "attention.self." + qkv[k] + ".bias", {H});
                std::copy(wk.begin(), wk.end(), w.begin() + static_cast<std::ptrdiff_t>(k * H * H));
                std::copy(bk.begin(), bk.end(), b.begin() + static_cast<std::ptrdiff_t>(k * H));
            }
            L.qkv = detail::Dense(w, 3 * H, H, b, options_.quantize);
            L.attn_out = dense(r, p + "attention.output.dense", H, H);
            L.ln1_g = ln(r, p + "attention.output.LayerNorm", true, H);
            L.ln1_b = ln(r, p + "attention.output.LayerNorm", false, H);
            L.inter = dense(r, p + "intermediate.dense", I, H);
            L.out = dense(r, p + "output.dense", H, I);
            L.ln2_g = ln(r, p + "output.LayerNorm", true, H);
            L.ln2_b = ln(r, p + "output.LayerNorm", false, H);
        }
        if (r.has("pooler.dense.weight")) {
            // The pooler and heads stay in float32 (one row per sequence: cheap).
            pooler_ = detail::nn::LinearF32(r.floats("pooler.dense.weight", {H, H}).data(), H, H,
                                    r.floats("pooler.dense.bias", {H}).data());
            has_pooler_ = true;
        }
    }

    [[nodiscard]] const TransformerConfig& config() const noexcept { return config_; }
    [[nodiscard]] std::size_t hidden_size() const noexcept { return config_.hidden_size; }
    /// The longest input sequence (special tokens included).
    [[nodiscard]] std::size_t max_tokens() const noexcept {
        return std::min(config_.max_tokens(), config_.max_position_embeddings);
    }
    [[nodiscard]] bool has_pooler() const noexcept { return has_pooler_; }
    /// The tensor name prefix found in the file ("", "bert." or "roberta.").
    [[nodiscard]] const std::string& prefix() const noexcept { return prefix_; }
    [[nodiscard]] TransformerQuantization quantization() const noexcept { return options_.quantize; }

    /// The last hidden states of `batch`, packed: the rows of sequence b are
    /// offsets[b] .. offsets[b+1] of `hidden` (hidden_size floats each). `offsets` gets
    /// batch.size() + 1 entries. Throws InvalidArgument for a token id outside the
    /// vocabulary, a type id outside type_vocab_size, a sequence longer than
    /// max_tokens(), or type ids of another length than the ids, before any work
    /// (`hidden` is then unchanged).
    void forward(std::span<const Input> batch, Workspace& ws, std::vector<float>& hidden, std::vector<std::size_t>& offsets) const {
        const TransformerConfig& c = config_;
        const std::size_t H = c.hidden_size;
        offsets.assign(1, 0);
        for (std::size_t b = 0; b < batch.size(); ++b) {
            const Input& in = batch[b];
            if (!in.type_ids.empty() && in.type_ids.size() != in.ids.size())
                throw InvalidArgument("TransformerModel::forward: sequence " + std::to_string(b) + " has " +
                                      std::to_string(in.ids.size()) + " ids but " + std::to_string(in.type_ids.size()) +
                                      " type ids");
            if (in.ids.size() > max_tokens())
                throw InvalidArgument("TransformerModel::forward: sequence " + std::to_string(b) + " has " +
                                      std::to_string(in.ids.size()) + " tokens, more than the model's " +
                                      std::to_string(max_tokens()) + " positions");
            offsets.push_back(offsets.back() + in.ids.size());
        }
        // Every id checked before any work: a failed call leaves `hidden` as it was.
        for (std::size_t b = 0; b < batch.size(); ++b) {
            const Input& in = batch[b];
            for (std::size_t i = 0; i < in.ids.size(); ++i) {
                if (in.ids[i] >= c.vocab_size)
                    throw InvalidArgument("TransformerModel::forward: token id " + std::to_string(in.ids[i]) +
                                          " is outside the vocabulary (" + std::to_string(c.vocab_size) + ")");
                if (!in.type_ids.empty() && in.type_ids[i] >= c.type_vocab_size)
                    throw InvalidArgument("TransformerModel::forward: token type id " + std::to_string(in.type_ids[i]) +
                                          " is outside type_vocab_size (" + std::to_string(c.type_vocab_size) + ")");
            }
        }
        const std::size_t m = offsets.back();
        hidden.resize(m * H);
        // The sequences by groups of at most options_.group_tokens rows (a longer sequence
        // alone): a group goes through every layer while its activations stay in the
        // core's caches, instead of the whole batch streaming through memory at each stage.
        const std::size_t group = options_.group_tokens == 0 ? m : options_.group_tokens;
        for (std::size_t g0 = 0; g0 < batch.size();) {
            std::size_t g1 = g0 + 1;
            while (g1 < batch.size() && offsets[g1 + 1] - offsets[g0] <= group) ++g1;
            forward_group(batch.subspan(g0, g1 - g0), offsets.data() + g0, ws, hidden.data() + offsets[g0] * H);
            g0 = g1;
        }
    }

    /// BertPooler: tanh(W x + b) of one row (the first token's hidden state). Throws
    /// InvalidArgument when the model has no pooler.
    void pool(const float* first_token, float* out) const {
        if (!has_pooler_) throw InvalidArgument("TransformerModel::pool: '" + config_.source + "' has no pooler");
        pooler_.forward(first_token, 1, out);
        detail::nn::tanh_inplace(out, config_.hidden_size);
    }

    static SafeTensors open_weights(const std::filesystem::path& path, SafeTensors::Load load) {
        if (!detail::path_exists(path)) {
            const auto dir = path.parent_path();
            std::string hint;
            if (detail::path_exists(dir / "model.safetensors.index.json"))
                hint = "; sharded checkpoints (model.safetensors.index.json) are not supported";
            else if (detail::path_exists(dir / "pytorch_model.bin"))
                hint = "; the folder has pytorch_model.bin, which ragpp cannot read: convert it to safetensors";
            throw IoError("cannot open '" + path.string() + "' (no such file" + hint + ")");
        }
        return SafeTensors(path, load);
    }

private:
    struct Layer {
        detail::Dense qkv, attn_out, inter, out;
        std::vector<float> ln1_g, ln1_b, ln2_g, ln2_b;
    };

    detail::Dense dense(const detail::TensorReader& r, const std::string& name, std::size_t n_out, std::size_t n_in) const {
        const auto w = r.floats(name + ".weight", {n_out, n_in});  // weight first: errors name it before the bias
        const auto b = r.floats(name + ".bias", {n_out});
        return detail::Dense(w, n_out, n_in, b, options_.quantize);
    }
    /// LayerNorm parameters: weight/bias, or gamma/beta in old TF-converted checkpoints.
    static std::vector<float> ln(const detail::TensorReader& r, const std::string& name, bool gamma, std::size_t H) {
        const std::string modern = name + (gamma ? ".weight" : ".bias");
        const std::string old = name + (gamma ? ".gamma" : ".beta");
        return r.floats(!r.has(modern) && r.has(old) ? old : modern, {H});
    }
    /// The layers on one group of sequences: `off` points to the group's entries of the
    /// batch's offsets (rows off[0] .. off[n] of the batch); the last hidden states go to
    /// `out` (row off[0] of the batch at out[0]).
    void forward_group(std::span<const Input> group, const std::size_t* off, Workspace& ws, float* out) const {
        const TransformerConfig& c = config_;
        const std::size_t H = c.hidden_size, I = c.intermediate_size, d = c.head_dim(), nh = c.num_attention_heads;
        const std::size_t m = off[group.size()] - off[0];
        std::vector<float>& x = ws.x;
        x.resize(m * H);
        // Embeddings: (word + token type) + position, then LayerNorm (BertEmbeddings.forward).
        for (std::size_t b = 0; b < group.size(); ++b) {
            const Input& in = group[b];
            for (std::size_t i = 0; i < in.ids.size(); ++i) {
                const TokenId id = in.ids[i];
                const std::uint32_t tt = in.type_ids.empty() ? 0U : in.type_ids[i];
                const std::size_t pos = c.family == TransformerFamily::bert ? i : c.pad_token_id + 1 + i;
                float* row = x.data() + (off[b] - off[0] + i) * H;
                if (word_in_file_ != nullptr) std::memcpy(row, word_in_file_ + std::size_t{id} * H * sizeof(float), H * sizeof(float));
                else std::copy_n(word_.data() + std::size_t{id} * H, H, row);
                const float* t = type_.data() + std::size_t{tt} * H;
                const float* p = position_.data() + pos * H;
                for (std::size_t k = 0; k < H; ++k) row[k] = (row[k] + t[k]) + p[k];
                detail::nn::layer_norm(row, H, emb_ln_g_.data(), emb_ln_b_.data(), c.layer_norm_eps);
            }
        }
        ws.qkv.resize(m * 3 * H);
        ws.ctx.resize(m * H);
        ws.tmp.resize(m * H);
        const std::size_t ffn_rows = options_.quantize == TransformerQuantization::none &&
                                             detail::nn::f32_on_amx(detail::nn::active_isa())
                                         ? kFfnRowsAmx
                                         : kFfnRows;
        ws.inter.resize(std::min(m, ffn_rows) * I);
        const float scale = 1.0f / std::sqrt(static_cast<float>(d));
        for (const Layer& L : layers_) {
            RAGPP_STAGE_START();
            L.qkv.forward(x.data(), m, ws.qkv.data());
            RAGPP_STAGE_MARK(0);
            for (std::size_t b = 0; b < group.size(); ++b) {
                const std::size_t n = off[b + 1] - off[b], r = off[b] - off[0];
                if (n == 0) continue;
                const float* base = ws.qkv.data() + r * 3 * H;
                detail::nn::attention(n, nh, d, scale, base, base + H, base + 2 * H, 3 * H, ws.ctx.data() + r * H, H);
            }
            RAGPP_STAGE_MARK(1);
            L.attn_out.forward(ws.ctx.data(), m, ws.tmp.data());
            RAGPP_STAGE_MARK(2);
            add_norm(ws.tmp, x, m, L.ln1_g, L.ln1_b);
            RAGPP_STAGE_MARK(3);
            // The feed-forward block by row blocks: each block's intermediate rows are read
            // back by the output product while they are in the core's cache.
            for (std::size_t r0 = 0; r0 < m; r0 += ffn_rows) {
                const std::size_t rows = std::min(ffn_rows, m - r0);
                L.inter.forward_gelu(x.data() + r0 * H, rows, ws.inter.data());
                RAGPP_STAGE_MARK(4);
                L.out.forward(ws.inter.data(), rows, ws.tmp.data() + r0 * H);
                RAGPP_STAGE_MARK(5);
            }
            add_norm(ws.tmp, x, m, L.ln2_g, L.ln2_b);
            RAGPP_STAGE_MARK(6);
        }
        std::copy(x.begin(), x.end(), out);
    }
    // Rows of a feed-forward block: the intermediate rows (192 x 1536 floats for MiniLM)
    // are read back by the output product from the core's cache; on MiniLM-L6 with
    // 128-token texts int8 gained 5% from it (docs/transformers.md).
    static constexpr std::size_t kFfnRows = 192;
    // Float32 on the AMX tiles (detail/nn.hpp's LinearF32): 384 (the intermediate product
    // 5-9% faster than at 192 in bench_transformer's stage times on a Sapphire Rapids core,
    // 2026-12-07, one-off builds with the constant changed, four rounds in turns; the output
    // product level; its rows 2.4 MB, past L2, but the tiles read them one K block at a time).
    static constexpr std::size_t kFfnRowsAmx = 384;

    /// x <- LayerNorm(y + x) row by row (y is overwritten, then swapped in).
    void add_norm(std::vector<float>& y, std::vector<float>& x, std::size_t m, const std::vector<float>& g,
                  const std::vector<float>& b) const {
        const std::size_t H = config_.hidden_size;
        for (std::size_t i = 0; i < m; ++i)
            detail::nn::add_layer_norm(y.data() + i * H, x.data() + i * H, H, g.data(), b.data(), config_.layer_norm_eps);
        x.swap(y);
    }

    TransformerConfig config_;
    TransformerModelOptions options_;
    std::string prefix_;
    std::shared_ptr<const SafeTensors> file_;  // kept when word_in_file_ points into it
    const std::byte* word_in_file_ = nullptr;
    std::vector<float> word_, position_, type_, emb_ln_g_, emb_ln_b_;
    std::vector<Layer> layers_;
    detail::nn::LinearF32 pooler_;
    bool has_pooler_ = false;
};

// =====================================================================================
// Pooling (sentence-transformers models.Pooling and models.Normalize)
// =====================================================================================

struct PoolingConfig {
    bool cls = false, max = false, mean = true, mean_sqrt_len = false;
    bool normalize = false;

    [[nodiscard]] std::size_t modes() const noexcept {
        return std::size_t{cls} + std::size_t{max} + std::size_t{mean} + std::size_t{mean_sqrt_len};
    }
    [[nodiscard]] std::string describe() const {
        std::string s;
        for (auto [on, n] : {std::pair{cls, "cls"}, std::pair{max, "max"}, std::pair{mean, "mean"},
                             std::pair{mean_sqrt_len, "mean_sqrt_len"}})
            if (on) s += (s.empty() ? "" : "+") + std::string(n);
        return s;
    }

    /// Reads a 1_Pooling/config.json. Throws FormatError / UnsupportedError naming it.
    static PoolingConfig from_file(const std::filesystem::path& path, std::size_t hidden_size) {
        const auto j = detail::read_json_file(path);
        const std::string src = path.string();
        if (!j.is_object()) throw FormatError("'" + src + "': not a JSON object");
        auto flag = [&](const char* key) {
            if (!j.contains(key)) return false;
            if (!j[key].is_boolean()) throw FormatError("'" + src + "': field '" + key + "' is not a boolean");
            return j[key].get<bool>();
        };
        PoolingConfig p;
        p.cls = flag("pooling_mode_cls_token");
        p.max = flag("pooling_mode_max_tokens");
        p.mean = flag("pooling_mode_mean_tokens");
        p.mean_sqrt_len = flag("pooling_mode_mean_sqrt_len_tokens");
        for (const char* key : {"pooling_mode_weightedmean_tokens", "pooling_mode_lasttoken"})
            if (flag(key)) throw UnsupportedError("'" + src + "': " + key + " is not supported");
        if (j.contains("include_prompt") && j["include_prompt"].is_boolean() && !j["include_prompt"].get<bool>())
            throw UnsupportedError("'" + src + "': include_prompt = false is not supported");
        if (p.modes() == 0) throw FormatError("'" + src + "': no pooling mode is on");
        if (j.contains("word_embedding_dimension") && j["word_embedding_dimension"].is_number_unsigned() &&
            j["word_embedding_dimension"].get<std::size_t>() != hidden_size)
            throw FormatError("'" + src + "': word_embedding_dimension " + j["word_embedding_dimension"].dump() +
                              " differs from the model's hidden_size " + std::to_string(hidden_size));
        return p;
    }

    /// The sentence vector of one sequence's hidden states (n rows of H floats) into
    /// `out` (modes() * H floats), then L2-normalized when `normalize`
    /// (torch.nn.functional.normalize: x / max(|x|, 1e-12)). n = 0 gives zeros.
    void apply(const float* rows, std::size_t n, std::size_t H, float* out) const {
        float* o = out;
        if (cls) {
            for (std::size_t k = 0; k < H; ++k) o[k] = n ? rows[k] : 0.0f;
            o += H;
        }
        if (max) {
            for (std::size_t k = 0; k < H; ++k) {
                float v = n ? rows[k] : 0.0f;
                for (std::size_t i = 1; i < n; ++i) v = std::max(v, rows[i * H + k]);
                o[k] = v;
            }
            o += H;
        }
        if (mean || mean_sqrt_len) {
            std::vector<double> sum(H, 0.0);
            for (std::size_t i = 0; i < n; ++i)
                for (std::size_t k = 0; k < H; ++k) sum[k] += rows[i * H + k];
            const double cnt = std::max(static_cast<double>(n), 1e-9);  // torch.clamp(sum_mask, min=1e-9)
            if (mean) {
                for (std::size_t k = 0; k < H; ++k) o[k] = static_cast<float>(sum[k] / cnt);
                o += H;
            }
            if (mean_sqrt_len) {
                for (std::size_t k = 0; k < H; ++k) o[k] = static_cast<float>(sum[k] / std::sqrt(cnt));
                o += H;
            }
        }
        if (normalize) {
            const std::size_t dim = modes() * H;
            double norm = 0;
            for (std::size_t k = 0; k < dim; ++k) norm += double{out[k]} * out[k];
            const double inv = 1.0 / std::max(std::sqrt(norm), 1e-12);
            for (std::size_t k = 0; k < dim; ++k) out[k] = static_cast<float>(out[k] * inv);
        }
    }
};

// =====================================================================================
// TransformerEmbedder
// =====================================================================================

struct TransformerEmbedderOptions {
    /// Role prefixes. When set (even to empty strings) they replace the folder's
    /// prompts (config_sentence_transformers.json); unset, the folder's are used.
    std::optional<RolePrefixes> prefixes;
    /// Threads of embed_batch (0: all cores).
    std::size_t threads = 0;
    /// Texts per forward pass in embed_batch.
    std::size_t batch_size = 32;
    TransformerQuantization quantize = TransformerQuantization::none;
    /// Tokens per text, special tokens included (0: the folder's max_seq_length).
    std::size_t max_seq_length = 0;
    /// Called after each batch of embed_batch with (texts done, texts in total), from
    /// the worker threads one at a time (a mutex serializes the calls).
    std::function<void(std::size_t, std::size_t)> progress;
    SafeTensors::Load load = SafeTensors::Load::mmap;
    /// Tokens per group of a forward pass (TransformerModelOptions::group_tokens).
    std::size_t group_tokens = 384;
};

class TransformerEmbedder {
public:
    using TokenId = HfTokenizer::TokenId;

    /// Loads a sentence-transformers or Hugging Face folder (see the header comment).
    /// Throws IoError / ParseError / FormatError / UnsupportedError naming the file,
    /// InvalidArgument for a bad option.
    explicit TransformerEmbedder(const std::filesystem::path& dir, TransformerEmbedderOptions options = {})
        : options_(std::move(options)) {
        namespace fs = std::filesystem;
        std::error_code ec;
        if (!fs::is_directory(dir, ec)) throw IoError("TransformerEmbedder: '" + dir.string() + "' is not a folder");
        if (options_.batch_size == 0) throw InvalidArgument("TransformerEmbedder: batch_size is 0");
        fs::path model_dir = dir;
        std::optional<fs::path> pooling_dir;
        bool normalize = false;
        if (const auto modules = detail::read_json_if_exists(dir / "modules.json")) {
            const std::string src = (dir / "modules.json").string();
            if (!modules->is_array()) throw FormatError("'" + src + "': not a JSON array");
            bool transformer = false;
            for (const auto& m : *modules) {
                if (!m.is_object() || !m.contains("type") || !m["type"].is_string())
                    throw FormatError("'" + src + "': a module without a type");
                const std::string type = m["type"].get<std::string>();
                const std::string path = m.contains("path") && m["path"].is_string() ? m["path"].get<std::string>() : "";
                if (type.ends_with(".Transformer") || type == "Transformer") {
                    if (transformer) throw UnsupportedError("'" + src + "': more than one Transformer module");
                    transformer = true;
                    model_dir = dir / path;
                } else if (type.ends_with(".Pooling") || type == "Pooling") {
                    pooling_dir = dir / path;
                } else if (type.ends_with(".Normalize") || type == "Normalize") {
                    normalize = true;
                } else {
                    throw UnsupportedError("'" + src + "': module type '" + type +
                                           "' is not supported (ragpp runs Transformer, Pooling and Normalize)");
                }
            }
            if (!transformer) throw FormatError("'" + src + "': no Transformer module");
            if (!pooling_dir) throw UnsupportedError("'" + src + "': no Pooling module (token embeddings are not sentence vectors)");
        }
        model_ = std::make_shared<const TransformerModel>(model_dir, TransformerModelOptions{options_.quantize, options_.load, options_.group_tokens});
        tokenizer_ = detail::load_tokenizer(model_dir, dir);
        const std::size_t H = model_->hidden_size();
        if (pooling_dir) pooling_ = PoolingConfig::from_file(*pooling_dir / "config.json", H);
        pooling_.normalize = normalize;

        // max_seq_length: option, sentence_bert_config.json, or min(capacity, model_max_length or 512).
        const std::size_t cap = model_->max_tokens();
        std::optional<std::size_t> folder_max;
        for (const auto& p : {model_dir / "sentence_bert_config.json", dir / "sentence_bert_config.json"}) {
            if (const auto j = detail::read_json_if_exists(p)) {
                if (j->is_object() && j->contains("max_seq_length") && !(*j)["max_seq_length"].is_null()) {
                    if (!(*j)["max_seq_length"].is_number_unsigned() || (*j)["max_seq_length"].get<std::size_t>() == 0)
                        throw FormatError("'" + p.string() + "': max_seq_length is not a positive integer");
                    folder_max = (*j)["max_seq_length"].get<std::size_t>();
                }
                if (j->is_object() && j->value("do_lower_case", false))
                    throw UnsupportedError("'" + p.string() + "': do_lower_case = true is not supported");
                break;
            }
        }
        if (options_.max_seq_length > 0) {
            if (options_.max_seq_length > cap)
                throw InvalidArgument("TransformerEmbedder: max_seq_length " + std::to_string(options_.max_seq_length) +
                                      " exceeds the model's " + std::to_string(cap) + " positions");
            max_seq_length_ = options_.max_seq_length;
        } else if (folder_max) {
            max_seq_length_ = std::min(*folder_max, cap);
        } else {
            max_seq_length_ = std::min(cap, detail::model_max_length(model_dir).value_or(512));
        }

        // Prompts.
        if (options_.prefixes) {
            prefixes_ = *options_.prefixes;
        } else if (const auto j = detail::read_json_if_exists(dir / "config_sentence_transformers.json")) {
            if (j->is_object() && j->contains("prompts") && (*j)["prompts"].is_object()) {
                const auto& p = (*j)["prompts"];
                auto get = [&](const char* key) {
                    return p.contains(key) && p[key].is_string() ? std::optional<std::string>(p[key].get<std::string>())
                                                                 : std::nullopt;
                };
                prefixes_.query = get("query").value_or("");
                prefixes_.passage = get("passage").value_or(get("document").value_or(""));
            }
        }
        std::string base = detail::folder_name(dir);
        name_ = "transformer:" + base + ";dim=" + std::to_string(dimension()) + ";pooling=" + pooling_.describe() +
                ";normalize=" + (pooling_.normalize ? "1" : "0") + ";max_seq_length=" + std::to_string(max_seq_length_) +
                prefixes_.describe();
    }

    [[nodiscard]] std::size_t dimension() const noexcept { return pooling_.modes() * model_->hidden_size(); }
    [[nodiscard]] std::string name() const { return name_; }
    [[nodiscard]] std::size_t max_seq_length() const noexcept { return max_seq_length_; }
    [[nodiscard]] const RolePrefixes& prefixes() const noexcept { return prefixes_; }
    [[nodiscard]] const PoolingConfig& pooling() const noexcept { return pooling_; }
    [[nodiscard]] const TransformerModel& model() const noexcept { return *model_; }
    [[nodiscard]] const HfTokenizer& tokenizer() const noexcept { return *tokenizer_; }

    /// The ids (with special tokens, truncated) that embed() runs for `text` and `role`.
    [[nodiscard]] std::vector<TokenId> token_ids(std::string_view text, Role role = Role::passage) const {
        return encode(text, role).ids;
    }

    [[nodiscard]] Eigen::VectorXf embed(std::string_view text, Role role = Role::passage) const {
        const detail::EncodedInput e = encode(text, role);
        const TransformerModel::Input in{e.ids, e.type_ids};
        TransformerModel::Workspace ws;
        Eigen::VectorXf out(static_cast<Eigen::Index>(dimension()));
        run(std::span<const TransformerModel::Input>(&in, 1), ws, out.data());
        return out;
    }

    [[nodiscard]] RowMatrixXf embed_batch(std::span<const std::string> texts, Role role = Role::passage) const {
        const std::size_t n = texts.size();
        std::vector<detail::EncodedInput> enc(n);
        const std::size_t threads = detail::resolve_threads(options_.threads);
        detail::parallel_for(n, threads, [&](std::size_t i, std::size_t) { enc[i] = encode(texts[i], role); });
        RowMatrixXf out(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(dimension()));
        embed_encoded(enc, out.data(), threads);
        return out;
    }

    /// Sentence vectors of already tokenized sequences (ids with special tokens, as
    /// token_ids() gives them), batched and threaded as embed_batch. For tests and
    /// callers that tokenize themselves; no truncation is applied.
    [[nodiscard]] RowMatrixXf embed_ids(std::span<const std::vector<TokenId>> seqs, std::size_t threads = 1) const {
        std::vector<detail::EncodedInput> enc(seqs.size());
        for (std::size_t i = 0; i < seqs.size(); ++i) enc[i].ids = seqs[i];
        RowMatrixXf out(static_cast<Eigen::Index>(seqs.size()), static_cast<Eigen::Index>(dimension()));
        embed_encoded(enc, out.data(), detail::resolve_threads(threads));
        return out;
    }

private:
    detail::EncodedInput encode(std::string_view text, Role role) const {
        const std::string& prefix = prefixes_.of(role);
        if (prefix.empty()) return detail::encode_single(*tokenizer_, text, max_seq_length_);
        return detail::encode_single(*tokenizer_, prefixes_.apply(role, text), max_seq_length_);
    }

    /// Pooled vectors of `batch` into consecutive rows of `out`.
    void run(std::span<const TransformerModel::Input> batch, TransformerModel::Workspace& ws, float* out) const {
        std::vector<float> hidden;
        std::vector<std::size_t> offsets;
        model_->forward(batch, ws, hidden, offsets);
        const std::size_t H = model_->hidden_size(), dim = dimension();
        for (std::size_t b = 0; b < batch.size(); ++b)
            pooling_.apply(hidden.data() + offsets[b] * H, offsets[b + 1] - offsets[b], H, out + b * dim);
    }

    /// Length-sorted batches of batch_size, run on `threads` threads, rows written in
    /// input order.
    void embed_encoded(const std::vector<detail::EncodedInput>& enc, float* out, std::size_t threads) const {
        const std::size_t n = enc.size(), dim = dimension();
        std::vector<std::size_t> order(n);
        std::iota(order.begin(), order.end(), std::size_t{0});
        std::stable_sort(order.begin(), order.end(),
                         [&](std::size_t a, std::size_t b) { return enc[a].ids.size() < enc[b].ids.size(); });
        const std::size_t bs = options_.batch_size;
        const std::size_t batches = (n + bs - 1) / bs;
        threads = std::min(threads, std::max<std::size_t>(batches, 1));
        std::vector<TransformerModel::Workspace> spaces(threads);
        std::mutex progress_mutex;
        std::size_t done = 0;
        detail::parallel_for(batches, threads, [&](std::size_t bi, std::size_t worker) {
            const std::size_t begin = bi * bs, end = std::min(n, begin + bs);
            std::vector<TransformerModel::Input> inputs;
            for (std::size_t i = begin; i < end; ++i) inputs.push_back({enc[order[i]].ids, enc[order[i]].type_ids});
            std::vector<float> rows((end - begin) * dim);
            run(inputs, spaces[worker], rows.data());
            for (std::size_t i = begin; i < end; ++i)
                std::copy_n(rows.data() + (i - begin) * dim, dim, out + order[i] * dim);
            if (options_.progress) {
                std::lock_guard<std::mutex> lock(progress_mutex);
                done += end - begin;
                options_.progress(done, n);
            }
        });
    }

    TransformerEmbedderOptions options_;
    std::shared_ptr<const TransformerModel> model_;
    std::shared_ptr<const HfTokenizer> tokenizer_;
    PoolingConfig pooling_;
    RolePrefixes prefixes_;
    std::size_t max_seq_length_ = 512;
    std::string name_;
};
static_assert(Embedder<TransformerEmbedder>);

}  // namespace ragpp

#undef RAGPP_STAGE_START
#undef RAGPP_STAGE_MARK
