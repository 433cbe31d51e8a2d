// tokenizer.json features of transformer encoders: the Precompiled (SentencePiece
// charsmap) normalizer, Replace " {2,}", post-processors, pairs and truncation.
// (Model2Vec's use of HfTokenizer is tested in unit-model2vec.cpp.)
#include <ragpp/embed/tokenizer_json.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support.hpp"

using ragpp::HfTokenizer;
using Ids = std::vector<HfTokenizer::TokenId>;
using TypeIds = std::vector<std::uint32_t>;
namespace fs = std::filesystem;

namespace {

const char* const bert_real = "fixtures/model2vec/test-model-sentence-transformers/tokenizer.json";
const char* const spm_model = "fixtures/sentencepiece/nl-fr-dekamer-unigram.model";

/// The ids of space-separated token strings (each must be in the vocab).
Ids ids_of(const HfTokenizer& t, const std::string& tokens) {
    Ids out;
    std::istringstream in(tokens);
    std::string tok;
    while (in >> tok) {
        const auto id = t.token_to_id(tok);
        INFO("token " << tok);
        REQUIRE(id.has_value());
        out.push_back(*id);
    }
    return out;
}

std::string base64(const std::string& bytes) {
    static const char* abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    std::size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        const auto n = (std::uint32_t(std::uint8_t(bytes[i])) << 16) | (std::uint32_t(std::uint8_t(bytes[i + 1])) << 8) |
                       std::uint32_t(std::uint8_t(bytes[i + 2]));
        for (int k = 3; k >= 0; --k) out.push_back(abc[(n >> (6 * k)) & 63]);
    }
    if (i + 1 == bytes.size()) {
        const auto n = std::uint32_t(std::uint8_t(bytes[i])) << 16;
        out += {abc[(n >> 18) & 63], abc[(n >> 12) & 63], '=', '='};
    } else if (i + 2 == bytes.size()) {
        const auto n = (std::uint32_t(std::uint8_t(bytes[i])) << 16) | (std::uint32_t(std::uint8_t(bytes[i + 1])) << 8);
        out += {abc[(n >> 18) & 63], abc[(n >> 12) & 63], abc[(n >> 6) & 63], '='};
    }
    return out;
}

void put_u32(std::string& s, std::uint32_t v) {
    for (int k = 0; k < 4; ++k) s.push_back(static_cast<char>((v >> (8 * k)) & 0xFF));
}

/// A charsmap blob built by hand from darts-clone's unit layout (not from any
/// builder): keys "a" -> "x" and "ab" -> "yz". Root offset 0; 'a' (0x61) at unit 97
/// with a leaf and offset 128 (base 225, its value unit at 225); 'b' (0x62) at
/// 225 ^ 0x62 = 131 with a leaf and offset 256 written with the bit-9 "shifted by 8"
/// form, so its value unit is at 131 ^ 256 = 387. Strings "x\0yz\0": values 0 and 2.
/// Two blocks of 256 units, as darts-clone allocates them (so base ^ byte stays inside).
std::string hand_charsmap(std::uint32_t claimed_trie_bytes = 0) {
    std::vector<std::uint32_t> units(512, 0);
    units[97] = 0x61u | (1u << 8) | (128u << 10);
    units[225] = 0x80000000u | 0u;
    units[131] = 0x62u | (1u << 8) | (1u << 9) | (1u << 10);
    units[387] = 0x80000000u | 2u;
    std::string blob;
    put_u32(blob, claimed_trie_bytes ? claimed_trie_bytes : static_cast<std::uint32_t>(units.size() * 4));
    for (auto u : units) put_u32(blob, u);
    blob += std::string("x\0yz\0", 5);
    return blob;
}

std::string with_normalizer(const std::string& normalizer) {
    return R"({"normalizer": )" + normalizer +
           R"(, "pre_tokenizer": null, "model": {"type": "WordLevel", "unk_token": "<unk>", "vocab": {"<unk>": 0}}})";
}
std::string precompiled(const std::string& b64) {
    return with_normalizer(R"({"type": "Precompiled", "precompiled_charsmap": ")" + b64 + R"("})");
}

// --- a minimal protobuf reader for SentencePiece's ModelProto -------------------------
// ModelProto: pieces = 1 (SentencePiece: piece = 1, score = 2), normalizer_spec = 3
// (NormalizerSpec: name = 1, precompiled_charsmap = 2). sentencepiece_model.proto.
struct Field {
    std::uint32_t number = 0, wire = 0;
    std::uint64_t varint = 0;
    std::string bytes;
};
std::vector<Field> proto_fields(const std::string& b) {
    std::vector<Field> out;
    std::size_t i = 0;
    auto varint = [&]() {
        std::uint64_t r = 0;
        for (int shift = 0; i < b.size(); shift += 7) {
            const auto x = static_cast<std::uint8_t>(b[i++]);
            r |= std::uint64_t(x & 0x7F) << shift;
            if (x < 0x80) break;
        }
        return r;
    };
    while (i < b.size()) {
        Field f;
        const auto key = varint();
        f.number = static_cast<std::uint32_t>(key >> 3);
        f.wire = static_cast<std::uint32_t>(key & 7);
        if (f.wire == 0) f.varint = varint();
        else if (f.wire == 1) f.bytes = b.substr(i, 8), i += 8;
        else if (f.wire == 5) f.bytes = b.substr(i, 4), i += 4;
        else if (f.wire == 2) {
            const auto n = static_cast<std::size_t>(varint());
            f.bytes = b.substr(i, n);
            i += n;
        } else {
            FAIL("unexpected protobuf wire type");
        }
        out.push_back(std::move(f));
    }
    return out;
}

