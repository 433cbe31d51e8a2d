// ragpp: the tokenizer. Words are found at Unicode word boundaries (UAX #29, "Unicode
// Text Segmentation", rules WB1-WB999, checked against the standard's
// WordBreakTest.txt), then grouped so that identifiers stay findable.
//
// 1. Segments. `for_each_word_segment` cuts text at every UAX #29 word boundary.
//    A segment is a token when it holds a letter or a digit (ALetter, Hebrew_Letter,
//    Numeric, Katakana), an ideograph or a Hiragana letter (one token per character,
//    as UAX #29 breaks between them), South-East Asian letters (Thai, Lao, Khmer,
//    Myanmar: a run of them is one token, there is no dictionary here), or an emoji
//    (an Extended_Pictographic sequence with its modifiers and ZWJs, or a flag).
//    Numbers stay whole: "4,5", "14,2", "3.14", "1,000" are single segments.
// 2. Identifiers. Word tokens separated by one or two connector characters
//    (- . / : _ U+2010 U+2011) and nothing else form a compound, e.g. "MX-200",
//    "L.122-4", "std::vector". Inside a token, the characters that UAX #29 keeps
//    inside words (. : _ and the like) also split it, except between two digits
//    (numbers) and apostrophes (which the language filters handle: "l'avenant",
//    "don't"); with `split_letter_digit`, so do letter-digit transitions ("mx200"
//    -> "mx" "200", "v2.3.1" -> "v" "2.3.1"). A compound of two or more parts is
//    reported as its parts; the analyzers add the joined form ("mx200"), so that
//    "MX-200", "MX 200" and "mx200" all share terms.
// 3. CJK runs (option `cjk_runs`): adjacent Han, Hiragana, Katakana and Hangul
//    characters are reported as one run, for bigramming by the cjk analyzer.
//
// Ill-formed UTF-8 reads as U+FFFD, which is not part of any token.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include <ragpp/text/detail/tokenizer.hpp>
#include <ragpp/text/unicode.hpp>
#include <ragpp/text/utf8.hpp>

