// ragpp::Engine (engine/engine.hpp): incremental sync against a fresh build, access in
// every mode before and after save/open, freshness (deleted never served, changed
// flagged), checks of a saved index folder (its parts opened in place: filters, places and
// syncs after open against the writer and a fresh build; damaged parts refused by name),
// single-file corpora, BM25Index::idf.
#include <catch2/catch.hpp>

#include <ragpp/engine/documents.hpp>  // Engine::documents()
#include <ragpp/engine/engine.hpp>
#include <ragpp/engine/evaluation_run.hpp>
#include <ragpp/engine/index_folder.hpp>

#include "support.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace ragpp;

namespace {

const std::vector<std::string> vocabulary{
    "backup", "restore", "reset", "router", "printer", "warranty", "invoice", "contract", "notice", "period",
    "password", "network", "cable", "battery", "screen", "update", "license", "server", "disk", "memory",
    "error", "timeout", "signal", "delivery", "refund", "support", "manual", "seconds", "button", "power"};

const std::vector<std::string> group_choices{"", "[admins]", "[sales]", "[admins, sales]"};

/// A small markdown note: optional groups, a title, 1 to 3 sections of random words.
std::string random_note(std::mt19937& rng) {
    auto word = [&] { return vocabulary[std::uniform_int_distribution<std::size_t>(0, vocabulary.size() - 1)(rng)]; };
    std::string text;
    const auto& groups = group_choices[std::uniform_int_distribution<std::size_t>(0, group_choices.size() - 1)(rng)];
    if (!groups.empty()) text += "---\ngroups: " + groups + "\n---\n";
    text += "# Note " + word() + "\n\n";
    const int sections = std::uniform_int_distribution<int>(1, 3)(rng);
    for (int s = 0; s < sections; ++s) {
        text += "## " + word() + " " + word() + "\n\n";
        const int n = std::uniform_int_distribution<int>(3, 25)(rng);
        for (int i = 0; i < n; ++i) text += word() + (i + 1 < n ? " " : ".\n\n");
    }
    return text;
}

/// Writes `text` and sets the file's modification time to `tick` seconds after a fixed
/// past instant, so that every write is seen as a change of mtime.
void write_file(const fs::path& p, const std::string& text, int tick) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    fs::last_write_time(p, fs::file_time_type::clock::now() - std::chrono::hours(2) + std::chrono::seconds(tick));
}

EngineConfig test_config() {
    EngineConfig c;
    c.analyzer = "english";
    c.embedder = "hashing:64";
    c.search.per_source = 0;
    c.search.candidates = 100000;
    return c;
}

using Ranked = std::vector<std::pair<std::string, double>>;

Ranked ranked(const Engine& e, const std::string& query, SearchMode mode, const Principal& who = Principal::system()) {
    EngineQuery q;
    q.k = 100000;
    q.mode = mode;
    q.principal = who;
    q.check_sources = false;
    // bm25 and vector modes rank by one list: compare that list's scores (the fused score
    // is 1 / (60 + rank), and a tie broken by DocId moves a rank).
    Ranked out;
    for (const auto& r : e.search(query, q).results)
        out.emplace_back(r.document->id, mode == SearchMode::bm25     ? r.trace[0].score.value()
                                         : mode == SearchMode::vector ? r.trace[1].score.value()
                                                                      : r.score);
    return out;
}

// Vector scores are float dot products: a row stored elsewhere may round differently.
bool close(double a, double b) { return std::abs(a - b) <= 1e-6 * std::max(1.0, std::abs(a)); }

bool has_ties(const Ranked& a) {
    for (std::size_t i = 1; i < a.size(); ++i)
        if (close(a[i - 1].second, a[i].second)) return true;
    return false;
}

/// Same chunks with the same scores in the same order, chunks of one score as a set
/// (DocIds differ between an updated and a fresh engine, and ties are ordered by DocId).
void require_same_ranking(const Ranked& a, const Ranked& b) {
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size();) {
        std::size_t j = i;
        std::set<std::string> sa, sb;
        while (j < a.size() && close(a[j].second, a[i].second)) {
            if (!close(b[j].second, a[i].second))
                UNSCOPED_INFO(j << ": " << a[j].first << " " << a[j].second << " | " << b[j].first << " " << b[j].second);
            REQUIRE(close(b[j].second, a[i].second));
            sa.insert(a[j].first);
            sb.insert(b[j].first);
            ++j;
        }
        if (sa != sb)
            for (std::size_t x = i > 2 ? i - 2 : 0; x < std::min(a.size(), j + 2); ++x)
                UNSCOPED_INFO(x << ": " << a[x].first << " " << a[x].second << " | " << b[x].first << " " << b[x].second);
        REQUIRE(sa == sb);
        i = j;
    }
}

std::string random_query(std::mt19937& rng) {
    std::string q;
    const int n = std::uniform_int_distribution<int>(1, 3)(rng);
    for (int i = 0; i < n; ++i) q += vocabulary[std::uniform_int_distribution<std::size_t>(0, vocabulary.size() - 1)(rng)] + " ";
    return q;
}

const std::vector<Principal> principals{Principal{}, Principal::with_groups({"admins"}), Principal::with_groups({"sales"}),
                                        Principal::with_groups({"admins", "sales"}), Principal::with_groups({"nobody"}),
                                        Principal::system()};

/// No principal sees a chunk outside its groups, in any mode or reranker; and every
/// principal finds at least one chunk somewhere (the check is not vacuous).
void require_access_holds(const Engine& e, std::mt19937& rng) {
    const AccessPolicy policy(Unlabeled::allow);
    for (const auto& who : principals) {
        std::size_t seen = 0;
        for (int t = 0; t < 8; ++t) {
            const std::string query = random_query(rng);
            for (auto mode : {SearchMode::bm25, SearchMode::vector, SearchMode::hybrid})
                for (const char* reranker : {"none", "proximity"}) {
                    EngineQuery q;
                    q.k = 50;
                    q.mode = mode;
                    q.principal = who;
                    q.reranker = reranker;
                    for (const auto& r : e.search(query, q).results) {
                        INFO("chunk " << r.document->id << " for groups " << who.groups.size());
                        REQUIRE(policy.allows(who, r.document->metadata));
                        ++seen;
                    }
                }
        }
        if (who.groups != std::vector<std::string>{"nobody"}) CHECK(seen > 0);
    }
}

/// Rewrites the ragpp binary file `p` as `bytes` with its header's payload checksum
/// recomputed (a forged file whose own checksum holds).
void write_with_checksum(const fs::path& p, std::string bytes) {
    const std::uint64_t sum = ragpp::detail::fnv1a64(bytes.data() + 36, bytes.size() - 36);
    std::memcpy(bytes.data() + 28, &sum, 8);
    std::ofstream(p, std::ios::binary) << bytes;
}

/// Commits to `to` a generation holding the parts of generation `g`, `part` replaced by `bytes`.
void commit_with(const fs::path& to, const OpenedGeneration& g, const std::string& part, const std::string& bytes) {
    GenerationWriter w(to);
    for (const char* name : {"documents.bin", "sources.bin", "places.bin", "metadata.bin", "bm25.idx", "vector.idx"})
        w.write(name, name == part ? bytes : ragpp_test::read_file(g.dir / name));
    w.commit(g.info);
}

}  // namespace

TEST_CASE("BM25Index::idf is its variant's formula", "[engine][bm25]") {
    BM25Index<StandardAnalyzer> lucene;
    lucene.add_document(0, Document{"a", "alpha beta", {}});
    lucene.add_document(1, Document{"b", "alpha gamma", {}});
    lucene.add_document(2, Document{"c", "delta", {}});
    // N = 3: df(alpha) = 2, df(beta) = 1.
    CHECK(lucene.idf("alpha") == Approx(std::log(1.0 + (3 - 2 + 0.5) / (2 + 0.5))));
    CHECK(lucene.idf("beta") == Approx(std::log(1.0 + (3 - 1 + 0.5) / (1 + 0.5))));
    CHECK(lucene.idf("absent") == 0.0);
    BM25Params p;
    p.variant = BM25Variant::atire;
    BM25Index<StandardAnalyzer> atire(StandardAnalyzer{}, p);
    atire.add_document(0, Document{"a", "alpha beta", {}});
    atire.add_document(1, Document{"b", "alpha", {}});
    CHECK(atire.idf("beta") == Approx(std::log(2.0 / 1.0)));
    atire.remove_document(0);  // the idf follows removals: N = 1, df(alpha) = 1
    CHECK(atire.idf("alpha") == Approx(0.0));
}

TEST_CASE("sync after random add/change/touch/delete equals a fresh build", "[engine][sync]") {
    const auto seed = GENERATE(1u, 2u, 3u);
    std::mt19937 rng(seed);
    ragpp_test::TempDir corpus, index;
    int tick = 0;
    std::set<std::string> files;
    for (int i = 0; i < 8; ++i) {
        const std::string name = (i % 3 == 0 ? "sub/" : "") + std::string("note") + std::to_string(i) + ".md";
        write_file(corpus.path / name, random_note(rng), ++tick);
        files.insert(name);
    }
    auto engine = Engine::build(corpus.path, test_config());
    int next = 8;
    for (int step = 0; step < 30; ++step) {
        INFO("seed " << seed << ", step " << step);
        SyncCounts expect;
        std::set<std::string> changed;
        const int ops = std::uniform_int_distribution<int>(1, 3)(rng);
        for (int o = 0; o < ops; ++o) {
            const int op = std::uniform_int_distribution<int>(0, 3)(rng);
            auto pick = [&] {
                auto it = files.begin();
                std::advance(it, std::uniform_int_distribution<std::size_t>(0, files.size() - 1)(rng));
                return *it;
            };
            if (op == 0 || files.size() < 3) {  // add
                const std::string name = "new" + std::to_string(next++) + ".md";
                write_file(corpus.path / name, random_note(rng), ++tick);
                files.insert(name);
                changed.insert(name);
                ++expect.added;
            } else if (op == 1) {  // change (unless already touched this step)
                const std::string name = pick();
                if (changed.count(name)) continue;
                write_file(corpus.path / name, random_note(rng) + "changed " + std::to_string(step) + "\n", ++tick);
                changed.insert(name);
                ++expect.changed;
            } else if (op == 2) {  // touch: same content, new mtime
                const std::string name = pick();
                fs::last_write_time(corpus.path / name, fs::last_write_time(corpus.path / name) + std::chrono::seconds(7));
            } else {  // delete
                const std::string name = pick();
                if (changed.count(name)) continue;
                fs::remove(corpus.path / name);
                files.erase(name);
                changed.insert(name);
                ++expect.removed;
            }
        }
        // Chunk ids of untouched files keep their DocIds.
        std::map<std::string, std::vector<DocId>> before;
        for (const auto& f : files)
            if (!changed.count(f)) before[f] = engine.documents().chunks_of(f);

        const SyncCounts c = engine.sync(corpus.path);
        CHECK(c.added == expect.added);
        CHECK(c.changed == expect.changed);
        CHECK(c.removed == expect.removed);
        CHECK(c.unchanged == files.size() - expect.added - expect.changed);
        CHECK(c.sources == files.size());
        for (const auto& [f, ids] : before) REQUIRE(engine.documents().chunks_of(f) == ids);

        if (step % 7 == 3) {  // through a saved generation and back
            engine.save(index.path);
            engine = Engine::open(index.path);
        }
        const auto fresh = Engine::build(corpus.path, test_config());
        REQUIRE(engine.size() == fresh.size());
        REQUIRE(c.chunks == fresh.size());
        for (int t = 0; t < 5; ++t) {
            const std::string query = random_query(rng);
            INFO("query " << query);
            {
                INFO("bm25");
                require_same_ranking(ranked(engine, query, SearchMode::bm25), ranked(fresh, query, SearchMode::bm25));
            }
            {
                INFO("vector");
                require_same_ranking(ranked(engine, query, SearchMode::vector), ranked(fresh, query, SearchMode::vector));
            }
            // Hybrid fuses ranks: tied lists may rank chunks in DocId order, so compare only
            // when neither list has ties.
            if (!has_ties(ranked(fresh, query, SearchMode::bm25)) && !has_ties(ranked(fresh, query, SearchMode::vector)))
                require_same_ranking(ranked(engine, query, SearchMode::hybrid), ranked(fresh, query, SearchMode::hybrid));
        }
    }
}

