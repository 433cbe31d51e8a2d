// Chunkers on hand-written documents: every expectation below was worked out by hand
// from the rules in the chunker headers.
#include <ragpp/chunk/chunker.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using ragpp::Chunk;
using ragpp::ChunkOptions;
using ragpp::Date;
using ragpp::Document;
using Strings = std::vector<std::string>;

namespace {

std::vector<Chunk> md(const std::string& text, ChunkOptions o = {}) {
    return ragpp::chunk_markdown(Document{"doc.md", text, {}}, o);
}

Strings ids(const std::vector<Chunk>& cs) {
    Strings out;
    for (const auto& c : cs) out.push_back(c.id);
    return out;
}

}  // namespace

TEST_CASE("Markdown: ATX headings give sections, ids name the heading line", "[chunk][markdown]") {
    const auto cs = md("# Title\n\nIntro.\n\n## Section\n\nBody text.\n\n### Sub ###\nDeep.\n");
    REQUIRE(ids(cs) == Strings{"doc.md:1", "doc.md:5", "doc.md:9"});
    CHECK(cs[0].heading_path == Strings{"Title"});
    CHECK(cs[1].heading_path == Strings{"Title", "Section"});
    CHECK(cs[2].heading_path == Strings{"Title", "Section", "Sub"});  // closing #s removed
    CHECK(cs[0].raw == "Intro.");
    CHECK(cs[0].first_line == 3);
    CHECK(cs[0].last_line == 3);
    CHECK(cs[2].text == "Title > Section > Sub\nDeep.");
    CHECK(cs[2].first_line == 10);
    CHECK(cs[1].section == "doc.md:5");
    CHECK(cs[1].position == 1);
    CHECK(cs[2].position == 2);
}

TEST_CASE("Markdown: # inside fenced code is not a heading, ``` and ~~~", "[chunk][markdown]") {
    const auto cs = md("# A\n\n```python\n# comment\nx = 1\n```\n\n~~~~\n## not either\n```\n~~~~\n\ntext\n");
    REQUIRE(cs.size() == 1);
    CHECK(cs[0].heading_path == Strings{"A"});
    CHECK(cs[0].raw == "```python\n# comment\nx = 1\n```\n\n~~~~\n## not either\n```\n~~~~\n\ntext");
    CHECK(cs[0].first_line == 3);
    CHECK(cs[0].last_line == 13);
}

TEST_CASE("Markdown: an unclosed fence runs to the end", "[chunk][markdown]") {
    const auto cs = md("# A\ntext\n```\n# no\n");
    REQUIRE(cs.size() == 1);
    CHECK(cs[0].raw == "text\n```\n# no");
}

TEST_CASE("Markdown: setext headings, thematic breaks and list items", "[chunk][markdown]") {
    const auto cs = md("Big Title\n=========\n\nintro\n\nTwo line\nheading\n---\nbody\n\n- item\n---\n\nafter\n");
    REQUIRE(ids(cs) == Strings{"doc.md:1", "doc.md:6"});
    CHECK(cs[0].heading_path == Strings{"Big Title"});
    CHECK(cs[1].heading_path == Strings{"Big Title", "Two line heading"});
    // "- item" then --- is a list then a rule, not a heading: the rule is markup.
    CHECK(cs[1].raw == "body\n\n- item\n---\n\nafter");
    CHECK(cs[1].first_line == 9);
}

TEST_CASE("Markdown: ATX details: trailing #, tabs, indentation, #hashtag", "[chunk][markdown]") {
    const auto cs = md("#\tTabbed #\n\nx\n\n# C#\n\ny\n\n    # indented code\n#hashtag\n\n  ## Two spaces\nz\n");
    REQUIRE(ids(cs) == Strings{"doc.md:1", "doc.md:5", "doc.md:12"});
    CHECK(cs[0].heading_path == Strings{"Tabbed"});
    CHECK(cs[1].heading_path == Strings{"C#"});  // no space before #: kept
    CHECK(cs[1].raw == "y\n\n    # indented code\n#hashtag");
    CHECK(cs[2].heading_path == Strings{"C#", "Two spaces"});
}

