// Hostile inputs: each must give a ragpp::Error of the right
// category whose message names its source (file, line, field or text) -- never a crash,
// a std:: exception, or a multi-gigabyte allocation before the check. Every case is
// small and fast, so the whole file runs under ASan+UBSan in CI (scripts/test.sh).
#include <ragpp/chunk/front_matter.hpp>
#include <ragpp/core/error.hpp>
#include <ragpp/detail/json.hpp>
#include <ragpp/detail/json_dump.hpp>
#include <ragpp/embed/model2vec.hpp>
#include <ragpp/embed/safetensors.hpp>
#include <ragpp/embed/tokenizer_json.hpp>
#include <ragpp/embed/transformer.hpp>
#include <ragpp/embed/hashing.hpp>
#include <ragpp/embed/word_vectors.hpp>
#include <ragpp/eval/questions.hpp>
#include <ragpp/filter/filter.hpp>
#include <ragpp/index/vector.hpp>
#include <ragpp/io/beir.hpp>
#include <ragpp/text/porter.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "support.hpp"

namespace fs = std::filesystem;
using ragpp::errc;

namespace {

/// Runs `f`, which must throw a ragpp::Error of category `want` whose message contains
/// every string of `names`. A std:: exception or no exception fails the test.
template <class F>
void expect_error(F&& f, errc want, const std::vector<std::string>& names) {
    try {
        f();
        FAIL("no exception");
    } catch (const ragpp::Error& e) {
        INFO(e.what());
        CHECK(ragpp::errc_id(e.category()) == ragpp::errc_id(want));
        CHECK(std::string(e.what()).starts_with("[ragpp." + std::string(ragpp::errc_id(want)) + "] "));
        for (const auto& n : names) CHECK(std::string(e.what()).find(n) != std::string::npos);
    } catch (const std::exception& e) {
        FAIL("a std:: exception escaped: " << e.what());
    }
}
#define EXPECT_ERROR(expr, category, ...)                              \
    do {                                                               \
        INFO(#expr);                                                   \
        expect_error([&] { (void)(expr); }, category, {__VA_ARGS__}); \
    } while (false)

void write(const fs::path& p, const std::string& bytes) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << bytes;
}

std::string repeat(const std::string& s, std::size_t n) {
    std::string out;
    out.reserve(s.size() * n);
    for (std::size_t i = 0; i < n; ++i) out += s;
    return out;
}

/// A safetensors file: the 8-byte header length, the header, the data.
void write_safetensors(const fs::path& p, const std::string& header, const std::string& data) {
    const std::uint64_t n = header.size();
    std::string bytes(reinterpret_cast<const char*>(&n), 8);
    write(p, bytes + header + data);
}

std::string floats(const std::vector<float>& v) {
    return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

/// A two-token Model2Vec folder whose pieces the cases below break one at a time.
struct StaticModelDir {
    ragpp_test::TempDir tmp;
    fs::path dir = tmp.path / "model";
    StaticModelDir() {
        fs::create_directories(dir);
        tokenizer(R"({"model": {"type": "WordLevel", "vocab": {"a": 0, "b": 1}, "unk_token": "a"}})");
        embeddings({2, 2}, floats({1, 0, 0, 1}));
    }
    void tokenizer(const std::string& json) const { write(dir / "tokenizer.json", json); }
    void embeddings(const std::vector<std::size_t>& shape, const std::string& data) const {
        std::string s = "[";
        for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
        write_safetensors(dir / "model.safetensors",
                          R"({"embeddings": {"dtype": "F32", "shape": )" + s + R"(], "data_offsets": [0, )" +
                              std::to_string(data.size()) + "]}}",
                          data);
    }
};

}  // namespace

// --- error categories ---------------------------------------------------------------

TEST_CASE("hostile: the valid model folder of these cases loads", "[hostile]") {
    // The oracle for the cases below: the unbroken folder is accepted, so each refusal
    // comes from the one thing a case breaks.
    const StaticModelDir m;
    const ragpp::StaticEmbedder e(m.dir);
    CHECK(e.dimension() == 2);
    CHECK(e.tokenizer().vocab_size() == 2);
}

// --- recursion depth ----------------------------------------------------------------

TEST_CASE("hostile: filter expressions nested too deep", "[hostile][filter]") {
    // 3000 parentheses (6 KB) and 20,000 '!' overflowed the stack before the limit.
    const std::string parens = repeat("(", 3000) + "a=1" + repeat(")", 3000);
    EXPECT_ERROR(ragpp::parse_filter(parens), errc::parse_error, "filter '(((", "nested deeper than 64", "column 65");
    EXPECT_ERROR(ragpp::parse_filter(repeat("!", 20000) + "a=1"), errc::parse_error, "filter '!!!", "nested deeper than 64");
    EXPECT_ERROR(ragpp::parse_filter(repeat("not ", 20000) + "a=1"), errc::parse_error, "nested deeper than 64");
    // The limit is exactly max_filter_depth: 64 levels parse (and evaluate as the
    // expression without them), 65 do not.
    const std::size_t d = ragpp::max_filter_depth;
    const ragpp::Metadata yes{{"a", 1.0}}, no{{"a", 2.0}};
    const auto at_limit = ragpp::parse_filter(repeat("(", d) + "a=1" + repeat(")", d));
    CHECK(at_limit.matches(yes));
    CHECK_FALSE(at_limit.matches(no));
    const auto negations = ragpp::parse_filter(repeat("!", d) + "a=1");  // an even count: a=1 again
    CHECK(negations.matches(yes));
    CHECK_FALSE(negations.matches(no));
    EXPECT_ERROR(ragpp::parse_filter(repeat("(", d + 1) + "a=1" + repeat(")", d + 1)), errc::parse_error,
                 "nested deeper than 64");
    EXPECT_ERROR(ragpp::parse_filter("!" + repeat("(", d) + "a=1" + repeat(")", d)), errc::parse_error,
                 "nested deeper than 64");
    // Siblings do not add up: 1000 conditions side by side are depth 1.
    std::string wide = "(a=1";
    for (int i = 0; i < 1000; ++i) wide += " || (b=" + std::to_string(i) + ")";
    CHECK(ragpp::parse_filter(wide + ")").matches(yes));
}

TEST_CASE("hostile: front matter nested deep is iterative, its errors name file and line", "[hostile][front-matter]") {
    // The front matter parser keeps a list of open mappings, not a call stack: 1000
    // levels give one dotted key of 1000 parts (the input itself is 500 KB).
    std::string yaml;
    std::string key;
    for (std::size_t i = 0; i < 1000; ++i) {
        yaml += std::string(i, ' ') + "k:\n";
        key += (i ? ".k" : "k");
    }
    yaml += std::string(1000, ' ') + "leaf: 3\n";
    const auto m = ragpp::parse_front_matter(yaml, "deep.md", 2);
    REQUIRE(m.size() == 1);
    CHECK(m.begin()->first == key + ".leaf");
    EXPECT_ERROR(ragpp::parse_front_matter("a: 1\nb: \"open\n", "doc.md", 2), errc::parse_error, "doc.md:3",
                 "unterminated");
    EXPECT_ERROR(ragpp::parse_front_matter("a: {x: 1}\n", "doc.md", 2), errc::parse_error, "doc.md:2", "flow mappings");
}

TEST_CASE("hostile: JSON nested deeper than ragpp reads", "[hostile][json]") {
    // nlohmann copies and dumps recursively; every JSON text ragpp parses is refused
    // beyond max_json_depth levels, naming the source and line.
    const std::size_t d = ragpp::detail::max_json_depth;
    CHECK(ragpp::detail::parse_json(repeat("[", d) + repeat("]", d), "x.json").is_array());
    EXPECT_ERROR(ragpp::detail::parse_json("\n" + repeat("[", d + 1) + repeat("]", d + 1), "x.json"), errc::parse_error,
                 "x.json:2:", "nested deeper than 100");
    // Brackets inside strings do not count.
    CHECK(ragpp::detail::parse_json("[\"" + repeat("[", 500) + "\"]", "x.json").size() == 1);

    const std::string deep = repeat("[", 5000) + repeat("]", 5000);
    ragpp_test::TempDir tmp;
    const auto tok = tmp.path / "tokenizer.json";
    write(tok, "{\"normalizer\": " + deep + ", \"model\": {}}");
    EXPECT_ERROR(ragpp::HfTokenizer::from_file(tok), errc::parse_error, tok.string() + ":1:", "nested deeper");
    const auto qs = tmp.path / "qs.json";
    write(qs, "[\n{\"question\": \"q\", \"relevant\": " + deep + "}]");
    EXPECT_ERROR(ragpp::read_questions(qs), errc::parse_error, qs.string() + ":2:", "nested deeper");
    const auto corpus = tmp.path / "corpus.jsonl";
    write(corpus, "{\"_id\": \"1\", \"text\": \"t\"}\n{\"_id\": \"2\", \"text\": " + deep + "}\n");
    EXPECT_ERROR(ragpp::read_beir_corpus(corpus), errc::parse_error, corpus.string() + ":2:", "nested deeper");
    const auto config = tmp.path / "config.json";
    write(config, "{\"model_type\": \"bert\", \"x\": " + deep + "}");
    EXPECT_ERROR(ragpp::TransformerConfig::from_file(config), errc::parse_error, config.string(), "nested deeper");
    const auto st = tmp.path / "deep.safetensors";
    write_safetensors(st, "{\"__metadata__\": " + deep + "}", "");
    EXPECT_ERROR(ragpp::SafeTensors(st), errc::format_error, st.string(), "nests deeper");
}

// --- sizes read from files ----------------------------------------------------------

// The tool's JSON writer (detail/json_dump.hpp) against nlohmann's own dump(indent, ' ',
// false, replace), the oracle: random trees of every type, strings of random bytes
// (controls, quotes, backslashes, valid and broken UTF-8: overlong forms, surrogates,
// code points past U+10FFFF, truncated sequences), numbers of random bits (NaN and
// infinities included), compact and indented.
TEST_CASE("hostile: the JSON writer writes what nlohmann's dump writes, to the byte", "[hostile][json]") {
    std::mt19937_64 rng(20261206);
    const std::string pieces[] = {"\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "\xED\xA0\x80", "\xF4\x90\x80\x80",
                                  "\xC0\xAF", "\xE0\x80\xAF", "\xC3", "\xE2\x82", "\xF0\x9F\x98", "\x7F", "\x80"};
    const auto random_string = [&] {
        std::string s;
        const auto n = rng() % 24;
        for (std::uint64_t i = 0; i < n; ++i) {
            switch (rng() % 6) {
            case 0: s += static_cast<char>(0x20 + rng() % 95); break;
            case 1: s += static_cast<char>(rng() % 32); break;
            case 2: s += "\"\\/"[rng() % 3]; break;
            case 3: s += static_cast<char>(rng() % 256); break;
            case 4: s += pieces[rng() % std::size(pieces)]; break;
            default: s += "plain ascii text "; break;
            }
        }
        return s;
    };
    std::function<nlohmann::json(int)> random_value = [&](int depth) -> nlohmann::json {
        switch (rng() % (depth > 3 ? 6 : 8)) {
        case 0: return nullptr;
        case 1: return rng() % 2 == 0;
        case 2: return static_cast<std::int64_t>(rng()) >> (rng() % 64);
        case 3: return static_cast<std::uint64_t>(rng());
        case 4: {
            double x = 0;
            if (rng() % 2 == 0) {
                const std::uint64_t bits = rng();
                std::memcpy(&x, &bits, sizeof x);
            } else {
                x = static_cast<double>(static_cast<std::int64_t>(rng() % 2000001) - 1000000) /
                    static_cast<double>(1 + rng() % 1000);
            }
            return x;
        }
        case 5: return random_string();
        case 6: {
            auto a = nlohmann::json::array();
            for (auto n = rng() % 5; n > 0; --n) a.push_back(random_value(depth + 1));
            return a;
        }
        default: {
            auto o = nlohmann::json::object();
            for (auto n = rng() % 5; n > 0; --n) o[random_string()] = random_value(depth + 1);
            return o;
        }
        }
    };
    std::size_t broken = 0;
    for (int t = 0; t < 20000; ++t) {
        const auto j = random_value(0);
        for (const int indent : {-1, 0, 2}) {
            const auto want = j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
            const auto got = ragpp::detail::dump_json(j, indent);
            if (got != want) {
                INFO("indent " << indent << "\nnlohmann: " << want << "\nragpp:    " << got);
                CHECK(got == want);
            }
            broken += want.find("\xEF\xBF\xBD") != std::string::npos ? 1 : 0;
        }
    }
    CHECK(broken > 1000);  // the fallback for broken UTF-8 was exercised
    // Appending keeps what the buffer held.
    std::string out = "prefix:";
    ragpp::detail::append_json(out, nlohmann::json{{"a", "b\xC3"}});
    CHECK(out == "prefix:{\"a\":\"b\xEF\xBF\xBD\"}");
    out = "x";
    ragpp::detail::append_json_string(out, std::string("tab\there \"q\" \x01 \xE2\x82\xAC"));
    CHECK(out == "x\"tab\\there \\\"q\\\" \\u0001 \xE2\x82\xAC\"");
}

TEST_CASE("hostile: tokenizer ids far beyond the file", "[hostile][tokenizer]") {
    // An id near 2^32 used to size the token table (4 billion strings) before any check.
    ragpp_test::TempDir tmp;
    const auto p = tmp.path / "tokenizer.json";
    write(p, R"({"model": {"type": "WordLevel", "vocab": {"a": 0, "b": 4294967295}}})");
    EXPECT_ERROR(ragpp::HfTokenizer::from_file(p), errc::format_error, p.string(), "vocab entry 'b'", "4294967295");
    write(p, R"({"model": {"type": "WordPiece", "vocab": {"a": 0, "b": 1099511627776}}})");  // 2^40: not even a uint32
    EXPECT_ERROR(ragpp::HfTokenizer::from_file(p), errc::format_error, p.string(), "1099511627776");
    write(p, R"({"model": {"type": "WordLevel", "vocab": {"a": 0}},
                 "added_tokens": [{"content": "<x>", "id": 4294967290}]})");
    EXPECT_ERROR(ragpp::HfTokenizer::from_file(p), errc::format_error, p.string(), "added token '<x>'", "4294967290");
    write(p, R"({"model": {"type": "WordLevel", "vocab": {"a": 0}},
                 "post_processor": {"type": "BertProcessing", "cls": ["a", 4294967296], "sep": ["a", 0]}})");
    EXPECT_ERROR(ragpp::HfTokenizer::from_file(p), errc::format_error, p.string(), "cls id 4294967296");
    // Ids that fit the file are fine, holes included.
    write(p, R"({"model": {"type": "WordLevel", "vocab": {"a": 0, "b": 7}}})");
    CHECK(ragpp::HfTokenizer::from_file(p).vocab_size() == 8);
    // A Model2Vec folder whose tokenizer.json has such an id fails on that file.
    const StaticModelDir m;
    m.tokenizer(R"({"model": {"type": "WordLevel", "vocab": {"a": 0, "b": 4294967295}}})");
    EXPECT_ERROR(ragpp::StaticEmbedder(m.dir), errc::format_error, "tokenizer.json", "4294967295");
}

