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
// negations nest at most max_filter_depth (64) levels deep: the parser is recursive,
// and so are Filter's matches, to_string, copies and MetadataIndex::compile, so a deeper
// text ("(((..." x 3000, "!" x 20000) is a ParseError instead of a stack overflow.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>

namespace ragpp {

/// A value a filter compares with: a string, a number or a date.
using FilterValue = std::variant<std::string, double, Date>;

class Filter {
public:
    enum class Kind { all, none, eq, in, range, exists, and_, or_, not_ };

    /// Every document.
    Filter() = default;
    [[nodiscard]] static Filter all() { return Filter(); }
    [[nodiscard]] static Filter none() { return Filter(Kind::none); }

    [[nodiscard]] static Filter eq(std::string field, FilterValue value) {
        check_value(value, "Filter::eq");
        Filter f(Kind::eq);
        f.field_ = std::move(field);
        f.values_.push_back(std::move(value));
        return f;
    }
    [[nodiscard]] static Filter in(std::string field, std::vector<FilterValue> values) {
        for (const auto& v : values) check_value(v, "Filter::in");
        Filter f(Kind::in);
        f.field_ = std::move(field);
        f.values_ = std::move(values);
        return f;
    }
    /// Numbers or dates within [lo, hi] (each bound optional, inclusive unless said).
    /// Throws InvalidArgument when a bound is a string, is NaN, or when the bounds
    /// have different types or both are missing.
    [[nodiscard]] static Filter range(std::string field, std::optional<FilterValue> lo, std::optional<FilterValue> hi,
                                      bool lo_inclusive = true, bool hi_inclusive = true) {
        if (!lo && !hi) throw InvalidArgument("Filter::range on '" + field + "': no bound");
        for (const auto* b : {&lo, &hi}) {
            if (!*b) continue;
            if (std::holds_alternative<std::string>(**b))
                throw InvalidArgument("Filter::range on '" + field + "': bounds must be numbers or dates");
            check_value(**b, "Filter::range");
        }
        if (lo && hi && lo->index() != hi->index())
            throw InvalidArgument("Filter::range on '" + field + "': one bound is a number, the other a date");
        Filter f(Kind::range);
        f.field_ = std::move(field);
        f.lo_ = std::move(lo);
        f.hi_ = std::move(hi);
        f.lo_inclusive_ = lo_inclusive;
        f.hi_inclusive_ = hi_inclusive;
        return f;
    }
    [[nodiscard]] static Filter exists(std::string field) {
        Filter f(Kind::exists);
        f.field_ = std::move(field);
        return f;
    }

    friend Filter operator&&(Filter a, Filter b) { return combine(Kind::and_, std::move(a), std::move(b)); }
    friend Filter operator||(Filter a, Filter b) { return combine(Kind::or_, std::move(a), std::move(b)); }
    friend Filter operator!(Filter a) {
        Filter f(Kind::not_);
        f.children_.push_back(std::move(a));
        return f;
    }

    [[nodiscard]] Kind kind() const noexcept { return kind_; }
    [[nodiscard]] const std::string& field() const noexcept { return field_; }
    [[nodiscard]] const std::vector<FilterValue>& values() const noexcept { return values_; }
    [[nodiscard]] const std::optional<FilterValue>& lower() const noexcept { return lo_; }
    [[nodiscard]] const std::optional<FilterValue>& upper() const noexcept { return hi_; }
    [[nodiscard]] bool lower_inclusive() const noexcept { return lo_inclusive_; }
    [[nodiscard]] bool upper_inclusive() const noexcept { return hi_inclusive_; }
    [[nodiscard]] const std::vector<Filter>& children() const noexcept { return children_; }

    /// Whether a document with this metadata passes: the reference semantics.
    [[nodiscard]] bool matches(const Metadata& m) const {
        switch (kind_) {
            case Kind::all: return true;
            case Kind::none: return false;
            case Kind::exists: return m.find(field_) != m.end();
            case Kind::eq:
            case Kind::in: {
                auto it = m.find(field_);
                if (it == m.end()) return false;
                for (const auto& v : values_)
                    if (value_matches(it->second, v)) return true;
                return false;
            }
            case Kind::range: {
                auto it = m.find(field_);
                return it != m.end() && in_range(it->second);
            }
            case Kind::and_:
                for (const auto& c : children_)
                    if (!c.matches(m)) return false;
                return true;
            case Kind::or_:
                for (const auto& c : children_)
                    if (c.matches(m)) return true;
                return false;
            case Kind::not_: return !children_.front().matches(m);
        }
        return false;
    }

