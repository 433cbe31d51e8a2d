#include <ragpp/eval/questions.hpp>

#include <catch2/catch.hpp>

#include <fstream>

#include "support.hpp"

using namespace ragpp;

TEST_CASE("JSON question sets: lists, graded objects, [] and chunk_attendu", "[questions]") {
    const auto set = parse_questions_json(R"([
  {"id": "q1", "question": "Quel est le préavis du contrat MX-200 ?",
   "relevant": ["contrats/mx200.md:12", "avenants/2025.md:3"], "answer": "deux mois"},
  {"id": "q2", "question": "graded", "relevant": {"doc-17": 2, "doc-4": 1}, "kind": "paraphrase"},
  {"id": "q3", "question": "a question the documents do not answer", "relevant": []},
  {"question": "short form", "chunk_attendu": "guide.md:7"}
])");
    REQUIRE(set.size() == 4);
    CHECK(set[0].relevant.size() == 2);
    CHECK(set[0].relevant.at("avenants/2025.md:3") == 1.0);
    CHECK(set[0].answer == std::optional<std::string>("deux mois"));
    CHECK(set[1].relevant.at("doc-17") == 2.0);
    CHECK(set[1].kind == "paraphrase");
    CHECK(set[2].relevant.empty());
    CHECK(set[3].id == "q4");
    CHECK(set[3].relevant.count("guide.md:7") == 1);
}

TEST_CASE("JSON question set errors name the file, line and field", "[questions]") {
    CHECK_THROWS_WITH(parse_questions_json("[\n{\"question\": \"a\", \"relevant\": []},\n{\"question\": 3, \"relevant\": []}\n]", "qs.json"),
                      Catch::Contains("qs.json:3: question 2: field 'question'"));
    CHECK_THROWS_WITH(parse_questions_json("[\n {\"question\": \"a\"}\n]", "qs.json"),
                      Catch::Contains("qs.json:2: question 1: field 'relevant' is missing"));
    CHECK_THROWS_WITH(parse_questions_json("[\n {\"question\": \"a\", \"relevant\": 5}]", "qs.json"),
                      Catch::Contains("field 'relevant' must be"));
    CHECK_THROWS_WITH(parse_questions_json("[\n {\"question\": \"a\", \"relevant\": {\"d\": \"x\"}}]", "qs.json"),
                      Catch::Contains("grade of 'd'"));
    CHECK_THROWS_WITH(parse_questions_json("[\n {\"question\": \"a\",\n \"relevant\": [}]", "qs.json"),
                      Catch::Contains("qs.json:3: invalid JSON"));
    CHECK_THROWS_AS(parse_questions_json("{\"question\": \"a\"}", "qs.json"), ParseError);
    CHECK_THROWS_AS(parse_questions_json(R"([{"id":"a","question":"x","relevant":[]},{"id":"a","question":"y","relevant":[]}])"),
                    DuplicateError);
    // Brackets and quotes inside strings do not confuse the line count.
    CHECK_THROWS_WITH(parse_questions_json("[{\"question\": \"[{\\\"\", \"relevant\": []},\n\n{\"question\": 1}]", "f"),
                      Catch::Contains("f:3: question 2"));
}

TEST_CASE("TSV question sets", "[questions]") {
    const auto set = parse_questions_tsv("# comment\nhow to X\ta.md:3\tb.md:9\r\nunanswerable one\n\nwhat is Y\tc.rst:1\n", "q.tsv");
    REQUIRE(set.size() == 3);
    CHECK(set[0].relevant.size() == 2);
    CHECK(set[1].relevant.empty());
    CHECK(set[2].id == "q3");
    CHECK_THROWS_WITH(parse_questions_tsv("ok\ta:1\n\tb:2\n", "q.tsv"), Catch::Contains("q.tsv:2: column 1"));
    // Spaces where tabs belong: no label anywhere is an error naming the first line.
    CHECK_THROWS_WITH(parse_questions_tsv("# set\nhow to X a.md:3\nwhat is Y c.rst:1\n", "q.tsv"),
                      Catch::Contains("q.tsv:2: no tab in the file"));
}

