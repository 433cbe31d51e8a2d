// ragpp: HfTokenizer, the parts of a HuggingFace `tokenizer.json` that static
// embedding models (Model2Vec) use, computing the same token ids as the `tokenizers`
// library with add_special_tokens = false.
//
// Supported:
//   normalizers     BertNormalizer (clean_text, handle_chinese_chars, strip_accents,
//                   lowercase), Lowercase, Strip, StripAccents, Replace (a String
//                   pattern, or the Regex `\s+`), Sequence, null
//   pre-tokenizers  BertPreTokenizer, Metaspace (prepend_scheme always/first/never,
//                   split), WhitespaceSplit, Sequence, null
//   models          WordPiece (greedy longest match first), Unigram (Viterbi, as in
//                   SentencePiece: Kudo 2018, "Subword Regularization"), WordLevel
//   added tokens    matched literally in the raw text before normalization.
// Anything else (the Precompiled normalizer of SentencePiece conversions, NFKC, other
// regexes, BPE, byte fallback, ...) makes the constructor throw UnsupportedError
// naming the feature and the file: never a silently wrong token sequence.
//
// Known approximations (documented in docs/embedders.md): strip_accents decomposes
// each character (NFD) and drops non-spacing marks without canonical reordering, which
// gives the same result since the marks are dropped; unassigned code points follow
// Unicode 15.0.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <ragpp/core/error.hpp>
#include <ragpp/detail/codepoints.hpp>

namespace ragpp {

class HfTokenizer {
public:
    using TokenId = std::uint32_t;

    /// Reads `path`. Throws IoError, ParseError (bad JSON), FormatError (missing or
    /// ill-typed fields) or UnsupportedError, each naming the file.
    static HfTokenizer from_file(const std::filesystem::path& path) {
        std::ifstream in(path, std::ios::binary);
        if (!in) throw IoError("cannot open '" + path.string() + "'");
        std::ostringstream s;
        s << in.rdbuf();
        return from_string(s.str(), path.string());
    }
    static HfTokenizer from_string(std::string_view json, const std::string& source = "<tokenizer.json>") {
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(json);
        } catch (const nlohmann::json::exception& e) {
            throw ParseError("'" + source + "': " + e.what());
        }
        HfTokenizer t;
        t.source_ = source;
        t.load(j);
        return t;
    }

    /// Token ids of `text`, without special tokens.
    [[nodiscard]] std::vector<TokenId> encode(std::string_view text) const {
        std::vector<TokenId> ids;
        // Added tokens split the raw text; the pieces between them go through the pipeline.
        std::size_t pos = 0;
        while (pos < text.size()) {
            std::size_t best = text.size(), best_len = 0;
            TokenId best_id = 0;
            for (const auto& [content, id] : added_) {
                const std::size_t at = text.find(content, pos);
                if (at < best || (at == best && at != text.size() && content.size() > best_len)) {
                    best = at;
                    best_len = content.size();
                    best_id = id;
                }
            }
            encode_plain(text.substr(pos, best - pos), ids);
            if (best == text.size()) break;
            ids.push_back(best_id);
            pos = best + best_len;
        }
        return ids;
    }

    /// The normalized text (for tests and debugging).
    [[nodiscard]] std::u32string normalize(std::string_view text) const {
        std::u32string s = detail::decode_utf8(text);
        for (const auto& n : normalizers_) apply(n, s);
        return s;
    }
    /// The pre-tokens of normalized text.
    [[nodiscard]] std::vector<std::u32string> pre_tokenize(std::u32string s) const {
        std::vector<std::u32string> parts{std::move(s)};
        for (const auto& p : pre_tokenizers_) parts = apply(p, parts);
        return parts;
    }

    [[nodiscard]] std::size_t vocab_size() const noexcept { return tokens_.size(); }
    /// The token string of `id` (as stored in tokenizer.json), or "" when out of range.
    [[nodiscard]] const std::string& token(TokenId id) const noexcept {
        static const std::string none;
        return id < tokens_.size() ? tokens_[id] : none;
    }
    [[nodiscard]] std::optional<TokenId> token_to_id(std::string_view token) const {
        auto it = vocab_.find(std::string(token));
        if (it == vocab_.end()) return std::nullopt;
        return it->second;
    }
    /// The id of the unknown token, if the model has one.
    [[nodiscard]] std::optional<TokenId> unk_id() const noexcept { return unk_; }
    [[nodiscard]] const std::string& model_type() const noexcept { return model_type_; }

private:
    struct Normalizer {
        enum Kind { bert, lowercase, strip, strip_accents, replace_string, replace_whitespace_regex } kind = bert;
        bool clean_text = true, chinese = true, strip_acc = true, lower = true;  // bert
        bool left = true, right = true;                                          // strip
        std::u32string pattern, content;                                          // replace
    };
    struct PreTokenizer {
        enum Kind { bert, metaspace, whitespace_split } kind = bert;
        char32_t replacement = 0x2581;
        enum Prepend { always, first, never } prepend = always;
        bool split = true;
    };

