// BM25Index: hand-computed scores, errors, live updates against an index rebuilt from
// scratch, MaxScore against the exhaustive scorer, filters against a brute-force
// oracle, persistence and its corruption cases.
#include <ragpp/index/bm25.hpp>
#include <ragpp/index/detail/bm25_blocks.hpp>
#include <ragpp/retrieve/retriever.hpp>
#include <ragpp/text/analyzer.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

using ragpp::BM25Index;
using ragpp::BM25Params;
using ragpp::BM25SearchStats;
using ragpp::BM25Strategy;
using ragpp::BM25Variant;
using ragpp::DocId;
using ragpp::DocSet;
using ragpp::Document;
using ragpp::Hit;
using ragpp::BM25SearchOptions;
using ragpp::SearchOptions;
using ragpp::WhitespaceAnalyzer;
using Index = BM25Index<WhitespaceAnalyzer>;

namespace {

Document doc(std::string text) { return Document{"", std::move(text), {}}; }

/// A random corpus over a Zipf-like vocabulary "t0".."t{V-1}" (t0 most frequent).
struct RandomCorpus {
    std::mt19937_64 rng;
    std::vector<std::string> vocab;
    std::vector<double> cdf;
    RandomCorpus(std::uint64_t seed, std::size_t v) : rng(seed) {
        double total = 0;
        for (std::size_t i = 0; i < v; ++i) {
            std::string name = std::to_string(i);
            name.insert(name.begin(), 't');
            vocab.push_back(std::move(name));
            total += 1.0 / static_cast<double>(i + 1);
            cdf.push_back(total);
        }
        for (auto& c : cdf) c /= total;
    }
    std::string term() {
        const double u = std::uniform_real_distribution<double>(0, 1)(rng);
        const auto i = static_cast<std::size_t>(std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
        return vocab[std::min(i, vocab.size() - 1)];
    }
    std::string text(std::size_t max_len) {
        const auto n = std::uniform_int_distribution<std::size_t>(0, max_len)(rng);
        std::string s;
        for (std::size_t i = 0; i < n; ++i) s += term() + " ";
        return s;
    }
    std::size_t pick(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); }
};

void set_variant(Index& index, BM25Variant v) {
    auto p = index.params();
    p.variant = v;
    index.set_params(p);
}

bool sorted_best_first(const std::vector<Hit>& hits) {
    for (std::size_t i = 1; i < hits.size(); ++i)
        if (!ragpp::better_hit(hits[i - 1], hits[i])) return false;
    return true;
}

/// A random query of the pruning property tests: 1 to 6 corpus terms, a k among 1 to
/// 1000, then by turn another k1 or b, (with `fields`) other field weights, an allowed set.
struct RandomQuery {
    std::vector<std::string> terms;
    std::size_t k = 10;
    BM25SearchOptions options;
};
RandomQuery random_query(RandomCorpus& rc, int q, std::size_t n, bool fields) {
    RandomQuery r;
    const auto m = 1 + rc.pick(6);
    for (std::size_t i = 0; i < m; ++i) r.terms.push_back(rc.term());
    r.k = std::vector<std::size_t>{1, 3, 10, 50, 1000}[rc.pick(5)];
    if (q % 3 == 1) r.options.k1 = std::vector<double>{0.0, 0.5, 2.0}[rc.pick(3)];
    if (q % 3 == 2) r.options.b = std::vector<double>{0.0, 0.3, 1.0}[rc.pick(3)];
    if (fields && q % 2 == 1) {
        const std::vector<double> ws{0.0, 0.5, 1.0, 4.0, 20.0};
        r.options.field_weights = ragpp::FieldWeights{ws[rc.pick(5)], ws[rc.pick(5)], ws[rc.pick(5)]};
    }
    if (q % 4 == 3) {
        DocSet allowed(n);
        for (std::size_t i = 0; i < n; ++i)
            if (rc.pick(3) == 0) allowed.set(static_cast<DocId>(i));
        r.options.allowed = std::make_shared<const DocSet>(std::move(allowed));
    }
    return r;
}

}  // namespace

TEST_CASE("BM25 lucene scores computed by hand", "[bm25]") {
    Index index;  // lucene, k1 1.2, b 0.75
    index.add_document(0, doc("a b"));
    index.add_document(1, doc("a a c"));
    index.add_document(2, doc("c"));
    REQUIRE(index.size() == 3);
    CHECK(index.average_length() == 2.0);
    CHECK(index.document_frequency("a") == 2);
    CHECK(index.term_frequency("a", 1) == 2);
    // N = 3, df(a) = 2: idf = ln(1 + 1.5 / 2.5) = ln 1.6.
    // doc 0: tf 1, |d| 2, L = 0.25 + 0.75 * 2/2 = 1:      1 / (1 + 1.2)   = 0.454545...
    // doc 1: tf 2, |d| 3, L = 0.25 + 0.75 * 3/2 = 1.375:  2 / (2 + 1.65)  = 0.547945...
    const auto hits = index.search("a", 10);
    REQUIRE(hits.size() == 2);
    CHECK(hits[0].id == 1);
    CHECK(hits[0].score == Approx(std::log(1.6) * 2.0 / 3.65).epsilon(1e-7));
    CHECK(hits[1].id == 0);
    CHECK(hits[1].score == Approx(std::log(1.6) / 2.2).epsilon(1e-7));
    // A repeated query term counts twice; an unknown term adds nothing.
    const auto twice = index.search("a a zzz", 10);
    REQUIRE(twice.size() == 2);
    CHECK(twice[0].score == Approx(2 * hits[0].score).epsilon(1e-7));
    CHECK(index.search("", 10).empty());
    CHECK(index.search("zzz", 10).empty());
    CHECK(index.search("a", 0).empty());
    // Per-query k1 = 0 makes tfpart 1 for any tf: both documents score idf, tie by id.
    BM25SearchOptions o;
    o.k1 = 0.0;
    const auto flat = index.search("a", 10, o);
    REQUIRE(flat.size() == 2);
    CHECK(flat[0].id == 0);
    CHECK(flat[1].id == 1);
    CHECK(flat[0].score == flat[1].score);
    CHECK(flat[0].score == Approx(std::log(1.6)).epsilon(1e-7));
}

TEST_CASE("BM25 bm25l and bm25plus add the absent-term part, rank_bm25 modes score every document", "[bm25]") {
    Index index(BM25Params{BM25Variant::bm25plus, 1.2, 0.75, 0.5, 0.25});
    index.add_document(0, doc("a"));
    index.add_document(1, doc("b"));
    index.add_document(2, doc("c"));
    // N = 3, df = 1 each: idf = ln(4 / 1). L = 1 for every document (|d| = avgdl = 1).
    // doc 0 for "a b": idf * (2.2 / 2.2 + 0.5) + idf * 0.5 = ln 4 * 2.
    auto hits = index.search("a b", 10);
    REQUIRE(hits.size() == 2);
    CHECK(hits[0].id == 0);
    CHECK(hits[0].score == Approx(2 * std::log(4.0)).epsilon(1e-7));
    CHECK(hits[1].score == hits[0].score);
    // rank_bm25.BM25Plus: idf = ln(4 / 1) too; document 2 (no query term) gets ln 4 * 0.5 * 2.
    set_variant(index, BM25Variant::rank_bm25_plus);
    hits = index.search("a b", 10);
    REQUIRE(hits.size() == 3);
    CHECK(hits[2].id == 2);
    CHECK(hits[2].score == Approx(std::log(4.0)).epsilon(1e-7));
    // ... but only when some query term is known.
    CHECK(index.search("zzz", 10).empty());
    // rank_bm25.BM25L: idf = ln 4 - ln 1.5, absent part (k1 + 1) delta / (k1 + delta) = 1.1 / 1.7.
    set_variant(index, BM25Variant::rank_bm25_l);
    hits = index.search("a", 10);
    REQUIRE(hits.size() == 3);
    CHECK(hits[1].id == 1);
    CHECK(hits[1].score == Approx((std::log(4.0) - std::log(1.5)) * 1.1 / 1.7).epsilon(1e-7));
}

TEST_CASE("BM25 rank_bm25 okapi floors a negative idf to epsilon times the mean idf", "[bm25]") {
    Index index(BM25Params{BM25Variant::rank_bm25_okapi, 1.5, 0.75, 0.5, 0.25});
    index.add_document(0, doc("a b"));
    index.add_document(1, doc("a c"));
    index.add_document(2, doc("a"));
    index.add_document(3, doc("d e"));
    // N = 4. idf(a) = ln(1.5) - ln(3.5) < 0; idf(b..e) = ln(3.5) - ln(1.5).
    const double ia = std::log(1.5) - std::log(3.5), ib = std::log(3.5) - std::log(1.5);
    const double eps = 0.25 * (ia + 4 * ib) / 5;
    // doc 2: tf 1, |d| 1, avgdl 7/4: L = 0.25 + 0.75 / 1.75; tfpart = 2.5 / (1 + 1.5 L).
    const auto hits = index.search("a", 10);
    REQUIRE(hits.size() == 3);
    CHECK(hits[0].id == 2);
    CHECK(hits[0].score == Approx(eps * 2.5 / (1 + 1.5 * (0.25 + 0.75 / 1.75))).epsilon(1e-7));
    CHECK(hits[0].score > 0);
}

TEST_CASE("BM25 bad calls throw and change nothing", "[bm25]") {
    Index index;
    index.add_document(0, doc("a b"));
    index.add_document(1, doc("b c"));
    const auto before = index.search("a b c", 10);
    CHECK_THROWS_AS(index.add_document(0, doc("x")), ragpp::DuplicateError);
    CHECK_THROWS_AS(index.remove_document(7), ragpp::NotFoundError);
    CHECK_THROWS_WITH(index.remove_document(7), Catch::Contains("DocId 7"));
    CHECK_THROWS_AS(index.update_document(7, doc("x")), ragpp::NotFoundError);
    CHECK(index.size() == 2);
    CHECK(index.document_frequency("x") == 0);
    CHECK(index.search("a b c", 10) == before);
    BM25SearchOptions o;
    o.b = 1.5;
    CHECK_THROWS_AS((void)index.search("a", 10, o), ragpp::InvalidArgument);
    CHECK_THROWS_WITH((void)index.search("a", 10, o), Catch::Contains("b is 1.5"));
    o.b.reset();
    o.k1 = -1;
    CHECK_THROWS_AS((void)index.search("a", 10, o), ragpp::InvalidArgument);
    o.k1 = std::nan("");
    CHECK_THROWS_AS((void)index.search("a", 10, o), ragpp::InvalidArgument);
    CHECK_THROWS_AS(index.set_params(BM25Params{BM25Variant::lucene, 1.2, 0.75, -1, 0.25}), ragpp::InvalidArgument);
    CHECK(index.params().delta == 0.5);
    CHECK_THROWS_AS(ragpp::parse_bm25_variant("okapi"), ragpp::InvalidArgument);
    for (BM25Variant v : ragpp::bm25_variants) CHECK(ragpp::parse_bm25_variant(ragpp::to_string(v)) == v);
    // The convenience add takes the next id.
    CHECK(index.add_document(doc("z")) == 2);
}

