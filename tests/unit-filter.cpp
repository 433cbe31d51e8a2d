// Filters, the metadata index and access control. Oracles: hand-computed sets on a
// small collection, and Filter::matches (one document at a time) against the index's
// compiled sets on random collections with random removals, also through save() and a
// frozen load() (used in place, then thawed by the next write).
#include <ragpp/filter/access.hpp>
#include <ragpp/filter/filter.hpp>
#include <ragpp/filter/metadata_index.hpp>

#include <catch2/catch.hpp>

#include "support.hpp"

#include <deque>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

using ragpp::AccessPolicy;
using ragpp::Date;
using ragpp::DocId;
using ragpp::DocSet;
using ragpp::Filter;
using ragpp::Metadata;
using ragpp::MetadataIndex;
using ragpp::parse_filter;
using ragpp::Principal;
using ragpp::Unlabeled;
using Strings = std::vector<std::string>;
using Ids = std::vector<DocId>;

namespace {

// 0: contract v3 2025-03-01 [legal, sales]
// 1: contract v1 2024-01-15 [legal]
// 2: memo     v2 2025-06-30 "sales" (a single group as a string)
// 3: memo     (no version, no date, no groups)
// 4: report   v3 (a number "type"? no: type "3" as a string) groups []
std::vector<Metadata> small_collection() {
    return {
        {{"type", std::string("contract")}, {"version", 3.0}, {"date", Date::parse("2025-03-01")},
         {"groups", Strings{"legal", "sales"}}},
        {{"type", std::string("contract")}, {"version", 1.0}, {"date", Date::parse("2024-01-15")},
         {"groups", Strings{"legal"}}},
        {{"type", std::string("memo")}, {"version", 2.0}, {"date", Date::parse("2025-06-30")},
         {"groups", std::string("sales")}},
        {{"type", std::string("memo")}},
        {{"type", std::string("3")}, {"version", 3.0}, {"groups", Strings{}}},
    };
}

MetadataIndex index_of(const std::vector<Metadata>& docs) {
    MetadataIndex idx;
    for (std::size_t i = 0; i < docs.size(); ++i) idx.add_document(static_cast<DocId>(i), docs[i]);
    return idx;
}

}  // namespace

TEST_CASE("Filters compile to the hand-computed sets", "[filter]") {
    const auto docs = small_collection();
    const auto idx = index_of(docs);
    auto ids = [&](const Filter& f) { return idx.compile(f).ids(); };
    CHECK(ids(Filter::eq("type", std::string("contract"))) == Ids{0, 1});
    CHECK(ids(Filter::eq("version", 3.0)) == Ids{0, 4});
    CHECK(ids(Filter::eq("type", 3.0)).empty());  // "3" is a string, not the number 3
    CHECK(ids(Filter::eq("groups", std::string("sales"))) == Ids{0, 2});
    CHECK(ids(Filter::in("groups", {std::string("legal"), std::string("hr")})) == Ids{0, 1});
    CHECK(ids(Filter::range("version", 2.0, std::nullopt)) == Ids{0, 2, 4});
    CHECK(ids(Filter::range("version", 1.0, 3.0, false, false)) == Ids{2});
    CHECK(ids(Filter::range("version", 2.0, 2.0, true, false)).empty());
    CHECK(ids(Filter::range("version", 3.0, 1.0)).empty());
    CHECK(ids(Filter::range("date", Date::parse("2025-01-01"), Date::parse("2025-06-30"))) == Ids{0, 2});
    CHECK(ids(Filter::exists("groups")) == Ids{0, 1, 2, 4});
    CHECK(ids(!Filter::exists("date")) == Ids{3, 4});
    CHECK(ids(Filter::eq("type", std::string("memo")) && !Filter::exists("version")) == Ids{3});
    CHECK(ids(Filter::eq("type", std::string("memo")) || Filter::eq("version", 1.0)) == Ids{1, 2, 3});
    CHECK(ids(Filter::all()) == Ids{0, 1, 2, 3, 4});
    CHECK(ids(Filter::none()).empty());
    CHECK(ids(Filter::eq("nosuchfield", std::string("x"))).empty());
    for (const Filter& f : {Filter::eq("version", 3.0), !Filter::exists("date"), Filter::range("version", 2.0, std::nullopt)})
        for (std::size_t i = 0; i < docs.size(); ++i) CHECK(f.matches(docs[i]) == idx.compile(f).test(static_cast<DocId>(i)));
}

