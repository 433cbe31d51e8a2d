// ragpp detail: nlohmann::json values written as JSON text, byte for byte what
// `dump(indent, ' ', false, error_handler_t::replace)` writes, faster.
//
// nlohmann's serializer runs every byte of every string through its UTF-8 automaton and
// an escape switch, and returns a fresh string. The replies of ragpp search, ask and get
// are mostly passages of valid UTF-8 without anything to escape: over HTTP, writing them
// took 6% of a request (a profile in docs/http.md). This writer copies runs of such bytes
// whole, checks multi-byte sequences with a direct test, and appends to the caller's
// buffer. A string that is not valid UTF-8 goes to nlohmann's own serializer (which
// replaces each bad sequence by U+FFFD in its own way), numbers with a fraction to its
// own shortest round-trip formatter, so the output cannot differ from dump()'s;
// tests/unit-hostile.cpp compares the two on random values and random bytes.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ragpp::detail {

/// The length of the well-formed UTF-8 sequence starting at `s[i]` (a byte >= 0x80), or 0
/// (Unicode's table 3-7: no overlong form, no surrogate, nothing above U+10FFFF).
[[nodiscard]] inline std::size_t utf8_sequence_length(std::string_view s, std::size_t i) noexcept {
    const auto at = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const auto cont = [&](std::size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) {
        return k < s.size() && at(k) >= lo && at(k) <= hi;
    };
    const unsigned b = at(i);
    if (b >= 0xC2 && b <= 0xDF) return cont(i + 1) ? 2 : 0;
    if (b == 0xE0) return cont(i + 1, 0xA0) && cont(i + 2) ? 3 : 0;
    if ((b >= 0xE1 && b <= 0xEC) || b == 0xEE || b == 0xEF) return cont(i + 1) && cont(i + 2) ? 3 : 0;
    if (b == 0xED) return cont(i + 1, 0x80, 0x9F) && cont(i + 2) ? 3 : 0;
    if (b == 0xF0) return cont(i + 1, 0x90) && cont(i + 2) && cont(i + 3) ? 4 : 0;
    if (b >= 0xF1 && b <= 0xF3) return cont(i + 1) && cont(i + 2) && cont(i + 3) ? 4 : 0;
    if (b == 0xF4) return cont(i + 1, 0x80, 0x8F) && cont(i + 2) && cont(i + 3) ? 4 : 0;
    return 0;
}

/// Appends `s` as a JSON string (quotes included), as dump() with ensure_ascii false and
/// error_handler_t::replace writes it.
inline void append_json_string(std::string& out, std::string_view s) {
    const std::size_t start = out.size();
    out += '"';
    const char* p = s.data();
    const std::size_t n = s.size();
    std::size_t run = 0;  // start of the bytes not yet appended
    std::size_t i = 0;
    while (i < n) {
        // Eight bytes at a time while none needs a look: no control, '"', '\\' or byte >= 0x80.
        constexpr std::uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
        while (i + 8 <= n) {
            std::uint64_t x;
            std::memcpy(&x, p + i, 8);
            const std::uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\');
            const std::uint64_t special =
                ((x - ones * 0x20) | (q - ones) | (b - ones)) & ~x & highs;  // < 0x20, '"', '\\' (x < 0x80)
            if ((special | (x & highs)) != 0) break;
            i += 8;
        }
        if (i >= n) break;
        const auto c = static_cast<unsigned char>(p[i]);
        if (c >= 0x80) {
            const std::size_t len = utf8_sequence_length(s, i);
            if (len == 0) {  // not UTF-8: nlohmann's replacement rules, from the start
                out.resize(start);
                out += nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
                return;
            }
            i += len;
            continue;
        }
        if (c >= 0x20 && c != '"' && c != '\\') {
            ++i;
            continue;
        }
        out.append(p + run, i - run);
        run = ++i;
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\b': out += "\\b"; break;
        case '\t': out += "\\t"; break;
        case '\n': out += "\\n"; break;
        case '\f': out += "\\f"; break;
        case '\r': out += "\\r"; break;
        default: {
            static constexpr char hex[] = "0123456789abcdef";
            const char u[] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            out.append(u, sizeof u);
        }
        }
    }
    out.append(p + run, n - run);
    out += '"';
}

/// Appends `x` as dump() writes a number_float: its shortest round-trip digits, or null
/// when it is not finite.
inline void append_json_number(std::string& out, double x) {
    if (!std::isfinite(x)) {
        out += "null";
        return;
    }
    std::array<char, 64> buf{};
    const char* end = nlohmann::detail::to_chars(buf.data(), buf.data() + buf.size(), x);
    out.append(buf.data(), static_cast<std::size_t>(end - buf.data()));
}

/// Appends `j` as JSON text: compact when `indent` < 0, else one member or element a line,
/// indented by `indent` spaces a level (`level` is the current depth).
inline void append_json(std::string& out, const nlohmann::json& j, int indent = -1, int level = 0) {
    using V = nlohmann::json::value_t;
    const auto newline = [&](int depth) {
        out += '\n';
        out.append(static_cast<std::size_t>(indent) * static_cast<std::size_t>(depth), ' ');
    };
    switch (j.type()) {
    case V::object: {
        if (j.empty()) {
            out += "{}";
            return;
        }
        out += '{';
        bool first = true;
        for (auto it = j.begin(); it != j.end(); ++it) {
            if (!first) out += ',';
            first = false;
            if (indent >= 0) newline(level + 1);
            append_json_string(out, it.key());
            out += indent >= 0 ? ": " : ":";
            append_json(out, it.value(), indent, level + 1);
        }
        if (indent >= 0) newline(level);
        out += '}';
        return;
    }
    case V::array: {
        if (j.empty()) {
            out += "[]";
            return;
        }
        out += '[';
        bool first = true;
        for (const auto& e : j) {
            if (!first) out += ',';
            first = false;
            if (indent >= 0) newline(level + 1);
            append_json(out, e, indent, level + 1);
        }
        if (indent >= 0) newline(level);
        out += ']';
        return;
    }
    case V::string: append_json_string(out, j.get_ref<const std::string&>()); return;
    case V::boolean: out += j.get<bool>() ? "true" : "false"; return;
    case V::null: out += "null"; return;
    case V::number_integer: out += std::to_string(j.get<std::int64_t>()); return;
    case V::number_unsigned: out += std::to_string(j.get<std::uint64_t>()); return;
    case V::number_float: append_json_number(out, j.get<double>()); return;
    default: {  // binary, discarded: nlohmann's serializer, at this depth
        nlohmann::detail::serializer<nlohmann::json> s(nlohmann::detail::output_adapter<char, std::string>(out), ' ',
                                                       nlohmann::json::error_handler_t::replace);
        const auto step = static_cast<unsigned>(indent >= 0 ? indent : 0);
        s.dump(j, indent >= 0, false, step, step * static_cast<unsigned>(level));
        return;
    }
    }
}

/// `j` as dump(indent, ' ', false, error_handler_t::replace) writes it.
[[nodiscard]] inline std::string dump_json(const nlohmann::json& j, int indent = -1) {
    std::string out;
    append_json(out, j, indent);
    return out;
}

}  // namespace ragpp::detail