namespace ragpp::text {

/// What a token is made of.
enum class TokenKind : std::uint8_t {
    word,              ///< letters and/or digits (Latin, Greek, Cyrillic, Hebrew, Arabic...)
    ideograph,         ///< one Han or Hiragana character
    katakana,          ///< a run of Katakana
    hangul,            ///< a run of Hangul
    south_east_asian,  ///< a run of Thai, Lao, Khmer or Myanmar letters
    emoji,             ///< an emoji sequence or a regional-indicator flag
    cjk_run            ///< (cjk_runs option) adjacent Han, Hiragana, Katakana, Hangul
};

struct TokenizerOptions {
    /// Group word tokens joined by connectors into compounds and split inner
    /// punctuation (identifiers: parts and, in the analyzers, the joined form).
    bool identifiers = true;
    /// Also split at letter-digit transitions ("mx200" -> "mx", "200").
    bool split_letter_digit = true;
    /// Report adjacent CJK characters as one cjk_run token.
    bool cjk_runs = false;
    /// A compound of more parts than this is reported part by part, not joined.
    std::size_t max_compound_parts = 8;
};

/// A piece of the input text.
struct TokenPiece {
    std::string_view text;
    TokenKind kind;
};

/// Calls f(begin, end, bits) for each UAX #29 word segment of `text` (byte offsets;
/// every byte belongs to exactly one segment). `bits` summarizes what the segment
/// holds (detail::SegmentBits).
template <class F>
void for_each_word_segment(std::string_view text, F&& f) {
    using detail::is_ahletter;
    using W = WordBreak;
    const std::size_t n = text.size();
    if (n == 0) return;
    std::size_t seg_begin = 0;
    unsigned bits = 0;
    W raw_prev = W::Other, prev = W::Other, prev2 = W::Other;
    std::size_t ri_run = 0;
    bool at_start = true;
    std::size_t pos = 0;
    while (pos < n) {
        // Fast path: an ASCII letter after a letter (WB5, no state change but prev2).
        if (const auto b = static_cast<unsigned char>(text[pos]);
            b < 0x80 && raw_prev == W::ALetter && prev == W::ALetter && detail::ascii_word_break[b] == W::ALetter) {
            prev2 = W::ALetter;
            ++pos;
            continue;
        }
        const detail::CharInfo c = detail::char_info(text, pos);
        const W cur = c.wb;
        bool brk = true;
        bool ignored = false;
        if (at_start) {
            brk = false;  // WB1: the start is not a boundary between two characters
        } else if (raw_prev == W::CR && cur == W::LF) {
            brk = false;  // WB3
        } else if (detail::is_newline(raw_prev) || detail::is_newline(cur)) {
            brk = true;  // WB3a, WB3b
        } else if (raw_prev == W::ZWJ && c.pictographic) {
            brk = false;  // WB3c
        } else if (raw_prev == W::WSegSpace && cur == W::WSegSpace) {
            brk = false;  // WB3d
        } else if (detail::is_ignorable(cur)) {
            brk = false;  // WB4: X (Extend | Format | ZWJ)* -> X
            ignored = true;
        } else if (is_ahletter(prev) && is_ahletter(cur)) {
            brk = false;  // WB5
        } else if (is_ahletter(prev) && detail::is_mid_letter(cur) &&
                   is_ahletter(detail::next_effective(text, pos + c.length))) {
            brk = false;  // WB6
        } else if (is_ahletter(prev2) && detail::is_mid_letter(prev) && is_ahletter(cur)) {
            brk = false;  // WB7
        } else if (prev == W::Hebrew_Letter && cur == W::Single_Quote) {
            brk = false;  // WB7a
        } else if (prev == W::Hebrew_Letter && cur == W::Double_Quote &&
                   detail::next_effective(text, pos + c.length) == W::Hebrew_Letter) {
            brk = false;  // WB7b
        } else if (prev2 == W::Hebrew_Letter && prev == W::Double_Quote && cur == W::Hebrew_Letter) {
            brk = false;  // WB7c
        } else if ((prev == W::Numeric || is_ahletter(prev)) && (cur == W::Numeric || is_ahletter(cur))) {
            brk = false;  // WB8, WB9, WB10
        } else if (prev2 == W::Numeric && detail::is_mid_num(prev) && cur == W::Numeric) {
            brk = false;  // WB11
        } else if (prev == W::Numeric && detail::is_mid_num(cur) &&
                   detail::next_effective(text, pos + c.length) == W::Numeric) {
            brk = false;  // WB12
        } else if (prev == W::Katakana && cur == W::Katakana) {
            brk = false;  // WB13
        } else if ((is_ahletter(prev) || prev == W::Numeric || prev == W::Katakana || prev == W::ExtendNumLet) &&
                   cur == W::ExtendNumLet) {
            brk = false;  // WB13a
        } else if (prev == W::ExtendNumLet && (is_ahletter(cur) || cur == W::Numeric || cur == W::Katakana)) {
            brk = false;  // WB13b
        } else if (prev == W::Regional_Indicator && cur == W::Regional_Indicator && ri_run % 2 == 1) {
            brk = false;  // WB15, WB16
        }
        if (brk) {
            f(seg_begin, pos, bits);
            seg_begin = pos;
            bits = 0;
        }
        // WB4 does not apply after sot, CR, LF, Newline: there the mark stands alone.
        if (ignored && (at_start || detail::is_newline(raw_prev))) ignored = false;
        if (!ignored) {
            ri_run = cur == W::Regional_Indicator ? (prev == W::Regional_Indicator ? ri_run + 1 : 1) : 0;
            prev2 = prev;
            prev = cur;
        }
        raw_prev = cur;
        at_start = false;
        switch (c.script) {
            case TokenScript::han: bits |= detail::seg_han; break;
            case TokenScript::hiragana: bits |= detail::seg_hiragana; break;
            case TokenScript::katakana: bits |= detail::seg_katakana; break;
            case TokenScript::hangul: bits |= detail::seg_hangul; break;
            case TokenScript::south_east_asian: bits |= detail::seg_sea; break;
            case TokenScript::none: break;
        }
        if (is_ahletter(cur)) bits |= detail::seg_letter;
        else if (cur == W::Numeric) bits |= detail::seg_digit;
        else if (cur == W::Katakana) bits |= detail::seg_katakana;
        else if (c.pictographic || cur == W::Regional_Indicator) bits |= detail::seg_emoji;
        else if (!detail::is_ignorable(cur) && c.script == TokenScript::none) bits |= detail::seg_other;
        pos += c.length;
    }
    f(seg_begin, n, bits);
}

/// Splits the text into tokens and calls f(const TokenPiece* parts, std::size_t count)
/// once per token or compound, in text order: count is 1 for a plain token, >= 2 for
/// the parts of a compound ("MX-200" -> "MX", "200"). Parts are pieces of `text`.
class Tokenizer {
public:
    explicit Tokenizer(TokenizerOptions options = {}) : options_(options) {}

    [[nodiscard]] const TokenizerOptions& options() const noexcept { return options_; }

