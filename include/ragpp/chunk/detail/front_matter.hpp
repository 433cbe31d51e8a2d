// ragpp detail: the not-API helpers of chunk/front_matter.hpp (namespace detail::yaml), moved out of it.
#pragma once

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>

namespace ragpp {

namespace detail::yaml {

[[nodiscard]] inline std::string_view rtrim(std::string_view s) noexcept {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}
[[nodiscard]] inline std::string_view ltrim(std::string_view s) noexcept {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    return s;
}

[[nodiscard]] inline bool looks_numeric(std::string_view s) noexcept {
    std::size_t i = 0;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    std::size_t digits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++digits;
    if (i < s.size() && s[i] == '.') {
        ++i;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++digits;
    }
    if (digits == 0) return false;
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
        std::size_t exp = 0;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++exp;
        if (exp == 0) return false;
    }
    return i == s.size();
}

[[nodiscard]] inline bool looks_like_date(std::string_view s) noexcept {
    if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
    for (std::size_t i : {0, 1, 2, 3, 5, 6, 8, 9})
        if (s[i] < '0' || s[i] > '9') return false;
    return true;
}

/// The lines of `text` (without '\n' or a final '\r').
[[nodiscard]] inline std::vector<std::string_view> split_lines(std::string_view text) {
    std::vector<std::string_view> lines;
    std::size_t b = 0;
    while (b <= text.size()) {
        std::size_t e = text.find('\n', b);
        if (e == std::string_view::npos) e = text.size();
        std::string_view l = text.substr(b, e - b);
        if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
        lines.push_back(l);
        b = e + 1;
    }
    return lines;
}
class Parser {
public:
    Parser(std::string_view where, std::size_t first_line) : where_(where), first_line_(first_line) {}

    [[noreturn]] void fail(std::size_t line, const std::string& what) const {
        throw ParseError(std::string(where_) + ":" + std::to_string(first_line_ + line) + ": front matter: " + what);
    }

    /// A quoted string starting at s[0]; sets `rest` to what follows the closing quote.
    std::string quoted(std::string_view s, std::size_t line, std::string_view& rest) const {
        const char q = s.front();
        std::string out;
        for (std::size_t i = 1; i < s.size(); ++i) {
            const char c = s[i];
            if (q == '\'' && c == '\'') {
                if (i + 1 < s.size() && s[i + 1] == '\'') {
                    out.push_back('\'');
                    ++i;
                    continue;
                }
                rest = s.substr(i + 1);
                return out;
            }
            if (q == '"' && c == '\\' && i + 1 < s.size()) {
                const char e = s[++i];
                out.push_back(e == 'n' ? '\n' : e == 't' ? '\t' : e);
                continue;
            }
            if (q == '"' && c == '"') {
                rest = s.substr(i + 1);
                return out;
            }
            out.push_back(c);
        }
        fail(line, "unterminated quoted string");
    }

    /// The text of a plain scalar without a trailing comment.
    static std::string_view plain(std::string_view s) noexcept {
        for (std::size_t i = 0; i < s.size(); ++i)
            if (s[i] == '#' && (i == 0 || s[i - 1] == ' ' || s[i - 1] == '\t')) return rtrim(s.substr(0, i));
        return rtrim(s);
    }

    void expect_end(std::string_view rest, std::size_t line) const {
        rest = ltrim(rest);
        if (!rest.empty() && rest.front() != '#') fail(line, "unexpected text after a value: '" + std::string(rest) + "'");
    }

    /// A scalar as text (for list items): quotes removed.
    std::string scalar_text(std::string_view s, std::size_t line) const {
        s = ltrim(s);
        if (!s.empty() && (s.front() == '"' || s.front() == '\'')) {
            std::string_view rest;
            std::string v = quoted(s, line, rest);
            expect_end(rest, line);
            return v;
        }
        return std::string(plain(s));
    }

    std::vector<std::string> flow_list(std::string_view s, std::size_t line) const {
        std::vector<std::string> items;
        std::size_t i = 1;
        while (true) {
            while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
            if (i >= s.size()) fail(line, "unterminated flow list (multi-line lists need the '- item' form)");
            if (s[i] == ']') {
                expect_end(s.substr(i + 1), line);
                return items;
            }
            if (s[i] == '"' || s[i] == '\'') {
                std::string_view rest;
                items.push_back(quoted(s.substr(i), line, rest));
                i = s.size() - rest.size();
            } else {
                const std::size_t b = i;
                while (i < s.size() && s[i] != ',' && s[i] != ']') ++i;
                items.emplace_back(rtrim(s.substr(b, i - b)));
            }
            while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
            if (i < s.size() && s[i] == ',') ++i;
            else if (i < s.size() && s[i] != ']') fail(line, "expected ',' or ']' in a flow list");
        }
    }

