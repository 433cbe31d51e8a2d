// Tests for the stemmers: Porter (ragpp/text/porter.hpp) against the examples of
// Porter's 1980 paper, the French light stemmer, and the stemmer hook.
#include <catch2/catch.hpp>

#include <ragpp/text/porter.hpp>
#include <ragpp/text/stemmer.hpp>

#include <string>

using namespace ragpp::text;

TEST_CASE("Porter stemmer: the examples of the paper, step by step", "[stemmer][porter]") {
    const PorterStemmer p;
    // Each pair is the paper's example of one rule; the result is the full stem
    // (later steps may apply, checked by hand).
    const std::pair<const char*, const char*> cases[] = {
        // step 1a
        {"caresses", "caress"}, {"ponies", "poni"}, {"ties", "ti"}, {"caress", "caress"}, {"cats", "cat"},
        // step 1b
        {"feed", "feed"}, {"agreed", "agre"}, {"plastered", "plaster"}, {"bled", "bled"}, {"motoring", "motor"},
        {"sing", "sing"}, {"conflated", "conflat"}, {"troubled", "troubl"}, {"sized", "size"}, {"hopping", "hop"},
        {"tanned", "tan"}, {"falling", "fall"}, {"hissing", "hiss"}, {"fizzed", "fizz"}, {"failing", "fail"},
        {"filing", "file"},
        // step 1c
        {"happy", "happi"}, {"sky", "sky"},
        // step 2
        {"relational", "relat"}, {"conditional", "condit"}, {"rational", "ration"}, {"valenci", "valenc"},
        {"hesitanci", "hesit"}, {"digitizer", "digit"}, {"conformabli", "conform"}, {"radicalli", "radic"},
        {"differentli", "differ"}, {"vileli", "vile"}, {"analogousli", "analog"}, {"vietnamization", "vietnam"},
        {"predication", "predic"}, {"operator", "oper"}, {"feudalism", "feudal"}, {"decisiveness", "decis"},
        {"hopefulness", "hope"}, {"callousness", "callous"}, {"formaliti", "formal"}, {"sensitiviti", "sensit"},
        {"sensibiliti", "sensibl"},
        // step 3
        {"triplicate", "triplic"}, {"formative", "form"}, {"formalize", "formal"}, {"electriciti", "electr"},
        {"electrical", "electr"}, {"hopeful", "hope"}, {"goodness", "good"},
        // step 4
        {"revival", "reviv"}, {"allowance", "allow"}, {"inference", "infer"}, {"airliner", "airlin"},
        {"gyroscopic", "gyroscop"}, {"adjustable", "adjust"}, {"defensible", "defens"}, {"irritant", "irrit"},
        {"replacement", "replac"}, {"adjustment", "adjust"}, {"dependent", "depend"}, {"adoption", "adopt"},
        {"homologou", "homolog"}, {"communism", "commun"}, {"activate", "activ"}, {"angulariti", "angular"},
        {"homologous", "homolog"}, {"effective", "effect"}, {"bowdlerize", "bowdler"},
        // step 5
        {"probate", "probat"}, {"rate", "rate"}, {"cease", "ceas"}, {"controll", "control"}, {"roll", "roll"},
        // the paper's multi-step example
        {"generalizations", "gener"}, {"generalization", "gener"}, {"oscillators", "oscil"},
        // words of one or two letters are left alone
        {"as", "as"}, {"is", "is"}};
    for (const auto& [word, stem] : cases) {
        INFO(word);
        CHECK(p.stem(word) == stem);
    }
}

TEST_CASE("French light stemmer conflates inflections only", "[stemmer][french]") {
    const FrenchLightStemmer s;
    CHECK(s.stem("résiliée") == "résili");
    CHECK(s.stem("résiliés") == "résili");
    CHECK(s.stem("résilier") == "résili");
    CHECK(s.stem("résilié") == "résili");
    CHECK(s.stem("resiliee") == "resili");  // without accents: the same letters
    CHECK(s.stem("résiliation") == "résiliation");
    CHECK(s.stem("préavis") == "préavi");
    CHECK(s.stem("avenants") == "avenant");
    CHECK(s.stem("avenante") == "avenant");
    CHECK(s.stem("chevaux") == "cheval");
    CHECK(s.stem("bateaux") == "bateau");
    CHECK(s.stem("première") == "premi");
    CHECK(s.stem("premiers") == "premi");
    CHECK(s.stem("bonne") == "bon");
    CHECK(s.stem("mer") == "mer");  // too short
}

TEST_CASE("the stemmer hook takes in-place and returning callables", "[stemmer]") {
    std::string w = "ponies";
    apply_stemmer(PorterStemmer{}, w);
    CHECK(w == "poni");
    auto upper_first = [](std::string_view s) { return std::string(s.substr(0, 3)); };
    static_assert(StemmerHook<decltype(upper_first)>);
    w = "caresses";
    apply_stemmer(upper_first, w);
    CHECK(w == "car");
    apply_stemmer(NoStemmer{}, w);
    CHECK(w == "car");
    static_assert(!StemmerHook<int>);
}
