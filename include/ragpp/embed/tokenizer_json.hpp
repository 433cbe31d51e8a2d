// ragpp: HfTokenizer, the parts of a HuggingFace `tokenizer.json` that static
// embedding models (Model2Vec) and transformer encoders (BERT, XLM-RoBERTa) use,
// computing the same token ids as the `tokenizers` library.
//
// Supported:
//   normalizers     BertNormalizer (clean_text, handle_chinese_chars, strip_accents,
//                   lowercase), Lowercase, Strip, StripAccents, Replace (a String
//                   pattern, or the Regex `\s+` or ` {2,}`), Precompiled (SentencePiece's
//                   charsmap, see below), Sequence, null
//   pre-tokenizers  BertPreTokenizer, Metaspace (prepend_scheme always/first/never,
//                   split), WhitespaceSplit, Sequence, null
//   models          WordPiece (greedy longest match first), Unigram (Viterbi, as in
//                   SentencePiece: Kudo 2018, "Subword Regularization"), WordLevel
//   added tokens    matched literally in the raw text before normalization (leftmost,
//                   longest at a tie), taking the whitespace beside them when lstrip /
//                   rstrip; single_word and normalized: true are not honoured.
//   post-processors TemplateProcessing, BertProcessing, RobertaProcessing, Sequence of
//                   those with ByteLevel (which only moves offsets), null: used by
//                   encode_special() and encode_pair().
//   truncation      encode_special / encode_pair take max_length (the total with the
//                   special tokens) and cut content tokens from the right, the pair with
//                   HF's longest_first rule (tokenizers/src/utils/truncation.rs, on
//                   inputs tokenized up to max_length, as tokenizers 0.23 does). The
//                   file's own "truncation" object is NOT applied: it is only reported by
//                   truncation_max_length(); sentence-transformers and transformers pass
//                   max_length explicitly, which overrides it.
// Anything else (NFKC, other regexes, BPE, byte fallback, ...) makes the constructor
// throw UnsupportedError naming the feature and the file: never a silently wrong token
// sequence.
//
// Precompiled: the base64 `precompiled_charsmap` is a little-endian uint32 trie size
// in bytes, a darts-clone double-array trie of uint32 units, then the replacement
// strings (NUL-terminated, indexed by the trie's values) -- sentencepiece's
// normalizer.cc (DecodePrecompiledCharsMap) and darts-clone's DoubleArrayUnit.
// Normalization is HF tokenizers' (normalizers/precompiled.rs), which differs from
// SentencePiece's own: per extended grapheme cluster (UAX #29, detail/grapheme.hpp), a
// cluster under 6 UTF-8 bytes whose SHORTEST trie prefix exists is replaced whole by
// that prefix's string, any other cluster character by character. SentencePiece
// (NormalizePrefix) takes the longest match at each position instead
// (detail::CharsMap::normalize_spm); the two agree unless a multi-code-point cluster
// is involved, e.g. "Ｃ" + U+0301 is "C" for HF (the shortest key "Ｃ" wins and the
// mark is dropped) but "Ć" for SentencePiece (the two-character key), and decomposed Hangul jamo (one cluster of 6+ bytes) stay
// decomposed for HF but are composed by SentencePiece. Sizes are validated when
// loading (FormatError naming the file); a corrupt trie whose units point outside the
// array is a FormatError when met (at load for the ASCII entries, looked up then).
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
#include <memory>
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
#include <ragpp/detail/file.hpp>
#include <ragpp/detail/grapheme.hpp>
#include <ragpp/detail/json.hpp>
#include <ragpp/embed/detail/tokenizer_json.hpp>

namespace ragpp {

class HfTokenizer {
public:
    using TokenId = std::uint32_t;

    /// Reads `path`. Throws IoError, ParseError (bad JSON), FormatError (missing or
    /// ill-typed fields) or UnsupportedError, each naming the file.
    static HfTokenizer from_file(const std::filesystem::path& path) {
        return from_string(detail::read_file(path), path.string());
    }
    static HfTokenizer from_string(std::string_view json, const std::string& source = "<tokenizer.json>") {
        const nlohmann::json j = detail::parse_json(json, source);
        HfTokenizer t;
        t.source_ = source;
        try {
            t.load(j, json.size());
        } catch (const nlohmann::json::exception& e) {  // a field of an unexpected type nothing checked
            t.bad(e.what());
        }
        return t;
    }

