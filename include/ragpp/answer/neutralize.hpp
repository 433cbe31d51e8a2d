// ragpp: neutralising retrieved text before a language model reads it.
//
// Retrieved text is evidence, never instructions. `neutralize` rewrites a passage (or
// a citation taken from a document: title, headings, path) so that it cannot pose as
// the structure an EvidenceBuilder wraps around it:
//   - a source marker: "[3]", with any square-bracket look-alike (［ 【 〔 〖 〘 〚 ⟦ ﹝
//     ⁅ ﹇ ⎡ ❲ and their closing forms) and any decimal digits (every Nd family,
//     superscripts, subscripts, circled digits), spaces (any Zs) allowed inside,
//     becomes "(3)" (digits folded to ASCII);
//   - a delimiter: a run of two or more angle brackets or look-alikes (< > ＜ ＞ ‹ ›
//     « » 〈 〉 ⟨ ⟩ 《 》 ⟪ ⟫ ﹤ ﹥ ≪ ≫ ⋘ ⋙ ❬ ❭ ❮ ❯ ˂ ˃, Canadian syllabics ᐸ ᐳ ...), or
//     one that reads as three (⋘ ⫷), becomes the ASCII brackets separated by spaces,
//     one per bracket read ("<<<END" -> "< < <END", "⟪⟪" -> "< < < <"), so no "<<<"
//     survives; chat-template tokens "<|" and "|>" become "< |" and "| >", "[INST]"
//     and "[/INST]" become "(INST)" and "(/INST)";
//     which code points are brackets, digits and spaces is a table generated from the
//     UCD and Unicode's confusables data (answer/detail/fold_tables.hpp,
//     scripts/gen_evidence_fold_tables.py); after a bracket, a digit, a space or "|"
//     the checks skip every Default_Ignorable code point (U+200C, U+200D, U+2062,
//     U+00AD, U+034F, U+FE0F, tags, U+180E ...) and combining mark (U+0338 on "<"),
//     and a marker or delimiter loses the ones it holds; elsewhere they are kept;
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
// Complexity: linear in the text (a binary search in a table of about 220 ranges per
// non-ASCII code point; each code point is scanned at most a bounded number of times).
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

    // 2. Markers, delimiters and template tokens. After a bracket, a digit or a space the
    //    checks skip default-ignorable code points and combining marks (skip()), which a
    //    marker or delimiter they belong to loses; elsewhere they are kept (a Persian
    //    zero-width non-joiner, an emoji sequence).
    const auto skip = [&cps](std::size_t j) {
        while (j < cps.size() && skipped(cps[j])) ++j;
        return j;
    };
    std::u32string out;
    out.reserve(cps.size() + cps.size() / 8);
    for (std::size_t i = 0; i < cps.size();) {
        const char32_t c = cps[i];
        const Bracket b = bracket_class(c);
        if (b == Bracket::square_open) {
            // [ spaces digits spaces ]  ->  (digits)
            std::size_t j = skip(i + 1);
            while (j < cps.size() && is_space(cps[j])) j = skip(j + 1);
            std::u32string digits;
            for (int d; j < cps.size() && (d = digit_value(cps[j])) >= 0; j = skip(j + 1))
                digits.push_back(U'0' + static_cast<char32_t>(d));
            while (j < cps.size() && is_space(cps[j])) j = skip(j + 1);
            if (!digits.empty() && j < cps.size() && bracket_class(cps[j]) == Bracket::square_close) {
                out += U'(';
                out += digits;
                out += U')';
                i = skip(j + 1);
                continue;
            }
            // [INST] and [/INST]
            std::u32string word;
            std::size_t k = skip(i + 1);
            for (; k < cps.size() && word.size() < 6 && bracket_class(cps[k]) != Bracket::square_close; k = skip(k + 1))
                word.push_back(fold(cps[k]));
            if ((word == U"inst" || word == U"/inst") && k < cps.size() && bracket_class(cps[k]) == Bracket::square_close) {
                out += word == U"inst" ? U"(INST)" : U"(/INST)";
                i = skip(k + 1);
                continue;
            }
        }
        if (b == Bracket::angle) {
            // A run of angle brackets (marks and ignorables between them) reading as two
            // or more code points, or as three brackets (⋘), becomes spaced ASCII.
            std::size_t j = i, count = 0;
            int weight = 0;
            for (; j < cps.size() && bracket_class(cps[j]) == Bracket::angle; j = skip(j + 1)) {
                ++count;
                weight += angle_weight(cps[j]);
            }
            if (count >= 2 || weight >= 3) {
                bool first = true;
                for (std::size_t k = i; k < j; k = skip(k + 1)) {
                    for (int w = angle_weight(cps[k]); w > 0; --w) {
                        if (!first) out += U' ';
                        out += angle_opens(cps[k]) ? U'<' : U'>';
                        first = false;
                    }
                }
                i = j;
                continue;
            }
            if (const std::size_t k = skip(i + 1); k < cps.size() && cps[k] == U'|' && angle_opens(c)) {
                out += U"< |";
                i = k + 1;
                continue;
            }
        }
        if (c == U'|') {
            if (const std::size_t k = skip(i + 1); k < cps.size() && bracket_class(cps[k]) == Bracket::angle) {
                out += U"| ";
                out += angle_opens(cps[k]) ? U'<' : U'>';
                i = skip(k + 1);
                continue;
            }
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