TEST_CASE("Filter arguments are checked", "[filter]") {
    CHECK_THROWS_AS(Filter::range("v", std::string("a"), std::nullopt), ragpp::InvalidArgument);
    CHECK_THROWS_AS(Filter::range("v", 1.0, Date{3}), ragpp::InvalidArgument);
    CHECK_THROWS_AS(Filter::range("v", std::nullopt, std::nullopt), ragpp::InvalidArgument);
    CHECK_THROWS_AS(Filter::eq("v", std::nan("")), ragpp::InvalidArgument);
    MetadataIndex idx;
    CHECK_THROWS_AS(idx.add_document(0, Metadata{{"x", std::nan("")}}), ragpp::InvalidArgument);
    CHECK(idx.size() == 0);
    CHECK(idx.posting_entries() == 0);
    idx.add_document(0, Metadata{{"x", 1.0}});
    CHECK_THROWS_AS(idx.add_document(0, Metadata{{"x", 2.0}}), ragpp::DuplicateError);
    CHECK(idx.compile(Filter::eq("x", 1.0)).ids() == Ids{0});
    CHECK(idx.compile(Filter::eq("x", 2.0)).empty());
    CHECK_THROWS_AS(idx.remove_document(7), ragpp::NotFoundError);
}

TEST_CASE("Filter text syntax", "[filter][parse]") {
    const auto docs = small_collection();
    const auto idx = index_of(docs);
    auto ids = [&](std::string_view text) { return idx.compile(parse_filter(text)).ids(); };
    CHECK(ids("type=contract") == Ids{0, 1});
    CHECK(ids("type=3") == Ids{4});  // a bare word is the string "3" or the number 3
    CHECK(ids("version=3") == Ids{0, 4});
    CHECK(ids("type=\"3\"") == Ids{4});
    CHECK(ids("version=\"3\"").empty());  // quoted: the string only
    CHECK(ids("type!=memo") == Ids{0, 1, 4});
    CHECK(ids("version>=2, version<3") == Ids{2});
    CHECK(ids("version > 1 && type = contract") == Ids{0});
    CHECK(ids("date>=2025-01-01") == Ids{0, 2});
    CHECK(ids("date<2025-01-01") == Ids{1});
    CHECK(ids("groups in (legal, hr)") == Ids{0, 1});
    CHECK(ids("groups in (sales) || !exists(groups)") == Ids{0, 2, 3});
    CHECK(ids("not groups? or type=memo and version=2") == Ids{2, 3});  // and binds tighter
    CHECK(ids("(type=memo | type=contract) & !(version<=1)") == Ids{0, 2, 3});
    CHECK(ids("all") == Ids{0, 1, 2, 3, 4});
    CHECK(ids("none").empty());
    CHECK_THROWS_WITH(parse_filter("version>=abc"), Catch::Contains("column 10") && Catch::Contains("not a number"));
    CHECK_THROWS_WITH(parse_filter("type=contract &&"), Catch::Contains("column 17"));
    CHECK_THROWS_WITH(parse_filter("(type=a"), Catch::Contains("expected ')'"));
    CHECK_THROWS_WITH(parse_filter("type contract"), Catch::Contains("expected an operator"));
    CHECK_THROWS_WITH(parse_filter("type=\"open"), Catch::Contains("unterminated"));
    CHECK_THROWS_AS(parse_filter(""), ragpp::ParseError);
    CHECK_THROWS_AS(parse_filter("a=b)"), ragpp::ParseError);
    // to_string round-trips.
    for (const char* text : {"type=contract", "version>=2, version<3", "groups in (sales) || !exists(groups)",
                             "date>=2025-01-01 && type!=\"a b\"", "x=1e3"}) {
        const Filter f = parse_filter(text);
        CHECK(parse_filter(f.to_string()) == f);
        CHECK(idx.compile(parse_filter(f.to_string())) == idx.compile(f));
    }
}

