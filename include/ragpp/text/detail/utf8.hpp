// ragpp detail: the error message of invalid UTF-8 behind text/utf8.hpp (throw_invalid_utf8).
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>

#include <ragpp/core/error.hpp>
#include <ragpp/text/utf8_decode.hpp>

namespace ragpp::text {

namespace detail {
[[noreturn]] inline void throw_invalid_utf8(std::string_view s, std::size_t offset, std::string_view where) {
    const auto b = static_cast<unsigned char>(s[offset]);
    const Utf8Char c = decode_utf8(s, offset);
    const bool lead = (b >= 0xC2 && b <= 0xF4);
    const char* why = !lead                            ? (b >= 0x80 && b <= 0xBF ? "unexpected continuation byte" : "byte never valid in UTF-8")
                      : offset + c.length >= s.size() ? "truncated sequence"
                                                      : "bad continuation byte";
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", b);
    throw ParseError(std::string(where) + ": invalid UTF-8 at byte offset " + std::to_string(offset) + " (byte " + hex +
                     ": " + why + ")");
}
}  // namespace detail

}  // namespace ragpp::text