TEST_CASE("Markdown: a heading with nothing under it gives no chunk", "[chunk][markdown]") {
    const auto cs = md("# Title\n## Empty\n\n---\n\n## Full\ntext\n## Trailing\n\n");
    REQUIRE(ids(cs) == Strings{"doc.md:6"});
    CHECK(cs[0].context == "Title > Full");
    CHECK(md("").empty());
    CHECK(md("# only a heading").empty());
}

TEST_CASE("Markdown: CRLF, BOM and lone CR give the same chunks as LF", "[chunk][markdown]") {
    const std::string lf = "# T\n\nalpha beta\n\n## S\n\ngamma\n";
    std::string crlf, cr;
    for (char c : lf) {
        crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
        cr += c == '\n' ? '\r' : c;
    }
    for (const std::string& v : {crlf, "\xEF\xBB\xBF" + crlf, cr}) {
        const auto a = md(lf), b = md(v);
        REQUIRE(a.size() == b.size());
        for (std::size_t i = 0; i < a.size(); ++i) {
            CHECK(a[i].id == b[i].id);
            CHECK(a[i].text == b[i].text);
            CHECK(a[i].first_line == b[i].first_line);
            CHECK(a[i].last_line == b[i].last_line);
        }
    }
}

TEST_CASE("Markdown: YAML front matter becomes metadata, caller's fields win", "[chunk][markdown]") {
    const std::string text =
        "---\n"
        "title: Contrat cadre\n"
        "version: 3\n"
        "date: 2025-03-01\n"
        "groups: [legal, \"sales team\"]\n"
        "tags:\n"
        "  - a\n"
        "  - 'b c'\n"
        "owner:\n"
        "  name: Bob  # a comment\n"
        "summary: >\n"
        "  two\n"
        "  lines\n"
        "quoted: \"2025-03-01\"\n"
        "---\n"
        "## Article 7\n"
        "Le taux est de 4,5 %.\n";
    const auto cs = ragpp::chunk_markdown(Document{"c.md", text, {{"groups", Strings{"admin"}}}});
    REQUIRE(cs.size() == 1);
    const auto& m = cs[0].metadata;
    CHECK(std::get<std::string>(m.at("title")) == "Contrat cadre");
    CHECK(std::get<double>(m.at("version")) == 3.0);
    CHECK(std::get<Date>(m.at("date")) == Date::parse("2025-03-01"));
    CHECK(std::get<Strings>(m.at("groups")) == Strings{"admin"});  // the caller's value
    CHECK(std::get<Strings>(m.at("tags")) == Strings{"a", "b c"});
    CHECK(std::get<std::string>(m.at("owner.name")) == "Bob");
    CHECK(std::get<std::string>(m.at("summary")) == "two lines");
    CHECK(std::get<std::string>(m.at("quoted")) == "2025-03-01");
    // The title is not the first heading, so it leads the context line.
    CHECK(cs[0].text == "Contrat cadre > Article 7\nLe taux est de 4,5 %.");
    CHECK(cs[0].id == "c.md:16");
}

