// ragpp detail: the not-API helpers of embed/tokenizer_json.hpp (namespace detail), moved out of it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ragpp/detail/codepoints.hpp>
#include <ragpp/detail/grapheme.hpp>

namespace ragpp {

namespace detail {

/// Decodes standard base64 (RFC 4648 alphabet, '=' padding required as HF's
/// BASE64_STANDARD does). Returns nullopt on any invalid character or length.
[[nodiscard]] inline std::optional<std::string> decode_base64(std::string_view in) {
    auto value = [](char c) -> int {
        if (c >= 'A' && c <= 'Z') return c - 'A';
        if (c >= 'a' && c <= 'z') return c - 'a' + 26;
        if (c >= '0' && c <= '9') return c - '0' + 52;
        if (c == '+') return 62;
        if (c == '/') return 63;
        return -1;
    };
    if (in.size() % 4 != 0) return std::nullopt;
    std::string out;
    out.reserve(in.size() / 4 * 3);
    for (std::size_t i = 0; i < in.size(); i += 4) {
        const bool last = i + 4 == in.size();
        int v[4];
        int pad = 0;
        for (int k = 0; k < 4; ++k) {
            const char c = in[i + static_cast<std::size_t>(k)];
            if (c == '=' && last && k >= 2) {
                v[k] = 0;
                ++pad;
                continue;
            }
            if (pad > 0) return std::nullopt;  // data after padding
            v[k] = value(c);
            if (v[k] < 0) return std::nullopt;
        }
        const std::uint32_t n = (static_cast<std::uint32_t>(v[0]) << 18) | (static_cast<std::uint32_t>(v[1]) << 12) |
                                (static_cast<std::uint32_t>(v[2]) << 6) | static_cast<std::uint32_t>(v[3]);
        // Canonical encoding: the bits dropped by the padding are zero.
        if ((pad == 1 && (n & 0xFF) != 0) || (pad == 2 && (n & 0xFFFF) != 0)) return std::nullopt;
        out.push_back(static_cast<char>((n >> 16) & 0xFF));
        if (pad < 2) out.push_back(static_cast<char>((n >> 8) & 0xFF));
        if (pad < 1) out.push_back(static_cast<char>(n & 0xFF));
    }
    return out;
}

/// SentencePiece's precompiled character map: a darts-clone double-array trie over
/// UTF-8 bytes whose values index NUL-terminated replacement strings.
///
/// Blob layout (sentencepiece normalizer.cc, DecodePrecompiledCharsMap): uint32 LE trie
/// size in bytes, the trie (uint32 LE units), then the replacement strings.
/// Unit layout (darts-clone darts.h, DoubleArrayUnit): bit 8 has_leaf; bits 0-7 the
/// label, bit 31 set on value units (so a value unit never matches a label); value =
/// bits 0-30; offset = (unit >> 10) << 8 when bit 9 is set, else unit >> 10. A search
/// starts at position 0 XOR offset(unit 0); each byte c moves to pos ^ c, which must
/// carry label c, then to pos ^ offset; when that unit has a leaf, unit[pos] is a value
/// for the prefix read so far.
class CharsMap {
public:
    /// Parses `blob`; throws FormatError naming `source` when the sizes do not fit.
    CharsMap(std::string_view blob, std::string source) : source_(std::move(source)) {
        if (blob.size() < 4) bad("is " + std::to_string(blob.size()) + " bytes, too short for the trie size");
        const std::uint32_t trie_bytes = load_u32(blob.data());
        if (trie_bytes == 0 || trie_bytes % 4 != 0)
            bad("trie size " + std::to_string(trie_bytes) + " is not a positive multiple of 4");
        if (trie_bytes > blob.size() - 4)
            bad("trie size " + std::to_string(trie_bytes) + " exceeds the " + std::to_string(blob.size() - 4) +
                " bytes after the size field");
        units_.resize(trie_bytes / 4);
        for (std::size_t i = 0; i < units_.size(); ++i) units_[i] = load_u32(blob.data() + 4 + 4 * i);
        normalized_.assign(blob.substr(4 + std::size_t{trie_bytes}));
        // The strings must be valid UTF-8 (HF refuses the map otherwise).
        if (encode_utf8(decode_utf8(normalized_)) != normalized_) bad("replacement strings are not valid UTF-8");
        // The entries of the ASCII characters, looked up once (most clusters are one).
        for (unsigned c = 1; c < 128; ++c) {
            const char key = static_cast<char>(c);
            const auto [len, rep] = prefix(std::string_view(&key, 1), 0, true);
            if (len > 0) ascii_[c] = decode_utf8(rep);
        }
    }

