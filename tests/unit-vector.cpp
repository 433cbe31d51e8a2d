#include <ragpp/detail/cpu.hpp>
#include <ragpp/detail/nn.hpp>
#include <ragpp/embed/hashing.hpp>
#include <ragpp/index/vector.hpp>
#include <ragpp/retrieve/retriever.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "support.hpp"

using ragpp::DocId;
using ragpp::Hit;
using ragpp::Metric;
using ragpp::Quantization;
using ragpp::RowMatrixXf;
using ragpp::SearchOptions;

namespace {

/// An embedder for precomputed vectors: a fixed dimension; embed() parses "x y z".
struct ParsedEmbedder {
    std::size_t dim = 2;
    [[nodiscard]] std::size_t dimension() const { return dim; }
    [[nodiscard]] Eigen::VectorXf embed(std::string_view text, ragpp::Role) const {
        Eigen::VectorXf v = Eigen::VectorXf::Zero(static_cast<Eigen::Index>(dim));
        std::string s(text);
        std::size_t pos = 0;
        for (Eigen::Index i = 0; i < v.size() && pos < s.size(); ++i) {
            std::size_t used = 0;
            v[i] = std::stof(s.substr(pos), &used);
            pos += used;
        }
        return v;
    }
    [[nodiscard]] RowMatrixXf embed_batch(std::span<const std::string> texts, ragpp::Role role) const {
        return ragpp::embed_rows(*this, texts, role);
    }
    [[nodiscard]] std::string name() const { return "parsed:" + std::to_string(dim); }
};
static_assert(ragpp::Embedder<ParsedEmbedder>);
using Index = ragpp::VectorIndex<ParsedEmbedder>;
static_assert(ragpp::SearchIndex<Index>);
static_assert(ragpp::SearchIndex<ragpp::VectorIndex<ragpp::HashingEmbedder>>);

ragpp::VectorIndexOptions opts(Metric m, Quantization q = Quantization::none) {
    ragpp::VectorIndexOptions o;
    o.metric = m;
    o.quantization = q;
    return o;
}

RowMatrixXf random_rows(std::size_t n, std::size_t dim, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal;
    RowMatrixXf m(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(dim));
    for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = normal(rng);
    return m;
}

/// The obvious oracle: every score in double precision, sorted, filtered.
std::vector<Hit> brute_force(const RowMatrixXf& x, const std::vector<DocId>& ids, const Eigen::VectorXf& q, Metric metric,
                             std::size_t k, const ragpp::DocSet* allowed = nullptr) {
    std::vector<std::pair<double, DocId>> all;
    const Eigen::VectorXd qd = q.cast<double>();
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
        const DocId id = ids[static_cast<std::size_t>(i)];
        if (allowed && !allowed->test(id)) continue;
        const Eigen::VectorXd r = x.row(i).transpose().cast<double>();
        double s = 0;
        if (metric == Metric::inner_product) s = r.dot(qd);
        else if (metric == Metric::cosine) s = r.norm() > 0 && qd.norm() > 0 ? r.dot(qd) / (r.norm() * qd.norm()) : 0.0;
        else s = -(r - qd).squaredNorm();
        all.emplace_back(s, id);
    }
    std::sort(all.begin(), all.end(), [](auto& a, auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
    std::vector<Hit> out;
    for (std::size_t i = 0; i < std::min(k, all.size()); ++i) out.push_back(Hit{all[i].second, static_cast<float>(all[i].first)});
    return out;
}

void check_same(const std::vector<Hit>& got, const std::vector<Hit>& want) {
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        CHECK(got[i].id == want[i].id);
        CHECK(got[i].score == Approx(want[i].score).margin(1e-4).epsilon(1e-4));
    }
}

std::vector<DocId> shuffled_ids(std::size_t n, unsigned seed) {
    std::vector<DocId> ids(n);
    for (std::size_t i = 0; i < n; ++i) ids[i] = static_cast<DocId>(3 * i + 1);
    std::shuffle(ids.begin(), ids.end(), std::mt19937(seed));
    return ids;
}

}  // namespace

TEST_CASE("VectorIndex: scores computed by hand for the three metrics", "[vector]") {
    // x0 = (3, 4), x1 = (1, 0), x2 = (0, -2); query q = (1, 1).
    auto build = [](Metric m) {
        Index idx(ParsedEmbedder{}, opts(m));
        idx.add_document(0, {"a", "3 4", {}});
        idx.add_document(1, {"b", "1 0", {}});
        idx.add_document(2, {"c", "0 -2", {}});
        return idx;
    };
    const auto ip = build(Metric::inner_product).search("1 1", 3);
    REQUIRE(ip.size() == 3);
    CHECK(ip[0] == Hit{0, 7.0F});
    CHECK(ip[1] == Hit{1, 1.0F});
    CHECK(ip[2] == Hit{2, -2.0F});
    const auto cos = build(Metric::cosine).search("1 1", 3);
    CHECK(cos[0].id == 0);
    CHECK(cos[0].score == Approx(7.0 / (5.0 * std::sqrt(2.0))));
    CHECK(cos[1].score == Approx(1.0 / std::sqrt(2.0)));
    CHECK(cos[2].score == Approx(-1.0 / std::sqrt(2.0)));
    const auto l2 = build(Metric::l2).search("1 1", 3);
    CHECK(l2[0].id == 1);  // |(0,-1)|^2 = 1
    CHECK(l2[0].score == Approx(-1.0F));
    CHECK(l2[1].id == 2);  // |(-1,-3)|^2 = 10
    CHECK(l2[1].score == Approx(-10.0F));
    CHECK(l2[2].id == 0);  // |(2,3)|^2 = 13
    CHECK(l2[2].score == Approx(-13.0F));
    const auto top1 = build(Metric::l2).search("1 1", 1);
    CHECK(top1 == std::vector<Hit>{Hit{1, -1.0F}});
}