TEST_CASE("BM25 live updates equal an index rebuilt from scratch", "[bm25][updates]") {
    const auto seed = GENERATE(take(25, random(std::uint64_t{1}, std::uint64_t{1} << 40)));
    RandomCorpus rc(seed, 40);
    Index live;
    std::map<DocId, std::string> truth;  // surviving documents
    DocId next = 0;
    for (int op = 0; op < 200; ++op) {
        const auto r = rc.pick(10);
        if (r < 5 || truth.empty()) {
            // New id, or now and then a removed id coming back.
            DocId id = next++;
            if (r == 0 && next > 3) {
                const DocId back = static_cast<DocId>(rc.pick(next - 1));
                if (truth.count(back) == 0) {
                    id = back;
                    --next;
                }
            }
            const auto text = rc.text(12);
            live.add_document(id, doc(text));
            truth[id] = text;
        } else {
            auto it = truth.begin();
            std::advance(it, static_cast<std::ptrdiff_t>(rc.pick(truth.size())));
            if (r < 8) {
                live.remove_document(it->first);
                truth.erase(it);
            } else {
                const auto text = rc.text(12);
                live.update_document(it->first, doc(text));
                it->second = text;
            }
        }
    }
    Index rebuilt;
    std::uint64_t total = 0;
    for (const auto& [id, text] : truth) {
        rebuilt.add_document(id, doc(text));
        total += ragpp::analyze(WhitespaceAnalyzer{}, text).size();
    }
    INFO("seed " << seed);
    REQUIRE(live.size() == truth.size());
    CHECK(live.total_length() == total);
    CHECK(live.average_length() == rebuilt.average_length());
    CHECK(live.posting_count() == rebuilt.posting_count());
    CHECK(live.vocabulary_size() == rebuilt.vocabulary_size());
    for (const auto& t : rc.vocab) CHECK(live.document_frequency(t) == rebuilt.document_frequency(t));
    for (BM25Variant v : ragpp::bm25_variants) {
        set_variant(live, v);
        set_variant(rebuilt, v);
        for (int q = 0; q < 10; ++q) {
            const auto query = rc.text(5);
            INFO(ragpp::to_string(v) << " query '" << query << "'");
            const auto got = live.search(query, 10);
            CHECK(got == rebuilt.search(query, 10));
            CHECK(live.search_exhaustive(query, 10) == rebuilt.search_exhaustive(query, 10));
            // MaxScore relies on skylines kept through removals: it must agree too.
            const auto terms = ragpp::analyze(WhitespaceAnalyzer{}, query);
            CHECK(live.search_terms(terms, 3, {}, BM25Strategy::maxscore) == rebuilt.search_exhaustive(query, 3));
            for (const auto& h : got) CHECK(truth.count(h.id) == 1);
        }
    }
}

TEST_CASE("BM25 MaxScore and accumulation return exactly what the exhaustive scorer returns", "[bm25][pruning]") {
    const auto seed = GENERATE(take(12, random(std::uint64_t{1}, std::uint64_t{1} << 40)));
    RandomCorpus rc(seed, 300);
    Index index;
    const std::size_t n = 400 + rc.pick(400);
    for (std::size_t i = 0; i < n; ++i) index.add_document(doc(rc.text(40)));
    for (std::size_t i = 0; i < n / 10; ++i) {  // holes in the id space
        const auto id = static_cast<DocId>(rc.pick(n));
        if (index.contains(id)) index.remove_document(id);
    }
    std::size_t pruned_runs = 0, fewer = 0;
    for (BM25Variant v : ragpp::bm25_variants) {
        set_variant(index, v);
        for (int q = 0; q < 25; ++q) {
            const auto [terms, k, o] = random_query(rc, q, n, false);
            BM25SearchStats pruned, oracle, acc, automatic;
            const auto slow = index.search_terms(terms, k, o, BM25Strategy::exhaustive, &oracle);
            const auto fast = index.search_terms(terms, k, o, BM25Strategy::maxscore, &pruned);
            INFO(ragpp::to_string(v) << " k " << k << " query " << terms.size() << " terms");
            REQUIRE(fast == slow);
            REQUIRE(index.search_terms(terms, k, o, BM25Strategy::accumulate, &acc) == slow);
            REQUIRE(index.search_terms(terms, k, o, BM25Strategy::automatic, &automatic) == slow);
            CHECK(sorted_best_first(fast));
            CHECK(oracle.algorithm == ragpp::BM25Algorithm::exhaustive);
            const bool every_doc = v == BM25Variant::rank_bm25_l || v == BM25Variant::rank_bm25_plus;
            const bool absent_part = every_doc || v == BM25Variant::bm25l || v == BM25Variant::bm25plus;
            CHECK((acc.algorithm == ragpp::BM25Algorithm::accumulate) == !absent_part);
            if (acc.algorithm == ragpp::BM25Algorithm::accumulate) CHECK(acc.scored == oracle.scored);
            if (!every_doc) {
                CHECK(pruned.algorithm == ragpp::BM25Algorithm::maxscore);
                CHECK(pruned.scored <= oracle.scored);
                ++pruned_runs;
                if (pruned.scored < oracle.scored) ++fewer;
            } else {
                CHECK(pruned.algorithm == ragpp::BM25Algorithm::exhaustive);
                CHECK(automatic.algorithm == ragpp::BM25Algorithm::exhaustive);
            }
        }
    }
    // Pruning is not vacuous: it skipped documents in most runs.
    CHECK(fewer * 2 > pruned_runs);
}

TEST_CASE("BM25 filters apply inside the scoring loop and k allowed matches come back", "[bm25][filter]") {
    const auto seed = GENERATE(take(10, random(std::uint64_t{1}, std::uint64_t{1} << 40)));
    RandomCorpus rc(seed, 60);
    Index index;
    std::vector<std::vector<std::string>> docs;
    for (int i = 0; i < 300; ++i) {
        docs.push_back(ragpp::analyze(WhitespaceAnalyzer{}, rc.text(20)));
        index.add_terms(static_cast<DocId>(i), docs.back());
    }
    // Brute-force lucene oracle over the raw token lists.
    const double n = 300;
    double total = 0;
    for (const auto& d : docs) total += static_cast<double>(d.size());
    const double avgdl = total / n;
    for (int q = 0; q < 20; ++q) {
        const auto query = ragpp::analyze(WhitespaceAnalyzer{}, rc.text(4));
        DocSet allowed(300);
        for (DocId i = 0; i < 300; ++i)
            if (rc.pick(5) == 0) allowed.set(i);
        std::map<DocId, double> expected;
        for (DocId i = 0; i < 300; ++i) {
            if (!allowed.test(i)) continue;
            double s = 0;
            bool match = false;
            for (const auto& t : query) {
                const auto tf = static_cast<double>(std::count(docs[i].begin(), docs[i].end(), t));
                if (tf == 0) continue;
                match = true;
                double df = 0;
                for (const auto& d : docs) df += std::count(d.begin(), d.end(), t) > 0 ? 1 : 0;
                const double idf = std::log(1 + (n - df + 0.5) / (df + 0.5));
                s += idf * tf / (tf + 1.2 * (0.25 + 0.75 * static_cast<double>(docs[i].size()) / avgdl));
            }
            if (match) expected[i] = s;
        }
        const std::size_t k = 10;
        const auto hits = index.search_terms(query, k, SearchOptions::only(allowed));
        INFO("query " << q);
        CHECK(hits.size() == std::min(k, expected.size()));
        CHECK(sorted_best_first(hits));
        std::set<DocId> returned;
        for (const auto& h : hits) {
            REQUIRE(allowed.test(h.id));
            REQUIRE(expected.count(h.id) == 1);
            CHECK(h.score == Approx(expected[h.id]).epsilon(1e-6));
            returned.insert(h.id);
        }
        if (!hits.empty() && hits.size() == k)
            for (const auto& [id, s] : expected)
                if (!returned.count(id)) CHECK(s <= static_cast<double>(hits.back().score) * (1 + 1e-6));
    }
    // An empty allowed set returns nothing.
    CHECK(index.search_terms(std::vector<std::string>{"t0"}, 10, SearchOptions::only(DocSet(300))).empty());
}

namespace {

struct OtherAnalyzer {
    void analyze(std::string_view text, std::vector<std::string>& out) const { WhitespaceAnalyzer{}.analyze(text, out); }
    [[nodiscard]] static constexpr std::string_view name() noexcept { return "other"; }
};

std::string slurp(const std::filesystem::path& p) { return ragpp_test::read_file(p); }
void dump(const std::filesystem::path& p, const std::string& bytes) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

Index small_index() {
    RandomCorpus rc(42, 30);
    Index index(BM25Params{BM25Variant::atire, 0.9, 0.4, 0.5, 0.25});
    for (int i = 0; i < 40; ++i) index.add_document(doc(rc.text(8)));
    index.remove_document(3);
    index.remove_document(17);
    return index;
}

}  // namespace

