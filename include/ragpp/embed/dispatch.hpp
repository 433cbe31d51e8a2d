// ragpp: picking an embedder at run time from a name, for command-line tools: the one
// place where the embedder type is chosen from a string (templates everywhere else).
//
//   hashing           HashingEmbedder (built in, no download)
//   model2vec:DIR     StaticEmbedder loaded from DIR
//   vectors:FILE      WordVectorEmbedder<StandardAnalyzer> over a word2vec / GloVe file
//
// with_embedder(spec, prefixes, f) builds the embedder and returns f(embedder).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include <ragpp/core/error.hpp>
#include <ragpp/embed/embedder.hpp>
#include <ragpp/embed/hashing.hpp>
#include <ragpp/embed/model2vec.hpp>
#include <ragpp/embed/word_vectors.hpp>
#include <ragpp/text/analyzer.hpp>

namespace ragpp {

/// The help text of an `--embedder` option (the E5 prefixes made visible).
inline constexpr std::string_view embedder_help =
    "  --embedder E        hashing (default: built in, no download; finds shared words and word\n"
    "                      parts, not synonyms), model2vec:DIR (a Model2Vec folder),\n"
    "                      vectors:FILE (word2vec text/binary or GloVe text, averaged)\n"
    "  --query-prefix P    text put before every query, --passage-prefix P before every passage.\n"
    "                      E5 models need --query-prefix 'query: ' --passage-prefix 'passage: ':\n"
    "                      without them their results degrade silently. --e5 sets both.\n";

/// Calls f with the embedder named by `spec`. Throws InvalidArgument for an unknown
/// kind, and whatever loading the model throws (IoError, FormatError, UnsupportedError...).
template <class F>
decltype(auto) with_embedder(std::string_view spec, const RolePrefixes& prefixes, F&& f) {
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
    throw InvalidArgument("unknown embedder '" + std::string(spec) +
                          "' (expected hashing, model2vec:DIR or vectors:FILE)");
}

}  // namespace ragpp
