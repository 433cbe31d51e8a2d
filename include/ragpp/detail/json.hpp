// ragpp detail: parsing JSON text with bounded nesting and errors that name the source.
//
// nlohmann/json 3.11 parses and destroys values of any depth without recursion, but
// copies, compares and serialises them recursively: dump() of 4,000 nested arrays
// overflows the stack of an AddressSanitizer build, a copy of 100,000 that of a release
// build (GCC 12, 8 MB stack; the program that measures it is in docs/errors.md). ragpp's
// readers copy and dump parts of the files they read (in error messages, for
// instance), so every JSON text ragpp parses is first scanned for its nesting depth,
// without recursion, and refused beyond max_json_depth levels: no file ragpp reads
// (tokenizer.json, config.json, question sets, BEIR lines, safetensors headers) needs
// more than 8.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include <ragpp/core/error.hpp>

namespace ragpp::detail {

/// The deepest nesting of arrays and objects ragpp accepts in a JSON text.
inline constexpr std::size_t max_json_depth = 100;

/// The byte offset of the bracket at which `text` nests deeper than `limit` arrays and
/// objects, or npos. Brackets inside strings do not count; the text need not be valid.
[[nodiscard]] inline std::size_t json_too_deep(std::string_view text, std::size_t limit = max_json_depth) noexcept {
    std::size_t depth = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\') ++i;
            else if (c == '"') in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > limit) return i;
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return std::string_view::npos;
}

/// The line of byte `offset` in `text`, counting from `first_line`.
[[nodiscard]] inline std::size_t line_at(std::string_view text, std::size_t offset, std::size_t first_line = 1) noexcept {
    std::size_t line = first_line;
    for (std::size_t i = 0; i < offset && i < text.size(); ++i) line += text[i] == '\n' ? 1 : 0;
    return line;
}

/// Parses `text` (whose first line is line `first_line` of `source`). Throws ParseError
/// "<source>:<line>: ..." when it is not JSON (invalid UTF-8 included) or nests deeper
/// than max_json_depth.
[[nodiscard]] inline nlohmann::json parse_json(std::string_view text, std::string_view source,
                                               std::size_t first_line = 1) {
    const auto where = [&](std::size_t offset) {
        return std::string(source) + ":" + std::to_string(line_at(text, offset, first_line)) + ": ";
    };
    if (const std::size_t at = json_too_deep(text); at != std::string_view::npos)
        throw ParseError(where(at) + "JSON nested deeper than " + std::to_string(max_json_depth) + " levels");
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        throw ParseError(where(e.byte == 0 ? 0 : e.byte - 1) + "invalid JSON: " + e.what());
    } catch (const nlohmann::json::exception& e) {
        throw ParseError(where(0) + "invalid JSON: " + e.what());
    }
}

}  // namespace ragpp::detail
