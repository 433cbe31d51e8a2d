// Concurrency: the threading rule of docs/architecture.md, tested rather than promised.
//  - Every const member, search included, may run concurrently: 6 threads search the
//    same BM25Index (every variant and top-k strategy, plain and fielded documents, the
//    rank_bm25 okapi mean-idf cache filled by the concurrent first searches behind its
//    mutex), VectorIndex (float32, float16, int8; one query and batches), Retriever and
//    Collection; each thread's results must equal the sequential results (the oracle),
//    bit for bit.
//  - Writes need exclusive access: readers under a std::shared_lock and one writer under
//    a std::unique_lock on a Collection; every result a reader gets equals the
//    sequential result of the state it read (a state counter kept under the same lock).
//  - Readers never wait (Concurrent<T>, core/concurrent.hpp, left-right): 4 threads search a
//    Concurrent Collection, BM25Index and flat VectorIndex while one writer makes seeded
//    random adds, updates and removes; every read records the version it saw, and after
//    the run a sequential replay of the writes (the oracle) must give the same results at
//    that version, bit for bit. A writer stalled inside its write (before the switch, then
//    between the switch and its second application) must not stop readers from completing
//    searches; failed writes change nothing, on either copy.
// This file is the one the ThreadSanitizer preset builds (CMakePresets.json `tsan`,
// scripts/test.sh), where a data race fails the test even when the results happen to match.
#include <ragpp/core/concurrent.hpp>
#include <ragpp/embed/hashing.hpp>
#include <ragpp/index/bm25.hpp>
#include <ragpp/index/hnsw.hpp>
#include <ragpp/index/vector.hpp>
#include <ragpp/retrieve/collection.hpp>
#include <ragpp/retrieve/retriever.hpp>
#include <ragpp/text/analyzer.hpp>
#include <ragpp/text/whitespace.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <latch>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using ragpp::BM25Index;
using ragpp::BM25Params;
using ragpp::BM25Strategy;
using ragpp::BM25Variant;
using ragpp::DocSet;
using ragpp::Document;
using ragpp::Filter;
using ragpp::Hit;
using ragpp::Principal;
using ragpp::SearchOptions;
using Strings = std::vector<std::string>;

namespace {

constexpr std::size_t threads = 6;

/// A small deterministic generator (the same corpus on every platform).
struct Lcg {
    std::uint64_t state;
    std::uint32_t next(std::uint32_t n) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<std::uint32_t>((state >> 33) % n);
    }
};

/// Word i of the vocabulary ("w0" ... "w149"); low indexes are drawn more often.
std::string word(Lcg& g) {
    const std::uint32_t a = g.next(150), b = g.next(150);
    return "w" + std::to_string(a < b ? a : b);
}

/// `n` documents: "common" in every one (df = n: a negative rank_bm25 okapi idf, so
/// the mean-idf cache is used), "half" in every other one, then 4-30 skewed words.
std::vector<std::string> texts(std::size_t n, std::uint64_t seed) {
    Lcg g{seed};
    std::vector<std::string> out;
    for (std::size_t i = 0; i < n; ++i) {
        std::string t = i % 2 == 0 ? "common half" : "common";
        const std::uint32_t len = 4 + g.next(27);
        for (std::uint32_t j = 0; j < len; ++j) t += " " + word(g);
        out.push_back(std::move(t));
    }
    return out;
}

Strings queries(std::size_t n, std::uint64_t seed) {
    Lcg g{seed};
    Strings out{"common", "common half w3", "half w7 w7"};
    while (out.size() < n) {
        std::string q = word(g);
        for (std::uint32_t j = g.next(4); j > 0; --j) q += " " + word(g);
        out.push_back(std::move(q));
    }
    return out;
}

/// A chunk-like document (source path, heading path): BM25Index searches it as BM25F.
Document fielded(std::size_t i, std::string text) {
    const std::string section = "Section " + std::to_string(i % 7);
    return Document{"doc" + std::to_string(i), std::move(text),
                    {{"source", "dir" + std::to_string(i % 5) + "/page" + std::to_string(i % 11) + ".md"},
                     {"heading_path", Strings{"Page w" + std::to_string(i % 11), section}}}};
}

std::string hex(double x) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%a", x);
    return buf;
}

/// Results written out exactly (ids, scores as hexadecimal floats, the trace).
std::string signature(const std::vector<Hit>& hits) {
    std::string s;
    for (const auto& h : hits) s += std::to_string(h.id) + ":" + hex(h.score) + " ";
    return s;
}
std::string signature(const std::vector<ragpp::Result>& results) {
    std::string s;
    for (const auto& r : results) {
        s += std::to_string(r.id) + ":" + hex(r.score) + ":" + r.document->id;
        for (const auto& t : r.trace)
            s += "," + (t.rank ? std::to_string(*t.rank) : "-") + "/" + (t.score ? hex(*t.score) : "-");
        s += " ";
    }
    return s;
}
std::string signature(const std::vector<std::vector<Hit>>& lists) {
    std::string s;
    for (const auto& l : lists) s += signature(l) + "| ";
    return s;
}