TEST_CASE("hostile: fields of an unexpected type in JSON files", "[hostile][tokenizer]") {
    ragpp_test::TempDir tmp;
    const auto p = tmp.path / "tokenizer.json";
    write(p, R"({"model": {"type": "WordLevel", "vocab": {"a": 0}, "unk_token": 3}})");  // ignored: not a string
    CHECK(ragpp::HfTokenizer::from_file(p).vocab_size() == 1);
    write(p, R"({"model": {"type": "WordLevel", "vocab": {"a": "zero"}}})");
    EXPECT_ERROR(ragpp::HfTokenizer::from_file(p), errc::format_error, p.string(), "vocab entry 'a'");
    // modules.json with a "type" that is not a string (nlohmann's value() threw type_error).
    const StaticModelDir m;
    fs::create_directories(m.dir / "0_StaticEmbedding");
    fs::rename(m.dir / "model.safetensors", m.dir / "0_StaticEmbedding" / "model.safetensors");
    write(m.dir / "modules.json", R"([{"type": 7, "path": "x"}, {"type": ["Normalize"]}])");
    const ragpp::StaticEmbedder e(m.dir);
    CHECK_FALSE(e.normalize());
}

TEST_CASE("hostile: word-vector headers that the file cannot hold", "[hostile][word-vectors]") {
    // "2 2000000000" reserved 16 GB (and read 7.8 GB) before the format error; a
    // declared count beyond the file only sizes a reservation capped by the file.
    ragpp_test::TempDir tmp;
    const auto txt = tmp.path / "v.txt";
    write(txt, "2 2000000000\na 1 2\nb 3 4\n");
    EXPECT_ERROR(ragpp::WordVectors::load(txt), errc::format_error, txt.string(), "dimension 2000000000");
    write(txt, "2000000000 2\na 1 2\nb 3 4\n");
    EXPECT_ERROR(ragpp::WordVectors::load(txt), errc::format_error, txt.string(), "declares 2000000000 words");
    write(txt, "2 18446744073709551615\na 1 2\n");  // 2^64 - 1: 2 * dim + 2 would overflow
    EXPECT_ERROR(ragpp::WordVectors::load(txt), errc::format_error, txt.string(), "18446744073709551615");
    // The exact fit is accepted: two words of 2 values in the minimal 6 bytes each.
    write(txt, "2 2\na 1 2\nb 3 4\n");
    CHECK(ragpp::WordVectors::load(txt).size() == 2);

    const auto bin = tmp.path / "v.bin";
    write(bin, "1 2000000000\na " + floats({1, 2}));
    EXPECT_ERROR(ragpp::WordVectors::load(bin), errc::format_error, bin.string(), "dimension 2000000000");
    write(bin, "2000000000 2\na " + floats({1, 2}));
    EXPECT_ERROR(ragpp::WordVectors::load(bin), errc::format_error, bin.string(), "word 2 of 2000000000");
    write(bin, "0 4611686018427387904\n");  // dim * 4 overflows 64 bits
    EXPECT_ERROR(ragpp::WordVectors::load(bin), errc::format_error, bin.string());
    write(bin, "1 2\na " + floats({1, 2}));
    CHECK(ragpp::WordVectors::load(bin).dimension() == 2);
}