/// The spm model as an XLM-R tokenizer.json, converted as transformers'
/// XLMRobertaConverter does (fixtures.md): <s> <pad> </s> <unk>, the pieces from spm
/// id 3 on, <mask>; Precompiled + Replace " {2,}"; Metaspace; RobertaProcessing.
nlohmann::json xlmr_from_spm(const fs::path& model, std::string* charsmap_out = nullptr) {
    const std::string blob = ragpp_test::read_file(model);
    nlohmann::json vocab = nlohmann::json::array({{"<s>", 0.0}, {"<pad>", 0.0}, {"</s>", 0.0}, {"<unk>", 0.0}});
    std::string charsmap;
    std::size_t piece_index = 0;
    for (const auto& f : proto_fields(blob)) {
        if (f.number == 1 && f.wire == 2) {
            std::string piece;
            float score = 0;
            for (const auto& g : proto_fields(f.bytes)) {
                if (g.number == 1) piece = g.bytes;
                if (g.number == 2 && g.bytes.size() == 4) std::memcpy(&score, g.bytes.data(), 4);
            }
            if (piece_index++ >= 3) vocab.push_back({piece, static_cast<double>(score)});
        } else if (f.number == 3 && f.wire == 2) {
            for (const auto& g : proto_fields(f.bytes))
                if (g.number == 2) charsmap = g.bytes;
        }
    }
    REQUIRE(!charsmap.empty());
    vocab.push_back({"<mask>", 0.0});
    if (charsmap_out) *charsmap_out = charsmap;
    nlohmann::json added = nlohmann::json::array();
    for (auto [id, content] : std::vector<std::pair<std::size_t, std::string>>{
             {0, "<s>"}, {1, "<pad>"}, {2, "</s>"}, {3, "<unk>"}, {vocab.size() - 1, "<mask>"}})
        added.push_back({{"id", id}, {"content", content}, {"special", true}});
    return {{"added_tokens", added},
            {"normalizer",
             {{"type", "Sequence"},
              {"normalizers",
               {{{"type", "Precompiled"}, {"precompiled_charsmap", base64(charsmap)}},
                {{"type", "Replace"}, {"pattern", {{"Regex", " {2,}"}}}, {"content", " "}}}}}},
            {"pre_tokenizer", {{"type", "Metaspace"}, {"replacement", "\u2581"}, {"prepend_scheme", "always"}, {"split", true}}},
            {"post_processor", {{"type", "RobertaProcessing"}, {"sep", {"</s>", 2}}, {"cls", {"<s>", 0}}}},
            {"model", {{"type", "Unigram"}, {"unk_id", 3}, {"vocab", vocab}}}};
}

