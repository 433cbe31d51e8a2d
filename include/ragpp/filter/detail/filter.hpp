// ragpp detail: the lexer and recursive-descent parser of parse_filter (filter/filter.hpp).
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
#include <ragpp/filter/expression.hpp>

namespace ragpp {

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

}  // namespace ragpp