TEST_CASE("hostile: non-finite values and empty files", "[hostile][word-vectors][model2vec]") {
    ragpp_test::TempDir tmp;
    const auto txt = tmp.path / "v.txt";
    write(txt, "a 1 2\nb nan 4\n");
    EXPECT_ERROR(ragpp::WordVectors::load(txt), errc::parse_error, txt.string() + "':2:", "'nan'");
    const auto bin = tmp.path / "v.bin";
    write(bin, "1 2\na " + floats({1, std::numeric_limits<float>::quiet_NaN()}));
    EXPECT_ERROR(ragpp::WordVectors::load(bin), errc::format_error, bin.string(), "non-finite");
    write(txt, "");
    EXPECT_ERROR(ragpp::WordVectors::load(txt), errc::format_error, txt.string(), "no word vectors");
    write(bin, "");
    EXPECT_ERROR(ragpp::WordVectors::load(bin), errc::format_error, bin.string());

    const auto empty = tmp.path / "empty.json";
    write(empty, "");
    EXPECT_ERROR(ragpp::HfTokenizer::from_file(empty), errc::parse_error, empty.string());
    EXPECT_ERROR(ragpp::read_questions(empty), errc::parse_error, empty.string());
    EXPECT_ERROR(ragpp::TransformerConfig::from_file(empty), errc::parse_error, empty.string());
    const auto st = tmp.path / "empty.safetensors";
    write(st, "");
    EXPECT_ERROR(ragpp::SafeTensors(st), errc::format_error, st.string(), "too short");

    // Model2Vec embeddings: a NaN, an infinity, a 0-dimension model, NaN weights.
    StaticModelDir m;
    m.embeddings({2, 2}, floats({1, 0, 0, std::numeric_limits<float>::quiet_NaN()}));
    EXPECT_ERROR(ragpp::StaticEmbedder(m.dir), errc::format_error, "model.safetensors", "row 1", "non-finite");
    m.embeddings({2, 2}, floats({std::numeric_limits<float>::infinity(), 0, 0, 1}));
    EXPECT_ERROR(ragpp::StaticEmbedder(m.dir), errc::format_error, "model.safetensors", "row 0", "non-finite");
    m.embeddings({2, 0}, "");
    EXPECT_ERROR(ragpp::StaticEmbedder(m.dir), errc::format_error, "model.safetensors", "dimension 0");
    const std::string w = floats({1, 0, 0, 1});
    const std::string nan_weights = floats({1, std::numeric_limits<float>::quiet_NaN()});
    write_safetensors(m.dir / "model.safetensors",
                      R"({"embeddings": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},
                          "weights": {"dtype": "F32", "shape": [2], "data_offsets": [16, 24]}})",
                      w + nan_weights);
    EXPECT_ERROR(ragpp::StaticEmbedder(m.dir), errc::format_error, "model.safetensors", "weights[1]");
}

