// Tests for ragpp/text/analyzer.hpp: golden terms for tricky strings in each language,
// identifiers findable in every spelling, documents and queries analyzed alike,
// random bytes.
#include <catch2/catch.hpp>

#include <ragpp/index/bm25.hpp>
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

// --- multilingual: each document in its language, queries in both -------------------------

TEST_CASE("identify_language: function-word profiles and elisions on hand-written sentences", "[analyzer][multilingual]") {
    using Counts = std::pair<std::size_t, std::size_t>;
    // the, of, is (English); le, de, est, de (French): "a", "on", "mois" are in neither list.
    CHECK(ragpp::text::language_counts("The notice period of a contract is on le délai de préavis est de trois mois") ==
          Counts{3, 4});
    using ragpp::Language;
    using ragpp::text::identify_language;
    CHECK(identify_language("The notice period of the contract is three months.") == Language::english);
    CHECK(identify_language("Le délai de préavis est de trois mois.") == Language::french);
    // Elisions alone (l', s', qu', with either apostrophe): French.
    CHECK(identify_language("L'entreprise s’engage lorsqu'elle signe") == Language::french);
    // IL-6, SE, a: abbreviations and shared words are in neither profile.
    CHECK(identify_language("IL-6 and SE in a cohort") == Language::english);
    CHECK(identify_language("Les contrats sont signés par la direction, avec un avenant.") == Language::french);
    CHECK(identify_language("This study shows that the levels of IL-6 were higher in these patients.") ==
          Language::english);
    // A tie (no function word: code, CJK, an empty text) is English.
    CHECK(identify_language("") == Language::english);
    CHECK(identify_language("東京タワーに行く") == Language::english);
    CHECK(identify_language("ORA-01555 snapshot") == Language::english);
    CHECK(identify_language("don't stop") == Language::english);  // "don" is no elision
    // Only the first max_words words count: 3 French, then 5 English.
    CHECK(identify_language("le la les the of and to is") == Language::english);
    CHECK(identify_language("le la les the of and to is", 3) == Language::french);
}

TEST_CASE("language_of_tag: lang front matter values", "[analyzer][multilingual]") {
    using ragpp::Language;
    using ragpp::text::language_of_tag;
    CHECK(language_of_tag("fr") == Language::french);
    CHECK(language_of_tag("FR-ca") == Language::french);
    CHECK(language_of_tag("fr_FR") == Language::french);
    CHECK(language_of_tag("Français") == Language::french);
    CHECK(language_of_tag("en-US") == Language::english);
    CHECK(language_of_tag("English") == Language::english);
    CHECK_FALSE(language_of_tag("de").has_value());
    CHECK_FALSE(language_of_tag("").has_value());
    CHECK_FALSE(language_of_tag("fren").has_value());
}

TEST_CASE("multilingual: l'entreprise meets entreprise, English keeps Porter, CJK bigrams", "[analyzer][multilingual]") {
    using ragpp::Language;
    const ragpp::MultilingualAnalyzer a;
    auto as = [&](Language l, std::string_view t) {
        V out;
        a.analyze_as(l, t, out);
        return out;
    };
    // The english analyzer keeps "l'entreprise" whole; in an English document of the
    // multilingual analyzer the elision goes, as in French.
    CHECK(analyze(ragpp::EnglishAnalyzer{}, "l'entreprise") == V{"l'entrepris"});
    CHECK(as(Language::english, "l'entreprise") == V{"entrepris"});
    CHECK(as(Language::english, "l’entreprise") == V{"entrepris"});
    CHECK(as(Language::french, "l'entreprise") == V{"entrepris"});
    CHECK(analyze(a, "entreprise") == V{"entrepris"});   // both forms agree: one term
    CHECK(analyze(a, "l'entreprise") == V{"entrepris"});
    // English documents: the english analyzer's terms (possessive, stop words, Porter).
    CHECK(as(Language::english, "The cat's toys are in the box") == V{"cat", "toi", "box"});
    CHECK(as(Language::english, "Relational conditional generalizations") == V{"relat", "condit", "gener"});
    // French documents: the french analyzer's terms.
    CHECK(as(Language::french, "Les préavis du contrat") == V{"preavi", "contrat"});
    // A query word: its English terms, then its French terms that differ.
    CHECK(analyze(a, "running contracts") == V{"run", "running", "contract"});
    CHECK(analyze(a, "résiliée") == V{"resilie", "resili"});
    // CJK runs become bigrams in both languages, as in the cjk analyzer.
    CHECK(as(Language::english, "東京タワーに行く") == analyze(ragpp::CjkAnalyzer{}, "東京タワーに行く"));
    CHECK(as(Language::french, "東京都") == V{"東京", "京都"});
    CHECK(analyze(a, "東京都") == V{"東京", "京都"});
}