    HfTokenizer() = default;

    [[noreturn]] void unsupported(const std::string& what) const {
        throw UnsupportedError("'" + source_ + "': " + what + " is not supported by ragpp's tokenizer.json reader");
    }
    [[noreturn]] void bad(const std::string& what) const { throw FormatError("'" + source_ + "': " + what); }

    static std::string type_of(const nlohmann::json& j) {
        return j.is_object() && j.contains("type") && j["type"].is_string() ? j["type"].get<std::string>() : "";
    }
    static bool flag(const nlohmann::json& j, const char* key, bool fallback) {
        return j.contains(key) && j[key].is_boolean() ? j[key].get<bool>() : fallback;
    }

    void load_normalizer(const nlohmann::json& j) {
        if (j.is_null()) return;
        const std::string type = type_of(j);
        Normalizer n;
        if (type == "Sequence") {
            if (!j.contains("normalizers") || !j["normalizers"].is_array()) bad("Sequence normalizer without a list");
            for (const auto& sub : j["normalizers"]) load_normalizer(sub);
            return;
        } else if (type == "BertNormalizer") {
            n.kind = Normalizer::bert;
            n.clean_text = flag(j, "clean_text", true);
            n.chinese = flag(j, "handle_chinese_chars", true);
            n.lower = flag(j, "lowercase", true);
            n.strip_acc = j.contains("strip_accents") && j["strip_accents"].is_boolean() ? j["strip_accents"].get<bool>()
                                                                                         : n.lower;
        } else if (type == "Lowercase") {
            n.kind = Normalizer::lowercase;
        } else if (type == "StripAccents") {
            n.kind = Normalizer::strip_accents;
        } else if (type == "Strip") {
            n.kind = Normalizer::strip;
            n.left = flag(j, "strip_left", true);
            n.right = flag(j, "strip_right", true);
        } else if (type == "Replace") {
            if (!j.contains("pattern") || !j["pattern"].is_object() || !j.contains("content") || !j["content"].is_string())
                bad("Replace normalizer without pattern and content");
            const auto& p = j["pattern"];
            n.content = detail::decode_utf8(j["content"].get<std::string>());
            if (p.contains("String") && p["String"].is_string()) {
                n.kind = Normalizer::replace_string;
                n.pattern = detail::decode_utf8(p["String"].get<std::string>());
                if (n.pattern.empty()) bad("Replace normalizer with an empty pattern");
            } else if (p.contains("Regex") && p["Regex"].is_string()) {
                const std::string re = p["Regex"].get<std::string>();
                if (re != "\\s+") unsupported("the Replace normalizer's regex '" + re + "' (only \\s+ is)");
                n.kind = Normalizer::replace_whitespace_regex;
            } else {
                bad("Replace normalizer pattern is neither String nor Regex");
            }
        } else {
            unsupported("the normalizer '" + (type.empty() ? j.dump() : type) + "'" +
                        (type == "Precompiled" ? " (a SentencePiece charsmap)" : ""));
        }
        normalizers_.push_back(std::move(n));
    }

    void load_pre_tokenizer(const nlohmann::json& j) {
        if (j.is_null()) return;
        const std::string type = type_of(j);
        PreTokenizer p;
        if (type == "Sequence") {
            if (!j.contains("pretokenizers") || !j["pretokenizers"].is_array()) bad("Sequence pre-tokenizer without a list");
            for (const auto& sub : j["pretokenizers"]) load_pre_tokenizer(sub);
            return;
        } else if (type == "BertPreTokenizer") {
            p.kind = PreTokenizer::bert;
        } else if (type == "WhitespaceSplit") {
            p.kind = PreTokenizer::whitespace_split;
        } else if (type == "Metaspace") {
            p.kind = PreTokenizer::metaspace;
            if (j.contains("replacement") && j["replacement"].is_string()) {
                const auto r = detail::decode_utf8(j["replacement"].get<std::string>());
                if (r.size() != 1) bad("Metaspace replacement must be one character");
                p.replacement = r[0];
            }
            p.split = flag(j, "split", true);
            if (j.contains("prepend_scheme") && j["prepend_scheme"].is_string()) {
                const std::string s = j["prepend_scheme"].get<std::string>();
                if (s == "always") p.prepend = PreTokenizer::always;
                else if (s == "first") p.prepend = PreTokenizer::first;
                else if (s == "never") p.prepend = PreTokenizer::never;
                else bad("Metaspace prepend_scheme '" + s + "'");
            } else {  // older files: add_prefix_space
                p.prepend = flag(j, "add_prefix_space", true) ? PreTokenizer::always : PreTokenizer::never;
            }
        } else {
            unsupported("the pre-tokenizer '" + (type.empty() ? j.dump() : type) + "'");
        }
        pre_tokenizers_.push_back(p);
    }