    MetaValue value(std::string_view s, std::size_t line) const {
        if (s.front() == '[') return flow_list(s, line);
        if (s.front() == '{') fail(line, "flow mappings {...} are not supported");
        if (s.front() == '"' || s.front() == '\'') {
            std::string_view rest;
            std::string v = quoted(s, line, rest);
            expect_end(rest, line);
            return v;
        }
        const std::string_view p = plain(s);
        if (looks_like_date(p)) {
            try {
                return Date::parse(p);
            } catch (const ParseError&) {
                fail(line, "'" + std::string(p) + "' is not a valid date");
            }
        }
        if (looks_numeric(p)) {
            const std::string digits(p);
            const double d = std::strtod(digits.c_str(), nullptr);
            if (!std::isfinite(d)) fail(line, "number '" + digits + "' is out of range");
            return d;
        }
        return std::string(p);
    }

    Metadata parse(const std::vector<std::string_view>& lines) {
        Metadata out;
        std::vector<std::pair<std::size_t, std::string>> frames;  // (indent, dotted key) of open mappings
        std::optional<std::pair<std::size_t, std::string>> list_key;  // key awaiting "- item" lines
        std::set<std::string> empty_keys;
        for (std::size_t i = 0; i < lines.size(); ++i) {
            const std::string_view line = rtrim(lines[i]);
            std::size_t ind = 0;
            while (ind < line.size() && line[ind] == ' ') ++ind;
            if (ind == line.size() || line[ind] == '#') continue;
            if (line[ind] == '\t') fail(i, "tabs are not allowed in YAML indentation");
            const std::string_view content = line.substr(ind);
            if (content == "-" || content.starts_with("- ")) {
                if (!list_key || ind < list_key->first) fail(i, "list item without a key above it");
                auto& slot = out[list_key->second];
                if (!std::holds_alternative<std::vector<std::string>>(slot)) slot = std::vector<std::string>{};
                std::get<std::vector<std::string>>(slot).push_back(scalar_text(content.substr(1), i));
                empty_keys.erase(list_key->second);
                continue;
            }
            std::size_t colon = std::string_view::npos;
            for (std::size_t k = 0; k < content.size(); ++k)
                if (content[k] == ':' && (k + 1 == content.size() || content[k + 1] == ' ')) {
                    colon = k;
                    break;
                }
            if (colon == std::string_view::npos || colon == 0) fail(i, "expected 'key: value', got '" + std::string(content) + "'");
            while (!frames.empty() && frames.back().first >= ind) frames.pop_back();
            std::string key = std::string(rtrim(content.substr(0, colon)));
            if (key.size() >= 2 && (key.front() == '"' || key.front() == '\'') && key.back() == key.front())
                key = key.substr(1, key.size() - 2);
            if (!frames.empty()) {
                empty_keys.erase(frames.back().second);
                key = frames.back().second + "." + key;
            }
            if (out.count(key) != 0 || empty_keys.count(key) != 0) fail(i, "duplicate key '" + key + "'");
            const std::string_view v = ltrim(content.substr(colon + 1));
            list_key.reset();
            if (v.empty() || v.front() == '#') {
                frames.emplace_back(ind, key);
                list_key.emplace(ind, key);
                empty_keys.insert(key);
                continue;
            }
            if (v.front() == '|' || v.front() == '>') {
                const bool literal = v.front() == '|';
                std::string text;
                std::size_t j = i + 1;
                for (; j < lines.size(); ++j) {
                    const std::string_view l = rtrim(lines[j]);
                    std::size_t li = 0;
                    while (li < l.size() && l[li] == ' ') ++li;
                    if (li < l.size() && li <= ind) break;
                    if (!text.empty()) text.push_back(literal ? '\n' : ' ');
                    text.append(ltrim(l));
                }
                out[key] = text;
                i = j - 1;
                continue;
            }
            out[key] = value(v, i);
        }
        for (const auto& k : empty_keys) out.emplace(k, std::string{});
        return out;
    }

private:
    std::string_view where_;
    std::size_t first_line_;
};

}  // namespace detail::yaml

}  // namespace ragpp