/// A tiny WordPiece tokenizer: word i of "w0 .. w9" has id i + 5, after the specials;
/// "##x" is 15 (so "w1xx" is three tokens).
std::string tiny_bert(const std::string& post_processor, const std::string& extra = "") {
    std::string vocab = R"("[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4, "##x": 15)";
    for (int i = 0; i < 10; ++i) vocab += ", \"w" + std::to_string(i) + "\": " + std::to_string(i + 5);
    return R"({"normalizer": null, "pre_tokenizer": {"type": "WhitespaceSplit"}, "post_processor": )" + post_processor +
           extra + R"(, "model": {"type": "WordPiece", "unk_token": "[UNK]", "vocab": {)" + vocab + "}}}";
}
const char* const bert_template = R"({"type": "TemplateProcessing",
    "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
               {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
    "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
             {"SpecialToken": {"id": "[SEP]", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}},
             {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
    "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]},
                       "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}}})";

/// n words w0 w1 ... (ids 5, 6, ...).
std::string words(int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += (i ? " w" : "w") + std::to_string(i % 10);
    return s;
}

}  // namespace

// --- Precompiled: the trie itself --------------------------------------------------

TEST_CASE("Precompiled: a hand-built darts-clone trie is read with the right unit layout", "[tokenizer-json]") {
    // SentencePiece's rule: the longest prefix at each position ("ab" -> "yz", "a" -> "x"),
    // other characters copied whole.
    const ragpp::detail::CharsMap map(hand_charsmap(), "hand");
    CHECK(map.normalize_spm("abac") == "yzxc");
    CHECK(map.normalize_spm("b") == "b");
    CHECK(map.normalize_spm("\xC3\xA9" "a") == "\xC3\xA9x");  // é is not in the trie: copied as one character
    CHECK(map.normalize_spm("") == "");
    CHECK(map.normalize_spm(std::string("a\0b", 3)) == std::string("x\0b", 3));  // a NUL ends a key
    CHECK(map.prefix("abc", 0) == std::pair<std::size_t, std::string_view>{2, "yz"});
    CHECK(map.prefix("abc", 0, true) == std::pair<std::size_t, std::string_view>{1, "x"});
    CHECK(map.prefix("ba", 0).first == 0);
    // HF's rule (what HfTokenizer does): per grapheme cluster, so "ab" (two clusters)
    // never matches as one key; a short cluster whose shortest prefix is a key is
    // replaced whole (the accent of "a" U+0301 is dropped); a cluster of 6 bytes or
    // more goes character by character.
    const auto t = HfTokenizer::from_string(precompiled(base64(hand_charsmap())), "hand.json");
    CHECK(t.normalize("abac") == U"xbxc");
    CHECK(t.normalize("a\xCC\x81" "b") == U"xb");
    CHECK(t.normalize("a\xCC\x81\xCC\x81\xCC\x81") == U"x\u0301\u0301\u0301");
    CHECK(t.normalize("\xCC\x81" "a") == U"\u0301x");
    CHECK(t.normalize("\xC3\xA9" "a") == U"\u00e9x");
    CHECK(t.normalize("") == U"");
    CHECK(t.normalize(std::string("a\0b", 3)) == std::u32string(U"x\0b", 3));
}

TEST_CASE("grapheme clusters match every case of GraphemeBreakTest.txt (UAX #29, Unicode 15.0)", "[tokenizer-json]") {
    const char* path = "/usr/share/unicode/auxiliary/GraphemeBreakTest.txt";  // Debian's unicode-data
    std::ifstream in(path);
    if (!in) {
        std::fprintf(stderr, "SKIPPED: %s is missing (install unicode-data)\n", path);
        std::_Exit(4);
    }
    std::string line;
    std::size_t cases = 0, failures = 0;
    while (std::getline(in, line)) {
        line = line.substr(0, line.find('#'));
        if (line.find_first_not_of(" \t") == std::string::npos) continue;
        std::istringstream fields(line);
        std::string tok;
        std::u32string text;
        std::vector<std::size_t> expected;
        while (fields >> tok) {
            if (tok == "\xC3\xB7") expected.push_back(text.size());  // ÷ marks a boundary
            else if (tok != "\xC3\x97") text.push_back(static_cast<char32_t>(std::stoul(tok, nullptr, 16)));
        }
        std::vector<std::size_t> got{0};
        ragpp::detail::for_each_grapheme(text, [&](std::size_t, std::size_t e) { got.push_back(e); });
        ++cases;
        if (got != expected) {
            ++failures;
            UNSCOPED_INFO("mismatch: " << line);
        }
    }
    CHECK(cases > 500);
    CHECK(failures == 0);
}

TEST_CASE("Precompiled: bad blobs are FormatErrors naming the file and the field", "[tokenizer-json]") {
    using Catch::Contains;
    const auto fails = [](const std::string& json) {
        CHECK_THROWS_AS(HfTokenizer::from_string(json, "bad.json"), ragpp::FormatError);
        CHECK_THROWS_WITH(HfTokenizer::from_string(json, "bad.json"), Contains("bad.json") && Contains("Precompiled"));
    };
    // Not base64: a bad character, a bad length, data after the padding, non-canonical padding bits.
    fails(precompiled("AAA*"));
    fails(precompiled("AAAAA"));
    fails(precompiled("AA=A"));
    fails(precompiled("AB=="));
    fails(with_normalizer(R"({"type": "Precompiled"})"));
    // Too short for the size field; an empty or unaligned trie.
    fails(precompiled(""));
    fails(precompiled("AAAA"));  // 3 bytes
    std::string zero;
    put_u32(zero, 0);
    fails(precompiled(base64(zero + "x")));
    std::string odd;
    put_u32(odd, 6);
    fails(precompiled(base64(odd + std::string(8, '\0'))));
    // A trie size larger than the blob (a lying size), and a truncated trie.
    fails(precompiled(base64(hand_charsmap(4 * 1000))));
    fails(precompiled(base64(hand_charsmap(4 * 512 + 8))));  // 3 bytes beyond the blob
    std::string truncated = hand_charsmap();
    truncated.resize(4 + 100 * 4);
    fails(precompiled(base64(truncated)));
    // Replacement strings that are not UTF-8.
    std::string bad_utf8 = hand_charsmap();
    bad_utf8.back() = '\xFF';
    fails(precompiled(base64(bad_utf8)));
    // A trie unit pointing outside the array (met when the ASCII entries are looked up
    // at load), and a value beyond the strings.
    std::string wild = hand_charsmap();
    const std::uint32_t far = 0x61u | (1u << 8) | (100000u << 10);  // unit 97: offset 100000
    std::memcpy(&wild[4 + 97 * 4], &far, 4);                        // (little-endian host)
    fails(precompiled(base64(wild)));
    std::string far_value = hand_charsmap();
    const std::uint32_t v = 0x80000000u | 77u;
    std::memcpy(&far_value[4 + 225 * 4], &v, 4);
    fails(precompiled(base64(far_value)));
    // Met only while normalizing: the 'a' node has no leaf (so the ASCII look-ups at
    // load stop there) and a base of 97 ^ 1024 = 1121, beyond the 512 units: the next
    // byte of "a" U+0301 (one cluster) leads outside.
    std::string late = hand_charsmap();
    const std::uint32_t a_far = 0x61u | (1024u << 10);
    std::memcpy(&late[4 + 97 * 4], &a_far, 4);
    const auto t = HfTokenizer::from_string(precompiled(base64(late)), "late.json");
    CHECK(t.normalize("ab") == U"ab");
    CHECK_THROWS_AS(t.normalize("a\xCC\x81"), ragpp::FormatError);
    CHECK_THROWS_WITH(t.encode("a\xCC\x81"), Contains("late.json") && Contains("precompiled_charsmap"));
}

TEST_CASE("Precompiled: the nmt_nfkc charsmap of a real SentencePiece model", "[tokenizer-json]") {
    std::string charsmap;
    (void)xlmr_from_spm(ragpp_test::require_shared(spm_model), &charsmap);
    const auto t = HfTokenizer::from_string(precompiled(base64(charsmap)), "nfkc.json");
    // NFKC: full-width letters, ligatures, enclosed numbers, compatibility characters.
    CHECK(t.normalize("\xEF\xBC\xA1\xEF\xBC\xA2\xEF\xBC\xA3") == U"ABC");  // ＡＢＣ
    CHECK(t.normalize("\xEF\xAC\x81") == U"fi");                           // ﬁ
    CHECK(t.normalize("\xE2\x91\xA0") == U"1");                            // ①
    CHECK(t.normalize("x\xC2\xB2") == U"x2");                              // x²
    CHECK(t.normalize("\xE3\x8E\x8F") == U"kg");                           // ㎏
    // Decomposed accents are composed (the key is the two-code-point sequence).
    CHECK(t.normalize("cafe\xCC\x81") == U"caf\u00e9");
    CHECK(t.normalize("caf\xC3\xA9") == U"caf\u00e9");
    // Unchanged text stays unchanged.
    CHECK(t.normalize("De Kamer, le ministre.") == U"De Kamer, le ministre.");
    // Where HF (per grapheme cluster, shortest prefix) and SentencePiece (longest match)
    // differ: a full-width letter with a combining mark, decomposed Hangul jamo.
    const ragpp::detail::CharsMap map(charsmap, "nfkc");
    CHECK(t.normalize("\xEF\xBC\xA3\xCC\x81") == U"C");                    // Ｃ U+0301, HF
    CHECK(map.normalize_spm("\xEF\xBC\xA3\xCC\x81") == "\xC4\x86");         // Ć: a key of its own, SentencePiece
    CHECK(t.normalize("\xE1\x84\x80\xE1\x85\xA1") == U"\u1100\u1161");       // ᄀ ᅡ stay, HF
    CHECK(map.normalize_spm("\xE1\x84\x80\xE1\x85\xA1") == "\xEA\xB0\x80");  // 가, SentencePiece
    CHECK(map.normalize_spm("cafe\xCC\x81 \xEF\xAC\x81") == "caf\xC3\xA9 fi");
}

// --- Unigram + Precompiled: XLM-R conversion of the spm model ----------------------

TEST_CASE("XLM-R conversion: ids equal SentencePiece's own (python3-sentencepiece 0.1.97, +1 shift)", "[tokenizer-json]") {
    const auto j = xlmr_from_spm(ragpp_test::require_shared(spm_model));
    const auto t = HfTokenizer::from_string(j.dump(), "xlmr.json");
    // Expected: [i + 1 if i >= 3 else 3 for i in sp.encode(text)] with python3-sentencepiece.
    const std::vector<std::pair<std::string, Ids>> cases = {
        {"\xEF\xBC\xA1\xEF\xBC\xA2\xEF\xBC\xA3", {173, 370, 207}},  // ＡＢＣ
        {"\xEF\xAC\x81", {72, 24}},                                 // ﬁ
        {"\xE2\x91\xA0", {132}},                                    // ①
        {"caf\xC3\xA9 na\xC3\xAFve", {115, 473, 3, 373, 3, 258}},
        {"cafe\xCC\x81 nai\xCC\x88ve", {115, 473, 3, 373, 3, 258}},
        {"\xEF\xBC\xAC'avenant du contrat", {242, 13, 25, 119, 85, 73, 307, 71}},
        {"De Kamer van volksvertegenwoordigers", {174, 444, 117, 17, 18, 496, 55, 4, 129, 89, 109, 65, 247, 157, 316, 4}},
        {"Le ministre a r\xC3\xA9pondu \xC3\xA0 la question.", {295, 766, 48, 60, 3, 38, 34, 287, 6, 3, 27, 528, 12}},
        {"x\xC2\xB2+y\xC2\xB3=z\xE2\x81\xB4", {6, 179, 203, 3, 99, 237, 3, 97, 245}},
        {"\xC2\xA0non\xE2\x80\x89" "breaking", {101, 34, 84, 40, 25, 491}},
        {"tab\there", {176, 289, 96, 17, 8}},
        {"emoji \xF0\x9F\x98\x80 ok", {6, 8, 257, 183, 24, 6, 3, 6, 33, 55}},
        {"\xE2\x91\xA0\xE2\x91\xA1\xE2\x91\xA2\xE2\x91\xA9\xE2\x91\xB3", {132, 203, 237, 154, 196, 369}},
        {"\xC3\x9F \xE1\xBA\x9E \xEF\xAC\x80 \xEF\xAC\x83", {6, 3, 6, 3, 72, 39, 72, 378}},
        {"\xC2\xBD \xC2\xBC \xC2\xBE", {132, 3, 203, 132, 3, 245, 326, 3, 245}},
        {"soft\xC2\xADhyphen", {41, 419, 9, 3, 76, 99, 38, 76, 11}},
        {"control\x01" "char", {307, 182, 54, 98}},
    };
    for (const auto& [text, want] : cases) {
        INFO("text: " << text);
        CHECK(t.encode(text) == want);
    }
    // Double spaces collapse (Replace " {2,}"); a leading space gives no empty piece.
    CHECK(t.encode("De  Kamer") == t.encode("De Kamer"));
    CHECK(t.encode(" De Kamer") == t.encode("De Kamer"));
    // RobertaProcessing: <s> A </s> and <s> A </s></s> B </s>, type ids 0.
    const auto a = t.encode("De Kamer"), b = t.encode("le ministre");
    const auto single = t.encode_special("De Kamer");
    Ids want = {0};
    want.insert(want.end(), a.begin(), a.end());
    want.push_back(2);
    CHECK(single.ids == want);
    CHECK(single.type_ids == TypeIds(want.size(), 0));
    const auto pair = t.encode_pair("De Kamer", "le ministre");
    want.push_back(2);
    want.insert(want.end(), b.begin(), b.end());
    want.push_back(2);
    CHECK(pair.ids == want);
    CHECK(pair.type_ids == TypeIds(want.size(), 0));
    CHECK(t.num_special_tokens(false) == 2);
    CHECK(t.num_special_tokens(true) == 4);
    CHECK(t.pad_id() == HfTokenizer::TokenId{1});
}

// --- WordPiece on the real uncased vocab -------------------------------------------

TEST_CASE("WordPiece on the real uncased vocab: hand-checked hard texts", "[tokenizer-json]") {
    const auto t = HfTokenizer::from_file(ragpp_test::require_shared(bert_real));
    // Accents stripped (strip_accents follows lowercase), lowercased.
    CHECK(t.encode("Caf\xC3\xA9 NA\xC3\x8FVE") == ids_of(t, "cafe naive"));
    // CJK ideographs each alone.
    CHECK(t.encode("\xE6\x97\xA5\xE6\x9C\xAC") == ids_of(t, "日 本"));
    // Punctuation split; greedy longest-match-first pieces.
    CHECK(t.encode("CMP0077: set(FOO_BAR)!?") == ids_of(t, "cm ##p ##00 ##7 ##7 : set ( foo _ bar ) ! ?"));
    CHECK(t.encode("MX-200, ORA-01555") == ids_of(t, "mx - 200 , or ##a - 01 ##55 ##5"));
    CHECK(t.encode("L'avenant") == ids_of(t, "l ' ave ##nant"));
    // Control characters removed, tabs and newlines are spaces.
    CHECK(t.encode("ca\x01" "fe\tnaive\r\n") == ids_of(t, "cafe naive"));
    // An emoji not in the vocab is [UNK].
    CHECK(t.encode("\xF0\x9F\x98\x80") == ids_of(t, "[UNK]"));
    // 100 characters are still split; 101 are [UNK] (max_input_chars_per_word).
    std::string pieces = "aaa";
    for (int i = 0; i < 48; ++i) pieces += " ##aa";
    pieces += " ##a";
    CHECK(t.encode(std::string(100, 'a')) == ids_of(t, pieces));
    CHECK(t.encode(std::string(101, 'a')) == ids_of(t, "[UNK]"));
    // The post-processor's ids are the file's (this Model2Vec vocab was renumbered
    // but its template kept [CLS] 101 and [SEP] 102: HF uses them as written).
    const auto e = t.encode_special("cafe");
    CHECK(e.ids == Ids{101, *t.token_to_id("cafe"), 102});
    CHECK(e.type_ids == TypeIds{0, 0, 0});
    CHECK(t.pad_id() == t.token_to_id("[PAD]"));
}

// --- post-processors, pairs and truncation -----------------------------------------

TEST_CASE("TemplateProcessing: single and pair with type ids", "[tokenizer-json]") {
    const auto t = HfTokenizer::from_string(tiny_bert(bert_template), "tiny.json");
    CHECK(t.encode("w1 w2") == Ids{6, 7});
    auto e = t.encode_special("w1 w2");
    CHECK(e.ids == Ids{2, 6, 7, 3});
    CHECK(e.type_ids == TypeIds{0, 0, 0, 0});
    e = t.encode_pair("w1 w2", "w3");
    CHECK(e.ids == Ids{2, 6, 7, 3, 8, 3});
    CHECK(e.type_ids == TypeIds{0, 0, 0, 0, 1, 1});
    e = t.encode_pair("", "");
    CHECK(e.ids == Ids{2, 3, 3});
    CHECK(e.type_ids == TypeIds{0, 0, 1});
    CHECK(t.num_special_tokens(false) == 2);
    CHECK(t.num_special_tokens(true) == 3);
    CHECK(t.pad_id() == HfTokenizer::TokenId{0});
    CHECK(!t.truncation_max_length());
    // A special token with two ids, and a template that repeats it.
    const auto multi = HfTokenizer::from_string(tiny_bert(R"({"type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": "X", "type_id": 3}}, {"Sequence": {"id": "A", "type_id": 2}}],
        "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "X", "type_id": 1}},
                 {"Sequence": {"id": "B", "type_id": 1}}, {"SpecialToken": {"id": "X", "type_id": 1}}],
        "special_tokens": {"X": {"id": "X", "ids": [4, 2], "tokens": ["[MASK]", "[CLS]"]}}})"));
    e = multi.encode_special("w0");
    CHECK(e.ids == Ids{4, 2, 5});
    CHECK(e.type_ids == TypeIds{3, 3, 2});
    CHECK(multi.num_special_tokens(false) == 2);
    CHECK(multi.num_special_tokens(true) == 4);
    e = multi.encode_pair("w0", "w1", 6);  // 2 content tokens fit exactly
    CHECK(e.ids == Ids{5, 4, 2, 6, 4, 2});
    e = multi.encode_pair("w0 w1", "w1", 6);
    CHECK(e.ids == Ids{5, 4, 2, 6, 4, 2});
}