    void add_token(const std::string& piece, TokenId id) {
        if (id >= tokens_.size()) tokens_.resize(std::size_t{id} + 1);
        tokens_[id] = piece;
        vocab_.emplace(piece, id);
    }

    void load(const nlohmann::json& j) {
        if (!j.is_object()) bad("not a JSON object");
        if (j.contains("normalizer")) load_normalizer(j["normalizer"]);
        if (j.contains("pre_tokenizer")) load_pre_tokenizer(j["pre_tokenizer"]);
        if (!j.contains("model") || !j["model"].is_object()) bad("no model");
        const auto& m = j["model"];
        model_type_ = type_of(m);
        if (model_type_.empty() && m.contains("vocab") && m["vocab"].is_array()) model_type_ = "Unigram";
        if (model_type_ == "WordPiece" || model_type_ == "WordLevel") {
            if (!m.contains("vocab") || !m["vocab"].is_object()) bad(model_type_ + " model without a vocab object");
            for (const auto& [piece, id] : m["vocab"].items()) {
                if (!id.is_number_unsigned()) bad("vocab entry '" + piece + "' has no valid id");
                add_token(piece, id.get<TokenId>());
            }
            if (m.contains("unk_token") && m["unk_token"].is_string()) {
                auto it = vocab_.find(m["unk_token"].get<std::string>());
                if (it == vocab_.end()) bad("unk_token '" + m["unk_token"].get<std::string>() + "' is not in the vocab");
                unk_ = it->second;
            }
            if (model_type_ == "WordPiece") {
                if (m.contains("continuing_subword_prefix") && m["continuing_subword_prefix"].is_string())
                    continuing_ = m["continuing_subword_prefix"].get<std::string>();
                if (m.contains("max_input_chars_per_word") && m["max_input_chars_per_word"].is_number_unsigned())
                    max_chars_ = m["max_input_chars_per_word"].get<std::size_t>();
            }
        } else if (model_type_ == "Unigram") {
            if (!m.contains("vocab") || !m["vocab"].is_array()) bad("Unigram model without a vocab list");
            if (flag(m, "byte_fallback", false)) unsupported("Unigram byte_fallback");
            TokenId id = 0;
            min_score_ = std::numeric_limits<double>::infinity();
            for (const auto& e : m["vocab"]) {
                if (!e.is_array() || e.size() != 2 || !e[0].is_string() || !e[1].is_number())
                    bad("Unigram vocab entry " + std::to_string(id) + " is not [piece, score]");
                const std::string piece = e[0].get<std::string>();
                add_token(piece, id);
                scores_.push_back(e[1].get<double>());
                min_score_ = std::min(min_score_, scores_.back());
                max_piece_bytes_ = std::max(max_piece_bytes_, piece.size());
                ++id;
            }
            if (m.contains("unk_id") && m["unk_id"].is_number_unsigned()) {
                unk_ = m["unk_id"].get<TokenId>();
                if (*unk_ >= tokens_.size()) bad("unk_id is beyond the vocab");
            }
        } else {
            unsupported("the model '" + model_type_ + "'");
        }
        if (j.contains("added_tokens") && j["added_tokens"].is_array()) {
            for (const auto& a : j["added_tokens"]) {
                if (!a.contains("content") || !a["content"].is_string() || !a.contains("id") || !a["id"].is_number_unsigned())
                    bad("an added token without content and id");
                const std::string content = a["content"].get<std::string>();
                if (content.empty()) continue;
                const auto id = a["id"].get<TokenId>();
                added_.emplace_back(content, id);
                if (id >= tokens_.size() || tokens_[id].empty()) add_token(content, id);
            }
        }
    }

