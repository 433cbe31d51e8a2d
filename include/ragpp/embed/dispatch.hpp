// ragpp: picking an embedder at run time from a name, for command-line tools: the one
// place where the embedder type is chosen from a string (templates everywhere else).
//
//   hashing           HashingEmbedder (built in, no download)
//   model2vec:DIR     StaticEmbedder loaded from DIR
//   vectors:FILE      WordVectorEmbedder<StandardAnalyzer> over a word2vec / GloVe file
//   transformer:DIR   TransformerEmbedder over a Hugging Face / sentence-transformers folder
//
// with_embedder(spec, settings, f) builds the embedder and returns f(embedder).
// Settings: the role prefixes (unset: none, or a transformer folder's own prompts), and
// for transformers the thread count, int8 quantization and a progress callback.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <ragpp/core/error.hpp>
#include <ragpp/embed/embedder.hpp>
#include <ragpp/embed/hashing.hpp>
#include <ragpp/embed/model2vec.hpp>
#include <ragpp/embed/spec.hpp>
#include <ragpp/embed/transformer.hpp>
#include <ragpp/embed/word_vectors.hpp>
#include <ragpp/text/analyzer.hpp>

namespace ragpp {

/// The help text of an `--embedder` option: each of embedder_kinds with its help (the
/// default first), then the role prefixes (E5 models need them), wrapped at 92 columns.
[[nodiscard]] inline std::string embedder_help() {
    const std::string indent(22, ' ');
    std::string out = "  --embedder E        ", line;
    const auto wrap = [&](std::string_view text) {
        std::size_t at = 0;
        while (at < text.size()) {
            const std::size_t end = text.find(' ', at);
            const std::string_view word = text.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
            if (!line.empty() && indent.size() + line.size() + 1 + word.size() > 92) {
                out += line + "\n" + indent;
                line.clear();
            }
            line += (line.empty() ? "" : " ") + std::string(word);
            at = end == std::string_view::npos ? text.size() : end + 1;
        }
        out += line + "\n";
        line.clear();
    };
    wrap(choice_help(embedder_kinds) + "; default: hashing");
    out += "  --query-prefix P    ";
    wrap("text put before every query, --passage-prefix P before every passage. E5 models need "
         "--query-prefix 'query: ' --passage-prefix 'passage: ': without them their results degrade silently. "
         "--e5 sets both.");
    return out;
}

/// How the embedder named by a spec is built.
struct EmbedderSettings {
    /// Role prefixes; unset: none, except a transformer folder's own prompts
    /// (config_sentence_transformers.json), which apply then.
    std::optional<RolePrefixes> prefixes;
    /// Transformers: threads of embed_batch (0: every core).
    std::size_t threads = 0;
    /// Transformers: int8 dynamic quantization of the linear layers.
    bool int8 = false;
    /// Transformers: called with (texts done, texts in total) during embed_batch.
    std::function<void(std::size_t, std::size_t)> progress;
};

/// Calls f with the embedder named by `spec`. Throws InvalidArgument for an unknown
/// kind, and whatever loading the model throws (IoError, FormatError, UnsupportedError...).
template <class F>
decltype(auto) with_embedder(std::string_view spec, const EmbedderSettings& settings, F&& f) {
    const RolePrefixes prefixes = settings.prefixes.value_or(RolePrefixes{});
    if (spec == "hashing") {
        HashingOptions o;
        o.prefixes = prefixes;
        return std::forward<F>(f)(HashingEmbedder(o));
    }
    if (spec.starts_with("model2vec:")) {
        StaticEmbedderOptions o;
        o.prefixes = prefixes;
        return std::forward<F>(f)(StaticEmbedder(std::string(spec.substr(10)), o));
    }
    if (spec.starts_with("vectors:")) {
        WordVectorOptions o;
        o.prefixes = prefixes;
        auto wv = std::make_shared<const WordVectors>(WordVectors::load(std::string(spec.substr(8))));
        return std::forward<F>(f)(WordVectorEmbedder<StandardAnalyzer>(std::move(wv), StandardAnalyzer{}, o));
    }
    if (spec.starts_with("transformer:")) {
        TransformerEmbedderOptions o;
        o.prefixes = settings.prefixes;
        o.threads = settings.threads;
        o.quantize = settings.int8 ? TransformerQuantization::int8 : TransformerQuantization::none;
        o.progress = settings.progress;
        return std::forward<F>(f)(TransformerEmbedder(std::string(spec.substr(12)), std::move(o)));
    }
    throw InvalidArgument("unknown embedder '" + std::string(spec) + "' (expected " + choice_names(embedder_kinds) + ")");
}

/// The same with only role prefixes; empty prefixes count as unset.
template <class F>
decltype(auto) with_embedder(std::string_view spec, const RolePrefixes& prefixes, F&& f) {
    EmbedderSettings s;
    if (!prefixes.query.empty() || !prefixes.passage.empty()) s.prefixes = prefixes;
    return with_embedder(spec, s, std::forward<F>(f));
}

}  // namespace ragpp
