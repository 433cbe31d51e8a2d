// ragpp rerank: a cross-encoder's score of each passage for a query, one JSON line per
// passage, in input order: {"passage": "...", "score": 3.25} (the raw logit; higher is
// more relevant). Passages come from the arguments or from --input FILE (one per
// line; "-" reads standard input). See docs/transformers.md.
#include "cli.hpp"
#include "engine.hpp"

#include <nlohmann/json.hpp>

#include <iostream>
#include <string>
#include <vector>

namespace cli {
std::vector<std::string> texts_from(const ArgParser& p, const std::string& positional);  // cmd_embed.cpp
}

namespace {

int run_rerank(cli::ArgParser& p) {
    cli::EngineConfig c;
    const std::string reranker = p.get("reranker");
    if (!reranker.starts_with("cross-encoder:"))
        throw cli::UsageError("--reranker '" + reranker + "' is not cross-encoder:DIR");
    c.threads = p.count("threads");
    c.quantize = cli::usage_of([&] { return ragpp::parse_transformer_quantization(p.get("quantize")); });
    const auto passages = cli::texts_from(p, "PASSAGE");
    const auto scores = cli::rerank_texts(c, reranker, p.get("QUERY"), passages);
    for (std::size_t i = 0; i < passages.size(); ++i)
        std::cout << cli::dump_json(nlohmann::json{{"passage", passages[i]}, {"score", scores[i]}}) << '\n';
    return 0;
}

const cli::Register register_rerank{{"rerank", "score passages for a query with a cross-encoder, one JSON line each",
                         [](cli::ArgParser& p) {
                             p.option("reranker", "R", "cross-encoder:DIR (a Hugging Face sequence-classification folder)")
                                 .option("quantize", "none|int8", "linear layers in float32 or dynamic int8", "none");
                             cli::declare_threads_option(p);
                             p.option("input", "FILE", "read the passages from FILE, one per line (- : standard input)")
                                 .flag("json", "accepted for symmetry with the other commands: the output is always "
                                               "JSON lines")
                                 .positional("QUERY", "the query")
                                 .positional("PASSAGE", "the passages to score", cli::optional_many)
                                 .epilog("output: one line per passage, in input order: {\"passage\": ..., \"score\": ...}\n"
                                         "example:\n  ragpp rerank --reranker cross-encoder:models/ms-marco-MiniLM-L-6-v2 "
                                         "\"what is CMP0077\" \"option() honors normal variables\" \"Bananas\"");
                         },
                         run_rerank}};

}  // namespace