TEST_CASE("BM25 save and load give the same index", "[bm25][persistence]") {
    ragpp_test::TempDir dir;
    const auto path = dir.path / "index.bm25";
    const Index index = small_index();
    index.save(path);
    const Index loaded = Index::load(path);
    CHECK(loaded.size() == index.size());
    CHECK(loaded.params().variant == BM25Variant::atire);
    CHECK(loaded.params().k1 == 0.9);
    CHECK(loaded.total_length() == index.total_length());
    CHECK(loaded.posting_count() == index.posting_count());
    CHECK_FALSE(loaded.contains(3));
    CHECK(loaded.next_id() == index.next_id());
    RandomCorpus rc(7, 30);
    for (int q = 0; q < 20; ++q) {
        const auto query = rc.text(4);
        CHECK(loaded.search(query, 10) == index.search(query, 10));
    }
    // The loaded index stays updatable; saving over an existing file replaces it.
    Index again = Index::load(path);
    again.remove_document(0);
    again.add_document(3, doc("t1 t2"));
    again.save(path);
    CHECK(Index::load(path).search("t1 t2", 50) == again.search("t1 t2", 50));
    std::size_t leftovers = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir.path)) leftovers += e.path() != path;
    CHECK(leftovers == 0);
}

TEST_CASE("BM25 load rejects truncated, corrupted and foreign files with the file's name", "[bm25][persistence]") {
    ragpp_test::TempDir dir;
    const auto path = dir.path / "index.bm25";
    small_index().save(path);
    const std::string good = slurp(path);
    REQUIRE(good.size() > 100);
    const auto bad = dir.path / "bad.bm25";
    const std::string name = "bad.bm25";
    auto expect_format_error = [&](const std::string& bytes, const std::string& what) {
        CHECK_THROWS_AS(Index::from_bytes(bytes, name), ragpp::FormatError);
        CHECK_THROWS_WITH(Index::from_bytes(bytes, name), Catch::Contains("'bad.bm25'") && Catch::Contains(what));
    };
    SECTION("truncated at every offset") {
        for (std::size_t n = 0; n < good.size(); ++n) {
            INFO("truncated to " << n << " bytes");
            CHECK_THROWS_AS(Index::from_bytes(good.substr(0, n), name), ragpp::FormatError);
        }
        expect_format_error(good.substr(0, good.size() - 1), "truncated");
        expect_format_error(good + "x", "trailing bytes");
        // The same through a file: the message names the path.
        dump(bad, good.substr(0, good.size() / 2));
        CHECK_THROWS_WITH(Index::load(bad), Catch::Contains(bad.string()) && Catch::Contains("truncated"));
    }
    SECTION("every single-bit flip is detected") {
        for (std::size_t i = 0; i < good.size(); ++i)
            for (int bit = 0; bit < 8; ++bit) {
                std::string b = good;
                b[i] = static_cast<char>(b[i] ^ (1 << bit));
                INFO("byte " << i << " bit " << bit);
                CHECK_THROWS_AS(Index::from_bytes(b, name), ragpp::FormatError);
            }
        std::string b = good;
        b[good.size() / 2] = static_cast<char>(b[good.size() / 2] ^ 0x10);
        expect_format_error(b, "checksum");
    }
    SECTION("foreign files, other versions, other analyzers") {
        expect_format_error("", "not a ragpp BM25 index");
        expect_format_error("{\"not\": \"an index\"}\n", "not a ragpp BM25 index");
        // The version is the u32 at offset 16 of the container (detail/binary_file.hpp).
        std::string older = good, newer = good;
        older[16] = 2;
        newer[16] = 99;
        expect_format_error(older, "was written by an older ragpp (BM25 index format 2");
        expect_format_error(older, "rebuild the index");
        expect_format_error(newer, "was written by a newer ragpp (BM25 index format 99");
        std::string vector_file = good;
        vector_file.replace(8, 8, "VECINDEX");
        expect_format_error(vector_file, "not a ragpp BM25 index file (it holds format 'VECINDEX'");
        CHECK_THROWS_AS(BM25Index<OtherAnalyzer>::from_bytes(good), ragpp::InvalidArgument);  // the argument, not the file
        CHECK_THROWS_WITH(BM25Index<OtherAnalyzer>::from_bytes(good), Catch::Contains("'whitespace'") && Catch::Contains("'other'"));
        CHECK(Index::from_bytes(good).size() == 38);
    }
    SECTION("a consistent checksum over inconsistent content is still refused") {
        // Format 5 (index/detail/bm25_file.hpp): str analyzer (4 + 10) | u8 variant | 8 x f64 | 10 x u64
        // counts | [8] slots x u8 live | [8] slots x u32 length (offsets from the start of the file).
        const std::size_t header = 36, slots = small_index().next_id();
        auto align8 = [](std::size_t at) { return (at + 7) / 8 * 8; };
        const std::size_t len0 = align8(align8(header + 4 + 10 + 1 + 64 + 80) + slots);
        std::string b = good;
        b[len0] = static_cast<char>(b[len0] + 1);  // document 0 one term longer than its postings
        const auto sum = ragpp::detail::fnv1a64(std::string_view(b).substr(header));
        for (int i = 0; i < 8; ++i) b[28 + i] = static_cast<char>((sum >> (8 * i)) & 0xFF);
        expect_format_error(b, "postings sum to");
    }
    SECTION("unreadable files are IoError") {
        CHECK_THROWS_AS(Index::load(dir.path / "missing.bm25"), ragpp::IoError);
        CHECK_THROWS_AS(Index::load(dir.path), ragpp::IoError);
        // detail::read_file names the file in both cases.
        CHECK_THROWS_WITH(Index::load(dir.path / "missing.bm25"),
                          Catch::Contains("cannot open '" + (dir.path / "missing.bm25").string() + "' for reading"));
        CHECK_THROWS_WITH(Index::load(dir.path), Catch::Contains("'" + dir.path.string() + "' is a directory"));
        CHECK_THROWS_AS(small_index().save(dir.path / "no" / "such" / "dir.bm25"), ragpp::IoError);
    }
}

TEST_CASE("BM25 indexes inside a Retriever: two analyzers fused, removal reaches both", "[bm25][retriever]") {
    ragpp::Retriever<BM25Index<ragpp::EnglishAnalyzer>, Index> r;
    r.add_document({"a", "Running contracts with notice periods", {}});
    r.add_document({"b", "The runner ran", {}});
    r.add_document({"c", "Unrelated text", {}});
    // "run" meets "Running" through the english stemmer only; the whitespace index
    // knows neither "run" nor "running" (it keeps "Running" as is).
    const auto results = r.search("run", 10);
    REQUIRE_FALSE(results.empty());
    CHECK(results[0].document->id == "a");
    CHECK(results[0].trace[0].rank == std::size_t{1});
    CHECK_FALSE(results[0].trace[1].rank.has_value());
    r.remove_document(std::string_view("a"));
    for (const auto& res : r.search("run contracts", 10)) CHECK(res.document->id != "a");
}

TEST_CASE("BM25 save and load check the analyzer by name", "[bm25][persistence]") {
    BM25Index<ragpp::EnglishAnalyzer> english;
    english.add_document(0, doc("Notice periods of running contracts"));
    const auto bytes = english.to_bytes();
    CHECK(BM25Index<ragpp::EnglishAnalyzer>::from_bytes(bytes).search("run", 5) == english.search("run", 5));
    CHECK_THROWS_WITH(BM25Index<ragpp::FrenchAnalyzer>::from_bytes(bytes, "x.bm25"),
                      Catch::Contains("'english'") && Catch::Contains("'french'") && Catch::Contains("x.bm25"));
    // The caller's analyzer is wrong, not the file: InvalidArgument, as VectorIndex::load
    // says of another embedder.
    CHECK_THROWS_AS(BM25Index<ragpp::FrenchAnalyzer>::from_bytes(bytes, "x.bm25"), ragpp::InvalidArgument);
}

// --- fields (BM25F) ------------------------------------------------------------------

namespace {

/// A chunk-like document: fields from "source" and "heading_path" (bm25_document_fields).
Document fielded(std::string text, std::string source, std::vector<std::string> headings, std::string title = {}) {
    Document d{"", std::move(text), {}};
    d.metadata["source"] = std::move(source);
    d.metadata["heading_path"] = std::move(headings);
    if (!title.empty()) d.metadata["title"] = std::move(title);
    return d;
}

ragpp::FieldWeights weights(double t, double h, double p) { return ragpp::FieldWeights{t, h, p}; }

}  // namespace

TEST_CASE("BM25F fields come from chunk metadata, other documents have none", "[bm25][fields]") {
    const auto f = ragpp::bm25_document_fields(fielded("x", "help/policy/CMP0077.rst", {"CMP0077", "Details", "More"}));
    CHECK(f[0] == "CMP0077");
    CHECK(f[1] == "Details\nMore");
    CHECK(f[2] == "help policy CMP0077");
    const auto g = ragpp::bm25_document_fields(fielded("x", "notes.v2/README", {"Intro"}, "My title"));
    CHECK(g[0] == "My title");
    CHECK(g[1] == "Intro");
    CHECK(g[2] == "notes.v2 README");
    // No title, no heading: the file name is the title (CMake's module stubs).
    CHECK(ragpp::bm25_document_fields(fielded("x", "module/FetchContent.rst", {}))[0] == "FetchContent");
    CHECK(ragpp::bm25_title_key("  CMAKE_CXX_Standard. ") == "\x1f" "cmake_cxx_standard");
    CHECK(ragpp::bm25_title_key("option()") == "\x1f" "option");
    CHECK(ragpp::bm25_title_key("Policies   Introduced\nby") == "\x1f" "policies introduced by");
    CHECK(ragpp::bm25_title_key(" (?) ").empty());
    Document beir{"d1", "text", {}};
    beir.metadata["title"] = std::string("A title");
    CHECK(ragpp::bm25_document_fields(beir) == std::array<std::string, 3>{});
}