TEST_CASE("hostile: safetensors shapes and offsets", "[hostile][safetensors]") {
    ragpp_test::TempDir tmp;
    const auto p = tmp.path / "m.safetensors";
    // An extent of 2^60 beside a 0: zero bytes, but Eigen's signed index would overflow.
    write_safetensors(p, R"({"t": {"dtype": "F32", "shape": [0, 1152921504606846976], "data_offsets": [0, 0]}})", "");
    EXPECT_ERROR(ragpp::SafeTensors(p), errc::format_error, p.string(), "tensor 't'", "absurd shape");
    write_safetensors(p, R"({"t": {"dtype": "F32", "shape": [65536, 65536, 65537], "data_offsets": [0, 0]}})", "");
    EXPECT_ERROR(ragpp::SafeTensors(p), errc::format_error, p.string(), "absurd shape");
    write_safetensors(p, R"({"t": {"dtype": "F32", "shape": [2], "data_offsets": [0, 18446744073709551615]}})",
                      floats({1, 2}));
    EXPECT_ERROR(ragpp::SafeTensors(p), errc::format_error, p.string(), "outside the data");
    write_safetensors(p, R"({"t": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}})", floats({1, 2}));
    EXPECT_ERROR(ragpp::SafeTensors(p), errc::format_error, p.string(), "non-negative");
    // A header length of 2^64 - 1 in a 9-byte file.
    write(p, std::string(8, '\xff') + "{");
    EXPECT_ERROR(ragpp::SafeTensors(p), errc::format_error, p.string(), "header length");
    write_safetensors(p, R"({"t": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})", floats({1, 2}));
    CHECK(ragpp::SafeTensors(p).doubles("t") == std::vector<double>{1, 2});
}