    /// Whether `v` is within the bounds (for range filters).
    [[nodiscard]] bool in_range(const MetaValue& v) const {
        const FilterValue& any = lo_ ? *lo_ : *hi_;
        if (std::holds_alternative<double>(any)) {
            const auto* x = std::get_if<double>(&v);
            return x && bounds_ok(*x, lo_ ? std::get<double>(*lo_) : 0.0, hi_ ? std::get<double>(*hi_) : 0.0);
        }
        const auto* d = std::get_if<Date>(&v);
        return d && bounds_ok(d->days, lo_ ? std::get<Date>(*lo_).days : 0, hi_ ? std::get<Date>(*hi_).days : 0);
    }

    /// A text form in the parse_filter syntax (parse_filter(f.to_string()) == f).
    [[nodiscard]] std::string to_string() const {
        switch (kind_) {
            case Kind::all: return "all";
            case Kind::none: return "none";
            case Kind::exists: return "exists(" + field_ + ")";
            case Kind::eq: return field_ + "=" + value_text(values_.front());
            case Kind::in: {
                std::string s = field_ + " in (";
                for (std::size_t i = 0; i < values_.size(); ++i) s += (i ? ", " : "") + value_text(values_[i]);
                return s + ")";
            }
            case Kind::range: {
                std::string s;
                if (lo_) s += field_ + (lo_inclusive_ ? ">=" : ">") + value_text(*lo_);
                if (lo_ && hi_) s += " && ";
                if (hi_) s += field_ + (hi_inclusive_ ? "<=" : "<") + value_text(*hi_);
                return lo_ && hi_ ? "(" + s + ")" : s;
            }
            case Kind::and_:
            case Kind::or_: {
                std::string s = "(";
                for (std::size_t i = 0; i < children_.size(); ++i)
                    s += (i ? (kind_ == Kind::and_ ? " && " : " || ") : "") + children_[i].to_string();
                return s + ")";
            }
            case Kind::not_: return "!" + children_.front().to_string();
        }
        return {};
    }
    friend bool operator==(const Filter& a, const Filter& b) { return a.to_string() == b.to_string(); }

    /// eq(f, v) on one metadata value.
    [[nodiscard]] static bool value_matches(const MetaValue& have, const FilterValue& want) {
        if (const auto* s = std::get_if<std::string>(&want)) {
            if (const auto* hs = std::get_if<std::string>(&have)) return *hs == *s;
            if (const auto* hl = std::get_if<std::vector<std::string>>(&have)) {
                for (const auto& e : *hl)
                    if (e == *s) return true;
            }
            return false;
        }
        if (const auto* x = std::get_if<double>(&want)) {
            const auto* hx = std::get_if<double>(&have);
            return hx && *hx == *x;
        }
        const auto* hd = std::get_if<Date>(&have);
        return hd && *hd == std::get<Date>(want);
    }

private:
    explicit Filter(Kind k) : kind_(k) {}

    static void check_value(const FilterValue& v, const char* where) {
        if (const auto* x = std::get_if<double>(&v); x && std::isnan(*x))
            throw InvalidArgument(std::string(where) + ": value is NaN");
    }
    static Filter combine(Kind k, Filter a, Filter b) {
        Filter f(k);
        for (Filter* x : {&a, &b}) {
            if (x->kind_ == k) {
                for (auto& c : x->children_) f.children_.push_back(std::move(c));
            } else {
                f.children_.push_back(std::move(*x));
            }
        }
        return f;
    }
    template <class T>
    [[nodiscard]] bool bounds_ok(T x, T lo, T hi) const {
        if (lo_ && (lo_inclusive_ ? x < lo : x <= lo)) return false;
        if (hi_ && (hi_inclusive_ ? x > hi : x >= hi)) return false;
        return true;
    }
    static std::string value_text(const FilterValue& v) {
        if (const auto* s = std::get_if<std::string>(&v)) {
            std::string q = "\"";
            for (char c : *s) {
                if (c == '"' || c == '\\') q.push_back('\\');
                q.push_back(c);
            }
            return q + "\"";
        }
        if (const auto* d = std::get_if<Date>(&v)) return "date:" + d->to_string();
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.17g", std::get<double>(v));
        return std::string("num:") + buf;
    }