/// Runs `run(q)` for every query q on `threads` threads at once (each thread starting at
/// another query, `rounds` times over all of them) and returns how many results differ
/// from expected[q], the sequential results. Catch's assertions are not thread-safe:
/// the threads only count, the caller checks.
std::size_t concurrent_mismatches(const std::function<std::string(std::size_t)>& run, const Strings& expected,
                                  std::size_t rounds = 2) {
    std::atomic<std::size_t> mismatches{0};
    std::latch start(static_cast<std::ptrdiff_t>(threads));
    std::vector<std::thread> pool;
    for (std::size_t t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            start.arrive_and_wait();
            const std::size_t n = expected.size();
            for (std::size_t i = 0; i < rounds * n; ++i) {
                const std::size_t q = (i + t * n / threads) % n;
                if (run(q) != expected[q]) mismatches.fetch_add(1);
            }
        });
    for (auto& th : pool) th.join();
    return mismatches.load();
}

Strings sequential(const std::function<std::string(std::size_t)>& run, std::size_t n) {
    Strings out;
    for (std::size_t q = 0; q < n; ++q) out.push_back(run(q));
    return out;
}

/// Every other document up to n: a filter the indexes test inside their loops.
std::shared_ptr<const DocSet> even_ids(std::size_t n) {
    DocSet s(n);
    for (std::size_t i = 0; i < n; i += 2) s.set(static_cast<ragpp::DocId>(i));
    return std::make_shared<const DocSet>(std::move(s));
}

}  // namespace

TEST_CASE("Concurrency: BM25Index searches from 6 threads equal the sequential ones (every variant and strategy)",
          "[concurrency][bm25]") {
    using Index = BM25Index<ragpp::WhitespaceAnalyzer>;
    const auto corpus = texts(300, 11);
    const auto qs = queries(24, 12);
    SearchOptions filtered;
    filtered.allowed = even_ids(300);
    const bool fields = GENERATE(false, true);
    const BM25Variant variant = GENERATE(from_range(std::begin(ragpp::bm25_variants), std::end(ragpp::bm25_variants)));
    CAPTURE(fields, ragpp::to_string(variant));

    BM25Params params;
    params.variant = variant;
    Index built(params);
    for (std::size_t i = 0; i < corpus.size(); ++i) {
        if (fields) built.add_document(static_cast<ragpp::DocId>(i), fielded(i, corpus[i]));
        else built.add_document(static_cast<ragpp::DocId>(i), Document{"doc" + std::to_string(i), corpus[i], {}});
    }
    REQUIRE(built.fielded_size() == (fields ? corpus.size() : 0));

    // Every strategy, with and without a filter, on the same index at once.
    const auto run_on = [&](const Index& index) {
        return [&qs, &filtered, p = &index](std::size_t q) {
            const auto terms = p->query_terms(qs[q]);
            std::string s = signature(p->search(qs[q], 10));
            for (auto st : {BM25Strategy::exhaustive, BM25Strategy::accumulate, BM25Strategy::maxscore})
                s += "; " + signature(p->search_terms(terms, 10, {}, st));
            return s + "; " + signature(p->search(qs[q], 10, filtered));
        };
    };
    const Strings expected = sequential(run_on(built), qs.size());
    // The okapi cache is used: "common" (in every document) scores epsilon * mean idf > 0.
    if (variant == BM25Variant::rank_bm25_okapi) {
        const auto hits = built.search("common", 3);
        REQUIRE(hits.size() == 3);
        CHECK(hits[0].score > 0.0F);
    }
    // A copy starts with an empty okapi cache: the concurrent first searches fill it.
    const Index fresh = built;
    CHECK(concurrent_mismatches(run_on(fresh), expected) == 0);
}

