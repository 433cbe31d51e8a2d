// ragpp: WhitespaceAnalyzer, terms are the text split at ASCII whitespace, unchanged.
// It is the analyzer for input that is already tokenized (the BM25 parity fixtures,
// tokens produced by another system).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <ragpp/core/concepts.hpp>

namespace ragpp {

struct WhitespaceAnalyzer {
    void analyze(std::string_view text, std::vector<std::string>& out) const {
        std::size_t i = 0;
        const std::size_t n = text.size();
        auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
        while (i < n) {
            while (i < n && space(text[i])) ++i;
            const std::size_t start = i;
            while (i < n && !space(text[i])) ++i;
            if (i > start) out.emplace_back(text.substr(start, i - start));
        }
    }
    [[nodiscard]] static constexpr std::string_view name() noexcept { return "whitespace"; }
};
static_assert(Analyzer<WhitespaceAnalyzer>);

}  // namespace ragpp