TEST_CASE("BM25F scores computed by hand", "[bm25][fields]") {
    Index index;  // lucene, k1 1.2, b 0.75, title 3, headings 1, path 1, field_b 0.5
    index.add_document(0, fielded("a b", "x/a.md", {"c"}));          // title "c"
    index.add_document(1, fielded("c c c", "y/z.md", {"a", "a b"}));  // title "a", headings "a b"
    index.add_document(2, doc("b"));
    REQUIRE(index.fielded_size() == 2);
    CHECK(index.field_length(0, 1) == 2);  // "a" and its title key
    CHECK(index.field_length(1, 1) == 2);
    CHECK(index.field_length(2, 0) == 2);
    CHECK(index.field_term_frequency(0, "a", 1) == 1);
    CHECK(index.document_frequency("a") == 1);  // the body's
    // avgdl = 6/3 = 2; title: avg 2 (docs 0, 1: a word and the title key); headings: avg 2
    // (doc 1); path: avg 2 (x a, y z).
    // "a": in doc 0 (body 1, path 1) and doc 1 (title 1, headings 1): df 2 of N 3,
    // idf = ln(1 + 1.5 / 2.5) = ln 1.6.
    // doc 0: x = 1 / (0.25 + 0.75 * 2/2) + 1 * 1 / (0.5 + 0.5 * 2/2) = 1 + 1 = 2
    // doc 1: x = 3 * 1 / (0.5 + 0.5 * 2/2) + 1 * 1 / (0.5 + 0.5 * 2/2) = 3 + 1 = 4
    const double idf = std::log(1.6);
    const auto hits = index.search_terms(std::vector<std::string>{"a"}, 10);
    REQUIRE(hits.size() == 2);
    CHECK(hits[0].id == 1);
    CHECK(hits[0].score == Approx(idf * 4.0 / (4.0 + 1.2)).epsilon(1e-7));
    CHECK(hits[1].id == 0);
    CHECK(hits[1].score == Approx(idf * 2.0 / (2.0 + 1.2)).epsilon(1e-7));
    // search() adds the query's title key "\x1fa", which only doc 1's title has:
    // df 1, idf ln(1 + 2.5 / 1.5), x = 3 * 1 / 1.
    CHECK(index.query_terms("a") == std::vector<std::string>{"a", "\x1f" "a"});
    const auto keyed = index.search("a", 10);
    REQUIRE(keyed.size() == 2);
    CHECK(keyed[0].id == 1);
    CHECK(keyed[0].score == Approx(idf * 4.0 / 5.2 + std::log(1 + 2.5 / 1.5) * 3.0 / 4.2).epsilon(1e-7));
    CHECK(keyed[1].score == hits[1].score);
    // Per-query weights, no rebuild: title 0 and path 0 leave doc 1's headings and doc 0's body.
    BM25SearchOptions o;
    o.field_weights = weights(0, 1, 0);
    const auto h = index.search("a", 10, o);
    REQUIRE(h.size() == 2);
    CHECK(h[0].id == 0);  // x = 1 (body) against 1 (headings): tie by id
    CHECK(h[0].score == Approx(idf * 1.0 / 2.2).epsilon(1e-7));
    CHECK(h[1].score == h[0].score);
    // Every field weight 0: the unfielded BM25 of the body alone.
    o.field_weights = weights(0, 0, 0);
    const auto plain = index.search("a", 10, o);
    REQUIRE(plain.size() == 1);
    CHECK(plain[0].id == 0);
    CHECK(plain[0].score == Approx(std::log(1 + 2.5 / 1.5) / 2.2).epsilon(1e-7));
    o.field_weights = weights(-1, 0, 0);
    CHECK_THROWS_AS((void)index.search("a", 10, o), ragpp::InvalidArgument);
    auto p = index.params();
    p.field_b = 1.5;
    CHECK_THROWS_AS(index.set_params(p), ragpp::InvalidArgument);
}

TEST_CASE("BM25F leaves documents without fields exactly as unfielded BM25 scores them", "[bm25][fields]") {
    const auto seed = GENERATE(take(5, random(std::uint64_t{1}, std::uint64_t{1} << 40)));
    RandomCorpus rc(seed, 50);
    Index a, b;
    auto p = b.params();
    p.field_weights = weights(7, 2, 5);
    b.set_params(p);
    for (int i = 0; i < 200; ++i) {
        const auto text = rc.text(20);
        a.add_document(doc(text));
        Document d = doc(text);
        d.metadata["title"] = std::string("t1 t2");  // a title alone (BEIR) is not a field
        b.add_document(d);
    }
    CHECK(b.fielded_size() == 0);
    for (int q = 0; q < 20; ++q) {
        const auto query = rc.text(4);
        CHECK(a.search(query, 10) == b.search(query, 10));
    }
}

TEST_CASE("BM25F MaxScore returns exactly what the exhaustive scorer returns", "[bm25][fields][pruning]") {
    const auto seed = GENERATE(take(10, random(std::uint64_t{1}, std::uint64_t{1} << 40)));
    RandomCorpus rc(seed, 200);
    Index index;
    const std::size_t n = 300 + rc.pick(300);
    for (std::size_t i = 0; i < n; ++i) {
        if (rc.pick(4) == 0) {
            index.add_document(doc(rc.text(40)));  // some documents without fields
        } else {
            std::vector<std::string> hp;
            for (std::size_t h = rc.pick(4); h > 0; --h) hp.push_back(rc.text(3));
            index.add_document(fielded(rc.text(40), "dir/" + rc.term() + ".md", hp, rc.pick(3) == 0 ? rc.text(4) : ""));
        }
    }
    for (std::size_t i = 0; i < n / 10; ++i) {
        const auto id = static_cast<DocId>(rc.pick(n));
        if (index.contains(id)) index.remove_document(id);
    }
    std::size_t pruned_runs = 0, fewer = 0;
    for (BM25Variant v : ragpp::bm25_variants) {
        set_variant(index, v);
        for (int q = 0; q < 25; ++q) {
            const auto [terms, k, o] = random_query(rc, q, n, true);
            BM25SearchStats pruned, oracle;
            const auto slow = index.search_terms(terms, k, o, BM25Strategy::exhaustive, &oracle);
            const auto fast = index.search_terms(terms, k, o, BM25Strategy::maxscore, &pruned);
            INFO(ragpp::to_string(v) << " k " << k << " query " << terms.size() << " terms");
            REQUIRE(fast == slow);
            REQUIRE(index.search_terms(terms, k, o, BM25Strategy::automatic) == slow);
            REQUIRE(index.search_terms(terms, k, o, BM25Strategy::accumulate) == slow);
            CHECK(sorted_best_first(fast));
            const bool every_doc = v == BM25Variant::rank_bm25_l || v == BM25Variant::rank_bm25_plus;
            if (!every_doc) {
                CHECK(pruned.algorithm == ragpp::BM25Algorithm::maxscore);
                CHECK(pruned.scored <= oracle.scored);
                ++pruned_runs;
                if (pruned.scored < oracle.scored) ++fewer;
            }
        }
    }
    CHECK(fewer * 2 > pruned_runs);
}

TEST_CASE("BM25F live updates, save and load equal an index rebuilt from scratch", "[bm25][fields][updates]") {
    const auto seed = GENERATE(take(10, random(std::uint64_t{1}, std::uint64_t{1} << 40)));
    RandomCorpus rc(seed, 40);
    auto make = [&]() {
        std::vector<std::string> hp;
        for (std::size_t h = rc.pick(3); h > 0; --h) hp.push_back(rc.text(3));
        return rc.pick(3) == 0 ? doc(rc.text(12)) : fielded(rc.text(12), "d/" + rc.term() + ".rst", hp);
    };
    Index live;
    std::map<DocId, Document> truth;
    DocId next = 0;
    for (int op = 0; op < 150; ++op) {
        const auto r = rc.pick(10);
        if (r < 5 || truth.empty()) {
            const DocId id = next++;
            truth[id] = make();
            live.add_document(id, truth[id]);
        } else {
            auto it = truth.begin();
            std::advance(it, static_cast<std::ptrdiff_t>(rc.pick(truth.size())));
            if (r < 8) {
                live.remove_document(it->first);
                truth.erase(it);
            } else {
                it->second = make();
                live.update_document(it->first, it->second);
            }
        }
    }
    Index rebuilt;
    std::size_t with_fields = 0;
    for (const auto& [id, d] : truth) {
        rebuilt.add_document(id, d);
        with_fields += d.metadata.empty() ? 0 : 1;
    }
    const Index loaded = Index::from_bytes(live.to_bytes());
    INFO("seed " << seed);
    CHECK(live.fielded_size() == with_fields);
    CHECK(loaded.fielded_size() == with_fields);
    CHECK(Index::from_bytes(loaded.to_bytes()).to_bytes() == loaded.to_bytes());  // ids follow the file
    for (BM25Variant v : ragpp::bm25_variants) {
        set_variant(live, v);
        set_variant(rebuilt, v);
        Index reloaded = Index::from_bytes(live.to_bytes());
        for (int q = 0; q < 10; ++q) {
            const auto query = rc.text(4);
            const auto terms = ragpp::analyze(WhitespaceAnalyzer{}, query);
            INFO(ragpp::to_string(v) << " query '" << query << "'");
            const auto expected = rebuilt.search_exhaustive(query, 10);
            CHECK(live.search(query, 10) == expected);
            CHECK(reloaded.search(query, 10) == expected);
            CHECK(live.search_terms(terms, 3, {}, BM25Strategy::maxscore) == rebuilt.search_terms(terms, 3, {}, BM25Strategy::exhaustive));
        }
    }
}

namespace {
/// A BM25 file of the current container around `payload` (checksum recomputed).
std::string bm25_file(const std::string& payload) {
    std::string f = "RAGPPIDX";
    f += "BM25INDX";
    auto put = [&](std::uint64_t x, int bytes) {
        for (int i = 0; i < bytes; ++i) f.push_back(static_cast<char>((x >> (8 * i)) & 0xFF));
    };
    put(Index::file_version, 4);
    put(payload.size(), 8);
    put(ragpp::detail::fnv1a64(payload), 8);
    return f + payload;
}
}  // namespace

TEST_CASE("BM25 refuses files of the formats before the common container", "[bm25][persistence]") {
    // Written by main at 36f7c6d (format 2, magic "RGPPBM25"): two documents "a b c", "b c d".
    const auto fixture = std::filesystem::path(RAGPP_SOURCE_DIR) / "tests/fixtures/index/bm25-format2.bin";
    CHECK_THROWS_AS(Index::load(fixture), ragpp::FormatError);
    CHECK_THROWS_WITH(Index::load(fixture), Catch::Contains(fixture.string()) &&
                                                Catch::Contains("was written by an older ragpp (BM25 index format 2;") &&
                                                Catch::Contains("rebuild the index"));
    // Format 1 had the same header as format 2 with version 1.
    std::string v1 = slurp(fixture);
    v1[8] = 1;
    CHECK_THROWS_WITH(Index::from_bytes(v1, "old.bm25"), Catch::Contains("'old.bm25' was written by an older ragpp (BM25 index format 1;"));
}