TEST_CASE("Concurrency: VectorIndex searches from 6 threads equal the sequential ones (float32, float16, int8)",
          "[concurrency][vector]") {
    using Index = ragpp::VectorIndex<ragpp::HashingEmbedder>;
    const auto q = GENERATE(ragpp::Quantization::none, ragpp::Quantization::float16, ragpp::Quantization::int8);
    CAPTURE(ragpp::to_string(q));
    ragpp::HashingOptions ho;
    ho.dimension = 96;
    ragpp::VectorIndexOptions vo;
    vo.quantization = q;
    vo.min_rescore = 8;  // quantized search re-scores 8 candidates, not every row
    vo.rescore_factor = 1;
    Index index(ragpp::HashingEmbedder(ho), vo);
    const auto corpus = texts(300, 21);
    for (std::size_t i = 0; i < corpus.size(); ++i)
        index.add_document(static_cast<ragpp::DocId>(i), Document{"doc" + std::to_string(i), corpus[i], {}});
    const auto qs = queries(24, 22);
    SearchOptions filtered;
    filtered.allowed = even_ids(300);
    ragpp::RowMatrixXf batch(4, 96);
    for (Eigen::Index r = 0; r < batch.rows(); ++r)
        batch.row(r) = index.embedder().embed(qs[static_cast<std::size_t>(r)], ragpp::Role::query).transpose();

    const auto run = [&](std::size_t i) {
        std::string s = signature(index.search(qs[i], 10)) + "; " + signature(index.search(qs[i], 10, filtered));
        if (i % 6 == 0) s += "; " + signature(index.search_batch(batch, 5, filtered));
        return s;
    };
    const Strings expected = sequential(run, qs.size());
    CHECK(concurrent_mismatches(run, expected) == 0);
}

namespace {

using Bm25 = BM25Index<ragpp::EnglishAnalyzer>;
using Vectors = ragpp::VectorIndex<ragpp::HashingEmbedder>;
using Hybrid = ragpp::Retriever<Bm25, Vectors>;

Hybrid make_hybrid() {
    BM25Params p;
    p.variant = BM25Variant::rank_bm25_okapi;  // the mean-idf cache, behind its mutex
    ragpp::HashingOptions ho;
    ho.dimension = 64;
    ragpp::VectorIndexOptions vo;
    vo.quantization = ragpp::Quantization::int8;
    return Hybrid(Bm25(p), Vectors(ragpp::HashingEmbedder(ho), vo));
}

using Docs = ragpp::Collection<Hybrid>;

/// Source `i` (Markdown, two sections), readable by group "g<i % 3>".
Document source(std::size_t i, const std::string& a, const std::string& b) {
    return Document{"notes/n" + std::to_string(i) + ".md",
                    "# Note " + std::to_string(i) + "\n\n## First\n\n" + a + "\n\n## Second\n\n" + b + "\n",
                    {{"groups", Strings{"g" + std::to_string(i % 3)}}, {"kind", std::string(i % 2 ? "odd" : "even")}}};
}

Docs make_collection(const std::vector<std::string>& corpus) {
    Docs c(make_hybrid());
    for (std::size_t i = 0; i + 1 < corpus.size(); i += 2) c.add(source(i / 2, corpus[i], corpus[i + 1]));
    return c;
}

}  // namespace

TEST_CASE("Concurrency: Retriever searches from 6 threads equal the sequential ones", "[concurrency][retriever]") {
    Hybrid r = make_hybrid();
    for (const auto& t : texts(200, 31)) r.add_document(Document{"d" + std::to_string(r.size()), t, {}});
    const auto qs = queries(24, 32);
    SearchOptions filtered;
    filtered.allowed = even_ids(200);
    const auto run = [&](std::size_t q) {
        return signature(r.search(qs[q], 8)) + "; " + signature(r.search(qs[q], 8, filtered));
    };
    const Strings expected = sequential(run, qs.size());
    const Hybrid fresh = r;  // an empty okapi cache again
    const auto run_fresh = [&](std::size_t q) {
        return signature(fresh.search(qs[q], 8)) + "; " + signature(fresh.search(qs[q], 8, filtered));
    };
    CHECK(concurrent_mismatches(run_fresh, expected) == 0);
}

TEST_CASE("Concurrency: Collection searches from 6 threads equal the sequential ones", "[concurrency][collection]") {
    const Docs c = make_collection(texts(160, 41));
    REQUIRE(c.source_count() == 80);
    const auto qs = queries(24, 42);
    const std::vector<Principal> who{Principal::system(), Principal::with_groups({"g1"}),
                                     Principal::with_groups({"g0", "g2"})};
    const Filter odd = Filter::eq("kind", std::string("odd"));
    const auto run = [&](std::size_t q) {
        const Principal& p = who[q % who.size()];
        return signature(c.search(qs[q], 8, Filter::all(), p)) + "; " + signature(c.search(qs[q], 8, odd, p));
    };
    const Strings expected = sequential(run, qs.size());
    CHECK(!expected[0].empty());
    CHECK(concurrent_mismatches(run, expected) == 0);
}