TEST_CASE("VectorIndex: L2 order by hand", "[vector]") {
    Index idx(ParsedEmbedder{}, opts(Metric::l2));
    idx.add_document(0, {"", "3 4", {}});
    idx.add_document(1, {"", "1 0", {}});
    idx.add_document(2, {"", "0 -2", {}});
    const auto hits = idx.search("1 1", 3);
    CHECK(hits == std::vector<Hit>{{1, -1.0F}, {2, -10.0F}, {0, -13.0F}});
}

TEST_CASE("VectorIndex: ties are broken by smaller DocId, whatever the insertion order", "[vector]") {
    Index idx(ParsedEmbedder{}, opts(Metric::inner_product));
    for (DocId id : {5U, 2U, 9U, 7U}) idx.add_vector(id, Eigen::Vector2f(1.0F, 2.0F));
    idx.add_vector(1, Eigen::Vector2f(0.0F, 0.0F));
    const auto hits = idx.search_vector(Eigen::Vector2f(1.0F, 1.0F), 3);
    CHECK(hits == std::vector<Hit>{{2, 3.0F}, {5, 3.0F}, {7, 3.0F}});
}

TEST_CASE("VectorIndex: bad input throws and stores nothing", "[vector]") {
    Index idx(ParsedEmbedder{3}, opts(Metric::cosine));
    idx.add_vector(4, Eigen::Vector3f(1, 2, 3));
    CHECK_THROWS_AS(idx.add_vector(5, Eigen::Vector2f(1, 2)), ragpp::DimensionError);
    CHECK_THROWS_WITH(idx.add_vector(5, Eigen::Vector2f(1, 2)), Catch::Contains("2 dimensions") && Catch::Contains("has 3"));
    CHECK_THROWS_AS(idx.add_vector(4, Eigen::Vector3f(1, 1, 1)), ragpp::DuplicateError);
    CHECK_THROWS_AS(idx.add_vector(6, Eigen::Vector3f(1, NAN, 1)), ragpp::InvalidArgument);
    CHECK_THROWS_AS(idx.search_vector(Eigen::Vector2f(1, 1), 3), ragpp::DimensionError);
    CHECK_THROWS_AS(idx.search_vector(Eigen::Vector3f(1, INFINITY, 1), 3), ragpp::InvalidArgument);
    CHECK_THROWS_AS(idx.remove_document(99), ragpp::NotFoundError);
    CHECK(idx.size() == 1);
    CHECK(idx.rows() == 1);
    // A batch with one duplicate id is refused as a whole.
    RowMatrixXf two(2, 3);
    two << 1, 0, 0, 0, 1, 0;
    const std::vector<DocId> dup{7, 4};
    CHECK_THROWS_AS(idx.add_vectors(dup, two), ragpp::DuplicateError);
    CHECK(idx.size() == 1);
    const std::vector<DocId> ok{7, 8};
    idx.add_vectors(ok, two);
    CHECK(idx.size() == 3);
    CHECK(idx.vector(7) == Eigen::Vector3f(1, 0, 0));
}

TEST_CASE("VectorIndex: flat search equals the brute-force oracle, filters never leak", "[vector]") {
    const auto metric = GENERATE(Metric::cosine, Metric::inner_product, Metric::l2);
    const std::size_t n = 700, dim = 37;
    const RowMatrixXf x = random_rows(n, dim, 7);
    const auto ids = shuffled_ids(n, 3);
    ragpp::VectorIndex<ParsedEmbedder> idx(ParsedEmbedder{dim}, opts(metric));
    idx.add_vectors(ids, x);
    const RowMatrixXf queries = random_rows(20, dim, 11);
    std::mt19937 rng(5);
    for (Eigen::Index qi = 0; qi < queries.rows(); ++qi) {
        const Eigen::VectorXf q = queries.row(qi).transpose();
        const std::size_t k = 1 + static_cast<std::size_t>(qi) * 3;
        check_same(idx.search_vector(q, k), brute_force(x, ids, q, metric, k));
        // Dense and sparse allowed sets (the two code paths).
        for (double p : {0.5, 0.05}) {
            ragpp::DocSet allowed(3 * n + 1);
            std::bernoulli_distribution keep(p);
            for (DocId id : ids)
                if (keep(rng)) allowed.set(id);
            const auto hits = idx.search_vector(q, k, SearchOptions::only(allowed));
            for (const Hit& h : hits) CHECK(allowed.test(h.id));
            check_same(hits, brute_force(x, ids, q, metric, k, &allowed));
        }
    }
}

TEST_CASE("VectorIndex: batch search equals single searches", "[vector]") {
    const auto metric = GENERATE(Metric::cosine, Metric::l2);
    const std::size_t n = 5000, dim = 24;  // more than one block of rows
    const RowMatrixXf x = random_rows(n, dim, 1);
    const auto ids = shuffled_ids(n, 2);
    ragpp::VectorIndex<ParsedEmbedder> idx(ParsedEmbedder{dim}, opts(metric));
    idx.add_vectors(ids, x);
    idx.remove_document(ids[10]);
    const RowMatrixXf queries = random_rows(9, dim, 4);
    ragpp::DocSet allowed = ragpp::DocSet::all(3 * n);
    allowed.reset(ids[20]);
    const auto so = SearchOptions::only(allowed);
    const auto batch = idx.search_batch(queries, 10, so);
    REQUIRE(batch.size() == 9);
    for (Eigen::Index i = 0; i < queries.rows(); ++i) {
        const Eigen::VectorXf q = queries.row(i).transpose();
        check_same(batch[static_cast<std::size_t>(i)], idx.search_vector(q, 10, so));
    }
}