TEST_CASE("Markdown: malformed front matter locks the note naming file:line; bad UTF-8 is a ParseError", "[chunk][markdown]") {
    // A front matter that does not parse is no error: the note is locked (groups [],
    // "access_error" names the file, the line and the fault; chunk/front_matter.hpp).
    auto reason = [](const std::string& text) {
        const auto cs = md(text);
        REQUIRE(!cs.empty());
        CHECK(std::get<Strings>(cs[0].metadata.at("groups")).empty());
        return std::get<std::string>(cs[0].metadata.at("access_error"));
    };
    const std::string tail = "text\n";
    CHECK_THAT(reason("---\ntitle: ok\nno colon here\n---\n" + tail), Catch::Contains("doc.md:3") && Catch::Contains("key: value"));
    CHECK_THAT(reason("---\na: \"open\n---\n" + tail), Catch::Contains("doc.md:2") && Catch::Contains("unterminated"));
    CHECK_THAT(reason("---\nd: 2025-02-30\n---\n" + tail), Catch::Contains("doc.md:2") && Catch::Contains("date"));
    CHECK_THAT(reason("---\nn: 1e999\n---\n" + tail), Catch::Contains("doc.md:2") && Catch::Contains("out of range"));
    CHECK_THAT(reason("---\nn: 1\nn: 2\n---\n" + tail), Catch::Contains("doc.md:3") && Catch::Contains("duplicate key"));
    CHECK_THAT(reason("---\n  - a\n---\n" + tail), Catch::Contains("doc.md:2") && Catch::Contains("without a key"));
    CHECK_THAT(reason("---\nm: {a: 1}\n---\n" + tail), Catch::Contains("flow mappings"));
    CHECK_THAT(reason("---\nl: [a, b\n---\n" + tail), Catch::Contains("unterminated flow list"));
    CHECK_THAT(reason("---\n\tk: v\n---\n" + tail), Catch::Contains("tabs"));
    CHECK_THROWS_WITH(ragpp::parse_front_matter("l: [a, b\n", "doc.md", 2), Catch::Contains("doc.md:2"));  // the parser still throws
    CHECK_THROWS_AS(md("# a\n\nb\xC3(\n"), ragpp::ParseError);
    CHECK_THROWS_WITH(md("# a\n\nb\xC3(\n"), Catch::Contains("doc.md:3") && Catch::Contains("column 2"));
    CHECK_THROWS_WITH(md("\xED\xA0\x80"), Catch::Contains("invalid UTF-8"));  // a surrogate
    // An unclosed "---" is not front matter but a thematic break.
    const auto cs = md("---\ntext\n");
    REQUIRE(cs.size() == 1);
    CHECK(cs[0].raw == "text");
}

TEST_CASE("Markdown: a table split across chunks repeats its header row", "[chunk][markdown]") {
    std::string text = "# Rates\n\n| plan | rate |\n|------|-----:|\n";
    for (int i = 0; i < 6; ++i) {
        const std::string n = std::to_string(i);
        text += "| p";
        text += n;
        text += " | ";
        text += n;
        text += " |\n";
    }
    ChunkOptions o;
    o.max_tokens = 10;  // a row is 5 tokens: two rows per part
    o.overlap = 0;
    const auto cs = md(text, o);
    REQUIRE(cs.size() == 4);
    CHECK(cs[0].raw == "| plan | rate |\n|------|-----:|");
    CHECK(cs[0].text == "Rates\n| plan | rate |\n|------|-----:|");
    CHECK(cs[1].raw == "| p0 | 0 |\n| p1 | 1 |");
    CHECK(cs[1].text == "Rates\n| plan | rate |\n|------|-----:|\n| p0 | 0 |\n| p1 | 1 |");
    CHECK(cs[3].text == "Rates\n| plan | rate |\n|------|-----:|\n| p4 | 4 |\n| p5 | 5 |");
    CHECK(ids(cs) == Strings{"doc.md:1", "doc.md:1#2", "doc.md:1#3", "doc.md:1#4"});
    CHECK(cs[1].first_line == 5);
    CHECK(cs[3].last_line == 10);
}

