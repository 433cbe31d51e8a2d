// Access declarations in front matter fail closed: each slip a new user makes (a key
// that looks like the access field but is not it, a front matter that does not parse, a
// fence never closed) locks the note for everyone but the system principal, with a
// reason naming the file and the key; TOML front matter, a BOM and blank lines before
// the fence are read. Oracles: hand-written notes and hand-derived expectations.
#include <chrono>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <ragpp/chunk/front_matter.hpp>
#include <ragpp/chunk/markdown.hpp>
#include <ragpp/io/beir.hpp>
#include <ragpp/io/metadata_json.hpp>
#include <ragpp/retrieve/collection.hpp>

#include "support.hpp"
#include "term_overlap_index.hpp"

using ragpp::AccessPolicy;
using ragpp::Collection;
using ragpp::CollectionOptions;
using ragpp::Date;
using ragpp::Document;
using ragpp::Filter;
using ragpp::Metadata;
using ragpp::Principal;
using ragpp::Unlabeled;
using Strings = std::vector<std::string>;
using R = ragpp::Retriever<ragpp_test::TermOverlapIndex>;
using C = Collection<R>;

namespace {

const std::string body = "# Salaries\n\nThe secret price is 42.\n";

/// The metadata of the chunks of note `doc.md` with `head` before `body` (all the same).
Metadata meta(const std::string& head, const ragpp::ChunkOptions& o = {}) {
    const auto cs = ragpp::chunk_markdown(Document{"doc.md", head + body, {}}, o);
    REQUIRE(!cs.empty());
    for (const auto& c : cs) CHECK(c.metadata == cs[0].metadata);
    return cs[0].metadata;
}

std::string error_of(const Metadata& m) {
    const auto it = m.find("access_error");
    return it == m.end() ? "" : std::get<std::string>(it->second);
}

bool locked(const Metadata& m) {
    const auto it = m.find("groups");
    return it != m.end() && std::get<Strings>(it->second).empty() && !error_of(m).empty();
}

/// Which of: no group, --as hr, --as hr,admins,x, system may read the note (public policy, as the tool's default).
std::vector<bool> readers(const std::string& head, Unlabeled unlabeled = Unlabeled::allow) {
    CollectionOptions o;
    o.access = AccessPolicy(unlabeled);
    C c(R{}, o);
    const auto chunks = c.add(Document{"doc.md", head + body, {}}).size();
    REQUIRE(chunks > 0);
    std::vector<bool> out;
    for (const auto& p : {Principal{}, Principal::with_groups({"hr"}), Principal::with_groups({"hr", "admins", "x"}),
                          Principal::system()}) {
        const auto n = c.allowed(Filter::all(), p).count();
        CHECK((n == 0 || n == chunks));
        out.push_back(n == chunks);
    }
    return out;
}

const std::vector<bool> nobody_but_system{false, false, false, true};
const std::vector<bool> hr_only{false, true, true, true};

}  // namespace

