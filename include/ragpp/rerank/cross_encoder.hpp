// ragpp: CrossEncoderReranker, a Hugging Face sequence-classification transformer that
// reads the question and a passage together and scores the pair (a Reranker).
//
// Heads (transformers' modeling_bert.py / modeling_xlm_roberta.py):
//   BertForSequenceClassification         logits = classifier(tanh(pooler.dense(h[CLS])))
//   XLMRobertaForSequenceClassification   logits = out_proj(tanh(classifier.dense(h[<s>])))
//   (also RobertaForSequenceClassification, the same head)
// chosen from config.json's "architectures", else from the tensors present.
// Input: the pair encoded with the tokenizer's pair template ([CLS] q [SEP] p [SEP] with
// token types 0/1 for BERT; <s> q </s></s> p </s> for XLM-R), truncated longest-first to
// max_length tokens: the option, else tokenizer_config.json's model_max_length, else 512,
// capped by the position embeddings.
// Score: the raw logit of label 0 by default (sentence-transformers' CrossEncoder with
// num_labels 1 returns sigmoid(logit) from predict(); ranking is the same). `sigmoid`
// maps it through 1 / (1 + e^-x); `label` picks another label of a multi-label head (a
// head with several labels and no chosen label scores with label 0).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ragpp/core/error.hpp>
#include <ragpp/detail/nn.hpp>
#include <ragpp/detail/parallel.hpp>
#include <ragpp/embed/transformer.hpp>
#include <ragpp/rerank/reranker.hpp>

namespace ragpp {

struct CrossEncoderOptions {
    /// Threads of one call (0: all cores).
    std::size_t threads = 0;
    /// Pairs per forward pass.
    std::size_t batch_size = 32;
    TransformerQuantization quantize = TransformerQuantization::none;
    /// Tokens per pair, special tokens included (0: the folder's model_max_length).
    std::size_t max_length = 0;
    /// Score = sigmoid(logit) instead of the raw logit.
    bool sigmoid = false;
    /// The label whose logit is the score (default 0).
    std::optional<std::size_t> label;
    SafeTensors::Load load = SafeTensors::Load::mmap;
};

class CrossEncoderReranker {
public:
    using TokenId = HfTokenizer::TokenId;
    enum class Head { bert, roberta };

    /// Loads config.json, model.safetensors, tokenizer.json (and tokenizer_config.json)
    /// from `dir`. Throws IoError / ParseError / FormatError / UnsupportedError naming the
    /// file and tensor, InvalidArgument for a bad option.
    explicit CrossEncoderReranker(const std::filesystem::path& dir, CrossEncoderOptions options = {})
        : options_(std::move(options)) {
        namespace fs = std::filesystem;
        std::error_code ec;
        if (!fs::is_directory(dir, ec)) throw IoError("CrossEncoderReranker: '" + dir.string() + "' is not a folder");
        if (options_.batch_size == 0) throw InvalidArgument("CrossEncoderReranker: batch_size is 0");
        TransformerConfig config = TransformerConfig::from_file(dir / "config.json");
        auto st = std::make_shared<const SafeTensors>(TransformerModel::open_weights(dir / "model.safetensors", options_.load));
        head_ = choose_head(config, *st);
        model_ = std::make_shared<const TransformerModel>(config, st, TransformerModelOptions{options_.quantize, options_.load});
        const TransformerConfig& c = model_->config();
        const std::size_t H = c.hidden_size, L = c.num_labels;
        if (L == 0) throw FormatError("'" + c.source + "': num_labels is 0");
        detail::TensorReader r(*st, model_->prefix(), c.source);
        if (head_ == Head::bert) {
            if (!model_->has_pooler())
                throw FormatError("'" + st->file_name() + "': missing tensor '" + model_->prefix() +
                                  "pooler.dense.weight' (BertForSequenceClassification needs the pooler)");
            out_proj_ = detail::nn::LinearF32(r.floats("classifier.weight", {L, H}, true).data(), L, H,
                                              r.floats("classifier.bias", {L}, true).data());
        } else {
            dense_ = detail::nn::LinearF32(r.floats("classifier.dense.weight", {H, H}, true).data(), H, H,
                                           r.floats("classifier.dense.bias", {H}, true).data());
            out_proj_ = detail::nn::LinearF32(r.floats("classifier.out_proj.weight", {L, H}, true).data(), L, H,
                                              r.floats("classifier.out_proj.bias", {L}, true).data());
        }
        if (options_.label && *options_.label >= L)
            throw InvalidArgument("CrossEncoderReranker: label " + std::to_string(*options_.label) + " but '" + c.source +
                                  "' has " + std::to_string(L) + " labels");
        tokenizer_ = detail::load_tokenizer(dir, dir);
        const std::size_t cap = model_->max_tokens();
        if (options_.max_length > 0) {
            if (options_.max_length > cap)
                throw InvalidArgument("CrossEncoderReranker: max_length " + std::to_string(options_.max_length) +
                                      " exceeds the model's " + std::to_string(cap) + " positions");
            max_length_ = options_.max_length;
        } else {
            max_length_ = std::min(cap, detail::model_max_length(dir).value_or(512));
        }
        name_ = "cross-encoder:" + detail::folder_name(dir) + ";label=" +
                std::to_string(options_.label.value_or(0)) + (options_.sigmoid ? ";sigmoid" : "");
    }

