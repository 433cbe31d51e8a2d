// ragpp: WhitespaceAnalyzer, terms are the text split at ASCII whitespace, unchanged.
// It is the analyzer for input that is already tokenized (the BM25 parity fixtures,
// tokens produced by another system).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <ragpp/core/concepts.hpp>
#include <ragpp/detail/whitespace.hpp>

namespace ragpp {

struct WhitespaceAnalyzer {
    void analyze(std::string_view text, std::vector<std::string>& out) const {
        detail::for_each_word(text, [&](std::string_view w) { out.emplace_back(w); });
    }
    [[nodiscard]] static constexpr std::string_view name() noexcept { return "whitespace"; }
};
static_assert(Analyzer<WhitespaceAnalyzer>);

}  // namespace ragpp
