#include <ragpp/embed/model2vec.hpp>

#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support.hpp"

using ragpp::HfTokenizer;
using ragpp::SafeTensors;
using ragpp::StaticEmbedder;
namespace fs = std::filesystem;

namespace {

std::vector<float> golden(const std::string& file) {
    const auto j = nlohmann::json::parse(ragpp_test::read_file(ragpp_test::require_shared("fixtures/model2vec/" + file)));
    return j.at(0).get<std::vector<float>>();
}

std::string hello_1000() {
    std::string s;
    for (int i = 0; i < 1000; ++i) s += i == 0 ? "hello" : " hello";
    return s;
}

/// Within the reference's tolerance: |got - want| <= 1e-5 * |want| (+ a float32 floor).
void check_close(const Eigen::VectorXf& got, const std::vector<float>& want, double rel = 1e-5, double abs = 1e-7) {
    REQUIRE(static_cast<std::size_t>(got.size()) == want.size());
    for (std::size_t i = 0; i < want.size(); ++i)
        CHECK(std::abs(got[static_cast<Eigen::Index>(i)] - want[i]) <= rel * std::abs(want[i]) + abs);
}

void write_safetensors(const fs::path& p, const std::string& header, const std::string& data) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    const std::uint64_t n = header.size();
    out.write(reinterpret_cast<const char*>(&n), 8);
    out << header << data;
}

}  // namespace

TEST_CASE("Model2Vec golden: float32 model on 'hello world' and on 'hello' x 1000", "[model2vec]") {
    const StaticEmbedder m(ragpp_test::require_shared("fixtures/model2vec/test-model-float32"));
    CHECK(m.dimension() == 2);
    CHECK(m.normalize());
    check_close(m.embed("hello world"), golden("embeddings_short.json"));
    check_close(m.embed(hello_1000()), golden("embeddings_long.json"));
    // The long text is cut to 512 tokens, all "hello".
    const auto ids = m.token_ids(hello_1000());
    CHECK(ids.size() == 512);
    CHECK(ids.front() == *m.tokenizer().token_to_id("hello"));
}

TEST_CASE("Model2Vec golden: vocabulary-quantized model (Unigram, weights, mapping)", "[model2vec]") {
    const StaticEmbedder m(ragpp_test::require_shared("fixtures/model2vec/test-model-vocab-quantized"));
    CHECK(m.dimension() == 64);
    CHECK(m.tokenizer().model_type() == "Unigram");
    check_close(m.embed(hello_1000()), golden("embeddings_vocab_quantized.json"));
    const auto ids = m.token_ids("hello world");
    CHECK(ids == std::vector<HfTokenizer::TokenId>{6594, 1091});  // "▁hello", "▁world"
}

TEST_CASE("Model2Vec: the sentence-transformers layouts give the same vectors", "[model2vec]") {
    const auto st_dir = ragpp_test::require_shared("fixtures/model2vec/test-model-sentence-transformers");
    const StaticEmbedder st(st_dir);
    CHECK(st.normalize());  // from config_sentence_transformers.json
    check_close(st.embed("hello world"), golden("embeddings_short.json"));
    // The full layout: modules.json + 0_StaticEmbedding/ (files linked, not copied).
    ragpp_test::TempDir dir;
    fs::create_directories(dir.path / "0_StaticEmbedding");
    fs::create_symlink(st_dir / "model.safetensors", dir.path / "0_StaticEmbedding" / "model.safetensors");
    fs::create_symlink(st_dir / "tokenizer.json", dir.path / "0_StaticEmbedding" / "tokenizer.json");
    std::ofstream(dir.path / "modules.json")
        << R"([{"idx":0,"name":"0","path":"0_StaticEmbedding","type":"sentence_transformers.models.StaticEmbedding"},)"
        << R"({"idx":1,"name":"1","path":"1_Normalize","type":"sentence_transformers.models.Normalize"}])";
    const StaticEmbedder full(dir.path);
    CHECK(full.normalize());  // from the Normalize module
    check_close(full.embed("hello world"), golden("embeddings_short.json"));
    ragpp::StaticEmbedderOptions raw;
    raw.normalize = false;
    const StaticEmbedder unnormalized(dir.path, raw);
    CHECK(unnormalized.embed("hello world").norm() != Approx(1.0F));
    CHECK(unnormalized.embed("hello world").normalized().isApprox(full.embed("hello world"), 1e-5F));
}

TEST_CASE("Model2Vec: float16 and int8 models agree with float32 within their precision", "[model2vec]") {
    const auto base = ragpp_test::require_shared("fixtures/model2vec");
    const StaticEmbedder f32(base / "test-model-float32");
    ragpp::StaticEmbedderOptions mm;
    mm.load = SafeTensors::Load::mmap;
    const StaticEmbedder f16(base / "test-model-float16", mm);
    const StaticEmbedder i8(base / "test-model-int8");
    CHECK(f16.stored_dtype() == ragpp::Dtype::F16);
    CHECK(i8.stored_dtype() == ragpp::Dtype::I8);
    for (const std::string text : {"hello world", "the quick brown fox jumps over the lazy dog", "Vector search at memory speed"}) {
        const auto a = f32.embed(text);
        // float16: 11 significant bits, so about 1e-3 relative.
        CHECK((f16.embed(text) - a).norm() < 2e-3F);
        // int8: one global scale, 127 steps: the direction within about 2e-2.
        CHECK((i8.embed(text) - a).norm() < 3e-2F);
        CHECK(i8.embed(text).norm() == Approx(1.0F));
    }
    check_close(f16.embed("hello world"), golden("embeddings_short.json"), 2e-3, 1e-4);
}