namespace ragpp {

namespace detail::toml {

using yaml::looks_like_date;
using yaml::looks_numeric;
using yaml::ltrim;
using yaml::rtrim;

/// The TOML subset of parse_toml_front_matter (chunk/front_matter.hpp).
class Parser {
public:
    Parser(std::string_view where, std::size_t first_line) : where_(where), first_line_(first_line) {}

    [[noreturn]] void fail(std::size_t line, const std::string& what) const {
        throw ParseError(std::string(where_) + ":" + std::to_string(first_line_ + line) + ": front matter: " + what);
    }

    Metadata parse(const std::vector<std::string_view>& lines) {
        Metadata out;
        std::string table;  // the current [table], "" at the top
        for (std::size_t i = 0; i < lines.size(); ++i) {
            std::string_view l = ltrim(rtrim(lines[i]));
            if (l.empty() || l.front() == '#') continue;
            if (l.front() == '[') {
                if (l.starts_with("[[")) fail(i, "arrays of tables [[...]] are not supported");
                const auto close = l.find(']');
                if (close == std::string_view::npos) fail(i, "unterminated table header");
                std::string_view after = ltrim(l.substr(close + 1));
                if (!after.empty() && after.front() != '#') fail(i, "unexpected text after a table header");
                std::string_view rest = l.substr(1, close - 1);
                table = key(rest, i);
                if (!ltrim(rest).empty()) fail(i, "unexpected text in a table header");
                continue;
            }
            std::string_view rest = l;
            std::string k = key(rest, i);
            rest = ltrim(rest);
            if (rest.empty() || rest.front() != '=') fail(i, "expected 'key = value', got '" + std::string(l) + "'");
            rest = ltrim(rest.substr(1));
            if (rest.empty()) fail(i, "a key without a value");
            if (!table.empty()) k = table + "." + k;
            if (out.count(k) != 0) fail(i, "duplicate key '" + k + "'");
            if (rest.front() == '[') {
                // An array may span lines: gather them up to its closing ']'.
                std::string text(rest);
                std::size_t j = i;
                ArrayScan scan;
                bool closed = array_closed(text, scan, i);
                while (!closed && j + 1 < lines.size()) {
                    text += '\n';
                    text += lines[++j];
                    closed = array_closed(text, scan, i);
                }
                if (!closed) fail(i, "unterminated array");
                out[k] = array(text, i);
                i = j;
                continue;
            }
            std::string_view after;
            out[k] = value(rest, i, after);
            after = ltrim(after);
            if (!after.empty() && after.front() != '#') fail(i, "unexpected text after a value: '" + std::string(after) + "'");
        }
        return out;
    }

private:
    /// A dotted key at the start of `s` (bare parts A-Za-z0-9_- or quoted); `s` is left after it.
    std::string key(std::string_view& s, std::size_t line) const {
        std::string out;
        while (true) {
            s = ltrim(s);
            if (s.empty()) fail(line, "a key is missing");
            std::string part;
            if (s.front() == '"' || s.front() == '\'') {
                std::string_view after;
                part = string(s, line, after);
                s = after;
            } else {
                std::size_t n = 0;
                while (n < s.size() && (std::isalnum(static_cast<unsigned char>(s[n])) || s[n] == '_' || s[n] == '-')) ++n;
                if (n == 0) fail(line, "expected a key, got '" + std::string(s) + "'");
                part = std::string(s.substr(0, n));
                s.remove_prefix(n);
            }
            out += out.empty() ? part : "." + part;
            s = ltrim(s);
            if (s.empty() || s.front() != '.') return out;
            s.remove_prefix(1);
        }
    }

    /// A basic ("...", escapes \" \\ \n \t) or literal ('...') one-line string at s[0].
    std::string string(std::string_view s, std::size_t line, std::string_view& after) const {
        const char q = s.front();
        if (s.starts_with(q == '"' ? "\"\"\"" : "'''")) fail(line, "multi-line strings are not supported");
        std::string out;
        for (std::size_t i = 1; i < s.size(); ++i) {
            const char c = s[i];
            if (c == q) {
                after = s.substr(i + 1);
                return out;
            }
            if (q == '"' && c == '\\' && i + 1 < s.size()) {
                const char e = s[++i];
                if (e == 'n') out.push_back('\n');
                else if (e == 't') out.push_back('\t');
                else if (e == '"' || e == '\\') out.push_back(e);
                else fail(line, std::string("unsupported escape '\\") + e + "'");
                continue;
            }
            out.push_back(c);
        }
        fail(line, "unterminated string");
    }

