// Tests for ragpp/text/analyzer.hpp: golden terms for tricky strings in each language,
// identifiers findable in every spelling, documents and queries analyzed alike,
// random bytes.
#include <catch2/catch.hpp>

#include <ragpp/text/analyzer.hpp>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

using ragpp::analyze;
using V = std::vector<std::string>;

namespace {
template <class A>
bool share_a_term(const A& a, std::string_view x, std::string_view y) {
    const auto tx = analyze(a, x), ty = analyze(a, y);
    const std::set<std::string> sx(tx.begin(), tx.end());
    return std::any_of(ty.begin(), ty.end(), [&](const std::string& t) { return sx.count(t) > 0; });
}
}  // namespace

TEST_CASE("standard: case fold, compatibility fold, diacritics, identifiers", "[analyzer]") {
    const ragpp::StandardAnalyzer a;
    CHECK(analyze(a, "ÉTÉ à Paris") == V{"ete", "a", "paris"});
    CHECK(analyze(a, "ＡＢＣ１２３ ﬁnal") == V{"abc", "123", "abc123", "final"});
    CHECK(analyze(a, "MX-200") == V{"mx", "200", "mx200"});
    CHECK(analyze(a, "ORA-01555") == V{"ora", "01555", "ora01555"});
    CHECK(analyze(a, "Article L.122-4") == V{"article", "l", "122", "4", "l1224"});
    CHECK(analyze(a, "facture 2026-0418") == V{"facture", "2026", "0418", "20260418"});
    CHECK(analyze(a, "CMAKE_CXX_STANDARD") == V{"cmake", "cxx", "standard", "cmakecxxstandard"});
    CHECK(analyze(a, "std::vector") == V{"std", "vector", "stdvector"});
    CHECK(analyze(a, "v2.3.1") == V{"v", "2.3.1", "v2.3.1"});
    CHECK(analyze(a, "4,5 % et 14,2") == V{"4,5", "et", "14,2"});
    CHECK(analyze(a, "Ελληνικά Русский Ёлка") == V{"ελληνικα", "русский", "елка"});
    CHECK(analyze(a, "naı\u0308ve cafe\u0301") == V{"naıve", "cafe"});  // combining marks
    CHECK(analyze(a, "co\u00ADop\u200Deration") == V{"cooperation"});   // soft hyphen, ZWJ inside a word
    CHECK(analyze(a, "I ❤️ 👩🏽\u200D💻 🇫🇷!") == V{"i", "❤", "👩🏽\u200D💻", "🇫🇷"});
    CHECK(analyze(a, "東京 and Москва") == V{"東", "京", "and", "москва"});
}

TEST_CASE("\"MX-200\", \"MX 200\" and \"mx200\" share terms in every analyzer", "[analyzer]") {
    const char* spellings[] = {"MX-200", "MX 200", "mx200", "Mx.200", "MX_200"};
    ragpp::with_analyzer("standard", [&](const auto& a) {
        for (const char* d : spellings)
            for (const char* q : spellings) {
                INFO(d << " / " << q);
                CHECK(share_a_term(a, std::string("contrat ") + d + " signé", q));
            }
    });
    for (auto name : ragpp::analyzer_names) {
        ragpp::with_analyzer(name, [&](const auto& a) {
            for (const char* d : spellings)
                for (const char* q : spellings) {
                    INFO(name << ": " << d << " / " << q);
                    CHECK(share_a_term(a, d, q));
                }
            CHECK(share_a_term(a, "ORA-01555", "ora01555"));
            CHECK(share_a_term(a, "CMAKE_CXX_STANDARD", "cmake cxx standard"));
            CHECK(share_a_term(a, "L.122-4", "L. 122-4"));
            CHECK(share_a_term(a, "std::vector", "stdvector"));
            CHECK_FALSE(share_a_term(a, "MX-200", "ORA-01555"));
        });
    }
}

TEST_CASE("english: possessives, Lucene's stop words, Porter", "[analyzer][english]") {
    const ragpp::EnglishAnalyzer a;
    CHECK(analyze(a, "The cat's toys are in the box") == V{"cat", "toi", "box"});
    CHECK(analyze(a, "John’s caresses and ponies") == V{"john", "caress", "poni"});
    CHECK(analyze(a, "Relational conditional generalizations") == V{"relat", "condit", "gener"});
    CHECK(analyze(a, "IL-6 levels") == V{"il", "6", "il6", "level"});
    CHECK(analyze(a, "don't stop") == V{"don't", "stop"});
    CHECK(analyze(a, "naïve café") == V{"naiv", "cafe"});
    CHECK(analyze(a, "this is not such a thing") == V{"thing"});
    CHECK(ragpp::text::english_stop_words().size() == 33);
}

