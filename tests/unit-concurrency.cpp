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
// This file is the one the ThreadSanitizer preset builds (CMakePresets.json `tsan`,
// scripts/test.sh), where a data race fails the test even when the results happen to match.
#include <ragpp/embed/hashing.hpp>
#include <ragpp/index/bm25.hpp>
#include <ragpp/index/vector.hpp>
#include <ragpp/retrieve/collection.hpp>
#include <ragpp/retrieve/retriever.hpp>
#include <ragpp/text/analyzer.hpp>
#include <ragpp/text/whitespace.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <latch>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
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
