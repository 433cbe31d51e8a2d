// ragpp: Markdown front matter, read into Metadata: a small YAML subset (between "---"
// fences), a small TOML subset (between "+++" fences, as Hugo writes it), and the rules
// that make a slip in an access declaration fail closed.
//
// YAML subset. Supported (one document, block style, spaces for indentation):
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
//
// TOML subset (parse_toml_front_matter):
//   key = "basic string"     escapes \" \\ \n \t; 'literal string' as written
//   key = 12 | -3.5 | 1_000  number -> double
//   key = 2025-03-01         Date; a date-time (2025-03-01T10:00:00Z) -> its text
//   key = true               the string "true" (as YAML's subset)
//   key = ["a", "b", 3]      array -> list of strings (bare items as written); it may
//                            span lines, with comments and a trailing comma
//   [table] / a.b = v        dotted keys ("table.key", "a.b"), as YAML's nested mappings
//   # comment, blank lines, a trailing "# comment"
// Anything else (inline tables {..}, [[arrays of tables]], multi-line strings, nested
// arrays, a bare word) is a ParseError naming the file and line.
//
// Access declarations fail closed (read_front_matter, what the Markdown chunker calls).
// The access field ("groups" unless ChunkOptions::access_field says otherwise) is read;
// a note whose front matter
//   - cannot be parsed (any ParseError above, an opening fence that is never closed
//     while the next non-blank line reads "key: ..." or "key = ..."), or
//   - holds a key that looks like an access declaration but is not the field: a key one
//     of whose dot-separated parts is, in any case, group, groups, access, acl, acls,
//     reader, readers, role, roles, visibility, permission or permissions ("Groups",
//     "group", "access", "access.groups", "ACL"), or the reserved "access_error", or
//   - gives the field a value that names no group: not a string or a list of strings,
//     null or ~, or a name that is not a group name (group_name_problem: empty, a ',',
//     a control character, white space at an end, null/true/false/yes/no/on/off/~)
// is locked: its access field becomes the empty list (AccessPolicy: no principal shares
// a group with it; only Principal::system(), the tool's --as-all, reads it) and its
// field "access_error" says why, naming the file and the key (or line). The other keys
// of a front matter that parsed are kept. `groups: []` is a valid declaration: nobody.
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
#include <ragpp/text/utf8.hpp>