TEST_CASE("multilingual: a document's language is its lang metadata, else its text's", "[analyzer][multilingual]") {
    using ragpp::Language;
    const ragpp::MultilingualAnalyzer a;
    ragpp::Document d{"d", "running shoes for the marathon", {}};
    CHECK(a.document_language(d) == Language::english);
    V terms;
    a.analyze_document(d, terms);  // its terms, then the mark of its language
    CHECK(terms == V{"run", "shoe", "marathon", "\x1Flang:en"});
    d.metadata["lang"] = std::string("fr");
    CHECK(a.document_language(d) == Language::french);
    terms.clear();
    a.analyze_document(d, terms);
    // French: the light stemmer (plural -s, then final -e), French stop words only.
    CHECK(terms == V{"running", "sho", "for", "the", "marathon", "\x1Flang:fr"});
    terms.clear();
    a.analyze_field(d, "Running Shoes", terms);  // a field of d: in d's language, no mark
    CHECK(terms == V{"running", "sho"});
    terms.clear();
    a.analyze_document({"e", "le de", d.metadata}, terms);  // no term, no mark
    CHECK(terms.empty());
    d.metadata["lang"] = std::string("de");  // unknown tag: identified from the text
    CHECK(a.document_language(d) == Language::english);
    d.metadata["lang"] = 3.0;  // not a string: identified from the text
    CHECK(a.document_language(d) == Language::english);
}

TEST_CASE("multilingual: analyze_query keeps the forms the index knows", "[analyzer][multilingual]") {
    const ragpp::MultilingualAnalyzer a;
    auto q = [&](std::string_view text, std::set<std::string> vocabulary) {
        V out;
        a.analyze_query(text, out, [&](std::string_view t) { return vocabulary.count(std::string(t)) > 0; });
        return out;
    };
    const std::string en(ragpp::MultilingualAnalyzer::language_mark(ragpp::Language::english));
    const std::string fr(ragpp::MultilingualAnalyzer::language_mark(ragpp::Language::french));
    // Documents of one language: the query in that language alone, every term.
    CHECK(q("running contracts xyzzy le", {en, "run"}) == V{"run", "contract", "xyzzi", "le"});
    CHECK(q("running contracts xyzzy le", {fr, "running"}) == V{"running", "contract", "xyzzy"});
    // No mark (an index of neither: empty, or not multilingual): word by word, as for both.
    CHECK(q("running contracts xyzzy le", {"running"}) == V{"running", "contract", "xyzzi"});
    // Both languages, a query with more function words of one: that language alone.
    CHECK(q("What is the notice period?", {en, fr, "notic", "the"}) == V{"what", "notic", "period"});
    CHECK(q("Quel est le préavis ?", {en, fr, "preavi", "le"}) == V{"quel", "preavi"});
    CHECK(q("l'entreprise", {en, fr}) == V{"entrepris"});  // an elision counts for French
    // Both languages, as many function words of each (none): word by word, the known forms.
    CHECK(q("running", {en, fr, "run", "running"}) == V{"run", "running"});
    CHECK(q("running", {en, fr, "run"}) == V{"run"});
    CHECK(q("running", {en, fr, "running"}) == V{"running"});
    CHECK(q("running", {en, fr}) == V{"run"});  // neither known: the English terms (missing in coverage)
    // "un" is a French stop word: unknown as an English term, it is no query term.
    CHECK(q("un préavis", {en, fr, "preavi"}) == V{"preavi"});
    CHECK(q("un préavis", {en, fr, "preavi", "un"}) == V{"un", "preavi"});
    // "if" is an English stop word; its French reading "if" is kept only when known.
    CHECK(q("if notice", {en, fr, "notic"}) == V{"notic"});
    CHECK(q("if notice", {en, fr, "notic", "if"}) == V{"if", "notic"});
    V all;
    a.analyze_query("the notice", all, {});  // no vocabulary: every form
    CHECK(all == V{"the", "notic"});
}