    // --- normalization ------------------------------------------------------------
    static void apply(const Normalizer& n, std::u32string& s) {
        std::u32string out;
        out.reserve(s.size());
        switch (n.kind) {
            case Normalizer::bert: {
                std::u32string tmp;
                tmp.reserve(s.size());
                for (char32_t c : s) {
                    if (n.clean_text) {
                        const bool ws = c == U'\t' || c == U'\n' || c == U'\r' || detail::is_unicode_whitespace(c);
                        if (c == 0 || c == detail::replacement_char || (!ws && detail::is_other(c))) continue;
                        if (ws) c = U' ';
                    }
                    if (n.chinese && detail::is_cjk_ideograph(c)) {
                        tmp.push_back(U' ');
                        tmp.push_back(c);
                        tmp.push_back(U' ');
                    } else {
                        tmp.push_back(c);
                    }
                }
                if (n.strip_acc) {
                    for (char32_t c : tmp) detail::append_stripped(out, c);
                    tmp.swap(out);
                    out.clear();
                }
                if (n.lower) {
                    for (char32_t c : tmp) detail::append_lowercase(out, c);
                    tmp.swap(out);
                }
                s.swap(tmp);
                return;
            }
            case Normalizer::lowercase:
                for (char32_t c : s) detail::append_lowercase(out, c);
                break;
            case Normalizer::strip_accents:
                for (char32_t c : s)
                    if (!detail::is_nonspacing_mark(c)) out.push_back(c);
                break;
            case Normalizer::strip: {
                std::size_t b = 0, e = s.size();
                if (n.left)
                    while (b < e && detail::is_unicode_whitespace(s[b])) ++b;
                if (n.right)
                    while (e > b && detail::is_unicode_whitespace(s[e - 1])) --e;
                out = s.substr(b, e - b);
                break;
            }
            case Normalizer::replace_string:
                for (std::size_t i = 0; i < s.size();) {
                    if (s.compare(i, n.pattern.size(), n.pattern) == 0) {
                        out += n.content;
                        i += n.pattern.size();
                    } else {
                        out.push_back(s[i++]);
                    }
                }
                break;
            case Normalizer::replace_whitespace_regex:
                for (std::size_t i = 0; i < s.size();) {
                    if (detail::is_unicode_whitespace(s[i])) {
                        while (i < s.size() && detail::is_unicode_whitespace(s[i])) ++i;
                        out += n.content;
                    } else {
                        out.push_back(s[i++]);
                    }
                }
                break;
        }
        s.swap(out);
    }

    // --- pre-tokenization -----------------------------------------------------------
    static std::vector<std::u32string> apply(const PreTokenizer& p, const std::vector<std::u32string>& parts) {
        std::vector<std::u32string> out;
        for (std::size_t k = 0; k < parts.size(); ++k) {
            const std::u32string& s = parts[k];
            if (p.kind == PreTokenizer::metaspace) {
                std::u32string m;
                const bool prepend = p.prepend == PreTokenizer::always || (p.prepend == PreTokenizer::first && k == 0);
                if (prepend && (s.empty() || s[0] != p.replacement) && !s.empty()) m.push_back(p.replacement);
                for (char32_t c : s) m.push_back(c == U' ' ? p.replacement : c);
                if (!p.split) {
                    if (!m.empty()) out.push_back(std::move(m));
                    continue;
                }
                std::u32string cur;  // split with the replacement merged with the next piece
                for (char32_t c : m) {
                    if (c == p.replacement && !cur.empty()) {
                        out.push_back(std::move(cur));
                        cur.clear();
                    }
                    cur.push_back(c);
                }
                if (!cur.empty()) out.push_back(std::move(cur));
                continue;
            }
            std::u32string cur;
            for (char32_t c : s) {
                if (detail::is_unicode_whitespace(c)) {
                    if (!cur.empty()) out.push_back(std::move(cur));
                    cur.clear();
                } else if (p.kind == PreTokenizer::bert && detail::is_bert_punctuation(c)) {
                    if (!cur.empty()) out.push_back(std::move(cur));
                    cur.clear();
                    out.push_back(std::u32string(1, c));
                } else {
                    cur.push_back(c);
                }
            }
            if (!cur.empty()) out.push_back(std::move(cur));
        }
        return out;
    }