TEST_CASE("a principal never sees a chunk outside its groups, before and after save/open", "[engine][access]") {
    std::mt19937 rng(42);
    ragpp_test::TempDir corpus, index;
    for (int i = 0; i < 24; ++i) write_file(corpus.path / ("n" + std::to_string(i) + ".md"), random_note(rng), i);
    auto engine = Engine::build(corpus.path, test_config());
    require_access_holds(engine, rng);
    engine.save(index.path);
    const auto reopened = Engine::open(index.path);
    REQUIRE(reopened.size() == engine.size());
    require_access_holds(reopened, rng);
    // The default principal sees exactly the unlabeled chunks, the system all of them.
    EngineQuery q;
    q.k = 100000;
    q.mode = SearchMode::vector;
    std::size_t unlabeled = 0;
    for (DocId id = 0; id < reopened.documents().retriever().store().capacity(); ++id)
        if (auto d = reopened.documents().retriever().document(id)) unlabeled += d->metadata.count("groups") == 0;
    CHECK(reopened.search("backup", q).results.size() == unlabeled);
    q.principal = Principal::system();
    CHECK(reopened.search("backup", q).results.size() == reopened.size());
    CHECK(unlabeled < reopened.size());
}

TEST_CASE("freshness: a deleted source is never served, a changed one is flagged", "[engine][freshness]") {
    ragpp_test::TempDir corpus, index;
    write_file(corpus.path / "warranty.md", "# Warranty\n\n## Reset\n\nHold the reset button for 5 seconds to reset.\n", 1);
    write_file(corpus.path / "router.md", "# Router\n\n## Reset\n\nTo reset the router hold reset for 5 seconds.\n", 2);
    for (int i = 0; i < 4; ++i)
        write_file(corpus.path / ("other" + std::to_string(i) + ".md"),
                   "# Other " + std::to_string(i) + "\n\n## Reset\n\nreset notes number " + std::to_string(i) + "\n", 3 + i);
    Engine::build(corpus.path, test_config()).save(index.path);
    fs::remove(corpus.path / "warranty.md");
    write_file(corpus.path / "router.md", "# Router\n\n## Reset\n\nTo reset the router hold reset for 8 seconds.\n", 20);

    const auto engine = Engine::open(index.path);
    EngineQuery q;
    q.k = 4;
    q.principal = Principal::system();
    const auto r = engine.search("reset seconds", q);
    REQUIRE(r.results.size() == 4);  // the next results fill k
    bool router = false;
    for (const auto& res : r.results) {
        CHECK(res.document->id.rfind("warranty.md", 0) != 0);
        const bool is_router = res.document->id.rfind("router.md", 0) == 0;
        router = router || is_router;
        CHECK(res.stale == is_router);
    }
    CHECK(router);
    CHECK(r.stale_sources == std::vector<std::string>{"router.md"});
    CHECK(r.deleted_sources == std::vector<std::string>{"warranty.md"});
    // The evidence tells the model the quoted text may be outdated (answer passes search's
    // staleness to the evidence), naming the changed file only.
    AnswerOptions ao;
    ao.min_confidence = 0;
    const auto a = engine.answer("reset seconds", q, ao);
    REQUIRE(a.answered);
    const std::string rendered = a.evidence->render();
    CHECK(rendered.find("changed after it was indexed") != std::string::npos);
    REQUIRE(a.evidence->flags.size() >= 1);
    std::size_t stale_flags = 0;
    for (const auto& f : a.evidence->flags)
        if (f.field == "stale") {
            ++stale_flags;
            CHECK(f.subject == "router.md");
        }
    CHECK(stale_flags == 1);

    // check_sources off: what the index holds, unflagged.
    q.check_sources = false;
    const auto raw = engine.search("reset seconds", q);
    CHECK(std::any_of(raw.results.begin(), raw.results.end(),
                      [](const Result& x) { return x.document->id.rfind("warranty.md", 0) == 0; }));
    CHECK(std::none_of(raw.results.begin(), raw.results.end(), [](const EngineResult& x) { return x.stale; }));
    CHECK(raw.stale_sources.empty());
}