TEST_CASE("multilingual: one index finds a lang: fr note in French and an English note in English",
          "[analyzer][multilingual][bm25]") {
    using ragpp::DocId;
    ragpp::BM25Index<ragpp::MultilingualAnalyzer> index;
    ragpp::Metadata fr;
    fr["lang"] = std::string("fr");
    index.add_document(0, {"contrat", "Le préavis de résiliation du contrat de l'entreprise est de trois mois.", fr});
    index.add_document(1, {"contract", "The notice period of the company contract is three months.", {}});
    // French by its text (no front matter); English by its text.
    index.add_document(2, {"livraison", "Les délais de livraison des presses sont fixés par l'entreprise.", {}});
    index.add_document(3, {"running", "Running the presses requires trained staff.", {}});
    // lang: fr on an English-looking text: analysed in French all the same.
    index.add_document(4, {"shoes", "running shoes", fr});
    auto ids = [&](std::string_view query) {
        std::vector<DocId> out;
        for (const auto& h : index.search(query, 10)) out.push_back(h.id);
        return out;
    };
    auto df = [&](std::string_view term) { return index.document_frequency(term); };
    // Each document holds its own language's forms only.
    CHECK(df("entrepris") == 2);     // "l'entreprise" in both French documents
    CHECK(df("l'entrepris") == 0);
    CHECK(df("preavi") == 1);
    CHECK(df("le") == 0);            // a French stop word in French documents
    CHECK(df("notic") == 1);         // Porter, in the English document
    CHECK(df("the") == 0);
    CHECK(df("run") == 1);           // document 3 (English)
    CHECK(df("running") == 1);       // document 4 (lang: fr)
    // French queries find the French notes, English queries the English ones.
    const auto firm = ids("entreprise");
    CHECK(std::set<DocId>(firm.begin(), firm.end()) == std::set<DocId>{0, 2});
    CHECK(ids("Quel est le préavis ?").front() == 0);
    CHECK(ids("préavis") == std::vector<DocId>{0});
    CHECK(ids("notice period") == std::vector<DocId>{1});
    CHECK(ids("What is the notice period?").front() == 1);
    CHECK(ids("délai de livraison") == std::vector<DocId>{2});
    // "running": Porter's "run" (document 3) and the French reading "running" (document
    // 4). BM25 sums over the query terms; each document holds one of the two forms, so
    // each counts the word once: its score is that of its own form alone.
    CHECK(index.query_terms("running") == V{"run", "running"});
    const auto both = index.search("running", 10);
    REQUIRE(both.size() == 2);
    auto score_of = [&](const std::vector<ragpp::Hit>& hits, DocId id) {
        for (const auto& h : hits)
            if (h.id == id) return h.score;
        return -1.0F;
    };
    CHECK(score_of(both, 3) == score_of(index.search_terms(V{"run"}, 10), 3));
    CHECK(score_of(both, 4) == score_of(index.search_terms(V{"running"}, 10), 4));
    // A form the index does not know is no query term (it would add nothing).
    CHECK(index.query_terms("contracts") == V{"contract"});
    CHECK(index.query_terms("the contrats") == V{"contrat"});
    // Each length counts the language mark: "running shoes" is 2 terms and the mark.
    CHECK(index.document_length(4) == 3);
    // Removal re-analyses a document in its language: everything of document 0 goes.
    index.remove_document(0, {"contrat", "Le préavis de résiliation du contrat de l'entreprise est de trois mois.", fr});
    CHECK(df("preavi") == 0);
    CHECK(df("entrepris") == 1);
    CHECK(index.search("préavis", 10).empty());
    // With the English documents gone, the index is French only: "running" is read in
    // French alone (Porter's "run" is no query term any more).
    index.remove_document(1);
    index.remove_document(3);
    CHECK(index.query_terms("running") == V{"running"});
    CHECK(index.query_terms("contracts") == V{"contract"});
}

TEST_CASE("multilingual: an index of one language searches as that language's analyzer", "[analyzer][multilingual][bm25]") {
    const char* texts[] = {"The notice period of the contract is three months.", "Running the presses requires staff.",
                           "Contracts of the company: running costs.", "Le préavis est de trois mois."};
    // All English (the French sentence given lang: en): the multilingual index ranks as the english one,
    // with every length one longer (the mark).
    ragpp::BM25Index<ragpp::MultilingualAnalyzer> multi;
    ragpp::BM25Index<ragpp::EnglishAnalyzer> english;
    ragpp::Metadata en;
    en["lang"] = std::string("en");
    for (ragpp::DocId i = 0; i < 4; ++i) {
        multi.add_document(i, {"d", texts[i], en});
        english.add_document(i, {"d", texts[i], {}});
        CHECK(multi.document_length(i) == english.document_length(i) + 1);
    }
    for (const char* query : {"running contracts", "notice period", "préavis trois mois", "the company's costs"}) {
        INFO(query);
        CHECK(multi.query_terms(query) == english.query_terms(query));
        std::vector<ragpp::DocId> a, b;
        for (const auto& h : multi.search(query, 4)) a.push_back(h.id);
        for (const auto& h : english.search(query, 4)) b.push_back(h.id);
        CHECK(a == b);
    }
}
