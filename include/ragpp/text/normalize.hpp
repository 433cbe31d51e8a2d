// ragpp: text normalization for indexing: full Unicode case folding, compatibility
// folding (full-width forms, ligatures, superscripts: "ＡＢＣ１２３" -> "abc123",
// "ﬁ" -> "fi"), and optionally diacritic removal by canonical decomposition
// ("é" -> "e", "ç" -> "c", "ά" -> "α", "ё" -> "е"; "й" stays, see below).
//
// Each code point maps through the generated tables (text/unicode_tables.hpp):
//   fold(c) = NFC(NFKD-and-case-fold of c to a fixed point), default-ignorable code
//             points (soft hyphen, zero-width joiners, variation selectors) removed,
//             U+2019 and U+02BC as the ASCII apostrophe, oe/ae ligature letters spelt out;
//   bare(c) = fold(c) without the combining diacritical marks of Latin, Greek and
//             Cyrillic (U+0300-036F, 1AB0-1AFF, 1DC0-1DFF, 20D0-20FF, FE20-FE2F);
//             other scripts' marks (Japanese voicing marks, Indic nuktas) stay, and
//             so do the marks of a letter that the Unicode Collation Algorithm's
//             default table sorts as a letter of its own (Cyrillic й).
// A base followed by a separate combining mark ("e" U+0301) is composed first, so
// decomposed and precomposed input give the same result. bare(fold(x)) == bare(x),
// checked by the generator for every code point.
//
// Complexity: linear in the input; ASCII takes a table-free fast path.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <ragpp/text/detail/normalize.hpp>
#include <ragpp/text/unicode.hpp>
#include <ragpp/text/utf8.hpp>

namespace ragpp::text {

struct NormalizeOptions {
    /// Remove diacritical marks (canonical decomposition, marks dropped).
    bool strip_diacritics = true;
};

/// Appends the normalized form of code point `c`.
inline void normalize_code_point(char32_t c, std::string& out, NormalizeOptions options) {
    const Folding f = fold_char(c, options.strip_diacritics);
    if (f.identity) append_utf8(out, c);
    else out.append(f.text);
}

/// When `mark` composes canonically with the last code point of out[start, end),
/// replaces that code point by the normalized composition and returns true.
inline bool compose_with_last(std::string& out, std::size_t start, char32_t mark, NormalizeOptions options) {
    if (!is_composing_mark(mark)) return false;
    const std::size_t last = detail::last_code_point_start(out, start);
    const char32_t composed = compose_pair(decode_utf8(out, last).code_point, mark);
    if (!composed) return false;
    out.resize(last);
    normalize_code_point(composed, out, options);
    return true;
}

/// Appends the normalized form of `text` to `out`; ill-formed UTF-8 becomes U+FFFD.
inline void normalize_append(std::string_view text, std::string& out, NormalizeOptions options = {}) {
    const std::size_t start = out.size();
    std::size_t i = 0;
    const std::size_t n = text.size();
    while (i < n) {
        const auto b = static_cast<unsigned char>(text[i]);
        if (b < 0x80) {
            out.push_back(static_cast<char>(b >= 'A' && b <= 'Z' ? b + 32 : b));
            ++i;
            continue;
        }
        const Utf8Char c = decode_utf8(text, i);
        i += c.length;
        // A combining mark right after its base is composed with it first (NFC), so
        // that decomposed input gives the same result as precomposed input: "e" U+0301
        // reads as "é", "и" U+0306 as "й".
        if (out.size() > start && compose_with_last(out, start, c.code_point, options)) continue;
        const Folding f = fold_char(c.code_point, options.strip_diacritics);
        std::string_view mapped = f.identity ? text.substr(i - c.length, c.length) : f.text;
        if (!c.valid) mapped = "\xEF\xBF\xBD";  // U+FFFD
        if (mapped.empty()) continue;
        // Half-width voicing marks map to combining ones, which compose in turn.
        if (static_cast<unsigned char>(mapped[0]) >= 0x80 && out.size() > start && !f.identity) {
            const Utf8Char m = decode_utf8(mapped, 0);
            if (compose_with_last(out, start, m.code_point, options)) mapped.remove_prefix(m.length);
        }
        out.append(mapped);
    }
}

/// The normalized form of `text` (see the header comment).
[[nodiscard]] inline std::string normalize(std::string_view text, NormalizeOptions options = {}) {
    std::string out;
    out.reserve(text.size());
    normalize_append(text, out, options);
    return out;
}

/// `text` (already case folded or not) without its diacritical marks: "préavis" -> "preavis".
[[nodiscard]] inline std::string strip_diacritics(std::string_view text) { return normalize(text, {true}); }

}  // namespace ragpp::text