TEST_CASE("BM25 refuses format 3 files (uncompressed postings) with the rebuild message", "[bm25][persistence]") {
    // Written by main at 3829e73 (format 3, the common container): documents "a b c", "b c d".
    const auto fixture = std::filesystem::path(RAGPP_SOURCE_DIR) / "tests/fixtures/index/bm25-format3.bin";
    REQUIRE(std::filesystem::exists(fixture));
    for (const bool mmap : {false, true}) {
        CHECK_THROWS_AS(Index::load(fixture, {}, {mmap, true}), ragpp::FormatError);
        CHECK_THROWS_WITH(Index::load(fixture, {}, {mmap, false}),
                          Catch::Contains(fixture.string()) &&
                              Catch::Contains("was written by an older ragpp (BM25 index format 3") &&
                              Catch::Contains("rebuild the index"));
    }
}

TEST_CASE("BM25 block-compressed lists: adds below the last id, removals, compaction and files keep every posting",
          "[bm25][blocks][updates]") {
    const auto seed = GENERATE(take(6, random(std::uint64_t{1}, std::uint64_t{1} << 40)));
    RandomCorpus rc(seed, 25);  // few terms: lists of hundreds of postings, several blocks each
    std::mt19937_64 rng(seed);
    // Sparse ids (gaps up to 2^16 need wide bit widths), added out of order.
    std::vector<DocId> ids;
    for (DocId id = 0; ids.size() < 1200; id += 1 + static_cast<DocId>(rng() % (rng() % 64 == 0 ? 65536 : 3))) ids.push_back(id);
    std::shuffle(ids.begin() + 600, ids.end(), rng);
    Index live;
    std::map<DocId, std::string> truth;
    auto text = [&] {
        std::string t = rc.text(30);
        if (rng() % 50 == 0)
            for (int i = 0; i < 300; ++i) t += " t1";  // a large tf
        return t;
    };
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const auto t = text();
        live.add_document(ids[i], doc(t));
        truth[ids[i]] = t;
        if (i == 600) live.shrink_to_fit();  // compact: the next adds reopen partial blocks
        if (i > 600 && i % 7 == 0) {         // removals inside blocks, and updates
            auto it = truth.begin();
            std::advance(it, static_cast<std::ptrdiff_t>(rc.pick(truth.size())));
            if (i % 2 == 0) {
                live.remove_document(it->first);
                truth.erase(it);
            } else {
                it->second = text();
                live.update_document(it->first, doc(it->second));
            }
        }
        if (i == 900) {
            live.shrink_to_fit();
            live = Index::from_bytes(live.to_bytes());
        }
    }
    Index rebuilt;
    for (const auto& [id, t] : truth) rebuilt.add_document(id, doc(t));
    INFO("seed " << seed);
    REQUIRE(live.size() == truth.size());
    CHECK(live.posting_count() == rebuilt.posting_count());
    for (const auto& term : rc.vocab) {
        CHECK(live.document_frequency(term) == rebuilt.document_frequency(term));
        for (const auto& [id, t] : truth) {
            const auto tf = rebuilt.term_frequency(term, id);
            if (live.term_frequency(term, id) != tf) FAIL("term " << term << " doc " << id);
        }
        for (const DocId gone : {DocId{1}, DocId{2}, ids.back() + 1})
            if (truth.count(gone) == 0) CHECK(live.term_frequency(term, gone) == 0);
    }
    // Pruned searches over compacted, reopened and re-encoded blocks equal the exhaustive ones.
    std::size_t pruned = 0, oracle = 0;
    for (Index* index : {&live, &rebuilt}) {
        index->shrink_to_fit();
        for (int q = 0; q < 30; ++q) {
            const auto [terms, k, o] = random_query(rc, q, ids.back() + 1, false);
            BM25SearchStats a, b;
            const auto slow = rebuilt.search_terms(terms, k, o, BM25Strategy::exhaustive, &b);
            CHECK(index->search_terms(terms, k, o, BM25Strategy::maxscore, &a) == slow);
            CHECK(index->search_terms(terms, k, o, BM25Strategy::accumulate) == slow);
            pruned += a.scored;
            oracle += b.scored;
        }
    }
    CHECK(pruned < oracle);
    // The same through a file, read and mapped.
    ragpp_test::TempDir dir;
    live.save(dir.path / "blocks.bm25");
    for (const bool mmap : {false, true}) {
        const Index loaded = Index::load(dir.path / "blocks.bm25", {}, {mmap, !mmap});
        CHECK(loaded.posting_count() == live.posting_count());
        CHECK(static_cast<double>(loaded.memory_bytes()) < 1.05 * static_cast<double>(live.memory_bytes()));  // no per-slot arrays for absent fields
        for (int q = 0; q < 10; ++q) {
            const auto query = rc.text(4);
            CHECK(loaded.search(query, 10) == live.search(query, 10));
        }
    }
}

TEST_CASE("BM25 counts read from a file are checked against its size before allocating", "[bm25][persistence]") {
    const std::string good = small_index().to_bytes();
    const std::string payload = good.substr(36);
    // Offsets in the payload: str analyzer (4 + 10) | u8 variant | 8 x f64 | u64 slots.
    const std::size_t slots_at = 4 + 10 + 1 + 64;
    auto with_u64 = [&](std::size_t at, std::uint64_t v) {
        std::string p = payload;
        for (int i = 0; i < 8; ++i) p[at + static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xFF);
        return bm25_file(p);
    };
    auto with_u32 = [&](std::size_t at, std::uint32_t v) {
        std::string p = payload;
        for (int i = 0; i < 4; ++i) p[at + static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xFF);
        return bm25_file(p);
    };
    REQUIRE_NOTHROW(Index::from_bytes(bm25_file(payload)));
    // 2^31 document slots, 2^63 and 2^64-1: each a FormatError naming the count, never bad_alloc.
    for (const std::uint64_t n : {std::uint64_t{1} << 31, std::uint64_t{1} << 63, ~std::uint64_t{0}}) {
        INFO("slots " << n);
        CHECK_THROWS_AS(Index::from_bytes(with_u64(slots_at, n), "forged.bm25"), ragpp::FormatError);
        CHECK_THROWS_WITH(Index::from_bytes(with_u64(slots_at, n), "forged.bm25"),
                          Catch::Contains("'forged.bm25'") && Catch::Contains("document slots " + std::to_string(n) + " does not fit"));
    }
    // The analyzer name's length, 2^32-1 bytes in a file of a few hundred.
    CHECK_THROWS_WITH(Index::from_bytes(with_u32(0, 0xFFFFFFFFU), "forged.bm25"),
                      Catch::Contains("truncated while reading analyzer name"));
    // The term count, after the slots and four other counts.
    const std::size_t terms_at = slots_at + 5 * 8;
    CHECK_THROWS_WITH(Index::from_bytes(with_u64(terms_at, std::uint64_t{1} << 31), "forged.bm25"),
                      Catch::Contains("term count 2147483648 does not fit"));
    // A payload size in the header larger than the file.
    std::string big = good;
    big[27] = 0x7F;
    CHECK_THROWS_WITH(Index::from_bytes(big, "forged.bm25"), Catch::Contains("truncated: the header announces"));
}

TEST_CASE("BM25 any k, up to SIZE_MAX, returns every match without reserving k slots", "[bm25]") {
    const Index index = small_index();
    RandomCorpus rc(5, 30);
    for (int q = 0; q < 10; ++q) {
        const auto query = rc.text(3);
        const auto all = index.search_exhaustive(query, index.next_id());
        for (const std::size_t k : {std::size_t{1} << 40, std::numeric_limits<std::size_t>::max()}) {
            INFO("query '" << query << "' k " << k);
            CHECK(index.search(query, k) == all);
            CHECK(index.search_exhaustive(query, k) == all);
            const auto terms = ragpp::analyze(WhitespaceAnalyzer{}, query);
            CHECK(index.search_terms(terms, k, {}, BM25Strategy::maxscore) == all);
            CHECK(index.search_terms(terms, k, {}, BM25Strategy::accumulate) == all);
        }
    }
}

TEST_CASE("BM25 idf(term) is the variant's idf, as search weighs the term", "[bm25]") {
    Index index;
    index.add_document(0, doc("a b"));
    index.add_document(1, doc("a c"));
    index.add_document(2, doc("a d"));
    // N = 3, df(a) = 3, df(b) = 1; by hand from the table in index/bm25/scoring.hpp.
    CHECK(index.idf("b") == Approx(std::log(1.0 + (3 - 1 + 0.5) / (1 + 0.5))));
    CHECK(index.idf("a") == Approx(std::log(1.0 + 0.5 / 3.5)));
    CHECK(index.idf("zzz") == 0.0);
    for (BM25Variant v : ragpp::bm25_variants) {
        BM25Params p = index.params();
        p.variant = v;
        index.set_params(p);
        INFO(ragpp::to_string(v));
        // A one-term query on a document of average length: score = idf * tfpart(1, L = 1) for
        // the variants without an absent-term part (checked against the scores search returns).
        if (v == BM25Variant::lucene || v == BM25Variant::robertson) {
            const auto hits = index.search("b", 1);
            REQUIRE(hits.size() == 1);
            CHECK(hits[0].score == static_cast<float>(index.idf("b") * ragpp::bm25_tf_part<BM25Variant::lucene>(1.0, 1.0, 1.2, 0.5)));
        }
        CHECK(index.idf("b") == ragpp::bm25_idf(v, 3.0, 1.0));
    }
    // rank_bm25_okapi floors a negative idf to epsilon * the mean idf (a: df 3 of N 3).
    BM25Params p = index.params();
    p.variant = BM25Variant::rank_bm25_okapi;
    index.set_params(p);
    const double raw_a = std::log(3 - 3 + 0.5) - std::log(3 + 0.5);
    const double raw_rare = std::log(3 - 1 + 0.5) - std::log(1 + 0.5);
    CHECK(raw_a < 0.0);
    CHECK(index.idf("a") == Approx(0.25 * (raw_a + 3 * raw_rare) / 4));
}

