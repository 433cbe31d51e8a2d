// ragpp: Unicode character properties used by the tokenizer and the normalizer, read
// from the generated tables (text/unicode_tables.hpp, made by
// scripts/gen_unicode_tables.py from Debian's unicode-data; see docs/text-analysis.md
// for why tables rather than utf8proc).
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string_view>

#include <ragpp/text/unicode_tables.hpp>

namespace ragpp::text {

using detail::TokenScript;
using detail::WordBreak;

/// The table record of a code point (values above U+10FFFF read as U+FFFD).
[[nodiscard]] inline const detail::CharRecord& char_record(char32_t c) noexcept {
    if (c > 0x10FFFF) c = 0xFFFD;
    const unsigned block = detail::char_stage1[c >> detail::char_block_shift];
    const unsigned mask = (1u << detail::char_block_shift) - 1;
    return detail::char_records[detail::char_stage2[(block << detail::char_block_shift) | (c & mask)]];
}

[[nodiscard]] inline WordBreak word_break(char32_t c) noexcept { return static_cast<WordBreak>(char_record(c).word_break); }
[[nodiscard]] inline TokenScript token_script(char32_t c) noexcept { return static_cast<TokenScript>(char_record(c).script); }
[[nodiscard]] inline bool is_extended_pictographic(char32_t c) noexcept {
    return (char_record(c).flags & detail::flag_extended_pictographic) != 0;
}

/// The folded form of `c` (full case folding + compatibility decomposition, recomposed),
/// or an empty optional-like result: `identity` is true when `c` folds to itself.
struct Folding {
    bool identity;
    std::string_view text;  // UTF-8, valid when !identity (may be empty: ignorable code points)
};

[[nodiscard]] inline Folding fold_char(char32_t c, bool strip_diacritics) noexcept {
    const auto& r = char_record(c);
    if (strip_diacritics) {
        if (r.flags & detail::flag_bare_identity) return {true, {}};
        return {false, std::string_view(detail::char_pool + r.bare_offset, r.bare_length)};
    }
    if (r.flags & detail::flag_fold_identity) return {true, {}};
    return {false, std::string_view(detail::char_pool + r.fold_offset, r.fold_length)};
}

/// True when `mark` may combine canonically with a preceding base character.
[[nodiscard]] inline bool is_composing_mark(char32_t mark) noexcept {
    return (char_record(mark).flags & detail::flag_composes) != 0;
}

/// The canonical composition of `base` + `mark` (UAX #15 primary composites), or 0.
[[nodiscard]] inline char32_t compose_pair(char32_t base, char32_t mark) noexcept {
    const std::uint64_t key = (static_cast<std::uint64_t>(base) << 21) | mark;
    const auto* first = std::begin(detail::composition_keys);
    const auto* last = std::end(detail::composition_keys);
    const auto* it = std::lower_bound(first, last, key);
    if (it == last || *it != key) return 0;
    return detail::composition_values[it - first];
}

}  // namespace ragpp::text
