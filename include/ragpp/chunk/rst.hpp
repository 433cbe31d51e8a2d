// ragpp: the reStructuredText chunker.
//
// Section titles: a title line underlined by a line of one repeated punctuation
// character (any of !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~), or over- and underlined by two
// equal such lines (the title may then be inset). The underline must be at least as
// long as the title, or at least 4 characters (docutils' rule), start in column 0,
// and an underline-only title must follow a blank line or the start. The hierarchy is
// the order in which adornment styles first appear: (character, with overline) pairs,
// the first style seen is level 1. A chunk's id line is the title line (not its
// adornments).
// Pure markup, in no chunk: titles and their adornments, transitions (a line of 4+
// punctuation characters between blank lines).
// Literal blocks (after a paragraph ending in "::" or a ".. code-block::",
// ".. code::", ".. sourcecode::" directive) are code: each line is a boundary.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ragpp/chunk/chunk.hpp>
#include <ragpp/core/types.hpp>

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

/// Chunks a reStructuredText document (`source.id` is its path). Throws ParseError
/// (file:line) on malformed UTF-8, InvalidArgument on bad options.
[[nodiscard]] inline std::vector<Chunk> chunk_rst(const Document& source, const ChunkOptions& options = {}) {
    options.validate("chunk_rst");
    const detail::chunking::Lines lines(normalize_source(source.id, source.text));
    return detail::chunking::build_chunks(source, lines, detail::rst::layout(lines), options);
}

}  // namespace ragpp