TEST_CASE("hostile: transformer config sizes", "[hostile][transformer]") {
    const auto config = [](const std::string& extra) {
        return nlohmann::json::parse(R"({"model_type": "bert", "hidden_size": 32, "num_hidden_layers": 2,
            "num_attention_heads": 4, "intermediate_size": 64, "max_position_embeddings": 64, "vocab_size": 100)" +
                                     extra + "}");
    };
    CHECK(ragpp::TransformerConfig::from_json(config(""), "c.json").num_labels == 2);
    // num_labels made one string per label before anything bounded it.
    EXPECT_ERROR(ragpp::TransformerConfig::from_json(config(R"(, "num_labels": 4294967296)"), "c.json"),
                 errc::format_error, "c.json", "num_labels");
    EXPECT_ERROR(ragpp::TransformerConfig::from_json(config(R"(, "num_labels": 2097152)"), "c.json"), errc::format_error,
                 "c.json", "num_labels", "limit");
    EXPECT_ERROR(ragpp::TransformerConfig::from_json(config(R"(, "id2label": {"x": "a"})"), "c.json"),
                 errc::format_error, "c.json", "id2label key 'x'");
    EXPECT_ERROR(ragpp::TransformerConfig::from_json(config(R"(, "id2label": {"99999999999999999999999": "a"})"), "c.json"),
                 errc::format_error, "c.json", "id2label key");
    EXPECT_ERROR(ragpp::TransformerConfig::from_json(config(R"(, "max_position_embeddings": 1e30)"), "c.json"),
                 errc::format_error, "c.json", "max_position_embeddings");
}

