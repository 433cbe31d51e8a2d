// ragpp detail: the glob matcher behind io/ignore.hpp (gitignore's wildcards, in path mode).
#pragma once

#include <cstddef>
#include <string_view>

namespace ragpp {

namespace detail::ignore {

/// Whether character class text `cls` (after '[' and any '!'/'^', up to but without the
/// closing ']') holds `c`: single characters, ranges a-z, backslash escapes and the
/// POSIX classes [:alpha:] [:digit:] [:alnum:] [:upper:] [:lower:] [:space:] [:blank:]
/// [:punct:] [:xdigit:] [:print:] [:graph:] [:cntrl:].
[[nodiscard]] inline bool class_holds(std::string_view cls, char c) noexcept {
    const auto u = static_cast<unsigned char>(c);
    auto posix = [u](std::string_view name) {
        const bool upper = u >= 'A' && u <= 'Z', lower = u >= 'a' && u <= 'z', digit = u >= '0' && u <= '9';
        const bool print = u >= 0x20 && u < 0x7F;
        if (name == "alpha") return upper || lower;
        if (name == "digit") return digit;
        if (name == "alnum") return upper || lower || digit;
        if (name == "upper") return upper;
        if (name == "lower") return lower;
        if (name == "space") return u == ' ' || (u >= '\t' && u <= '\r');
        if (name == "blank") return u == ' ' || u == '\t';
        if (name == "punct") return print && u != ' ' && !upper && !lower && !digit;
        if (name == "xdigit") return digit || (u >= 'a' && u <= 'f') || (u >= 'A' && u <= 'F');
        if (name == "print") return print;
        if (name == "graph") return print && u != ' ';
        if (name == "cntrl") return u < 0x20 || u == 0x7F;
        return false;
    };
    for (std::size_t i = 0; i < cls.size();) {
        if (cls.substr(i).starts_with("[:")) {
            const auto end = cls.find(":]", i + 2);
            if (end != std::string_view::npos) {
                if (posix(cls.substr(i + 2, end - i - 2))) return true;
                i = end + 2;
                continue;
            }
        }
        char lo = cls[i];
        if (lo == '\\' && i + 1 < cls.size()) lo = cls[++i];
        ++i;
        char hi = lo;
        if (i + 1 < cls.size() && cls[i] == '-') {
            hi = cls[i + 1];
            i += 2;
            if (hi == '\\' && i < cls.size()) hi = cls[i++];
        }
        if (u >= static_cast<unsigned char>(lo) && u <= static_cast<unsigned char>(hi)) return true;
    }
    return false;
}

/// The end of the character class opening at p[i] == '[' (the index of its ']'), or npos
/// when it is not closed. A ']' right after '[' (or after '[!' / '[^') is a member.
[[nodiscard]] inline std::size_t class_end(std::string_view p, std::size_t i) noexcept {
    std::size_t k = i + 1;
    if (k < p.size() && (p[k] == '!' || p[k] == '^')) ++k;
    if (k < p.size() && p[k] == ']') ++k;
    while (k < p.size() && p[k] != ']') {
        if (p[k] == '\\') ++k;
        else if (p.substr(k).starts_with("[:")) {
            const auto e = p.find(":]", k + 2);
            if (e != std::string_view::npos) k = e + 1;
        }
        ++k;
    }
    return k < p.size() ? k : std::string_view::npos;
}

/// The outcome of a partial match: `abort_all` (the text ran out: no later start of an
/// enclosing '*' can match either) and `abort_to_starstar` (a '*' met a '/': only an
/// enclosing "**" may try further) prune the search, as git's wildmatch does, so that a
/// pattern with many stars stays polynomial.
enum class Wild { match, no_match, abort_all, abort_to_starstar };

[[nodiscard]] inline Wild wild(std::string_view p, std::string_view text) noexcept {
    std::size_t pi = 0, ti = 0;
    while (pi < p.size()) {
        const char c = p[pi];
        if (ti >= text.size() && c != '*') return Wild::abort_all;
        if (c == '*') {
            std::size_t stars = pi;
            while (stars < p.size() && p[stars] == '*') ++stars;
            const bool many = stars - pi >= 2;
            const bool at_start = pi == 0 || p[pi - 1] == '/';
            if (many && at_start && (stars == p.size() || p[stars] == '/')) {
                if (stars == p.size()) return Wild::match;  // "a/**": everything below
                const std::string_view rest = p.substr(stars + 1);  // after "**/": zero or more folders
                for (std::size_t k = ti;; ++k) {
                    if (k == ti || text[k - 1] == '/') {
                        const Wild r = wild(rest, text.substr(k));
                        if (r == Wild::match || r == Wild::abort_all) return r;
                    }
                    if (k == text.size()) return Wild::abort_all;
                }
            }
            const std::string_view rest = p.substr(stars);
            if (rest.empty()) return text.find('/', ti) == std::string_view::npos ? Wild::match : Wild::abort_to_starstar;
            for (std::size_t k = ti; k < text.size(); ++k) {
                const Wild r = wild(rest, text.substr(k));
                if (r != Wild::no_match) return r;
                if (text[k] == '/') return Wild::abort_to_starstar;
            }
            return Wild::abort_all;
        }
        const char t = text[ti];
        if (c == '?') {
            if (t == '/') return Wild::no_match;
        } else if (c == '[') {
            const std::size_t end = class_end(p, pi);
            if (end == std::string_view::npos) return Wild::abort_all;  // as git: an unclosed class matches nothing
            std::size_t b = pi + 1;
            const bool negated = p[b] == '!' || p[b] == '^';
            if (negated) ++b;
            if (t == '/' || class_holds(p.substr(b, end - b), t) == negated) return Wild::no_match;
            pi = end;
        } else if (c == '\\' && pi + 1 < p.size()) {
            if (p[++pi] != t) return Wild::no_match;
        } else if (c != t) {
            return Wild::no_match;
        }
        ++pi;
        ++ti;
    }
    return ti == text.size() ? Wild::match : Wild::no_match;
}

/// gitignore's wildcard match of `text` (a path with '/') against `p`, in path mode:
/// '*' and '?' and classes never match '/'; "**" between slashes (or at the start or the
/// end) matches any number of folders: "**/x", "a/**/b", "a/**" (everything inside a);
/// elsewhere "**" is a '*'. A backslash makes the next character literal.
[[nodiscard]] inline bool wildmatch(std::string_view p, std::string_view text) noexcept {
    return wild(p, text) == Wild::match;
}

}  // namespace detail::ignore

}  // namespace ragpp