TEST_CASE("Concurrency: readers under a shared lock and one writer see only sequential states",
          "[concurrency][collection][writer]") {
    // The writes: add a source, change one, remove one, in turn. State s is the collection
    // after the first s writes; the oracle replays them sequentially.
    const auto corpus = texts(120, 51);
    const auto extra = texts(60, 52);
    const auto qs = queries(12, 53);
    constexpr std::size_t writes = 15;
    const auto write = [&](Docs& c, std::size_t s) {  // write number s (0-based)
        const std::size_t i = 60 + s;
        switch (s % 3) {
            case 0: c.add(source(i, extra[2 * s], extra[2 * s + 1])); break;
            case 1: c.update(source(s, extra[2 * s], "common changed " + extra[2 * s + 1])); break;
            default: c.remove("notes/n" + std::to_string(s) + ".md"); break;
        }
    };
    const auto search = [&](const Docs& c, std::size_t q) {
        return signature(c.search(qs[q], 6, Filter::all(), Principal::with_groups({"g0", "g1"})));
    };

    std::vector<Strings> expected;  // expected[s][q]
    Docs oracle = make_collection(corpus);
    for (std::size_t s = 0;; ++s) {
        expected.push_back(sequential([&](std::size_t q) { return search(oracle, q); }, qs.size()));
        if (s == writes) break;
        write(oracle, s);
    }
    REQUIRE(expected.front() != expected.back());  // the writes change what readers see

    Docs shared = make_collection(corpus);
    std::shared_mutex mutex;
    std::size_t state = 0;  // guarded by mutex
    std::atomic<bool> done{false};
    std::atomic<std::size_t> mismatches{0}, reads{0}, readers{threads - 1};
    std::atomic<std::uint32_t> seen{0};  // bit s: a reader searched state s
    std::latch start(static_cast<std::ptrdiff_t>(threads));
    std::vector<std::thread> pool;
    for (std::size_t t = 0; t + 1 < threads; ++t)
        pool.emplace_back([&, t] {
            start.arrive_and_wait();
            // Until a full pass after the last write (bounded, should the writer starve).
            std::size_t stop = t + 4000;
            for (std::size_t i = t; i < stop; ++i) {
                if (stop == t + 4000 && done.load()) stop = i + qs.size();
                const std::size_t q = i % qs.size();
                {
                    std::shared_lock lock(mutex);
                    if (search(shared, q) != expected[state][q]) mismatches.fetch_add(1);
                    seen.fetch_or(std::uint32_t{1} << state);
                    reads.fetch_add(1);
                }
                std::this_thread::yield();
            }
            readers.fetch_sub(1);
        });
    pool.emplace_back([&] {
        start.arrive_and_wait();
        for (std::size_t s = 0; s < writes; ++s) {
            // Let readers search the current state (3 reads) before the next write.
            const std::size_t before = reads.load();
            while (reads.load() < before + 3 && readers.load() > 0) std::this_thread::yield();
            std::unique_lock lock(mutex);
            write(shared, s);
            ++state;
        }
        done.store(true);
    });
    for (auto& th : pool) th.join();
    CHECK(state == writes);
    CHECK(reads.load() >= (threads - 1) * qs.size());
    CHECK(seen.load() == (std::uint32_t{1} << (writes + 1)) - 1);  // every state was read
    CHECK(mismatches.load() == 0);
    // After the writer: the shared collection answers as the oracle's last state.
    for (std::size_t q = 0; q < qs.size(); ++q) CHECK(search(shared, q) == expected.back()[q]);
}

// ---------------------------------------------------------------------------------------
// Concurrent<T>: readers never wait for the writer.

using ragpp::Concurrent;
using ragpp::WriteGuarantee;