TEST_CASE("Access: groups intersect, unlabeled documents follow the explicit default", "[filter][access]") {
    const auto docs = small_collection();
    const auto idx = index_of(docs);
    const AccessPolicy deny;  // the default
    const AccessPolicy allow(Unlabeled::allow);
    CHECK(deny.unlabeled() == Unlabeled::deny);
    auto ids = [&](const AccessPolicy& p, const Principal& who) { return idx.compile(p.filter_for(who)).ids(); };
    CHECK(ids(deny, Principal::with_groups({"sales"})) == Ids{0, 2});
    CHECK(ids(deny, Principal::with_groups({"legal", "hr"})) == Ids{0, 1});
    CHECK(ids(deny, Principal{}).empty());
    CHECK(ids(allow, Principal{}) == Ids{3});  // only the unlabeled one; [] is labeled
    CHECK(ids(allow, Principal::with_groups({"sales"})) == Ids{0, 2, 3});
    CHECK(ids(deny, Principal::system()) == Ids{0, 1, 2, 3, 4});
    CHECK(deny.allows(Principal::with_groups({"sales"}), docs[2]));
    CHECK_FALSE(deny.allows(Principal::with_groups({"sales"}), docs[3]));
    CHECK_FALSE(allow.allows(Principal::with_groups({"legal"}), docs[4]));  // empty list: nobody
    const AccessPolicy custom(Unlabeled::deny, "acl");
    CHECK(ids(custom, Principal::with_groups({"sales"})).empty());
}