TEST_CASE("a sync with nothing to index keeps the engine and records touched files and a moved root", "[engine][sync]") {
    // Since the diff is made before the engine is copied, a sync that adds, changes and
    // removes nothing updates the engine in place. Oracles: the counts, the same results,
    // the root moved to the synced folder (a later deletion of the old folder does not
    // flag anything, an edit in the new one is found), and the paths that re-index.
    ragpp_test::TempDir a, b;
    for (int i = 0; i < 4; ++i)
        write_file(a.path / ("note" + std::to_string(i) + ".md"),
                   "# Note " + std::to_string(i) + "\n\n## Reset\n\nreset step number " + std::to_string(i) + "\n", 1 + i);
    auto engine = Engine::build(a.path, test_config());
    EngineQuery q;
    q.k = 4;
    q.principal = Principal::system();
    const auto before = engine.search("reset step", q);
    REQUIRE(before.results.size() == 4);

    // Nothing changed: all unchanged.
    SyncCounts c = engine.sync(a.path);
    CHECK(c.added + c.changed + c.removed == 0);
    CHECK(c.unchanged == 4);
    CHECK(c.sources == 4);
    CHECK(c.chunks == engine.size());
    // Touched (same content, new mtime): still nothing to index.
    fs::last_write_time(a.path / "note1.md", fs::last_write_time(a.path / "note1.md") + std::chrono::seconds(9));
    c = engine.sync(a.path);
    CHECK(c.added + c.changed + c.removed == 0);
    CHECK(c.unchanged == 4);
    // The same files in another folder (new mtimes, same contents): unchanged, and the
    // engine now reads its sources there.
    fs::copy(a.path, b.path, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    c = engine.sync(b.path);
    CHECK(c.added + c.changed + c.removed == 0);
    CHECK(c.unchanged == 4);
    fs::remove_all(a.path);
    const auto after = engine.search("reset step", q);
    REQUIRE(after.results.size() == before.results.size());
    for (std::size_t i = 0; i < after.results.size(); ++i) {
        CHECK(after.results[i].document->id == before.results[i].document->id);
        CHECK_FALSE(after.results[i].stale);
    }
    CHECK(after.deleted_sources.empty());
    // An edit in the new folder is a change; the result equals a fresh build of it.
    write_file(b.path / "note2.md", "# Note 2\n\n## Reset\n\nreset the valve now\n", 30);
    c = engine.sync(b.path);
    CHECK(c.changed == 1);
    CHECK(c.unchanged == 3);
    const auto fresh = Engine::build(b.path, test_config());
    require_same_ranking(ranked(engine, "reset valve", SearchMode::bm25), ranked(fresh, "reset valve", SearchMode::bm25));
    // A corpus of another kind is still refused with the rebuild message.
    write_file(b.path / "c.jsonl", "{\"_id\": \"x\", \"text\": \"y\"}\n", 31);
    CHECK_THROWS_WITH(engine.sync(b.path / "c.jsonl"), Catch::Matchers::Contains("rebuild"));
}

TEST_CASE("a saved index folder: edited parts and mixed generations are refused", "[engine][save]") {
    std::mt19937 rng(7);
    ragpp_test::TempDir corpus_a, corpus_b, a, b, mixed;
    for (int i = 0; i < 6; ++i) write_file(corpus_a.path / ("a" + std::to_string(i) + ".md"), random_note(rng), i);
    for (int i = 0; i < 9; ++i) write_file(corpus_b.path / ("b" + std::to_string(i) + ".md"), random_note(rng), i);
    const auto writer_a = Engine::build(corpus_a.path, test_config());
    writer_a.save(a.path);
    Engine::build(corpus_b.path, test_config()).save(b.path);
    const auto ga = open_generation(a.path), gb = open_generation(b.path);

    SECTION("a DocId edited in places.bin, checksums valid: refused by check(), served safely by a plain open") {
        // places.bin: 36-byte header, u64 source count, then the first source: u32 length,
        // its id, u64 chunk count, u32 DocIds. Its second DocId becomes its first.
        auto bytes = ragpp_test::read_file(ga.dir / "places.bin");
        std::uint32_t len = 0;
        std::memcpy(&len, bytes.data() + 44, 4);
        const std::size_t ids = 44 + 4 + len + 8;
        std::uint64_t n = 0;
        std::memcpy(&n, bytes.data() + ids - 8, 8);
        REQUIRE(n >= 2);
        std::memcpy(bytes.data() + ids + 4, bytes.data() + ids, 4);
        write_with_checksum(ga.dir / "places.bin", bytes);
        commit_with(mixed.path, ga, "places.bin", ragpp_test::read_file(ga.dir / "places.bin"));
        CHECK_THROWS_WITH(Engine::check(mixed.path), Catch::Contains("places.bin") && Catch::Contains("is wrong"));
        // A plain open compares counts only (no per-chunk work): the forged entry is no place.
        const auto e = Engine::open(mixed.path);
        for (auto mode : {SearchMode::bm25, SearchMode::vector, SearchMode::hybrid}) CHECK(!ranked(e, "backup restore", mode).empty());
    }
    SECTION("the new parts truncated or with a forged count are refused by name") {
        for (const std::string part : {"places.bin", "metadata.bin", "sources.bin"}) {
            INFO(part);
            const auto good = ragpp_test::read_file(ga.dir / part);
            // Truncated (the generation's manifest still names the old size: open() checks it).
            std::ofstream(ga.dir / part, std::ios::binary) << good.substr(0, good.size() / 2);
            CHECK_THROWS_WITH(Engine::open(a.path), Catch::Contains(part));
            // Truncated and committed (the generation agrees): the part's own header refuses it.
            commit_with(mixed.path, ga, part, good.substr(0, good.size() - 8));
            CHECK_THROWS_WITH(Engine::open(mixed.path), Catch::Contains(part) && Catch::Contains("truncated"));
            // The first u64 of the payload (a source count, or the metadata's universe) forged,
            // the part's checksum and the generation's valid.
            auto forged = good;
            forged[36] = static_cast<char>(forged[36] + 1);
            const std::uint64_t sum = ragpp::detail::fnv1a64(forged.data() + 36, forged.size() - 36);
            std::memcpy(forged.data() + 28, &sum, 8);
            commit_with(mixed.path, ga, part, forged);
            CHECK_THROWS_WITH(Engine::open(mixed.path), Catch::Contains(part));
            std::ofstream(ga.dir / part, std::ios::binary) << good;
        }
        CHECK(Engine::open(a.path).size() == writer_a.size());
    }
    SECTION("a text edited in documents.bin: found by check() and a verifying open, not by a plain open") {
        auto bytes = ragpp_test::read_file(ga.dir / "documents.bin");
        auto at = std::string::npos;  // a letter of a word of a chunk's text (or title), near the end
        for (const auto& w : vocabulary) at = at == std::string::npos ? bytes.rfind(w) : at;
        REQUIRE(at != std::string::npos);
        bytes[at + 1] = bytes[at + 1] == 'X' ? 'Y' : 'X';
        std::ofstream(ga.dir / "documents.bin", std::ios::binary) << bytes;
        (void)Engine::open(a.path);  // sizes and structure are intact: the checksums are not computed
        CHECK_THROWS_WITH(Engine::check(a.path), Catch::Contains("documents.bin") && Catch::Contains("checksum"));
        CHECK_THROWS_AS(Engine::open(a.path, 1, OpenOptions{.mmap = false, .verify = true}), FormatError);
    }
    SECTION("a truncated documents.bin is refused by a plain open") {
        const auto bytes = ragpp_test::read_file(ga.dir / "documents.bin");
        std::ofstream(ga.dir / "documents.bin", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
        CHECK_THROWS_WITH(Engine::open(a.path), Catch::Contains("documents.bin"));
    }
    SECTION("a part copied from another generation") {
        fs::copy_file(gb.dir / "bm25.idx", ga.dir / "bm25.idx", fs::copy_options::overwrite_existing);
        CHECK_THROWS_AS(Engine::open(a.path), FormatError);
    }
    SECTION("parts of two indexes committed together, checksums valid") {
        {
            GenerationWriter w(mixed.path);
            w.write("documents.bin", ragpp_test::read_file(ga.dir / "documents.bin"));
            w.write("sources.bin", ragpp_test::read_file(ga.dir / "sources.bin"));
            w.write("bm25.idx", ragpp_test::read_file(gb.dir / "bm25.idx"));
            w.write("vector.idx", ragpp_test::read_file(ga.dir / "vector.idx"));
            w.commit(ga.info);
        }
        try {
            (void)Engine::open(mixed.path);
            FAIL("opened a mixed folder");
        } catch (const FormatError& e) {
            CHECK(std::string(e.what()).find(mixed.path.string()) != std::string::npos);
            CHECK(std::string(e.what()).find("bm25.idx") != std::string::npos);
        }
    }
    SECTION("an index of a previous version (2: documents.jsonl, 3: places read per chunk) is refused as written by an older ragpp") {
        for (const int version : {2, 3}) {
            {
                GenerationWriter w(mixed.path);
                w.write("documents.jsonl", "{}\n");
                auto info = ga.info;
                info["version"] = version;
                w.commit(info);
            }
            CHECK_THROWS_WITH(Engine::open(mixed.path), Catch::Contains("older ragpp") && Catch::Contains("rebuild"));
        }
    }
    SECTION("untouched: opens with the same chunks, mapped or read, checked or not") {
        const auto built = Engine::build(corpus_a.path, test_config());
        auto same_as_built = [&](const Engine& e) {
            CHECK(e.documents().source_count() == 6);
            CHECK(e.generation() == ga.generation);
            CHECK(e.manifest() == writer_a.manifest());  // sizes, mtimes, hashes, scan times
            CHECK(e.manifest().size() == built.manifest().size());
            for (const char* query : {"backup restore", "warranty notice"})
                for (auto mode : {SearchMode::bm25, SearchMode::vector, SearchMode::hybrid})
                    require_same_ranking(ranked(e, query, mode), ranked(built, query, mode));
        };
        same_as_built(Engine::open(a.path));
        same_as_built(Engine::open(a.path, 1, OpenOptions{}));
        same_as_built(Engine::check(a.path));
    }
}

TEST_CASE("an open engine keeps answering from its generation while the folder is re-indexed", "[engine][save]") {
    // ragpp replaces parts only by new generations (new files, renames); commits remove
    // generations older than the previous one, and unlinking a mapped file keeps its
    // inode: an engine opened (mapped) two commits ago still reads its own chunks.
    std::mt19937 rng(11);
    ragpp_test::TempDir corpus, idx;
    for (int i = 0; i < 5; ++i) write_file(corpus.path / ("n" + std::to_string(i) + ".md"), random_note(rng), i);
    Engine::build(corpus.path, test_config()).save(idx.path);
    const auto reader = Engine::open(idx.path);  // mapped
    const auto first = open_generation(idx.path);
    std::vector<Ranked> before;
    for (const char* query : {"backup restore", "warranty notice", "printer"}) before.push_back(ranked(reader, query, SearchMode::hybrid));
    std::vector<std::string> texts;
    reader.for_each_chunk([&](const Document& d) { texts.push_back(d.text); });

    // Two re-indexings of a changed corpus, each by another process: the reader's
    // generation becomes the previous one, then is removed.
    for (int round = 0; round < 2; ++round) {
        for (int i = 0; i < 5; ++i) write_file(corpus.path / ("n" + std::to_string(i) + ".md"), random_note(rng), 10 + 10 * round + i);
        const pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            int rc = 0;
            try {
                auto writer = Engine::open(idx.path);
                writer.sync(corpus.path);
                writer.save(idx.path);
            } catch (...) {
                rc = 1;
            }
            std::_Exit(rc);
        }
        int status = 0;
        REQUIRE(::waitpid(pid, &status, 0) == pid);
        REQUIRE((WIFEXITED(status) && WEXITSTATUS(status) == 0));
        CHECK(fs::exists(first.dir) == (round == 0));
    }
    CHECK(Engine::open(idx.path).generation() == first.generation + 2);
    std::size_t i = 0;
    for (const char* query : {"backup restore", "warranty notice", "printer"}) require_same_ranking(ranked(reader, query, SearchMode::hybrid), before[i++]);
    std::vector<std::string> after;
    reader.for_each_chunk([&](const Document& d) { after.push_back(d.text); });
    CHECK(after == texts);
    CHECK(reader.generation() == first.generation);
}

TEST_CASE("a .jsonl corpus is one source, re-read whole when it changed", "[engine][sync]") {
    ragpp_test::TempDir dir;
    const auto file = dir.path / "docs.jsonl";
    write_file(file,
               "{\"id\": \"d1\", \"text\": \"the router resets in 5 seconds\"}\n"
               "{\"id\": \"d2\", \"text\": \"printer toner\", \"metadata\": {\"groups\": [\"admins\"]}}\n",
               1);
    auto engine = Engine::build(file, test_config());
    CHECK(engine.size() == 2);
    CHECK(engine.documents().source_count() == 1);
    auto c = engine.sync(file);
    CHECK(c.unchanged == 1);
    CHECK(c.changed == 0);
    write_file(file,
               "{\"id\": \"d1\", \"text\": \"the router resets in 8 seconds\"}\n"
               "{\"id\": \"d3\", \"text\": \"a new document\"}\n"
               "{\"id\": \"d2\", \"text\": \"printer toner\", \"metadata\": {\"groups\": [\"admins\"]}}\n",
               2);
    EngineQuery q;
    q.k = 5;
    auto before = engine.search("router seconds", q);
    REQUIRE(!before.results.empty());
    CHECK(before.results[0].stale);
    c = engine.sync(file);
    CHECK(c.changed == 1);
    CHECK(c.chunks == 3);
    auto after = engine.search("router seconds", q);
    REQUIRE(!after.results.empty());
    CHECK(!after.results[0].stale);
    CHECK(after.results[0].document->text.find("8 seconds") != std::string::npos);
    // d2 is labeled: only admins see it.
    CHECK(engine.search("printer toner", q).results.empty());
    q.principal = Principal::with_groups({"admins"});
    CHECK(engine.search("printer toner", q).results.size() == 1);
}

/// Everything searches and the manifest show of `e`, exactly: the manifest, each source's
/// chunk DocIds, and for a few queries in every mode each result's DocId, key and score
/// (17 digits), the traces included. Without `times`, the manifest's times (mtime, scan
/// time) are left out, to compare two engines synced at different instants.
std::string observable(const Engine& e, bool times = true) {
    std::ostringstream s;
    auto manifest = e.manifest().to_json();
    if (!times)
        for (auto& source : manifest["sources"]) {
            source.erase("mtime_ns");
            source.erase("scanned_ns");
        }
    s << std::setprecision(17) << manifest.dump() << "\n" << e.size() << "\n";
    for (const auto& [source, ids] : e.documents().sources()) {
        s << source << ":";
        for (DocId id : ids) s << " " << id;
        s << "\n";
    }
    for (const char* query : {"backup restore", "router reset seconds", "printer warranty", "network cable timeout",
                              "password update"})
        for (const auto mode : {SearchMode::bm25, SearchMode::vector, SearchMode::hybrid}) {
            EngineQuery q;
            q.k = 1000;
            q.mode = mode;
            q.principal = Principal::system();
            q.check_sources = false;
            for (const auto& r : e.search(query, q).results) {
                s << r.id << " " << r.document->id << " " << r.score;
                for (const auto& t : r.trace) s << " " << (t.rank ? *t.rank : 0) << " " << (t.score ? *t.score : -1.0);
                s << "\n";
            }
        }
    return s.str();
}

TEST_CASE("a sync that fails at any step leaves the engine as it was, and a later sync succeeds", "[engine][sync]") {
    std::mt19937 rng(4);
    ragpp_test::TempDir corpus;
    int tick = 0;
    auto note = [&](int i) { return corpus.path / ((i % 3 == 0 ? "sub/" : "") + std::string("note") + std::to_string(i) + ".md"); };
    for (int i = 0; i < 8; ++i) write_file(note(i), random_note(rng), ++tick);
    auto engine = Engine::build(corpus.path, test_config());
    auto twin = Engine::build(corpus.path, test_config());  // synced once, without failures: the oracle
    // The update: 2 sources removed, 3 changed, 3 added (6 files to read and index).
    fs::remove(note(0));
    fs::remove(note(1));
    std::vector<fs::path> to_index;
    for (int i = 2; i < 5; ++i) to_index.push_back(note(i));
    for (int i = 8; i < 11; ++i) to_index.push_back(note(i));
    std::map<fs::path, std::string> text;
    for (const auto& f : to_index) {
        text[f] = random_note(rng) + "changed\n";
        write_file(f, text[f], ++tick);
    }
    const std::string before = observable(engine);
    REQUIRE(observable(engine, false) == observable(twin, false));  // built at other instants: scan times differ

    SECTION("the progress callback throws after the k-th file (as an embedder failing on a later chunk would)") {
        for (std::size_t k = 1; k <= to_index.size(); ++k) {
            INFO("failure at progress call " << k);
            std::size_t calls = 0;
            const EngineProgress fail = [&](std::string_view, std::size_t, std::size_t) {
                if (++calls == k) throw std::runtime_error("injected failure");
            };
            CHECK_THROWS_WITH(engine.sync(corpus.path, {}, fail), "injected failure");
            REQUIRE(observable(engine) == before);
        }
    }
    SECTION("a source becomes unreadable after the k-th file was read") {
        for (std::size_t k = 1; k < to_index.size(); ++k) {
            INFO("files deleted at progress call " << k);
            std::size_t calls = 0;
            const EngineProgress vanish = [&](std::string_view, std::size_t, std::size_t) {
                if (++calls == k)
                    for (const auto& f : to_index) fs::remove(f);  // those read already are indexed
            };
            CHECK_THROWS_AS(engine.sync(corpus.path, {}, vanish), IoError);
            REQUIRE(observable(engine) == before);
            for (const auto& f : to_index) write_file(f, text[f], tick);
        }
    }
    // Then the sync succeeds and leaves no trace of the failures: the engine equals the
    // twin synced once (same DocIds: the failed attempts used none), and a fresh build.
    const SyncCounts c = engine.sync(corpus.path);
    CHECK(c.added == 3);
    CHECK(c.changed == 3);
    CHECK(c.removed == 2);
    (void)twin.sync(corpus.path);
    REQUIRE(observable(engine, false) == observable(twin, false));
    const auto fresh = Engine::build(corpus.path, test_config());
    for (const char* query : {"backup restore", "router reset seconds", "printer warranty"})
        for (const auto mode : {SearchMode::bm25, SearchMode::vector})
            require_same_ranking(ranked(engine, query, mode), ranked(fresh, query, mode));
}

TEST_CASE("a failed sync of a .jsonl corpus leaves the engine as it was", "[engine][sync]") {
    ragpp_test::TempDir dir;
    const auto file = dir.path / "docs.jsonl";
    write_file(file,
               "{\"id\": \"d1\", \"text\": \"the router resets in 5 seconds\"}\n"
               "{\"id\": \"d2\", \"text\": \"printer warranty of two years\"}\n",
               1);
    auto engine = Engine::build(file, test_config());
    const std::string before = observable(engine);
    write_file(file,
               "{\"id\": \"d1\", \"text\": \"the router resets in 8 seconds\"}\n"
               "{\"id\": \"d3\", \"text\": \"backup and restore of the server\"}\n",
               2);
    // Before reading (call 1) and after the documents were replaced (call 2).
    for (std::size_t k : {1, 2}) {
        INFO("failure at progress call " << k);
        std::size_t calls = 0;
        const EngineProgress fail = [&](std::string_view, std::size_t, std::size_t) {
            if (++calls == k) throw std::runtime_error("injected failure");
        };
        CHECK_THROWS_WITH(engine.sync(file, {}, fail), "injected failure");
        REQUIRE(observable(engine) == before);
    }
    // A malformed line: ParseError, nothing changed.
    write_file(file, "{\"id\": \"d1\", \"text\": \"router\"}\n{\"id\": \"d4\"\n", 3);
    CHECK_THROWS_AS(engine.sync(file), ParseError);
    REQUIRE(observable(engine) == before);
    write_file(file, "{\"id\": \"d1\", \"text\": \"the router resets in 8 seconds\"}\n", 4);
    CHECK(engine.sync(file).changed == 1);
    CHECK(engine.size() == 1);
}

// Run by ctest as cli.scenario.library_opens, after the tool has built an index folder
// (tools/ragpp/tests/cli.cmake sets RAGPP_TOOL_INDEX): the library alone opens and searches it.
TEST_CASE("the library opens an index folder the tool built", "[.][consumer]") {
    const char* dir = std::getenv("RAGPP_TOOL_INDEX");
    REQUIRE(dir != nullptr);
    const auto engine = Engine::open(dir);
    CHECK(engine.documents().source_count() == 4);
    CHECK(engine.size() == engine.documents().chunk_count());
    EngineQuery q;
    q.k = 1;
    const auto r = engine.search("ORA-01555", q);
    REQUIRE(r.results.size() == 1);
    CHECK(r.results[0].document->id == "database.rst:4");
    CHECK(!r.results[0].stale);
}

namespace {

/// A note with front matter of every metadata kind: a string, a number, a date, groups.
std::string typed_note(std::mt19937& rng) {
    auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
    const char* types[] = {"guide", "faq", "ticket"};
    std::string text = "---\ntype: " + std::string(types[pick(3)]) + "\npriority: " + std::to_string(pick(5)) +
                       "\ndate: 2025-0" + std::to_string(1 + pick(9)) + "-1" + std::to_string(pick(10)) + "\n";
    if (const auto& g = group_choices[static_cast<std::size_t>(pick(4))]; !g.empty()) text += "groups: " + g + "\n";
    return text + "---\n" + random_note(rng).substr(0);
}

/// The ranking of `query` under each filter and principal, in every mode: `a` and `b` alike.
void require_same_filtered(const Engine& a, const Engine& b, std::mt19937& rng) {
    const char* filters[] = {"",
                             "type=guide",
                             "type in (faq, ticket)",
                             "priority>=2",
                             "priority<1 or type=faq",
                             "date>=2025-04-01, date<2025-08-15",
                             "not type=guide",
                             "groups in (admins)",
                             "section=\"x\""};
    for (const char* filter : filters)
        for (const auto& who : {Principal{}, Principal::with_groups({"sales"}), Principal::system()}) {
            const std::string query = random_query(rng);
            INFO("filter '" << filter << "', query " << query);
            EngineQuery q;
            q.k = 100000;
            q.principal = who;
            q.filter = filter;
            q.check_sources = false;
            for (auto mode : {SearchMode::bm25, SearchMode::vector}) {
                q.mode = mode;
                Ranked ra, rb;
                for (const auto& r : a.search(query, q).results) ra.emplace_back(r.document->id, r.trace[mode == SearchMode::bm25 ? 0 : 1].score.value());
                for (const auto& r : b.search(query, q).results) rb.emplace_back(r.document->id, r.trace[mode == SearchMode::bm25 ? 0 : 1].score.value());
                require_same_ranking(ra, rb);
            }
        }
}

}  // namespace

TEST_CASE("an opened folder answers filtered searches as its writer and a fresh build, also after syncs", "[engine][save]") {
    std::mt19937 rng(5);
    ragpp_test::TempDir corpus, idx;
    for (int i = 0; i < 30; ++i) write_file(corpus.path / ("t" + std::to_string(i) + ".md"), typed_note(rng), i);
    const auto writer = Engine::build(corpus.path, test_config());
    writer.save(idx.path);
    auto opened = Engine::open(idx.path);
    // Opened in place: the places and the metadata index are frozen until the first write.
    CHECK(opened.documents().frozen());
    CHECK(opened.documents().metadata().frozen());
    CHECK(opened.documents().chunk_count() == writer.documents().chunk_count());
    CHECK(opened.documents().metadata().posting_entries() == writer.documents().metadata().posting_entries());
    CHECK(opened.documents().metadata().field_count() == writer.documents().metadata().field_count());
    std::size_t filtered = 0;  // the filters select something (the comparison is not vacuous)
    for (const char* f : {"type=guide", "priority>=2", "date>=2025-04-01, date<2025-08-15"})
        filtered += opened.documents().allowed(parse_filter(f), Principal::system()).count();
    CHECK(filtered > 0);
    require_same_filtered(opened, writer, rng);
    require_same_filtered(opened, Engine::check(idx.path), rng);
    // Places: the same source, section and position for every chunk, and the same neighbours.
    for (DocId id = 0; id < writer.documents().retriever().store().capacity(); ++id) {
        const auto p = writer.documents().place(id), q = opened.documents().place(id);
        REQUIRE(p.has_value() == q.has_value());
        if (!p) continue;
        CHECK(p->source == q->source);
        CHECK(p->section == q->section);
        CHECK(p->position == q->position);
        CHECK(writer.documents().section_of(id, 3) == opened.documents().section_of(id, 3));
        CHECK(writer.documents().neighbours(id, 2) == opened.documents().neighbours(id, 2));
    }

    // Syncs after open (the first write thaws) equal a fresh build, saved and opened again.
    for (int round = 0; round < 3; ++round) {
        INFO("round " << round);
        for (int i = 0; i < 4; ++i)
            write_file(corpus.path / ("t" + std::to_string(std::uniform_int_distribution<int>(0, 35)(rng)) + ".md"), typed_note(rng),
                       100 + 10 * round + i);
        fs::remove(corpus.path / ("t" + std::to_string(round) + ".md"));
        opened.sync(corpus.path);
        CHECK_FALSE(opened.documents().frozen());
        const auto fresh = Engine::build(corpus.path, test_config());
        require_same_filtered(opened, fresh, rng);
        opened.save(idx.path);
        opened = Engine::open(idx.path);
        require_same_filtered(opened, fresh, rng);
    }
    // An unchanged sync keeps the engine frozen; its save writes the same parts.
    (void)opened.sync(corpus.path);
    CHECK(opened.documents().frozen());
    const auto before = open_generation(idx.path);
    opened.save(idx.path);
    const auto after = open_generation(idx.path);
    for (const char* part : {"places.bin", "metadata.bin"})
        CHECK(ragpp_test::read_file(before.dir / part) == ragpp_test::read_file(after.dir / part));
}

TEST_CASE("eval's confidence is ask's, question by question, and rankings are prefix-stable", "[engine][answer]") {
    ragpp_test::TempDir corpus;
    std::mt19937 rng(42);
    for (int i = 0; i < 40; ++i) write_file(corpus.path / ("n" + std::to_string(i) + ".md"), random_note(rng), i);
    const auto e = Engine::build(corpus.path, EngineConfig{});
    QuestionSet qs;
    std::size_t id = 0;
    auto word = [&] { return vocabulary[std::uniform_int_distribution<std::size_t>(0, vocabulary.size() - 1)(rng)]; };
    for (int i = 0; i < 30; ++i) qs.push_back({"q" + std::to_string(id++), word() + " " + word() + " " + word(), {}, {}, {}});
    for (int i = 0; i < 15; ++i) qs.push_back({"q" + std::to_string(id++), word() + " quux" + std::to_string(i) + " zebra", {}, {}, {}});
    const auto admins = Principal::with_groups({"admins"});
    std::size_t answered = 0, refused = 0;
    for (auto mode : {SearchMode::bm25, SearchMode::hybrid})
        for (const std::string reranker : {"none", "proximity"})
            for (const auto& principal : {Principal{}, admins}) {
                EvaluationOptions o;
                o.mode = mode;
                o.reranker = reranker;
                o.principal = principal;
                const auto report = e.evaluate(qs, o);
                for (std::size_t i = 0; i < qs.size(); ++i) {
                    EngineQuery q;
                    q.k = o.answer.passages;
                    q.mode = mode;
                    q.reranker = reranker;
                    q.principal = principal;
                    const auto a = e.answer(qs[i].text, q);
                    REQUIRE(report.outcomes()[i].confidence);
                    CHECK(*report.outcomes()[i].confidence == a.confidence);
                    (a.answered ? answered : refused) += 1;
                    // search's first k are the start of a deeper search.
                    q.k = 3;
                    const auto short_list = e.search(qs[i].text, q).results;
                    q.k = 60;
                    const auto long_list = e.search(qs[i].text, q).results;
                    REQUIRE(short_list.size() <= long_list.size());
                    for (std::size_t r = 0; r < short_list.size(); ++r) CHECK(short_list[r].id == long_list[r].id);
                }
            }
    // Both decisions occur: the test compares something.
    CHECK(answered > 20);
    CHECK(refused > 20);
}

TEST_CASE("the confidence's statistics are the reader's: notes it cannot read change nothing", "[engine][answer][access]") {
    ragpp_test::TempDir a, b;
    std::mt19937 rng(5);
    for (int i = 0; i < 20; ++i) {
        auto text = random_note(rng);
        if (text.rfind("---", 0) == 0) text = text.substr(text.find("---\n", 4) + 4);  // public notes only
        write_file(a.path / ("p" + std::to_string(i) + ".md"), text, i);
        write_file(b.path / ("p" + std::to_string(i) + ".md"), text, i);
    }
    // Only in a: notes for hr, with words found nowhere else.
    for (int i = 0; i < 6; ++i)
        write_file(a.path / ("hr" + std::to_string(i) + ".md"),
                   "---\ngroups: [hr]\n---\n# Salaries\n\n## Codename\n\nsalary 210000 codename bluefalcon " +
                       random_note(rng).substr(0, 0) + vocabulary[static_cast<std::size_t>(i)] + "\n",
                   100 + i);
    const auto ea = Engine::build(a.path, EngineConfig{});
    const auto eb = Engine::build(b.path, EngineConfig{});
    const Principal reader;  // no group: the public notes only
    const auto sa = ea.term_statistics(reader), sb = eb.term_statistics(reader);
    CHECK(sa.documents == sb.documents);
    CHECK(sa.documents == eb.size());
    std::vector<std::string> words = vocabulary;
    for (const std::string w : {"salari", "210000", "codenam", "bluefalcon", "quux"}) words.push_back(w);
    for (const auto& w : words) CHECK(sa.document_frequency(w) == sb.document_frequency(w));
    // The hidden words are unknown to the reader, known to hr.
    CHECK(sa.document_frequency("bluefalcon") == 0);
    CHECK(ea.term_statistics(Principal::with_groups({"hr"})).document_frequency("bluefalcon") == 6);
    CHECK(ea.term_statistics(Principal::system()).documents == ea.size());
    // So the coverage of a question on the same passages is the same, and the refusal
    // names the same unknown words.
    for (const std::string q : {"salary 210000 bluefalcon", "password reset codename", "router warranty notice"}) {
        EngineQuery eq;
        const auto ra = ea.answer(q, eq), rb = eb.answer(q, eq);
        CHECK(ra.coverage.unknown == rb.coverage.unknown);
        if (ra.passages.size() == rb.passages.size() &&
            std::equal(ra.passages.begin(), ra.passages.end(), rb.passages.begin(),
                       [](const Result& x, const Result& y) { return x.document->id == y.document->id; }))
            CHECK(ra.confidence == rb.confidence);
    }
}

TEST_CASE("non-interference: notes a reader cannot read change nothing it sees", "[engine][access][noninterference]") {
    // Corpus a = corpus b + notes for hr and for admins, written with the same words.
    ragpp_test::TempDir a, b;
    std::mt19937 rng(11);
    auto public_note = [&] {
        auto text = random_note(rng);
        return text.rfind("---", 0) == 0 ? text.substr(text.find("---\n", 4) + 4) : text;
    };
    int tick = 0;
    for (int i = 0; i < 30; ++i) {
        const auto text = public_note();
        const auto name = "n" + std::to_string(i) + ".md";
        write_file(a.path / name, text, ++tick);
        write_file(b.path / name, text, tick);
    }
    // Some public notes for sales, in both: a reader with sales reads them in both.
    for (int i = 0; i < 5; ++i) {
        const auto text = "---\ngroups: [sales]\n---\n" + public_note();
        write_file(a.path / ("s" + std::to_string(i) + ".md"), text, ++tick);
        write_file(b.path / ("s" + std::to_string(i) + ".md"), text, tick);
    }
    for (int i = 0; i < 12; ++i)
        write_file(a.path / ("h" + std::to_string(i) + ".md"),
                   "---\ngroups: [" + std::string(i % 2 ? "hr" : "hr, admins") + "]\n---\n" + public_note() +
                       "\nsalary 210000 codename bluefalcon " + vocabulary[static_cast<std::size_t>(i)] + "\n",
                   ++tick);
    const auto ea = Engine::build(a.path, EngineConfig{});
    const auto eb = Engine::build(b.path, EngineConfig{});
    REQUIRE(ea.size() > eb.size());

    std::vector<std::string> queries;
    auto word = [&] { return vocabulary[std::uniform_int_distribution<std::size_t>(0, vocabulary.size() - 1)(rng)]; };
    for (int i = 0; i < 60; ++i) queries.push_back(word() + " " + word() + (i % 3 ? " " + word() : std::string()));
    for (int i = 0; i < 20; ++i) queries.push_back(word() + " salary 210000 bluefalcon");  // the hidden notes' words
    auto same_results = [](const std::vector<EngineResult>& x, const std::vector<EngineResult>& y) {
        if (x.size() != y.size()) return false;
        for (std::size_t i = 0; i < x.size(); ++i) {
            if (x[i].document->id != y[i].document->id || x[i].score != y[i].score) return false;
            for (std::size_t l = 0; l < x[i].trace.size(); ++l)
                if (x[i].trace[l].rank != y[i].trace[l].rank || x[i].trace[l].score != y[i].trace[l].score) return false;
        }
        return true;
    };
    std::size_t compared = 0, differ_for_all = 0;
    for (const auto& reader : {Principal{}, Principal::with_groups({"sales"})})
        for (auto mode : {SearchMode::bm25, SearchMode::hybrid})
            for (const auto& q : queries) {
                EngineQuery eq;
                eq.k = 10;
                eq.mode = mode;
                eq.principal = reader;
                // Every third query reranked: the lexical rerankers' idf is the reader's too.
                if (&q - queries.data() == 0 || (&q - queries.data()) % 3 == 1) eq.reranker = "proximity";
                if ((&q - queries.data()) % 3 == 2) eq.reranker = "softmatch";
                INFO("query '" << q << "', mode " << search_mode_name(mode) << ", groups " << reader.groups.size());
                {
                    const auto ra = ea.search(q, eq).results, rb = eb.search(q, eq).results;
                    if (!same_results(ra, rb))
                        for (std::size_t i = 0; i < std::max(ra.size(), rb.size()); ++i)
                            UNSCOPED_INFO(i << ": " << (i < ra.size() ? ra[i].document->id : "-") << " "
                                            << std::setprecision(17) << (i < ra.size() ? ra[i].trace[1].score.value_or(-9) : 0) << " "
                                            << (i < ra.size() ? ra[i].trace[1].rank.value_or(0) : 0) << " | "
                                            << (i < rb.size() ? rb[i].document->id : "-") << " "
                                            << (i < rb.size() ? rb[i].trace[1].score.value_or(-9) : 0) << " "
                                            << (i < rb.size() ? rb[i].trace[1].rank.value_or(0) : 0));
                    CHECK(same_results(ra, rb));
                }
                AnswerOptions ao;
                ao.evidence.nonce_mode = NonceMode::content_hash;
                eq.k = 5;
                const auto x = ea.answer(q, eq, ao), y = eb.answer(q, eq, ao);
                CHECK(x.confidence == y.confidence);
                CHECK(x.answered == y.answered);
                CHECK(x.reasons == y.reasons);
                CHECK(x.coverage.missing == y.coverage.missing);
                CHECK((x.evidence ? x.evidence->render() : "") == (y.evidence ? y.evidence->render() : ""));
                ++compared;
                // The test can fail: for a reader that reads everything, the corpora differ.
                eq.principal = Principal::system();
                eq.reranker = "none";
                eq.k = 10;
                if (!same_results(ea.search(q, eq).results, eb.search(q, eq).results)) ++differ_for_all;
            }
    CHECK(compared == 2 * 2 * queries.size());
    CHECK(differ_for_all > compared / 2);
    // eval: the same outcomes, question by question.
    QuestionSet qs;
    for (std::size_t i = 0; i < queries.size(); ++i) qs.push_back({"q" + std::to_string(i), queries[i], {}, {}, {}});
    for (const auto& reader : {Principal{}, Principal::with_groups({"sales"})}) {
        EvaluationOptions o;
        o.principal = reader;
        const auto ra = ea.evaluate(qs, o), rb = eb.evaluate(qs, o);
        for (std::size_t i = 0; i < qs.size(); ++i) {
            CHECK(ra.outcomes()[i].ranking == rb.outcomes()[i].ranking);
            CHECK(ra.outcomes()[i].scores == rb.outcomes()[i].scores);
            CHECK(ra.outcomes()[i].confidence == rb.outcomes()[i].confidence);
        }
    }
    // A reader with hr sees the hidden notes' words; its statistics are its own.
    CHECK(ea.term_statistics(Principal::with_groups({"hr"})).document_frequency("bluefalcon") == 12);
}

TEST_CASE("engine: files not UTF-8 past 8 KiB are left out, locked notes listed, unlabeled saved", "[engine][walk]") {
    ragpp_test::TempDir corpus, idx;
    write_file(corpus.path / "pub.md", "# Pub\n\nThe public price is ten.\n", 1);
    write_file(corpus.path / "slip.md", "---\nGroups: [hr]\n---\n# Pay\n\nThe salary codeword is kilo.\n", 2);
    write_file(corpus.path / "late.md", "# Late\n\n" + std::string(9000, 'a') + " caf\xE9\n", 3);  // the walk keeps it
    write_file(corpus.path / ".trash" / "old.md", "The old price is ninety.\n", 4);
    auto engine = Engine::build(corpus.path, test_config());
    CHECK(engine.manifest().size() == 2);  // pub.md, slip.md
    std::vector<std::string> skipped;
    for (const auto& s : engine.skipped()) skipped.push_back(s.path + " " + std::string(skip_reason_name(s.reason)) + " " + s.detail);
    CHECK(skipped == std::vector<std::string>{".trash hidden ", "late.md not UTF-8 line 3, byte 0xE9"});
    const auto locked = engine.locked_sources();
    REQUIRE(locked.size() == 1);
    CHECK(locked[0].first == "slip.md");
    CHECK_THAT(locked[0].second, Catch::Contains("slip.md") && Catch::Contains("'Groups'"));
    auto found = [&](const Engine& e, const Principal& who, const char* query) {
        EngineQuery q;
        q.k = 10;
        q.principal = who;
        std::vector<std::string> ids;
        for (const auto& r : e.search(query, q).results) ids.push_back(r.document->id);
        return ids;
    };
    CHECK(found(engine, Principal{}, "salary codeword kilo").empty());
    CHECK(found(engine, Principal::with_groups({"hr"}), "salary codeword kilo").empty());
    CHECK(found(engine, Principal::system(), "salary codeword kilo") == std::vector<std::string>{"slip.md:4"});
    CHECK(found(engine, Principal{}, "public price") == std::vector<std::string>{"pub.md:1"});
    // A file indexed once, then made invalid past 8 KiB: removed by the sync, not an error.
    write_file(corpus.path / "pub.md", "# Pub\n\n" + std::string(9000, 'b') + "\xFF\n", 5);
    const auto counts = engine.sync(corpus.path);
    CHECK(counts.changed == 0);
    CHECK(counts.removed == 1);
    CHECK(engine.manifest().size() == 1);
    CHECK(found(engine, Principal::system(), "public price").empty());

    // --unlabelled private: saved with the index, and part of the index settings.
    EngineConfig c = test_config();
    c.unlabeled = Unlabeled::deny;
    write_file(corpus.path / "pub.md", "# Pub\n\nThe public price is ten.\n", 6);
    Engine::build(corpus.path, c).save(idx.path);
    const auto opened = Engine::open(idx.path);
    CHECK(opened.config().unlabeled == Unlabeled::deny);
    CHECK(found(opened, Principal{}, "public price").empty());
    CHECK(found(opened, Principal::with_groups({"hr"}), "public price").empty());
    CHECK(found(opened, Principal::system(), "public price") == std::vector<std::string>{"pub.md:1"});
    CHECK_FALSE(same_index_settings(c, test_config()));
    CHECK(Engine::config_to_json(c).at("unlabeled") == "private");
    auto j = Engine::config_to_json(test_config());
    CHECK(j.at("unlabeled") == "public");
    j.erase("unlabeled");  // an index written before the setting: public, as then
    CHECK(Engine::config_from_json(j).unlabeled == Unlabeled::allow);
    j["unlabeled"] = "secret";
    CHECK_THROWS_WITH(Engine::config_from_json(j), Catch::Contains("unlabeled must be public or private"));
}

// --- the evaluation run (engine/evaluation_run.hpp): what `ragpp eval` runs ---

namespace {

/// Three notes, one chunk each: two public, one for admins only.
void write_eval_corpus(const fs::path& dir) {
    write_file(dir / "backup.md", "# Backups\n\nThe backup runs every night at two.\n", 1);
    write_file(dir / "router.md", "# Router\n\nHold the router button to reset it.\n", 2);
    write_file(dir / "secret.md", "---\ngroups: [admins]\n---\n# Salaries\n\nThe salary codename is bluefalcon.\n", 3);
}

std::vector<std::string> names_of(const std::vector<PipelineReport>& reports) {
    std::vector<std::string> out;
    for (const auto& r : reports) out.push_back(r.name());
    return out;
}

}  // namespace

TEST_CASE("evaluation run: the default pipelines, their names, and the plan's mistakes", "[engine][eval]") {
    EngineConfig c;  // the hashing embedder: bm25 first
    EvaluationPlan plan;
    auto names = [&](const EngineConfig& config) {
        std::vector<std::string> out;
        for (const auto& o : evaluation_pipelines(plan, config)) out.push_back(o.name);
        return out;
    };
    CHECK(names(c) == std::vector<std::string>{"bm25", "vector", "hybrid"});
    EngineConfig semantic = c;
    semantic.embedder = "model2vec:some-model";  // a semantic embedder: hybrid first
    CHECK(names(semantic) == std::vector<std::string>{"hybrid", "bm25", "vector"});
    plan.pipelines = {{SearchMode::bm25, {}}, {SearchMode::hybrid, {1.0, 0.5}}};
    plan.rerankers = {"none", "proximity"};
    CHECK(names(c) == std::vector<std::string>{"bm25", "bm25+proximity", "hybrid(1,0.5)", "hybrid(1,0.5)+proximity"});
    const auto options = evaluation_pipelines(plan, c);
    CHECK(options[3].reranker == "proximity");
    CHECK(options[3].weights == std::vector<double>{1.0, 0.5});
    CHECK(options[0].depth == c.search.candidates);

    // Mistakes of the plan, before any work.
    plan.rerankers.clear();
    plan.pipelines = {{SearchMode::bm25, {}}, {SearchMode::bm25, {}}};
    CHECK_THROWS_AS(evaluation_pipelines(plan, c), InvalidArgument);
    plan.pipelines = {{SearchMode::hybrid, {}}, {SearchMode::hybrid, {1.0, 1.0}}};  // the same weights as the config's
    CHECK_THROWS_WITH(evaluation_pipelines(plan, c), Catch::Contains("pipeline 'hybrid' given twice"));
    plan.pipelines = {{SearchMode::bm25, {}}};
    TrecRun run;
    run.source = "other.run";
    run.tag = "other";
    plan.runs = {run, run};  // the second is named by its file: "run:other", "run:other.run"
    CHECK(evaluation_pipelines(plan, c).size() == 1);
    plan.runs = {run, run, run};
    CHECK_THROWS_WITH(evaluation_pipelines(plan, c), Catch::Contains("run 'other.run' given twice"));
    plan.runs.clear();
    plan.passages = 0;
    CHECK_THROWS_AS(evaluation_pipelines(plan, c), InvalidArgument);
    plan.passages = 1;
    plan.ks = {0, 3};
    CHECK_THROWS_AS(evaluation_pipelines(plan, c), InvalidArgument);
    plan.ks = {3};
    plan.target_precision = 0;
    CHECK_THROWS_AS(evaluation_pipelines(plan, c), InvalidArgument);
    plan.target_precision = 0.9;
    plan.rerankers = {"cross"};
    CHECK_THROWS_AS(evaluation_pipelines(plan, c), InvalidArgument);

    CHECK(corpus_label_prefixes("a/b/notes") == std::vector<std::string>{"a/b/notes/", "b/notes/", "notes/"});
}

TEST_CASE("evaluation run: labels resolved, unmatched and hidden, a TREC run as a row, figures by hand", "[engine][eval]") {
    ragpp_test::TempDir corpus;
    write_eval_corpus(corpus.path);
    const auto e = Engine::build(corpus.path, test_config());
    QuestionSet qs;
    qs.push_back({"q1", "backup every night", {{"backup.md", 1.0}}, std::string("every night at two"), {}});
    qs.push_back({"q2", "salary codename", {{"secret.md", 1.0}, {"nowhere.md", 1.0}}, {}, {}});
    qs.push_back({"q3", "capital of peru", {}, {}, {}});  // unanswerable

    EvaluationPlan plan;
    plan.ks = {2, 1};
    plan.passages = 1;
    std::ostringstream text;
    text << "q1 Q0 ghost.md:1 1 2.0 other\nq1 Q0 backup.md:1 2 1.0 other\nzzz Q0 router.md:1 1 1.0 other\n";
    std::istringstream in(text.str());
    plan.runs.push_back(parse_trec_run(in, "other.run"));
    std::vector<std::string> stages;
    plan.progress = [&](std::string_view stage, std::size_t done, std::size_t total) {
        CHECK(total == 3);
        if (done == 0) stages.emplace_back(stage);
    };
    const auto r = run_evaluation(e, qs, plan);

    CHECK(r.default_pipelines);
    CHECK(r.default_mode == SearchMode::bm25);
    CHECK(names_of(r.pipelines) == std::vector<std::string>{"bm25", "vector", "hybrid"});
    CHECK(names_of(r.rows) == std::vector<std::string>{"bm25", "vector", "hybrid", "run:other"});
    CHECK(r.pipeline_files == std::vector<std::string>{"bm25", "vector", "hybrid"});
    CHECK(stages == std::vector<std::string>{"evaluating bm25", "evaluating vector", "evaluating hybrid"});
    CHECK(r.ks == std::vector<std::size_t>{1, 2});
    // The reader without groups reads two chunks; secret.md's label can only be missed.
    CHECK(r.readable_chunks == 2);
    CHECK(r.labels.labels == 3);
    CHECK(r.labels.unmatched == std::vector<std::string>{"nowhere.md"});
    CHECK(r.hidden_labels == std::vector<std::string>{"secret.md"});
    // One answer, and it occurs in what the reader reads.
    CHECK(r.has_answers);
    CHECK(r.with_answer == 1);
    CHECK(r.answers_in_corpus == 1);
    // The run: ghost.md:1 and router.md:1 under an unknown query; ghost.md:1 is no chunk.
    REQUIRE(r.runs.size() == 1);
    CHECK(r.runs[0].name == "run:other");
    CHECK(r.runs[0].lines == 3);
    CHECK(r.runs[0].unknown_docnos == 1);
    CHECK(r.runs[0].unknown_docno_example == "ghost.md:1");
    CHECK(r.runs[0].unknown_queries == std::vector<std::string>{"zzz"});
    CHECK(r.runs[0].questions_missing == 1);  // q2
    // By hand: two answerable questions. bm25 finds backup.md first for q1 and can never
    // reach q2's labels (one hidden, one nowhere): recall@1 = (1 + 0) / 2. The run ranks
    // backup.md second for q1 and has no line for q2: recall@1 = 0, recall@2 = 1/2,
    // MRR = (1/2 + 0) / 2.
    const auto& bm25 = r.rows[0];
    CHECK(bm25.summary(Measure::recall, 1).questions == 2);
    CHECK(bm25.summary(Measure::recall, 1).mean == Approx(0.5));
    const auto& other = r.rows[3];
    CHECK(other.summary(Measure::recall, 1).mean == Approx(0.0));
    CHECK(other.summary(Measure::recall, 2).mean == Approx(0.5));
    CHECK(other.summary(Measure::mrr, no_cutoff).mean == Approx(0.25));
    // Answerable and unanswerable questions: one abstention per pipeline.
    CHECK(r.answerable == 2);
    CHECK(r.unanswerable == 1);
    CHECK(r.abstention.size() == 3);
    // The JSON of ragpp eval --json.
    const auto j = r.to_json();
    CHECK(j["pipelines"].size() == 4);
    CHECK(j["runs"][0]["unknown_docnos"] == 1);
    CHECK(j["runs"][0]["match"] == "chunk");
    CHECK(j["answers_in_corpus"]["occurring"] == 1);

    // An admin reads secret.md: nothing hidden, three chunks.
    plan.principal = Principal::with_groups({"admins"});
    plan.runs.clear();
    plan.pipelines = {{SearchMode::bm25, {}}};
    plan.progress = {};
    const auto admin = run_evaluation(e, qs, plan);
    CHECK(admin.readable_chunks == 3);
    CHECK(admin.hidden_labels.empty());
    CHECK_FALSE(admin.default_pipelines);
    CHECK(admin.rows.size() == 1);
    CHECK(admin.rows[0].summary(Measure::recall, 2).mean == Approx(0.75));  // q2: secret.md of its two labels

    // Labels written from the corpus's parent match with its prefixes; none matching is an error.
    QuestionSet from_parent{{"q1", "backup every night", {{"notes/backup.md", 1.0}}, {}, {}}};
    plan.corpus_prefixes = corpus_label_prefixes("data/notes");
    const auto resolved = run_evaluation(e, from_parent, plan);
    CHECK(resolved.labels.resolved == 1);
    CHECK(resolved.questions[0].relevant.count("backup.md") == 1);
    plan.corpus_prefixes.clear();
    plan.questions_name = "set.json";
    CHECK_THROWS_AS(run_evaluation(e, from_parent, plan), NotFoundError);
    CHECK_THROWS_WITH(run_evaluation(e, from_parent, plan), Catch::Contains("question set 'set.json': none of its 1"));
    CHECK_THROWS_AS(run_evaluation(e, QuestionSet{}, plan), InvalidArgument);
}

namespace {

/// index_folder's options of the tests: the test configuration's analyzer and embedder.
IndexFolderOptions folder_options() {
    IndexFolderOptions o;
    o.settings.analyzer = "english";
    o.settings.embedder = "hashing:64";
    return o;
}

/// The folder's current generation number (0 when it holds none).
std::uint64_t current_generation(const fs::path& dir) {
    try {
        return open_generation(dir).generation;
    } catch (const NotFoundError&) {
        return 0;
    }
}

}  // namespace

TEST_CASE("index_folder: build, then updates that equal a fresh build, counted by source", "[engine][index_folder]") {
    std::mt19937 rng(31);
    ragpp_test::TempDir corpus, tmp;
    const fs::path out = tmp.path / "idx";
    for (int i = 0; i < 4; ++i) write_file(corpus.path / ("n" + std::to_string(i) + ".md"), random_note(rng), i);

    std::vector<IndexAction> decided;
    auto o = folder_options();
    o.decided = [&](const IndexFolderReport& r) {
        decided.push_back(r.action);
        CHECK(r.generation == 0);  // called before the work
    };
    const auto first = index_folder(corpus.path, out, o);
    CHECK(first.action == IndexAction::built);
    CHECK(first.reason.empty());
    CHECK(first.generation == 1);
    CHECK(first.files);
    CHECK(first.counts.added == 4);
    CHECK(first.counts.sources == 4);
    CHECK(first.counts.chunks == Engine::open(out).size());
    CHECK(first.config.analyzer == "english");
    CHECK(first.config.embedder == "hashing:64");

    // Nothing changed, and no setting given: the saved ones are kept, nothing re-read.
    const auto second = index_folder(corpus.path, out, {});
    CHECK(second.action == IndexAction::updated);
    CHECK(second.generation == 2);
    CHECK(second.counts.unchanged == 4);
    CHECK(second.counts.added + second.counts.changed + second.counts.removed == 0);
    CHECK(second.config.analyzer == "english");
    CHECK(second.config.embedder == "hashing:64");

    // One file edited, one deleted, one added.
    write_file(corpus.path / "n0.md", random_note(rng), 100);
    fs::remove(corpus.path / "n1.md");
    write_file(corpus.path / "new.md", random_note(rng), 101);
    const auto third = index_folder(corpus.path, out, o);
    CHECK(third.action == IndexAction::updated);
    CHECK(third.counts.added == 1);
    CHECK(third.counts.changed == 1);
    CHECK(third.counts.removed == 1);
    CHECK(third.counts.unchanged == 2);
    CHECK(third.counts.sources == 4);
    CHECK(decided == std::vector<IndexAction>{IndexAction::built, IndexAction::updated});  // o's calls only

    // The oracle: the updated folder ranks as a fresh build of the corpus does.
    const auto opened = Engine::open(out);
    const auto fresh = Engine::build(corpus.path, test_config());
    CHECK(opened.size() == fresh.size());
    for (int t = 0; t < 10; ++t) {
        const std::string query = random_query(rng);
        INFO(query);
        require_same_ranking(ranked(opened, query, SearchMode::bm25), ranked(fresh, query, SearchMode::bm25));
        require_same_ranking(ranked(opened, query, SearchMode::vector), ranked(fresh, query, SearchMode::vector));
    }

    // --rebuild: built anew although the folder could be updated.
    auto again = folder_options();
    again.rebuild = true;
    const auto fourth = index_folder(corpus.path, out, again);
    CHECK(fourth.action == IndexAction::built);
    CHECK(fourth.counts.added == 4);
    CHECK(fourth.generation == 4);
}

TEST_CASE("index_folder: an update without walk options walks as the index was walked", "[engine][index_folder]") {
    std::mt19937 rng(37);
    ragpp_test::TempDir corpus, tmp;
    const fs::path out = tmp.path / "idx";
    write_file(corpus.path / "seen.md", random_note(rng), 0);
    write_file(corpus.path / ".hidden" / "kept.md", random_note(rng), 1);
    auto o = folder_options();
    o.corpus = CorpusOptions{};
    o.corpus->hidden = true;
    REQUIRE(index_folder(corpus.path, out, o).counts.sources == 2);
    CHECK(Engine::open(out).corpus_options().hidden);

    // Unset: the recorded walk (hidden files still walked); nothing removed.
    const auto same = index_folder(corpus.path, out, {});
    CHECK(same.counts.unchanged == 2);
    CHECK(same.counts.removed == 0);
    // Set: walked as given, and recorded in turn.
    IndexFolderOptions plain;
    plain.corpus = CorpusOptions{};
    const auto narrower = index_folder(corpus.path, out, plain);
    CHECK(narrower.counts.removed == 1);
    CHECK(narrower.counts.unchanged == 1);
    CHECK_FALSE(Engine::open(out).corpus_options().hidden);
    CHECK(index_folder(corpus.path, out, {}).counts.unchanged == 1);
}

TEST_CASE("index_folder: another setting rebuilds and names it, a damaged folder is rebuilt, leftovers go",
          "[engine][index_folder]") {
    std::mt19937 rng(32);
    ragpp_test::TempDir corpus, tmp;
    const fs::path out = tmp.path / "idx";
    for (int i = 0; i < 3; ++i) write_file(corpus.path / ("n" + std::to_string(i) + ".md"), random_note(rng), i);
    REQUIRE(index_folder(corpus.path, out, folder_options()).action == IndexAction::built);

    SECTION("settings") {
        IndexFolderOptions o;
        o.settings.analyzer = "standard";
        o.settings.unlabeled = Unlabeled::deny;
        std::string said;
        o.decided = [&](const IndexFolderReport& r) { said = r.reason; };
        const auto r = index_folder(corpus.path, out, o);
        CHECK(r.action == IndexAction::rebuilt_settings);
        CHECK(r.reason == "--analyzer english -> standard, --unlabelled public -> private");
        CHECK(said == r.reason);
        CHECK(r.counts.added == 3);
        CHECK(r.config.analyzer == "standard");
        CHECK(r.config.embedder == "hashing:64");  // not given: the saved one
        CHECK(Engine::open(out).config().unlabeled == Unlabeled::deny);

        // An overlap alone is read against the index's max_tokens: 350 < 400 asks for a
        // rebuild; 500 is refused before anything is written.
        IndexFolderOptions overlap;
        overlap.settings.overlap = 350;
        const auto r2 = index_folder(corpus.path, out, overlap);
        CHECK(r2.action == IndexAction::rebuilt_settings);
        CHECK(r2.reason == "--overlap default(60) -> 350");
        overlap.settings.overlap = 500;
        const auto before = current_generation(out);
        CHECK_THROWS_AS(index_folder(corpus.path, out, overlap), IndexRequestError);
        CHECK_THROWS_WITH(index_folder(corpus.path, out, overlap),
                          Catch::Contains("overlap 500 must be smaller than max_tokens 400"));
        CHECK(current_generation(out) == before);
        // max_tokens given without overlap resets it to its default.
        IndexFolderOptions bigger;
        bigger.settings.max_tokens = 1000;
        const auto r3 = index_folder(corpus.path, out, bigger);
        CHECK(r3.reason == "--max-tokens 400 -> 1000, --overlap 350 -> default(150)");
        CHECK(!r3.config.overlap);
    }
    SECTION("a damaged generation") {
        const auto g = open_generation(out);
        const auto bytes = ragpp_test::read_file(g.dir / "bm25.idx");
        std::ofstream(g.dir / "bm25.idx", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
        const auto r = index_folder(corpus.path, out, {});
        CHECK(r.action == IndexAction::rebuilt_unreadable);
        CHECK_THAT(r.reason, Catch::Contains("bm25.idx"));
        // The settings of a folder that cannot be read are not known: the defaults, or the given ones.
        CHECK(r.config.analyzer == "multilingual");
        CHECK_NOTHROW(Engine::check(out));
    }
    SECTION("what a killed run left is removed") {
        fs::create_directories(out / "gen-99.partial");
        std::ofstream(out / "gen-99.partial" / "bm25.idx") << "half";
        CHECK(index_folder(corpus.path, out, {}).action == IndexAction::updated);
        CHECK(!fs::exists(out / "gen-99.partial"));
    }
}

TEST_CASE("index_folder: mistakes of the request are refused before anything is written", "[engine][index_folder]") {
    ragpp_test::TempDir corpus, tmp;
    write_file(corpus.path / "a.md", "# A\n\nbackup restore\n", 1);
    const auto refused = [&](const fs::path& out, const IndexFolderOptions& o, const std::string& says) {
        INFO(out << ": " << says);
        CHECK_THROWS_AS(index_folder(corpus.path, out, o), IndexRequestError);
        CHECK_THROWS_WITH(index_folder(corpus.path, out, o), Catch::Contains(says));
        CHECK(!fs::exists(out / "CURRENT"));
    };
    refused(corpus.path, {}, "is the corpus folder");
    refused(corpus.path / "sub" / "idx", {}, "is inside the corpus folder");
    CHECK(!fs::exists(corpus.path / "sub"));
    refused(corpus.path / "." / ".ragpp", {}, "is inside the corpus folder");
    const fs::path out = tmp.path / "idx";
    IndexFolderOptions o;
    o.settings.analyzer = "klingon";
    refused(out, o, "klingon");
    o = {};
    o.settings.embedder = "word2vec";
    refused(out, o, "embedder 'word2vec' is not hashing, hashing:DIM");
    o.settings.embedder = "hashing:0";
    refused(out, o, "hashing:DIM needs a dimension from 1 to 999999");
    o.settings.embedder = "hashing:x1";
    refused(out, o, "hashing:DIM");
    // The BM25 variant and the quantization are typed (BM25Variant, TransformerQuantization):
    // a wrong name is refused where it is parsed (the tool's --variant, an index's config.json).
    CHECK_THROWS_WITH(ragpp::parse_bm25_variant("bm26"), Catch::Contains("bm26"));
    CHECK_THROWS_WITH(ragpp::parse_transformer_quantization("int4"), Catch::Contains("quantize must be none or int8"));
    o = {};
    o.settings.max_tokens = 10;
    o.settings.overlap = 10;
    refused(out, o, "overlap 10 must be smaller than max_tokens 10");
    CHECK(!fs::exists(out));
    // A .jsonl corpus is not walked: an index beside it, in its folder, is fine.
    std::ofstream(corpus.path / "docs.jsonl") << R"({"id": "d1", "text": "backup restore"})" << "\n";
    const auto r = index_folder(corpus.path / "docs.jsonl", corpus.path / "docs.idx", folder_options());
    CHECK(r.action == IndexAction::built);
    CHECK(!r.files);
    CHECK(r.counts.chunks == 1);
}

TEST_CASE("search settings: a query's own equal the same defaults built in, saved, and checked", "[engine][settings]") {
    std::mt19937 rng(33);
    ragpp_test::TempDir corpus, out;
    for (int i = 0; i < 8; ++i) write_file(corpus.path / ("n" + std::to_string(i) + ".md"), random_note(rng), i);
    SearchSettings tuned = test_config().search;
    tuned.k1 = 1.6;
    tuned.b = 0.9;
    tuned.rrf_k = 5;
    tuned.weights = {1.0, 0.3};
    EngineConfig built_in = test_config();
    built_in.search = tuned;
    const auto with_defaults = Engine::build(corpus.path, built_in);
    auto plain = Engine::build(corpus.path, test_config());

    const auto scores = [](const Engine& e, const std::string& query, SearchMode mode, std::optional<SearchSettings> s) {
        EngineQuery q;
        q.k = 1000;
        q.mode = mode;
        q.principal = Principal::system();
        q.check_sources = false;
        q.search = std::move(s);
        Ranked ranking;
        for (const auto& r : e.search(query, q).results) ranking.emplace_back(r.document->id, r.score);
        return ranking;
    };
    bool differs = false;  // the tuned settings change some ranking: the comparison is not vacuous
    for (int t = 0; t < 10; ++t) {
        const std::string query = random_query(rng);
        INFO(query);
        for (auto mode : {SearchMode::bm25, SearchMode::hybrid}) {
            const auto expected = scores(with_defaults, query, mode, std::nullopt);
            require_same_ranking(scores(plain, query, mode, tuned), expected);
            differs = differs || scores(plain, query, mode, std::nullopt) != expected;
        }
    }
    CHECK(differs);
    CHECK(plain.config().search.k1 == 0.9);  // a query's settings change nothing stored

    // New defaults: used by queries without their own, saved and read back.
    plain.set_search_defaults(tuned);
    const std::string query = "backup restore router";
    require_same_ranking(scores(plain, query, SearchMode::hybrid, std::nullopt),
                         scores(with_defaults, query, SearchMode::hybrid, std::nullopt));
    plain.save(out.path);
    const auto reopened = Engine::open(out.path);
    CHECK(reopened.config().search.k1 == 1.6);
    CHECK(reopened.config().search.weights == std::vector<double>{1.0, 0.3});
    require_same_ranking(scores(reopened, query, SearchMode::hybrid, std::nullopt),
                         scores(with_defaults, query, SearchMode::hybrid, std::nullopt));

    // Values out of their domain: refused, nothing changed.
    for (auto bad : std::vector<std::pair<const char*, std::function<void(SearchSettings&)>>>{
             {"b must be in [0, 1]", [](SearchSettings& s) { s.b = 1.5; }},
             {"k1 must be", [](SearchSettings& s) { s.k1 = -1; }},
             {"weights needs two numbers", [](SearchSettings& s) { s.weights = {1.0}; }},
             {"each fusion weight", [](SearchSettings& s) { s.weights = {1.0, std::nan("")}; }},
             {"candidates must be >= 1", [](SearchSettings& s) { s.candidates = 0; }},
             {"rerank_candidates must be >= 1", [](SearchSettings& s) { s.rerank_candidates = 0; }},
             {"each field weight", [](SearchSettings& s) { s.field_weights = FieldWeights{1, -2, 1}; }}}) {
        INFO(bad.first);
        SearchSettings s;
        bad.second(s);
        CHECK_THROWS_WITH(plain.set_search_defaults(s), Catch::Contains(bad.first));
        CHECK_THROWS_AS(scores(plain, query, SearchMode::bm25, s), InvalidArgument);
        EngineConfig c = test_config();
        c.search = s;
        CHECK_THROWS_AS(Engine::build(corpus.path, c), InvalidArgument);
    }
    CHECK(plain.config().search.k1 == 1.6);
}

TEST_CASE("the engine's lists of names: search modes, rerankers and embedder kinds, each one table", "[engine][choices]") {
    for (auto mode : {SearchMode::bm25, SearchMode::vector, SearchMode::hybrid})
        CHECK(parse_search_mode(search_mode_name(mode)) == mode);
    CHECK_THROWS_WITH(parse_search_mode("bm26", "--mode"), Catch::Contains("--mode 'bm26' is not bm25, vector or hybrid"));
    for (const auto& r : reranker_kinds)
        if (r.name != "cross-encoder:DIR") CHECK_NOTHROW(check_reranker_name(r.name));
    CHECK_NOTHROW(check_reranker_name("cross-encoder:models/ms-marco"));
    CHECK_THROWS_WITH(check_reranker_name("cross-encoder:"),
                      Catch::Contains("is not none, proximity, softmatch or cross-encoder:DIR"));
    CHECK_NOTHROW(check_embedder_spec("hashing:64"));
    CHECK_NOTHROW(check_embedder_spec("transformer:models/e5"));
    CHECK_THROWS_WITH(check_embedder_spec("model2vec:"),
                      Catch::Contains("is not hashing, hashing:DIM, model2vec:DIR, vectors:FILE or transformer:DIR"));
    CHECK_THROWS_WITH(check_embedder_spec("hashing:1000000"), Catch::Contains("from 1 to 999999"));
}

namespace {

/// The lines of `text` after the index's normalisation (CRLF and CR as LF), split by hand:
/// the oracle of Engine::reopen.
std::vector<std::string> lines_by_hand(std::string text) {
    std::string lf;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\r') {
            lf += '\n';
            if (i + 1 < text.size() && text[i + 1] == '\n') ++i;
        } else {
            lf += text[i];
        }
    }
    std::vector<std::string> out;
    std::string cur;
    for (char c : lf) {
        if (c == '\n') {
            out.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    if (!cur.empty()) out.push_back(cur);
    return out;
}

std::string join_lines(const std::vector<std::string>& lines, std::size_t first, std::size_t last) {
    std::string out;
    for (std::size_t i = first; i <= last; ++i) out += (i > first ? "\n" : "") + lines[i - 1];
    return out;
}

}  // namespace

TEST_CASE("reopen: a section, lines or a whole file as the file holds them now, for a reader who may read it",
          "[engine][reopen]") {
    ragpp_test::TempDir corpus, index;
    // CRLF line ends: lines are numbered as the index numbers them.
    const std::string guide =
        "---\r\ntitle: Guide\r\n---\r\n# Guide\r\n\r\nIntro line.\r\n\r\n## Reset\r\n\r\nHold the button.\r\n"
        "Count to five.\r\n\r\n## Backup\r\n\r\nCopy the disk.\r\n";
    write_file(corpus.path / "guide.md", guide, 1);
    write_file(corpus.path / "hr" / "pay.md", "---\ngroups: [hr]\n---\n# Pay\n\nSalaries are secret.\n", 2);
    Engine::build(corpus.path, test_config()).save(index.path);
    const auto engine = Engine::open(index.path);
    const auto lines = lines_by_hand(guide);
    REQUIRE(lines.size() == 15);
    const Principal anyone;

    // The whole file.
    auto t = engine.reopen("guide.md", anyone);
    CHECK(t.citation == "guide.md");
    CHECK(t.first_line == 1);
    CHECK(t.last_line == 15);
    CHECK(t.text == join_lines(lines, 1, 15));
    CHECK(t.line_count == 15);
    CHECK_FALSE(t.changed);
    CHECK_FALSE(t.deleted);
    // A section by its heading's line (8: "## Reset"), by a line inside it, by a chunk id.
    for (const char* spec : {"guide.md:8", "guide.md:9", "guide.md:11", "guide.md:8#2"}) {
        INFO(spec);
        t = engine.reopen(spec, anyone);
        CHECK(t.section == "guide.md:8");
        CHECK(t.first_line == 8);
        CHECK(t.last_line == 11);  // the section's last chunk ends at "Count to five."
        CHECK(t.citation == "guide.md:8-11");
        CHECK(t.text == "## Reset\n\nHold the button.\nCount to five.");
    }
    // Lines.
    t = engine.reopen("guide.md:2-3", anyone);
    CHECK(t.text == join_lines(lines, 2, 3));
    CHECK(t.citation == "guide.md:2-3");
    CHECK(t.section.empty());
    t = engine.reopen("guide.md:15-15", anyone);
    CHECK(t.citation == "guide.md:15");
    CHECK(t.text == "Copy the disk.");
    CHECK(engine.reopen("guide.md:14-400", anyone).last_line == 15);  // clamped to the end
    CHECK_THROWS_AS(engine.reopen("guide.md:16-17", anyone), InvalidArgument);  // past the end
    CHECK_THROWS_AS(engine.reopen("guide.md:5-3", anyone), InvalidArgument);
    CHECK_THROWS_AS(engine.reopen("guide.md:0-3", anyone), InvalidArgument);
    CHECK_THROWS_AS(engine.reopen("", anyone), InvalidArgument);
    CHECK_THROWS_AS(engine.reopen("guide.md:2", anyone), InvalidArgument);  // front matter: in no section

    // A path that is no source, and one the reader may not read: the same answer.
    auto message = [&](const std::string& spec, const Principal& p) {
        try {
            (void)engine.reopen(spec, p);
        } catch (const NotFoundError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    const std::string hidden = message("hr/pay.md", anyone);
    const std::string absent = message("hr/pax.md", anyone);
    CHECK(hidden.find("no source 'hr/pay.md'") != std::string::npos);
    CHECK(absent.find("no source 'hr/pax.md'") != std::string::npos);
    CHECK(hidden.substr(hidden.find("'", hidden.find("'") + 1)) == absent.substr(absent.find("'", absent.find("'") + 1)));
    for (const char* spec : {"hr/pay.md:4", "hr/pay.md:1-6", "../guide.md", "/etc/passwd", "guide.md/"})
        CHECK(message(spec, anyone) != "no error");
    const auto hr = Principal::with_groups({"hr"});
    CHECK(engine.reopen("hr/pay.md:4", hr).text == "# Pay\n\nSalaries are secret.");

    // Status: what each reader may read.
    auto s = engine.status(anyone);
    CHECK(s.chunks + 1 == engine.status(Principal::system()).chunks);
    CHECK(s.sources == 1);
    CHECK(engine.status(hr).sources == 2);
    CHECK(s.changed_sources.empty());
    CHECK(s.deleted_sources.empty());

    // Edited: the lines as they are now, flagged; a deleted file is flagged, with no text.
    const std::string edited = "# Guide\n\nNew first lines.\n\n" + join_lines(lines, 4, 15) + "\n";
    write_file(corpus.path / "guide.md", edited, 30);
    write_file(corpus.path / "hr" / "pay.md", "# Pay\n\nChanged.\n", 31);
    t = engine.reopen("guide.md:8", anyone);
    CHECK(t.changed);
    CHECK_FALSE(t.deleted);
    CHECK(t.first_line == 8);
    CHECK(t.text == join_lines(lines_by_hand(edited), 8, 11));
    s = engine.status(anyone);
    CHECK(s.changed_sources == std::vector<std::string>{"guide.md"});  // not hr/pay.md: the reader may not read it
    CHECK(engine.status(hr).changed_sources == std::vector<std::string>{"guide.md", "hr/pay.md"});
    fs::remove(corpus.path / "guide.md");
    t = engine.reopen("guide.md:8", anyone);
    CHECK(t.deleted);
    CHECK(t.text.empty());
    CHECK(t.citation == "guide.md:8-11");
    CHECK(engine.status(anyone).deleted_sources == std::vector<std::string>{"guide.md"});
}

// Folder contexts and the context command (io/contexts.hpp, CorpusOptions): what each
// chunk is given, in both indexes and the evidence, and what an update re-reads.
namespace {

void write_context_corpus(const fs::path& dir) {
    write_file(dir / "contracts/mx200.md",
               "# Notice period\n\nEither party may end the agreement with three months notice, by registered letter.\n\n"
               "# Prices\n\nThe yearly fee is revised each January.\n",
               1);
    write_file(dir / "contracts/press.md", "# Scope\n\nCovers the hydraulic press and its tooling.\n", 2);
    write_file(dir / "guide/install.md", "# Install\n\nRun the installer and restart the service.\n", 3);
}

/// (chunk id -> indexed text) of every chunk.
std::map<std::string, std::string> chunk_texts(const Engine& e) {
    std::map<std::string, std::string> out;
    e.for_each_chunk([&](const Document& d) { out[d.id] = d.text; });
    return out;
}

/// The lines of a chunk's indexed text.
std::vector<std::string> text_lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
}

}  // namespace

TEST_CASE("contexts: a folder's description precedes its chunks in both indexes, is cited, and updates re-read what it touches",
          "[engine][contexts]") {
    ragpp_test::TempDir corpus, tmp;
    write_context_corpus(corpus.path);
    write_file(corpus.path / ".ragpp-contexts", "contracts/: maintenance agreements of Globex Corporation\n", 4);
    auto e = Engine::build(corpus.path, test_config());
    REQUIRE(e.contexts().rules().size() == 1);
    CHECK(e.contexts().rules()[0].origin == ".ragpp-contexts:1");

    // Each chunk: its context line, then the description (contracts only), then the raw
    // span, which raw_span() gives back exactly.
    std::size_t with = 0, without = 0;
    e.for_each_chunk([&](const Document& d) {
        const auto lines = text_lines(d.text);
        REQUIRE(lines.size() >= 2);
        const std::string raw = raw_span(d);
        CHECK(raw.find("Globex") == std::string::npos);
        if (d.id.starts_with("contracts/")) {
            ++with;
            CHECK(lines[1] == "maintenance agreements of Globex Corporation");
            CHECK(d.text == lines[0] + "\n" + lines[1] + "\n" + raw);
            REQUIRE(d.metadata.contains("context"));
            CHECK(std::get<std::string>(d.metadata.at("context")) == "maintenance agreements of Globex Corporation");
        } else {
            ++without;
            CHECK(d.text == lines[0] + "\n" + raw);
            CHECK_FALSE(d.metadata.contains("context"));
        }
    });
    CHECK(with == 3);
    CHECK(without == 1);

    // In the lexical index (the word is in no file) and in the vector index (hashing
    // vectors: the chunks of the words "globex corporation" rank first).
    EngineQuery q;
    q.k = 10;
    q.check_sources = false;
    for (auto mode : {SearchMode::bm25, SearchMode::vector}) {
        q.mode = mode;
        const auto r = e.search("Globex Corporation", q).results;
        REQUIRE(r.size() >= 3);
        std::set<std::string> top;
        for (std::size_t i = 0; i < 3; ++i) top.insert(r[i].document->id);
        CHECK(top == std::set<std::string>{"contracts/mx200.md:1", "contracts/mx200.md:5", "contracts/press.md:1"});
        if (mode == SearchMode::bm25) CHECK(r.size() == 3);
    }

    // The evidence names the source's context above its quoted text.
    AnswerOptions ao;
    ao.min_confidence = 0;
    ao.evidence.reopen = "call the get tool.";
    q.mode = SearchMode::bm25;
    const auto a = e.answer("Globex notice period", q, ao);
    REQUIRE(a.answered);
    REQUIRE(a.evidence);
    REQUIRE_FALSE(a.evidence->sources.empty());
    CHECK(a.evidence->sources[0].location == "contracts/mx200.md:1");
    CHECK(a.evidence->sources[0].context == "maintenance agreements of Globex Corporation");
    CHECK(a.evidence->sources[0].text.find("Globex") == std::string::npos);
    const std::string prompt = a.evidence->render();
    CHECK(prompt.find("contracts/mx200.md:1, Notice period\nContext: maintenance agreements of Globex Corporation\n<<<SOURCE 1") !=
          std::string::npos);
    CHECK(prompt.find("\nTo read more of a source than its passage, or its file as it reads now, call the get tool.\n") !=
          std::string::npos);

    // Saved and opened: the rules and the walk options come back.
    const fs::path out = tmp.path / "idx";
    (void)e.save(out);
    {
        const auto o = Engine::open(out);
        CHECK(o.contexts() == e.contexts());
        CHECK(o.contexts().rules()[0].origin == ".ragpp-contexts:1");
        CHECK(chunk_texts(o) == chunk_texts(e));
    }

    auto fresh = [&] { return chunk_texts(Engine::build(corpus.path, test_config())); };
    // Another description for contracts, a new one for guide: every file re-read for its
    // contexts alone, and the chunks equal a fresh build's.
    write_file(corpus.path / ".ragpp-contexts", "contracts/: maintenance agreements of Initech\nguide/: the user guide\n", 5);
    const auto p = e.pending(corpus.path);  // what the sync will do, without doing it
    CHECK(p.changed == 3);
    CHECK(p.contexts == 3);
    CHECK(p.unchanged == 0);
    CHECK(e.contexts().rules()[0].text == "maintenance agreements of Globex Corporation");
    auto c = e.sync(corpus.path);
    CHECK(c.changed == 3);
    CHECK(c.contexts == 3);
    CHECK(c.unchanged == 0);
    CHECK(chunk_texts(e) == fresh());
    CHECK(chunk_texts(e).at("guide/install.md:1").find("\nthe user guide\n") != std::string::npos);
    // A comment changes no file's contexts: nothing re-read, the new rules kept.
    write_file(corpus.path / ".ragpp-contexts",
               "# rules\ncontracts/: maintenance agreements of Initech\nguide/: the user guide\n", 6);
    c = e.sync(corpus.path);
    CHECK(c.changed == 0);
    CHECK(c.unchanged == 3);
    CHECK(e.contexts().rules()[0].origin == ".ragpp-contexts:2");
    // One folder's description: its file only.
    write_file(corpus.path / ".ragpp-contexts",
               "contracts/: maintenance agreements of Initech\nguide/: the user guide of the plant\n", 7);
    c = e.sync(corpus.path);
    CHECK(c.changed == 1);
    CHECK(c.contexts == 1);
    CHECK(c.unchanged == 2);
    CHECK(chunk_texts(e) == fresh());
    // A contexts file named besides the root's: its rules after the root's.
    write_file(tmp.path / "more.ctx", "contracts/press.md: the press line\n", 8);
    CorpusOptions co;
    co.contexts_file = (tmp.path / "more.ctx").string();
    c = e.sync(corpus.path, co);
    CHECK(c.changed == 1);
    e.for_each_chunk([&](const Document& d) {
        if (d.id == "contracts/press.md:1")
            CHECK(std::get<std::string>(d.metadata.at("context")) == "maintenance agreements of Initech\nthe press line");
    });
    // The root's file gone: its rules go, and the named file's stay.
    fs::remove(corpus.path / ".ragpp-contexts");
    c = e.sync(corpus.path, co);
    CHECK(c.changed == 3);
    CHECK(e.contexts().rules().size() == 1);
    // A malformed rule: refused naming its line, the engine unchanged.
    const auto before = chunk_texts(e);
    write_file(corpus.path / ".ragpp-contexts", "contracts/: fine\nguide the guide\n", 9);
    CHECK_THROWS_WITH(e.sync(corpus.path, co), Catch::Contains(".ragpp-contexts:2: expected 'PATTERN: description'"));
    CHECK(chunk_texts(e) == before);
    // Contexts are for a folder of files.
    write_file(tmp.path / "docs.jsonl", "{\"id\": \"a\", \"text\": \"alpha\"}\n", 10);
    CHECK_THROWS_WITH(Engine::build(tmp.path / "docs.jsonl", test_config(), co),
                      Catch::Contains("contexts (a contexts file, a context command) apply to a folder of files"));
}

TEST_CASE("context command: one line per chunk, asked once per chunk content, kept across updates and rebuilds",
          "[engine][contexts]") {
    ragpp_test::TempDir corpus, tmp;
    write_context_corpus(corpus.path);
    const fs::path counter = tmp.path / "asked";
    // The chunk's first line, read from the JSON on stdin; one line appended to `counter` per call.
    const std::string command = "echo . >> '" + counter.string() +
                                "'; sed -n 's/.*\"first_line\":\\([0-9]*\\).*\"source\":\"\\([^\"]*\\)\".*/line \\1 of \\2/p'";
    auto asked = [&] {
        std::ifstream in(counter);
        std::size_t n = 0;
        for (std::string l; std::getline(in, l);) ++n;
        return n;
    };
    const fs::path out = tmp.path / "idx";
    auto o = folder_options();
    o.context_command = command;
    auto r = index_folder(corpus.path, out, o);
    CHECK(r.counts.chunks == 4);
    CHECK(asked() == 4);
    auto check_answers = [&](std::size_t chunks) {
        const auto e = Engine::open(out);
        CHECK(e.corpus_options().context_command == command);
        std::size_t n = 0;
        e.for_each_chunk([&](const Document& d) {
            const auto first = std::get<double>(d.metadata.at("first_line"));
            const std::string source = std::get<std::string>(d.metadata.at("source"));
            const std::string want = "line " + std::to_string(static_cast<int>(first)) + " of " + source;
            CHECK(std::get<std::string>(d.metadata.at("context")) == want);
            CHECK(text_lines(d.text).at(1) == want);
            ++n;
        });
        CHECK(n == chunks);
        CHECK(e.context_answers().size() == chunks);
    };
    check_answers(4);

    // An update without the option keeps the index's command; an edited file's chunks are
    // asked about, the others' answers kept.
    write_file(corpus.path / "guide/install.md", "# Install\n\nRun the new installer.\n\n# Remove\n\nDelete it.\n", 20);
    auto keep = folder_options();
    r = index_folder(corpus.path, out, keep);
    CHECK(r.action == IndexAction::updated);
    CHECK(r.counts.changed == 1);
    CHECK(asked() == 4 + 2);  // guide/install.md now has two sections
    check_answers(5);
    // Nothing changed: nothing asked, and the watcher's step does nothing.
    r = index_folder(corpus.path, out, keep);
    CHECK(asked() == 6);
    CHECK_FALSE(update_if_pending(Engine::open(out), out).has_value());
    // The watcher's step after an edit: an update with the index's own command.
    write_file(corpus.path / "contracts/press.md", "# Scope\n\nCovers the hydraulic press, its tooling and dies.\n", 22);
    {
        const auto step = update_if_pending(Engine::open(out), out);
        REQUIRE(step.has_value());
        CHECK(step->action == IndexAction::updated);
        CHECK(step->counts.changed == 1);
        CHECK(asked() == 7);
        check_answers(5);
    }
    // A rebuild for another setting asks about no chunk it has seen.
    auto other = folder_options();
    other.settings.delta = 1.0;
    r = index_folder(corpus.path, out, other);
    CHECK(r.action == IndexAction::rebuilt_settings);
    CHECK(asked() == 7);
    {
        const auto e = Engine::open(out);
        e.for_each_chunk([&](const Document& d) { CHECK(d.metadata.contains("context")); });
    }

    // A command that fails, or takes too long: the run stops naming the chunk, nothing is
    // committed, and the engine (or folder) keeps its generation.
    const auto generation = current_generation(out);
    write_file(corpus.path / "contracts/press.md", "# Scope\n\nCovers the press only.\n", 21);
    auto failing = folder_options();
    failing.settings.delta = 1.0;
    failing.context_command = "cat > /dev/null; echo 'model offline' >&2; exit 3";
    CHECK_THROWS_WITH(index_folder(corpus.path, out, failing),
                      Catch::Contains("for 'contracts/mx200.md:1' failed (exit status 3): model offline"));
    CHECK(current_generation(out) == generation);
    auto slow = failing;
    slow.context_command = "sleep 5";
    slow.context_timeout = 0.3;
    const auto t0 = std::chrono::steady_clock::now();
    CHECK_THROWS_WITH(index_folder(corpus.path, out, slow), Catch::Contains("did not answer within 0.3 s"));
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(4));
    CHECK(current_generation(out) == generation);
    auto e = Engine::open(out, 0, OpenOptions{.mmap = false, .verify = true});
    const auto before = chunk_texts(e);
    CorpusOptions co;
    co.context_command = *failing.context_command;
    CHECK_THROWS_AS(e.sync(corpus.path, co), IoError);
    CHECK(chunk_texts(e) == before);

    // Stopping the command: every file re-read without its answers.
    auto none = folder_options();
    none.settings.delta = 1.0;
    none.context_command = "";
    r = index_folder(corpus.path, out, none);
    CHECK(r.counts.changed == 3);
    CHECK(r.counts.contexts == 2);  // press.md changed for its content too
    {
        const auto e2 = Engine::open(out);
        e2.for_each_chunk([&](const Document& d) { CHECK_FALSE(d.metadata.contains("context")); });
        CHECK(e2.context_answers().empty());
    }
}
