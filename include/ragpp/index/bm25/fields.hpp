// ragpp: the metadata fields BM25Index scores with BM25F (see "Fields" in
// index/bm25/scoring.hpp): where a document's title, heading path and source path come
// from, and the exact-title keys that let a query naming a page's title meet it.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <ragpp/core/types.hpp>

namespace ragpp {

/// The metadata fields of a document, as BM25Index indexes them: title, heading path,
/// source path (in that order). A document has fields when its metadata has "source"
/// (a string) or "heading_path" (a list), as chunks have (Chunk::to_document):
///   title    = metadata "title" when it is a non-empty string, else the first heading,
///              else the file name without its extension (a page without a heading,
///              like CMake's module stubs, is known by its file name);
///   headings = the heading path, without a first heading used as the title, one a line;
///   path     = "source" with its directory separators turned into spaces and its
///              extension dropped ("policy/CMP0077.rst" -> "policy CMP0077").
/// Other documents (BEIR, plain ones) have three empty fields.
[[nodiscard]] inline std::array<std::string, 3> bm25_document_fields(const Document& doc) {
    std::array<std::string, 3> out;
    const auto src = doc.metadata.find("source");
    const auto hp = doc.metadata.find("heading_path");
    const auto* source = src == doc.metadata.end() ? nullptr : std::get_if<std::string>(&src->second);
    const auto* headings = hp == doc.metadata.end() ? nullptr : std::get_if<std::vector<std::string>>(&hp->second);
    if (source == nullptr && headings == nullptr) return out;
    if (auto t = doc.metadata.find("title"); t != doc.metadata.end())
        if (const auto* title = std::get_if<std::string>(&t->second)) out[0] = *title;
    std::size_t first = 0;
    if (out[0].empty() && headings != nullptr && !headings->empty()) {
        out[0] = headings->front();
        first = 1;
    }
    if (headings != nullptr)
        for (std::size_t i = first; i < headings->size(); ++i) {
            if (i == 0 && (*headings)[0] == out[0]) continue;
            if (!out[1].empty()) out[1] += '\n';
            out[1] += (*headings)[i];
        }
    if (source != nullptr) {
        if (out[0].empty()) {
            const auto slash = source->find_last_of("/\\");
            std::string name = source->substr(slash == std::string::npos ? 0 : slash + 1);
            if (const auto dot = name.find_last_of('.'); dot != std::string::npos && dot > 0) name.resize(dot);
            out[0] = std::move(name);
        }
        std::string p = *source;
        const auto slash = p.find_last_of("/\\");
        const auto dot = p.find_last_of('.');
        if (dot != std::string::npos && (slash == std::string::npos || dot > slash + 1)) p.resize(dot);
        for (char& c : p)
            if (c == '/' || c == '\\') c = ' ';
        out[2] = std::move(p);
    }
    return out;
}


/// The exact-title key of a text: U+001F, then the text in ASCII lower case with
/// whitespace runs as one space and the punctuation around it trimmed; "" when
/// nothing is left. A title adds its key to the title field; a query adds the key of
/// its whole text and of each whitespace-separated token that looks like an
/// identifier (bm25_identifier_like), so a query that is or contains a page's title
/// (an identifier: "CMP0077", "CMAKE_CXX_STANDARD") meets that page's title key, a rare
/// term, weighted as a title term; a plain word of a question ("file") does not.
[[nodiscard]] inline std::string bm25_title_key(std::string_view text) {
    constexpr std::string_view trim_chars = " \t\r\n\"'`()[]{}<>,.;:!?*";
    const auto b = text.find_first_not_of(trim_chars);
    if (b == std::string_view::npos) return {};
    text = text.substr(b, text.find_last_not_of(trim_chars) - b + 1);
    std::string key = "\x1f";
    bool space = false;
    for (char c : text) {
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
            space = true;
            continue;
        }
        if (space) key += ' ';
        space = false;
        key += c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    }
    return key;
}

/// Whether a query token is identifier-like: it has a digit, an underscore, or an
/// upper-case ASCII letter after its first character ("CMP0077", "MX-200",
/// "target_link_libraries", "FetchContent"; not "file", "Install").
[[nodiscard]] constexpr bool bm25_identifier_like(std::string_view token) noexcept {
    for (std::size_t i = 0; i < token.size(); ++i) {
        const char c = token[i];
        if ((c >= '0' && c <= '9') || c == '_' || (i > 0 && c >= 'A' && c <= 'Z')) return true;
    }
    return false;
}


}  // namespace ragpp