namespace {

/// What one read saw: the version of the copy it read, the query, the results.
struct Record {
    std::uint64_t version = 0;
    std::size_t query = 0;
    std::string result;
};

struct StressRun {
    std::vector<Record> records;
    std::uint64_t final_version = 0;
    bool writer_waited_too_long = false;  // a version no reader saw within 10 s
};

/// `readers` threads search a Concurrent<T>(initial) with search(t, q) for seeded random
/// queries q < nqueries, recording what they saw, while one writer makes write(t, s) for
/// s = 0 .. writes-1. Before each write the writer waits until readers have completed 10
/// reads of the current version (at most 10 s), so every version is read.
template <class T, class Write, class Search>
StressRun stress(const T& initial, std::size_t writes, std::size_t nqueries, const Write& write,
                 const Search& search, std::size_t readers = 4) {
    Concurrent<T> shared(initial);
    std::vector<std::atomic<std::size_t>> seen(writes + 1);  // reads of each version
    std::atomic<bool> done{false};
    std::vector<std::vector<Record>> records(readers);
    StressRun run;
    std::latch start(static_cast<std::ptrdiff_t>(readers + 1));
    std::vector<std::thread> pool;
    for (std::size_t t = 0; t < readers; ++t)
        pool.emplace_back([&, t] {
            Lcg g{1000 + t};
            start.arrive_and_wait();
            // Until a few reads after the last write, recording at most 100 reads of a version.
            std::vector<std::size_t> recorded(writes + 1);
            for (std::size_t after = 0; after < 4;) {
                if (done.load()) ++after;
                const std::size_t q = g.next(static_cast<std::uint32_t>(nqueries));
                Record r = shared.read([&](const T& c, std::uint64_t version) {
                    return Record{version, q, search(c, q)};
                });
                if (r.version > writes) {  // a bug: the check reports it
                    records[t].push_back(std::move(r));
                    continue;
                }
                seen[r.version].fetch_add(1);
                if (recorded[r.version]++ < 100) records[t].push_back(std::move(r));
                std::this_thread::yield();
            }
        });
    pool.emplace_back([&] {
        start.arrive_and_wait();
        for (std::size_t s = 0; s < writes; ++s) {
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
            while (seen[s].load() < 10) {
                if (std::chrono::steady_clock::now() > deadline) {
                    run.writer_waited_too_long = true;
                    break;
                }
                std::this_thread::yield();
            }
            shared.write([&, s](T& c) { write(c, s); }, WriteGuarantee::strong);
        }
        run.final_version = shared.version();
        done.store(true);
    });
    for (auto& th : pool) th.join();
    for (auto& r : records) std::move(r.begin(), r.end(), std::back_inserter(run.records));
    return run;
}

/// Replays the writes sequentially on a copy of `initial` (the oracle) and checks that
/// every recorded read equals the oracle's result at the version it saw, and that every
/// version was read.
template <class T, class Write, class Search>
void check_against_oracle(const T& initial, std::size_t writes, std::size_t nqueries, const Write& write,
                          const Search& search, const StressRun& run) {
    std::vector<Strings> expected;  // expected[version][query]
    T oracle = initial;
    for (std::size_t s = 0;; ++s) {
        expected.push_back(sequential([&](std::size_t q) { return search(oracle, q); }, nqueries));
        if (s == writes) break;
        write(oracle, s);
    }
    REQUIRE(expected.front() != expected.back());  // the writes change what readers see
    CHECK(run.final_version == writes);
    CHECK_FALSE(run.writer_waited_too_long);
    std::size_t mismatches = 0, out_of_range = 0;
    std::set<std::uint64_t> versions;
    for (const auto& r : run.records) {
        if (r.version > writes) {
            ++out_of_range;
            continue;
        }
        versions.insert(r.version);
        if (r.result != expected[r.version][r.query]) ++mismatches;
    }
    CAPTURE(run.records.size());
    CHECK(out_of_range == 0);
    CHECK(mismatches == 0);
    CHECK(versions.size() == writes + 1);  // every state was read
}

/// A seeded plan of adds and removes over DocIds: op s adds DocId `id` (text `text`) or
/// removes it; at least 4 documents stay.
struct IdOp {
    bool add = true;
    ragpp::DocId id = 0;
};
std::vector<IdOp> id_plan(std::size_t initial, std::size_t writes, std::uint64_t seed) {
    Lcg g{seed};
    std::vector<ragpp::DocId> present;
    for (std::size_t i = 0; i < initial; ++i) present.push_back(static_cast<ragpp::DocId>(i));
    auto next = static_cast<ragpp::DocId>(initial);
    std::vector<IdOp> plan;
    for (std::size_t s = 0; s < writes; ++s) {
        if (present.size() <= 4 || g.next(5) < 3) {
            plan.push_back({true, next});
            present.push_back(next++);
        } else {
            const std::size_t at = g.next(static_cast<std::uint32_t>(present.size()));
            plan.push_back({false, present[at]});
            present.erase(present.begin() + static_cast<std::ptrdiff_t>(at));
        }
    }
    return plan;
}

template <class Index>
void run_index_stress(Index empty, std::uint64_t seed) {
    constexpr std::size_t initial = 60, writes = 120;
    const auto corpus = texts(initial + writes, seed);
    const auto qs = queries(12, seed + 1);
    const auto plan = id_plan(initial, writes, seed + 2);
    for (std::size_t i = 0; i < initial; ++i)
        empty.add_document(static_cast<ragpp::DocId>(i), Document{"doc" + std::to_string(i), corpus[i], {}});
    const auto write = [&](Index& index, std::size_t s) {
        const IdOp op = plan[s];
        if (op.add) index.add_document(op.id, Document{"doc" + std::to_string(op.id), corpus[op.id], {}});
        else index.remove_document(op.id);
    };
    const auto search = [&](const Index& index, std::size_t q) { return signature(index.search(qs[q], 8)); };
    const StressRun run = stress(empty, writes, qs.size(), write, search);
    check_against_oracle(empty, writes, qs.size(), write, search, run);
}

}  // namespace

TEST_CASE("Concurrent: 4 readers and a writer on a BM25Index see only sequential states", "[concurrency][concurrent][bm25]") {
    run_index_stress(BM25Index<ragpp::WhitespaceAnalyzer>(), 61);
}

