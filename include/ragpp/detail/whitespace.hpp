// ragpp detail: splitting at ASCII whitespace (space, \t, \n, \r, \f, \v), the one
// splitter of the library (WhitespaceAnalyzer, BM25's query title keys, the proximity
// reranker).
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace ragpp::detail {

[[nodiscard]] constexpr bool is_ascii_space(char c) noexcept {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/// Calls f(token) for each maximal run of non-space characters of `s`, in order.
template <class F>
constexpr void for_each_word(std::string_view s, F&& f) {
    std::size_t i = 0;
    const std::size_t n = s.size();
    while (i < n) {
        while (i < n && is_ascii_space(s[i])) ++i;
        const std::size_t start = i;
        while (i < n && !is_ascii_space(s[i])) ++i;
        if (i > start) f(s.substr(start, i - start));
    }
}

/// The tokens of `s` (views into it), in order.
[[nodiscard]] inline std::vector<std::string_view> split_words(std::string_view s) {
    std::vector<std::string_view> out;
    for_each_word(s, [&](std::string_view w) { out.push_back(w); });
    return out;
}

}  // namespace ragpp::detail