TEST_CASE("declarations: each slip locks the note, the reason names the file and the key", "[declarations]") {
    struct Slip {
        const char* head;
        const char* key;  // expected in the reason
    };
    const Slip slips[] = {
        {"---\ngroup: [hr]\n---\n", "'group'"},
        {"---\nGroups: [hr]\n---\n", "'Groups'"},
        {"---\nGROUPS: hr\n---\n", "'GROUPS'"},
        {"---\naccess: [hr]\n---\n", "'access'"},
        {"---\nacl: hr\n---\n", "'acl'"},
        {"---\nReaders: [hr]\n---\n", "'Readers'"},
        {"---\nroles: [hr]\n---\n", "'roles'"},
        {"---\nvisibility: private\n---\n", "'visibility'"},
        {"---\npermissions: [hr]\n---\n", "'permissions'"},
        {"---\naccess:\n  groups: [hr]\n---\n", "'access.groups'"},
        {"---\ngroups: [hr]\nGroups: [sales]\n---\n", "'Groups'"},  // the right key beside a wrong one
        {"---\naccess_error: none\n---\n", "'access_error'"},
        {"+++\nGroups = [\"hr\"]\n+++\n", "'Groups'"},
        {"---\ngroups: 3\n---\n", "'groups' is a number or a date"},
        {"---\ngroups: \"hr, sales\"\n---\n", "with a ','"},
        {"---\ngroups:\n---\n", "empty group name"},
        {"---\ngroups: null\n---\n", "is null"},
        // Cannot be parsed: the file and the line.
        {"---\ngroups: [hr\n---\n", "doc.md:2: front matter: unterminated flow list"},
        {"---\ntitle: x\ngroups hr\n---\n", "doc.md:3"},
        {"+++\ngroups = [\"hr\"\n+++\n", "doc.md:2: front matter: unterminated array"},
        {"+++\ngroups = hr\n+++\n", "'hr' is not a TOML value"},
        // An opening fence never closed, a declaration below it.
        {"---\ngroups: [hr]\n\n", "doc.md:1: front matter: the opening '---' is never closed"},
        {"\n+++\ngroups = [\"hr\"]\n", "doc.md:2: front matter: the opening '+++' is never closed"},
    };
    for (const auto& s : slips) {
        INFO(s.head);
        const auto m = meta(s.head);
        CHECK(locked(m));
        CHECK_THAT(error_of(m), Catch::StartsWith("doc.md") && Catch::Contains(s.key));
        CHECK(readers(s.head) == nobody_but_system);
        CHECK(readers(s.head, Unlabeled::deny) == nobody_but_system);
    }
    // A front matter that parsed keeps its other keys.
    CHECK(std::get<std::string>(meta("---\ntitle: Pay\nGroups: [hr]\n---\n").at("title")) == "Pay");
}

TEST_CASE("declarations: TOML, a BOM and blank lines before the fence are read", "[declarations]") {
    const char* const right[] = {
        "---\ngroups: [hr]\n---\n",
        "---\ngroups: hr\n---\n",
        "\xEF\xBB\xBF---\ngroups: [hr]\n---\n",
        "\n\n---\ngroups: [hr]\n---\n",
        "  \n---\ngroups: [hr]\n...\n",
        "\xEF\xBB\xBF\n+++\ngroups = [\"hr\"]\n+++\n",
        "+++\ntitle = 'Pay'\ngroups = [\n  \"hr\",  # the team\n]\n+++\n",
        "---\r\ngroups: [hr]\r\n---\r\n",
    };
    for (const char* head : right) {
        INFO(head);
        const auto m = meta(head);
        const auto& g = m.at("groups");
        CHECK((std::holds_alternative<Strings>(g) ? std::get<Strings>(g) == Strings{"hr"} : std::get<std::string>(g) == "hr"));
        CHECK(m.count("access_error") == 0);
        CHECK(readers(head) == hr_only);
    }
    // Not a front matter: a thematic break and prose stay public, as before.
    CHECK(readers("---\nA rule above.\n\n") == std::vector<bool>{true, true, true, true});
    CHECK(readers("---\nA rule above.\n\n", Unlabeled::deny) == nobody_but_system);
    // groups: [] is a declaration: nobody but the system, without a reason.
    CHECK(readers("---\ngroups: []\n---\n") == nobody_but_system);
    CHECK(meta("---\ngroups: []\n---\n").count("access_error") == 0);
    // Neighbours of the listed words are not access declarations.
    CHECK(readers("---\ngroup_by: month\nroleplay: no\n---\n") == std::vector<bool>{true, true, true, true});
}