TEST_CASE("Concurrent: 4 readers and a writer on a flat VectorIndex see only sequential states",
          "[concurrency][concurrent][vector]") {
    ragpp::HashingOptions ho;
    ho.dimension = 64;
    run_index_stress(Vectors(ragpp::HashingEmbedder(ho)), 71);
}

TEST_CASE("Concurrent: 4 readers and a writer on an HNSW VectorIndex see only sequential states",
          "[concurrency][concurrent][hnsw]") {
    // The two copies of left-right must build the same graph: the level generator is a
    // member of the index, seeded and copied with it, so each write draws the same levels
    // on both copies, and the oracle (a third copy replayed sequentially) agrees bit for bit.
    ragpp::HashingOptions ho;
    ho.dimension = 64;
    ragpp::HnswOptions hnsw;
    hnsw.M = 8;
    hnsw.ef_construction = 40;
    run_index_stress(ragpp::VectorIndex<ragpp::HashingEmbedder, ragpp::Hnsw>(ragpp::HashingEmbedder(ho), {}, hnsw), 81);
}

TEST_CASE("HNSW: add_vectors on 2 threads builds the graph of 1 thread (float32 and int8 rows)", "[concurrency][hnsw]") {
    // The batch's searches run on both threads against the graph as it was; the links are
    // computed in parallel per neighbour and written after: the same graph, race-free.
    ragpp::HashingOptions ho;
    ho.dimension = 32;
    ragpp::HnswOptions hnsw;
    hnsw.M = 8;
    hnsw.ef_construction = 40;
    const std::size_t n = 700;
    ragpp::RowMatrixXf rows(static_cast<Eigen::Index>(n), 32);
    Lcg g{91};
    for (Eigen::Index i = 0; i < rows.rows(); ++i)
        for (Eigen::Index j = 0; j < rows.cols(); ++j) rows(i, j) = static_cast<float>(g.next(2001)) / 1000.0F - 1.0F;
    std::vector<ragpp::DocId> ids(n);
    for (std::size_t i = 0; i < n; ++i) ids[i] = static_cast<ragpp::DocId>(i * 3);
    for (auto q : {ragpp::Quantization::none, ragpp::Quantization::int8}) {
        ragpp::VectorIndexOptions vo;
        vo.quantization = q;
        using H = ragpp::VectorIndex<ragpp::HashingEmbedder, ragpp::Hnsw>;
        H one(ragpp::HashingEmbedder(ho), vo, hnsw), two(ragpp::HashingEmbedder(ho), vo, hnsw);
        one.add_vectors(ids, rows, 1);
        two.add_vectors(ids, rows, 2);
        const auto& a = one.graph();
        const auto& b = two.graph();
        REQUIRE(a.slots() == b.slots());
        CHECK(a.entry() == b.entry());
        std::size_t differ = 0;
        for (std::uint32_t s = 0; s < a.slots(); ++s) {
            REQUIRE(a.level(s) == b.level(s));
            for (int lc = 0; lc <= a.level(s); ++lc) {
                const std::uint32_t* x = a.list(s, lc);
                const std::uint32_t* y = b.list(s, lc);
                if (!std::equal(x, x + 1 + x[0], y)) ++differ;
            }
        }
        CHECK(differ == 0);
        for (Eigen::Index i = 0; i < 20; ++i) {
            const Eigen::VectorXf v = rows.row(i);
            CHECK(one.search_vector(v, 10) == two.search_vector(v, 10));
        }
    }
}

TEST_CASE("Concurrent: 4 readers and a writer on a Collection (BM25 + int8 vectors) see only sequential states",
          "[concurrency][concurrent][collection]") {
    // Seeded random adds, updates and removes of sources (each source is chunked into two).
    constexpr std::size_t initial = 40, writes = 40;
    const auto corpus = texts(2 * initial, 81);
    const auto extra = texts(2 * writes, 82);
    const auto qs = queries(12, 83);
    struct SourceOp {
        int kind = 0;  // 0 add, 1 update, 2 remove
        std::size_t source = 0;
    };
    std::vector<SourceOp> plan;
    {
        Lcg g{84};
        std::vector<std::size_t> present;
        for (std::size_t i = 0; i < initial; ++i) present.push_back(i);
        std::size_t next = initial;
        for (std::size_t s = 0; s < writes; ++s) {
            const std::uint32_t kind = g.next(3);
            if (kind == 0) {
                plan.push_back({0, next});
                present.push_back(next++);
            } else {
                const std::size_t at = g.next(static_cast<std::uint32_t>(present.size()));
                plan.push_back({static_cast<int>(kind), present[at]});
                if (kind == 2) present.erase(present.begin() + static_cast<std::ptrdiff_t>(at));
            }
        }
    }
    const auto write = [&](Docs& c, std::size_t s) {
        const SourceOp op = plan[s];
        switch (op.kind) {
            case 0: c.add(source(op.source, extra[2 * s], extra[2 * s + 1])); break;
            case 1: c.update(source(op.source, extra[2 * s], "common changed " + extra[2 * s + 1])); break;
            default: c.remove("notes/n" + std::to_string(op.source) + ".md"); break;
        }
    };
    const auto search = [&](const Docs& c, std::size_t q) {
        return signature(c.search(qs[q], 6, Filter::all(), Principal::with_groups({"g0", "g1"})));
    };
    const Docs initial_docs = make_collection(corpus);
    REQUIRE(initial_docs.source_count() == initial);
    const StressRun run = stress(initial_docs, writes, qs.size(), write, search);
    check_against_oracle(initial_docs, writes, qs.size(), write, search, run);
}

