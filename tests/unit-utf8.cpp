// Tests for ragpp/text/utf8.hpp: decoding, replacement by maximal subparts, strict mode.
#include <catch2/catch.hpp>

#include <ragpp/text/utf8.hpp>

#include <random>
#include <string>
#include <vector>

using namespace ragpp::text;

namespace {
std::u32string decode_all(std::string_view s) {
    std::u32string out;
    for_each_code_point(s, [&](char32_t c, std::size_t, std::size_t) { out.push_back(c); });
    return out;
}
}  // namespace

TEST_CASE("decode_utf8 decodes each encoding length", "[utf8]") {
    CHECK(decode_all("a") == U"a");
    CHECK(decode_all("\xC3\xA9") == U"\u00E9");           // é
    CHECK(decode_all("\xE2\x82\xAC") == U"\u20AC");       // €
    CHECK(decode_all("\xF0\x9F\x98\x80") == U"\U0001F600");  // 😀
    CHECK(decode_all("\xF4\x8F\xBF\xBF") == U"\U0010FFFF");
    const auto c = decode_utf8("x\xE2\x82\xAC", 1);
    CHECK(c.valid);
    CHECK(c.length == 3);
}

TEST_CASE("ill-formed sequences become one U+FFFD per maximal subpart", "[utf8]") {
    constexpr char32_t R = replacement_character;
    // The example of the Unicode Standard, section 3.9 (U+FFFD substitution of maximal subparts).
    CHECK(decode_all("\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64") ==
          std::u32string{U'a', R, R, R, U'b', R, U'c', R, R, U'd'});
    CHECK(decode_all("\xC0\xAF") == std::u32string{R, R});                  // overlong '/'
    CHECK(decode_all("\xE0\x80\xAF") == std::u32string{R, R, R});           // overlong, bad second byte
    CHECK(decode_all("\xED\xA0\x80") == std::u32string{R, R, R});           // surrogate U+D800
    CHECK(decode_all("\xF4\x90\x80\x80") == std::u32string{R, R, R, R});    // above U+10FFFF
    CHECK(decode_all("\xE2\x82" "A") == std::u32string{R, U'A'});           // truncated then ASCII
    CHECK(decode_all("\xF0\x9F\x98") == std::u32string{R});                 // truncated at the end
    CHECK(decode_all("\xFF") == std::u32string{R});
}

TEST_CASE("to_valid_utf8 replaces, strict mode throws ParseError naming the offset", "[utf8]") {
    CHECK(to_valid_utf8("ok \xC3\xA9") == "ok \xC3\xA9");
    CHECK(to_valid_utf8("a\xFF" "b") == "a\xEF\xBF\xBD" "b");
    CHECK(is_valid_utf8("caf\xC3\xA9"));
    CHECK_FALSE(is_valid_utf8("caf\xC3"));
    CHECK(find_invalid_utf8("abc\xE2\x82") == 3);
    CHECK_THROWS_AS(validate_utf8("ab\xC3"), ragpp::ParseError);
    CHECK_THROWS_WITH(validate_utf8("ab\xC3", "corpus.jsonl"),
                      Catch::Contains("corpus.jsonl") && Catch::Contains("byte offset 2") &&
                          Catch::Contains("truncated"));
    CHECK_THROWS_WITH(to_valid_utf8("abcd\x80", Utf8Errors::strict), Catch::Contains("byte offset 4") &&
                                                                           Catch::Contains("continuation"));
    CHECK_THROWS_AS(for_each_code_point("\xC0", [](char32_t, std::size_t, std::size_t) {}, Utf8Errors::strict),
                    ragpp::ParseError);
}

TEST_CASE("append_utf8 round-trips every scalar value", "[utf8]") {
    std::string s;
    for (char32_t c = 0; c <= 0x10FFFF; c += (c < 0x800 ? 1 : 97)) {
        if (c >= 0xD800 && c <= 0xDFFF) continue;
        s.clear();
        append_utf8(s, c);
        const auto d = decode_utf8(s, 0);
        REQUIRE(d.valid);
        REQUIRE(d.code_point == c);
        REQUIRE(d.length == s.size());
    }
    s.clear();
    append_utf8(s, 0xD800);  // not a scalar value
    CHECK(s == "\xEF\xBF\xBD");
}

TEST_CASE("random bytes: the repaired text is valid and decoding never overruns", "[utf8]") {
    std::mt19937 rng(GENERATE(take(50, random(1u, 1000000u))));
    std::uniform_int_distribution<int> byte(0, 255), len(0, 64);
    std::string s;
    for (int i = len(rng); i > 0; --i) s.push_back(static_cast<char>(byte(rng)));
    const std::string v = to_valid_utf8(s);
    CHECK(is_valid_utf8(v));
    if (is_valid_utf8(s)) CHECK(v == s);
    std::size_t covered = 0;
    for_each_code_point(s, [&](char32_t, std::size_t off, std::size_t n) {
        CHECK(off == covered);
        covered += n;
    });
    CHECK(covered == s.size());
}