TEST_CASE("declarations: the TOML subset by hand", "[declarations][toml]") {
    const auto m = ragpp::parse_toml_front_matter(
        "# Hugo\n"
        "title = \"Contrat \\\"cadre\\\"\"\n"
        "path = 'C:\\notes'\n"
        "version = 3\n"
        "price = -1_234.5\n"
        "date = 2025-03-01\n"
        "lastmod = 2025-03-01T10:00:00+01:00\n"
        "draft = false  # a comment\n"
        "tags = [\"a\", 'b c', 3, 2025-01-02,]\n"
        "\n"
        "[params]\n"
        "owner.name = \"Bob\"\n"
        "\"quoted key\" = 1\n",
        "h.md", 2);
    CHECK(std::get<std::string>(m.at("title")) == "Contrat \"cadre\"");
    CHECK(std::get<std::string>(m.at("path")) == "C:\\notes");
    CHECK(std::get<double>(m.at("version")) == 3.0);
    CHECK(std::get<double>(m.at("price")) == -1234.5);
    CHECK(std::get<Date>(m.at("date")) == Date::parse("2025-03-01"));
    CHECK(std::get<std::string>(m.at("lastmod")) == "2025-03-01T10:00:00+01:00");
    CHECK(std::get<std::string>(m.at("draft")) == "false");
    CHECK(std::get<Strings>(m.at("tags")) == Strings{"a", "b c", "3", "2025-01-02"});
    CHECK(std::get<std::string>(m.at("params.owner.name")) == "Bob");
    CHECK(std::get<double>(m.at("params.quoted key")) == 1.0);
    CHECK(m.size() == 10);
    auto fails = [](const char* text, const char* what) {
        CHECK_THROWS_WITH(ragpp::parse_toml_front_matter(text, "h.md", 2), Catch::Contains(what));
    };
    fails("a = {x = 1}\n", "h.md:2: front matter: inline tables");
    fails("a = 1\nb = \"\"\"x\"\"\"\n", "h.md:3: front matter: multi-line strings");
    fails("[[a]]\n", "arrays of tables");
    fails("a = [1, [2]]\n", "nested arrays");
    fails("a = 1\na = 2\n", "h.md:3: front matter: duplicate key 'a'");
    fails("a = 2025-02-30\n", "not a valid date");
    fails("a = 1 2\n", "'1 2' is not a TOML value");
    fails("a = \"open\n", "unterminated string");
    fails("just text\n", "expected 'key = value'");
    fails("a = \"\\u00e9\"\n", "unsupported escape");
}

TEST_CASE("declarations: a collection locks the field its policy reads", "[declarations]") {
    CollectionOptions o;
    o.access = AccessPolicy(Unlabeled::allow, "acl");
    C c(R{}, o);
    (void)c.add(Document{"a.md", "---\ngroups: [hr]\n---\n" + body, {}});  // "groups" looks like "acl" here
    (void)c.add(Document{"b.md", "---\nacl: [hr]\n---\n" + body, {}});
    const auto hr = c.allowed(Filter::all(), Principal::with_groups({"hr"}));
    const auto& ids_a = c.sources().find("a.md")->second;
    const auto& ids_b = c.sources().find("b.md")->second;
    CHECK_FALSE(hr.test(ids_a[0]));
    CHECK(hr.test(ids_b[0]));
    CHECK(c.allowed(Filter::all(), Principal::system()).test(ids_a[0]));
    CHECK(ragpp::misdeclared_access_key("groups", "acl"));
    CHECK_FALSE(ragpp::misdeclared_access_key("acl", "acl"));
    CHECK_FALSE(ragpp::misdeclared_access_key("groupie"));
    CHECK(ragpp::misdeclared_access_key("meta.Visibility"));
}