TEST_CASE("Model2Vec: empty or unknown-only text gives the zero vector", "[model2vec]") {
    const StaticEmbedder m(ragpp_test::require_shared("fixtures/model2vec/test-model-float32"));
    CHECK(m.embed("").isZero());
    CHECK(m.token_ids("\xE2\x98\x83").empty());  // a snowman: [UNK], removed
    CHECK(m.embed("\xE2\x98\x83").isZero());
}

TEST_CASE("tokenizer.json: WordPiece with BertNormalizer and BertPreTokenizer", "[tokenizer]") {
    const auto t = HfTokenizer::from_file(ragpp_test::require_shared("fixtures/model2vec/test-model-float32/tokenizer.json"));
    CHECK(t.model_type() == "WordPiece");
    // Normalizer: control characters dropped, whitespace to spaces, accents stripped,
    // lowercased, CJK ideographs spaced.
    CHECK(t.normalize("H\xC3\xA9llo\tW\x01orld") == U"hello world");
    CHECK(t.normalize("\xE4\xB8\xAD\xE6\x96\x87") == U" 中  文 ");
    CHECK(t.normalize("\xC3\x85ngstr\xC3\xB6m") == U"angstrom");
    // Pre-tokenizer: whitespace removed, each punctuation character alone.
    CHECK(t.pre_tokenize(U"don't stop, ok?") ==
          std::vector<std::u32string>{U"don", U"'", U"t", U"stop", U",", U"ok", U"?"});
    auto id = [&](const char* tok) { return *t.token_to_id(tok); };
    CHECK(t.encode("Hello, World!") == std::vector<HfTokenizer::TokenId>{id("hello"), id(","), id("world"), id("!")});
    // Greedy longest-match-first subwords.
    const auto playing = t.encode("playing");
    REQUIRE(!playing.empty());
    std::string joined;
    for (auto i : playing) joined += t.token(i) + " ";
    CHECK((joined == "playing " || joined.rfind("play ##", 0) == 0));
    // A word longer than max_input_chars_per_word (100) is one [UNK].
    CHECK(t.encode(std::string(101, 'a')) == std::vector<HfTokenizer::TokenId>{*t.unk_id()});
    // Added (special) tokens are matched in the raw text.
    CHECK(t.encode("[CLS] hello") == std::vector<HfTokenizer::TokenId>{id("[CLS]"), id("hello")});
}

TEST_CASE("tokenizer.json: Unigram Viterbi, computed by hand on a tiny model", "[tokenizer]") {
    // Pieces and log-probabilities: "▁ab" (-1) beats "▁a" + "b" (-2 + -2 = -4); "c" is
    // not covered: unknown, score min - 10 = -20; two unknowns in a row fuse into one.
    const std::string json = R"({
      "normalizer": {"type": "Sequence", "normalizers": [
          {"type": "Lowercase"}, {"type": "Replace", "pattern": {"Regex": "\\s+"}, "content": " "},
          {"type": "Strip", "strip_left": true, "strip_right": true}]},
      "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": true},
      "model": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["\u2581a", -2.0], ["b", -2.0],
                 ["\u2581ab", -1.0], ["\u2581", -3.0], ["a", -5.0], ["\u2581abb", -10.0]]}})";
    const auto t = HfTokenizer::from_string(json);
    CHECK(t.normalize("  AB \t\n AB ") == U"ab ab");
    CHECK(t.pre_tokenize(U"ab ab") == std::vector<std::u32string>{U"\u2581ab", U"\u2581ab"});
    CHECK(t.encode("AB  ab") == std::vector<HfTokenizer::TokenId>{3, 3});
    // "▁abb": "▁abb" (-10) vs "▁ab"+"b" (-3): the latter.
    CHECK(t.encode("abb") == std::vector<HfTokenizer::TokenId>{3, 2});
    // "▁acca": "▁a" (-2), "c" unk, "c" unk (fused), "a" (-5).
    CHECK(t.encode("acca") == std::vector<HfTokenizer::TokenId>{1, 0, 5});
}

