// ragpp detail: nlohmann::json values written as JSON text, byte for byte what
// `dump(indent, ' ', false, error_handler_t::replace)` writes, faster.
//
// nlohmann's serializer runs every byte of every string through its UTF-8 automaton and
// an escape switch, and returns a fresh string. The replies of ragpp search, ask and get
// are mostly passages of valid UTF-8 without anything to escape: over HTTP, writing them
// took about 5% of the server's CPU (docs/http.md). This writer copies runs of such bytes
// whole, checks multi-byte sequences with the library's decoder (text/utf8_decode.hpp),
// and appends to the caller's buffer. A string that is not valid UTF-8 goes to
// nlohmann's own serializer (which replaces each bad sequence by U+FFFD in its own way),
// numbers with a fraction to its own shortest round-trip formatter, so the output cannot
// differ from dump()'s; tests/unit-hostile.cpp compares the two on random values and
// random bytes.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include <ragpp/text/utf8_decode.hpp>

namespace ragpp::detail {

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
            const text::Utf8Char ch = text::decode_utf8(s, i);
            if (!ch.valid) {  // not UTF-8: nlohmann's replacement rules, from the start
                out.resize(start);
                out += nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
                return;
            }
            i += ch.length;
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
