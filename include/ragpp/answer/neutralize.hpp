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

#include <ragpp/text/utf8.hpp>

namespace ragpp {

namespace detail::neutral {

enum class Bracket : unsigned char { none, square_open, square_close, angle };

[[nodiscard]] constexpr Bracket bracket_class(char32_t c) noexcept {
    switch (c) {
        case U'[': case 0xFF3B: case 0x3010: case 0x3014: case 0x3016: case 0x3018: case 0x301A:
        case 0x27E6: case 0xFE5D: case 0x2045: case 0xFE47:
            return Bracket::square_open;
        case U']': case 0xFF3D: case 0x3011: case 0x3015: case 0x3017: case 0x3019: case 0x301B:
        case 0x27E7: case 0xFE5E: case 0x2046: case 0xFE48:
            return Bracket::square_close;
        case U'<': case U'>': case 0xFF1C: case 0xFF1E: case 0x2039: case 0x203A: case 0x00AB: case 0x00BB:
        case 0x3008: case 0x3009: case 0x27E8: case 0x27E9: case 0x2329: case 0x232A: case 0xFE64:
        case 0xFE65: case 0x226A: case 0x226B: case 0x22D8: case 0x22D9: case 0x276E: case 0x276F:
        case 0x300A: case 0x300B:
            return Bracket::angle;
        default:
            return Bracket::none;
    }
}

/// The value of a decimal digit in the common Unicode digit blocks, or -1.
[[nodiscard]] constexpr int digit_value(char32_t c) noexcept {
    constexpr char32_t zeros[] = {U'0',  0xFF10, 0x0660, 0x06F0, 0x0966, 0x09E6, 0x0A66, 0x0AE6,
                                  0x0B66, 0x0BE6, 0x0C66, 0x0CE6, 0x0D66, 0x0E50, 0x1D7CE, 0x1D7D8,
                                  0x1D7E2, 0x1D7EC, 0x1D7F6};
    for (char32_t z : zeros)
        if (c >= z && c <= z + 9) return static_cast<int>(c - z);
    // Superscript and subscript digits.
    if (c == 0x2070) return 0;
    if (c == 0x00B9) return 1;
    if (c == 0x00B2) return 2;
    if (c == 0x00B3) return 3;
    if (c >= 0x2074 && c <= 0x2079) return static_cast<int>(c - 0x2070);
    if (c >= 0x2080 && c <= 0x2089) return static_cast<int>(c - 0x2080);
    // Circled and parenthesised digits read as numbers too.
    if (c >= 0x2460 && c <= 0x2468) return static_cast<int>(c - 0x2460 + 1);
    return -1;
}

[[nodiscard]] constexpr bool removed(char32_t c) noexcept {
    return c == 0x200B || c == 0x2060 || c == 0xFEFF || (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069) ||
           c == 0x200E || c == 0x200F || c == 0x061C;
}

[[nodiscard]] constexpr bool line_break(char32_t c) noexcept {
    return c == U'\n' || c == U'\r' || c == 0x0B || c == 0x0C || c == 0x85 || c == 0x2028 || c == 0x2029;
}

[[nodiscard]] constexpr bool is_space(char32_t c) noexcept { return c == U' ' || c == U'\t' || c == 0x3000 || c == 0xA0; }

/// ASCII lower case of a code point, folding fullwidth ASCII (U+FF01..FF5E) first.
[[nodiscard]] constexpr char32_t fold(char32_t c) noexcept {
    if (c >= 0xFF01 && c <= 0xFF5E) c -= 0xFEE0;
    if (c >= U'A' && c <= U'Z') c += 32;
    return c;
}

/// Whether line `l` (code points) starts with a role name and a colon, after spaces
/// and Markdown marks.
[[nodiscard]] inline bool is_role_line(const std::u32string& l) {
    static constexpr std::string_view roles[] = {"system", "assistant", "user", "developer", "human", "ai",
                                                 "instruction", "instructions", "tool", "function", "model",
                                                 "admin", "administrator", "operator"};
    std::size_t i = 0;
    while (i < l.size() && (is_space(l[i]) || l[i] == U'#' || l[i] == U'*' || l[i] == U'>' || l[i] == U'-' ||
                            l[i] == U'_' || fold(l[i]) == U'#' || fold(l[i]) == U'*' || fold(l[i]) == U'>'))
        ++i;
    std::string word;
    while (i < l.size() && fold(l[i]) >= U'a' && fold(l[i]) <= U'z' && word.size() < 16)
        word.push_back(static_cast<char>(fold(l[i++])));
    while (i < l.size() && is_space(l[i])) ++i;
    if (i >= l.size() || (fold(l[i]) != U':')) return false;
    for (auto r : roles)
        if (word == r) return true;
    return false;
}

}  // namespace detail::neutral

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