TEST_CASE("Compiled sets equal the oracle on random collections under add and remove", "[filter][property]") {
    const auto seed = static_cast<unsigned>(GENERATE(range(1, 41)));
    std::mt19937 rng(seed);
    auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
    const Strings words{"a", "b", "c", "d", "e"};
    auto random_metadata = [&] {
        Metadata m;
        if (pick(4) != 0) m["type"] = words[static_cast<std::size_t>(pick(3))];
        if (pick(3) != 0) m["n"] = static_cast<double>(pick(6));
        if (pick(3) != 0) m["d"] = Date{pick(5)};
        if (pick(3) != 0) {
            Strings g;
            for (int k = pick(4); k > 0; --k) g.push_back(words[static_cast<std::size_t>(pick(5))]);
            m["groups"] = g;
        }
        if (pick(5) == 0) m["n"] = std::string("3");  // a number-looking string
        return m;
    };
    std::function<Filter(int)> random_filter = [&](int depth) -> Filter {
        const int r = pick(depth > 0 ? 10 : 6);
        switch (r) {
            case 0: return Filter::eq("type", words[static_cast<std::size_t>(pick(4))]);
            case 1: return Filter::eq("n", static_cast<double>(pick(7)));
            case 2: return Filter::in("groups", {words[static_cast<std::size_t>(pick(5))], words[static_cast<std::size_t>(pick(5))]});
            case 3: {
                const double lo = pick(7), hi = pick(7);
                return Filter::range("n", lo, hi, pick(2) == 0, pick(2) == 0);
            }
            case 4: return Filter::range("d", std::nullopt, Date{pick(6)}, true, pick(2) == 0);
            case 5: return Filter::exists(pick(2) == 0 ? "groups" : "d");
            case 6: return random_filter(depth - 1) && random_filter(depth - 1);
            case 7: return random_filter(depth - 1) || random_filter(depth - 1);
            case 8: return !random_filter(depth - 1);
            default: return AccessPolicy(pick(2) == 0 ? Unlabeled::deny : Unlabeled::allow)
                                .filter_for(Principal::with_groups({words[static_cast<std::size_t>(pick(5))]}));
        }
    };
    MetadataIndex idx;
    std::vector<std::optional<Metadata>> truth;
    ragpp_test::TempDir dir;
    // Every 50 steps the index goes on as a copy of a copy; the copies are kept and must
    // not change (a copy's terms once pointed at the original's fields).
    std::deque<std::pair<MetadataIndex, std::vector<std::optional<Metadata>>>> copies;
    for (int step = 0; step < 300; ++step) {
        if (step % 60 == 59) {  // through a saved file: the frozen index answers alike, the next write thaws it
            const auto entries = idx.posting_entries();
            idx.save(dir.path / "meta.bin");
            idx = MetadataIndex::load(dir.path / "meta.bin", ragpp::OpenOptions{.mmap = step % 120 == 59, .verify = pick(2) == 0});
            REQUIRE(idx.frozen());
            CHECK(idx.posting_entries() == entries);
            const MetadataIndex frozen_copy(idx);  // a copy of a frozen index shares its file
            REQUIRE(frozen_copy.frozen());
            for (int t = 0; t < 5; ++t) {
                const Filter f = random_filter(3);
                DocSet want(truth.size());
                for (std::size_t i = 0; i < truth.size(); ++i)
                    if (truth[i] && f.matches(*truth[i])) want.set(static_cast<DocId>(i));
                INFO("seed " << seed << " step " << step << " frozen, filter " << f.to_string());
                CHECK(idx.compile(f) == want);
                CHECK(frozen_copy.compile(f) == want);
            }
            for (std::size_t i = 0; i < truth.size(); ++i) REQUIRE(idx.contains(static_cast<DocId>(i)) == truth[i].has_value());
        }
        if (step % 50 == 25) {
            copies.emplace_back(idx, truth);
            idx = MetadataIndex(copies.back().first);
        }
        const int op = pick(10);
        if (op < 6 || truth.empty()) {  // add, ids in increasing order as a store gives them
            const Metadata m = random_metadata();
            idx.add_document(static_cast<DocId>(truth.size()), m);
            truth.push_back(m);
        } else {
            const auto id = static_cast<DocId>(pick(static_cast<int>(truth.size())));
            if (truth[id]) {
                idx.remove_document(id);
                truth[id].reset();
            } else {
                CHECK_THROWS_AS(idx.remove_document(id), ragpp::NotFoundError);
            }
        }
        if (step % 10 == 0) {
            const Filter f = random_filter(3);
            const DocSet got = idx.compile(f);
            DocSet want(truth.size());
            for (std::size_t i = 0; i < truth.size(); ++i)
                if (truth[i] && f.matches(*truth[i])) want.set(static_cast<DocId>(i));
            INFO("seed " << seed << " step " << step << " filter " << f.to_string());
            CHECK(got == want);
            // The text form compiles to the same set.
            CHECK(idx.compile(parse_filter(f.to_string())) == want);
        }
    }
    // Remove everything: no posting is left.
    for (std::size_t i = 0; i < truth.size(); ++i)
        if (truth[i]) idx.remove_document(static_cast<DocId>(i));
    CHECK(idx.size() == 0);
    CHECK(idx.posting_entries() == 0);
    CHECK(idx.field_count() == 0);
    CHECK(idx.compile(Filter::all()).empty());
    for (const auto& [copy, was] : copies) {
        const Filter f = Filter::exists("type") || Filter::exists("groups") || Filter::exists("n") || Filter::exists("d");
        DocSet want(was.size());
        for (std::size_t i = 0; i < was.size(); ++i)
            if (was[i] && f.matches(*was[i])) want.set(static_cast<DocId>(i));
        CHECK(copy.compile(f) == want);
        CHECK(copy.field_count() > 0);
    }
}