    [[nodiscard]] std::string name() const { return name_; }
    [[nodiscard]] std::size_t num_labels() const noexcept { return model_->config().num_labels; }
    [[nodiscard]] std::size_t max_length() const noexcept { return max_length_; }
    [[nodiscard]] Head head() const noexcept { return head_; }
    [[nodiscard]] const TransformerModel& model() const noexcept { return *model_; }
    [[nodiscard]] const HfTokenizer& tokenizer() const noexcept { return *tokenizer_; }

    /// The Reranker call: one score per passage, in input order.
    [[nodiscard]] std::vector<double> operator()(std::string_view question, std::span<const std::string_view> passages) const {
        std::vector<detail::EncodedInput> enc(passages.size());
        const std::size_t threads = detail::resolve_threads(options_.threads);
        detail::parallel_for(passages.size(), threads, [&](std::size_t i, std::size_t) {
            enc[i] = detail::encode_pair(*tokenizer_, question, passages[i], max_length_);
        });
        const auto all = run(enc, threads);
        const std::size_t L = num_labels(), label = options_.label.value_or(0);
        std::vector<double> scores(passages.size());
        for (std::size_t i = 0; i < scores.size(); ++i) {
            const double x = all[i * L + label];
            scores[i] = options_.sigmoid ? 1.0 / (1.0 + std::exp(-x)) : x;
        }
        return scores;
    }

    /// Every label's logit of each (first, second) pair: num_labels() values per pair.
    [[nodiscard]] std::vector<std::vector<float>> logits(std::span<const std::pair<std::string, std::string>> pairs) const {
        std::vector<detail::EncodedInput> enc(pairs.size());
        for (std::size_t i = 0; i < pairs.size(); ++i)
            enc[i] = detail::encode_pair(*tokenizer_, pairs[i].first, pairs[i].second, max_length_);
        return split(run(enc, detail::resolve_threads(options_.threads)));
    }