    Kind kind_ = Kind::all;
    std::string field_;
    std::vector<FilterValue> values_;
    std::optional<FilterValue> lo_, hi_;
    bool lo_inclusive_ = true, hi_inclusive_ = true;
    std::vector<Filter> children_;
};

/// How deep parse_filter lets parentheses and negations nest.
inline constexpr std::size_t max_filter_depth = 64;

namespace detail::filter_syntax {

struct Token {
    enum Type { end, word, string, op } type = end;
    std::string text;
    std::size_t column = 0;  // 1-based
};

class Parser {
public:
    explicit Parser(std::string_view text) : text_(text) { lex(); }

    Filter parse() {
        if (tokens_.size() == 1) fail(tokens_.front(), "empty filter");
        Filter f = parse_or();
        if (peek().type != Token::end) fail(peek(), "unexpected '" + peek().text + "'");
        return f;
    }

private:
    [[noreturn]] void fail(const Token& t, const std::string& what) const {
        const std::string shown = text_.size() <= 200 ? std::string(text_) : std::string(text_.substr(0, 200)) + "...";
        throw ParseError("filter '" + shown + "': " + what + " at column " + std::to_string(t.column));
    }
    static bool word_char(char c) {
        return !(c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '(' || c == ')' || c == ',' || c == '=' ||
                 c == '!' || c == '<' || c == '>' || c == '&' || c == '|' || c == '"' || c == '?');
    }
    void lex() {
        std::size_t i = 0;
        while (i < text_.size()) {
            const char c = text_[i];
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
                ++i;
                continue;
            }
            Token t;
            t.column = i + 1;
            if (c == '"') {
                t.type = Token::string;
                ++i;
                bool closed = false;
                while (i < text_.size()) {
                    if (text_[i] == '\\' && i + 1 < text_.size()) {
                        t.text.push_back(text_[i + 1]);
                        i += 2;
                    } else if (text_[i] == '"') {
                        closed = true;
                        ++i;
                        break;
                    } else {
                        t.text.push_back(text_[i++]);
                    }
                }
                if (!closed) fail(t, "unterminated string");
            } else if (word_char(c)) {
                t.type = Token::word;
                while (i < text_.size() && word_char(text_[i])) t.text.push_back(text_[i++]);
            } else {
                t.type = Token::op;
                const std::string_view two = text_.substr(i, 2);
                if (two == "&&" || two == "||" || two == "!=" || two == "<=" || two == ">=") {
                    t.text = std::string(two);
                    i += 2;
                } else {
                    t.text = std::string(1, c);
                    ++i;
                }
            }
            tokens_.push_back(std::move(t));
        }
        Token e;
        e.column = text_.size() + 1;
        tokens_.push_back(e);
    }
    const Token& peek() const { return tokens_[pos_]; }
    const Token& next() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }
    bool accept_op(std::string_view op) {
        if (peek().type == Token::op && peek().text == op) {
            ++pos_;
            return true;
        }
        return false;
    }
    bool accept_word(std::string_view w) {
        if (peek().type == Token::word && peek().text == w) {
            ++pos_;
            return true;
        }
        return false;
    }
    void expect_op(std::string_view op) {
        if (!accept_op(op)) fail(peek(), "expected '" + std::string(op) + "'");
    }

    Filter parse_or() {
        Filter f = parse_and();
        while (accept_op("||") || accept_op("|") || accept_word("or")) f = std::move(f) || parse_and();
        return f;
    }
    Filter parse_and() {
        Filter f = parse_unary();
        while (accept_op("&&") || accept_op("&") || accept_op(",") || accept_word("and"))
            f = std::move(f) && parse_unary();
        return f;
    }
    /// One level of nesting (the '(' or negation just read) for the lifetime of a
    /// parse_unary call; a level beyond max_filter_depth fails at that token.
    struct Nest {
        explicit Nest(Parser& p) : p_(p) {
            if (++p_.depth_ > max_filter_depth)
                p_.fail(p_.tokens_[p_.pos_ - 1], "nested deeper than " + std::to_string(max_filter_depth) + " levels");
        }
        ~Nest() { --p_.depth_; }
        Nest(const Nest&) = delete;
        Nest& operator=(const Nest&) = delete;
        Parser& p_;
    };

