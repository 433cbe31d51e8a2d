// ragpp analyze: print the terms an analyzer makes of a text, one per line (like
// Elasticsearch's _analyze). See docs/text-analysis.md.
#include "cli.hpp"

#include <ragpp/text/analyzer.hpp>
#include <ragpp/text/utf8.hpp>

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
    std::vector<std::string> terms;
    ragpp::with_analyzer(name, [&](const auto& analyzer) {
        for (const auto& text : args.all("TEXT")) {
            if (strict) ragpp::text::validate_utf8(text, "TEXT");
            analyzer.analyze(text, terms);
        }
    });
    for (const auto& t : terms) std::cout << t << '\n';
    return 0;
}

const cli::Register reg{{"analyze", "print the terms an analyzer makes of a text, one per line",
                         [](cli::ArgParser& p) {
                             p.option("analyzer", "NAME", "the analyzer: " + analyzer_list(), "standard")
                                 .flag("strict", "reject ill-formed UTF-8 instead of replacing it by U+FFFD")
                                 .positional("TEXT", "the text to analyze (several are analyzed in turn)", cli::many)
                                 .epilog("example:\n  ragpp analyze --analyzer french \"l'avenant MX-200 du 14,2 %\"\n"
                                         "  avenant\n  lavenant\n  mx\n  200\n  mx200\n  14,2");
                         },
                         run_analyze}};

}  // namespace
