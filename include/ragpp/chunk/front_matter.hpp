// ragpp: a small YAML subset for Markdown front matter, read into Metadata.
//
// Supported (one document, block style, spaces for indentation):
//   key: plain scalar        a number ("12", "-3.5", "1e3") -> double;
//                            "YYYY-MM-DD" -> Date; anything else -> string
//                            (true/false/null stay the strings "true", "false", "null")
//   key: "double quoted"     string; escapes \" \\ \n \t
//   key: 'single quoted'     string; '' is a quote
//   key: [a, "b c", 3]       flow list -> list of strings (items as written, unquoted)
//   key:                     block list -> list of strings
//     - a
//     - b
//   key: | (or >)            block scalar: the more-indented lines below, joined by
//     text                   newlines (|) or spaces (>)
//   parent:                  nested mapping -> dotted keys ("parent.child")
//     child: value
//   # comment, blank lines, trailing " # comment" after a plain scalar
// A key with no value and nothing below it is the empty string. Anything else (flow
// mappings {..}, a line without "key:", tabs in indentation, an unterminated quote or
// flow list, a date that does not exist) is a ParseError naming the file and line.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ragpp/chunk/detail/front_matter.hpp>
#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>

namespace ragpp {

/// Parses front matter `text` (the lines between the "---" fences) in the YAML subset
/// above. `where` and `first_line` (the 1-based line of `text`'s first line in its
/// file) name the place of an error.
[[nodiscard]] inline Metadata parse_front_matter(std::string_view text, std::string_view where = "<input>",
                                                 std::size_t first_line = 1) {
    std::vector<std::string_view> lines;
    std::size_t b = 0;
    while (b <= text.size()) {
        std::size_t e = text.find('\n', b);
        if (e == std::string_view::npos) e = text.size();
        std::string_view l = text.substr(b, e - b);
        if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
        lines.push_back(l);
        b = e + 1;
    }
    return detail::yaml::Parser(where, first_line).parse(lines);
}

}  // namespace ragpp