    /// Token ids of `text`, without special tokens.
    [[nodiscard]] std::vector<TokenId> encode(std::string_view text) const { return encode(text, 0); }

    /// Token ids of `text`, stopping after the first word (a pre-token the model
    /// tokenized; added tokens count but are not a stopping point) at which there are
    /// `limit` ids or more (0: no limit). This is what HF tokenizers does when
    /// truncation to max_length = limit is on (since PR #1990, 2026: an early exit in
    /// the tokenization loop, direction right); it matters for pairs, where the longer
    /// input is the one that reached the larger count.
    [[nodiscard]] std::vector<TokenId> encode(std::string_view text, std::size_t limit) const {
        const std::size_t stop = limit == 0 ? std::numeric_limits<std::size_t>::max() : limit;
        std::vector<TokenId> ids;
        // Added tokens split the raw text; the pieces between them go through the pipeline.
        std::size_t pos = 0;
        while (pos < text.size()) {
            std::size_t best = text.size(), best_len = 0;
            const AddedToken* found = nullptr;
            for (const auto& a : added_) {
                const std::size_t at = text.find(a.content, pos);
                if (at < best || (at == best && at != text.size() && a.content.size() > best_len)) {
                    best = at;
                    best_len = a.content.size();
                    found = &a;
                }
            }
            if (!found) {
                encode_plain(text.substr(pos), ids, stop);
                break;
            }
            // lstrip / rstrip: the token also takes the whitespace beside it (HF's
            // added_vocabulary.rs), so no stray "▁" piece is left before <mask>.
            std::size_t end_before = best;
            if (found->lstrip) end_before = pos + trailing_space_start(text.substr(pos, best - pos));
            if (encode_plain(text.substr(pos, end_before - pos), ids, stop)) break;
            ids.push_back(found->id);  // counted, but the early exit is only checked after words
            pos = best + best_len;
            if (found->rstrip) pos += leading_space_length(text.substr(pos));
        }
        return ids;
    }

    /// Token ids and token type ids (segment ids) of an input with its special tokens.
    struct Encoding {
        std::vector<TokenId> ids;
        std::vector<std::uint32_t> type_ids;
    };

    /// `text` with the post-processor's special tokens (e.g. [CLS] text [SEP]). With
    /// max_length > 0, content tokens are cut from the end so that the total, special
    /// tokens included, is at most max_length (HF: truncation=True, max_length,
    /// direction right, stride 0). Throws InvalidArgument when max_length is smaller
    /// than the special tokens alone.
    [[nodiscard]] Encoding encode_special(std::string_view text, std::size_t max_length = 0) const {
        std::vector<TokenId> a = encode(text, max_length);
        if (max_length > 0) {
            const std::size_t budget = content_budget(max_length, false);
            if (a.size() > budget) a.resize(budget);
        }
        return post_process(a, nullptr);
    }

    /// The pair (a, b) with special tokens (e.g. [CLS] a [SEP] b [SEP]), as a
    /// cross-encoder reads it. With max_length > 0 the content is truncated as HF
    /// tokenizers 0.23 does with longest_first, stride 0, direction right: each input
    /// is tokenized until the pre-token at which it has max_length ids or more
    /// (encode(text, limit); its length can exceed max_length by the rest of that
    /// word), then utils/truncation.rs's rule with m = max_length minus the special
    /// tokens: with n1 <= n2 those lengths, the shorter keeps n1 and the longer
    /// max(n1, m - n1) when that fits, otherwise they get m / 2 and m / 2 + m % 2 (the
    /// longer the larger half; at equal lengths b). Checked against the tokenizers
    /// 0.23.2 binary on 3,000 random pairs for a WordPiece and a Unigram tokenizer.
    /// (Before PR #1990 the full lengths were compared: the side that gets the odd
    /// token can differ when both inputs exceed max_length.)
    [[nodiscard]] Encoding encode_pair(std::string_view a, std::string_view b, std::size_t max_length = 0) const {
        std::vector<TokenId> x = encode(a, max_length), y = encode(b, max_length);
        if (max_length > 0) {
            const std::size_t m = content_budget(max_length, true);
            if (x.size() + y.size() > m) {
                std::size_t n1 = x.size(), n2 = y.size();
                const bool swap = n1 > n2;
                if (swap) std::swap(n1, n2);
                n2 = n1 > m ? n1 : std::max(n1, m - n1);
                if (n1 + n2 > m) {
                    n1 = m / 2;
                    n2 = n1 + m % 2;
                }
                if (swap) std::swap(n1, n2);
                if (x.size() > n1) x.resize(n1);
                if (y.size() > n2) y.resize(n2);
            }
        }
        return post_process(x, &y);
    }

