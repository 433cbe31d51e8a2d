// ragpp: the Markdown chunker.
//
// Sections start at headings: ATX ("## Title", up to 3 spaces of indentation, a
// space or tab after the #s, an optional closing run of #s removed) and setext (a
// paragraph underlined by = for level 1 or - for level 2; the heading's line is the
// paragraph's first line). Never headings: lines inside fenced code (``` or ~~~, the
// fence closed by a run of the same character at least as long, or the end of the
// file), lines indented by 4 or more columns (a tab counts to the next multiple of 4),
// lines inside an HTML comment.
// Front matter: a first line "---" and a closing "---" or "..." line (YAML subset), or
// "+++" and "+++" (TOML subset), blank lines allowed before the opening fence; it becomes
// the document's metadata (the caller's fields win). It fails closed (front_matter.hpp):
// one that cannot be parsed, an unclosed fence followed by a "key: ..." line, a key that
// looks like an access declaration but is not ChunkOptions::access_field, lock the
// document (access field [], "access_error" says why) instead of an error.
// Tables (GitHub style: a header row with |, a delimiter row such as |---|:--:|,
// rows up to the next blank line): a part that starts inside a table repeats the
// header and delimiter rows in its text (not in its raw span).
// Pure markup, in no chunk: front matter, heading lines, setext underlines, thematic
// breaks (---, ***, ___).
// CRLF and lone CR line ends and a UTF-8 BOM are normalized away (normalize_source).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <ragpp/chunk/chunk.hpp>
#include <ragpp/chunk/detail/markdown.hpp>
#include <ragpp/chunk/front_matter.hpp>
#include <ragpp/core/types.hpp>

namespace ragpp {

/// Chunks a Markdown document (`source.id` is its path, used in chunk ids). Throws
/// ParseError (file:line) on malformed UTF-8, InvalidArgument on bad options; a bad
/// front matter locks the document (see above).
[[nodiscard]] inline std::vector<Chunk> chunk_markdown(const Document& source, const ChunkOptions& options = {}) {
    options.validate("chunk_markdown");
    const detail::chunking::Lines lines(normalize_source(source.id, source.text));
    return detail::chunking::build_chunks(source, lines, detail::markdown::layout(source.id, lines, options.access_field),
                                          options);
}

}  // namespace ragpp