TEST_CASE("Concurrent: readers complete searches while the writer is stalled inside its write",
          "[concurrency][concurrent][never_wait]") {
    // The write blocks in its callback, first on the inactive copy (readers must keep
    // reading version 0), then, after the switch, on the old copy (readers must keep
    // reading version 1). Were readers to wait for the writer, no read would complete
    // while it is stalled: the stall gives up after 10 s and the test fails.
    using Index = BM25Index<ragpp::WhitespaceAnalyzer>;
    const auto corpus = texts(80, 91);
    const auto qs = queries(8, 92);
    Index index;
    for (std::size_t i = 0; i + 1 < corpus.size(); ++i)
        index.add_document(static_cast<ragpp::DocId>(i), Document{"doc" + std::to_string(i), corpus[i], {}});
    const auto search = [&](const Index& c, std::size_t q) { return signature(c.search(qs[q], 5)); };
    Index after = index;
    const Document added{"doc79", corpus[79] + " w1 w1 w1", {}};
    after.add_document(79, added);
    const Strings before_results = sequential([&](std::size_t q) { return search(index, q); }, qs.size());
    const Strings after_results = sequential([&](std::size_t q) { return search(after, q); }, qs.size());
    REQUIRE(before_results != after_results);

    Concurrent<Index> shared(index);
    std::atomic<int> phase{0};  // 1: stalled in the first application, 2: in the second, 3: done
    std::array<std::atomic<std::size_t>, 3> completed{};  // reads begun and ended in phase p
    std::atomic<std::size_t> wrong_version{0}, mismatches{0};
    std::atomic<bool> stop{false};
    std::vector<std::thread> pool;
    for (std::size_t t = 0; t < 3; ++t)
        pool.emplace_back([&, t] {
            for (std::size_t i = t; !stop.load(); ++i) {
                const std::size_t q = i % qs.size();
                const int p = phase.load();
                const auto [version, result] =
                    shared.read([&](const Index& c, std::uint64_t v) { return std::pair(v, search(c, q)); });
                if (result != (version == 0 ? before_results : after_results)[q]) mismatches.fetch_add(1);
                if ((p == 1 || p == 2) && phase.load() == p) {
                    if (version != static_cast<std::uint64_t>(p - 1)) wrong_version.fetch_add(1);
                    completed[static_cast<std::size_t>(p)].fetch_add(1);
                }
            }
        });
    bool stalled_too_long = false;
    int applications = 0;
    shared.write([&](Index& c) {
        ++applications;
        const int p = applications;  // 1 then 2
        const std::size_t base = completed[static_cast<std::size_t>(p)].load();
        phase.store(p);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (completed[static_cast<std::size_t>(p)].load() < base + 30) {
            if (std::chrono::steady_clock::now() > deadline) {
                stalled_too_long = true;
                break;
            }
            std::this_thread::sleep_for(std::chrono::microseconds(100));
        }
        phase.store(3);
        c.add_document(79, added);
    });
    stop.store(true);
    for (auto& th : pool) th.join();
    CHECK(applications == 2);
    CHECK_FALSE(stalled_too_long);
    CHECK(completed[1].load() >= 30);  // reads of version 0 while the write was being applied
    CHECK(completed[2].load() >= 30);  // reads of version 1 while the old copy was being written
    CHECK(wrong_version.load() == 0);
    CHECK(mismatches.load() == 0);
    CHECK(shared.version() == 1);
}