// --- tokens -------------------------------------------------------------------------

TEST_CASE("hostile: a huge token is not stemmed", "[hostile][porter]") {
    // Porter's consonant test recurses over a run of 'y': this word took 55 s.
    const ragpp::text::PorterStemmer porter;
    const std::string huge = "a" + std::string(100000, 'y') + "ing";
    CHECK(porter.stem(huge) == huge);
    // At the limit words are still stemmed, by hand: step 1b drops -ing, then one of the
    // doubled final consonants (the y at odd index 251 is a consonant: a, y, y... alternate
    // vowel and consonant), step 1c turns the last y into i.
    const std::string limit = "a" + std::string(ragpp::text::PorterStemmer::max_word_bytes - 4, 'y') + "ing";
    REQUIRE(limit.size() == ragpp::text::PorterStemmer::max_word_bytes);
    CHECK(porter.stem(limit) == "a" + std::string(limit.size() - 6, 'y') + "i");
}

// --- text that is not UTF-8 ---------------------------------------------------------

TEST_CASE("hostile: question sets and qrels with invalid UTF-8 fail when read", "[hostile][questions]") {
    // Accepted before, the TSV only failed when eval --json wrote its report.
    ragpp_test::TempDir tmp;
    const auto tsv = tmp.path / "qs.tsv";
    write(tsv, "good question\ta.md:1\nbad \xff question\ta.md:2\n");
    EXPECT_ERROR(ragpp::read_questions(tsv), errc::parse_error, tsv.string() + ":2", "invalid UTF-8");
    write(tsv, "question\ta.md:\xc3\n");  // a truncated sequence in a label
    EXPECT_ERROR(ragpp::read_questions(tsv), errc::parse_error, tsv.string() + ":1", "invalid UTF-8");
    const auto json = tmp.path / "qs.json";
    write(json, "[\n{\"question\": \"bad \xff\", \"relevant\": []}]");
    EXPECT_ERROR(ragpp::read_questions(json), errc::parse_error, json.string() + ":2", "invalid JSON");
    const auto qrels = tmp.path / "test.tsv";
    write(qrels, "query-id\tcorpus-id\tscore\nq1\td\xfe\t1\n");
    EXPECT_ERROR(ragpp::read_beir_qrels(qrels), errc::parse_error, qrels.string() + ":2", "invalid UTF-8");
    write(qrels, "q1\td1\tnan\n");
    EXPECT_ERROR(ragpp::read_beir_qrels(qrels), errc::parse_error, qrels.string() + ":1", "'nan'");
    write(qrels, "q1\td1\t1e999\n");
    EXPECT_ERROR(ragpp::read_beir_qrels(qrels), errc::parse_error, qrels.string() + ":1", "'1e999'");
    write(qrels, "q1\td1\t2\n");
    CHECK(ragpp::read_beir_qrels(qrels).at("q1").at("d1") == 2.0);
}

