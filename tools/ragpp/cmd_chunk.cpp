// ragpp chunk [--max-tokens N] [--overlap N] FILE...: the chunks of each file as
// JSON lines (id, lines, heading path, text), the chunker chosen by extension.
#include "cli.hpp"

#include <ragpp/chunk/chunker.hpp>
#include <ragpp/core/error.hpp>
#include <ragpp/detail/file.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <variant>

namespace {

nlohmann::json meta_json(const ragpp::MetaValue& v) {
    return std::visit(
        [](const auto& x) -> nlohmann::json {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, ragpp::Date>) return x.to_string();
            else return x;
        },
        v);
}

int run_chunk(cli::ArgParser& args) {
    ragpp::ChunkOptions options;
    options.max_tokens = args.count("max-tokens");
    if (args.has("overlap")) options.overlap = args.count("overlap");
    try {
        options.validate("chunking");
    } catch (const ragpp::InvalidArgument& e) {
        throw cli::UsageError(e.what());
    }
    for (const auto& path : args.all("FILE")) {
        const auto chunks = ragpp::chunk_document(ragpp::Document{path, ragpp::detail::read_file(path), {}}, options);
        for (const auto& c : chunks) {
            nlohmann::json j;
            j["id"] = c.id;
            j["lines"] = {c.first_line, c.last_line};
            j["heading_path"] = c.heading_path;
            j["position"] = c.position;
            j["text"] = c.text;
            j["raw"] = c.raw;
            if (!c.metadata.empty()) {
                nlohmann::json m = nlohmann::json::object();
                for (const auto& [k, v] : c.metadata) m[k] = meta_json(v);
                j["metadata"] = std::move(m);
            }
            std::cout << cli::dump_json(j) << '\n';
        }
    }
    return 0;
}

const cli::Register register_chunk{{"chunk", "split Markdown, reStructuredText and text files into chunks (JSON lines)",
                         [](cli::ArgParser& p) {
                             p.option("max-tokens", "N", "maximum tokens (whitespace-separated words) per chunk", "400")
                                 .option("overlap", "N", "tokens shared by consecutive parts of a long section "
                                                         "(default: 15% of --max-tokens)")
                                 .flag("json", "accepted for symmetry with the other commands: the output is always "
                                               "JSON lines")
                                 .positional("FILE", "files to chunk (.md/.markdown, .rst, anything else as text)",
                                             cli::many)
                                 .epilog("Output: one JSON object per chunk: id (path:line[#part]), lines [first, "
                                         "last],\nheading_path, position, text (context line + span, as indexed), "
                                         "raw (the span),\nmetadata (front matter) when present.");
                         },
                         run_chunk}};

}  // namespace