    /// Where array_closed stopped in the text of an array that is still open.
    struct ArrayScan {
        std::size_t pos = 0;
        int depth = 0;
        char skipping = 0;  // the quote of an open string, '#' in a comment, 0 otherwise
    };
    /// Whether the array text starting with '[' has its closing ']' (strings and comments
    /// skipped), reading on from where `scan` stopped: the text grows by a line at a time
    /// and each byte is read once, so an array of L lines costs O(its size), not
    /// O(L x its size) (80,000 lines took 85 s when each line rescanned the text).
    bool array_closed(std::string_view s, ArrayScan& scan, std::size_t line) const {
        for (std::size_t& i = scan.pos; i < s.size(); ++i) {
            const char c = s[i];
            if (scan.skipping != 0) {
                if (c == (scan.skipping == '#' ? '\n' : scan.skipping)) scan.skipping = 0;
            } else if (c == '"' || c == '\'' || c == '#') {
                scan.skipping = c;
            } else if (c == '[') {
                ++scan.depth;
            } else if (c == ']' && --scan.depth == 0) {
                const std::string_view after = ltrim(s.substr(i + 1));
                if (!after.empty() && after.front() != '#') fail(line, "unexpected text after an array");
                return true;
            }
        }
        return false;
    }

    /// An array of scalars -> a list of strings (numbers and dates as written).
    std::vector<std::string> array(std::string_view s, std::size_t line) const {
        std::vector<std::string> items;
        std::size_t i = 1;
        auto skip = [&] {
            while (i < s.size()) {
                if (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') ++i;
                else if (s[i] == '#') i = std::min(s.find('\n', i), s.size());
                else break;
            }
        };
        while (true) {
            skip();
            if (i >= s.size()) fail(line, "unterminated array");
            if (s[i] == ']') return items;
            if (s[i] == '[' || s[i] == '{') fail(line, "nested arrays and inline tables are not supported");
            if (s[i] == '"' || s[i] == '\'') {
                std::string_view after;
                items.push_back(string(s.substr(i), line, after));
                i = s.size() - after.size();
            } else {
                const std::size_t b = i;
                while (i < s.size() && s[i] != ',' && s[i] != ']' && s[i] != '\n' && s[i] != '#') ++i;
                const std::string_view item = rtrim(s.substr(b, i - b));
                if (!bare_scalar(item)) fail(line, "'" + std::string(item) + "' is not a TOML value (strings need quotes)");
                items.emplace_back(item);
            }
            skip();
            if (i < s.size() && s[i] == ',') ++i;
            else if (i < s.size() && s[i] != ']') fail(line, "expected ',' or ']' in an array");
        }
    }

    /// A number, a boolean, a date or a date-time written bare.
    static bool bare_scalar(std::string_view s) {
        if (s == "true" || s == "false") return true;
        std::string digits;
        for (char c : s)
            if (c != '_') digits.push_back(c);
        if (looks_numeric(digits)) return true;
        return s.size() >= 10 && looks_like_date(s.substr(0, 10)) && (s.size() == 10 || s[10] == 'T' || s[10] == ' ');
    }

    MetaValue value(std::string_view s, std::size_t line, std::string_view& after) const {
        if (s.front() == '"' || s.front() == '\'') return string(s, line, after);
        if (s.front() == '{') fail(line, "inline tables {...} are not supported");
        std::size_t n = 0;
        while (n < s.size() && s[n] != '#') ++n;
        const std::string_view v = rtrim(s.substr(0, n));
        after = s.substr(n);
        if (v.size() == 10 && looks_like_date(v)) {
            try {
                return Date::parse(v);
            } catch (const ParseError&) {
                fail(line, "'" + std::string(v) + "' is not a valid date");
            }
        }
        if (!bare_scalar(v)) fail(line, "'" + std::string(v) + "' is not a TOML value (strings need quotes)");
        std::string digits;
        for (char c : v)
            if (c != '_') digits.push_back(c);
        if (looks_numeric(digits)) {
            const double d = std::strtod(digits.c_str(), nullptr);
            if (!std::isfinite(d)) fail(line, "number '" + std::string(v) + "' is out of range");
            return d;
        }
        return std::string(v);  // true, false, a date-time: as written
    }

    std::string_view where_;
    std::size_t first_line_;
};

}  // namespace detail::toml

}  // namespace ragpp