TEST_CASE("BertProcessing, RobertaProcessing, Sequence with ByteLevel, and no post-processor", "[tokenizer-json]") {
    const auto bert = HfTokenizer::from_string(tiny_bert(R"({"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]})"));
    auto e = bert.encode_pair("w1", "w2 w3");
    CHECK(e.ids == Ids{2, 6, 3, 7, 8, 3});
    CHECK(e.type_ids == TypeIds{0, 0, 0, 1, 1, 1});
    CHECK(bert.encode_special("w1").ids == Ids{2, 6, 3});
    const auto roberta = HfTokenizer::from_string(tiny_bert(R"({"type": "Sequence", "processors": [
        {"type": "ByteLevel", "trim_offsets": true},
        {"type": "RobertaProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2], "trim_offsets": true}]})"));
    e = roberta.encode_pair("w1", "w2 w3");
    CHECK(e.ids == Ids{2, 6, 3, 3, 7, 8, 3});
    CHECK(e.type_ids == TypeIds(7, 0));
    CHECK(roberta.num_special_tokens(true) == 4);
    // No post-processor: the inputs as they are, B with type id 1 (HF encodes B as sequence 1).
    const auto none = HfTokenizer::from_string(tiny_bert("null"));
    e = none.encode_pair("w1", "w2 w3", 2);
    CHECK(e.ids == Ids{6, 7});
    CHECK(e.type_ids == TypeIds{0, 1});
    CHECK(none.encode_special("w1 w2 w3", 2).ids == Ids{6, 7});
    CHECK(none.num_special_tokens(true) == 0);
}