    /// How many special tokens the post-processor adds to one input or to a pair.
    [[nodiscard]] std::size_t num_special_tokens(bool pair) const noexcept {
        std::size_t n = 0;
        for (const auto& piece : pair ? pair_template_ : single_template_) n += piece.ids.size();
        return n;
    }

    /// The padding token: the "padding" object's pad_id, else "[PAD]" or "<pad>" when
    /// in the vocabulary.
    [[nodiscard]] std::optional<TokenId> pad_id() const {
        if (pad_) return pad_;
        if (auto id = token_to_id("[PAD]")) return id;
        return token_to_id("<pad>");
    }

    /// The max_length of the file's own "truncation" object, if any. Not applied by
    /// encode_special / encode_pair (callers pass max_length; transformers and
    /// sentence-transformers do the same and override it).
    [[nodiscard]] std::optional<std::size_t> truncation_max_length() const noexcept { return truncation_max_; }

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
        enum Kind {
            bert,
            lowercase,
            strip,
            strip_accents,
            replace_string,
            replace_whitespace_regex,
            replace_spaces_regex,
            precompiled
        } kind = bert;
        bool clean_text = true, chinese = true, strip_acc = true, lower = true;  // bert
        bool left = true, right = true;                                          // strip
        std::u32string pattern, content;                                          // replace
        std::shared_ptr<const detail::CharsMap> charsmap;                          // precompiled
    };
    struct PreTokenizer {
        enum Kind { bert, metaspace, whitespace_split } kind = bert;
        char32_t replacement = 0x2581;
        enum Prepend { always, first, never } prepend = always;
        bool split = true;
    };

    /// One element of a post-processing template: a special token (its ids) or the
    /// content of input A (seq 0) or B (seq 1), each with its type id.
    struct TemplatePiece {
        std::vector<TokenId> ids;  // empty for a sequence
        int seq = -1;              // -1: special token
        std::uint32_t type_id = 0;
    };

    struct AddedToken {
        std::string content;
        TokenId id = 0;
        bool lstrip = false, rstrip = false;
    };

    HfTokenizer() = default;

    /// The byte offset where the trailing White_Space of `s` starts.
    static std::size_t trailing_space_start(std::string_view s) {
        std::size_t keep = 0;
        for (std::size_t i = 0; i < s.size();) {
            const char32_t c = detail::next_codepoint(s, i);
            if (!detail::is_unicode_whitespace(c)) keep = i;
        }
        return keep;
    }
    /// The length in bytes of the leading White_Space of `s`.
    static std::size_t leading_space_length(std::string_view s) {
        std::size_t i = 0;
        while (i < s.size()) {
            std::size_t next = i;
            if (!detail::is_unicode_whitespace(detail::next_codepoint(s, next))) break;
            i = next;
        }
        return i;
    }

    std::size_t content_budget(std::size_t max_length, bool pair) const {
        const std::size_t specials = num_special_tokens(pair);
        if (max_length < specials)
            throw InvalidArgument("'" + source_ + "': max_length " + std::to_string(max_length) + " is smaller than the " +
                                  std::to_string(specials) + " special tokens of the post_processor");
        return max_length - specials;
    }