TEST_CASE("BM25 removal given the document equals removal by id (and falls back when the document is not the one indexed)",
          "[bm25][remove]") {
    // Oracle: remove_document(id), which reads every list. The fast path reads only the
    // lists of the document's terms; given a wrong document it must fall back, never
    // leave a posting behind or remove another document's.
    std::mt19937 rng(GENERATE(1u, 2u, 3u));
    std::uniform_int_distribution<int> word(0, 60), len(1, 40);
    std::vector<Document> docs;
    for (int d = 0; d < 700; ++d) {  // > 5 blocks of 128 for the frequent words
        std::string text;
        for (int i = 0, n = len(rng); i < n; ++i) text += "w" + std::to_string(word(rng) * word(rng) / 60) + " ";
        docs.push_back(Document{"d" + std::to_string(d), text, {}});
    }
    Index slow, fast;
    for (DocId d = 0; d < docs.size(); ++d) {
        slow.add_document(d, docs[d]);
        fast.add_document(d, docs[d]);
    }
    if (rng() % 2 == 0) {
        slow.shrink_to_fit();
        fast.shrink_to_fit();
    }
    std::vector<DocId> order(docs.size());
    for (DocId d = 0; d < order.size(); ++d) order[d] = d;
    std::shuffle(order.begin(), order.end(), rng);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < order.size() / 2; ++i) {
        const DocId id = order[i];
        slow.remove_document(id);
        if (i % 5 == 0) {  // not the indexed document: a shorter, a different, or an empty one
            const Document other{"x", i % 3 == 0 ? "" : docs[order[i + 1]].text, {}};
            fast.remove_document(id, other);
            ++wrong;
        } else {
            fast.remove_document(id, docs[id]);
        }
        CHECK_THROWS_AS(fast.remove_document(id, docs[id]), ragpp::NotFoundError);
    }
    CHECK(wrong > 0);
    CHECK(fast.size() == slow.size());
    CHECK(fast.posting_count() == slow.posting_count());
    for (int w = 0; w <= 60; ++w) {
        const std::string q = "w" + std::to_string(w);
        const std::vector<std::string> qt{q};
        CHECK(fast.search_terms(qt, 1000, {}, BM25Strategy::exhaustive) ==
              slow.search_terms(qt, 1000, {}, BM25Strategy::exhaustive));
        for (DocId d = 0; d < docs.size(); d += 37) CHECK(fast.term_frequency(q, d) == slow.term_frequency(q, d));
    }
    const auto a = fast.search("w1 w2 w5 w9 w30", 50), b = slow.search("w1 w2 w5 w9 w30", 50);
    CHECK(a == b);
}

namespace {
/// Where the sections of a format-5 BM25 file start (index/detail/bm25_file.hpp), read
/// from its counts: an independent reading of the layout, for the damage tests.
struct Bm25Layout {
    std::size_t slots = 0, terms = 0, table = 0, names = 0, sky = 0, block_bytes = 0;
    std::size_t entries_at = 0, names_at = 0, blocks_at = 0, table_at = 0;
    explicit Bm25Layout(const std::string& f) {
        auto u64 = [&](std::size_t at) {
            std::uint64_t v = 0;
            std::memcpy(&v, f.data() + at, 8);
            return static_cast<std::size_t>(v);
        };
        std::uint32_t name_len = 0;
        std::memcpy(&name_len, f.data() + 36, 4);
        const std::size_t counts = 36 + 4 + name_len + 1 + 64;  // str analyzer | u8 variant | 8 x f64
        slots = u64(counts);
        terms = u64(counts + 40);
        table = u64(counts + 48);
        names = u64(counts + 56);
        sky = u64(counts + 64);
        block_bytes = u64(counts + 72);
        auto up = [](std::size_t at, std::size_t to) { return (at + to - 1) / to * to; };
        std::size_t at = up(counts + 80, 8) + slots;  // live flags
        at = up(at, 8) + 4 * slots;                   // lengths
        table_at = up(at, 8);
        entries_at = up(table_at + 8 * table, 8);
        const std::size_t sky_at = up(entries_at + 56 * terms, 8);
        names_at = up(sky_at + 8 * sky, 8);
        blocks_at = up(names_at + names, 64);
    }
    /// The name of term t, from its entry (u64 name offset first, u32 name bytes at 32).
    [[nodiscard]] std::string name(const std::string& f, std::size_t t) const {
        std::uint64_t off = 0;
        std::uint32_t n = 0;
        std::memcpy(&off, f.data() + entries_at + 56 * t, 8);
        std::memcpy(&n, f.data() + entries_at + 56 * t + 32, 4);
        return f.substr(names_at + off, n);
    }
};
/// `f` with its payload checksum recomputed (so only the structure checks can refuse it).
std::string resum(std::string f) {
    const auto sum = ragpp::detail::fnv1a64(std::string_view(f).substr(36));
    for (int i = 0; i < 8; ++i) f[28 + static_cast<std::size_t>(i)] = static_cast<char>((sum >> (8 * i)) & 0xFF);
    return f;
}
}  // namespace

TEST_CASE("BM25 a loaded index answers in place: mapped, read and in-memory results and statistics are identical, "
          "writes after a mapped load equal the in-memory index",
          "[bm25][persistence][frozen]") {
    const auto seed = GENERATE(take(4, random(std::uint64_t{1}, std::uint64_t{1} << 40)));
    RandomCorpus rc(seed, 60);
    std::mt19937_64 rng(seed);
    auto make = [&]() {
        std::vector<std::string> hp;
        for (std::size_t h = rc.pick(3); h > 0; --h) hp.push_back(rc.text(3));
        return rc.pick(3) == 0 ? doc(rc.text(40)) : fielded(rc.text(40), "d/" + rc.term() + ".rst", hp);
    };
    Index live(BM25Params{BM25Variant::lucene, 1.2, 0.75});
    std::map<DocId, Document> truth;
    for (DocId id = 0; id < 700; ++id) {
        truth[id] = make();
        live.add_document(id, truth[id]);
    }
    for (DocId id = 0; id < 700; id += 1 + static_cast<DocId>(rng() % 9)) {  // removals leave empty slots and dead terms
        live.remove_document(id);
        truth.erase(id);
    }
    ragpp_test::TempDir dir;
    const auto path = dir.path / "frozen.bm25";
    live.save(path);
    const Index mapped = Index::load(path, {}, {.mmap = true, .verify = false});
    const Index read = Index::load(path, {}, {.mmap = false, .verify = true});
    const Index copied = Index::from_bytes(slurp(path));
    INFO("seed " << seed);
    CHECK(mapped.frozen());
    CHECK(mapped.mapped());
    CHECK(read.frozen());
    CHECK_FALSE(read.mapped());
    for (const Index* ix : {&mapped, &read, &copied}) {
        CHECK(ix->size() == live.size());
        CHECK(ix->next_id() == live.next_id());
        CHECK(ix->posting_count() == live.posting_count());
        CHECK(ix->total_length() == live.total_length());
        CHECK(ix->vocabulary_size() == live.vocabulary_size());
        CHECK(ix->fielded_size() == live.fielded_size());
        for (const auto& term : rc.vocab) {
            CHECK(ix->document_frequency(term) == live.document_frequency(term));
            CHECK(ix->idf(term) == live.idf(term));
        }
        for (DocId id = 0; id < 700; id += 7) {
            CHECK(ix->contains(id) == live.contains(id));
            CHECK(ix->document_length(id) == live.document_length(id));
            for (std::size_t f = 0; f < 3; ++f) CHECK(ix->field_length(f, id) == live.field_length(f, id));
            for (const auto& term : {rc.vocab[0], rc.vocab[5], rc.vocab[30]}) {
                CHECK(ix->term_frequency(term, id) == live.term_frequency(term, id));
                for (std::size_t f = 0; f < 3; ++f)
                    CHECK(ix->field_term_frequency(f, term, id) == live.field_term_frequency(f, term, id));
            }
        }
    }
    // Every strategy, variant, k1/b, field weights and filters (random_query) on the three.
    for (BM25Variant v : ragpp::bm25_variants) {
        Index m = Index::load(path, {}, {.mmap = true, .verify = false});
        set_variant(live, v);
        set_variant(m, v);
        for (int q = 0; q < 12; ++q) {
            const auto [terms, k, o] = random_query(rc, q, 700, true);
            INFO(ragpp::to_string(v) << " query " << q);
            const auto expected = live.search_terms(terms, k, o, BM25Strategy::exhaustive);
            for (const auto s : {BM25Strategy::automatic, BM25Strategy::maxscore, BM25Strategy::accumulate, BM25Strategy::exhaustive})
                CHECK(m.search_terms(terms, k, o, s) == live.search_terms(terms, k, o, s));
            CHECK(m.search_terms(terms, k, o, BM25Strategy::exhaustive) == expected);
            CHECK(mapped.search_terms(terms, k, o) == read.search_terms(terms, k, o));
            CHECK(copied.search_terms(terms, k, o) == read.search_terms(terms, k, o));
        }
        CHECK(m.frozen());  // searches never thaw
    }
    set_variant(live, BM25Variant::lucene);
    // Writes after a mapped load: the same adds, removals and updates on both.
    Index writer = Index::load(path, {}, {.mmap = true, .verify = false});
    const auto before = writer.to_bytes();  // a frozen index saves its decoded copy
    CHECK(before == live.to_bytes());
    for (int op = 0; op < 120; ++op) {
        const auto r = rc.pick(10);
        if (r < 4) {
            const DocId id = live.next_id();
            truth[id] = make();
            live.add_document(id, truth[id]);
            writer.add_document(id, truth[id]);
        } else {
            auto it = truth.begin();
            std::advance(it, static_cast<std::ptrdiff_t>(rc.pick(truth.size())));
            if (r < 7) {
                live.remove_document(it->first, it->second);
                writer.remove_document(it->first, it->second);
                truth.erase(it);
            } else {
                it->second = make();
                live.update_document(it->first, it->second);
                writer.update_document(it->first, it->second);
            }
        }
    }
    CHECK_FALSE(writer.frozen());
    CHECK(writer.posting_count() == live.posting_count());
    Index rebuilt(BM25Params{BM25Variant::lucene, 1.2, 0.75});
    for (const auto& [id, d] : truth) rebuilt.add_document(id, d);
    for (int q = 0; q < 20; ++q) {
        const auto [terms, k, o] = random_query(rc, q, writer.next_id(), true);
        CHECK(writer.search_terms(terms, k, o) == rebuilt.search_terms(terms, k, o, BM25Strategy::exhaustive));
        CHECK(writer.search_terms(terms, k, o) == live.search_terms(terms, k, o));
    }
    // An empty index round-trips (no terms, no table), and takes writes after its load.
    Index empty = Index::from_bytes(Index{}.to_bytes());
    CHECK(empty.frozen());
    CHECK(empty.search("t1", 10).empty());
    CHECK(empty.document_frequency("t1") == 0);
    empty.add_document(doc("t1 t2"));
    CHECK(empty.search("t1", 10).size() == 1);
    // The mapped index loaded before the writes still answers from its file.
    CHECK(mapped.search_terms(std::vector<std::string>{rc.vocab[3]}, 5) == read.search_terms(std::vector<std::string>{rc.vocab[3]}, 5));
}

