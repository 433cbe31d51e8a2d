// ragpp: Chunk, ContextHook and ChunkOptions, the types of the chunkers (chunk/chunk.hpp).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>

namespace ragpp {

/// One chunk of a source document.
struct Chunk {
    /// "path:line" for the first part of a section, "path:line#N" for part N >= 2.
    std::string id;
    /// "path:line": the section the chunk belongs to (its id without "#N").
    std::string section;
    /// The source document's id (its path).
    std::string path;
    /// 1-based lines of the normalized source (see normalize_source), both inclusive.
    std::size_t first_line = 0;
    std::size_t last_line = 0;
    /// Byte offsets of `raw` in the normalized source: raw == source.substr(begin, end - begin).
    std::size_t begin = 0;
    std::size_t end = 0;
    /// The headings above the chunk, outermost first (empty before the first heading).
    std::vector<std::string> heading_path;
    /// 0-based position of the chunk in its document.
    std::size_t position = 0;
    /// 1-based part number within its section.
    std::size_t part = 1;
    /// The document's metadata (caller's fields over front matter fields).
    Metadata metadata;
    /// The context line: "Title > Section > Subsection".
    std::string context;
    /// What the indexes see: the context line, the hook's text (if any), a repeated
    /// table header (for a table split across chunks), then the raw span.
    std::string text;
    /// The exact span of the normalized source, for citation.
    std::string raw;

    /// The chunk as a Document for a Retriever: id = chunk id, text = indexed text,
    /// metadata = the document's metadata plus "source" (path), "section",
    /// "first_line", "last_line", "position" (numbers) and "heading_path" (list).
    [[nodiscard]] Document to_document() const {
        Document d{id, text, metadata};
        d.metadata["source"] = path;
        d.metadata["section"] = section;
        d.metadata["first_line"] = static_cast<double>(first_line);
        d.metadata["last_line"] = static_cast<double>(last_line);
        d.metadata["position"] = static_cast<double>(position);
        d.metadata["heading_path"] = heading_path;
        return d;
    }
};

/// A context hook: given a chunk (its `text` not yet final) and its source document,
/// returns text to add after the context line (e.g. a model-written summary of where
/// the chunk sits, as contextual retrieval does). Empty means nothing is added.
using ContextHook = std::function<std::string(const Chunk&, const Document&)>;

struct ChunkOptions {
    /// Maximum tokens of a chunk's raw span (the context line is not counted).
    std::size_t max_tokens = 400;
    /// Tokens shared by consecutive parts of a long section; unset means 15% of
    /// max_tokens (60 for 400). Must be smaller than max_tokens.
    std::optional<std::size_t> overlap;
    /// Optional context hook (see ContextHook).
    ContextHook context_hook;
    /// The metadata field that declares access (AccessPolicy's): a Markdown front matter
    /// with a slip in it is locked through this field (chunk/front_matter.hpp).
    /// Collection sets it to its policy's field.
    std::string access_field = "groups";

    [[nodiscard]] std::size_t overlap_tokens() const noexcept { return overlap.value_or(max_tokens * 15 / 100); }

    /// Throws InvalidArgument naming `where` when max_tokens is 0 or overlap >= max_tokens.
    void validate(const char* where) const {
        if (max_tokens == 0) throw InvalidArgument(std::string(where) + ": max_tokens is 0 (must be >= 1)");
        if (overlap_tokens() >= max_tokens)
            throw InvalidArgument(std::string(where) + ": overlap " + std::to_string(overlap_tokens()) +
                                  " must be smaller than max_tokens " + std::to_string(max_tokens));
    }
};

}  // namespace ragpp
