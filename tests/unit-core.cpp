#include <ragpp/core/bitset.hpp>
#include <ragpp/core/choices.hpp>
#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>
#include <ragpp/index/store.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <random>
#include <set>
#include <string>
#include <type_traits>
#include <utility>

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

// The oracle: <chrono>'s calendar (which Date no longer includes, to keep core/types.hpp light).
TEST_CASE("Date's calendar equals std::chrono's: every day of 1600-2400, every 97th of 0000-9999", "[core]") {
    auto check = [](std::int32_t days) {
        const std::chrono::year_month_day ymd{std::chrono::sys_days{std::chrono::days{days}}};
        char text[40];
        std::snprintf(text, sizeof text, "%04d-%02u-%02u", static_cast<int>(ymd.year()),
                      static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()));
        const Date d{days};
        if (d.to_string() != text || Date::parse(text).days != days) FAIL("day " << days << " (" << text << ")");
    };
    const auto first = [](int y) {
        return static_cast<std::int32_t>(
            std::chrono::sys_days{std::chrono::year{y} / 1 / 1}.time_since_epoch().count());
    };
    for (std::int32_t days = first(1600); days < first(2401); ++days) check(days);
    for (std::int32_t days = first(0); days < first(10000); days += 97) check(days);
    // Days 28 to 31 of every month of 1600-2400 parse exactly when they exist.
    for (int y = 1600; y <= 2400; ++y)
        for (unsigned m = 1; m <= 12; ++m)
            for (unsigned day = 28; day <= 31; ++day) {
                char text[40];
                std::snprintf(text, sizeof text, "%04d-%02u-%02u", y, m, day);
                const bool exists = std::chrono::year_month_day{std::chrono::year{y}, std::chrono::month{m},
                                                                std::chrono::day{day}}.ok();
                bool parsed = true;
                try {
                    (void)Date::parse(text);
                } catch (const ParseError&) {
                    parsed = false;
                }
                if (parsed != exists) FAIL(text << (exists ? " exists" : " does not exist"));
            }
    CHECK_THROWS_AS(Date::parse("2024-00-10"), ParseError);
    CHECK_THROWS_AS(Date::parse("2024-13-10"), ParseError);
    CHECK_THROWS_AS(Date::parse("2024-01-00"), ParseError);
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

namespace {
/// The category and message of `e` seen through the base class, as a caller sees them.
std::pair<errc, std::string> seen_as_error(const Error& e) { return {e.category(), e.what()}; }
}  // namespace

TEST_CASE("Error::category: one enum value and id per subclass, the id opens the message", "[core][error]") {
    // The table of docs/errors.md, typed again by hand: subclass -> (errc, numeric value, id).
    struct Row {
        std::pair<errc, std::string> seen;
        errc want;
        int value;
        const char* id;
    };
    const Row rows[] = {
        {seen_as_error(InvalidArgument("m")), errc::invalid_argument, 1, "invalid_argument"},
        {seen_as_error(DimensionError("m")), errc::dimension, 2, "dimension"},
        {seen_as_error(DuplicateError("m")), errc::duplicate_id, 3, "duplicate_id"},
        {seen_as_error(NotFoundError("m")), errc::not_found, 4, "not_found"},
        {seen_as_error(ParseError("m")), errc::parse_error, 5, "parse_error"},
        {seen_as_error(FormatError("m")), errc::format_error, 6, "format_error"},
        {seen_as_error(IoError("m")), errc::io_error, 7, "io_error"},
        {seen_as_error(UnsupportedError("m")), errc::unsupported, 8, "unsupported"},
        {seen_as_error(ragpp::OutOfMemoryError("m")), errc::out_of_memory, 9, "out_of_memory"},
    };
    std::set<int> values;
    std::set<std::string> ids;
    for (const auto& r : rows) {
        INFO(r.id);
        CHECK(r.seen.first == r.want);
        CHECK(static_cast<int>(r.want) == r.value);  // stable numbers: programs may store them
        CHECK(errc_id(r.want) == r.id);
        CHECK(r.seen.second == "[ragpp." + std::string(r.id) + "] m");
        values.insert(r.value);
        ids.insert(r.id);
    }
    CHECK(values.size() == 9);
    CHECK(ids.size() == 9);
    // Through the base class, id() and category() agree.
    try {
        throw NotFoundError("no document with DocId 7");
    } catch (const Error& e) {
        CHECK(e.category() == errc::not_found);
        CHECK(e.id() == "not_found");
    }
    // A DimensionError is still caught as an InvalidArgument, with its own category.
    try {
        throw DimensionError("3 != 4");
    } catch (const InvalidArgument& e) {
        CHECK(e.category() == errc::dimension);
    }
    // No uncategorised Error: the base is not constructible from a message alone.
    STATIC_REQUIRE_FALSE(std::is_constructible_v<Error, std::string>);
    STATIC_REQUIRE_FALSE(std::is_constructible_v<Error, const char*>);
    STATIC_REQUIRE(std::is_constructible_v<ParseError, std::string>);
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

TEST_CASE("choice tables: names and help joined for messages and help texts", "[core][choices]") {
    using ragpp::Choice;
    constexpr Choice one[] = {{"a", ""}};
    constexpr Choice three[] = {{"a", "first"}, {"b", ""}, {"c:DIR", "a folder"}};
    CHECK(ragpp::choice_names(one) == "a");
    CHECK(ragpp::choice_names(three) == "a, b or c:DIR");
    CHECK(ragpp::choice_names(three, ", ") == "a, b, c:DIR");
    CHECK(ragpp::choice_help(three) == "a (first), b or c:DIR (a folder)");
    CHECK(ragpp::choice_names(std::span<const Choice>()).empty());
}
