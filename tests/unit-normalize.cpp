// Tests for ragpp/text/normalize.hpp: case folding, compatibility folding, diacritics.
// Expected values are checked by hand against the Unicode Character Database.
#include <catch2/catch.hpp>

#include <ragpp/text/normalize.hpp>

#include <random>
#include <string>

using namespace ragpp::text;

namespace {
std::string fold(std::string_view s) { return normalize(s, {false}); }
std::string bare(std::string_view s) { return normalize(s, {true}); }
}  // namespace

TEST_CASE("full case folding", "[normalize]") {
    CHECK(fold("HELLO World") == "hello world");
    CHECK(fold("ÉTÉ") == "été");
    CHECK(fold("Straße") == "strasse");        // ß -> ss (full folding, status F)
    CHECK(fold("ẞ") == "ss");                  // U+1E9E capital sharp s
    CHECK(fold("ΣΊΣΥΦΟΣ") == "σίσυφοσ");        // final and non-final sigma fold alike
    CHECK(fold("ς") == "σ");
    CHECK(fold("ПРИВЕТ") == "привет");
    CHECK(fold("İ") == "i\xCC\x87");           // U+0130 -> i + combining dot above
    CHECK(fold("ǅ") == "dž");                  // title-case digraph: compatibility + case
}

TEST_CASE("compatibility folding of full-width forms, ligatures and superscripts", "[normalize]") {
    CHECK(fold("ＡＢＣ１２３") == "abc123");
    CHECK(fold("ﬁnance ﬂux") == "finance flux");
    CHECK(fold("ｶﾞ") == "ガ");  // half-width katakana + half-width voicing mark, composed
    CHECK(fold("x²") == "x2");
    CHECK(fold("ŒUVRE cœur Æsir") == "oeuvre coeur aesir");
    CHECK(fold("l’avenant") == "l'avenant");   // U+2019 -> '
    CHECK(fold("co\xC2\xADop\xE2\x80\x8B") == "coop");  // soft hyphen, zero-width space removed
}

TEST_CASE("diacritics removed by canonical decomposition", "[normalize]") {
    CHECK(bare("é ç ñ ö Å") == "e c n o a");
    CHECK(bare("préavis") == "preavis");
    CHECK(bare("ÉTÉ") == "ete");
    CHECK(bare("ά έ ΐ") == "α ε ι");            // Greek tonos, dialytika
    CHECK(bare("йод ёж") == "иод еж");          // Unicode decomposes й = и + U+0306, ё = е + U+0308
    CHECK(bare("ø ł đ") == "ø ł đ");            // no canonical decomposition: kept
    CHECK(bare("が") == "が");                   // Japanese voicing mark is not a diacritic here
    CHECK(bare("e\xCC\x81t\xC3\xA9") == "ete");  // decomposed and precomposed
    CHECK(fold("e\xCC\x81t\xC3\xA9") == "\xC3\xA9t\xC3\xA9");  // decomposed input composed
    CHECK(strip_diacritics("Ça") == "ca");
}

TEST_CASE("normalization is idempotent and strip(fold(x)) == strip(x) on random text", "[normalize]") {
    std::mt19937 rng(GENERATE(take(40, random(1u, 1000000u))));
    // Random code points from ranges with many mappings (Latin, Greek, Cyrillic,
    // combining marks, full-width, ligatures) plus random bytes.
    const char32_t ranges[][2] = {{0x20, 0x7E},     {0xC0, 0x24F},   {0x300, 0x36F},  {0x370, 0x3FF},
                                  {0x400, 0x4FF},   {0x1E00, 0x1FFF}, {0xFB00, 0xFB06}, {0xFF01, 0xFF9F},
                                  {0x3040, 0x30FF}, {0x1F300, 0x1F6FF}};
    std::uniform_int_distribution<std::size_t> pick(0, std::size(ranges) - 1);
    std::string s;
    for (int i = 0; i < 40; ++i) {
        const auto& r = ranges[pick(rng)];
        append_utf8(s, std::uniform_int_distribution<char32_t>(r[0], r[1])(rng));
    }
    s.push_back(static_cast<char>(0xE2));  // a truncated sequence
    const std::string f = fold(s), b = bare(s);
    CHECK(is_valid_utf8(f));
    CHECK(is_valid_utf8(b));
    CHECK(fold(f) == f);
    CHECK(bare(b) == b);
    CHECK(bare(f) == b);
}