TEST_CASE("VectorIndex: removal with compaction equals an index rebuilt without the removed", "[vector]") {
    const std::size_t n = 400, dim = 16;
    const RowMatrixXf x = random_rows(n, dim, 9);
    const auto ids = shuffled_ids(n, 9);
    ragpp::VectorIndexOptions o = opts(Metric::cosine, Quantization::int8);
    ragpp::VectorIndex<ParsedEmbedder> idx(ParsedEmbedder{dim}, o);
    idx.add_vectors(ids, x);
    std::set<DocId> removed;
    for (std::size_t i = 0; i < n; i += 3) {  // a third: compaction triggers on the way
        idx.remove_document(ids[i]);
        removed.insert(ids[i]);
    }
    CHECK(idx.size() == n - removed.size());
    CHECK(idx.rows() < n);  // compacted at least once
    ragpp::VectorIndex<ParsedEmbedder> fresh(ParsedEmbedder{dim}, o);
    for (std::size_t i = 0; i < n; ++i)
        if (!removed.count(ids[i])) fresh.add_vector(ids[i], Eigen::VectorXf(x.row(static_cast<Eigen::Index>(i)).transpose()));
    const RowMatrixXf queries = random_rows(10, dim, 10);
    for (Eigen::Index i = 0; i < queries.rows(); ++i) {
        const Eigen::VectorXf q = queries.row(i).transpose();
        const auto got = idx.search_vector(q, 15);
        CHECK(got == fresh.search_vector(q, 15));
        for (const Hit& h : got) CHECK(removed.count(h.id) == 0);
    }
    idx.compact();
    CHECK(idx.rows() == idx.size());
    CHECK_THROWS_AS(idx.remove_document(ids[0]), ragpp::NotFoundError);
    idx.add_vector(ids[0], Eigen::VectorXf(x.row(0).transpose()));  // an id may come back
    CHECK(idx.contains(ids[0]));
}

namespace {

/// Recall@k of `got` against the float32 oracle's `want` (their common ids over k).
std::size_t common_ids(const std::vector<Hit>& got, const std::vector<Hit>& want) {
    std::size_t found = 0;
    for (const Hit& h : want)
        found += static_cast<std::size_t>(std::count_if(got.begin(), got.end(), [&](const Hit& a) { return a.id == h.id; }));
    return found;
}

/// Clustered rows: 60 centres, each row a centre plus noise of a third of its norm
/// (close neighbours, hard for quantization).
RowMatrixXf clustered_rows(std::size_t n, std::size_t dim, unsigned seed) {
    const RowMatrixXf centres = random_rows(60, dim, seed);
    RowMatrixXf noise = random_rows(n, dim, seed + 1);
    for (Eigen::Index i = 0; i < noise.rows(); ++i) noise.row(i) = centres.row(i % 60) + noise.row(i) / 3.0F;
    return noise;
}

}  // namespace

TEST_CASE("VectorIndex: quantized rows only, recall@10 against the float32 index: float16 >= 0.99, int8 >= 0.98", "[vector]") {
    const auto quant = GENERATE(Quantization::int8, Quantization::float16);
    const auto metric = GENERATE(Metric::cosine, Metric::inner_product, Metric::l2);
    CAPTURE(ragpp::to_string(quant), ragpp::to_string(metric));
    const std::size_t n = 3000, dim = 64;
    const bool clustered = GENERATE(false, true);
    CAPTURE(clustered);
    const RowMatrixXf x = clustered ? clustered_rows(n, dim, 21) : random_rows(n, dim, 21);
    const auto ids = shuffled_ids(n, 21);
    Index exact(ParsedEmbedder{dim}, opts(metric));  // the oracle: float32 rows, exact flat search
    exact.add_vectors(ids, x);
    Index idx(ParsedEmbedder{dim}, opts(metric, quant));
    idx.add_vectors(ids, x);
    CHECK_THROWS_AS(idx.matrix(), ragpp::UnsupportedError);  // no float32 rows kept
    const RowMatrixXf queries = clustered ? clustered_rows(100, dim, 22) : random_rows(100, dim, 22);
    std::size_t found = 0;
    for (Eigen::Index i = 0; i < queries.rows(); ++i) {
        const Eigen::VectorXf q = queries.row(i).transpose();
        const auto approx = idx.search_vector(q, 10);
        REQUIRE(approx.size() == 10);
        found += common_ids(approx, exact.search_vector(q, 10));
        for (const Hit& h : approx) {  // scores: the dequantized rows' (vector(id)), close to float32's
            const auto want = brute_force(idx.vector(h.id).transpose(), {h.id}, q, metric, 1);
            if (metric != Metric::l2) CHECK(h.score == Approx(want[0].score).margin(1e-3).epsilon(1e-4));
            const auto f32 = brute_force(exact.vector(h.id).transpose(), {h.id}, q, metric, 1);
            CHECK(h.score == Approx(f32[0].score).margin(0.05).epsilon(0.02));
        }
    }
    const double recall = static_cast<double>(found) / (10.0 * static_cast<double>(queries.rows()));
    // int8 without float32 rows: the codes' rounding (a step of max|x_i| / 127) reorders
    // near ties; 0.984-0.992 on these rows (exact_rescore restores >= 0.99, tested below).
    CHECK(recall >= (quant == Quantization::int8 ? 0.98 : 0.99));
}

TEST_CASE("VectorIndex: quantized memory is 1/2 (float16) and about 1/4 (int8) of float32's", "[vector]") {
    const std::size_t n = 2000, dim = 256;
    const RowMatrixXf x = random_rows(n, dim, 23);
    const auto ids = shuffled_ids(n, 23);
    std::size_t bytes[3] = {};
    for (const Quantization quant : {Quantization::none, Quantization::float16, Quantization::int8}) {
        Index idx(ParsedEmbedder{dim}, opts(Metric::cosine, quant));
        idx.add_vectors(ids, x);
        bytes[static_cast<int>(quant)] = idx.memory_bytes();
    }
    INFO("bytes per vector: f32 " << bytes[0] / n << " f16 " << bytes[1] / n << " int8 " << bytes[2] / n);
    CHECK(bytes[0] >= n * dim * 4);  // the float32 rows are counted
    CHECK(bytes[1] < n * dim * 2 + n * 100);
    CHECK(bytes[2] < n * dim + n * 100);
    CHECK(bytes[2] * 3 < bytes[0]);
}

