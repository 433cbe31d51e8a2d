// ragpp detail: the not-API helpers of answer/neutralize.hpp (namespace detail::neutral), moved out of it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ragpp {

namespace detail::neutral {

enum class Bracket : unsigned char { none, square_open, square_close, angle };

[[nodiscard]] constexpr Bracket bracket_class(char32_t c) noexcept {
    switch (c) {
        case U'[': case 0xFF3B: case 0x3010: case 0x3014: case 0x3016: case 0x3018: case 0x301A:
        case 0x27E6: case 0xFE5D: case 0x2045: case 0xFE47:
            return Bracket::square_open;
        case U']': case 0xFF3D: case 0x3011: case 0x3015: case 0x3017: case 0x3019: case 0x301B:
        case 0x27E7: case 0xFE5E: case 0x2046: case 0xFE48:
            return Bracket::square_close;
        case U'<': case U'>': case 0xFF1C: case 0xFF1E: case 0x2039: case 0x203A: case 0x00AB: case 0x00BB:
        case 0x3008: case 0x3009: case 0x27E8: case 0x27E9: case 0x2329: case 0x232A: case 0xFE64:
        case 0xFE65: case 0x226A: case 0x226B: case 0x22D8: case 0x22D9: case 0x276E: case 0x276F:
        case 0x300A: case 0x300B:
            return Bracket::angle;
        default:
            return Bracket::none;
    }
}

/// The value of a decimal digit in the common Unicode digit blocks, or -1.
[[nodiscard]] constexpr int digit_value(char32_t c) noexcept {
    constexpr char32_t zeros[] = {U'0',  0xFF10, 0x0660, 0x06F0, 0x0966, 0x09E6, 0x0A66, 0x0AE6,
                                  0x0B66, 0x0BE6, 0x0C66, 0x0CE6, 0x0D66, 0x0E50, 0x1D7CE, 0x1D7D8,
                                  0x1D7E2, 0x1D7EC, 0x1D7F6};
    for (char32_t z : zeros)
        if (c >= z && c <= z + 9) return static_cast<int>(c - z);
    // Superscript and subscript digits.
    if (c == 0x2070) return 0;
    if (c == 0x00B9) return 1;
    if (c == 0x00B2) return 2;
    if (c == 0x00B3) return 3;
    if (c >= 0x2074 && c <= 0x2079) return static_cast<int>(c - 0x2070);
    if (c >= 0x2080 && c <= 0x2089) return static_cast<int>(c - 0x2080);
    // Circled and parenthesised digits read as numbers too.
    if (c >= 0x2460 && c <= 0x2468) return static_cast<int>(c - 0x2460 + 1);
    return -1;
}

[[nodiscard]] constexpr bool removed(char32_t c) noexcept {
    return c == 0x200B || c == 0x2060 || c == 0xFEFF || (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069) ||
           c == 0x200E || c == 0x200F || c == 0x061C;
}

[[nodiscard]] constexpr bool line_break(char32_t c) noexcept {
    return c == U'\n' || c == U'\r' || c == 0x0B || c == 0x0C || c == 0x85 || c == 0x2028 || c == 0x2029;
}

[[nodiscard]] constexpr bool is_space(char32_t c) noexcept { return c == U' ' || c == U'\t' || c == 0x3000 || c == 0xA0; }

/// ASCII lower case of a code point, folding fullwidth ASCII (U+FF01..FF5E) first.
[[nodiscard]] constexpr char32_t fold(char32_t c) noexcept {
    if (c >= 0xFF01 && c <= 0xFF5E) c -= 0xFEE0;
    if (c >= U'A' && c <= U'Z') c += 32;
    return c;
}

/// Whether line `l` (code points) starts with a role name and a colon, after spaces
/// and Markdown marks.
[[nodiscard]] inline bool is_role_line(const std::u32string& l) {
    static constexpr std::string_view roles[] = {"system", "assistant", "user", "developer", "human", "ai",
                                                 "instruction", "instructions", "tool", "function", "model",
                                                 "admin", "administrator", "operator"};
    std::size_t i = 0;
    while (i < l.size() && (is_space(l[i]) || l[i] == U'#' || l[i] == U'*' || l[i] == U'>' || l[i] == U'-' ||
                            l[i] == U'_' || fold(l[i]) == U'#' || fold(l[i]) == U'*' || fold(l[i]) == U'>'))
        ++i;
    std::string word;
    while (i < l.size() && fold(l[i]) >= U'a' && fold(l[i]) <= U'z' && word.size() < 16)
        word.push_back(static_cast<char>(fold(l[i++])));
    while (i < l.size() && is_space(l[i])) ++i;
    if (i >= l.size() || (fold(l[i]) != U':')) return false;
    for (auto r : roles)
        if (word == r) return true;
    return false;
}

}  // namespace detail::neutral

}  // namespace ragpp
