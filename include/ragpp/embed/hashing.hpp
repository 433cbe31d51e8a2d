// ragpp: HashingEmbedder, the built-in default embedder: no model, no download.
//
// It is the "hashing trick" (Weinberger et al., "Feature Hashing for Large Scale
// Multitask Learning", ICML 2009) over two kinds of features of the lowercased text:
//   - each word (a maximal run of characters that are neither whitespace, punctuation
//     nor control characters), weight `word_weight`;
//   - each character n-gram, min_n <= n <= max_n code points, of "<word>" (boundary
//     markers as in fastText, Bojanowski et al. 2017), weight ngram_weight / sqrt(G),
//     G the number of n-grams of that word, so a word's n-grams weigh together about
//     as much as the word itself, however long it is.
// Feature f adds sign(f) * weight to coordinate bucket(f), where
//   h(f) = mix64(FNV-1a-64(kind byte, 0x1F, UTF-8 bytes of f) ^ seed),
//   bucket = h mod dimension, sign = +1 if the top bit of h is 0, else -1,
// and the sum is L2-normalised (an empty text gives the zero vector). The hash is
// written here (detail/hash.hpp), never std::hash: vectors are identical on every
// platform, compiler and run.
//
// What it finds: documents sharing words or word parts with the query, including
// spelling variants, inflections and compounds ("vectorise" ~ "vectorize",
// "index" ~ "indexing"). What it cannot find: synonyms and paraphrases that share no
// letters ("car" vs "automobile"); for those, use a trained model (StaticEmbedder).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Core>

#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>
#include <ragpp/detail/codepoints.hpp>
#include <ragpp/detail/hash.hpp>
#include <ragpp/embed/embedder.hpp>

namespace ragpp {

struct HashingOptions {
    /// Number of buckets (the vector length); >= 1.
    std::size_t dimension = 256;
    /// Character n-gram lengths, in code points; 1 <= min_n <= max_n. min_n = 0
    /// disables character n-grams (words only).
    std::size_t min_n = 3;
    std::size_t max_n = 5;
    /// A word weighs half its n-grams together by default, so that a spelling variant
    /// (a different word sharing most n-grams) stays close.
    float word_weight = 0.5F;
    float ngram_weight = 1.0F;
    /// Changes every bucket and sign: two seeds give unrelated embeddings.
    std::uint64_t seed = 0;
    /// Prepended to the text before hashing (words of a prefix count as features).
    RolePrefixes prefixes;
};

class HashingEmbedder {
public:
    HashingEmbedder() : HashingEmbedder(HashingOptions{}) {}
    /// Throws InvalidArgument on a zero dimension, min_n > max_n, or a negative or
    /// non-finite weight.
    explicit HashingEmbedder(HashingOptions options) : options_(std::move(options)) {
        if (options_.dimension == 0) throw InvalidArgument("HashingEmbedder: dimension must be >= 1");
        if (options_.min_n > 0 && options_.min_n > options_.max_n)
            throw InvalidArgument("HashingEmbedder: min_n " + std::to_string(options_.min_n) + " > max_n " +
                                  std::to_string(options_.max_n));
        if (!(options_.word_weight >= 0.0F) || !std::isfinite(options_.word_weight) ||
            !(options_.ngram_weight >= 0.0F) || !std::isfinite(options_.ngram_weight))
            throw InvalidArgument("HashingEmbedder: weights must be finite and >= 0");
    }

    [[nodiscard]] std::size_t dimension() const noexcept { return options_.dimension; }
    [[nodiscard]] const HashingOptions& options() const noexcept { return options_; }

    [[nodiscard]] std::string name() const {
        return "hashing:v1;dim=" + std::to_string(options_.dimension) + ";ngrams=" + std::to_string(options_.min_n) +
               "-" + std::to_string(options_.max_n) + ";w=" + std::to_string(options_.word_weight) + "," +
               std::to_string(options_.ngram_weight) + ";seed=" + std::to_string(options_.seed) +
               options_.prefixes.describe();
    }

    [[nodiscard]] Eigen::VectorXf embed(std::string_view text, Role role = Role::passage) const {
        Eigen::VectorXf v = Eigen::VectorXf::Zero(static_cast<Eigen::Index>(options_.dimension));
        const std::string& prefix = options_.prefixes.of(role);
        if (prefix.empty()) {
            accumulate(text, v);
        } else {
            accumulate(options_.prefixes.apply(role, text), v);
        }
        const float norm = v.norm();
        if (norm > 0.0F) v /= norm;
        return v;
    }

    [[nodiscard]] RowMatrixXf embed_batch(std::span<const std::string> texts, Role role = Role::passage) const {
        return embed_rows(*this, texts, role);
    }

    /// The words the embedder sees in `text` (lowercased), in order: for tests and docs.
    [[nodiscard]] static std::vector<std::u32string> words(std::string_view text) {
        std::vector<std::u32string> out;
        std::u32string word;
        for (std::size_t i = 0; i < text.size();) {
            const char32_t c = detail::next_codepoint(text, i);
            if (detail::is_unicode_whitespace(c) || detail::is_bert_punctuation(c) || detail::is_other(c)) {
                if (!word.empty()) out.push_back(std::move(word));
                word.clear();
            } else {
                detail::append_lowercase(word, c);
            }
        }
        if (!word.empty()) out.push_back(std::move(word));
        return out;
    }

private:
    void add_feature(char kind, std::u32string_view feature, float weight, Eigen::VectorXf& v) const {
        std::string bytes;
        bytes.reserve(feature.size() + 2);
        bytes.push_back(kind);
        bytes.push_back('\x1f');
        for (char32_t c : feature) detail::append_utf8(bytes, c);
        const std::uint64_t h = detail::mix64(detail::fnv1a64(bytes) ^ options_.seed);
        const auto bucket = static_cast<Eigen::Index>(h % options_.dimension);
        v[bucket] += (h >> 63) != 0 ? -weight : weight;
    }

    void accumulate(std::string_view text, Eigen::VectorXf& v) const {
        for (const std::u32string& word : words(text)) {
            if (options_.word_weight > 0.0F) add_feature('w', word, options_.word_weight, v);
            if (options_.min_n == 0 || options_.ngram_weight <= 0.0F) continue;
            std::u32string marked;
            marked.reserve(word.size() + 2);
            marked.push_back(U'<');
            marked += word;
            marked.push_back(U'>');
            const std::size_t len = marked.size();
            std::size_t count = 0;
            for (std::size_t n = options_.min_n; n <= options_.max_n && n <= len; ++n) count += len - n + 1;
            if (count == 0) {  // shorter than min_n: the marked word is its only n-gram
                add_feature('c', marked, options_.ngram_weight, v);
                continue;
            }
            const float w = options_.ngram_weight / std::sqrt(static_cast<float>(count));
            const std::u32string_view m(marked);
            for (std::size_t n = options_.min_n; n <= options_.max_n && n <= len; ++n)
                for (std::size_t s = 0; s + n <= len; ++s) add_feature('c', m.substr(s, n), w, v);
        }
    }

    HashingOptions options_;
};
static_assert(Embedder<HashingEmbedder>);

}  // namespace ragpp