TEST_CASE("BM25 damaged files are refused by name: truncated, a corrupted block with verify on and off, forged counts",
          "[bm25][persistence][frozen]") {
    RandomCorpus rc(11, 30);
    Index index;
    for (int i = 0; i < 400; ++i) index.add_document(doc((i == 0 ? "t0 " : "") + rc.text(20)));  // t0 is term 0
    ragpp_test::TempDir dir;
    const auto path = dir.path / "good.bm25";
    index.save(path);
    const std::string good = slurp(path);
    const Bm25Layout at(good);
    REQUIRE(at.slots == 400);
    REQUIRE(at.block_bytes > 200);
    const auto bad = dir.path / "bad.bm25";
    auto open = [&](const std::string& bytes, bool verify) {
        dump(bad, bytes);
        return Index::load(bad, {}, {.mmap = true, .verify = verify});
    };
    // FormatError naming the file and `what` (a Catch composite matcher cannot be returned: it keeps references).
    auto refused = [&](auto&& call, const std::string& what) {
        try {
            (void)call();
            FAIL_CHECK("not refused: " << what);
        } catch (const ragpp::FormatError& e) {
            CHECK_THAT(std::string(e.what()), Catch::Contains("'" + bad.string() + "'") && Catch::Contains(what));
        }
    };
    // The list at offset 0 of the posting lists is term 0's (ids follow the file).
    const std::string term0 = at.name(good, 0), other = at.name(good, at.terms - 1);
    REQUIRE(index.document_frequency(term0) > 128);  // several blocks
    REQUIRE(term0 != other);

    SECTION("truncated, through a mapping") {
        for (const std::size_t n : {std::size_t{0}, std::size_t{20}, std::size_t{100}, at.blocks_at + 10, good.size() - 1}) {
            INFO("truncated to " << n);
            CHECK_THROWS_AS(open(good.substr(0, n), false), ragpp::FormatError);
            CHECK_THROWS_WITH(open(good.substr(0, n), false), Catch::Contains(bad.string()));
        }
    }
    SECTION("a corrupted block: at open with verify, at the first query reading it without") {
        std::string b = good;
        b[at.blocks_at + 16] = static_cast<char>(0xFF);  // the first block's count - 1: 256 postings
        b = resum(b);
        CHECK_THROWS_AS(open(b, true), ragpp::FormatError);
        refused([&] { return open(b, true); }, "postings of term '" + term0 + "': a block holds 256 postings");
        const Index lazy = open(b, false);
        CHECK(lazy.search(other, 10) == index.search(other, 10));  // an intact list
        CHECK_THROWS_AS(lazy.search(term0, 10), ragpp::FormatError);
        refused([&] { return lazy.search(term0 + " " + other, 10); }, "a block holds 256 postings");
        refused([&] { return lazy.term_frequency(term0, 1); }, "a block holds 256 postings");
        // A write decodes everything first: refused, the index unchanged and still answering.
        Index w = open(b, false);
        refused([&] { return w.add_document(doc("x y")); }, "a block holds 256 postings");
        CHECK(w.frozen());
        CHECK(w.size() == 400);
        CHECK(w.search(other, 10) == index.search(other, 10));
        // Other damage inside a block: a gap past the list's last document.
        std::string g = good;
        g[at.blocks_at + 17] = static_cast<char>(0x1F);  // gap bits 31
        g = resum(g);
        const Index lazy2 = open(g, false);
        CHECK_THROWS_AS(lazy2.search(term0, 10), ragpp::FormatError);
        refused([&] { return lazy2.search(term0, 10); }, "postings of term '" + term0 + "'");
    }
    SECTION("forged counts and offsets") {
        auto with_u32 = [&](std::size_t pos, std::uint32_t v) {
            std::string b = good;
            std::memcpy(b.data() + pos, &v, 4);
            return resum(b);
        };
        auto with_u64 = [&](std::size_t pos, std::uint64_t v) {
            std::string b = good;
            std::memcpy(b.data() + pos, &v, 8);
            return resum(b);
        };
        // Term 0's document frequency (u32 at 36 of its entry), larger than its blocks hold.
        const std::string df = with_u32(at.entries_at + 36, 399);
        refused([&] { return open(df, true); }, "announced");
        refused([&] { return open(df, false).search(term0, 10); }, "postings in the blocks, 399 announced");
        // Term 0's list offset (u64 at 8) past the posting lists.
        const std::string off = with_u64(at.entries_at + 8, at.block_bytes);
        refused([&] { return open(off, false).search(term0, 10); }, "lie outside the posting lists");
        // A name offset past the names: the lookup that reads it refuses it.
        const std::string name = with_u64(at.entries_at, ~std::uint64_t{0} - 2);
        refused([&] { return open(name, false).search(term0, 10); }, "lies outside the names");
        // Every used hash slot naming a term beyond the table (its hash tag kept).
        std::string table = good;
        for (std::size_t s = 0; s < at.table; ++s) {
            std::uint64_t v = 0;
            std::memcpy(&v, table.data() + at.table_at + 8 * s, 8);
            if (v != 0) v = (v & 0xFFFFFFFF00000000ULL) | 0xFFFFFFF0U;
            std::memcpy(table.data() + at.table_at + 8 * s, &v, 8);
        }
        table = resum(table);
        refused([&] { return open(table, true); }, "names term");
        const Index forged = open(table, false);
        CHECK(forged.search("nothing-like-it", 10).empty());  // no slot's tag matches: absent
        refused([&] { return forged.search(term0, 10); }, "names term 4294967279");
        // Counts of the header against the file's size.
        refused([&] { return open(with_u64(36 + 4 + 10 + 1 + 64 + 40, std::uint64_t{1} << 40), false); },
                "term count 1099511627776 does not fit");
        refused([&] { return open(with_u64(36 + 4 + 10 + 1 + 64 + 48, 3), false); }, "table slots 3");
    }
}

TEST_CASE("BM25 refuses format 4 files (a term table decoded at open) with the rebuild message", "[bm25][persistence]") {
    // Written by main at 34d26ed (format 4): documents "a b c", "b c d".
    const auto fixture = std::filesystem::path(RAGPP_SOURCE_DIR) / "tests/fixtures/index/bm25-format4.bin";
    REQUIRE(std::filesystem::exists(fixture));
    for (const bool mmap : {false, true})
        for (const bool verify : {false, true})
            CHECK_THROWS_WITH(Index::load(fixture, {}, {mmap, verify}),
                              Catch::Contains(fixture.string()) &&
                                  Catch::Contains("was written by an older ragpp (BM25 index format 4; this build reads format 5)") &&
                                  Catch::Contains("rebuild the index"));
}

TEST_CASE("BM25 block decoding: every bit width 0 to 32 against a bit-by-bit reference, and the list cursor against a search",
          "[bm25][blocks]") {
    namespace bm = ragpp::detail::bm25;
    std::mt19937_64 rng(20261201);
    // The reference: value i is bits [i * width, (i + 1) * width) of the run, LSB first.
    auto reference = [](const std::vector<std::uint8_t>& run, std::size_t i, std::uint32_t width) {
        std::uint64_t v = 0;
        for (std::uint32_t k = 0; k < width; ++k) {
            const std::size_t bit = i * width + k;
            v |= std::uint64_t{(run[bit / 8] >> (bit % 8)) & 1U} << k;
        }
        return static_cast<std::uint32_t>(v);
    };
    for (std::uint32_t width = 0; width <= 32; ++width) {
        for (const std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{8}, std::size_t{9}, std::size_t{127},
                                    std::size_t{128}}) {
            std::vector<std::uint32_t> values(n);
            for (auto& v : values) v = width == 0 ? 0 : static_cast<std::uint32_t>(rng() >> (64 - width));
            std::vector<std::uint8_t> run;
            bm::pack_bits(run, values.data(), n, width);
            REQUIRE(run.size() == (n * width + 7) / 8);
            // Unpacked where the run ends its buffer (a padded copy) and inside a longer one.
            std::vector<std::uint8_t> longer = run;
            longer.resize(run.size() + 16, 0xFF);
            std::uint32_t a[bm::block_size], b[bm::block_size];
            bm::unpack_bits(run.data(), a, n, width);
            bm::unpack_bits(longer.data(), b, n, width, longer.data() + longer.size());
            for (std::size_t i = 0; i < n; ++i) {
                INFO("width " << width << " n " << n << " value " << i);
                REQUIRE(reference(run, i, width) == values[i]);
                REQUIRE(a[i] == values[i]);
                REQUIRE(b[i] == values[i]);
            }
        }
        // A whole block whose gaps need exactly `width` bits (one gap 2^(width-1) + 1), decoded
        // against the documents it was built from.
        std::vector<std::uint32_t> docs{7}, gaps, tfs;
        for (std::size_t i = 1; i < bm::block_size; ++i) {
            const std::uint32_t small = width == 0 ? 0 : static_cast<std::uint32_t>(rng() % (std::uint64_t{1} << std::min(width - 1, 20U)));
            const std::uint32_t gap = i == 60 && width > 0 ? (std::uint32_t{1} << (width - 1)) : small;
            gaps.push_back(gap);
            docs.push_back(docs.back() + gap + 1);
        }
        for (std::size_t i = 0; i < bm::block_size; ++i) tfs.push_back(static_cast<std::uint32_t>(rng() % 5));
        std::vector<std::uint8_t> block(bm::block_header_bytes, 0);
        std::memcpy(block.data(), &docs.front(), 4);
        std::memcpy(block.data() + 4, &docs.back(), 4);
        block[16] = static_cast<std::uint8_t>(bm::block_size - 1);
        block[17] = static_cast<std::uint8_t>(width);
        block[18] = 3;
        bm::pack_bits(block, gaps.data(), gaps.size(), width);
        bm::pack_bits(block, tfs.data(), tfs.size(), 3);
        const auto h = bm::read_header(block.data());
        REQUIRE(h.bytes() == block.size());
        std::uint32_t got_docs[bm::block_size], got_tfs[bm::block_size];
        bm::decode_block(block.data(), h, got_docs, got_tfs);
        for (std::size_t i = 0; i < bm::block_size; ++i) {
            INFO("width " << width << " posting " << i);
            REQUIRE(got_docs[i] == docs[i]);
            REQUIRE(got_tfs[i] == tfs[i] + 1);
        }
    }

    // The cursor (whole-block decoding, single frequencies, skips by header) against
    // std::lower_bound over the postings, with and without a raw tail.
    for (const bool compact : {false, true}) {
        std::vector<bm::Posting> ref;
        for (DocId d = 0; ref.size() < 3000; d += 1 + static_cast<DocId>(rng() % (rng() % 16 == 0 ? 5000 : 40)))
            ref.push_back({d, 1 + static_cast<std::uint32_t>(rng() % (rng() % 8 == 0 ? 1000 : 3))});
        std::vector<std::uint32_t> lens(ref.back().doc + 1, 10);
        bm::PostingList list;
        for (const auto& p : ref) list.add(p, lens.data());
        if (compact) list.compact(lens.data());
        REQUIRE((list.tail_size() == 0) == compact);
        for (int run = 0; run < 20; ++run) {
            bm::ListCursor c(list);
            std::size_t at = 0;
            std::size_t seen = 0;
            while (!c.done()) {
                INFO("compact " << compact << " run " << run << " at " << at);
                REQUIRE(at < ref.size());
                REQUIRE(c.doc() == ref[at].doc);
                REQUIRE(c.tf() == ref[at].tf);
                const DocId soon = c.ahead(3);  // 3 postings ahead, or fewer at the end of a block
                REQUIRE(soon >= ref[at].doc);
                REQUIRE(soon <= ref[std::min(at + 3, ref.size() - 1)].doc);
                ++seen;
                if (run == 0) {  // a full scan
                    c.next();
                    ++at;
                    continue;
                }
                const DocId target = c.doc() + 1 + static_cast<DocId>(rng() % (run < 10 ? 50 : 20000));
                if (rng() % 3 == 0) {  // a shallow move first, as MaxScore's block bounds do
                    const bool may = c.shallow(target);
                    const auto it = std::lower_bound(ref.begin(), ref.end(), target, [](const bm::Posting& p, DocId d) { return p.doc < d; });
                    if (it != ref.end() && it->doc == target) REQUIRE(may);
                }
                c.next_geq(target);
                at = static_cast<std::size_t>(std::lower_bound(ref.begin(), ref.end(), target, [](const bm::Posting& p, DocId d) { return p.doc < d; }) - ref.begin());
                if (at == ref.size()) REQUIRE(c.done());
            }
            if (run == 0) CHECK(seen == ref.size());
        }
    }
}

