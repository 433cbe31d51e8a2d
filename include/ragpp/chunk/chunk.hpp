// ragpp: Chunk, ChunkOptions and the splitting engine shared by the Markdown,
// reStructuredText and plain-text chunkers.
//
// A chunk knows its place: its id "path:line" (the 1-based line of its section
// heading's text; "path:line#2", "#3"... for further parts of a long section), its
// first and last line, its heading path, its position in the document and the
// document's metadata. Its indexed `text` starts with a context line
// ("Title > Section > Subsection", the title left out when it reads as the first
// heading: context_line in chunk/detail/chunk.hpp); its `raw` span is kept for citation.
//
// Tokens. A token is a whitespace-separated word: a maximal run of bytes other than
// ASCII space, tab, LF, CR, FF and VT; except that a Chinese or Japanese character
// (Han, kana, CJK and fullwidth punctuation, see cjk_length), written without spaces,
// is a token of its own. Cuts fall between tokens: never inside a UTF-8 sequence, nor
// inside a word of a script written with spaces. count_tokens() counts them (the
// evidence budget, answer/evidence.hpp, uses it too).
//
// Splitting. A section whose body has at most `max_tokens` tokens is one chunk.
// A longer one is cut into parts: each part ends at the strongest boundary among its
// allowed end positions (paragraph > sentence end or code/table line > line break in
// prose > word), the latest such boundary winning. The next part starts up to
// `overlap` tokens earlier: at the earliest sentence (or stronger) boundary among the
// previous part's last `overlap` tokens, else exactly `overlap` tokens back in prose,
// and with no overlap in code and tables (a part never starts in the middle of a
// table row or code line); its end is then chosen after the previous part's end, so
// every part brings new text. `max_tokens` bounds every part, overlap included.
// Details and examples: docs/chunking.md.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ragpp/chunk/chunk_types.hpp>
#include <ragpp/chunk/detail/chunk.hpp>
#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>

namespace ragpp {

/// The section id of a chunk id: "path:line#3" -> "path:line" (Chunk::id -> Chunk::section).
[[nodiscard]] inline std::string_view section_of(std::string_view chunk_id) noexcept {
    const auto hash = chunk_id.rfind('#');
    if (hash == std::string_view::npos || hash + 1 == chunk_id.size()) return chunk_id;
    if (chunk_id.substr(hash + 1).find_first_not_of("0123456789") != std::string_view::npos) return chunk_id;
    return chunk_id.substr(0, hash);
}

/// The number of tokens of `text` as the chunker counts them ("Tokens" above: "数据库"
/// is 3 tokens, "MX-200 の契約" 3). ChunkOptions::max_tokens and
/// EvidenceOptions::token_budget are in these units.
[[nodiscard]] inline std::size_t count_tokens(std::string_view text) {
    return detail::chunking::tokens_of(text).size();
}

/// The text chunk offsets and lines refer to: the input without a leading UTF-8 BOM,
/// with CRLF and lone CR line ends turned into LF. Throws ParseError naming
/// `path:line` at the first malformed UTF-8 sequence.
[[nodiscard]] inline std::string normalize_source(std::string_view path, std::string_view text) {
    if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
    std::string out;
    out.reserve(text.size());
    std::size_t line = 1, col = 1;
    for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c == '\r') {
            out.push_back('\n');
            i += (i + 1 < text.size() && text[i + 1] == '\n') ? 2 : 1;
            ++line;
            col = 1;
            continue;
        }
        std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
        bool ok = len != 0 && i + len <= text.size();
        std::uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1FU) : len == 3 ? (c & 0x0FU) : (c & 0x07U);
        for (std::size_t k = 1; ok && k < len; ++k) {
            const auto cc = static_cast<unsigned char>(text[i + k]);
            ok = (cc & 0xC0) == 0x80;
            cp = (cp << 6) | (cc & 0x3FU);
        }
        // Overlong forms, surrogates and code points beyond U+10FFFF are malformed too.
        if (ok && ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
                   (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF))
            ok = false;
        if (!ok) {
            static constexpr char hex[] = "0123456789ABCDEF";
            throw ParseError(std::string(path) + ":" + std::to_string(line) + ": invalid UTF-8 (byte 0x" +
                             hex[c >> 4] + hex[c & 15] + " at column " + std::to_string(col) + ")");
        }
        out.append(text.substr(i, len));
        if (c == '\n') {
            ++line;
            col = 1;
        } else {
            ++col;
        }
        i += len;
    }
    return out;
}

}  // namespace ragpp