TEST_CASE("Splitting: paragraphs first, then sentences, with overlap", "[chunk][split]") {
    // Three paragraphs of 4, 4 and 6 words; max 8 tokens.
    const std::string text = "# S\none two three four\n\nfive six seven eight\n\nA b c. D e f.\n";
    ChunkOptions o;
    o.max_tokens = 8;
    o.overlap = 0;
    auto cs = md(text, o);
    REQUIRE(cs.size() == 2);
    CHECK(cs[0].raw == "one two three four\n\nfive six seven eight");
    CHECK(cs[1].raw == "A b c. D e f.");
    // Overlap 3: the next part starts 3 tokens back, at the earliest sentence start
    // among them if any (none here: "six seven eight"); it may take 5 new tokens and
    // ends at the strongest boundary among them, the sentence end "c.".
    o.overlap = 3;
    cs = md(text, o);
    REQUIRE(cs.size() == 3);
    CHECK(cs[1].raw == "six seven eight\n\nA b c.");
    CHECK(cs[1].first_line == 4);
    CHECK(cs[1].last_line == 6);
    // The third part starts at the paragraph start within its last 3 tokens.
    CHECK(cs[2].raw == "A b c. D e f.");
    // One paragraph of 3 sentences (3 + 3 + 3 words), max 7: cut after a sentence.
    cs = md("# S\nA b c. D e f. G h i.\n", ChunkOptions{7, 0, {}});
    REQUIRE(cs.size() == 2);
    CHECK(cs[0].raw == "A b c. D e f.");
    CHECK(cs[1].raw == "G h i.");
    CHECK(cs[1].first_line == 2);
    // With overlap 4, the earliest sentence start in the last 4 tokens ("c. D e f.") is D.
    cs = md("# S\nA b c. D e f. G h i.\n", ChunkOptions{7, 4, {}});
    REQUIRE(cs.size() == 2);
    CHECK(cs[1].raw == "D e f. G h i.");
    // A sentence longer than max is cut between words.
    cs = md("# S\nw1 w2 w3 w4 w5\n", ChunkOptions{2, 0, {}});
    REQUIRE(cs.size() == 3);
    CHECK(cs[2].raw == "w5");
}

TEST_CASE("Splitting: defaults are 400 tokens and 15% overlap, bad options throw", "[chunk][split]") {
    ChunkOptions o;
    CHECK(o.max_tokens == 400);
    CHECK(o.overlap_tokens() == 60);
    o.max_tokens = 100;
    CHECK(o.overlap_tokens() == 15);
    std::string body = "# S\n";
    for (int i = 0; i < 1000; ++i) {
        body += 'w';
        body += std::to_string(i);
        body += i % 10 == 9 ? ".\n" : " ";
    }
    const auto cs = md(body);
    // 1000 words, sentences of 10: parts end at sentence ends, at most 400 words each.
    REQUIRE(cs.size() == 3);
    CHECK(cs[0].raw.starts_with("w0 "));
    CHECK(cs[0].raw.ends_with("w399."));
    CHECK(cs[1].raw.starts_with("w340 "));  // 60 tokens back, a sentence start
    CHECK_THROWS_AS(md("x", ChunkOptions{0, 0, {}}), ragpp::InvalidArgument);
    CHECK_THROWS_WITH(md("x", ChunkOptions{10, 10, {}}), Catch::Contains("overlap 10"));
}

TEST_CASE("The context hook adds text after the context line", "[chunk]") {
    ChunkOptions o;
    o.context_hook = [](const Chunk& c, const Document& d) {
        return "From " + d.id + ", part " + std::to_string(c.part) + ".";
    };
    const auto cs = md("# T\nBody.\n", o);
    REQUIRE(cs.size() == 1);
    CHECK(cs[0].text == "T\nFrom doc.md, part 1.\nBody.");
    CHECK(cs[0].raw == "Body.");
    const auto d = cs[0].to_document();
    CHECK(d.id == "doc.md:1");
    CHECK(d.text == cs[0].text);
    CHECK(std::get<std::string>(d.metadata.at("source")) == "doc.md");
    CHECK(std::get<double>(d.metadata.at("first_line")) == 2.0);
    CHECK(std::get<Strings>(d.metadata.at("heading_path")) == Strings{"T"});
}

