// ragpp analyze: print the terms an analyzer makes of a text, one per line (like
// Elasticsearch's _analyze). See docs/text-analysis.md.
#include "cli.hpp"

#include <ragpp/text/analyzer.hpp>
#include <ragpp/text/utf8.hpp>

#include <nlohmann/json.hpp>

#include <iostream>
#include <string>
#include <vector>

namespace {

std::string analyzer_list() {
    std::string s;
    for (auto n : ragpp::analyzer_names) {
        if (!s.empty()) s += '|';
        s += n;
    }
    return s;
}

int run_analyze(cli::ArgParser& args) {
    const std::string name = args.get("analyzer");
    const bool strict = args.has("strict");
    cli::usage_of([&] { return ragpp::with_analyzer(name, [](const auto&) { return 0; }); });
    std::vector<std::string> terms;
    ragpp::with_analyzer(name, [&](const auto& analyzer) {
        for (const auto& text : args.all("TEXT")) {
            if (strict) ragpp::text::validate_utf8(text, "TEXT");
            analyzer.analyze(text, terms);
        }
    });
    if (args.has("json")) std::cout << cli::dump_json(nlohmann::json(terms)) << '\n';
    else
        for (const auto& t : terms) std::cout << t << '\n';
    return 0;
}

const cli::Register register_analyze{{"analyze", "print the terms an analyzer makes of a text, one per line",
                         [](cli::ArgParser& p) {
                             p.option("analyzer", "NAME", "the analyzer: " + analyzer_list(), "standard")
                                 .flag("strict", "reject ill-formed UTF-8 instead of replacing it by U+FFFD")
                                 .flag("json", "print the terms as one JSON array")
                                 .positional("TEXT", "the text to analyze (several are analyzed in turn)", cli::many)
                                 .epilog("example:\n  ragpp analyze --analyzer french \"l'avenant MX-200 du 14,2 %\"\n"
                                         "  avenant\n  lavenant\n  mx\n  200\n  mx200\n  14,2");
                         },
                         run_analyze}};

}  // namespace