namespace ragpp {

/// Parses front matter `text` (the lines between the "---" fences) in the YAML subset
/// above. `where` and `first_line` (the 1-based line of `text`'s first line in its
/// file) name the place of an error.
[[nodiscard]] inline Metadata parse_front_matter(std::string_view text, std::string_view where = "<input>",
                                                 std::size_t first_line = 1) {
    return detail::yaml::Parser(where, first_line).parse(detail::yaml::split_lines(text));
}

/// Parses front matter `text` (the lines between the "+++" fences) in the TOML subset
/// above; errors as parse_front_matter's.
[[nodiscard]] inline Metadata parse_toml_front_matter(std::string_view text, std::string_view where = "<input>",
                                                      std::size_t first_line = 1) {
    return detail::toml::Parser(where, first_line).parse(detail::yaml::split_lines(text));
}

enum class FrontMatterSyntax { yaml, toml };

/// The field of a locked document that says why (see the header comment).
inline constexpr std::string_view access_error_field = "access_error";

/// Whether front-matter key `key` looks like an access declaration but is not `field`
/// (the rule of the header comment).
[[nodiscard]] inline bool misdeclared_access_key(std::string_view key, std::string_view field = "groups") {
    if (key == field) return false;
    if (key == access_error_field) return true;
    static constexpr std::string_view words[] = {"group", "groups", "access", "acl", "acls", "reader", "readers",
                                                 "role", "roles", "visibility", "permission", "permissions"};
    for (std::size_t b = 0; b <= key.size();) {
        std::size_t e = key.find('.', b);
        if (e == std::string_view::npos) e = key.size();
        std::string part(key.substr(b, e - b));
        for (auto& c : part)
            if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        for (auto w : words)
            if (part == w) return true;
        b = e + 1;
    }
    return false;
}

/// Why `name` is not a group name, or "" when it is one. A group name is a token: not
/// empty, valid UTF-8, no ',' (the separator of the tool's --as, and of a list written as
/// one string), no control character (C0, DEL, C1), no white space at either end (--as
/// trims it), and none of YAML's null and boolean words in any case (null, ~, true,
/// false, yes, no, on, off: a writer who means "nobody" or a switch does not mean a
/// group, and `--as null` must not unlock it). Spaces inside a name are allowed.
[[nodiscard]] inline std::string group_name_problem(std::string_view name) {
    if (name.empty()) return "is empty";
    if (!text::is_valid_utf8(name)) return "is not valid UTF-8";
    for (std::size_t i = 0; i < name.size(); ++i) {
        const auto b = static_cast<unsigned char>(name[i]);
        if (b == ',') return "holds a ','";
        if (b < 0x20 || b == 0x7f || (b == 0xC2 && i + 1 < name.size() && static_cast<unsigned char>(name[i + 1]) < 0xA0))
            return "holds a control character";
    }
    const auto space = [](char c) { return c == ' ' || c == '\t'; };
    if (space(name.front()) || space(name.back())) return "has white space at its start or end";
    std::string lower(name);
    for (auto& c : lower)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    for (std::string_view w : {"null", "~"})
        if (lower == w) return "is YAML's null";
    for (std::string_view w : {"true", "false", "yes", "no", "on", "off"})
        if (lower == w) return "is a YAML boolean word";
    return {};
}

/// What is wrong with the access declarations of front matter `m` read from `where`
/// (a key that looks like one but is not `field`, a value of `field` that names no
/// group), or "" when nothing is.
[[nodiscard]] inline std::string access_declaration_problem(const Metadata& m, std::string_view where,
                                                            std::string_view field = "groups") {
    const std::string at = std::string(where) + ": front matter key '";
    for (const auto& [key, value] : m)
        if (misdeclared_access_key(key, field))
            return at + key + "' looks like an access declaration, but only '" + std::string(field) + "' is read";
    const auto it = m.find(std::string(field));
    if (it == m.end()) return {};
    const std::string bad = at + std::string(field) + "' ";
    auto check_name = [&](const std::string& g) -> std::string {
        if (g.empty()) return bad + "holds an empty group name";
        if (g.find(',') != std::string::npos) return bad + "holds the group name '" + g + "' with a ',' (write a list)";
        if (const std::string why = group_name_problem(g); !why.empty())
            return bad + "holds '" + g + "', which is no group name: it " + why;
        return {};
    };
    if (const auto* s = std::get_if<std::string>(&it->second)) {
        if (*s == "null" || *s == "~") return bad + "is null";
        return check_name(*s);
    }
    if (const auto* list = std::get_if<std::vector<std::string>>(&it->second)) {
        for (const auto& g : *list)
            if (auto p = check_name(g); !p.empty()) return p;
        return {};
    }
    return bad + "is a number or a date, not group names";
}

/// Locks `m` (see the header comment): `field` becomes the empty list, access_error_field `reason`.
inline void lock_access(Metadata& m, std::string reason, std::string_view field = "groups") {
    m.insert_or_assign(std::string(field), std::vector<std::string>{});
    m.insert_or_assign(std::string(access_error_field), std::move(reason));
}

/// Reads front matter `text` of `syntax` as the Markdown chunker does: parsed, then
/// checked; a ParseError or a problem (access_declaration_problem) gives the metadata
/// parsed so far (none after a ParseError) locked with the reason. Never throws ParseError.
[[nodiscard]] inline Metadata read_front_matter(std::string_view text, FrontMatterSyntax syntax, std::string_view where,
                                                std::size_t first_line, std::string_view field = "groups") {
    Metadata m;
    try {
        m = syntax == FrontMatterSyntax::yaml ? parse_front_matter(text, where, first_line)
                                              : parse_toml_front_matter(text, where, first_line);
    } catch (const ParseError& e) {
        std::string_view what = e.what();  // without its "[ragpp.parse_error] " tag
        if (const std::string tag = "[ragpp." + std::string(e.id()) + "] "; what.starts_with(tag)) what.remove_prefix(tag.size());
        lock_access(m, std::string(what), field);
        return m;
    }
    if (std::string problem = access_declaration_problem(m, where, field); !problem.empty()) lock_access(m, std::move(problem), field);
    return m;
}

}  // namespace ragpp