TEST_CASE("reStructuredText: underline and overline titles, hierarchy by appearance", "[chunk][rst]") {
    const std::string text =
        "==========\n"   // 1
        " Doc Title\n"   // 2
        "==========\n"   // 3
        "\n"
        "Intro.\n"       // 5
        "\n"
        "Part A\n"       // 7
        "******\n"
        "\n"
        "Text A. See::\n"  // 10
        "\n"
        "    code\n"
        "    Not a title\n"
        "    -----------\n"
        "\n"
        "Sub\n"          // 16
        "###\n"
        "Text sub.\n"    // 18
        "\n"
        "----\n"         // 20: transition
        "\n"
        "Part B\n"       // 22
        "******\n"
        "Ünïcödé title\n"  // 24
        "~~~~\n"
        "\n"
        "Deep.\n"        // 27
        "\n"
        "Short\n"
        "--\n"
        "not a title.\n";
    const auto cs = ragpp::chunk_rst(Document{"d.rst", text, {}});
    REQUIRE(ids(cs) == Strings{"d.rst:2", "d.rst:7", "d.rst:16", "d.rst:24"});
    CHECK(cs[0].heading_path == Strings{"Doc Title"});
    CHECK(cs[1].heading_path == Strings{"Doc Title", "Part A"});
    CHECK(cs[1].raw == "Text A. See::\n\n    code\n    Not a title\n    -----------");
    CHECK(cs[2].heading_path == Strings{"Doc Title", "Part A", "Sub"});
    CHECK(cs[2].raw == "Text sub.");  // the transition is markup
    // "Part B" reuses level 2's style; the ~ style is new: level 4, under Part B.
    CHECK(cs[3].heading_path == Strings{"Doc Title", "Part B", "Ünïcödé title"});
    CHECK(cs[3].raw == "Deep.\n\nShort\n--\nnot a title.");
    CHECK(cs[3].first_line == 27);
    CHECK(cs[3].last_line == 31);
}

TEST_CASE("reStructuredText: a title with the same character over and under is another style", "[chunk][rst]") {
    const auto cs = ragpp::chunk_rst(Document{"d.rst", "=====\nTop\n=====\n\nx\n\nMid\n=====\n\ny\n\nTop2\n====\nz\n", {}});
    REQUIRE(ids(cs) == Strings{"d.rst:2", "d.rst:7", "d.rst:12"});
    CHECK(cs[1].heading_path == Strings{"Top", "Mid"});
    CHECK(cs[2].heading_path == Strings{"Top", "Top2"});
}

TEST_CASE("Plain text: one section, paragraphs, id on the first line of text", "[chunk][text]") {
    const auto cs = ragpp::chunk_text(Document{"notes/a.txt", "\n\nFirst para.\nStill.\n\nSecond.\n", {}},
                                      ChunkOptions{3, 0, {}});
    REQUIRE(ids(cs) == Strings{"notes/a.txt:3", "notes/a.txt:3#2"});
    CHECK(cs[0].raw == "First para.\nStill.");
    CHECK(cs[0].text == "a.txt\nFirst para.\nStill.");
    CHECK(cs[1].raw == "Second.");
    CHECK(cs[1].first_line == 6);
}

TEST_CASE("chunk_document picks the chunker by extension", "[chunk]") {
    CHECK(ragpp::source_format("a/b.MD") == ragpp::SourceFormat::markdown);
    CHECK(ragpp::source_format("x.markdown") == ragpp::SourceFormat::markdown);
    CHECK(ragpp::source_format("x.rst") == ragpp::SourceFormat::rst);
    CHECK(ragpp::source_format("x.txt") == ragpp::SourceFormat::text);
    CHECK(ragpp::source_format(".md") == ragpp::SourceFormat::text);
    CHECK(ragpp::source_format("noext") == ragpp::SourceFormat::text);
    const std::string text = "# H\nline\n";
    CHECK(ragpp::chunk_document(Document{"a.md", text, {}})[0].heading_path == Strings{"H"});
    CHECK(ragpp::chunk_document(Document{"a.txt", text, {}})[0].raw == "# H\nline");
}

TEST_CASE("Chinese and Japanese characters are tokens of their own", "[chunk][split]") {
    // 11 tokens: 東 京 は 晴 れ 。 大 阪 は 雨 。; a sentence ends after each 。
    auto cs = md("# 天気\n東京は晴れ。大阪は雨。\n", ChunkOptions{6, 0, {}});
    REQUIRE(cs.size() == 2);
    CHECK(cs[0].raw == "東京は晴れ。");
    CHECK(cs[1].raw == "大阪は雨。");
    CHECK(cs[1].id == "doc.md:1#2");
    CHECK(cs[1].first_line == 2);
    // Latin words stay whole beside them: MX-200 の 価 格 = 4 tokens.
    cs = md("# T\nMX-200の価格\n", ChunkOptions{2, 0, {}});
    REQUIRE(cs.size() == 2);
    CHECK(cs[0].raw == "MX-200の");
    CHECK(cs[1].raw == "価格");
}