    // --- models --------------------------------------------------------------------
    void encode_plain(std::string_view text, std::vector<TokenId>& ids) const {
        if (text.empty()) return;
        for (const std::u32string& word : pre_tokenize(normalize(text))) {
            const std::string w = detail::encode_utf8(word);
            if (model_type_ == "WordPiece") wordpiece(word, w, ids);
            else if (model_type_ == "Unigram") unigram(w, ids);
            else word_level(w, ids);
        }
    }

    void word_level(const std::string& w, std::vector<TokenId>& ids) const {
        auto it = vocab_.find(w);
        if (it != vocab_.end()) ids.push_back(it->second);
        else if (unk_) ids.push_back(*unk_);
    }

    void wordpiece(const std::u32string& word, const std::string& w, std::vector<TokenId>& ids) const {
        if (word.size() > max_chars_) {
            if (unk_) ids.push_back(*unk_);
            return;
        }
        // Byte offsets of the character boundaries.
        std::vector<std::size_t> bounds{0};
        for (std::size_t i = 0; i < w.size();) {
            detail::next_codepoint(w, i);
            bounds.push_back(i);
        }
        std::vector<TokenId> pieces;
        std::size_t start = 0;  // index into bounds
        std::string key;
        while (start + 1 < bounds.size()) {
            std::size_t end = bounds.size() - 1;
            bool found = false;
            for (; end > start; --end) {
                key.assign(start > 0 ? continuing_ : std::string());
                key.append(w, bounds[start], bounds[end] - bounds[start]);
                auto it = vocab_.find(key);
                if (it != vocab_.end()) {
                    pieces.push_back(it->second);
                    found = true;
                    break;
                }
            }
            if (!found) {
                if (unk_) ids.push_back(*unk_);
                return;
            }
            start = end;
        }
        ids.insert(ids.end(), pieces.begin(), pieces.end());
    }

    /// Viterbi over the byte positions at character boundaries: the segmentation with
    /// the highest sum of piece scores. A character no piece covers becomes the unknown
    /// token with score min_score - 10 (SentencePiece's kUnkPenalty); consecutive
    /// unknowns fuse into one. Ties keep the first (shortest) candidate, as HF does.
    void unigram(const std::string& w, std::vector<TokenId>& ids) const {
        const std::size_t n = w.size();
        struct Node {
            double score = 0.0;
            std::size_t from = std::numeric_limits<std::size_t>::max();
            TokenId id = 0;
        };
        std::vector<Node> best(n + 1);
        const double unk_score = min_score_ - 10.0;
        std::string key;
        for (std::size_t start = 0; start < n;) {
            std::size_t next = start;
            detail::next_codepoint(w, next);
            const std::size_t char_len = next - start;
            const double base = best[start].score;
            bool single = false;
            for (std::size_t end = next; end <= n && end - start <= max_piece_bytes_;) {
                key.assign(w, start, end - start);
                auto it = vocab_.find(key);
                if (it != vocab_.end() && it->second < scores_.size()) {
                    const double cand = base + scores_[it->second];
                    Node& t = best[end];
                    if (t.from == std::numeric_limits<std::size_t>::max() || cand > t.score) t = Node{cand, start, it->second};
                    if (end - start == char_len) single = true;
                }
                if (end == n) break;
                detail::next_codepoint(w, end);
            }
            if (!single) {
                const double cand = base + unk_score;
                Node& t = best[next];
                if (t.from == std::numeric_limits<std::size_t>::max() || cand > t.score)
                    t = Node{cand, start, unk_.value_or(0)};
            }
            start = next;
        }
        std::vector<TokenId> rev;
        for (std::size_t pos = n; pos > 0;) {
            const Node& node = best[pos];
            if (node.from == std::numeric_limits<std::size_t>::max()) break;  // cannot happen: every char has a node
            const bool is_unk = unk_ && node.id == *unk_;
            if (!(is_unk && !rev.empty() && unk_ && rev.back() == *unk_)) rev.push_back(node.id);
            pos = node.from;
        }
        ids.insert(ids.end(), rev.rbegin(), rev.rend());
    }

    std::string source_;
    std::string model_type_;
    std::vector<Normalizer> normalizers_;
    std::vector<PreTokenizer> pre_tokenizers_;
    std::vector<std::string> tokens_;
    std::unordered_map<std::string, TokenId> vocab_;
    std::vector<std::pair<std::string, TokenId>> added_;
    std::optional<TokenId> unk_;
    // WordPiece
    std::string continuing_ = "##";
    std::size_t max_chars_ = 100;
    // Unigram
    std::vector<double> scores_;
    double min_score_ = 0.0;
    std::size_t max_piece_bytes_ = 0;
};

}  // namespace ragpp
