#include <ragpp/embed/word_vectors.hpp>
#include <ragpp/index/vector.hpp>
#include <ragpp/text/whitespace.hpp>

#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "support.hpp"

using ragpp::WordVectors;
using Format = ragpp::WordVectors::Format;

namespace {
/// A tiny analyzer of the test's own: lowercased ASCII whitespace-separated words.
struct LowerAnalyzer {
    void analyze(std::string_view text, std::vector<std::string>& out) const {
        std::vector<std::string> words;
        ragpp::WhitespaceAnalyzer{}.analyze(text, words);
        for (auto& w : words) {
            for (auto& c : w) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
            out.push_back(w);
        }
    }
    [[nodiscard]] static std::string_view name() { return "lower"; }
};

void write(const std::filesystem::path& p, const std::string& s) {
    std::ofstream(p, std::ios::binary | std::ios::trunc) << s;
}
}  // namespace

TEST_CASE("word2vec text and binary files of the same vectors load identically", "[word-vectors]") {
    const auto txt = WordVectors::load(ragpp_test::require_shared("fixtures/sentencepiece/nl.wiki.bpe.vs1000.d25.w2v.txt"));
    const auto bin = WordVectors::load(ragpp_test::require_shared("fixtures/sentencepiece/nl.wiki.bpe.vs1000.d25.w2v.bin"));
    CHECK(txt.size() == 1000);
    CHECK(txt.dimension() == 25);
    CHECK(bin.size() == 1000);
    CHECK(bin.dimension() == 25);
    CHECK(txt.words() == bin.words());
    CHECK((txt.matrix() - bin.matrix()).cwiseAbs().maxCoeff() <= 1e-6F);
    CHECK(txt.vector("<unk>")[0] == Approx(-0.9316530227661133));
    CHECK(txt.contains("\xE2\x96\x81" "de"));  // "▁de"
    CHECK(txt.duplicates() == 0);
    // max_words keeps the first words.
    const auto first10 = WordVectors::load(ragpp_test::require_shared("fixtures/sentencepiece/nl.wiki.bpe.vs1000.d25.w2v.bin"),
                                           Format::automatic, 10);
    CHECK(first10.size() == 10);
    CHECK(first10.matrix() == bin.matrix().topRows(10));
}

TEST_CASE("GloVe text (no header) is detected and read", "[word-vectors]") {
    ragpp_test::TempDir dir;
    write(dir.path / "g.txt", "the 0.5 -1.25 2\r\ncat 1e-3 0 -4\n\ndog 3 3 3\nthe 9 9 9\n");
    const auto g = WordVectors::load(dir.path / "g.txt");
    CHECK(g.size() == 3);
    CHECK(g.dimension() == 3);
    CHECK(g.duplicates() == 1);
    CHECK(g.vector("the") == Eigen::Vector3f(0.5F, -1.25F, 2.0F));  // the first occurrence
    CHECK(g.vector("cat")[0] == 1e-3F);
    CHECK_THROWS_AS(g.vector("cow"), ragpp::NotFoundError);
}

TEST_CASE("word vector files: malformed input is refused with file and line", "[word-vectors]") {
    ragpp_test::TempDir dir;
    const auto p = dir.path / "v.txt";
    write(p, "2 3\na 1 2 3\nb 1 2\n");
    CHECK_THROWS_AS(WordVectors::load(p), ragpp::ParseError);
    CHECK_THROWS_WITH(WordVectors::load(p), Catch::Contains("v.txt':3") && Catch::Contains("2 values, expected 3"));
    write(p, "2 3\na 1 2 x\nb 1 2 3\n");
    CHECK_THROWS_WITH(WordVectors::load(p), Catch::Contains("v.txt':2") && Catch::Contains("'x'"));
    write(p, "3 2\na 1 2\nb 1 2\n");
    CHECK_THROWS_AS(WordVectors::load(p, Format::word2vec_text), ragpp::FormatError);  // header says 3
    write(p, "");
    CHECK_THROWS_AS(WordVectors::load(p, Format::glove_text), ragpp::FormatError);
    const auto b = dir.path / "v.bin";
    std::string bin = "2 2\na ";
    const float v[2] = {1.0F, 2.0F};
    bin.append(reinterpret_cast<const char*>(v), 8);
    bin += "\nb ";
    bin.append(reinterpret_cast<const char*>(v), 5);  // truncated
    write(b, bin);
    CHECK_THROWS_AS(WordVectors::load(b), ragpp::FormatError);
    CHECK_THROWS_WITH(WordVectors::load(b), Catch::Contains("v.bin") && Catch::Contains("'b'"));
    CHECK_THROWS_AS(WordVectors::load(dir.path / "none.txt"), ragpp::IoError);
}

TEST_CASE("WordVectorEmbedder: the mean of known words, by hand, unknown words skipped", "[word-vectors]") {
    ragpp_test::TempDir dir;
    write(dir.path / "w.txt", "2 2\na 1 0\nb 0 2\n");
    auto wv = std::make_shared<const WordVectors>(WordVectors::load(dir.path / "w.txt"));
    ragpp::WordVectorOptions raw;
    raw.normalize = false;
    const ragpp::WordVectorEmbedder<LowerAnalyzer> mean(wv, {}, raw);
    // "A b zzz a": a, b, a known (zzz skipped): ((1,0) + (0,2) + (1,0)) / 3.
    const auto v = mean.embed("A b zzz a");
    CHECK(v[0] == Approx(2.0 / 3.0));
    CHECK(v[1] == Approx(2.0 / 3.0));
    CHECK(mean.coverage("A b zzz a") == std::pair<std::size_t, std::size_t>{3, 4});
    CHECK(mean.embed("zzz yyy").isZero());
    const ragpp::WordVectorEmbedder<LowerAnalyzer> unit(wv);
    CHECK(unit.embed("A b zzz a")[0] == Approx(std::sqrt(0.5)));
    CHECK(unit.name().find("analyzer=lower") != std::string::npos);
    static_assert(ragpp::Embedder<ragpp::WordVectorEmbedder<LowerAnalyzer>>);
    // In a VectorIndex.
    ragpp::VectorIndex<ragpp::WordVectorEmbedder<LowerAnalyzer>> idx(unit);
    idx.add_document(0, {"x", "b b", {}});
    idx.add_document(1, {"y", "a", {}});
    const auto hits = idx.search("A", 2);
    REQUIRE(hits.size() == 2);
    CHECK(hits[0].id == 1);
    CHECK(hits[0].score == Approx(1.0F));
    CHECK(hits[1].score == Approx(0.0F).margin(1e-6));
}
