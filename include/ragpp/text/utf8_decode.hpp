// ragpp: decoding one UTF-8 code point (decode_utf8, Utf8Char); the rules are in text/utf8.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ragpp::text {

inline constexpr char32_t replacement_character = 0xFFFD;

/// One decoded code point: its value (U+FFFD when `valid` is false) and the number of
/// bytes it spans in the input (at least 1).
struct Utf8Char {
    char32_t code_point;
    std::uint32_t length;
    bool valid;
};

/// Decodes the code point starting at byte `pos` of `s` (requires pos < s.size()).
[[nodiscard]] constexpr Utf8Char decode_utf8(std::string_view s, std::size_t pos) noexcept {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
    const unsigned b0 = byte(pos);
    if (b0 < 0x80) return {b0, 1, true};
    unsigned need = 0;
    unsigned lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    char32_t cp = 0;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        need = 1;
        cp = b0 & 0x1Fu;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
        need = 2;
        cp = b0 & 0x0Fu;
        if (b0 == 0xE0) lo = 0xA0;
        if (b0 == 0xED) hi = 0x9F;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        need = 3;
        cp = b0 & 0x07u;
        if (b0 == 0xF0) lo = 0x90;
        if (b0 == 0xF4) hi = 0x8F;
    } else {
        return {replacement_character, 1, false};
    }
    std::uint32_t len = 1;
    for (unsigned k = 0; k < need; ++k) {
        if (pos + len >= s.size()) return {replacement_character, len, false};
        const unsigned b = byte(pos + len);
        const unsigned l = k == 0 ? lo : 0x80u, h = k == 0 ? hi : 0xBFu;
        if (b < l || b > h) return {replacement_character, len, false};
        cp = (cp << 6) | (b & 0x3Fu);
        ++len;
    }
    return {cp, len, true};
}

}  // namespace ragpp::text
