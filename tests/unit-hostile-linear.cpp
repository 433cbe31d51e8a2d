// Hostile inputs in linear time (question sets, filters, front matter): each input
// below is parsed within a time bound an order of magnitude above its linear cost, so a
// quadratic regression fails the test (the figures in the comments: Release build, a
// loaded 2-core machine; the old code ran past each bound). Not a benchmark: the bounds
// are loose enough for an ASan build.
#include <ragpp/chunk/front_matter.hpp>
#include <ragpp/core/error.hpp>
#include <ragpp/eval/questions.hpp>
#include <ragpp/filter/filter.hpp>
#include <ragpp/io/beir.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstddef>
#include <fstream>
#include <string>
#include <vector>

#include "support.hpp"

namespace {

/// Seconds `f` takes.
template <class F>
double linear_seconds(F&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string linear_repeat(const std::string& s, std::size_t n) {
    std::string out;
    out.reserve(s.size() * n);
    for (std::size_t i = 0; i < n; ++i) out += s;
    return out;
}

/// A chain of `n` conditions f<i>=v joined by `op`.
std::string linear_chain(std::size_t n, const std::string& op) {
    std::string out;
    for (std::size_t i = 0; i < n; ++i) out += (i ? op : std::string()) + "f" + std::to_string(i) + "=v";
    return out;
}

/// The message of the ragpp::Error `f` throws ("" when it throws none).
template <class F>
std::string linear_error(F&& f) {
    try {
        f();
    } catch (const ragpp::Error& e) {
        return e.what();
    }
    return {};
}

}  // namespace

TEST_CASE("hostile-linear: a JSON question set is read in linear time", "[hostile][questions][linear]") {
    // 7,000 questions of 400 bytes (3 MB): 0.2 s; the line of each question was counted
    // from the start of the file (8.1 s).
    const std::size_t n = 7000;
    const std::string pad(400, 'x');
    std::string text = "[\n";
    for (std::size_t i = 0; i < n; ++i)
        text += std::string(i ? ",\n" : "") + "{\"question\": \"" + pad + std::to_string(i) + "\", \"relevant\": [\"a.md:" +
                std::to_string(i + 1) + "\"]}";
    text += "\n]\n";
    ragpp::QuestionSet set;
    const double s = linear_seconds([&] { set = ragpp::parse_questions_json(text, "big.json"); });
    REQUIRE(set.size() == n);
    CHECK(set.back().relevant.count("a.md:" + std::to_string(n)) == 1);
    CHECK(s < 4.0);
    // Lines are still right: the question on line 2 + i is named by that line.
    std::string bad = text;
    const std::string last = "\"relevant\": [\"a.md:" + std::to_string(n) + "\"]";
    bad.replace(bad.rfind(last), last.size(), "\"relevant\": 3");
    const std::string msg = linear_error([&] { (void)ragpp::parse_questions_json(bad, "big.json"); });
    CHECK(msg.find("big.json:" + std::to_string(n + 1) + ": question " + std::to_string(n) + ": field 'relevant'") !=
          std::string::npos);
}

TEST_CASE("hostile-linear: an and/or chain of 20,000 conditions parses in linear time", "[hostile][filter][linear]") {
    // 0.17 s each; each new term moved every earlier one (9 to 15 s each).
    const std::size_t n = 20000;
    for (const std::string op : {" and ", " || ", ", "}) {
        ragpp::Filter f;
        const double s = linear_seconds([&] { f = ragpp::parse_filter(linear_chain(n, op)); });
        REQUIRE(f.children().size() == n);
        CHECK(s < 3.0);
    }
    // Built in code, a && b && ... keeps its children in place too.
    ragpp::Filter f = ragpp::Filter::eq("f0", std::string("v"));
    const double s = linear_seconds([&] {
        for (std::size_t i = 1; i < n; ++i) f = std::move(f) && ragpp::Filter::eq("f" + std::to_string(i), std::string("v"));
    });
    REQUIRE(f.children().size() == n);
    CHECK(f.children().back().field() == "f" + std::to_string(n - 1));
    CHECK(s < 3.0);
    // An alternation: n / 2 and-pairs under one or.
    const ragpp::Filter mixed = ragpp::parse_filter(linear_chain(n, " and ") + " or " + linear_chain(n, " and "));
    CHECK(mixed.kind() == ragpp::Filter::Kind::or_);
    CHECK(mixed.children().size() == 2);
}

TEST_CASE("hostile-linear: filters of 64 levels, each on its own, errors quote what was written", "[hostile][filter]") {
    const std::size_t d = ragpp::max_filter_depth;
    const std::string deep = linear_repeat("(", d) + "type=guide" + linear_repeat(")", d);
    const std::string too_deep = linear_repeat("(", d + 1) + "type=guide" + linear_repeat(")", d + 1);
    const ragpp::Metadata guide{{"type", std::string("guide")}, {"year", 2024.0}};
    const ragpp::Metadata other{{"type", std::string("other")}, {"year", 2024.0}};
    // Several filters (the tool's repeated --filter) each nest 64 levels: their
    // conjunction is not one more level.
    const std::vector<std::string> two{deep, "!" + linear_repeat("(", d - 1) + "year<2000" + linear_repeat(")", d - 1)};
    const ragpp::Filter f = ragpp::parse_filters(two);
    CHECK(f.matches(guide));
    CHECK_FALSE(f.matches(other));
    CHECK(ragpp::parse_filters(std::vector<std::string>{}).kind() == ragpp::Filter::Kind::all);
    // 65 levels: the error quotes that filter as written, with its own column.
    const std::string msg = linear_error([&] { (void)ragpp::parse_filters(std::vector<std::string>{"year>=2000", too_deep}); });
    CHECK(msg.find("filter '" + too_deep.substr(0, 60)) != std::string::npos);
    CHECK(msg.find("nested deeper than 64 levels at column 65") != std::string::npos);
    CHECK(msg.find("year>=2000") == std::string::npos);
    CHECK(msg.find(" and (") == std::string::npos);
}

TEST_CASE("hostile-linear: front matter is read in linear time", "[hostile][front-matter][linear]") {
    // A TOML array over 30,000 lines: 0.04 s; each line rescanned the array so far
    // (15.7 s).
    const std::size_t n = 30000;
    std::string toml = "tags = [\n";
    for (std::size_t i = 0; i < n; ++i) toml += "  \"t" + std::to_string(i) + "\", # note ]\n";
    toml += "]\n";
    ragpp::Metadata m;
    double s = linear_seconds([&] { m = ragpp::parse_toml_front_matter(toml, "big.md", 2); });
    REQUIRE(std::get<std::vector<std::string>>(m.at("tags")).size() == n);
    CHECK(s < 2.0);
    // Never closed: the error still names the line of the key.
    const std::string open = toml.substr(0, toml.size() - 2);
    CHECK(linear_error([&] { (void)ragpp::parse_toml_front_matter(open, "big.md", 2); }).find("big.md:2: front matter: unterminated array") !=
          std::string::npos);
    // The YAML shapes (about 0.1 s each): many keys, a long block list, a long flow
    // list, a long block scalar, a long nested mapping.
    std::string keys, block = "tags:\n", flow = "tags: [", scalar = "text: |\n", nested = "a:\n";
    for (std::size_t i = 0; i < n; ++i) {
        const std::string x = std::to_string(i);
        keys += "k" + x + ": v\n";
        block += "  - t" + x + "\n";
        flow += (i ? ", t" : "t") + x;
        scalar += "  line " + x + "\n";
        nested += "  k" + x + ": " + x + "\n";
    }
    flow += "]\n";
    for (const auto* yaml : {&keys, &block, &flow, &scalar, &nested}) {
        s = linear_seconds([&] { m = ragpp::parse_front_matter(*yaml, "big.md", 2); });
        CHECK(!m.empty());
        CHECK(s < 2.0);
    }
    CHECK(m.size() == n);
}

TEST_CASE("hostile-linear: JSONL metadata that repeats one key is refused in linear time", "[hostile][jsonl][linear]") {
    // A document whose metadata repeats "groups" n times (a second "metadata" or "groups"
    // would replace the first: refused). The line is parsed whole twice (its values,
    // then its keys), each in linear time (Release): n = 10,000 in 0.01 to 0.04 s,
    // 40,000 in 0.05 s, 160,000 in 0.12 s, 640,000 in 0.41 s.
    ragpp_test::TempDir tmp;
    const auto file = tmp.path / "corpus.jsonl";
    for (const std::size_t n : {std::size_t{10000}, std::size_t{40000}}) {
        std::string dup = "{\"_id\":\"d\",\"text\":\"t\",\"metadata\":{";
        for (std::size_t i = 0; i < n; ++i) dup += (i ? ",\"groups\":[\"hr\"]" : "\"groups\":[\"hr\"]");
        std::ofstream(file) << R"({"_id":"a","text":"one"})" "\n" << dup << "}}\n";
        std::string msg;
        const double s = linear_seconds([&] { msg = linear_error([&] { (void)ragpp::read_beir_corpus(file); }); });
        CHECK_THAT(msg, Catch::EndsWith("corpus.jsonl:2: key 'groups' appears twice in one object"));
        CHECK(s < 2.0);
    }
}
