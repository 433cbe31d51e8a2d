// ragpp detail: UTF-8 decoding and encoding for the embedders, and the Unicode
// character classes the BERT normalizer and pre-tokenizer use (tables generated from
// the Unicode Character Database 15.0 by scripts/gen_bert_unicode_tables.py).
//
// Decoding is lenient: an invalid or truncated sequence decodes as U+FFFD, one per
// bad byte, so an embedder never throws on text and always gives the same vector for
// the same bytes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <ragpp/detail/bert_unicode_tables.hpp>
#include <ragpp/text/utf8.hpp>

namespace ragpp::detail {

inline constexpr char32_t replacement_char = 0xFFFD;

/// Decodes one code point at `s[i]`, advancing i. Invalid input gives U+FFFD and
/// advances by one byte. (Not nodiscard: called to skip one character too.)
inline char32_t next_codepoint(std::string_view s, std::size_t& i) noexcept {
    const auto b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80) {
        ++i;
        return b0;
    }
    std::size_t len = 0;
    char32_t cp = 0;
    char32_t min = 0;
    if ((b0 & 0xE0) == 0xC0) { len = 2; cp = b0 & 0x1FU; min = 0x80; }
    else if ((b0 & 0xF0) == 0xE0) { len = 3; cp = b0 & 0x0FU; min = 0x800; }
    else if ((b0 & 0xF8) == 0xF0) { len = 4; cp = b0 & 0x07U; min = 0x10000; }
    else { ++i; return replacement_char; }
    if (i + len > s.size()) { ++i; return replacement_char; }
    for (std::size_t k = 1; k < len; ++k) {
        const auto b = static_cast<unsigned char>(s[i + k]);
        if ((b & 0xC0) != 0x80) { ++i; return replacement_char; }
        cp = (cp << 6) | (b & 0x3FU);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) { ++i; return replacement_char; }
    i += len;
    return cp;
}

[[nodiscard]] inline std::u32string decode_utf8(std::string_view s) {
    std::u32string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) out.push_back(next_codepoint(s, i));
    return out;
}

/// Encoding is text/utf8.hpp's (every code point the decoder above yields is a scalar
/// value, so its surrogate check never fires here).
using ragpp::text::append_utf8;

[[nodiscard]] inline std::string encode_utf8(std::u32string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char32_t c : s) append_utf8(out, c);
    return out;
}

template <std::size_t N>
[[nodiscard]] inline bool in_ranges(const bert_tables::CodeRange (&table)[N], char32_t cp) noexcept {
    const auto* it = std::upper_bound(std::begin(table), std::end(table), static_cast<std::uint32_t>(cp),
                                      [](std::uint32_t v, const bert_tables::CodeRange& r) { return v < r.first; });
    return it != std::begin(table) && cp <= (it - 1)->last;
}

/// General category Mn.
[[nodiscard]] inline bool is_nonspacing_mark(char32_t cp) noexcept { return in_ranges(bert_tables::mark_nonspacing, cp); }
/// General categories Cc, Cf, Cs, Co and Cn (unassigned in Unicode 15.0).
[[nodiscard]] inline bool is_other(char32_t cp) noexcept { return in_ranges(bert_tables::other, cp); }

/// The Unicode White_Space property (PropList.txt), which Rust's char::is_whitespace follows.
[[nodiscard]] constexpr bool is_unicode_whitespace(char32_t c) noexcept {
    return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

/// BERT's punctuation: every non-alphanumeric printable ASCII character, and the
/// Unicode general categories P*.
[[nodiscard]] inline bool is_bert_punctuation(char32_t c) noexcept {
    if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126)) return true;
    return c >= 0x80 && in_ranges(bert_tables::punctuation, c);
}

/// The CJK Unified Ideograph blocks BERT surrounds with spaces (BERT's
/// tokenization.py, _is_chinese_char).
[[nodiscard]] constexpr bool is_cjk_ideograph(char32_t c) noexcept {
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
           (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

/// Appends the full lowercase of `c` (the simple mapping, plus U+0130 -> "i" U+0307 as
/// in SpecialCasing.txt, which is what Rust's char::to_lowercase does).
inline void append_lowercase(std::u32string& out, char32_t c) {
    if (c < 0x80) {
        out.push_back(c >= 'A' && c <= 'Z' ? c + 32 : c);
        return;
    }
    if (c == 0x130) {
        out.push_back(U'i');
        out.push_back(0x307);
        return;
    }
    const auto& t = bert_tables::lowercase;
    const auto* it = std::lower_bound(std::begin(t), std::end(t), static_cast<std::uint32_t>(c),
                                      [](const bert_tables::CodeMap& m, std::uint32_t v) { return m.from < v; });
    out.push_back(it != std::end(t) && it->from == c ? static_cast<char32_t>(it->to) : c);
}

/// Appends `c` after canonical decomposition (NFD) with the non-spacing marks (Mn)
/// removed: what "strip accents" means for BERT. Hangul syllables decompose
/// algorithmically into their jamo (Unicode 15.0, section 3.12).
inline void append_stripped(std::u32string& out, char32_t c) {
    if (c < 0x80) {
        out.push_back(c);
        return;
    }
    if (c >= 0xAC00 && c <= 0xD7A3) {
        const char32_t s = c - 0xAC00;
        out.push_back(0x1100 + s / (21 * 28));
        out.push_back(0x1161 + (s % (21 * 28)) / 28);
        if (s % 28 != 0) out.push_back(0x11A7 + s % 28);
        return;
    }
    if (is_nonspacing_mark(c)) return;
    const auto& t = bert_tables::strip_accents;
    const auto* it = std::lower_bound(std::begin(t), std::end(t), static_cast<std::uint32_t>(c),
                                      [](const bert_tables::CodeStrip& m, std::uint32_t v) { return m.from < v; });
    if (it != std::end(t) && it->from == c) {
        for (std::uint32_t d : it->to)
            if (d != 0) out.push_back(d);
        return;
    }
    out.push_back(c);
}

}  // namespace ragpp::detail