    template <class F>
    void tokenize(std::string_view text, F&& f) const {
        std::vector<TokenPiece> parts;
        std::size_t last_end = 0;            // end of the last word token of the compound
        // A pending run of adjacent segments (CJK characters, South-East Asian letters).
        struct Run {
            std::size_t begin = 0, end = 0;
            bool open = false;
        };
        Run cjk, sea;
        auto flush_run = [&](Run& r, TokenKind kind) {
            if (r.open) {
                const TokenPiece p{text.substr(r.begin, r.end - r.begin), kind};
                f(&p, std::size_t{1});
                r.open = false;
            }
        };
        auto extend_run = [&](Run& r, TokenKind kind, std::size_t b, std::size_t e) {
            if (r.open && r.end == b) {
                r.end = e;
                return;
            }
            flush_run(r, kind);
            r = {b, e, true};
        };
        auto flush = [&] {
            if (parts.size() > options_.max_compound_parts) {
                for (const auto& p : parts) f(&p, std::size_t{1});
            } else if (!parts.empty()) {
                f(parts.data(), parts.size());
            }
            parts.clear();
        };
        for_each_word_segment(text, [&](std::size_t b, std::size_t e, unsigned bits) {
            using namespace detail;
            const unsigned cjk_bits = seg_han | seg_hiragana | seg_katakana | seg_hangul;
            const bool alnum = (bits & (seg_letter | seg_digit | seg_katakana)) != 0;
            if (options_.cjk_runs && (bits & cjk_bits) && !(bits & (seg_digit | seg_other)) &&
                !(bits & seg_letter && !(bits & seg_hangul))) {
                flush();
                flush_run(sea, TokenKind::south_east_asian);
                extend_run(cjk, TokenKind::cjk_run, b, e);
                return;
            }
            if (bits & seg_sea && !(bits & (seg_letter | seg_digit))) {
                flush();
                flush_run(cjk, TokenKind::cjk_run);
                extend_run(sea, TokenKind::south_east_asian, b, e);
                return;
            }
            if (!alnum && !(bits & (seg_han | seg_hiragana | seg_emoji))) return;  // spaces, punctuation
            flush_run(cjk, TokenKind::cjk_run);
            flush_run(sea, TokenKind::south_east_asian);
            const std::string_view seg = text.substr(b, e - b);
            if (!alnum) {
                flush();
                const TokenPiece p{seg, (bits & seg_emoji) ? TokenKind::emoji : TokenKind::ideograph};
                f(&p, std::size_t{1});
                return;
            }
            const TokenKind kind = (bits & seg_hangul)     ? TokenKind::hangul
                                   : (bits & seg_katakana) && !(bits & seg_letter) ? TokenKind::katakana
                                                                                    : TokenKind::word;
            if (!options_.identifiers) {
                const TokenPiece p{seg, kind};
                f(&p, std::size_t{1});
                return;
            }
            if (parts.empty() || !connector_gap(text.substr(last_end, b - last_end))) flush();
            split_word(seg, kind, parts);
            last_end = e;
        });
        flush();
        flush_run(cjk, TokenKind::cjk_run);
        flush_run(sea, TokenKind::south_east_asian);
    }

    /// True for the characters that join the words of an identifier.
    [[nodiscard]] static constexpr bool is_connector(char32_t c) noexcept {
        return c == '-' || c == '.' || c == '/' || c == ':' || c == '_' || c == 0x2010 || c == 0x2011;
    }

private:
    /// One or two connector characters and nothing else.
    static bool connector_gap(std::string_view gap) noexcept {
        if (gap.empty() || gap.size() > 6) return false;
        if (const auto b = static_cast<unsigned char>(gap[0]); b < 0x80 && !is_connector(b)) return false;  // often ' '
        std::size_t count = 0, i = 0;
        while (i < gap.size()) {
            const Utf8Char c = decode_utf8(gap, i);
            if (!is_connector(c.code_point)) return false;
            ++count;
            i += c.length;
        }
        return count <= 2;
    }

    /// Splits one word segment into identifier parts (see the header comment).
    void split_word(std::string_view seg, TokenKind kind, std::vector<TokenPiece>& parts) const {
        // Fast path: a word of ASCII letters only is one part.
        if (std::all_of(seg.begin(), seg.end(), [](char ch) { return (ch | 0x20) >= 'a' && (ch | 0x20) <= 'z'; })) {
            parts.push_back({seg, kind});
            return;
        }
        enum Cls { none, letter, digit };
        std::size_t part_begin = 0, i = 0;
        Cls last = none;  // class of the last letter or digit in the current part
        auto close = [&](std::size_t end) {
            if (end > part_begin && last != none) parts.push_back({seg.substr(part_begin, end - part_begin), kind});
            last = none;
        };
        while (i < seg.size()) {
            const detail::CharInfo c = detail::char_info(seg, i);
            const WordBreak w = c.wb;
            if (w == WordBreak::Numeric || detail::is_ahletter(w) || w == WordBreak::Katakana) {
                const Cls cls = w == WordBreak::Numeric ? digit : letter;
                if (options_.split_letter_digit && last != none && cls != last) {
                    close(i);
                    part_begin = i;
                }
                last = cls;
            } else if (!detail::is_ignorable(w)) {
                const bool apostrophe = w == WordBreak::Single_Quote || c.cp == 0x2019 || c.cp == 0xFF07;
                const bool inside_number =
                    last == digit && detail::is_mid_num(w) && detail::next_effective(seg, i + c.length) == WordBreak::Numeric;
                if (!apostrophe && !inside_number) {
                    close(i);
                    part_begin = i + c.length;
                }
            }
            i += c.length;
        }
        close(seg.size());
    }

    TokenizerOptions options_;
};

}  // namespace ragpp::text
