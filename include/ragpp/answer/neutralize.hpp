// ragpp: neutralising retrieved text before a language model reads it.
//
// Retrieved text is evidence, never instructions. `neutralize` rewrites a passage (or
// a citation taken from a document: title, headings, path) so that it cannot pose as
// the structure an EvidenceBuilder wraps around it:
//   - a source marker: "[3]", with any square-bracket look-alike (［ 【 〔 〖 〘 〚 ⟦ ﹝
//     ⁅ ﹇ and their closing forms) and any decimal digits (ASCII, fullwidth, other
//     scripts), spaces allowed inside, becomes "(3)" (digits folded to ASCII);
//   - a delimiter: a run of two or more angle brackets or look-alikes (< > ＜ ＞ ‹ ›
//     « » 〈 〉 ⟨ ⟩ 《 》 ﹤ ﹥ ≪ ≫ ⋘ ⋙ ❮ ❯) becomes the ASCII brackets separated by
//     spaces ("<<<END" -> "< < <END"), so no "<<<" survives; chat-template tokens
//     "<|" and "|>" become "< |" and "| >", "[INST]" and "[/INST]" become "(INST)" and
//     "(/INST)";
//   - an instruction line: a line that starts (after spaces and Markdown marks # * > -
//     _) with a role name and a colon ("SYSTEM:", "Assistant:", "### Instruction:",
//     fullwidth forms included) gets the prefix "(quoted text) ";
//   - invisible or reordering characters (zero-width space U+200B, word joiner U+2060,
//     BOM U+FEFF, bidirectional controls U+202A-202E, U+2066-2069, U+200E, U+200F,
//     U+061C) are removed; other control characters become a space; CR, CRLF, VT, FF,
//     NEL U+0085 and the separators U+2028, U+2029 become LF; ill-formed UTF-8 becomes
//     U+FFFD.
// `single_line` also turns every line break into a space (for citations).
//
// The EvidenceBuilder adds two structural guarantees on top (answer/evidence.hpp):
// every passage line is quoted ("> "), so no passage line starts a line of the
// block's own structure, and the delimiters carry a nonce the document cannot know.
//
// Complexity: linear in the text.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <ragpp/answer/detail/neutralize.hpp>
#include <ragpp/text/utf8.hpp>

namespace ragpp {

/// `text` rewritten so that it cannot forge a source marker, a delimiter or an
/// instruction line (see the header comment). Idempotent.
[[nodiscard]] inline std::string neutralize(std::string_view text, bool single_line = false) {
    using namespace detail::neutral;
    // 1. Code points, with removals and line breaks normalised.
    std::u32string cps;
    cps.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const auto d = text::decode_utf8(text, i);
        i += d.length;
        char32_t c = d.code_point;
        if (removed(c)) continue;
        if (c == U'\r') {
            if (i < text.size() && text[i] == '\n') ++i;
            c = U'\n';
        }
        if (line_break(c)) c = single_line ? U' ' : U'\n';
        else if (c == U'\t') c = single_line ? U' ' : U'\t';
        else if (c < 0x20 || c == 0x7F || (c >= 0x80 && c < 0xA0)) c = U' ';
        cps.push_back(c);
    }

    // 2. Markers, delimiters and template tokens.
    std::u32string out;
    out.reserve(cps.size() + cps.size() / 8);
    for (std::size_t i = 0; i < cps.size();) {
        const char32_t c = cps[i];
        const Bracket b = bracket_class(c);
        if (b == Bracket::square_open) {
            // [ spaces digits spaces ]  ->  (digits)
            std::size_t j = i + 1;
            while (j < cps.size() && is_space(cps[j])) ++j;
            std::u32string digits;
            while (j < cps.size() && digit_value(cps[j]) >= 0) digits.push_back(static_cast<char32_t>(U'0' + digit_value(cps[j++])));
            while (j < cps.size() && is_space(cps[j])) ++j;
            if (!digits.empty() && j < cps.size() && bracket_class(cps[j]) == Bracket::square_close) {
                out += U'(';
                out += digits;
                out += U')';
                i = j + 1;
                continue;
            }
            // [INST] and [/INST]
            std::u32string word;
            for (std::size_t k = i + 1; k < cps.size() && k < i + 7; ++k) word.push_back(fold(cps[k]));
            if (word.rfind(U"inst", 0) == 0 && word.size() >= 5 && bracket_class(cps[i + 5]) == Bracket::square_close) {
                out += U"(INST)";
                i += 6;
                continue;
            }
            if (word.rfind(U"/inst", 0) == 0 && word.size() >= 6 && bracket_class(cps[i + 6]) == Bracket::square_close) {
                out += U"(/INST)";
                i += 7;
                continue;
            }
        }
        if (b == Bracket::angle) {
            std::size_t j = i;
            while (j < cps.size() && bracket_class(cps[j]) == Bracket::angle) ++j;
            if (j - i >= 2) {
                for (std::size_t k = i; k < j; ++k) {
                    if (k > i) out += U' ';
                    const char32_t a = cps[k];
                    const bool opening = a == U'<' || a == 0xFF1C || a == 0x2039 || a == 0x00AB || a == 0x3008 ||
                                         a == 0x27E8 || a == 0x2329 || a == 0xFE64 || a == 0x226A || a == 0x22D8 ||
                                         a == 0x276E || a == 0x300A;
                    out += opening ? U'<' : U'>';
                }
                i = j;
                continue;
            }
            if (i + 1 < cps.size() && cps[i + 1] == U'|' && (c == U'<' || fold(c) == U'<')) {
                out += U"< |";
                i += 2;
                continue;
            }
        }
        if (c == U'|' && i + 1 < cps.size() && bracket_class(cps[i + 1]) == Bracket::angle) {
            out += U"| ";
            out += cps[i + 1] == U'<' ? U'<' : U'>';
            i += 2;
            continue;
        }
        out += c;
        ++i;
    }

    // 3. Instruction lines, and UTF-8 out.
    std::string result;
    result.reserve(out.size() + 16);
    std::size_t start = 0;
    while (start <= out.size()) {
        std::size_t end = out.find(U'\n', start);
        if (end == std::u32string::npos) end = out.size();
        const std::u32string line = out.substr(start, end - start);
        if (is_role_line(line)) result += "(quoted text) ";
        for (char32_t c : line) text::append_utf8(result, c);
        if (end == out.size()) break;
        result += '\n';
        start = end + 1;
    }
    return result;
}

}  // namespace ragpp
