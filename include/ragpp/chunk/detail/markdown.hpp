// ragpp detail: the not-API helpers of chunk/markdown.hpp (namespace detail::markdown), moved out of it.
#pragma once

#include <cctype>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <ragpp/chunk/chunk.hpp>
#include <ragpp/chunk/front_matter.hpp>

namespace ragpp {

namespace detail::markdown {

using chunking::indentation;
using chunking::Layout;
using chunking::LineKind;
using chunking::trim;

/// "#".."######" then a space, a tab or the end: the level, else 0. `t` is trimmed.
[[nodiscard]] inline int atx_level(std::string_view t) noexcept {
    std::size_t n = 0;
    while (n < t.size() && t[n] == '#') ++n;
    if (n == 0 || n > 6) return 0;
    if (n < t.size() && t[n] != ' ' && t[n] != '\t') return 0;
    return static_cast<int>(n);
}

/// The text of an ATX heading (`t` trimmed, `level` #s first), without a closing run
/// of #s (which must follow a space or tab, or be all there is).
[[nodiscard]] inline std::string atx_text(std::string_view t, int level) {
    std::string_view s = trim(t.substr(static_cast<std::size_t>(level)));
    std::size_t k = s.size();
    while (k > 0 && s[k - 1] == '#') --k;
    if (k == 0) return {};
    if (k < s.size() && (s[k - 1] == ' ' || s[k - 1] == '\t')) s = trim(s.substr(0, k));
    return std::string(s);
}

/// A run of one character (- * _) at least 3 long, spaces allowed between.
[[nodiscard]] inline bool thematic_break(std::string_view t) noexcept {
    if (t.empty() || (t[0] != '-' && t[0] != '*' && t[0] != '_')) return false;
    std::size_t count = 0;
    for (char c : t) {
        if (c == t[0]) ++count;
        else if (c != ' ' && c != '\t') return false;
    }
    return count >= 3;
}

/// All '=' or all '-' (`t` trimmed): 1 or 2, else 0.
[[nodiscard]] inline int setext_level(std::string_view t) noexcept {
    if (t.empty() || (t[0] != '=' && t[0] != '-')) return 0;
    for (char c : t)
        if (c != t[0]) return 0;
    return t[0] == '=' ? 1 : 2;
}

/// A list item or block quote start: such a paragraph is not underlined into a heading.
[[nodiscard]] inline bool container_start(std::string_view t) noexcept {
    if (t.empty()) return false;
    if (t[0] == '>') return true;
    if ((t[0] == '-' || t[0] == '*' || t[0] == '+') && (t.size() == 1 || t[1] == ' ' || t[1] == '\t')) return true;
    std::size_t d = 0;
    while (d < t.size() && d < 9 && t[d] >= '0' && t[d] <= '9') ++d;
    return d > 0 && d < t.size() && (t[d] == '.' || t[d] == ')') && (d + 1 == t.size() || t[d + 1] == ' ');
}

/// The cells of a table row (outer pipes dropped; \| is not a separator).
[[nodiscard]] inline std::vector<std::string_view> cells(std::string_view t) {
    t = trim(t);
    if (!t.empty() && t.front() == '|') t.remove_prefix(1);
    if (!t.empty() && t.back() == '|' && (t.size() < 2 || t[t.size() - 2] != '\\')) t.remove_suffix(1);
    std::vector<std::string_view> out;
    std::size_t b = 0;
    for (std::size_t i = 0; i <= t.size(); ++i) {
        if (i == t.size() || (t[i] == '|' && (i == 0 || t[i - 1] != '\\'))) {
            out.push_back(trim(t.substr(b, i - b)));
            b = i + 1;
        }
    }
    return out;
}

[[nodiscard]] inline bool delimiter_row(std::string_view t, std::size_t header_cells) {
    t = trim(t);
    if (t.find('|') == std::string_view::npos || t.find('-') == std::string_view::npos) return false;
    const auto cs = cells(t);
    if (cs.size() != header_cells) return false;
    for (auto c : cs) {
        if (!c.empty() && c.front() == ':') c.remove_prefix(1);
        if (!c.empty() && c.back() == ':') c.remove_suffix(1);
        if (c.empty()) return false;
        for (char ch : c)
            if (ch != '-') return false;
    }
    return true;
}

/// Opening fence: 3+ backticks or tildes (a backtick fence's info string has no
/// backtick). Returns the run length, 0 when not a fence.
[[nodiscard]] inline std::size_t fence_open(std::string_view t) noexcept {
    if (t.size() < 3 || (t[0] != '`' && t[0] != '~')) return 0;
    std::size_t n = 0;
    while (n < t.size() && t[n] == t[0]) ++n;
    if (n < 3) return 0;
    if (t[0] == '`' && t.substr(n).find('`') != std::string_view::npos) return 0;
    return n;
}

/// Whether `t` (a trimmed line) starts like a front-matter entry: "key:" (YAML) or
/// "key =" (TOML), the key made of letters, digits, '_', '-', '.' or quotes.
[[nodiscard]] inline bool entry_like(std::string_view t, FrontMatterSyntax syntax) noexcept {
    std::size_t n = 0;
    while (n < t.size() && (std::isalnum(static_cast<unsigned char>(t[n])) || t[n] == '_' || t[n] == '-' || t[n] == '.' ||
                            t[n] == '"' || t[n] == '\''))
        ++n;
    if (n == 0) return false;
    while (syntax == FrontMatterSyntax::toml && n < t.size() && t[n] == ' ') ++n;
    return n < t.size() && t[n] == (syntax == FrontMatterSyntax::yaml ? ':' : '=');
}

/// The front matter of `lines` into `lay` (see chunk/markdown.hpp); returns the first
/// line after it (0 when there is none).
[[nodiscard]] inline std::size_t front_matter(std::string_view where, const chunking::Lines& lines, Layout& lay,
                                              std::string_view access_field) {
    const std::size_t n = lines.size();
    std::size_t open = 0;  // blank lines may come before the opening fence
    while (open < n && trim(lines[open]).empty()) ++open;
    if (open == n) return 0;
    const std::string_view t = trim(lines[open]);
    FrontMatterSyntax syntax;
    if (t == "---" && lines[open].substr(0, 3) == "---") syntax = FrontMatterSyntax::yaml;
    else if (t == "+++" && lines[open].substr(0, 3) == "+++") syntax = FrontMatterSyntax::toml;
    else return 0;
    for (std::size_t k = open + 1; k < n; ++k) {
        const std::string_view c = trim(lines[k]);
        if (syntax == FrontMatterSyntax::yaml ? (c == "---" || c == "...") : c == "+++") {
            const std::size_t b = lines.starts[open + 1], e = lines.starts[k];
            lay.front_matter = read_front_matter(std::string_view(lines.text).substr(b, e - b), syntax, where, open + 2,
                                                 access_field);
            for (std::size_t j = 0; j <= k; ++j) lay.kinds[j] = LineKind::markup;
            return k + 1;
        }
    }
    // Never closed: a thematic break, unless the next line reads like an entry (a fence forgotten).
    std::size_t next = open + 1;
    while (next < n && trim(lines[next]).empty()) ++next;
    if (next < n && entry_like(trim(lines[next]), syntax))
        lock_access(lay.front_matter,
                    std::string(where) + ":" + std::to_string(open + 1) + ": front matter: the opening '" + std::string(t) +
                        "' is never closed",
                    access_field);
    return 0;
}

[[nodiscard]] inline Layout layout(std::string_view where, const chunking::Lines& lines, std::string_view access_field = "groups") {
    const std::size_t n = lines.size();
    Layout lay(n);
    std::size_t i = front_matter(where, lines, lay, access_field);
    char fence_char = 0;
    std::size_t fence_len = 0;
    bool in_comment = false;
    std::size_t para = Layout::npos;  // first line of the current prose paragraph
    for (; i < n; ++i) {
        const std::string_view line = lines[i];
        const std::string_view t = trim(line);
        const std::size_t ind = indentation(line);
        if (fence_char != 0) {
            lay.kinds[i] = LineKind::code;
            if (t.size() >= fence_len && t.find_first_not_of(fence_char) == std::string_view::npos) fence_char = 0;
            continue;
        }
        if (in_comment) {
            lay.kinds[i] = LineKind::text;
            if (line.find("-->") != std::string_view::npos) in_comment = false;
            continue;
        }
        if (t.empty()) {
            lay.kinds[i] = LineKind::blank;
            para = Layout::npos;
            continue;
        }
        if (const std::size_t f = fence_open(t); f != 0) {
            fence_char = t[0];
            fence_len = f;
            lay.kinds[i] = LineKind::code;
            para = Layout::npos;
            continue;
        }
        if (ind >= 4) {
            lay.kinds[i] = para == Layout::npos ? LineKind::code : LineKind::text;  // indented code, or continuation
            continue;
        }
        if (t.starts_with("<!--") && t.find("-->") == std::string_view::npos) {
            in_comment = true;
            lay.kinds[i] = LineKind::text;
            para = Layout::npos;
            continue;
        }
        if (const int level = atx_level(t); level != 0) {
            lay.kinds[i] = LineKind::markup;
            lay.headings.push_back({i, level, atx_text(t, level)});
            para = Layout::npos;
            continue;
        }
        if (const int level = setext_level(t);
            level != 0 && para != Layout::npos && !container_start(trim(lines[para]))) {
            std::string text;
            for (std::size_t j = para; j < i; ++j) {
                if (!text.empty()) text.push_back(' ');
                text.append(trim(lines[j]));
                lay.kinds[j] = LineKind::markup;
            }
            lay.kinds[i] = LineKind::markup;
            lay.headings.push_back({para, level, std::move(text)});
            para = Layout::npos;
            continue;
        }
        if (thematic_break(t)) {
            lay.kinds[i] = LineKind::markup;
            para = Layout::npos;
            continue;
        }
        if (t.find('|') != std::string_view::npos && i + 1 < n && delimiter_row(lines[i + 1], cells(t).size())) {
            lay.kinds[i] = LineKind::table_header;
            lay.kinds[i + 1] = LineKind::table_delim;
            lay.table_header[i] = lay.table_header[i + 1] = i;
            std::size_t j = i + 2;
            for (; j < n; ++j) {
                const std::string_view r = trim(lines[j]);
                if (r.empty() || r.find('|') == std::string_view::npos || fence_open(r) != 0 ||
                    atx_level(r) != 0)
                    break;
                lay.kinds[j] = LineKind::table_row;
                lay.table_header[j] = i;
            }
            i = j - 1;
            para = Layout::npos;
            continue;
        }
        lay.kinds[i] = LineKind::text;
        if (para == Layout::npos) para = i;
    }
    return lay;
}

}  // namespace detail::markdown

}  // namespace ragpp
