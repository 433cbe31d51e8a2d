// ragpp: Filter, a boolean expression over document metadata, and its text syntax.
//
// A Filter is a value (copyable, comparable by its text form). It is evaluated two
// ways that must agree: `matches(metadata)` reads one document's metadata (the
// obvious, slow oracle), and MetadataIndex::compile turns it into the DocSet of all
// matching documents through postings (metadata_index.hpp).
//
// Semantics, for a field f of a document:
//   eq(f, "s")        f is the string "s", or a list of strings containing "s"
//   eq(f, 3.0)        f is the number 3
//   eq(f, Date)       f is that date
//   in(f, {v...})     eq(f, v) for some v
//   range(f, lo, hi)  f is a number (bounds numbers) or a date (bounds dates) within
//                     the bounds; a missing bound is unbounded; bounds inclusive
//                     unless said otherwise
//   exists(f)         f is present, whatever its type
//   a && b, a || b, !a, Filter::all(), Filter::none()
// A value of another type than the one asked never matches (eq(f, "3") does not
// match the number 3; the text syntax below asks for every type a value can be).
//
// Text syntax (parse_filter), for the command line's --filter:
//   expr    := or
//   or      := and (("||" | "|" | "or") and)*
//   and     := unary (("&&" | "&" | "," | "and") unary)*
//   unary   := ("!" | "not") unary | "(" expr ")" | "exists" "(" FIELD ")" | FIELD "?"
//            | FIELD ("=" | "!=") VALUE | FIELD ("<" | "<=" | ">" | ">=") VALUE
//            | FIELD "in" "(" VALUE ("," VALUE)* ")"
//   VALUE   := "double-quoted string" (a string) | a bare word (a string, and also a
//              number when it reads as one, and a date when it reads YYYY-MM-DD)
// e.g.  type=contract, version>=3, groups in (legal, sales) || !exists(groups)
// Errors are ParseError naming the filter text and the column. Parentheses and
// negations nest at most max_filter_depth (64) levels deep (64 accepted, 65 refused): the parser is recursive,
// and so are Filter's matches, to_string, copies and MetadataIndex::compile, so a deeper
// text ("(((..." x 3000, "!" x 20000) is a ParseError instead of a stack overflow.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>
#include <ragpp/filter/detail/filter.hpp>
#include <ragpp/filter/expression.hpp>

namespace ragpp {

/// Parses the text syntax described above. Throws ParseError naming the text and column.
[[nodiscard]] inline Filter parse_filter(std::string_view text) { return detail::filter_syntax::Parser(text).parse(); }

/// The conjunction of `texts` (the command line's repeated --filter): each text is
/// parsed on its own by parse_filter, so each may nest max_filter_depth levels and an
/// error quotes that text as written (not a parenthesised join the user did not
/// write); Filter::all() when there is none.
[[nodiscard]] inline Filter parse_filters(std::span<const std::string> texts) {
    std::optional<Filter> out;
    for (const auto& text : texts) {
        Filter f = parse_filter(text);
        out = out ? std::move(*out) && std::move(f) : std::move(f);
    }
    return out ? std::move(*out) : Filter::all();
}

}  // namespace ragpp