    /// The logits of already encoded pairs (ids with special tokens and their type ids).
    [[nodiscard]] std::vector<std::vector<float>> logits_ids(std::span<const std::vector<TokenId>> ids,
                                                             std::span<const std::vector<std::uint32_t>> type_ids,
                                                             std::size_t threads = 1) const {
        if (ids.size() != type_ids.size())
            throw InvalidArgument("CrossEncoderReranker::logits_ids: " + std::to_string(ids.size()) + " sequences but " +
                                  std::to_string(type_ids.size()) + " type id lists");
        std::vector<detail::EncodedInput> enc(ids.size());
        for (std::size_t i = 0; i < ids.size(); ++i) enc[i] = {ids[i], type_ids[i]};
        return split(run(enc, detail::resolve_threads(threads)));
    }

private:
    static Head choose_head(const TransformerConfig& c, const SafeTensors& st) {
        for (const auto& a : c.architectures) {
            if (a == "BertForSequenceClassification") return Head::bert;
            if (a == "XLMRobertaForSequenceClassification" || a == "RobertaForSequenceClassification") return Head::roberta;
        }
        if (!c.architectures.empty())
            throw UnsupportedError("'" + c.source + "': architecture '" + c.architectures.front() +
                                   "' is not a supported cross-encoder (BertForSequenceClassification, "
                                   "XLMRobertaForSequenceClassification)");
        if (st.contains("classifier.out_proj.weight")) return Head::roberta;
        if (st.contains("classifier.weight")) return Head::bert;
        throw FormatError("'" + st.file_name() + "': no classification head (missing tensor 'classifier.weight' or "
                          "'classifier.out_proj.weight')");
    }

    std::vector<std::vector<float>> split(const std::vector<float>& all) const {
        const std::size_t L = num_labels();
        std::vector<std::vector<float>> out(all.size() / L);
        for (std::size_t i = 0; i < out.size(); ++i)
            out[i].assign(all.begin() + static_cast<std::ptrdiff_t>(i * L), all.begin() + static_cast<std::ptrdiff_t>((i + 1) * L));
        return out;
    }

    /// Logits of every pair (num_labels per pair, input order): length-sorted batches on
    /// `threads` threads, each with its own workspace.
    std::vector<float> run(const std::vector<detail::EncodedInput>& enc, std::size_t threads) const {
        const std::size_t n = enc.size(), H = model_->hidden_size(), L = num_labels();
        std::vector<float> out(n * L);
        std::vector<std::size_t> order(n);
        std::iota(order.begin(), order.end(), std::size_t{0});
        std::stable_sort(order.begin(), order.end(),
                         [&](std::size_t a, std::size_t b) { return enc[a].ids.size() < enc[b].ids.size(); });
        const std::size_t bs = options_.batch_size, batches = (n + bs - 1) / bs;
        threads = std::min(threads, std::max<std::size_t>(batches, 1));
        std::vector<TransformerModel::Workspace> spaces(threads);
        detail::parallel_for(batches, threads, [&](std::size_t bi, std::size_t worker) {
            const std::size_t begin = bi * bs, end = std::min(n, begin + bs);
            std::vector<TransformerModel::Input> inputs;
            for (std::size_t i = begin; i < end; ++i) inputs.push_back({enc[order[i]].ids, enc[order[i]].type_ids});
            std::vector<float> hidden, pooled(H);
            std::vector<std::size_t> offsets;
            model_->forward(inputs, spaces[worker], hidden, offsets);
            for (std::size_t i = begin; i < end; ++i) {
                const std::size_t b = i - begin;
                if (offsets[b + 1] == offsets[b])
                    throw InvalidArgument("CrossEncoderReranker: pair " + std::to_string(order[i]) + " has no tokens");
                const float* first = hidden.data() + offsets[b] * H;
                if (head_ == Head::bert) {
                    model_->pool(first, pooled.data());
                } else {
                    dense_.forward(first, 1, pooled.data());
                    detail::nn::tanh_inplace(pooled.data(), H);
                }
                out_proj_.forward(pooled.data(), 1, out.data() + order[i] * L);
            }
        });
        return out;
    }

    CrossEncoderOptions options_;
    Head head_ = Head::bert;
    std::shared_ptr<const TransformerModel> model_;
    std::shared_ptr<const HfTokenizer> tokenizer_;
    detail::nn::LinearF32 dense_, out_proj_;
    std::size_t max_length_ = 512;
    std::string name_;
};
static_assert(Reranker<CrossEncoderReranker>);

}  // namespace ragpp