    Encoding post_process(const std::vector<TokenId>& a, const std::vector<TokenId>* b) const {
        Encoding e;
        if (!has_post_processor_) {  // HF: the inputs concatenated, type ids 0 and 1
            e.ids = a;
            e.type_ids.assign(a.size(), 0);
            if (b) {
                e.ids.insert(e.ids.end(), b->begin(), b->end());
                e.type_ids.resize(e.ids.size(), 1);
            }
            return e;
        }
        for (const auto& piece : b ? pair_template_ : single_template_) {
            const std::vector<TokenId>& src = piece.seq < 0 ? piece.ids : piece.seq == 0 ? a : *b;
            e.ids.insert(e.ids.end(), src.begin(), src.end());
            e.type_ids.resize(e.ids.size(), piece.type_id);
        }
        return e;
    }

    TokenId special_id(const nlohmann::json& j, const std::string& what) const {
        // BertProcessing / RobertaProcessing: "cls": ["[CLS]", 101]
        if (!j.is_array() || j.size() != 2 || !j[0].is_string() || !j[1].is_number_unsigned())
            bad("post_processor " + what + " is not [token, id]");
        const auto id = j[1].get<std::uint64_t>();
        if (id >= tokens_.size()) bad("post_processor " + what + " id " + std::to_string(id) + " is beyond the vocab");
        return static_cast<TokenId>(id);
    }

    std::vector<TemplatePiece> load_template(const nlohmann::json& j, const nlohmann::json& specials,
                                             const std::string& name, bool pair) const {
        if (!j.is_array()) bad("post_processor TemplateProcessing '" + name + "' is not a list");
        std::vector<TemplatePiece> out;
        for (const auto& item : j) {
            TemplatePiece piece;
            const bool special = item.is_object() && item.contains("SpecialToken");
            const bool sequence = item.is_object() && item.contains("Sequence");
            if (!special && !sequence) bad("post_processor TemplateProcessing '" + name + "' has an item " + item.dump());
            const auto& body = item[special ? "SpecialToken" : "Sequence"];
            if (!body.is_object() || !body.contains("id") || !body["id"].is_string())
                bad("post_processor TemplateProcessing '" + name + "' has an item without an id");
            const std::string id = body["id"].get<std::string>();
            if (body.contains("type_id")) {
                if (!body["type_id"].is_number_unsigned() || body["type_id"].get<std::uint64_t>() > 0xFFFF)
                    bad("post_processor TemplateProcessing '" + name + "' item '" + id + "' has a bad type_id");
                piece.type_id = body["type_id"].get<std::uint32_t>();
            }
            if (sequence) {
                if (id == "A") piece.seq = 0;
                else if (id == "B" && pair) piece.seq = 1;
                else bad("post_processor TemplateProcessing '" + name + "' names the sequence '" + id + "'");
            } else {
                if (!specials.is_object() || !specials.contains(id))
                    bad("post_processor TemplateProcessing '" + name + "' references the special token '" + id +
                        "', which is not in special_tokens");
                const auto& sp = specials[id];
                if (!sp.is_object() || !sp.contains("ids") || !sp["ids"].is_array() || sp["ids"].empty())
                    bad("post_processor special_tokens '" + id + "' has no ids");
                for (const auto& v : sp["ids"]) {
                    if (!v.is_number_unsigned() || v.get<std::uint64_t>() >= tokens_.size())
                        bad("post_processor special_tokens '" + id + "' has an id outside the vocab");
                    piece.ids.push_back(v.get<TokenId>());
                }
            }
            out.push_back(std::move(piece));
        }
        return out;
    }