TEST_CASE("Concurrent: two writers and four readers: writes are serialised and never seen half made",
          "[concurrency][concurrent]") {
    // Each write appends two equal numbers (the version it makes): a reader must see a
    // vector of even size 2 * version whose pairs count up from 1.
    Concurrent<std::vector<std::uint64_t>> shared(std::vector<std::uint64_t>{});
    constexpr std::size_t per_writer = 300;
    std::atomic<std::size_t> torn{0}, reads{0};
    std::atomic<int> writers{2};
    std::latch start(6);
    std::vector<std::thread> pool;
    for (int w = 0; w < 2; ++w)
        pool.emplace_back([&] {
            start.arrive_and_wait();
            for (std::size_t i = 0; i < per_writer; ++i)
                shared.write([](std::vector<std::uint64_t>& v) {
                    const std::uint64_t n = v.size() / 2 + 1;
                    v.push_back(n);
                    v.push_back(n);
                });
            writers.fetch_sub(1);
        });
    for (int r = 0; r < 4; ++r)
        pool.emplace_back([&] {
            start.arrive_and_wait();
            do {
                const bool ok = shared.read([](const std::vector<std::uint64_t>& v, std::uint64_t version) {
                    if (v.size() != 2 * version) return false;
                    for (std::size_t i = 0; i < v.size(); ++i)
                        if (v[i] != i / 2 + 1) return false;
                    return true;
                });
                if (!ok) torn.fetch_add(1);
                reads.fetch_add(1);
            } while (writers.load() > 0);
        });
    for (auto& th : pool) th.join();
    CHECK(torn.load() == 0);
    CHECK(reads.load() > 0);
    CHECK(shared.version() == 2 * per_writer);
    CHECK(shared.read([](const auto& v) { return v.size(); }) == 4 * per_writer);
}

namespace {

/// Both copies of `c`: two empty writes switch to the other copy and back.
template <class T, class F>
std::pair<std::string, std::string> both_copies(Concurrent<T>& c, const F& show) {
    c.write([](T&) {});
    std::string a = c.read(show);
    c.write([](T&) {});
    return {std::move(a), c.read(show)};
}

}  // namespace

TEST_CASE("Concurrent: a write that throws changes nothing, on either copy", "[concurrency][concurrent][errors]") {
    using Index = BM25Index<ragpp::WhitespaceAnalyzer>;
    const auto corpus = texts(20, 101);
    Index index;
    for (std::size_t i = 0; i < 10; ++i)
        index.add_document(static_cast<ragpp::DocId>(i), Document{"doc" + std::to_string(i), corpus[i], {}});
    const auto show = [](const Index& c) { return std::to_string(c.size()) + " " + signature(c.search("common w3", 20)); };
    const std::string initial = show(index);
    Concurrent<Index> c(index);

    SECTION("the callback throws after a change (basic guarantee): the copy is re-made from the other") {
        CHECK_THROWS_AS(c.write([&](Index& x) {
            x.add_document(10, Document{"doc10", corpus[10], {}});
            throw std::runtime_error("half made");
        }),
                        std::runtime_error);
        CHECK(c.version() == 0);
        CHECK(c.read(show) == initial);
        const auto [a, b] = both_copies(c, show);
        CHECK(a == initial);
        CHECK(b == initial);
        CHECK(c.version() == 2);
    }
    SECTION("an index error with the strong guarantee: no copy needed, nothing changed") {
        CHECK_THROWS_AS(c.write([&](Index& x) { x.add_document(3, Document{"again", "w1", {}}); },
                                WriteGuarantee::strong),
                        ragpp::DuplicateError);
        CHECK_THROWS_AS(c.write([&](Index& x) { x.remove_document(99); }, WriteGuarantee::strong),
                        ragpp::NotFoundError);
        CHECK(c.version() == 0);
        const auto [a, b] = both_copies(c, show);
        CHECK(a == initial);
        CHECK(b == initial);
    }
    SECTION("the second application throws: the write stands, the old copy catches up before the next write") {
        int calls = 0;
        c.write([&](Index& x) {
            x.add_document(10, Document{"doc10", corpus[10], {}});
            if (++calls == 2) throw std::runtime_error("second copy");
        });
        CHECK(calls == 2);
        CHECK(c.version() == 1);
        Index expected = index;
        expected.add_document(10, Document{"doc10", corpus[10], {}});
        CHECK(c.read(show) == show(expected));
        CHECK(show(expected) != initial);
        const auto [a, b] = both_copies(c, show);
        CHECK(a == show(expected));
        CHECK(b == show(expected));
    }
    SECTION("the write's result is the first application's; writing inside a read or a write is refused") {
        const auto size = c.write([&](Index& x) {
            x.add_document(10, Document{"doc10", corpus[10], {}});
            return x.size();
        });
        CHECK(size == 11);
        CHECK_THROWS_AS(c.read([&](const Index&) {
            c.write([](Index&) {});
            return 0;
        }),
                        ragpp::InvalidArgument);
        CHECK_THROWS_AS(c.write([&](Index&) { c.write([](Index&) {}); }), ragpp::InvalidArgument);
        CHECK(c.version() == 1);
        const auto [a, b] = both_copies(c, show);
        CHECK(a == b);
        CHECK(c.read([](const Index& x) { return x.size(); }) == 11);
    }
}

static_assert(std::is_copy_assignable_v<Docs> && std::is_copy_assignable_v<Hybrid> &&
              std::is_copy_assignable_v<Vectors> && std::is_copy_assignable_v<Bm25>);
