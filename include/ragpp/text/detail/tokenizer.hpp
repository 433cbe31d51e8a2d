// ragpp detail: the not-API helpers of text/tokenizer.hpp (namespace detail), moved out of it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <ragpp/text/unicode.hpp>
#include <ragpp/text/utf8.hpp>

namespace ragpp::text {

namespace detail {

inline bool is_ahletter(WordBreak w) noexcept { return w == WordBreak::ALetter || w == WordBreak::Hebrew_Letter; }
inline bool is_mid_letter(WordBreak w) noexcept {
    return w == WordBreak::MidLetter || w == WordBreak::MidNumLet || w == WordBreak::Single_Quote;
}
inline bool is_mid_num(WordBreak w) noexcept {
    return w == WordBreak::MidNum || w == WordBreak::MidNumLet || w == WordBreak::Single_Quote;
}
inline bool is_ignorable(WordBreak w) noexcept {
    return w == WordBreak::Extend || w == WordBreak::Format || w == WordBreak::ZWJ;
}
inline bool is_newline(WordBreak w) noexcept {
    return w == WordBreak::CR || w == WordBreak::LF || w == WordBreak::Newline;
}

struct CharInfo {
    char32_t cp;
    std::uint32_t length;
    WordBreak wb;
    TokenScript script;
    bool pictographic;
};

/// Word_Break of the ASCII characters (no ASCII character is Extended_Pictographic
/// or has a token script).
inline constexpr std::array<WordBreak, 128> ascii_word_break = [] {
    std::array<WordBreak, 128> a{};
    for (char32_t c = 0; c < 128; ++c) a[c] = word_break(c);
    return a;
}();

inline CharInfo char_info(std::string_view s, std::size_t pos) noexcept {
    const auto b = static_cast<unsigned char>(s[pos]);
    if (b < 0x80) return {b, 1, ascii_word_break[b], TokenScript::none, false};
    const Utf8Char c = decode_utf8(s, pos);
    const auto& r = char_record(c.code_point);
    return {c.code_point, c.length, static_cast<WordBreak>(r.word_break), static_cast<TokenScript>(r.script),
            (r.flags & ragpp::text::detail::flag_extended_pictographic) != 0};
}

/// The Word_Break value of the first code point at or after `pos` that WB4 does not
/// ignore, or Other at the end of the text.
inline WordBreak next_effective(std::string_view s, std::size_t pos) noexcept {
    while (pos < s.size()) {
        const CharInfo c = char_info(s, pos);
        if (!is_ignorable(c.wb)) return c.wb;
        pos += c.length;
    }
    return WordBreak::Other;
}

/// What a segment contains (bits).
enum SegmentBits : unsigned {
    seg_letter = 1, seg_digit = 2, seg_katakana = 4, seg_han = 8, seg_hiragana = 16,
    seg_hangul = 32, seg_sea = 64, seg_emoji = 128, seg_other = 256
};

}  // namespace detail

}  // namespace ragpp::text
