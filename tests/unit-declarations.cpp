// Access declarations in front matter fail closed: each slip a new user makes (a key
// that looks like the access field but is not it, a front matter that does not parse, a
// fence never closed) locks the note for everyone but the system principal, with a
// reason naming the file and the key; TOML front matter, a BOM and blank lines before
// the fence are read. Oracles: hand-written notes and hand-derived expectations.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <ragpp/chunk/front_matter.hpp>
#include <ragpp/chunk/markdown.hpp>
#include <ragpp/retrieve/collection.hpp>

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
