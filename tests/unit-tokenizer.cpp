// Tests for ragpp/text/tokenizer.hpp: UAX #29 word boundaries against the Unicode
// Consortium's own test file, and the identifier grouping on top of them.
#include <catch2/catch.hpp>

#include <ragpp/text/tokenizer.hpp>

#include <cstdlib>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace ragpp::text;

namespace {
/// The pieces the tokenizer reports: compounds as "a|b|c".
std::vector<std::string> pieces(std::string_view text, TokenizerOptions o = {}) {
    std::vector<std::string> out;
    Tokenizer(o).tokenize(text, [&](const TokenPiece* p, std::size_t n) {
        std::string s;
        for (std::size_t i = 0; i < n; ++i) {
            if (i) s += '|';
            s += p[i].text;
        }
        out.push_back(s);
    });
    return out;
}
using V = std::vector<std::string>;
}  // namespace

TEST_CASE("word boundaries match every case of WordBreakTest.txt (UAX #29)", "[tokenizer]") {
    const char* path = "/usr/share/unicode/auxiliary/WordBreakTest.txt";  // Debian's unicode-data
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
        std::string tok, text;
        std::set<std::size_t> expected;
        while (fields >> tok) {
            if (tok == "\xC3\xB7") expected.insert(text.size());  // ÷ marks a boundary
            else if (tok != "\xC3\x97") append_utf8(text, static_cast<char32_t>(std::stoul(tok, nullptr, 16)));
        }
        std::set<std::size_t> got{0};
        for_each_word_segment(text, [&](std::size_t, std::size_t e, unsigned) { got.insert(e); });
        ++cases;
        if (got != expected) {
            ++failures;
            UNSCOPED_INFO("mismatch: " << line);
        }
    }
    CHECK(cases > 1000);
    CHECK(failures == 0);
}

TEST_CASE("identifiers give their parts, grouped", "[tokenizer]") {
    CHECK(pieces("MX-200") == V{"MX|200"});
    CHECK(pieces("ORA-01555") == V{"ORA|01555"});
    CHECK(pieces("Article L.122-4") == V{"Article", "L|122|4"});
    CHECK(pieces("L. 122-4") == V{"L", "122|4"});  // a space ends the compound
    CHECK(pieces("facture 2026-0418") == V{"facture", "2026|0418"});
    CHECK(pieces("CMAKE_CXX_STANDARD") == V{"CMAKE|CXX|STANDARD"});
    CHECK(pieces("std::vector<int>") == V{"std|vector", "int"});
    CHECK(pieces("v2.3.1") == V{"v|2.3.1"});
    CHECK(pieces("mx200") == V{"mx|200"});
    CHECK(pieces("a---b") == V{"a", "b"});  // three connectors: not an identifier
    TokenizerOptions plain;
    plain.identifiers = false;
    CHECK(pieces("MX-200 mx200 v2.3.1", plain) == V{"MX", "200", "mx200", "v2.3.1"});
    TokenizerOptions no_digit_split;
    no_digit_split.split_letter_digit = false;
    CHECK(pieces("mx200 MX-200", no_digit_split) == V{"mx200", "MX|200"});
}

TEST_CASE("numbers stay whole, apostrophes stay inside words", "[tokenizer]") {
    CHECK(pieces("4,5 % et 14,2") == V{"4,5", "et", "14,2"});
    CHECK(pieces("3.14 and 1,000,000") == V{"3.14", "and", "1,000,000"});
    CHECK(pieces("l'avenant l’avenant aujourd'hui") == V{"l'avenant", "l\xE2\x80\x99" "avenant", "aujourd'hui"});
    CHECK(pieces("don't, e.g. this.") == V{"don't", "e|g", "this"});
}

TEST_CASE("scripts: ideographs, kana, hangul, Thai, emoji", "[tokenizer]") {
    CHECK(pieces("東京タワーに") == V{"東", "京", "タワー", "に"});
    CHECK(pieces("한국어 텍스트") == V{"한국어", "텍스트"});
    CHECK(pieces("ภาษาไทย ok") == V{"ภาษาไทย", "ok"});
    CHECK(pieces("a 👨\u200D👩\u200D👧 b 🇫🇷🇩🇪") == V{"a", "👨\u200D👩\u200D👧", "b", "🇫🇷", "🇩🇪"});
    CHECK(pieces("na\u0308ive") == V{"na\u0308ive"});  // a combining mark stays in its word
    TokenizerOptions cjk;
    cjk.cjk_runs = true;
    CHECK(pieces("東京タワーに行く。日本 abc", cjk) == V{"東京タワーに行く", "日本", "abc"});
}

TEST_CASE("random bytes never crash and pieces are valid UTF-8 slices", "[tokenizer]") {
    std::mt19937 rng(GENERATE(take(100, random(1u, 1000000u))));
    std::uniform_int_distribution<int> byte(0, 255), len(0, 200);
    std::string s;
    for (int i = len(rng); i > 0; --i) s.push_back(static_cast<char>(byte(rng)));
    for (bool cjk : {false, true}) {
        TokenizerOptions o;
        o.cjk_runs = cjk;
        Tokenizer(o).tokenize(s, [&](const TokenPiece* p, std::size_t n) {
            REQUIRE(n >= 1);
            for (std::size_t i = 0; i < n; ++i) {
                CHECK_FALSE(p[i].text.empty());
                CHECK(is_valid_utf8(p[i].text));
                CHECK(p[i].text.data() >= s.data());
                CHECK(p[i].text.data() + p[i].text.size() <= s.data() + s.size());
            }
        });
    }
}
