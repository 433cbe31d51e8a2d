// ragpp embed: the vectors an embedder gives, one JSON line per text:
//   {"text": "...", "vector": [0.0123, ...]}
// Texts come from the arguments or from --input FILE (one text per line; "-" reads
// standard input). Works for every embedder the tool knows (hashing, model2vec:DIR,
// vectors:FILE, transformer:DIR). See docs/embedders.md and docs/transformers.md.
#include "cli.hpp"
#include "engine.hpp"

#include <ragpp/core/error.hpp>
#include <ragpp/text/utf8.hpp>

#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace {

/// The lines of `path` ("-": standard input), without their line ends; every line is
/// checked to be UTF-8 (the error names the file and the line).
std::vector<std::string> read_lines(const std::string& path) {
    std::ifstream file;
    std::istream* in = &std::cin;
    if (path != "-") {
        file.open(path, std::ios::binary);
        if (!file) throw ragpp::IoError("cannot open '" + path + "'");
        in = &file;
    }
    std::vector<std::string> lines;
    std::size_t n = 0;
    for (std::string line; std::getline(*in, line);) {
        ++n;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        ragpp::text::validate_utf8(line, (path == "-" ? std::string("<stdin>") : path) + ":" + std::to_string(n));
        lines.push_back(std::move(line));
    }
    if (in->bad()) throw ragpp::IoError("cannot read '" + path + "'");
    return lines;
}

}  // namespace

namespace cli {

std::vector<std::string> texts_from(const ArgParser& p, const std::string& positional) {
    std::vector<std::string> texts = p.all(positional);
    if (p.has("input")) {
        if (!texts.empty()) throw UsageError("give texts as arguments or with --input, not both");
        texts = read_lines(p.get("input"));
    } else {
        if (texts.empty()) throw UsageError("missing argument " + positional + " (or --input FILE)");
        for (const auto& t : texts) ragpp::text::validate_utf8(t, positional);
    }
    return texts;
}

}  // namespace cli

namespace {

int run_embed(cli::ArgParser& p) {
    cli::EngineConfig c;
    cli::apply_embedder_options(p, c);
    cli::check_embedder_spec(c.embedder);
    c.threads = p.count("threads");
    const auto texts = cli::texts_from(p, "TEXT");
    const auto role = p.has("query") ? ragpp::Role::query : ragpp::Role::passage;
    const ragpp::RowMatrixXf m = cli::embed_texts(c, texts, role, !p.has("quiet") && cli::stderr_is_terminal());
    for (std::size_t i = 0; i < texts.size(); ++i) {
        const auto row = m.row(static_cast<Eigen::Index>(i));
        nlohmann::json line{{"text", texts[i]},
                            {"vector", std::vector<float>(row.data(), row.data() + row.size())}};
        std::cout << cli::dump_json(line) << '\n';
    }
    return 0;
}

const cli::Register register_embed{{"embed", "print the vector of each text, one JSON line each",
                         [](cli::ArgParser& p) {
                             cli::declare_embedder_options(p);
                             cli::declare_threads_option(p);
                             p.flag("query", "embed as queries (the query prefix), not as passages")
                                 .option("input", "FILE", "read the texts from FILE, one per line (- : standard input)")
                                 .flag("quiet", "no progress bar")
                                 .flag("json", "accepted for symmetry with the other commands: the output is always "
                                               "JSON lines")
                                 .positional("TEXT", "the texts to embed", cli::optional_many)
                                 .epilog("output: one line per text, in input order: {\"text\": ..., \"vector\": [...]}\n"
                                         "example:\n  ragpp embed --embedder transformer:models/e5-small-v2 --e5 --query "
                                         "\"how do I turn on link-time optimization\"");
                         },
                         run_embed}};

}  // namespace