TEST_CASE("declarations: a group name is a token; null, booleans, spaces at an end and controls lock the note",
          "[declarations][hostile]") {
    // Once, `groups: true` became the group "true", which `--as true` unlocked.
    const char* const slips[] = {
        "---\ngroups: true\n---\n",          "---\ngroups: True\n---\n",        "---\ngroups: FALSE\n---\n",
        "---\ngroups: ~\n---\n",             "---\ngroups: yes\n---\n",         "---\ngroups: off\n---\n",
        "---\ngroups: [hr, null]\n---\n",    "---\ngroups: [hr, \"~\"]\n---\n", "---\ngroups:\n  - hr\n  - 'true'\n---\n",
        "---\ngroups: \" hr\"\n---\n",       "---\ngroups: \"hr\\t\"\n---\n",   "---\ngroups: \"h\\nr\"\n---\n",
        "---\ngroups: [\"hr,admins\"]\n---\n", "---\ngroups: hr, admins\n---\n",
        "+++\ngroups = true\n+++\n",         "+++\ngroups = [\"hr\", \"null\"]\n+++\n",
    };
    for (const char* head : slips) {
        INFO(head);
        const auto m = meta(head);
        CHECK(locked(m));
        CHECK_THAT(error_of(m), Catch::StartsWith("doc.md: front matter key 'groups'"));
        CHECK(readers(head) == nobody_but_system);
        CHECK(readers(head, Unlabeled::deny) == nobody_but_system);
    }
    CHECK_THAT(error_of(meta("---\ngroups: true\n---\n")), Catch::Contains("'true', which is no group name: it is a YAML boolean word"));
    CHECK_THAT(error_of(meta("---\ngroups: [hr, null]\n---\n")), Catch::Contains("it is YAML's null"));
    // Names with spaces inside, digits, dots and non-ASCII letters are names.
    for (const char* name : {"hr", "human resources", "team.42", "ressources-humaines", "人事", "nullable", "trueblue"})
        CHECK(ragpp::group_name_problem(name).empty());
    CHECK(ragpp::group_name_problem("") == "is empty");
    CHECK(ragpp::group_name_problem("a,b") == "holds a ','");
    CHECK(ragpp::group_name_problem("a\x1b[31m") == "holds a control character");
    CHECK(ragpp::group_name_problem("a\xC2\x85") == "holds a control character");  // U+0085, NEL
    CHECK(ragpp::group_name_problem("caf\xE9") == "is not valid UTF-8");
    CHECK(ragpp::group_name_problem("hr ") == "has white space at its start or end");
    CHECK(ragpp::group_name_problem("Null") == "is YAML's null");
    CHECK(ragpp::group_name_problem("ON") == "is a YAML boolean word");
    CHECK(readers("---\ngroups: [\"human resources\", hr]\n---\n") == hr_only);
}

namespace {

/// The error check_json_access gives line `json` of docs.jsonl (line 7), or "".
std::string jsonl_error(const std::string& json, bool metadata_read = true) {
    try {
        ragpp::check_json_access(nlohmann::json::parse(json), "docs.jsonl:7", "groups", metadata_read);
    } catch (const ragpp::ParseError& e) {
        const std::string what = e.what(), tag = "[ragpp.parse_error] ";
        return what.starts_with(tag) ? what.substr(tag.size()) : what;
    }
    return {};
}

}  // namespace

