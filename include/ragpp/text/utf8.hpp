// ragpp: UTF-8 decoding and validation.
//
// Decoding follows the Unicode Standard (chapter 3, table 3-7 "Well-Formed UTF-8 Byte
// Sequences"): overlong forms, surrogates (U+D800..DFFF) and values above U+10FFFF are
// ill-formed. An ill-formed sequence is replaced by U+FFFD, one replacement per
// "maximal subpart" (the W3C/WHATWG practice recommended in section 3.9 of the
// standard), so "\xE2\x82" followed by "A" gives U+FFFD then "A". The decoder never
// reads past the end of its input.
//
// Strict mode (Utf8Errors::strict) throws ragpp::ParseError naming the byte offset:
//   [ragpp.parse_error] <input>: invalid UTF-8 at byte offset 7 (byte 0xc3: truncated sequence)
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include <ragpp/core/error.hpp>
#include <ragpp/text/detail/utf8.hpp>
#include <ragpp/text/utf8_decode.hpp>

namespace ragpp::text {

/// What to do with ill-formed UTF-8: replace each maximal subpart by U+FFFD, or throw.
enum class Utf8Errors { replace, strict };

/// Appends the UTF-8 encoding of `cp` (a scalar value; others become U+FFFD).
inline void append_utf8(std::string& out, char32_t cp) {
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = replacement_character;
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
}

/// The byte offset of the first ill-formed sequence, or s.size() when `s` is valid.
[[nodiscard]] constexpr std::size_t find_invalid_utf8(std::string_view s) noexcept {
    std::size_t i = 0;
    while (i < s.size()) {
        if (static_cast<unsigned char>(s[i]) < 0x80) {
            ++i;
            continue;
        }
        const Utf8Char c = decode_utf8(s, i);
        if (!c.valid) return i;
        i += c.length;
    }
    return s.size();
}

[[nodiscard]] constexpr bool is_valid_utf8(std::string_view s) noexcept { return find_invalid_utf8(s) == s.size(); }

/// Throws ParseError naming the byte offset of the first ill-formed sequence of `s`.
/// `where` names the input in the message (a file name, a field).
inline void validate_utf8(std::string_view s, std::string_view where = "<input>") {
    const std::size_t bad = find_invalid_utf8(s);
    if (bad != s.size()) detail::throw_invalid_utf8(s, bad, where);
}

/// `s` as valid UTF-8: a copy with each maximal ill-formed subpart replaced by U+FFFD,
/// or, in strict mode, `s` itself after validate_utf8 (throws ParseError).
[[nodiscard]] inline std::string to_valid_utf8(std::string_view s, Utf8Errors errors = Utf8Errors::replace,
                                               std::string_view where = "<input>") {
    const std::size_t bad = find_invalid_utf8(s);
    if (bad == s.size()) return std::string(s);
    if (errors == Utf8Errors::strict) detail::throw_invalid_utf8(s, bad, where);
    std::string out(s.substr(0, bad));
    std::size_t i = bad;
    while (i < s.size()) {
        const Utf8Char c = decode_utf8(s, i);
        if (c.valid) out.append(s.substr(i, c.length));
        else append_utf8(out, replacement_character);
        i += c.length;
    }
    return out;
}

/// Calls f(code_point, byte_offset, byte_length) for each code point of `s`, ill-formed
/// sequences passed as U+FFFD (or, in strict mode, a ParseError before any call).
template <class F>
void for_each_code_point(std::string_view s, F&& f, Utf8Errors errors = Utf8Errors::replace) {
    if (errors == Utf8Errors::strict) validate_utf8(s);
    std::size_t i = 0;
    while (i < s.size()) {
        const Utf8Char c = decode_utf8(s, i);
        f(c.code_point, i, static_cast<std::size_t>(c.length));
        i += c.length;
    }
}

}  // namespace ragpp::text