// --- paths ----------------------------------------------------------------------------

TEST_CASE("hostile: missing and unusable paths are IoError naming them", "[hostile][io]") {
    ragpp_test::TempDir tmp;
    const auto missing = tmp.path / "missing";
    EXPECT_ERROR(ragpp::StaticEmbedder(missing), errc::io_error, missing.string());
    EXPECT_ERROR(ragpp::TransformerEmbedder(missing), errc::io_error, missing.string());
    EXPECT_ERROR(ragpp::HfTokenizer::from_file(missing), errc::io_error, missing.string());
    EXPECT_ERROR(ragpp::WordVectors::load(missing), errc::io_error, missing.string());
    EXPECT_ERROR(ragpp::SafeTensors(missing), errc::io_error, missing.string());
    EXPECT_ERROR(ragpp::read_questions(missing), errc::io_error, missing.string());
    // A name longer than the system allows made std::filesystem throw filesystem_error.
    const fs::path too_long = tmp.path / std::string(5000, 'x');
    EXPECT_ERROR(ragpp::StaticEmbedder(too_long), errc::io_error, "is not a folder");
    EXPECT_ERROR(ragpp::TransformerEmbedder(too_long), errc::io_error, "is not a folder");
    EXPECT_ERROR(ragpp::read_questions(too_long), errc::io_error, "cannot open");
    // A folder where an index file is expected: it opens as a stream whose size reads as
    // 2^63 - 1, and the whole-file read threw std::bad_alloc.
    using Vectors = ragpp::VectorIndex<ragpp::HashingEmbedder>;
    EXPECT_ERROR(Vectors::load(tmp.path, ragpp::HashingEmbedder{}), errc::io_error, tmp.path.string(), "directory");
    EXPECT_ERROR(Vectors::load(missing, ragpp::HashingEmbedder{}), errc::io_error, missing.string());
    // A folder where a text file is expected read as an empty file.
    fs::create_directories(tmp.path / "corpus.jsonl");
    EXPECT_ERROR(ragpp::read_beir_corpus(tmp.path / "corpus.jsonl"), errc::io_error, "corpus.jsonl", "directory");
    EXPECT_ERROR(ragpp::parse_questions_json(ragpp::detail::read_file(tmp.path / "corpus.jsonl")), errc::io_error,
                 "directory");
    // An empty folder is not a model.
    EXPECT_ERROR(ragpp::StaticEmbedder(tmp.path), errc::io_error, tmp.path.string(), "no model.safetensors");
}