TEST_CASE("Truncation: single input keeps the first tokens within max_length", "[tokenizer-json]") {
    const auto t = HfTokenizer::from_string(tiny_bert(bert_template), "tiny.json");
    CHECK(t.encode_special(words(5), 5).ids == Ids{2, 5, 6, 7, 3});
    CHECK(t.encode_special(words(3), 5).ids == Ids{2, 5, 6, 7, 3});
    CHECK(t.encode_special(words(2), 5).ids == Ids{2, 5, 6, 3});
    CHECK(t.encode_special(words(5), 2).ids == Ids{2, 3});
    CHECK(t.encode_special(words(5), 0).ids.size() == 7);  // 0: no limit
    CHECK_THROWS_AS(t.encode_special(words(5), 1), ragpp::InvalidArgument);
    CHECK_THROWS_WITH(t.encode_pair("w1", "w2", 2), Catch::Contains("tiny.json") && Catch::Contains("max_length"));
}

TEST_CASE("Truncation: longest_first on pairs, HF truncation.rs's own table", "[tokenizer-json]") {
    // tokenizers/src/utils/truncation.rs, truncate_encodings_longest_first: content
    // max_length 7, inputs of 0, 2, 4 and 8 tokens. With the [CLS] A [SEP] B [SEP]
    // template, max_length = 7 + 3.
    const auto t = HfTokenizer::from_string(tiny_bert(bert_template));
    const int len[4] = {0, 2, 4, 8};
    const int want[4][4][2] = {{{0, 0}, {0, 2}, {0, 4}, {0, 7}},
                               {{2, 0}, {2, 2}, {2, 4}, {2, 5}},
                               {{4, 0}, {4, 2}, {3, 4}, {3, 4}},
                               {{7, 0}, {5, 2}, {4, 3}, {3, 4}}};
    for (int i = 0; i < 4; ++i)
        for (int k = 0; k < 4; ++k) {
            const auto e = t.encode_pair(words(len[i]), words(len[k]), 10);
            INFO("lengths " << len[i] << " and " << len[k]);
            const auto n1 = static_cast<std::size_t>(want[i][k][0]), n2 = static_cast<std::size_t>(want[i][k][1]);
            REQUIRE(e.ids.size() == n1 + n2 + 3);
            // [CLS] the first n1 of A [SEP] the first n2 of B [SEP]
            Ids expected{2};
            for (std::size_t j = 0; j < n1; ++j) expected.push_back(static_cast<HfTokenizer::TokenId>(5 + j % 10));
            expected.push_back(3);
            for (std::size_t j = 0; j < n2; ++j) expected.push_back(static_cast<HfTokenizer::TokenId>(5 + j % 10));
            expected.push_back(3);
            CHECK(e.ids == expected);
            TypeIds types(n1 + 2, 0);
            types.resize(n1 + n2 + 3, 1);
            CHECK(e.type_ids == types);
        }
}

