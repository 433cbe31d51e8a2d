// ragpp: the plain-text chunker. The whole file is one section without a heading:
// its id line is the first non-blank line; paragraphs are separated by blank lines;
// a long text is cut at paragraph, then sentence, then line, then word boundaries
// (chunk.hpp). The context line is the metadata "title", else the file name.
#pragma once

#include <cstddef>
#include <vector>

#include <ragpp/chunk/chunk.hpp>
#include <ragpp/core/types.hpp>

namespace ragpp {

/// Chunks a plain-text document (`source.id` is its path). Throws ParseError
/// (file:line) on malformed UTF-8, InvalidArgument on bad options.
[[nodiscard]] inline std::vector<Chunk> chunk_text(const Document& source, const ChunkOptions& options = {}) {
    options.validate("chunk_text");
    const detail::chunking::Lines lines(normalize_source(source.id, source.text));
    detail::chunking::Layout layout(lines.size());
    for (std::size_t i = 0; i < lines.size(); ++i)
        layout.kinds[i] = detail::chunking::trim(lines[i]).empty() ? detail::chunking::LineKind::blank
                                                                   : detail::chunking::LineKind::text;
    return detail::chunking::build_chunks(source, lines, layout, options);
}

}  // namespace ragpp
