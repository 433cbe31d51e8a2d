// ragpp: chunk_document, the chunker chosen by file extension.
//   .md .markdown .mdown .mkd .mkdn     Markdown (markdown.hpp)
//   .rst .rest                          reStructuredText (rst.hpp)
//   anything else                       plain text (text.hpp)
// Extensions are compared without regard to ASCII case.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <ragpp/chunk/chunk.hpp>
#include <ragpp/chunk/markdown.hpp>
#include <ragpp/chunk/rst.hpp>
#include <ragpp/chunk/text.hpp>
#include <ragpp/core/types.hpp>

namespace ragpp {

enum class SourceFormat { markdown, rst, text };

/// The format of a file, from its extension.
[[nodiscard]] inline SourceFormat source_format(std::string_view path) {
    const std::string name = detail::chunking::file_name(path);
    const auto dot = name.find_last_of('.');
    if (dot == std::string::npos || dot == 0) return SourceFormat::text;
    std::string ext = name.substr(dot + 1);
    for (auto& c : ext)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (ext == "md" || ext == "markdown" || ext == "mdown" || ext == "mkd" || ext == "mkdn") return SourceFormat::markdown;
    if (ext == "rst" || ext == "rest") return SourceFormat::rst;
    return SourceFormat::text;
}

/// Chunks `source` (its id is its path) with the chunker of its format.
[[nodiscard]] inline std::vector<Chunk> chunk_document(const Document& source, const ChunkOptions& options = {}) {
    switch (source_format(source.id)) {
        case SourceFormat::markdown: return chunk_markdown(source, options);
        case SourceFormat::rst: return chunk_rst(source, options);
        case SourceFormat::text: break;
    }
    return chunk_text(source, options);
}

}  // namespace ragpp