TEST_CASE("Truncation: longest_first by hand, both long, one long, odd budget", "[tokenizer-json]") {
    const auto t = HfTokenizer::from_string(tiny_bert(bert_template));
    const auto lens = [&](int a, int b, std::size_t max_length) {
        const auto e = t.encode_pair(words(a), words(b), max_length);
        std::size_t n1 = 0;
        while (e.ids[1 + n1] != 3) ++n1;
        return std::pair<std::size_t, std::size_t>{n1, e.ids.size() - n1 - 3};
    };
    using P = std::pair<std::size_t, std::size_t>;
    // Both long, odd budget 10 - 3 = 7 = 3 + 4. Both are tokenized only up to the word
    // that reaches max_length (10 one-token words here), so they tie and B gets the
    // larger half whichever was longer.
    CHECK(lens(20, 30, 10) == P{3, 4});
    CHECK(lens(30, 20, 10) == P{3, 4});
    CHECK(lens(25, 25, 10) == P{3, 4});
    // Only A beyond max_length: A (cut to 10) is the longer, it gets the larger half.
    CHECK(lens(30, 9, 10) == P{4, 3});
    CHECK(lens(9, 30, 10) == P{3, 4});
    // Even budget 8: 4 + 4.
    CHECK(lens(20, 30, 11) == P{4, 4});
    // One long: the short one stays whole, the long one takes the rest.
    CHECK(lens(2, 30, 10) == P{2, 5});
    CHECK(lens(30, 1, 10) == P{6, 1});
    // Shorter one just above half: both cut to halves (n1 = 5 > 7 - 5 = 2 -> 3 + 4).
    CHECK(lens(5, 9, 10) == P{3, 4});
    // Fits: untouched.
    CHECK(lens(3, 4, 10) == P{3, 4});
    // Budget 0 (max_length = the specials): both empty.
    CHECK(lens(3, 4, 3) == P{0, 0});
    // The early exit counts whole words: A = 4 words of 3 tokens stops at 12 tokens, B =
    // 20 one-token words stops at 10, so A is "the longer" and gets the larger half
    // (comparing the full lengths 12 < 20, or cutting both to 10, would give B 4).
    const auto e = t.encode_pair("w1xx w1xx w1xx w1xx", words(20), 10);
    CHECK(e.ids == Ids{2, 6, 15, 15, 6, 3, 5, 6, 7, 3});
    CHECK(t.encode("w1xx w1xx w1xx w1xx", 10).size() == 12);
    CHECK(t.encode("w1xx w1xx w1xx w1xx", 9).size() == 9);
    CHECK(t.encode("w1xx w1xx w1xx w1xx", 0).size() == 12);
    CHECK(t.encode(words(20), 10) == t.encode(words(10)));
    // Added tokens count, but the exit is only checked after a word the model
    // tokenized (as measured on the tokenizers 0.23.2 binary).
    const auto added = HfTokenizer::from_string(
        tiny_bert(bert_template, R"(, "added_tokens": [{"id": 4, "content": "[MASK]", "special": true}])"));
    CHECK(added.encode("w1 [MASK] w2 w3", 2) == Ids{6, 4, 7});
    CHECK(added.encode("w1 [MASK] [MASK] w2 w3", 2) == Ids{6, 4, 4, 7});
    CHECK(added.encode("w1xx [MASK] w2 w3", 2) == Ids{6, 15, 15});
    CHECK(t.encode("w1 [MASK] w2 w3", 2) == Ids{6, 4});  // without added_tokens "[MASK]" is a word
}