TEST_CASE("VectorIndex: a build by many batches grows its arrays geometrically and a single batch exactly", "[vector]") {
    // Oracle: the capacity schedule. memory_bytes() moves only when an array or the id map
    // reallocates; 200 batches of 10 rows must reallocate O(log) times (an exact reserve per
    // batch reallocates at every one: 200 moves, and a quadratic copy of the rows).
    const std::size_t batches = 200, per = 10, dim = 32;
    const auto quant = GENERATE(Quantization::none, Quantization::int8, Quantization::float16);
    const RowMatrixXf x = random_rows(batches * per, dim, 31);
    Index idx(ParsedEmbedder{dim}, opts(Metric::cosine, quant));
    // memory_bytes() less its per-entry estimate of the id map's nodes (which grows with
    // every row): what is left moves only when an array or the bucket table reallocates.
    auto reserved = [](const Index& i) { return i.memory_bytes() - i.size() * (sizeof(void*) + 2 * sizeof(std::uint64_t)); };
    std::size_t moves = 0, last = reserved(idx);
    for (std::size_t b = 0; b < batches; ++b) {
        std::vector<DocId> ids(per);
        for (std::size_t i = 0; i < per; ++i) ids[i] = static_cast<DocId>(b * per + i);
        idx.add_vectors(ids, x.middleRows(static_cast<Eigen::Index>(b * per), static_cast<Eigen::Index>(per)));
        const std::size_t now = reserved(idx);
        if (now != last) ++moves;
        last = now;
    }
    INFO("the reserved bytes changed " << moves << " times over " << batches << " batches");
    CHECK(moves <= 40);
    CHECK(idx.size() == batches * per);
    // Growth costs at most about half again the rows' bytes.
    const std::size_t row_bytes = quant == Quantization::none ? dim * 4 : quant == Quantization::int8 ? dim : dim * 2;
    CHECK(idx.memory_bytes() < batches * per * (row_bytes * 2 + 100));
    // One batch into an empty index reserves exactly: no more than a per-row overhead.
    Index once(ParsedEmbedder{dim}, opts(Metric::cosine, quant));
    std::vector<DocId> all(batches * per);
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<DocId>(i);
    once.add_vectors(all, x);
    CHECK(once.memory_bytes() < all.size() * (row_bytes + 100));
    // shrink_to_fit gives the growth back: the batched index then holds what the single
    // batch reserved exactly (the same arrays; the id map's bucket table may differ by the
    // prime its rehash picks, a few buckets).
    const std::size_t grown = idx.memory_bytes();
    idx.shrink_to_fit();
    INFO("grown " << grown << ", shrunk " << idx.memory_bytes() << ", one batch " << once.memory_bytes());
    CHECK(idx.memory_bytes() < grown);
    CHECK(idx.memory_bytes() <= once.memory_bytes() + 64 * sizeof(void*));
    CHECK(idx.memory_bytes() + 64 * sizeof(void*) >= once.memory_bytes());
    // reserve(total) up front: the same batches never move the arrays (memory_bytes less
    // the per-entry estimate stays where reserve put it).
    Index planned(ParsedEmbedder{dim}, opts(Metric::cosine, quant));
    planned.reserve(batches * per);
    const std::size_t after_reserve = reserved(planned);
    for (std::size_t b = 0; b < batches; ++b) {
        std::vector<DocId> ids(per);
        for (std::size_t i = 0; i < per; ++i) ids[i] = static_cast<DocId>(b * per + i);
        planned.add_vectors(ids, x.middleRows(static_cast<Eigen::Index>(b * per), static_cast<Eigen::Index>(per)));
        CHECK(reserved(planned) == after_reserve);
    }
    CHECK(planned.memory_bytes() <= once.memory_bytes() + 64 * sizeof(void*));
    // Same search results either way (the oracle for correctness of the grown arrays).
    const Eigen::VectorXf q = x.row(7).transpose();
    const auto a = idx.search_vector(q, 10), c = once.search_vector(q, 10), p = planned.search_vector(q, 10);
    REQUIRE(a.size() == c.size());
    REQUIRE(p.size() == c.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        CHECK(a[i].id == c[i].id);
        CHECK(p[i].id == c[i].id);
    }
}