    /// The longest (or the shortest) prefix of `s` from byte `at` found in the trie:
    /// {length in bytes, replacement}, length 0 when none. A NUL byte ends the key, as
    /// in darts-clone.
    [[nodiscard]] std::pair<std::size_t, std::string_view> prefix(std::string_view s, std::size_t at,
                                                                  bool shortest = false) const {
        std::size_t best_len = 0;
        std::uint32_t best_value = 0;
        std::size_t pos = offset(unit(0));
        for (std::size_t k = at; k < s.size() && !(shortest && best_len > 0); ++k) {
            const auto c = static_cast<unsigned char>(s[k]);
            if (c == 0) break;
            pos ^= c;
            const std::uint32_t u = unit(pos);
            if ((u & 0x800000FFu) != c) break;  // label
            pos ^= offset(u);
            if ((u >> 8) & 1u) {  // has_leaf
                best_len = k - at + 1;
                best_value = unit(pos) & 0x7FFFFFFFu;
            }
        }
        if (best_len == 0) return {0, {}};
        if (best_value >= normalized_.size())
            bad("trie value " + std::to_string(best_value) + " is beyond the " + std::to_string(normalized_.size()) +
                " bytes of replacement strings");
        std::string_view rest = std::string_view(normalized_).substr(best_value);
        return {best_len, rest.substr(0, std::min(rest.find('\0'), rest.size()))};
    }

    /// SentencePiece's normalization of UTF-8 text (normalizer.cc, NormalizePrefix; the
    /// charsmap part only: the whitespace handling is expressed in tokenizer.json by
    /// other components): the longest match at each position, else one character.
    [[nodiscard]] std::string normalize_spm(std::string_view in) const {
        std::string out;
        out.reserve(in.size());
        for (std::size_t i = 0; i < in.size();) {
            const auto [len, rep] = prefix(in, i);
            if (len > 0) {
                out += rep;
                i += len;
            } else {
                const std::size_t start = i;
                next_codepoint(in, i);
                out.append(in, start, i - start);
            }
        }
        return out;
    }

    /// HF tokenizers' normalization (normalizers/precompiled.rs): per extended grapheme
    /// cluster, a cluster under 6 UTF-8 bytes whose shortest prefix is in the trie is
    /// replaced whole by that prefix's string; otherwise each character is replaced by
    /// its own entry, if any.
    [[nodiscard]] std::u32string normalize_hf(std::u32string_view s) const {
        std::u32string out;
        out.reserve(s.size());
        std::string buf;
        for_each_grapheme(s, [&](std::size_t b, std::size_t e) {
            if (e - b == 1 && s[b] < 0x80) {  // one ASCII character: the table
                if (ascii_[s[b]]) out += *ascii_[s[b]];
                else out.push_back(s[b]);
                return;
            }
            buf = encode_utf8(s.substr(b, e - b));
            if (buf.size() < 6) {
                const auto [len, rep] = prefix(buf, 0, true);
                if (len > 0) {
                    out += decode_utf8(rep);
                    return;
                }
            }
            for (std::size_t k = b; k < e; ++k) {
                buf = encode_utf8(s.substr(k, 1));
                const auto [len, rep] = prefix(buf, 0, true);
                if (len > 0) out += decode_utf8(rep);
                else out.push_back(s[k]);
            }
        });
        return out;
    }

    [[nodiscard]] std::size_t num_units() const noexcept { return units_.size(); }

private:
    static std::uint32_t load_u32(const char* p) noexcept {
        const auto* b = reinterpret_cast<const unsigned char*>(p);
        return std::uint32_t{b[0]} | (std::uint32_t{b[1]} << 8) | (std::uint32_t{b[2]} << 16) | (std::uint32_t{b[3]} << 24);
    }
    static std::size_t offset(std::uint32_t u) noexcept { return std::size_t{u >> 10} << ((u & (1u << 9)) >> 6); }
    std::uint32_t unit(std::size_t pos) const {
        if (pos >= units_.size())
            bad("trie unit " + std::to_string(pos) + " is beyond the " + std::to_string(units_.size()) + " units");
        return units_[pos];
    }
    [[noreturn]] void bad(const std::string& what) const {
        throw FormatError("'" + source_ + "': normalizer Precompiled: precompiled_charsmap " + what);
    }

    std::string source_;
    std::vector<std::uint32_t> units_;
    std::string normalized_;
    std::optional<std::u32string> ascii_[128];
};

}  // namespace detail

}  // namespace ragpp
