// ragpp (internal): what counts as an identifier in a question or a heading.
#pragma once

#include <algorithm>
#include <set>
#include <string>
#include <string_view>

namespace ragpp::detail {

/// Whether `w` (one whitespace-free word, trimmed of surrounding punctuation) is an
/// identifier: at least 3 characters of ASCII letters, digits, '-', '_', '.', '/',
/// with at least one letter and one digit ("MX-200", "ORA-01555", "CMP0077", "v2.1").
[[nodiscard]] inline bool is_identifier(std::string_view w) noexcept {
    auto part = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
               c == '.' || c == '/';
    };
    if (w.size() < 3 || !std::all_of(w.begin(), w.end(), part)) return false;
    const bool letter = std::any_of(w.begin(), w.end(), [](char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; });
    const bool digit = std::any_of(w.begin(), w.end(), [](char c) { return c >= '0' && c <= '9'; });
    return letter && digit;
}

/// `w` without leading and trailing punctuation that cannot end an identifier.
[[nodiscard]] inline std::string_view trim_identifier(std::string_view w) noexcept {
    auto edge = [](char c) {
        return !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'));
    };
    while (!w.empty() && edge(w.front())) w.remove_prefix(1);
    while (!w.empty() && edge(w.back())) w.remove_suffix(1);
    return w;
}

/// `w` without leading and trailing ASCII punctuation ("Peru?" -> "Peru"); UTF-8
/// letters are kept.
[[nodiscard]] inline std::string_view trim_punctuation(std::string_view w) noexcept {
    auto punct = [](char c) {
        return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~');
    };
    while (!w.empty() && punct(w.front())) w.remove_prefix(1);
    while (!w.empty() && punct(w.back())) w.remove_suffix(1);
    return w;
}

/// The identifiers of a text (see is_identifier), upper-cased: maximal runs of
/// identifier characters, trimmed.
[[nodiscard]] inline std::set<std::string> identifiers(std::string_view s) {
    std::set<std::string> out;
    auto part = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
               c == '.' || c == '/';
    };
    std::size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && !part(s[i])) ++i;
        const std::size_t b = i;
        while (i < s.size() && part(s[i])) ++i;
        const std::string_view w = trim_identifier(s.substr(b, i - b));
        if (is_identifier(w)) {
            std::string u(w);
            for (char& c : u)
                if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
            out.insert(std::move(u));
        }
    }
    return out;
}

}  // namespace ragpp::detail