TEST_CASE("VectorIndex: exact re-scoring from float32 rows on disk gives float32 scores", "[vector][persistence]") {
    const auto quant = GENERATE(Quantization::int8, Quantization::float16);
    const auto metric = GENERATE(Metric::cosine, Metric::l2);
    CAPTURE(ragpp::to_string(quant), ragpp::to_string(metric));
    ragpp_test::TempDir dir;
    const std::size_t n = 2000, dim = 48;
    const RowMatrixXf x = clustered_rows(n, dim, 25);
    const auto ids = shuffled_ids(n, 25);
    Index exact(ParsedEmbedder{dim}, opts(metric));
    exact.add_vectors(ids, x);
    auto o = opts(metric, quant);
    o.exact_rescore = true;
    CHECK_THROWS_AS(Index(ParsedEmbedder{dim}, o), ragpp::InvalidArgument);  // where do the rows go?
    o.exact_rows = dir.path / "work.f32";
    Index idx(ParsedEmbedder{dim}, o);
    idx.add_vectors(ids, x);
    idx.remove_document(ids[5]);
    exact.remove_document(ids[5]);
    CHECK(std::filesystem::file_size(o.exact_rows) == 64 + n * dim * 4);  // on disk, not in RAM
    CHECK(idx.memory_bytes() < n * dim * 2 + n * 100);
    const auto path = dir.path / "v.idx";
    idx.save(path);
    CHECK(std::filesystem::exists(Index::exact_path(path)));
    auto lo = opts(metric);
    lo.exact_rescore = true;
    const auto mapped = Index::load(path, ParsedEmbedder{dim}, lo, ragpp::OpenOptions{true, true});
    const RowMatrixXf queries = clustered_rows(40, dim, 26);
    std::size_t found = 0;
    for (Eigen::Index i = 0; i < queries.rows(); ++i) {
        const Eigen::VectorXf q = queries.row(i).transpose();
        const auto want = exact.search_vector(q, 10);
        for (const Index* index : std::initializer_list<const Index*>{&idx, &mapped}) {
            const auto got = index->search_vector(q, 10);
            REQUIRE(got.size() == 10);
            found += common_ids(got, want);
            for (const Hit& h : got) {  // every score is the float32 one
                const auto f32 = brute_force(exact.vector(h.id).transpose(), {h.id}, q, metric, 1);
                CHECK(h.score == Approx(f32[0].score).margin(1e-4).epsilon(1e-5));
            }
            check_same(index->search_exact_vector(std::span<const float>(q.data(), dim), 10), want);
        }
        CHECK(mapped.vector(want[0].id) == exact.vector(want[0].id));
    }
    CHECK(static_cast<double>(found) / (20.0 * static_cast<double>(queries.rows())) >= 0.99);
    // Adds after load: without exact_rows, refused; with it, the side file is copied there first.
    auto frozen = Index::load(path, ParsedEmbedder{dim}, lo);
    // The added row is near row 0 but not equal to it: an exact tie with ids[0] would be
    // ordered by rounding, which differs between SIMD kernels (RAGPP_SIMD=avx2).
    const Eigen::VectorXf added = (0.9F * x.row(0) + 0.1F * x.row(1)).transpose();
    CHECK_THROWS_AS(frozen.add_vector(100000, added), ragpp::UnsupportedError);
    CHECK_FALSE(frozen.contains(100000));
    lo.exact_rows = dir.path / "copy.f32";
    auto cow = Index::load(path, ParsedEmbedder{dim}, lo, ragpp::OpenOptions{true, false});
    cow.add_vector(100000, added);
    exact.add_vector(100000, added);
    CHECK_FALSE(cow.frozen());
    const Eigen::VectorXf q0 = x.row(0).transpose();
    check_same(cow.search_vector(q0, 5), exact.search_vector(q0, 5));
    CHECK(common_ids(cow.search_vector(q0, 5), {Hit{100000, 0.0F}}) == 1);  // the added row is found
    // A side file of another save, or none: refused by name.
    Index plain(ParsedEmbedder{dim}, opts(metric, quant));
    plain.add_vectors(ids, x);
    const auto other = dir.path / "other.idx";
    plain.save(other);
    CHECK_THROWS_WITH(Index::load(other, ParsedEmbedder{dim}, lo), Catch::Contains("other.idx") && Catch::Contains("saved without float32 rows"));
    idx.save(dir.path / "again.idx");
    std::filesystem::copy_file(Index::exact_path(dir.path / "again.idx"), Index::exact_path(path),
                               std::filesystem::copy_options::overwrite_existing);
    CHECK_THROWS_AS(Index::load(path, ParsedEmbedder{dim}, lo), ragpp::FormatError);
    CHECK_THROWS_WITH(Index::load(path, ParsedEmbedder{dim}, lo), Catch::Contains("v.idx.f32") && Catch::Contains("another save"));
    std::filesystem::resize_file(Index::exact_path(dir.path / "again.idx"), 64 + 100);
    CHECK_THROWS_WITH(Index::load(dir.path / "again.idx", ParsedEmbedder{dim}, lo), Catch::Contains("again.idx.f32"));
}

TEST_CASE("VectorIndex: mapped, read and in-memory indexes give identical results; writes copy first", "[vector][persistence]") {
    const auto quant = GENERATE(Quantization::none, Quantization::int8, Quantization::float16);
    CAPTURE(ragpp::to_string(quant));
    ragpp_test::TempDir dir;
    const std::size_t n = 1500, dim = 40;
    const RowMatrixXf x = random_rows(n, dim, 27);
    const auto ids = shuffled_ids(n, 27);
    Index idx(ParsedEmbedder{dim}, opts(Metric::l2, quant));
    idx.add_vectors(ids, x);
    for (std::size_t i = 0; i < 40; ++i) idx.remove_document(ids[i * 7]);
    const auto path = dir.path / "v.idx";
    idx.save(path);
    const auto read = Index::load(path, ParsedEmbedder{dim});
    const auto mapped = Index::load(path, ParsedEmbedder{dim}, {}, ragpp::OpenOptions{true, false});
    CHECK(read.frozen());
    CHECK_FALSE(read.mapped());
    CHECK(mapped.mapped());
    CHECK(mapped.mapped_bytes() == std::filesystem::file_size(path));
    CHECK(mapped.memory_bytes() < 4 * n);  // the rows stay in the mapped file
    CHECK(mapped.size() == idx.size());
    ragpp::DocSet allowed = ragpp::DocSet::all(3 * n + 1);
    allowed.reset(ids[3]);
    ragpp::DocSet few(3 * n + 1);
    for (std::size_t i = 0; i < 20; ++i) few.set(ids[100 + i]);
    const RowMatrixXf queries = random_rows(12, dim, 28);
    for (Eigen::Index i = 0; i < queries.rows(); ++i) {
        const Eigen::VectorXf q = queries.row(i).transpose();
        for (const SearchOptions& so : {SearchOptions{}, SearchOptions::only(allowed), SearchOptions::only(few)}) {
            const auto want = idx.search_vector(q, 10, so);
            CHECK(read.search_vector(q, 10, so) == want);
            CHECK(mapped.search_vector(q, 10, so) == want);
        }
    }
    CHECK(mapped.search_batch(queries, 7) == idx.search_batch(queries, 7));
    for (std::size_t i = 0; i < n; i += 97) {
        CHECK(mapped.contains(ids[i]) == idx.contains(ids[i]));
        if (idx.contains(ids[i])) CHECK(mapped.vector(ids[i]) == idx.vector(ids[i]));
    }
    CHECK_FALSE(mapped.contains(2));  // ids are 3i + 1
    // Writes after a mapped open: the arrays are copied into memory first, then the same as in memory.
    auto writable = Index::load(path, ParsedEmbedder{dim}, {}, ragpp::OpenOptions{true, false});
    CHECK_THROWS_AS(writable.remove_document(2), ragpp::NotFoundError);
    CHECK(writable.frozen());  // a failed call changes nothing
    writable.remove_document(ids[500]);
    idx.remove_document(ids[500]);
    writable.add_vector(5, Eigen::VectorXf(x.row(9).transpose()));
    idx.add_vector(5, Eigen::VectorXf(x.row(9).transpose()));
    CHECK_FALSE(writable.frozen());
    CHECK(writable.add_document(ragpp::Document{"", "", {}}) == idx.add_document(ragpp::Document{"", "", {}}));
    for (Eigen::Index i = 0; i < queries.rows(); ++i) {
        const Eigen::VectorXf q = queries.row(i).transpose();
        CHECK(writable.search_vector(q, 10) == idx.search_vector(q, 10));
    }
    // A truncated or corrupted mapped file: FormatError naming the file, with or without the checksum.
    const std::string bytes = ragpp_test::read_file(path);
    const auto bad = dir.path / "bad.idx";
    for (const bool verify : {true, false}) {
        for (std::size_t cut : {std::size_t{20}, bytes.size() / 2, bytes.size() - 1}) {
            std::ofstream(bad, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(cut));
            CHECK_THROWS_AS(Index::load(bad, ParsedEmbedder{dim}, {}, ragpp::OpenOptions{true, verify}), ragpp::FormatError);
            CHECK_THROWS_WITH(Index::load(bad, ParsedEmbedder{dim}, {}, ragpp::OpenOptions{true, verify}), Catch::Contains("bad.idx"));
        }
    }
    std::string flipped = bytes;
    flipped[bytes.size() - 3] = static_cast<char>(flipped[bytes.size() - 3] ^ 0x10);  // in the rows
    std::ofstream(bad, std::ios::binary | std::ios::trunc).write(flipped.data(), static_cast<std::streamsize>(flipped.size()));
    CHECK_THROWS_WITH(Index::load(bad, ParsedEmbedder{dim}, {}, ragpp::OpenOptions{true, true}),
                      Catch::Contains("bad.idx") && Catch::Contains("checksum"));
    // Unverified, a damaged id lookup is still caught (it bounds every lookup).
    std::string lookup = bytes;
    const std::size_t name_at = 36 + 4 + 4 + 8, n_at = name_at + 4 + 8 + 8 + 1 + 8;
    const std::size_t ids_at = (n_at + 8 + 63) / 64 * 64, by_id_at = (ids_at + 4 * idx.size() + 63) / 64 * 64;
    lookup[by_id_at + 2] = static_cast<char>(0x7F);
    std::ofstream(bad, std::ios::binary | std::ios::trunc).write(lookup.data(), static_cast<std::streamsize>(lookup.size()));
    CHECK_THROWS_WITH(Index::load(bad, ParsedEmbedder{dim}, {}, ragpp::OpenOptions{true, false}),
                      Catch::Contains("bad.idx") && Catch::Contains("id lookup entry 0 is not a row"));
}

