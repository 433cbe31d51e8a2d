// ragpp detail: the not-API helpers of answer/evidence.hpp (namespace detail::evidence), moved out of it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <ragpp/chunk/detail/chunk.hpp>
#include <ragpp/detail/identifiers.hpp>
#include <ragpp/retrieve/retriever.hpp>

namespace ragpp {

namespace detail::evidence {

[[nodiscard]] inline const std::string* string_field(const Metadata& m, std::string_view key) {
    auto it = m.find(key);
    return it == m.end() ? nullptr : std::get_if<std::string>(&it->second);
}
[[nodiscard]] inline std::optional<double> number_field(const Metadata& m, std::string_view key) {
    auto it = m.find(key);
    if (it == m.end()) return std::nullopt;
    if (const auto* d = std::get_if<double>(&it->second)) return *d;
    return std::nullopt;
}
[[nodiscard]] inline std::string value_text(const MetaValue& v) {
    return std::visit(
        [](const auto& x) -> std::string {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, std::string>) return x;
            else if constexpr (std::is_same_v<T, Date>) return x.to_string();
            else if constexpr (std::is_same_v<T, double>) {
                char buf[32];
                std::snprintf(buf, sizeof buf, "%.15g", x);
                return buf;
            } else {
                std::string s;
                for (const auto& e : x) s += (s.empty() ? "" : ", ") + e;
                return s;
            }
        },
        v);
}

/// The tokens of `s` as the chunker counts them (chunk/chunk.hpp, "Tokens"): the
/// chunker's own function, so a budget and a chunk size are in the same units.
using ragpp::detail::chunking::tokens_of;

/// `a` followed by `b`, the longest run of tokens ending `a` and starting `b` written
/// once; `b` dropped when `a` contains it.
[[nodiscard]] inline std::string join_overlapping(const std::string& a, const std::string& b) {
    if (b.empty() || a.find(b) != std::string::npos) return a;
    if (a.empty() || b.find(a) != std::string::npos) return b;
    const auto ta = tokens_of(a), tb = tokens_of(b);
    for (std::size_t n = std::min(ta.size(), tb.size()); n > 0; --n) {
        bool same = true;
        for (std::size_t i = 0; i < n && same; ++i) same = ta[ta.size() - n + i] == tb[i];
        if (same) {
            const std::size_t after = static_cast<std::size_t>(tb[n - 1].data() + tb[n - 1].size() - b.data());
            return a + b.substr(after);
        }
    }
    return a + "\n" + b;
}

using ragpp::detail::identifiers;

/// "[1]", "[1] and [2]", "[1], [2] and [3]".
[[nodiscard]] inline std::string number_list(const std::vector<std::size_t>& numbers) {
    std::string out;
    for (std::size_t k = 0; k < numbers.size(); ++k)
        out += (k == 0 ? "" : k + 1 == numbers.size() ? " and " : ", ") + ("[" + std::to_string(numbers[k]) + "]");
    return out;
}

[[nodiscard]] inline std::string hex(std::uint64_t v, std::size_t digits) {
    static constexpr char h[] = "0123456789abcdef";
    std::string s(digits, '0');
    for (std::size_t i = 0; i < digits; ++i) s[digits - 1 - i] = h[(v >> (4 * (i % 16))) & 15U];
    return s;
}

}  // namespace detail::evidence

}  // namespace ragpp
