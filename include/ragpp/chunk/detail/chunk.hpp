// ragpp detail: the splitting engine shared by the chunkers (the rules are in chunk/chunk.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <ragpp/chunk/chunk_types.hpp>
#include <ragpp/core/types.hpp>

namespace ragpp {

namespace detail::chunking {

/// What a line is, for the splitting engine.
enum class LineKind : std::uint8_t {
    blank,         // no text: a paragraph boundary
    markup,        // pure markup (heading line, adornment, front matter, rule): not in any chunk
    text,          // prose: sentence boundaries apply
    code,          // inside a code block: each line is a boundary, no sentences
    table_header,  // the header row of a table
    table_delim,   // the delimiter row under it
    table_row      // a body row
};

[[nodiscard]] inline bool is_space(char c) noexcept {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/// A normalized source split into lines (without their '\n').
struct Lines {
    std::string text;
    std::vector<std::size_t> starts;  // byte offset of each line

    explicit Lines(std::string normalized) : text(std::move(normalized)) {
        starts.push_back(0);
        for (std::size_t i = 0; i < text.size(); ++i)
            if (text[i] == '\n' && i + 1 < text.size()) starts.push_back(i + 1);
        if (text.empty()) starts.clear();
    }
    [[nodiscard]] std::size_t size() const noexcept { return starts.size(); }
    [[nodiscard]] std::size_t end_of(std::size_t i) const noexcept {
        std::size_t e = i + 1 < starts.size() ? starts[i + 1] - 1 : text.size();
        if (e > starts[i] && text[e - 1] == '\n') --e;  // the last line's final newline
        return e;
    }
    [[nodiscard]] std::string_view operator[](std::size_t i) const noexcept {
        return std::string_view(text).substr(starts[i], end_of(i) - starts[i]);
    }
};

/// A heading found by a chunker: 0-based line of its text, level (smaller = outer).
struct Heading {
    std::size_t line = 0;
    int level = 1;
    std::string text;
};

/// A chunker's analysis of a source: the kind of each line, the table header line of
/// each table line, and the headings in order.
struct Layout {
    std::vector<LineKind> kinds;
    std::vector<std::size_t> table_header;  // for table lines: the header's line; else npos
    std::vector<Heading> headings;
    Metadata front_matter;

    explicit Layout(std::size_t n) : kinds(n, LineKind::text), table_header(n, npos) {}
    static constexpr std::size_t npos = static_cast<std::size_t>(-1);
};

[[nodiscard]] inline std::string_view trim(std::string_view s) noexcept {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    return s;
}

/// Columns of leading whitespace, a tab advancing to the next multiple of 4.
[[nodiscard]] inline std::size_t indentation(std::string_view s) noexcept {
    std::size_t col = 0;
    for (char c : s) {
        if (c == ' ') ++col;
        else if (c == '\t') col = (col / 4 + 1) * 4;
        else break;
    }
    return col;
}

struct Word {
    std::size_t begin = 0, end = 0;  // byte offsets in the source
    std::size_t line = 0;            // 0-based
    int strength = 0;                // of the boundary before this word
    bool structured = false;         // on a code or table line
};

enum Strength : int { word_boundary = 0, line_break = 1, sentence = 2, paragraph = 3 };

/// The byte length of the UTF-8 character at s[i] when it is written without spaces
/// around it (a Han ideograph, kana, CJK or fullwidth punctuation: U+3000-U+30FF,
/// U+3400-U+4DBF, U+4E00-U+9FFF, U+F900-U+FAFF, U+FF00-U+FFEF, U+20000-U+2FA1F),
/// else 0. Each such character is a token of its own.
[[nodiscard]] inline std::size_t cjk_length(std::string_view s, std::size_t i) noexcept {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if ((c >> 4) == 0xE && i + 2 < s.size()) {
        len = 3;
        cp = ((c & 0x0FU) << 12) | ((static_cast<unsigned char>(s[i + 1]) & 0x3FU) << 6) |
             (static_cast<unsigned char>(s[i + 2]) & 0x3FU);
    } else if ((c >> 3) == 0x1E && i + 3 < s.size()) {
        len = 4;
        cp = ((c & 0x07U) << 18) | ((static_cast<unsigned char>(s[i + 1]) & 0x3FU) << 12) |
             ((static_cast<unsigned char>(s[i + 2]) & 0x3FU) << 6) | (static_cast<unsigned char>(s[i + 3]) & 0x3FU);
    } else {
        return 0;
    }
    const bool cjk = (cp >= 0x3000 && cp <= 0x30FF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x4E00 && cp <= 0x9FFF) ||
                     (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0xFF00 && cp <= 0xFFEF) ||
                     (cp >= 0x20000 && cp <= 0x2FA1F);
    return cjk ? len : 0;
}

/// The end of the token that starts at s[b], a byte that is not a space: one CJK
/// character (cjk_length), else the run of bytes up to the next space or CJK character.
[[nodiscard]] inline std::size_t token_end(std::string_view s, std::size_t b) noexcept {
    if (const std::size_t len = cjk_length(s, b); len != 0) return b + len;
    std::size_t i = b;
    while (i < s.size() && !is_space(s[i]) && cjk_length(s, i) == 0) ++i;
    return i;
}

/// The tokens of `s`, in order (the chunker's rule, see "Tokens" in chunk.hpp).
[[nodiscard]] inline std::vector<std::string_view> tokens_of(std::string_view s) {
    std::vector<std::string_view> out;
    for (std::size_t i = 0; i < s.size();) {
        if (is_space(s[i])) {
            ++i;
            continue;
        }
        const std::size_t e = token_end(s, i);
        out.push_back(s.substr(i, e - i));
        i = e;
    }
    return out;
}

/// Whether a word ends a sentence: ., !, ? (or their CJK forms), possibly followed by
/// closing quotes or brackets.
[[nodiscard]] inline bool ends_sentence(std::string_view w) noexcept {
    while (!w.empty()) {
        const char c = w.back();
        if (c == ')' || c == ']' || c == '"' || c == '\'' || c == '*' || c == '_') {
            w.remove_suffix(1);
            continue;
        }
        if (w.ends_with("\xC2\xBB") || w.ends_with("\xE2\x80\x9D") || w.ends_with("\xE2\x80\x99")) {  // » ” ’
            w.remove_suffix(w.ends_with("\xC2\xBB") ? 2 : 3);
            continue;
        }
        break;
    }
    if (w.empty()) return false;
    const char c = w.back();
    return c == '.' || c == '!' || c == '?' || w.ends_with("\xE3\x80\x82") ||
           w.ends_with("\xEF\xBC\x81") || w.ends_with("\xEF\xBC\x9F");  // 。！？
}

/// The words of lines [from, to) that are not blank or markup, with the strength of
/// the boundary before each.
[[nodiscard]] inline std::vector<Word> words_of(const Lines& lines, const Layout& layout, std::size_t from,
                                                std::size_t to) {
    std::vector<Word> out;
    bool gap = true;  // a blank or markup line since the last word
    LineKind prev_kind = LineKind::blank;
    for (std::size_t ln = from; ln < to; ++ln) {
        const LineKind kind = layout.kinds[ln];
        if (kind == LineKind::blank || kind == LineKind::markup) {
            gap = true;
            continue;
        }
        const bool structured = kind != LineKind::text;
        const bool block_change = (prev_kind == LineKind::text) != (kind == LineKind::text);
        const std::string_view s = lines[ln];
        const std::size_t base = lines.starts[ln];
        bool first = true;
        for (std::size_t i = 0; i < s.size();) {
            while (i < s.size() && is_space(s[i])) ++i;
            if (i >= s.size()) break;
            const std::size_t b = i;
            i = token_end(s, i);
            Word w{base + b, base + i, ln, word_boundary, structured};
            const bool after_sentence =
                !out.empty() && ends_sentence(std::string_view(lines.text).substr(out.back().begin,
                                                                                  out.back().end - out.back().begin));
            if (first)
                w.strength = (gap || block_change) ? paragraph
                             : structured         ? sentence
                             : after_sentence     ? sentence
                                                  : line_break;
            else if (!structured && after_sentence)
                w.strength = sentence;
            out.push_back(w);
            first = false;
        }
        if (!first) {
            gap = false;
            prev_kind = kind;
        } else if (kind == LineKind::code) {
            prev_kind = kind;  // a blank line inside a code block: no paragraph break
        }
    }
    return out;
}

/// Cuts words [0, n) into parts of at most max_tokens words with the given overlap
/// (see the header comment). Returns [begin, end) word ranges.
[[nodiscard]] inline std::vector<std::pair<std::size_t, std::size_t>> pack(const std::vector<Word>& words,
                                                                           std::size_t max_tokens,
                                                                           std::size_t overlap) {
    std::vector<std::pair<std::size_t, std::size_t>> parts;
    const std::size_t n = words.size();
    std::size_t s = 0, prev_end = 0;
    while (s < n) {
        if (n - s <= max_tokens) {
            parts.emplace_back(s, n);
            break;
        }
        // The end: the strongest boundary in (prev_end, s + max_tokens], the latest on ties.
        // prev_end < s + max_tokens because the overlap is smaller than max_tokens.
        std::size_t e = s + max_tokens;
        for (std::size_t c = e - 1; c > std::max(s, prev_end); --c)
            if (words[c].strength > words[e].strength) e = c;
        parts.emplace_back(s, e);
        prev_end = e;
        std::size_t next = e;
        if (overlap > 0) {
            const std::size_t lo = std::max(e > overlap ? e - overlap : 0, s + 1);
            // No sentence or line start among the last `overlap` tokens: prose overlaps
            // by exactly `overlap` tokens; code and tables (no half rows) do not overlap.
            next = words[lo].structured ? e : lo;
            for (std::size_t p = lo; p < e; ++p)
                if (words[p].strength >= sentence) {
                    next = p;
                    break;
                }
        }
        s = next;
    }
    return parts;
}

/// The last path component of `path`, for a context line when there is no heading.
[[nodiscard]] inline std::string file_name(std::string_view path) {
    const auto slash = path.find_last_of("/\\");
    return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

/// `s` as it reads: zero-width characters (U+200B-U+200D, U+2060, U+FEFF) removed, each
/// run of spaces (ASCII, U+00A0, U+2000-U+200A, U+202F, U+205F, U+3000) one ASCII space,
/// none at either end. A title and a heading with the same form are the same text.
[[nodiscard]] inline std::string reading_form(std::string_view s) {
    std::string out;
    bool space = false;
    for (std::size_t i = 0; i < s.size();) {
        const std::string_view r = s.substr(i);
        std::size_t len = 0;
        bool blank = false;
        if (is_space(s[i])) {
            len = 1;
            blank = true;
        } else if (r.starts_with("\xC2\xA0")) {
            len = 2;
            blank = true;
        } else if (r.size() >= 3 && r.starts_with("\xE2\x80") && static_cast<unsigned char>(r[2]) >= 0x80 &&
                   static_cast<unsigned char>(r[2]) <= 0x8D) {
            len = 3;
            blank = static_cast<unsigned char>(r[2]) <= 0x8A;  // U+2000-U+200A; U+200B-U+200D are zero-width
        } else if (r.starts_with("\xE2\x80\xAF") || r.starts_with("\xE2\x81\x9F") || r.starts_with("\xE3\x80\x80")) {
            len = 3;
            blank = true;
        } else if (r.starts_with("\xE2\x81\xA0") || r.starts_with("\xEF\xBB\xBF")) {
            len = 3;  // zero-width
        }
        if (len == 0) {
            if (space && !out.empty()) out.push_back(' ');
            space = false;
            out.push_back(s[i++]);
            continue;
        }
        space = space || blank;
        i += len;
    }
    return out;
}

/// The context line: the document title (metadata "title", when it is a non-empty
/// string that does not read as the first heading, see reading_form: a Markdown file
/// whose front-matter title repeats its H1 names it once), then the non-empty
/// headings, joined by " > "; the file name when both are missing.
[[nodiscard]] inline std::string context_line(std::string_view path, const Metadata& metadata,
                                              const std::vector<std::string>& heading_path) {
    std::vector<std::string_view> parts;
    if (auto it = metadata.find("title"); it != metadata.end()) {
        if (const auto* t = std::get_if<std::string>(&it->second);
            t && !t->empty() &&
            (heading_path.empty() || reading_form(heading_path.front()) != reading_form(*t)))
            parts.emplace_back(*t);
    }
    for (const auto& h : heading_path)
        if (!h.empty()) parts.emplace_back(h);
    if (parts.empty()) return file_name(path);
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (i > 0) out += " > ";
        out += parts[i];
    }
    return out;
}

/// Turns a Layout into chunks: one section per heading (plus the text before the
/// first heading), each cut by `pack`. A section without words gives no chunk.
[[nodiscard]] inline std::vector<Chunk> build_chunks(const Document& source, const Lines& lines,
                                                     const Layout& layout, const ChunkOptions& options) {
    options.validate("chunk");
    Metadata metadata = layout.front_matter;
    for (const auto& [k, v] : source.metadata) metadata.insert_or_assign(k, v);  // the caller's fields win

    std::vector<Chunk> chunks;
    std::vector<std::pair<int, std::string>> stack;  // (level, text) of the open headings
    auto emit_section = [&](std::size_t heading_line, bool has_heading, std::size_t from, std::size_t to) {
        const auto words = words_of(lines, layout, from, to);
        if (words.empty()) return;
        std::vector<std::string> path_names;
        for (const auto& [level, text] : stack) path_names.push_back(text);
        const std::size_t id_line = (has_heading ? heading_line : words.front().line) + 1;
        const std::string section = source.id + ":" + std::to_string(id_line);
        const std::string context = context_line(source.id, metadata, path_names);
        const auto parts = pack(words, options.max_tokens, options.overlap_tokens());
        for (std::size_t p = 0; p < parts.size(); ++p) {
            const Word& fw = words[parts[p].first];
            const Word& lw = words[parts[p].second - 1];
            std::size_t b = fw.begin, e = lw.end;
            // Whole lines where the cut falls at a line boundary (keeps code indentation).
            if (trim(std::string_view(lines.text).substr(lines.starts[fw.line], b - lines.starts[fw.line])).empty())
                b = lines.starts[fw.line];
            if (trim(std::string_view(lines.text).substr(e, lines.end_of(lw.line) - e)).empty())
                e = lines.end_of(lw.line);
            Chunk c;
            c.section = section;
            c.id = p == 0 ? section : section + "#" + std::to_string(p + 1);
            c.path = source.id;
            c.first_line = fw.line + 1;
            c.last_line = lw.line + 1;
            c.begin = b;
            c.end = e;
            c.heading_path = path_names;
            c.position = chunks.size();
            c.part = p + 1;
            c.metadata = metadata;
            c.context = context;
            c.raw = lines.text.substr(b, e - b);
            std::string table;
            const std::size_t th = layout.table_header[fw.line];
            if (th != Layout::npos && layout.kinds[fw.line] == LineKind::table_row && th < fw.line) {
                table.append(lines[th]).push_back('\n');
                if (th + 1 < lines.size() && layout.kinds[th + 1] == LineKind::table_delim)
                    table.append(lines[th + 1]).push_back('\n');
            }
            c.text = context + "\n" + table + c.raw;
            if (options.context_hook) {
                std::string extra = options.context_hook(c, source);
                if (!extra.empty()) c.text = context + "\n" + extra + "\n" + table + c.raw;
            }
            chunks.push_back(std::move(c));
        }
    };
    const auto& hs = layout.headings;
    emit_section(0, false, 0, hs.empty() ? lines.size() : hs.front().line);
    for (std::size_t i = 0; i < hs.size(); ++i) {
        while (!stack.empty() && stack.back().first >= hs[i].level) stack.pop_back();
        stack.emplace_back(hs[i].level, hs[i].text);
        emit_section(hs[i].line, true, hs[i].line + 1, i + 1 < hs.size() ? hs[i + 1].line : lines.size());
    }
    return chunks;
}

}  // namespace detail::chunking
}  // namespace ragpp
