// ragpp detail: extended grapheme clusters (UAX #29, Unicode 15.0: rules GB3 to GB13,
// without GB9c which Unicode 15.1 added), as HF tokenizers' Precompiled normalizer
// iterates them (Rust unicode-segmentation, graphemes(true)). Tested against every
// case of GraphemeBreakTest.txt.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <ragpp/detail/grapheme_tables.hpp>

namespace ragpp::detail {

enum class GraphemeBreak : std::uint8_t {
    other, cr, lf, control, extend, zwj, regional_indicator, prepend, spacing_mark, l, v, t, lv, lvt
};

struct GraphemeProperty {
    GraphemeBreak gcb = GraphemeBreak::other;
    bool extended_pictographic = false;
};

[[nodiscard]] inline GraphemeProperty grapheme_property(char32_t c) noexcept {
    const auto* begin = std::begin(grapheme_tables::ranges);
    const auto* end = std::end(grapheme_tables::ranges);
    const auto* it = std::upper_bound(begin, end, c, [](char32_t x, const grapheme_tables::Range& r) { return x < r.first; });
    if (it == begin) return {};
    --it;
    if (c > it->last) return {};
    return {static_cast<GraphemeBreak>(it->value & 0x0F), (it->value & 0x10) != 0};
}

/// Calls f(begin, end) for each extended grapheme cluster of `s` (indices into s).
template <class F>
void for_each_grapheme(std::u32string_view s, F&& f) {
    using G = GraphemeBreak;
    if (s.empty()) return;
    std::size_t start = 0;
    GraphemeProperty prev = grapheme_property(s[0]);
    std::size_t ri_run = prev.gcb == G::regional_indicator ? 1 : 0;  // RIs ending at prev
    // GB11: prev is ExtPict Extend* (emoji = 1), or ExtPict Extend* ZWJ (emoji = 2).
    int emoji = prev.extended_pictographic ? 1 : 0;
    for (std::size_t i = 1; i < s.size(); ++i) {
        const GraphemeProperty cur = grapheme_property(s[i]);
        const G a = prev.gcb, b = cur.gcb;
        bool brk;
        if (a == G::cr && b == G::lf) brk = false;                                                        // GB3
        else if (a == G::control || a == G::cr || a == G::lf) brk = true;                                 // GB4
        else if (b == G::control || b == G::cr || b == G::lf) brk = true;                                 // GB5
        else if (a == G::l && (b == G::l || b == G::v || b == G::lv || b == G::lvt)) brk = false;          // GB6
        else if ((a == G::lv || a == G::v) && (b == G::v || b == G::t)) brk = false;                       // GB7
        else if ((a == G::lvt || a == G::t) && b == G::t) brk = false;                                     // GB8
        else if (b == G::extend || b == G::zwj) brk = false;                                               // GB9
        else if (b == G::spacing_mark) brk = false;                                                        // GB9a
        else if (a == G::prepend) brk = false;                                                             // GB9b
        else if (emoji == 2 && cur.extended_pictographic) brk = false;                                     // GB11
        else if (a == G::regional_indicator && b == G::regional_indicator) brk = ri_run % 2 == 0;          // GB12, GB13
        else brk = true;                                                                                   // GB999
        if (brk) {
            f(start, i);
            start = i;
        }
        // State for the next pair.
        if (cur.extended_pictographic) emoji = 1;
        else if (emoji == 1 && b == G::extend) emoji = 1;
        else if (emoji == 1 && b == G::zwj) emoji = 2;
        else emoji = 0;
        ri_run = b == G::regional_indicator ? ri_run + 1 : 0;
        prev = cur;
    }
    f(start, s.size());
}

}  // namespace ragpp::detail