TEST_CASE("VectorIndex: save and load round-trip, damaged files are refused by name", "[vector][persistence]") {
    ragpp_test::TempDir dir;
    const auto path = dir.path / "v.idx";
    const std::size_t n = 300, dim = 8;
    const RowMatrixXf x = random_rows(n, dim, 31);
    const auto ids = shuffled_ids(n, 31);
    ragpp::VectorIndex<ParsedEmbedder> idx(ParsedEmbedder{dim}, opts(Metric::l2, Quantization::int8));
    idx.add_vectors(ids, x);
    idx.remove_document(ids[0]);
    idx.save(path);
    const auto back = ragpp::VectorIndex<ParsedEmbedder>::load(path, ParsedEmbedder{dim});
    CHECK(back.size() == n - 1);
    CHECK(back.options().metric == Metric::l2);
    CHECK(back.options().quantization == Quantization::int8);
    const RowMatrixXf queries = random_rows(5, dim, 32);
    for (Eigen::Index i = 0; i < queries.rows(); ++i) {
        const Eigen::VectorXf q = queries.row(i).transpose();
        CHECK(back.search_vector(q, 20) == idx.search_vector(q, 20));
    }
    // Another embedder: refused.
    CHECK_THROWS_AS(ragpp::VectorIndex<ParsedEmbedder>::load(path, ParsedEmbedder{dim + 1}), ragpp::InvalidArgument);
    // Truncated and corrupted copies: FormatError naming the file; the original stays loadable.
    const std::string bytes = ragpp_test::read_file(path);
    const auto bad = dir.path / "bad.idx";
    for (std::size_t cut : {std::size_t{0}, std::size_t{5}, std::size_t{20}, bytes.size() / 2, bytes.size() - 1}) {
        std::ofstream(bad, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(cut));
        CHECK_THROWS_AS(ragpp::VectorIndex<ParsedEmbedder>::load(bad, ParsedEmbedder{dim}), ragpp::FormatError);
        CHECK_THROWS_WITH(ragpp::VectorIndex<ParsedEmbedder>::load(bad, ParsedEmbedder{dim}), Catch::Contains("bad.idx"));
    }
    std::string flipped = bytes;
    flipped[flipped.size() / 2] = static_cast<char>(flipped[flipped.size() / 2] ^ 0x10);
    std::ofstream(bad, std::ios::binary | std::ios::trunc).write(flipped.data(), static_cast<std::streamsize>(flipped.size()));
    CHECK_THROWS_WITH(ragpp::VectorIndex<ParsedEmbedder>::load(bad, ParsedEmbedder{dim}), Catch::Contains("checksum"));
    CHECK_THROWS_AS(ragpp::VectorIndex<ParsedEmbedder>::load(dir.path / "missing.idx", ParsedEmbedder{dim}), ragpp::IoError);
    // Saving into a missing folder fails with IoError and leaves the old file intact.
    CHECK_THROWS_AS(idx.save(dir.path / "no" / "such" / "dir.idx"), ragpp::IoError);
    CHECK(ragpp_test::read_file(path) == bytes);
}

TEST_CASE("VectorIndex plugs into a Retriever with the built-in HashingEmbedder", "[vector]") {
    ragpp::Retriever<ragpp::VectorIndex<ragpp::HashingEmbedder>> r;
    r.add_document({"d1", "Vectorized search over embeddings", {}});
    r.add_document({"d2", "Bananas are rich in potassium", {}});
    r.add_document({"d3", "Searching vectors quickly", {}});
    const auto res = r.search("vector search", 2);
    REQUIRE(res.size() == 2);
    // Both texts share word parts with the query ("vector", "search"); the banana does not.
    const std::set<std::string> top{res[0].document->id, res[1].document->id};
    CHECK(top == std::set<std::string>{"d1", "d3"});
}