TEST_CASE("resolve_labels: a label on a line inside a section counts for the section", "[questions]") {
    const std::vector<std::string> chunks{"a.md:3", "a.md:3#2", "a.md:20", "b.md:1"};
    const std::vector<ChunkLines> lines{{"a.md", "a.md:3", 3, 12}, {"a.md", "a.md:3", 10, 18}, {"a.md", "a.md:20", 20, 30},
                                        {"b.md", "b.md:1", 1, 4}};
    QuestionSet set(2);
    set[0].relevant = {{"a.md:7", 1.0}, {"notes/a.md:25", 2.0}};
    set[1].relevant = {{"a.md:19", 1.0}, {"c.md:2", 1.0}};
    const auto check = resolve_labels(set, chunks, {"notes/"}, lines);
    CHECK(check.inside_section == 2);
    CHECK(check.unmatched == std::vector<std::string>{"a.md:19", "c.md:2"});  // line 19: between sections
    CHECK(set[0].relevant == Judgments<std::string>{{"a.md:3", 1.0}, {"a.md:20", 2.0}});
    CHECK(set[1].relevant == Judgments<std::string>{{"a.md:19", 1.0}, {"c.md:2", 1.0}});
}

TEST_CASE("labels match every chunk of their section, and bare paths every chunk of their file", "[questions]") {
    CHECK(label_matches("a.md:12", "a.md:12"));
    CHECK(label_matches("a.md:12", "a.md:12#3"));
    CHECK_FALSE(label_matches("a.md:12", "a.md:120"));
    CHECK_FALSE(label_matches("a.md:12", "a.md:1"));
    CHECK_FALSE(label_matches("a.md:12", "a.md:12#x"));
    CHECK(label_matches("a.md", "a.md:12"));
    CHECK(label_matches("a.md", "a.md:12#2"));
    CHECK_FALSE(label_matches("a.md", "a.mdx:12"));
    CHECK(label_matches("4983", "4983"));
    CHECK_FALSE(label_matches("498", "4983"));
    CHECK(section_of("a.md:12#3") == "a.md:12");
    CHECK(section_of("a.md:12") == "a.md:12");
    CHECK(section_of("tag#x") == "tag#x");
}

TEST_CASE("resolve_labels: labels written from the corpus's parent are matched, the others reported", "[questions]") {
    const std::vector<std::string> chunks{"errors.md:7", "errors.md:7#2", "guide/install.md:1", "faq.md:3"};
    QuestionSet set(3);
    set[0].relevant = {{"notes/errors.md:7", 2.0}, {"errors.md:7", 1.0}};  // one label written both ways
    set[1].relevant = {{"notes/guide/install.md", 1.0}, {"faq.md:3", 1.0}, {"notes/missing.md:1", 1.0}};
    set[2].relevant = {};
    const auto check = resolve_labels(set, chunks, {"data/notes/", "notes/"});
    // Distinct labels: notes/errors.md:7, errors.md:7, notes/guide/install.md, faq.md:3, notes/missing.md:1.
    CHECK(check.labels == 5);
    CHECK(check.resolved == 2);
    CHECK(check.unmatched == std::vector<std::string>{"notes/missing.md:1"});
    CHECK_FALSE(check.none_match());
    // Rewritten in place; the label written both ways keeps the larger grade.
    CHECK(set[0].relevant == Judgments<std::string>{{"errors.md:7", 2.0}});
    CHECK(set[1].relevant ==
          Judgments<std::string>{{"guide/install.md", 1.0}, {"faq.md:3", 1.0}, {"notes/missing.md:1", 1.0}});
    CHECK(set[2].relevant.empty());
    // Without the prefix nothing is rewritten; a prefix is only removed when the rest matches.
    QuestionSet plain(1);
    plain[0].relevant = {{"notes/errors.md:7", 1.0}};
    CHECK(resolve_labels(plain, chunks).unmatched == std::vector<std::string>{"notes/errors.md:7"});
    CHECK(resolve_labels(plain, chunks, {"other/"}).none_match());
    CHECK(plain[0].relevant.count("notes/errors.md:7") == 1);
    // A set without labels is not "none match".
    QuestionSet empty(2);
    CHECK_FALSE(resolve_labels(empty, chunks, {"notes/"}).none_match());
}

TEST_CASE("read_questions dispatches on the path: BEIR folder, TSV, JSON", "[questions]") {
    ragpp_test::TempDir dir;
    std::ofstream(dir.path / "q.tsv") << "question one\tx:1\n";
    std::ofstream(dir.path / "q.json") << R"([{"question": "q", "relevant": ["x:1"]}])";
    CHECK(read_questions(dir.path / "q.tsv").size() == 1);
    CHECK(read_questions(dir.path / "q.json").size() == 1);
    CHECK_THROWS_AS(read_questions(dir.path / "missing.json"), IoError);
    const auto scifact = ragpp_test::require_shared("data/scifact");
    const auto beir = read_questions(scifact);
    CHECK(beir.size() == 300);  // the judged test queries
    CHECK_FALSE(beir.front().relevant.empty());
}