TEST_CASE("padding, truncation fields and pad token fallbacks", "[tokenizer-json]") {
    const auto padded = HfTokenizer::from_string(
        tiny_bert("null", R"(, "padding": {"strategy": "BatchLongest", "pad_id": 4, "pad_token": "[MASK]"},
                              "truncation": {"max_length": 128, "strategy": "LongestFirst", "stride": 0})"));
    CHECK(padded.pad_id() == HfTokenizer::TokenId{4});
    CHECK(padded.truncation_max_length() == std::size_t{128});
    // The file's truncation is not applied implicitly.
    CHECK(padded.encode_special(words(200)).ids.size() == 200);
    const auto unigram = HfTokenizer::from_string(R"({"model": {"type": "Unigram", "unk_id": 0,
        "vocab": [["<unk>", 0.0], ["<pad>", 0.0], ["a", -1.0]]}})");
    CHECK(unigram.pad_id() == HfTokenizer::TokenId{1});
    const auto no_pad = HfTokenizer::from_string(R"({"model": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0]]}})");
    CHECK(!no_pad.pad_id());
    CHECK_THROWS_AS(HfTokenizer::from_string(tiny_bert("null", R"(, "padding": {"pad_id": 99})")), ragpp::FormatError);
}

TEST_CASE("post-processor errors name the file and the field", "[tokenizer-json]") {
    using Catch::Contains;
    const std::string unknown = R"({"type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": "<cls>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
        "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {}})";
    CHECK_THROWS_AS(HfTokenizer::from_string(tiny_bert(unknown), "pp.json"), ragpp::FormatError);
    CHECK_THROWS_WITH(HfTokenizer::from_string(tiny_bert(unknown), "pp.json"),
                      Contains("pp.json") && Contains("<cls>") && Contains("special_tokens"));
    const std::string bad_id = R"({"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "X", "type_id": 0}}],
        "pair": [], "special_tokens": {"X": {"id": "X", "ids": [1000], "tokens": ["X"]}}})";
    CHECK_THROWS_WITH(HfTokenizer::from_string(tiny_bert(bad_id), "pp.json"), Contains("pp.json") && Contains("'X'"));
    const std::string b_in_single = R"({"type": "TemplateProcessing", "single": [{"Sequence": {"id": "B", "type_id": 0}}],
        "pair": [], "special_tokens": {}})";
    CHECK_THROWS_AS(HfTokenizer::from_string(tiny_bert(b_in_single)), ragpp::FormatError);
    CHECK_THROWS_AS(HfTokenizer::from_string(tiny_bert(R"({"type": "BertProcessing", "sep": ["[SEP]", 3]})")),
                    ragpp::FormatError);
    CHECK_THROWS_AS(HfTokenizer::from_string(tiny_bert(R"({"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 50]})")),
                    ragpp::FormatError);
    CHECK_THROWS_WITH(HfTokenizer::from_string(tiny_bert(R"({"type": "ByteLevelish"})"), "pp.json"),
                      Contains("pp.json") && Contains("ByteLevelish"));
    CHECK_THROWS_AS(HfTokenizer::from_string(tiny_bert(R"({"type": "ByteLevelish"})")), ragpp::UnsupportedError);
}

TEST_CASE("Replace Regex ' {2,}' collapses runs of spaces only, other regexes are refused", "[tokenizer-json]") {
    const auto t = HfTokenizer::from_string(
        with_normalizer(R"({"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": "_"})"));
    CHECK(t.normalize("a  b   c d\t\tx ") == U"a_b_c d\t\tx ");
    CHECK(t.normalize("  ") == U"_");
    CHECK_THROWS_AS(HfTokenizer::from_string(
                        with_normalizer(R"({"type": "Replace", "pattern": {"Regex": " {3,}"}, "content": " "})")),
                    ragpp::UnsupportedError);
}

// --- the reference fixtures (tests/fixtures/transformer/, branch neural-ref) -------