    void load_post_processor(const nlohmann::json& j) {
        if (j.is_null()) return;
        const std::string type = type_of(j);
        if (type == "Sequence") {
            if (!j.contains("processors") || !j["processors"].is_array()) bad("Sequence post_processor without a list");
            for (const auto& sub : j["processors"]) {
                if (type_of(sub) == "ByteLevel") continue;  // moves offsets only
                if (has_post_processor_) unsupported("a Sequence post_processor with two processors that add tokens");
                load_post_processor(sub);
            }
            return;
        }
        if (type == "TemplateProcessing") {
            const nlohmann::json none;
            const auto& specials = j.contains("special_tokens") ? j["special_tokens"] : none;
            if (!j.contains("single") || !j.contains("pair")) bad("post_processor TemplateProcessing without single and pair");
            single_template_ = load_template(j["single"], specials, "single", false);
            pair_template_ = load_template(j["pair"], specials, "pair", true);
        } else if (type == "BertProcessing" || type == "RobertaProcessing") {
            if (!j.contains("cls") || !j.contains("sep")) bad("post_processor " + type + " without cls and sep");
            const TokenId cls = special_id(j["cls"], "cls"), sep = special_id(j["sep"], "sep");
            single_template_ = {{{cls}, -1, 0}, {{}, 0, 0}, {{sep}, -1, 0}};
            if (type == "BertProcessing")  // bert.rs: B and its [SEP] have type id 1
                pair_template_ = {{{cls}, -1, 0}, {{}, 0, 0}, {{sep}, -1, 0}, {{}, 1, 1}, {{sep}, -1, 1}};
            else  // roberta.rs: <s> A </s></s> B </s>, every type id 0
                pair_template_ = {{{cls}, -1, 0}, {{}, 0, 0}, {{sep}, -1, 0}, {{sep}, -1, 0}, {{}, 1, 0}, {{sep}, -1, 0}};
        } else {
            unsupported("the post_processor '" + (type.empty() ? j.dump() : type) + "'");
        }
        has_post_processor_ = true;
    }

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
                if (re == "\\s+") n.kind = Normalizer::replace_whitespace_regex;
                else if (re == " {2,}") n.kind = Normalizer::replace_spaces_regex;  // XLM-R's converter
                else unsupported("the Replace normalizer's regex '" + re + "' (only \\s+ and ' {2,}' are)");
            } else {
                bad("Replace normalizer pattern is neither String nor Regex");
            }
        } else if (type == "Precompiled") {
            if (!j.contains("precompiled_charsmap") || !j["precompiled_charsmap"].is_string())
                bad("normalizer Precompiled without a precompiled_charsmap string");
            const auto blob = detail::decode_base64(j["precompiled_charsmap"].get<std::string>());
            if (!blob) bad("normalizer Precompiled: precompiled_charsmap is not valid base64");
            n.kind = Normalizer::precompiled;
            n.charsmap = std::make_shared<const detail::CharsMap>(*blob, source_);
        } else {
            unsupported("the normalizer '" + (type.empty() ? j.dump() : type) + "'");
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

    /// The id of a vocabulary entry or added token, checked against `max_ids` (the most
    /// entries the file could define): ids index a table, so an id near 2^32 in a small
    /// file must fail here rather than allocate 4 billion slots.
    TokenId checked_id(const nlohmann::json& id, std::size_t max_ids, const std::string& what) const {
        if (!id.is_number_unsigned()) bad(what + " has no valid id");
        const auto v = id.get<std::uint64_t>();
        if (v >= max_ids)
            bad(what + " has id " + std::to_string(v) + ", beyond the " + std::to_string(max_ids) +
                " entries the file can hold");
        return static_cast<TokenId>(v);
    }

    void add_token(const std::string& piece, TokenId id) {
        if (id >= tokens_.size()) tokens_.resize(std::size_t{id} + 1);
        tokens_[id] = piece;
        vocab_.emplace(piece, id);
    }

    void load(const nlohmann::json& j, std::size_t file_bytes) {
        if (!j.is_object()) bad("not a JSON object");
        // An upper bound of the ids a file of this size can define densely (an entry
        // takes at least 4 bytes: "":0,); larger ids are refused before any allocation.
        const std::size_t max_ids = file_bytes / 4 + 1;
        if (j.contains("normalizer")) load_normalizer(j["normalizer"]);
        if (j.contains("pre_tokenizer")) load_pre_tokenizer(j["pre_tokenizer"]);
        if (!j.contains("model") || !j["model"].is_object()) bad("no model");
        const auto& m = j["model"];
        model_type_ = type_of(m);
        if (model_type_.empty() && m.contains("vocab") && m["vocab"].is_array()) model_type_ = "Unigram";
        if (model_type_ == "WordPiece" || model_type_ == "WordLevel") {
            if (!m.contains("vocab") || !m["vocab"].is_object()) bad(model_type_ + " model without a vocab object");
            for (const auto& [piece, id] : m["vocab"].items()) {
                add_token(piece, checked_id(id, max_ids, "vocab entry '" + piece + "'"));
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
                const auto id = checked_id(a["id"], max_ids, "added token '" + content + "'");
                added_.push_back({content, id, flag(a, "lstrip", false), flag(a, "rstrip", false)});
                if (id >= tokens_.size() || tokens_[id].empty()) add_token(content, id);
            }
        }
        if (j.contains("post_processor")) load_post_processor(j["post_processor"]);
        if (j.contains("padding") && j["padding"].is_object() && j["padding"].contains("pad_id")) {
            const auto& id = j["padding"]["pad_id"];
            if (!id.is_number_unsigned() || id.get<std::uint64_t>() >= tokens_.size()) bad("padding pad_id is not a vocab id");
            pad_ = id.get<TokenId>();
        }
        if (j.contains("truncation") && j["truncation"].is_object() && j["truncation"].contains("max_length") &&
            j["truncation"]["max_length"].is_number_unsigned())
            truncation_max_ = j["truncation"]["max_length"].get<std::size_t>();
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
                        // bert.rs do_clean_text: controls (C* but \t \n \r) are removed
                        // first, even the ones that are White_Space (U+000B, U+000C,
                        // U+0085); then whitespace becomes ' '.
                        const bool tnr = c == U'\t' || c == U'\n' || c == U'\r';
                        if (c == 0 || c == detail::replacement_char || (!tnr && detail::is_other(c))) continue;
                        if (tnr || detail::is_unicode_whitespace(c)) c = U' ';
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
            case Normalizer::replace_spaces_regex:  // " {2,}": runs of two or more U+0020
                for (std::size_t i = 0; i < s.size();) {
                    if (s[i] == U' ' && i + 1 < s.size() && s[i + 1] == U' ') {
                        while (i < s.size() && s[i] == U' ') ++i;
                        out += n.content;
                    } else {
                        out.push_back(s[i++]);
                    }
                }
                break;
            case Normalizer::precompiled:
                out = n.charsmap->normalize_hf(s);
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
                // As HF's metaspace.rs: spaces replaced first, then the replacement
                // prepended unless the text already starts with it (" a" -> "▁a").
                std::u32string m;
                const bool prepend = p.prepend == PreTokenizer::always || (p.prepend == PreTokenizer::first && k == 0);
                if (prepend && !s.empty() && s[0] != p.replacement && s[0] != U' ') m.push_back(p.replacement);
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
    /// Appends the ids of `text` (no added tokens in it); stops after the pre-token at
    /// which ids.size() reaches `stop`, and then returns true.
    bool encode_plain(std::string_view text, std::vector<TokenId>& ids,
                      std::size_t stop = std::numeric_limits<std::size_t>::max()) const {
        if (text.empty()) return false;
        for (const std::u32string& word : pre_tokenize(normalize(text))) {
            const std::string w = detail::encode_utf8(word);
            if (model_type_ == "WordPiece") wordpiece(word, w, ids);
            else if (model_type_ == "Unigram") unigram(w, ids);
            else word_level(w, ids);
            if (ids.size() >= stop) return true;
        }
        return false;
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
    std::vector<AddedToken> added_;
    std::optional<TokenId> unk_;
    // Post-processing
    bool has_post_processor_ = false;
    std::vector<TemplatePiece> single_template_, pair_template_;
    std::optional<TokenId> pad_;
    std::optional<std::size_t> truncation_max_;
    // WordPiece
    std::string continuing_ = "##";
    std::size_t max_chars_ = 100;
    // Unigram
    std::vector<double> scores_;
    double min_score_ = 0.0;
    std::size_t max_piece_bytes_ = 0;
};

}  // namespace ragpp