TEST_CASE("french: elisions with both apostrophes, stop words, light stemming, accents", "[analyzer][french]") {
    const ragpp::FrenchAnalyzer a;
    // An elided article is not an identifier: no joined form "lavenant".
    CHECK(analyze(a, "l'avenant") == V{"avenant"});
    CHECK(analyze(a, "l’avenant") == V{"avenant"});
    CHECK(analyze(a, "L’AVENANT") == V{"avenant"});
    CHECK(analyze(a, "L'avenant MX-200") == V{"avenant", "mx", "200", "mx200"});
    CHECK(analyze(a, "lavenant") == V{"lavenant"});
    CHECK(analyze(a, "aujourd'hui") == V{"aujourd'hui"});
    CHECK(analyze(a, "aujourd’hui") == V{"aujourd'hui"});
    CHECK(analyze(a, "qu'il soit résiliée") == V{"resili"});
    CHECK(analyze(a, "jusqu’à l'été") == V{});
    CHECK(analyze(a, "ÉTÉ") == V{});  // "été" is a form of être
    CHECK(analyze(a, "Les préavis du contrat") == V{"preavi", "contrat"});
    CHECK(analyze(a, "preavis") == analyze(a, "préavis"));
    CHECK(analyze(a, "d'avenants") == V{"avenant"});
    CHECK(analyze(a, "Taux de 4,5 % soit 14,2 euros") == V{"tau", "4,5", "14,2", "euro"});
    CHECK(analyze(a, "Article L. 122-4") == V{"articl", "122", "4", "1224"});  // "l" is a stop word
    CHECK(analyze(a, "chevaux et bateaux") == V{"cheval", "bateau"});
    CHECK(share_a_term(a, "préavis de résiliation", "preavis"));
    CHECK_FALSE(share_a_term(a, "Signez l'avenant", "lavenant"));
    // The joined form stays available as an option.
    ragpp::AnalyzerOptions o = ragpp::FrenchAnalyzer::options();
    o.elision_joined_form = true;
    const ragpp::CustomAnalyzer joined("french-joined", o, ragpp::text::FrenchLightStemmer{});
    CHECK(analyze(joined, "l'avenant") == V{"avenant", "lavenant"});
}

TEST_CASE("cjk: overlapping bigrams over Han, kana and Hangul runs", "[analyzer][cjk]") {
    const ragpp::CjkAnalyzer a;
    CHECK(analyze(a, "東京都") == V{"東京", "京都"});
    CHECK(analyze(a, "日") == V{"日"});
    CHECK(analyze(a, "東京タワーに行く") == V{"東京", "京タ", "タワ", "ワー", "ーに", "に行", "行く"});
    CHECK(analyze(a, "한국어 텍스트") == V{"한국", "국어", "텍스", "스트"});
    CHECK(analyze(a, "ｶﾞｲﾄﾞ") == analyze(a, "ガイド"));  // half-width katakana folded
    CHECK(analyze(a, "日本語 MX-200 Café") == V{"日本", "本語", "mx", "200", "mx200", "cafe"});
    CHECK(share_a_term(a, "東京タワーは高い", "東京"));
}

TEST_CASE("documents and queries are analyzed identically, appending in text order", "[analyzer]") {
    const std::string text = "L’avenant MX-200 du 14,2 % — ÉTÉ 2026, 東京タワー, p53's";
    for (auto name : ragpp::analyzer_names) {
        ragpp::with_analyzer(name, [&](const auto& a) {
            V once = analyze(a, text);
            V twice{"kept"};
            a.analyze(text, twice);
            REQUIRE(twice.size() == once.size() + 1);
            CHECK(V(twice.begin() + 1, twice.end()) == once);
            // a text analyzed in two halves gives the terms of each half in order
            V split;
            a.analyze("L’avenant MX-200", split);
            a.analyze("du 14,2 %", split);
            CHECK(V(once.begin(), once.begin() + static_cast<std::ptrdiff_t>(split.size())) == split);
        });
    }
}

TEST_CASE("with_analyzer rejects unknown names, listing the valid ones", "[analyzer]") {
    CHECK(ragpp::with_analyzer("english", [](const auto& a) { return std::string(a.name()); }) == "english");
    CHECK_THROWS_AS(ragpp::with_analyzer("klingon", [](const auto&) {}), ragpp::InvalidArgument);
    CHECK_THROWS_WITH(ragpp::with_analyzer("klingon", [](const auto&) {}),
                      Catch::Contains("klingon") && Catch::Contains("standard, english, french, cjk"));
}

TEST_CASE("a custom analyzer takes any stemmer callable", "[analyzer]") {
    ragpp::AnalyzerOptions o;
    o.stop_words = &ragpp::text::english_stop_words();
    const ragpp::CustomAnalyzer custom("prefix4", o, [](std::string_view w) { return std::string(w.substr(0, 4)); });
    CHECK(custom.name() == "prefix4");
    CHECK(analyze(custom, "The Relational databases") == V{"rela", "data"});
    static_assert(ragpp::Analyzer<decltype(custom)>);
}

TEST_CASE("random bytes never crash and always give non-empty valid UTF-8 terms", "[analyzer]") {
    std::mt19937 rng(GENERATE(take(100, random(1u, 1000000u))));
    std::uniform_int_distribution<int> byte(0, 255), len(0, 300), ascii(0, 3);
    std::string s;
    for (int i = len(rng); i > 0; --i) {
        // a mix of raw bytes and ASCII letters, digits and connectors
        const char* alnum = "aZ09-._:'/ e";
        s.push_back(ascii(rng) ? static_cast<char>(byte(rng)) : alnum[byte(rng) % 12]);
    }
    for (auto name : ragpp::analyzer_names) {
        ragpp::with_analyzer(name, [&](const auto& a) {
            for (const auto& t : analyze(a, s)) {
                CHECK_FALSE(t.empty());
                CHECK(ragpp::text::is_valid_utf8(t));
            }
        });
    }
}
