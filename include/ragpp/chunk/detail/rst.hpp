// ragpp detail: the not-API helpers of chunk/rst.hpp (namespace detail::rst), moved out of it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ragpp/chunk/chunk.hpp>

namespace ragpp {

namespace detail::rst {

using chunking::indentation;
using chunking::Layout;
using chunking::LineKind;
using chunking::trim;

[[nodiscard]] inline bool adornment_char(char c) noexcept {
    return std::string_view("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~").find(c) != std::string_view::npos;
}

/// A line of one repeated adornment character from column 0 (trailing spaces
/// allowed): its character, else 0.
[[nodiscard]] inline char adornment(std::string_view line) noexcept {
    const std::string_view t = chunking::trim(line);
    if (t.empty() || line.front() != t.front() || !adornment_char(t.front())) return 0;
    for (char c : t)
        if (c != t.front()) return 0;
    return t.front();
}

/// Display width in code points (each UTF-8 sequence counts 1).
[[nodiscard]] inline std::size_t width(std::string_view s) noexcept {
    std::size_t w = 0;
    for (char c : s)
        if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++w;
    return w;
}

[[nodiscard]] inline Layout layout(const chunking::Lines& lines) {
    const std::size_t n = lines.size();
    Layout lay(n);
    std::vector<std::pair<char, bool>> styles;  // in order of first appearance
    auto level_of = [&](char c, bool over) {
        for (std::size_t s = 0; s < styles.size(); ++s)
            if (styles[s] == std::pair{c, over}) return static_cast<int>(s) + 1;
        styles.emplace_back(c, over);
        return static_cast<int>(styles.size());
    };
    bool literal_pending = false;  // the next indented block is a literal block
    std::size_t literal_indent = Layout::npos;  // inside a literal block: its parent's indentation
    for (std::size_t i = 0; i < n; ++i) {
        const std::string_view line = lines[i];
        const std::string_view t = trim(line);
        if (t.empty()) {
            lay.kinds[i] = literal_indent != Layout::npos ? LineKind::code : LineKind::blank;
            continue;
        }
        const std::size_t ind = indentation(line);
        if (literal_indent != Layout::npos) {
            if (ind > literal_indent) {
                lay.kinds[i] = LineKind::code;
                continue;
            }
            literal_indent = Layout::npos;
            // close trailing blank lines of the block as blanks (paragraph boundary)
            for (std::size_t j = i; j > 0 && trim(lines[j - 1]).empty(); --j) lay.kinds[j - 1] = LineKind::blank;
        }
        if (literal_pending && ind > 0) {
            std::size_t parent = 0;
            for (std::size_t j = i; j > 0; --j)
                if (!trim(lines[j - 1]).empty()) {
                    parent = indentation(lines[j - 1]);
                    break;
                }
            literal_pending = false;
            if (ind > parent) {
                literal_indent = parent;
                lay.kinds[i] = LineKind::code;
                continue;
            }
        }
        literal_pending = false;
        const bool after_blank = i == 0 || trim(lines[i - 1]).empty() || lay.kinds[i - 1] == LineKind::markup;
        const char over = adornment(line);
        // Overline, title, underline.
        if (over != 0 && after_blank && i + 2 < n && !trim(lines[i + 1]).empty() && adornment(lines[i + 1]) == 0 &&
            adornment(lines[i + 2]) == over && trim(lines[i + 2]).size() == t.size() &&
            t.size() >= width(trim(lines[i + 1]))) {
            lay.kinds[i] = lay.kinds[i + 1] = lay.kinds[i + 2] = LineKind::markup;
            lay.headings.push_back({i + 1, level_of(over, true), std::string(trim(lines[i + 1]))});
            i += 2;
            continue;
        }
        // Title, underline.
        if (ind == 0 && after_blank && i + 1 < n && (over == 0 || t.size() < 4)) {
            const char under = adornment(lines[i + 1]);
            const std::size_t ulen = trim(lines[i + 1]).size();
            if (under != 0 && (ulen >= width(t) || ulen >= 4)) {
                lay.kinds[i] = lay.kinds[i + 1] = LineKind::markup;
                lay.headings.push_back({i, level_of(under, false), std::string(t)});
                ++i;
                continue;
            }
        }
        // Transition.
        if (over != 0 && t.size() >= 4 && after_blank && (i + 1 == n || trim(lines[i + 1]).empty())) {
            lay.kinds[i] = LineKind::markup;
            continue;
        }
        lay.kinds[i] = LineKind::text;
        if (t.ends_with("::") || t.starts_with(".. code-block::") || t.starts_with(".. code::") ||
            t.starts_with(".. sourcecode::"))
            literal_pending = true;
    }
    return lay;
}

}  // namespace detail::rst

}  // namespace ragpp
