// 04: the same sentence through each analyzer, and why an identifier stays findable
// however it is typed. The output is compared with 04_text_analysis.expected by ctest.
#include <ragpp/text/analyzer.hpp>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

void print_terms(std::string_view label, const std::vector<std::string>& terms) {
    std::printf("%-9.*s", static_cast<int>(label.size()), label.data());
    for (const auto& t : terms) std::printf(" %s", t.c_str());
    std::printf("\n");
}

int main() {
    const char* text = "L’avenant au contrat MX-200 prévoit un préavis de 2 mois.";
    std::printf("%s\n", text);
    for (auto name : ragpp::analyzer_names)
        ragpp::with_analyzer(name, [&](const auto& analyzer) { print_terms(name, ragpp::analyze(analyzer, text)); });

    // A query matches a document when they share terms: every spelling of the
    // identifier shares some with the document's "MX-200".
    const ragpp::FrenchAnalyzer french;
    const auto doc = ragpp::analyze(french, text);
    std::printf("\nquery terms shared with the document (french):\n");
    for (const char* query : {"MX-200", "mx200", "MX 200", "preavis", "l'avenant"}) {
        std::vector<std::string> shared;
        for (const auto& t : ragpp::analyze(french, query))
            if (std::find(doc.begin(), doc.end(), t) != doc.end()) shared.push_back(t);
        print_terms(query, shared);
    }
}