TEST_CASE("BM25 reader statistics: a reader's search equals an index of its documents alone, first and later use, "
          "in memory and loaded",
          "[bm25][access]") {
    // Oracle: an index built from the reader's documents alone (same ids). The statistics
    // cache each term's df on first use; a second pass must read the same from the cache.
    const auto variant = GENERATE(BM25Variant::lucene, BM25Variant::rank_bm25_okapi, BM25Variant::bm25plus);
    RandomCorpus rc(20261202 + static_cast<std::uint64_t>(variant), 80);
    Index all, own;
    set_variant(all, variant);
    set_variant(own, variant);
    auto readable = std::make_shared<DocSet>(400);
    for (int i = 0; i < 400; ++i) {
        const auto terms = ragpp::analyze(WhitespaceAnalyzer{}, rc.text(25) + (i % 3 == 0 ? "" : " hidden" + std::to_string(i % 7)));
        all.add_terms(static_cast<DocId>(i), terms);
        if (i % 3 == 0) {  // the reader's third; the others hold words it never sees ("hiddenN")
            own.add_terms(static_cast<DocId>(i), terms);
            readable->set(static_cast<DocId>(i));
        }
    }
    all.remove_document(9);  // a removed document of the reader's counts nowhere
    own.remove_document(9);
    ragpp_test::TempDir dir;
    all.save(dir.path / "all.bm25");
    const Index loaded = Index::load(dir.path / "all.bm25");
    for (const Index* index : {static_cast<const Index*>(&all), &loaded}) {
        const auto stats = std::make_shared<const ragpp::ReaderStatistics>(index->reader_statistics(readable));
        CHECK(stats->count == static_cast<double>(own.size()));
        BM25SearchOptions options;
        options.allowed = readable;
        options.statistics = stats;
        for (int pass = 0; pass < 2; ++pass) {
            RandomCorpus queries(99, 80);
            for (int q = 0; q < 60; ++q) {
                auto terms = ragpp::analyze(WhitespaceAnalyzer{}, queries.text(5) + (q % 4 == 0 ? " hidden3" : ""));
                INFO("pass " << pass << ", query " << q);
                CHECK(index->search_terms(terms, 10, options) == own.search_terms(terms, 10));
                for (const auto& t : terms) {
                    CHECK(index->document_frequency(t, *stats) == own.document_frequency(t));
                    CHECK(index->idf(t, *stats) == own.idf(t));
                }
            }
            CHECK(index->document_frequency("hidden3", *stats) == 0);
            CHECK(index->document_frequency("hidden3") > 0);
        }
    }
}

TEST_CASE("BM25 remove_documents equals an index rebuilt without them: with and without the documents, "
          "with wrong documents, loaded, fields included; bad calls change nothing",
          "[bm25][fields][updates]") {
    const auto seed = GENERATE(take(8, random(std::uint64_t{1}, std::uint64_t{1} << 40)));
    RandomCorpus rc(seed, 40);
    std::map<DocId, Document> truth;
    Index live;
    for (DocId id = 0; id < 200; ++id) {
        std::vector<std::string> hp;
        for (std::size_t h = rc.pick(3); h > 0; --h) hp.push_back(rc.text(3));
        truth[id] = rc.pick(3) == 0 ? doc(rc.text(12)) : fielded(rc.text(12), "d/" + rc.term() + ".rst", hp);
        live.add_document(id, truth[id]);
    }
    const auto way = GENERATE(0, 1, 2, 3);  // documents given, not given, wrong ones, a loaded index
    Index index = way == 3 ? Index::from_bytes(live.to_bytes()) : live;
    std::vector<DocId> gone;
    for (const auto& [id, d] : truth)
        if (rc.pick(3) == 0) gone.push_back(id);
    std::shuffle(gone.begin(), gone.end(), rc.rng);
    std::vector<const Document*> docs;
    const Document wrong = doc("t1 t1 t1");
    for (DocId id : gone) docs.push_back(way == 2 && id % 2 ? &wrong : &truth[id]);
    // Bad calls first: an absent id, an id twice, documents of another size; nothing changes.
    const auto before = index.to_bytes();
    std::vector<DocId> absent = gone;
    absent.push_back(5000);
    CHECK_THROWS_AS(index.remove_documents(absent), ragpp::NotFoundError);
    std::vector<DocId> twice = gone;
    twice.push_back(gone.front());
    CHECK_THROWS_AS(index.remove_documents(twice), ragpp::InvalidArgument);
    CHECK_THROWS_AS(index.remove_documents(gone, std::span<const Document* const>(docs.data(), 1)), ragpp::InvalidArgument);
    CHECK(index.to_bytes() == before);

    index.remove_documents(gone, way == 1 ? std::span<const Document* const>() : std::span<const Document* const>(docs));
    Index rebuilt;
    for (const auto& [id, d] : truth)
        if (std::find(gone.begin(), gone.end(), id) == gone.end()) rebuilt.add_document(id, d);
    INFO("seed " << seed << ", way " << way);
    CHECK(index.size() == rebuilt.size());
    CHECK(index.total_length() == rebuilt.total_length());
    CHECK(index.posting_count() == rebuilt.posting_count());
    CHECK(index.fielded_size() == rebuilt.fielded_size());
    for (DocId id : gone) CHECK_FALSE(index.contains(id));
    for (BM25Variant v : {BM25Variant::lucene, BM25Variant::bm25plus}) {
        set_variant(index, v);
        set_variant(rebuilt, v);
        for (int q = 0; q < 15; ++q) {
            const auto query = rc.text(4);
            const auto terms = ragpp::analyze(WhitespaceAnalyzer{}, query);
            INFO("query '" << query << "'");
            const auto expected = rebuilt.search_exhaustive(query, 10);
            CHECK(index.search(query, 10) == expected);
            CHECK(index.search_terms(terms, 3, {}, BM25Strategy::maxscore) ==
                  rebuilt.search_terms(terms, 3, {}, BM25Strategy::exhaustive));
        }
    }
    // The removed ids can be added again.
    index.add_document(gone.front(), truth[gone.front()]);
    CHECK(index.contains(gone.front()));
}

TEST_CASE("BM25 remove_documents of one file's 40,000 sections is linear (the one-by-one removal was quadratic)",
          "[bm25][fields][hostile]") {
    // Every section shares its source path, title and most words: long lists whose every
    // posting goes. One by one, each removal rewrote the lists (and the field lists'
    // skylines): minutes at 400,000 sections. At once: each list once.
    Index index;
    std::vector<Document> sections;
    for (DocId id = 0; id < 40'000; ++id)
        sections.push_back(fielded("shared words here s" + std::to_string(id), "notes/big.md", {"Big", "Part"}));
    for (DocId id = 0; id < sections.size(); ++id) index.add_document(id, sections[id]);
    index.add_document(40'000, doc("other words"));
    std::vector<DocId> ids;
    std::vector<const Document*> docs;
    for (DocId id = 0; id < sections.size(); ++id) {
        ids.push_back(id);
        docs.push_back(&sections[id]);
    }
    const auto t0 = std::chrono::steady_clock::now();
    index.remove_documents(ids, docs);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(s < 10.0);  // 0.14 s in Release on a loaded machine; one by one: 30 s
    CHECK(index.size() == 1);
    CHECK(index.search("words", 10) == std::vector<Hit>{{40'000, index.search("words", 10).at(0).score}});
    CHECK(index.fielded_size() == 0);
}
