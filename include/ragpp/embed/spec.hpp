// ragpp: the grammar of an embedder spec ("hashing", "model2vec:DIR", ...), the one
// table of its kinds and its one check, without the embedders (embed/dispatch.hpp builds
// them). Light: a front end checks a spec before any work.
#pragma once

#include <string>
#include <string_view>

#include <ragpp/core/choices.hpp>
#include <ragpp/core/error.hpp>

namespace ragpp {

/// The kinds of embedder a spec names (embed/dispatch.hpp's with_embedder builds them).
inline constexpr Choice embedder_kinds[] = {
    {"hashing", "built in, no download; finds shared words and word parts, not synonyms"},
    {"hashing:DIM", "the same with DIM dimensions"},
    {"model2vec:DIR", "a Model2Vec model folder"},
    {"vectors:FILE", "word2vec text/binary or GloVe text, averaged"},
    {"transformer:DIR",
     "a Hugging Face / sentence-transformers folder: BERT, MiniLM, BGE, E5, GTE, XLM-RoBERTa; --quantize int8 for speed"},
};

/// Throws InvalidArgument, naming `what`, unless `spec` has the shape of an embedder spec
/// (embedder_kinds; DIM from 1 to 999999). The one check of that grammar, made before any
/// work; what DIR or FILE holds is checked when the embedder is loaded.
inline void check_embedder_spec(std::string_view spec, std::string_view what = "embedder") {
    for (std::string_view kind : {"model2vec:", "vectors:", "transformer:"})
        if (spec.starts_with(kind) && spec.size() > kind.size()) return;
    if (spec == "hashing") return;
    if (spec.starts_with("hashing:")) {
        const std::string_view dim = spec.substr(8);
        if (dim.empty() || dim.size() > 6 || dim.find_first_not_of("0123456789") != std::string_view::npos ||
            dim.find_first_not_of('0') == std::string_view::npos)
            throw InvalidArgument(std::string(what) + " '" + std::string(spec) +
                                  "': hashing:DIM needs a dimension from 1 to 999999");
        return;
    }
    throw InvalidArgument(std::string(what) + " '" + std::string(spec) + "' is not " + choice_names(embedder_kinds));
}

}  // namespace ragpp