    Filter parse_unary() {
        if (accept_op("!") || accept_word("not")) {
            const Nest nest(*this);
            return !parse_unary();
        }
        if (accept_op("(")) {
            const Nest nest(*this);
            Filter f = parse_or();
            expect_op(")");
            return f;
        }
        const Token& t = next();
        if (t.type != Token::word) fail(t, t.type == Token::end ? "expected a condition" : "expected a field name");
        if (t.text == "all") return Filter::all();
        if (t.text == "none") return Filter::none();
        if (t.text == "exists" && accept_op("(")) {
            const Token& f = next();
            if (f.type != Token::word) fail(f, "expected a field name");
            expect_op(")");
            return Filter::exists(f.text);
        }
        const std::string field = t.text;
        if (accept_op("?")) return Filter::exists(field);
        if (accept_word("in")) {
            expect_op("(");
            std::vector<FilterValue> values;
            do {
                for (auto& v : alternatives(next())) values.push_back(std::move(v));
            } while (accept_op(","));
            expect_op(")");
            return Filter::in(field, std::move(values));
        }
        const Token& op = next();
        if (op.type != Token::op) fail(op, "expected an operator (=, !=, <, <=, >, >=, in) after '" + field + "'");
        if (op.text == "=" || op.text == "!=") {
            Filter f = Filter::in(field, alternatives(next()));
            if (f.values().size() == 1) f = Filter::eq(field, f.values().front());
            return op.text == "=" ? f : !f;
        }
        if (op.text == "<" || op.text == "<=" || op.text == ">" || op.text == ">=") {
            const Token& v = next();
            auto alts = alternatives(v);
            std::optional<FilterValue> bound;
            for (auto& a : alts)
                if (!std::holds_alternative<std::string>(a)) bound = std::move(a);
            if (!bound) fail(v, "'" + v.text + "' is not a number or a date (YYYY-MM-DD)");
            const bool inclusive = op.text.size() == 2;
            if (op.text[0] == '>') return Filter::range(field, std::move(bound), std::nullopt, inclusive, true);
            return Filter::range(field, std::nullopt, std::move(bound), true, inclusive);
        }
        fail(op, "unexpected '" + op.text + "' after '" + field + "'");
    }

    /// What a value token may mean: a quoted string is a string; a bare word is a
    /// string and also a number or a date when it reads as one. A "num:" or "date:"
    /// prefix (written by Filter::to_string) asks for that type only.
    std::vector<FilterValue> alternatives(const Token& t) const {
        if (t.type == Token::string) return {t.text};
        if (t.type != Token::word) fail(t, "expected a value");
        if (t.text.starts_with("num:") || t.text.starts_with("date:")) {
            const bool num = t.text[0] == 'n';
            const std::string body = t.text.substr(num ? 4 : 5);
            auto v = typed(body);
            for (auto& x : v)
                if (std::holds_alternative<double>(x) == num && std::holds_alternative<Date>(x) == !num) return {x};
            fail(t, "'" + body + "' is not a " + (num ? "number" : "date"));
        }
        auto v = typed(t.text);
        v.insert(v.begin(), FilterValue{t.text});
        return v;
    }
    static std::vector<FilterValue> typed(const std::string& s) {
        std::vector<FilterValue> out;
        if (!s.empty()) {
            char* end = nullptr;
            const double d = std::strtod(s.c_str(), &end);
            if (end == s.c_str() + s.size() && std::isfinite(d) &&
                s.find_first_not_of("0123456789+-.eE") == std::string::npos)
                out.emplace_back(d);
        }
        if (s.size() == 10 && s[4] == '-' && s[7] == '-') {
            try {
                out.emplace_back(Date::parse(s));
            } catch (const ParseError&) {
            }
        }
        return out;
    }

    std::string_view text_;
    std::vector<Token> tokens_;
    std::size_t pos_ = 0;
    std::size_t depth_ = 0;  // open parentheses and negations around the current position
};

}  // namespace detail::filter_syntax

/// Parses the text syntax described above. Throws ParseError naming the text and column.
[[nodiscard]] inline Filter parse_filter(std::string_view text) { return detail::filter_syntax::Parser(text).parse(); }

}  // namespace ragpp