namespace {
fs::path fixture(const std::string& relative) { return fs::path(RAGPP_SOURCE_DIR) / "tests/fixtures/transformer" / relative; }
nlohmann::json read_json(const fs::path& p) {
    INFO("reading " << p.string());
    REQUIRE(fs::exists(p));
    return nlohmann::json::parse(ragpp_test::read_file(p));
}
}  // namespace

TEST_CASE("wordpiece_real.json: the real uncased vocab on hard texts, ids of an independent Python WordPiece",
          "[tokenizer-json]") {
    const auto j = read_json(fixture("wordpiece_real.json"));
    const auto t = HfTokenizer::from_file(ragpp_test::require_shared("fixtures/" + j.at("tokenizer").get<std::string>()));
    std::size_t n = 0;
    for (const auto& c : j.at("cases")) {
        const auto text = c.at("text").get<std::string>();
        INFO("text: " << text);
        CHECK(t.encode(text) == c.at("ids").get<Ids>());
        ++n;
    }
    CHECK(n >= 10);
}

TEST_CASE("unigram_real.json: XLM-R conversion of the spm model, ids of python3-sentencepiece", "[tokenizer-json]") {
    const auto j = read_json(fixture("unigram_real.json"));
    // The committed conversion, and the one made here from the .model file.
    const auto committed = HfTokenizer::from_file(fixture(j.at("tokenizer").get<std::string>()));
    const auto here = HfTokenizer::from_string(xlmr_from_spm(ragpp_test::require_shared(spm_model)).dump(), "xlmr.json");
    std::size_t n = 0;
    for (const auto& c : j.at("cases")) {
        const auto text = c.at("text").get<std::string>();
        const auto want = c.at("ids").get<Ids>();
        INFO("text: " << text);
        CHECK(committed.encode(text) == want);
        CHECK(here.encode(text) == want);
        ++n;
    }
    CHECK(n >= 5);
    CHECK(committed.vocab_size() == here.vocab_size());
    // Added tokens: <mask> has lstrip (it takes the space before it), </s> has not (the
    // space before it is a "▁" piece of its own, as in HF).
    const auto mask = committed.token_to_id("<mask>");
    REQUIRE(mask.has_value());
    Ids want = committed.encode("De Kamer");
    want.push_back(*mask);
    CHECK(committed.encode("De Kamer  <mask>") == want);
    want = committed.encode("De Kamer ");
    CHECK(want.back() == *committed.token_to_id("\xE2\x96\x81"));
    want.push_back(2);
    CHECK(committed.encode("De Kamer </s>") == want);
}

TEST_CASE("ce-bert and ce-xlmr expected.json: pair tokens and type ids after longest_first truncation",
          "[tokenizer-json]") {
    for (const char* model : {"ce-bert", "ce-xlmr"}) {
        INFO("model " << model);
        const auto t = HfTokenizer::from_file(fixture(std::string(model) + "/tokenizer.json"));
        const auto max_length = read_json(fixture(std::string(model) + "/tokenizer_config.json")).at("model_max_length").get<std::size_t>();
        CHECK(max_length == 40);
        const auto j = read_json(fixture(std::string(model) + "/expected.json"));
        const auto& pairs = j.at("pairs");
        REQUIRE(pairs.size() == j.at("tokens").size());
        REQUIRE(pairs.size() == j.at("type_ids").size());
        bool truncated = false;
        for (std::size_t i = 0; i < pairs.size(); ++i) {
            const auto a = pairs[i].at(0).get<std::string>(), b = pairs[i].at(1).get<std::string>();
            INFO("pair " << i << ": " << a << " | " << b);
            const auto e = t.encode_pair(a, b, max_length);
            CHECK(e.ids == j.at("tokens")[i].get<Ids>());
            CHECK(e.type_ids == j.at("type_ids")[i].get<TypeIds>());
            truncated = truncated || t.encode_pair(a, b).ids.size() > max_length;
        }
        CHECK(truncated);  // the fixture exercises truncation
    }
}

TEST_CASE("embedder fixtures' expected.json: single texts with specials, truncated to max_seq_length",
          "[tokenizer-json]") {
    for (const char* model : {"bert-mean", "bert-cls-f16", "bert-max-bf16", "bert-sqrtlen", "xlmr-mean"}) {
        INFO("model " << model);
        const auto t = HfTokenizer::from_file(fixture(std::string(model) + "/tokenizer.json"));
        const auto max_length =
            read_json(fixture(std::string(model) + "/sentence_bert_config.json")).at("max_seq_length").get<std::size_t>();
        const auto j = read_json(fixture(std::string(model) + "/expected.json"));
        REQUIRE(j.at("texts").size() == j.at("tokens").size());
        bool truncated = false;
        for (std::size_t i = 0; i < j.at("texts").size(); ++i) {
            const auto text = j.at("texts")[i].get<std::string>();
            INFO("text " << i << ": " << text);
            const auto e = t.encode_special(text, max_length);
            CHECK(e.ids == j.at("tokens")[i].get<Ids>());
            CHECK(e.type_ids == TypeIds(e.ids.size(), 0));
            truncated = truncated || t.encode_special(text).ids.size() > max_length;
        }
        CHECK(truncated);
        if (j.contains("query_tokens")) {  // E5-style prompt: the prompt is prepended to the text
            const auto prompt = j.at("query_prompt").get<std::string>();
            for (std::size_t i = 0; i < j.at("texts").size(); ++i)
                CHECK(t.encode_special(prompt + j.at("texts")[i].get<std::string>(), max_length).ids ==
                      j.at("query_tokens")[i].get<Ids>());
        }
    }
}
