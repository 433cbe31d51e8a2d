#include <ragpp/core/bitset.hpp>
#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>
#include <ragpp/index/store.hpp>

#include <catch2/catch.hpp>

#include <random>
#include <set>

using namespace ragpp;

TEST_CASE("DocSet set operations match std::set", "[core][bitset]") {
    const auto seed = GENERATE(take(50, random(0u, 1000000u)));
    std::mt19937 rng(seed);
    const std::size_t n = 1 + rng() % 300;
    DocSet a(n), b(n);
    std::set<DocId> sa, sb;
    for (int i = 0; i < 100; ++i) {
        const auto x = static_cast<DocId>(rng() % n), y = static_cast<DocId>(rng() % n);
        a.set(x);
        sa.insert(x);
        b.set(y);
        sb.insert(y);
    }
    CHECK(a.count() == sa.size());
    CHECK(a.ids() == std::vector<DocId>(sa.begin(), sa.end()));
    std::set<DocId> u, i, d, c;
    std::set_union(sa.begin(), sa.end(), sb.begin(), sb.end(), std::inserter(u, u.end()));
    std::set_intersection(sa.begin(), sa.end(), sb.begin(), sb.end(), std::inserter(i, i.end()));
    std::set_difference(sa.begin(), sa.end(), sb.begin(), sb.end(), std::inserter(d, d.end()));
    for (DocId x = 0; x < n; ++x)
        if (!sa.count(x)) c.insert(x);
    CHECK((a | b).ids() == std::vector<DocId>(u.begin(), u.end()));
    CHECK((a & b).ids() == std::vector<DocId>(i.begin(), i.end()));
    CHECK((a - b).ids() == std::vector<DocId>(d.begin(), d.end()));
    CHECK(a.complement().ids() == std::vector<DocId>(c.begin(), c.end()));
    CHECK(DocSet::all(n).count() == n);
    CHECK_FALSE(a.test(static_cast<DocId>(n + 5)));  // beyond the universe: absent
}

TEST_CASE("Date parses and prints ISO dates and rejects others", "[core]") {
    CHECK(Date::parse("1970-01-01").days == 0);
    CHECK(Date::parse("2026-11-29").to_string() == "2026-11-29");
    CHECK(Date::parse("2024-02-29") < Date::parse("2024-03-01"));
    CHECK(Date::parse("1969-12-31").days == -1);
    CHECK_THROWS_AS(Date::parse("2023-02-29"), ParseError);
    CHECK_THROWS_WITH(Date::parse("29/11/2026"), Catch::Contains("'29/11/2026'"));
}

TEST_CASE("Error messages carry their category", "[core][error]") {
    CHECK_THROWS_WITH(throw DuplicateError("document id 'x'"), "[ragpp.duplicate_id] document id 'x'");
    CHECK_THROWS_AS(throw DimensionError("3 != 4"), InvalidArgument);
    CHECK_THROWS_AS(throw FormatError("bad"), Error);
}

TEST_CASE("DocumentStore: dense ids, keys, never reused", "[core][store]") {
    DocumentStore s;
    CHECK(s.next_id() == 0);
    s.insert(0, {"a", "text a", {}});
    s.insert(1, {"b", "text b", {}});
    CHECK_THROWS_AS(s.insert(1, {"c", "", {}}), DuplicateError);
    CHECK_THROWS_WITH(s.insert(2, {"a", "", {}}), Catch::Contains("'a' is already in the store"));
    CHECK(s.size() == 2);
    CHECK(s.find("b") == DocId{1});
    auto kept = s.get(1);
    s.erase(1);
    CHECK(kept->text == "text b");
    CHECK_FALSE(s.find("b"));
    CHECK_THROWS_AS(s.erase(1), NotFoundError);
    CHECK(s.next_id() == 2);  // 1 is not handed out again
    CHECK_THROWS_AS(s.insert(1, {"b", "", {}}), DuplicateError);
    s.insert(2, {"b", "again", {}});
    CHECK(s.live().ids() == std::vector<DocId>{0, 2});
    s.undo_insert(2);  // the last id becomes free again
    CHECK(s.next_id() == 2);
    CHECK(s.size() == 1);
}
