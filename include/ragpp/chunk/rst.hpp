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
#include <ragpp/chunk/detail/rst.hpp>
#include <ragpp/core/types.hpp>

namespace ragpp {

/// Chunks a reStructuredText document (`source.id` is its path). Throws ParseError
/// (file:line) on malformed UTF-8, InvalidArgument on bad options.
[[nodiscard]] inline std::vector<Chunk> chunk_rst(const Document& source, const ChunkOptions& options = {}) {
    options.validate("chunk_rst");
    const detail::chunking::Lines lines(normalize_source(source.id, source.text));
    return detail::chunking::build_chunks(source, lines, detail::rst::layout(lines), options);
}

}  // namespace ragpp