TEST_CASE("VectorIndex: add_documents embeds in one batch and equals add_document", "[vector]") {
    std::vector<ragpp::Document> docs;
    for (int i = 0; i < 20; ++i) docs.push_back({"d" + std::to_string(i), "text number " + std::to_string(i * 7), {}});
    ragpp::VectorIndex<ragpp::HashingEmbedder> one(ragpp::HashingEmbedder{}), many(ragpp::HashingEmbedder{});
    std::vector<ragpp::DocId> ids;
    std::vector<const ragpp::Document*> ptrs;
    for (ragpp::DocId i = 0; i < docs.size(); ++i) {
        one.add_document(i, docs[i]);
        ids.push_back(i);
        ptrs.push_back(&docs[i]);
    }
    many.add_documents(ids, ptrs);
    const auto a = one.search("text number 21", 5), b = many.search("text number 21", 5);
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        CHECK(a[i].id == b[i].id);
        CHECK(a[i].score == Approx(b[i].score).margin(1e-6));
    }
    // A duplicate id anywhere in the batch: nothing is stored.
    std::vector<ragpp::DocId> dup{100, 5};
    std::vector<const ragpp::Document*> two{&docs[0], &docs[1]};
    CHECK_THROWS_AS(many.add_documents(dup, two), ragpp::DuplicateError);
    CHECK(many.size() == 20);
    CHECK_FALSE(many.contains(100));
}

TEST_CASE("VectorIndex: add_documents embeds a large batch in slices, all or nothing", "[vector]") {
    const std::size_t n = 2 * Index::embed_slice + 5;  // three embed_batch calls
    std::vector<ragpp::Document> docs;
    std::vector<DocId> ids;
    std::vector<const ragpp::Document*> ptrs;
    for (std::size_t i = 0; i < n; ++i) docs.push_back({"", std::to_string(i + 1) + " " + std::to_string(i % 13), {}});
    for (std::size_t i = 0; i < n; ++i) {
        ids.push_back(static_cast<DocId>(i));
        ptrs.push_back(&docs[i]);
    }
    ragpp_test::TempDir dir;
    Index one(ParsedEmbedder{}), many(ParsedEmbedder{});
    for (std::size_t i = 0; i < n; ++i) one.add_document(ids[i], docs[i]);
    many.add_documents(ids, ptrs);
    one.save(dir.path / "one.idx");
    many.save(dir.path / "many.idx");
    CHECK(ragpp_test::read_file(dir.path / "many.idx") == ragpp_test::read_file(dir.path / "one.idx"));

    // A text that cannot be embedded in the last slice: the slices stored before it are
    // taken back, and the index takes the batch afterwards.
    Index failing(ParsedEmbedder{});
    failing.add_document(static_cast<DocId>(n + 7), ragpp::Document{"", "3 4", {}});
    failing.save(dir.path / "before.idx");
    ragpp::Document bad{"", "not a number", {}};
    auto with_bad = ptrs;
    with_bad.back() = &bad;
    CHECK_THROWS(failing.add_documents(ids, with_bad));
    CHECK(failing.size() == 1);
    CHECK_FALSE(failing.contains(0));
    CHECK_FALSE(failing.contains(static_cast<DocId>(Index::embed_slice)));
    failing.save(dir.path / "after.idx");
    CHECK(ragpp_test::read_file(dir.path / "after.idx") == ragpp_test::read_file(dir.path / "before.idx"));
    failing.add_documents(ids, ptrs);
    CHECK(failing.size() == n + 1);
}

TEST_CASE("VectorIndex: any k, up to SIZE_MAX, returns every row without reserving k slots", "[vector]") {
    const std::size_t n = 50, dim = 8;
    const RowMatrixXf x = random_rows(n, dim, 41);
    const auto ids = shuffled_ids(n, 41);
    const RowMatrixXf queries = random_rows(3, dim, 42);
    for (const Quantization quant : {Quantization::none, Quantization::int8, Quantization::float16}) {
        Index idx(ParsedEmbedder{dim}, opts(Metric::inner_product, quant));
        idx.add_vectors(ids, x);
        idx.remove_document(ids[7]);
        for (Eigen::Index i = 0; i < queries.rows(); ++i) {
            const Eigen::VectorXf q = queries.row(i).transpose();
            // Quantized: the oracle scores the rows the index keeps (dequantized, vector(id)).
            RowMatrixXf kept(x.rows(), x.cols());
            for (Eigen::Index r = 0; r < x.rows(); ++r)
                kept.row(r) = r == 7 ? x.row(r) : RowMatrixXf(idx.vector(ids[static_cast<std::size_t>(r)]).transpose());
            const auto want = brute_force(kept, ids, q, Metric::inner_product, n);
            std::vector<Hit> live;
            for (const Hit& h : want)
                if (h.id != ids[7]) live.push_back(h);
            for (const std::size_t k : {std::size_t{1} << 40, std::numeric_limits<std::size_t>::max()}) {
                INFO("quantization " << ragpp::to_string(quant) << " k " << k);
                const auto got = idx.search_vector(q, k);
                CHECK(got.size() == n - 1);
                check_same(got, live);
                auto allowed = std::make_shared<ragpp::DocSet>();
                allowed->set(ids[3]);
                SearchOptions only;
                only.allowed = allowed;
                const auto one = idx.search_vector(q, k, only);
                REQUIRE(one.size() == 1);
                CHECK(one[0].id == ids[3]);
            }
        }
        const auto batch = idx.search_batch(RowMatrixXf(queries), std::numeric_limits<std::size_t>::max());
        REQUIRE(batch.size() == 3);
        for (const auto& hits : batch) CHECK(hits.size() == n - 1);
    }
}