TEST_CASE("declarations: a JSONL document's access slips are errors naming the line and the key", "[declarations][hostile]") {
    // Once, each of these went public.
    struct Slip {
        const char* line;
        const char* what;
    };
    const Slip slips[] = {
        {R"({"id":"a","text":"t","metadata":null})", "docs.jsonl:7: field 'metadata' must be an object, not null"},
        {R"({"id":"a","text":"t","metadata":["hr"]})", "field 'metadata' must be an object, not array"},
        {R"({"id":"a","text":"t","metadata":{"groups":null}})", "metadata field 'groups' must be a group name or a list of them, not null"},
        {R"({"id":"a","text":"t","metadata":{"groups":3}})", "not number"},
        {R"({"id":"a","text":"t","metadata":{"groups":true}})", "not boolean"},
        {R"({"id":"a","text":"t","metadata":{"groups":{"date":"2025-01-01"}}})", "not object"},
        {R"({"id":"a","text":"t","metadata":{"groups":["hr",null]}})", "must be a list of strings (it holds null)"},
        {R"({"id":"a","text":"t","metadata":{"groups":""}})", "holds '', which is no group name: it is empty"},
        {R"({"id":"a","text":"t","metadata":{"groups":"hr, admins"}})", "holds a ','"},
        {R"({"id":"a","text":"t","metadata":{"groups":["null"]}})", "it is YAML's null"},
        {R"({"id":"a","text":"t","metadata":{"groups":"true"}})", "it is a YAML boolean word"},
        {R"({"id":"a","text":"t","metadata":{"Groups":["hr"]}})", "metadata key 'Groups' looks like an access declaration"},
        {R"({"id":"a","text":"t","metadata":{"groups":["hr"],"acl":"x"}})", "metadata key 'acl'"},
        {R"({"id":"a","text":"t","metadata":{"access_error":"x"}})", "metadata key 'access_error'"},
        {R"({"id":"a","text":"t","groups":["hr"]})", "field 'groups' looks like an access declaration outside 'metadata'"},
        {R"({"id":"a","text":"t","Groups":["hr"],"metadata":{"groups":["hr"]}})", "field 'Groups'"},
    };
    for (const auto& s : slips) {
        INFO(s.line);
        CHECK_THAT(jsonl_error(s.line), Catch::StartsWith("docs.jsonl:7: ") && Catch::Contains(s.what));
    }
    for (const char* right : {R"({"id":"a","text":"t"})", R"({"id":"a","text":"t","metadata":{}})",
                              R"({"id":"a","text":"t","metadata":{"groups":"hr","group_by":"x"}})",
                              R"({"id":"a","text":"t","metadata":{"groups":[]}})",
                              R"({"id":"a","text":"t","metadata":{"groups":["hr","human resources"]}})"}) {
        INFO(right);
        CHECK(jsonl_error(right).empty());
    }
    // A BEIR corpus.jsonl reads no metadata: a declaration anywhere is the error, a null metadata is not.
    CHECK(jsonl_error(R"({"_id":"a","text":"t","metadata":null})", false).empty());
    CHECK(jsonl_error(R"({"_id":"a","text":"t","metadata":{"url":"x"}})", false).empty());
    CHECK_THAT(jsonl_error(R"({"_id":"a","text":"t","metadata":{"groups":["hr"]}})", false),
               Catch::Contains("'metadata.groups' is an access declaration, but a BEIR corpus.jsonl carries no access"));
    CHECK_THAT(jsonl_error(R"({"_id":"a","text":"t","groups":"hr"})", false), Catch::Contains("carries no access"));
}

TEST_CASE("declarations: a JSONL line with a key twice is an error naming the line and the key", "[declarations][hostile]") {
    // Once, a second "metadata" replaced the first (nlohmann keeps the last).
    CHECK(ragpp::detail::json_duplicate_key(R"({"a":1,"b":2})") == std::nullopt);
    CHECK(ragpp::detail::json_duplicate_key(R"({"a":{"x":1},"b":{"x":2},"c":[{"x":1},{"x":1}]})") == std::nullopt);
    CHECK(ragpp::detail::json_duplicate_key(R"({"metadata":{"groups":["hr"]},"metadata":{}})") == "metadata");
    CHECK(ragpp::detail::json_duplicate_key(R"({"m":{"groups":["hr"],"groups":[]}})") == "groups");
    CHECK(ragpp::detail::json_duplicate_key(R"([{"a":1},{"b":{"c":[{"d":1,"d":2}]}}])") == "d");
    ragpp_test::TempDir tmp;
    const auto file = tmp.path / "corpus.jsonl";
    std::ofstream(file) << R"({"_id":"a","text":"one"})" "\n"
                        << R"({"_id":"b","text":"two","metadata":{"groups":["hr"]},"metadata":{}})" "\n";
    CHECK_THROWS_WITH(ragpp::read_beir_corpus(file),
                      Catch::EndsWith("corpus.jsonl:2: key 'metadata' appears twice in one object"));
    // n log n: 50,000 keys in one line take about 50 ms; the bound is 40 times that (a
    // quadratic check would take minutes).
    std::string wide = "{";
    for (int i = 0; i < 50000; ++i) wide += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":" + std::to_string(i);
    const auto start = std::chrono::steady_clock::now();
    CHECK(ragpp::detail::json_duplicate_key(wide + "}") == std::nullopt);
    CHECK(ragpp::detail::json_duplicate_key(wide + ",\"k49999\":0}") == "k49999");
    CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 2.0);
}