TEST_CASE("tokenizer.json: unsupported features are refused by name", "[tokenizer]") {
    const auto with = [](const std::string& normalizer, const std::string& model) {
        return R"({"normalizer": )" + normalizer + R"(, "pre_tokenizer": null, "model": )" + model + "}";
    };
    const std::string unigram = R"({"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0]]})";
    // Precompiled is supported (unit-tokenizer-json.cpp); a blob too short is a FormatError.
    CHECK_THROWS_AS(HfTokenizer::from_string(with(R"({"type": "Precompiled", "precompiled_charsmap": "AAAA"})", unigram)),
                    ragpp::FormatError);
    CHECK_THROWS_WITH(HfTokenizer::from_string(with(R"({"type": "Precompiled", "precompiled_charsmap": ""})", unigram), "x.json"),
                      Catch::Contains("Precompiled") && Catch::Contains("x.json"));
    CHECK_THROWS_AS(HfTokenizer::from_string(with(R"({"type": "NFKC"})", unigram)), ragpp::UnsupportedError);
    CHECK_THROWS_AS(HfTokenizer::from_string(
                        with(R"({"type": "Replace", "pattern": {"Regex": "[0-9]+"}, "content": "#"})", unigram)),
                    ragpp::UnsupportedError);
    CHECK_THROWS_AS(HfTokenizer::from_string(with("null", R"({"type": "BPE", "vocab": {}, "merges": []})")),
                    ragpp::UnsupportedError);
    CHECK_THROWS_AS(HfTokenizer::from_string("{not json"), ragpp::ParseError);
    CHECK_THROWS_AS(HfTokenizer::from_string(R"({"model": {"type": "Unigram", "vocab": [["a"]]}})"), ragpp::FormatError);
}

TEST_CASE("safetensors: a valid file is read alike from memory and by mmap", "[safetensors]") {
    ragpp_test::TempDir dir;
    const auto p = dir.path / "t.safetensors";
    std::string data(4 * 6 + 8, '\0');
    const float f[6] = {1, 2, 3, 4, 5, 6};
    std::memcpy(data.data(), f, sizeof f);
    const std::int64_t ids[1] = {-7};
    std::memcpy(data.data() + 24, ids, 8);
    write_safetensors(p, R"({"__metadata__": {"format": "pt"}, "m": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},)"
                         R"( "i": {"dtype": "I64", "shape": [1], "data_offsets": [24, 32]}}  )", data);
    for (auto mode : {SafeTensors::Load::read, SafeTensors::Load::mmap}) {
        const SafeTensors st(p, mode);
        CHECK(st.mapped() == (mode == SafeTensors::Load::mmap));
        CHECK(st.metadata().at("format") == "pt");
        const ragpp::RowMatrixXf m = st.matrix("m");
        CHECK(m.rows() == 2);
        CHECK(m(1, 0) == 4.0F);
        CHECK(st.integers("i") == std::vector<std::int64_t>{-7});
        CHECK_THROWS_AS(st.matrix("nope"), ragpp::NotFoundError);
        CHECK_THROWS_AS(st.matrix("i"), ragpp::FormatError);  // rank 1
    }
}

TEST_CASE("safetensors: malformed headers are FormatErrors naming the file", "[safetensors]") {
    ragpp_test::TempDir dir;
    const auto p = dir.path / "bad.safetensors";
    const std::string data(24, '\0');
    auto refused = [&](const std::string& header, const std::string& d, const char* why) {
        write_safetensors(p, header, d);
        CHECK_THROWS_AS(SafeTensors(p), ragpp::FormatError);
        CHECK_THROWS_WITH(SafeTensors(p), Catch::Contains("bad.safetensors") && Catch::Contains(why));
    };
    refused("{not json", data, "JSON");
    refused("[1, 2]", data, "object");
    refused(R"({"m": {"dtype": "F33", "shape": [6], "data_offsets": [0, 24]}})", data, "dtype");
    refused(R"({"m": {"dtype": "F32", "shape": [7], "data_offsets": [0, 24]}})", data, "need 28");
    refused(R"({"m": {"dtype": "F32", "shape": [-6], "data_offsets": [0, 24]}})", data, "shape");
    refused(R"({"m": {"dtype": "F32", "shape": [12], "data_offsets": [0, 48]}})", data, "outside");
    refused(R"({"m": {"dtype": "F32", "shape": [6], "data_offsets": [0]}})", data, "data_offsets");
    refused(R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}, "b": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}})",
            data, "overlap");
    // Header length beyond the file.
    {
        std::ofstream out(p, std::ios::binary | std::ios::trunc);
        const std::uint64_t n = 1000;
        out.write(reinterpret_cast<const char*>(&n), 8);
        out << "{}";
    }
    CHECK_THROWS_WITH(SafeTensors(p), Catch::Contains("exceeds the file"));
    std::ofstream(p, std::ios::binary | std::ios::trunc) << "abc";
    CHECK_THROWS_WITH(SafeTensors(p), Catch::Contains("too short"));
    CHECK_THROWS_AS(SafeTensors(dir.path / "missing.safetensors"), ragpp::IoError);
}

TEST_CASE("StaticEmbedder: a folder that matches no layout is refused", "[model2vec]") {
    ragpp_test::TempDir dir;  // a missing file or folder is an IoError, as for TransformerEmbedder
    CHECK_THROWS_AS(StaticEmbedder(dir.path), ragpp::IoError);
    CHECK_THROWS_AS(StaticEmbedder(dir.path / "missing"), ragpp::IoError);
}
