// ragpp detail: the not-API helpers of answer/neutralize.hpp (namespace detail::neutral), moved out of it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>

#include <ragpp/answer/detail/fold_tables.hpp>
#include <ragpp/detail/grapheme.hpp>

namespace ragpp {

namespace detail::neutral {

enum class Bracket : unsigned char { none, square_open, square_close, angle };

/// The fold table's entry for `c` (answer/detail/fold_tables.hpp), or {none}.
struct Folded {
    fold_tables::Kind kind = fold_tables::none;
    std::uint8_t value = 0;  // a digit's value, an angle's weight
};

[[nodiscard]] inline Folded folded(char32_t c) noexcept {
    using fold_tables::ranges;
    if (c < 0x80) {  // ASCII without the search
        if (c == U'[') return {fold_tables::square_open, 0};
        if (c == U']') return {fold_tables::square_close, 0};
        if (c == U'<') return {fold_tables::angle_open, 1};
        if (c == U'>') return {fold_tables::angle_close, 1};
        if (c >= U'0' && c <= U'9') return {fold_tables::digit, static_cast<std::uint8_t>(c - U'0')};
        if (c == U' ') return {fold_tables::space, 0};
        return {};
    }
    const auto* it = std::upper_bound(std::begin(ranges), std::end(ranges), c,
                                      [](char32_t x, const fold_tables::Range& r) { return x < r.first; });
    if (it == std::begin(ranges) || c > (--it)->last) return {};
    if (it->kind == fold_tables::digit) return {it->kind, static_cast<std::uint8_t>(it->value + (c - it->first))};
    return {it->kind, it->value};
}

[[nodiscard]] inline Bracket bracket_class(char32_t c) noexcept {
    switch (folded(c).kind) {
        case fold_tables::square_open: return Bracket::square_open;
        case fold_tables::square_close: return Bracket::square_close;
        case fold_tables::angle_open: case fold_tables::angle_close: return Bracket::angle;
        default: return Bracket::none;
    }
}

/// How many ASCII angle brackets `c` reads as (« and ≪ 2, ⋘ 3), 0 when it is none.
[[nodiscard]] inline int angle_weight(char32_t c) noexcept {
    const Folded f = folded(c);
    return f.kind == fold_tables::angle_open || f.kind == fold_tables::angle_close ? f.value : 0;
}

[[nodiscard]] inline bool angle_opens(char32_t c) noexcept { return folded(c).kind == fold_tables::angle_open; }

/// The value of a decimal digit (any Nd family; superscript, subscript, circled and
/// other digits with a digit value), or -1.
[[nodiscard]] inline int digit_value(char32_t c) noexcept {
    const Folded f = folded(c);
    return f.kind == fold_tables::digit ? f.value : -1;
}

/// What the marker and delimiter checks skip after a bracket, a digit or a space: a
/// Default_Ignorable code point (U+200C, U+00AD, U+FE0F, tags ...) or a combining mark
/// (Grapheme_Cluster_Break Extend, ZWJ, SpacingMark: U+0338 on "<").
[[nodiscard]] inline bool skipped(char32_t c) noexcept {
    if (c < 0xAD) return false;
    if (folded(c).kind == fold_tables::ignorable) return true;
    const auto g = grapheme_property(c).gcb;
    return g == GraphemeBreak::extend || g == GraphemeBreak::zwj || g == GraphemeBreak::spacing_mark;
}

[[nodiscard]] constexpr bool removed(char32_t c) noexcept {
    return c == 0x200B || c == 0x2060 || c == 0xFEFF || (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069) ||
           c == 0x200E || c == 0x200F || c == 0x061C;
}

[[nodiscard]] constexpr bool line_break(char32_t c) noexcept {
    return c == U'\n' || c == U'\r' || c == 0x0B || c == 0x0C || c == 0x85 || c == 0x2028 || c == 0x2029;
}

[[nodiscard]] inline bool is_space(char32_t c) noexcept { return c == U'\t' || folded(c).kind == fold_tables::space; }

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