TEST_CASE("VectorIndex: files of format 1 are refused, forged counts are FormatErrors before allocating", "[vector][persistence]") {
    // Written by main at 36f7c6d (format 1, magic "RAGPPVEC"), hashing embedder of dimension 4.
    const auto fixture = std::filesystem::path(RAGPP_SOURCE_DIR) / "tests/fixtures/index/vector-format1.bin";
    ragpp::HashingOptions ho;
    ho.dimension = 4;
    using Hashed = ragpp::VectorIndex<ragpp::HashingEmbedder>;
    CHECK_THROWS_AS(Hashed::load(fixture, ragpp::HashingEmbedder(ho)), ragpp::FormatError);
    CHECK_THROWS_WITH(Hashed::load(fixture, ragpp::HashingEmbedder(ho)),
                      Catch::Contains(fixture.string()) && Catch::Contains("was written by an older ragpp (vector index format 1;") &&
                          Catch::Contains("rebuild the index"));

    // Written by main at 3829e73 (format 2: float32 rows, unaligned), same embedder: refused the same way.
    const auto fixture2 = std::filesystem::path(RAGPP_SOURCE_DIR) / "tests/fixtures/index/vector-format2.bin";
    for (const bool mmap : {false, true})
        CHECK_THROWS_WITH(Hashed::load(fixture2, ragpp::HashingEmbedder(ho), {}, ragpp::OpenOptions{mmap, true}),
                          Catch::Contains(fixture2.string()) &&
                              Catch::Contains("was written by an older ragpp (vector index format 2; this build reads format 3)") &&
                              Catch::Contains("rebuild the index"));

    ragpp_test::TempDir dir;
    const std::size_t dim = 3;
    Index idx(ParsedEmbedder{dim});
    idx.add_vectors(std::vector<DocId>{4, 9}, random_rows(2, dim, 43));
    const auto path = dir.path / "v.idx";
    idx.save(path);
    const std::string good = ragpp_test::read_file(path);
    // Payload: u32 metric | u32 quantization | u64 dimension | str name (u32 + 8 bytes "parsed:3") |
    // u64 row bytes | u8 exact rows | u64 token | u64 n.
    const std::size_t name_at = 36 + 4 + 4 + 8, n_at = name_at + 4 + 8 + 8 + 1 + 8;
    REQUIRE(good.substr(name_at + 4, 8) == "parsed:3");
    auto forged = [&](std::size_t at, std::uint64_t v, int bytes) {
        // Little-endian bytes put with replace() (indexing a copy in a loop makes GCC 12 at
        // -O2 warn, wrongly, of a write past the string's end).
        auto little_endian = [](std::uint64_t x, int n) {
            std::string le(static_cast<std::size_t>(n), '\0');
            for (int i = 0; i < n; ++i) le[static_cast<std::size_t>(i)] = static_cast<char>((x >> (8 * i)) & 0xFF);
            return le;
        };
        std::string b = good;
        b.replace(at, static_cast<std::size_t>(bytes), little_endian(v, bytes));
        const std::string payload = b.substr(36);
        b.replace(28, 8, little_endian(ragpp::detail::fnv1a64(payload), 8));
        const auto p = dir.path / "forged.idx";
        std::ofstream(p, std::ios::binary | std::ios::trunc).write(b.data(), static_cast<std::streamsize>(b.size()));
        return p;
    };
    for (const std::uint64_t n : {std::uint64_t{1} << 31, std::uint64_t{1} << 62, ~std::uint64_t{0}}) {
        INFO("row count " << n);
        const auto p = forged(n_at, n, 8);
        CHECK_THROWS_AS(Index::load(p, ParsedEmbedder{dim}), ragpp::FormatError);
        CHECK_THROWS_WITH(Index::load(p, ParsedEmbedder{dim}),
                          Catch::Contains("forged.idx") && Catch::Contains("row count " + std::to_string(n) + " does not fit"));
    }
    CHECK_THROWS_WITH(Index::load(forged(name_at, 0xFFFFFFFFU, 4), ParsedEmbedder{dim}),
                      Catch::Contains("truncated while reading embedder name"));
    CHECK_THROWS_WITH(Index::load(forged(16, 4, 4), ParsedEmbedder{dim}), Catch::Contains("a newer ragpp (vector index format 4;"));
    CHECK(Index::load(path, ParsedEmbedder{dim}).size() == 2);
}

TEST_CASE("RAGPP_SIMD caps both kernel families alike (detail/cpu.hpp, read once)", "[vector][simd]") {
    namespace d = ragpp::detail;
    const char* env = std::getenv("RAGPP_SIMD");
    const std::string cap = env ? env : "";
    const auto vector_isa = d::simd::kernels().isa;
    const auto nn_isa = d::nn::active_isa();
    CHECK(d::simd_cap() == (cap == "scalar"   ? d::SimdCap::scalar
                            : cap == "avx2"   ? d::SimdCap::avx2
                            : cap == "avx512" ? d::SimdCap::avx512
                                              : d::SimdCap::none));
    if (cap == "scalar") {
        CHECK(vector_isa == d::simd::Isa::scalar);
        CHECK(nn_isa == d::nn::Isa::scalar);
    } else if (cap == "avx2") {
        CHECK(vector_isa != d::simd::Isa::avx512);
        CHECK_FALSE(d::nn::is_avx512(nn_isa));
    } else if (cap == "avx512") {  // AVX-512 kept, AMX's tiles not
        CHECK(nn_isa != d::nn::Isa::amx);
        CHECK(d::nn::is_avx512(nn_isa) == d::nn::supported(d::nn::Isa::avx512));
    }
    // Without a cap, the best this CPU runs, by the same probe.
    const auto& f = d::cpu_features();
    if (cap.empty()) {
        CHECK((vector_isa == d::simd::Isa::avx512) == d::simd::supported(d::simd::Isa::avx512));
        CHECK(d::nn::is_avx512(nn_isa) == (f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq && f.avx2 && f.fma));
        CHECK((nn_isa == d::nn::Isa::amx) == d::nn::supported(d::nn::Isa::amx));
    }
}
