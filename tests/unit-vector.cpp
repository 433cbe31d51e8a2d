#include <ragpp/embed/hashing.hpp>
#include <ragpp/index/vector.hpp>
#include <ragpp/retrieve/retriever.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
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

TEST_CASE("VectorIndex: quantized search returns exact scores and high recall", "[vector]") {
    const auto quant = GENERATE(Quantization::int8, Quantization::float16);
    const auto metric = GENERATE(Metric::inner_product, Metric::l2);
    const std::size_t n = 3000, dim = 64;
    const RowMatrixXf x = random_rows(n, dim, 21);
    const auto ids = shuffled_ids(n, 21);
    ragpp::VectorIndexOptions o = opts(metric, quant);
    o.rescore_factor = 3;
    o.min_rescore = 30;
    ragpp::VectorIndex<ParsedEmbedder> idx(ParsedEmbedder{dim}, o);
    idx.add_vectors(ids, x);
    const RowMatrixXf queries = random_rows(50, dim, 22);
    std::size_t found = 0;
    for (Eigen::Index i = 0; i < queries.rows(); ++i) {
        const Eigen::VectorXf q = queries.row(i).transpose();
        const auto approx = idx.search_vector(q, 10);
        const auto exact = idx.search_exact_vector(std::span<const float>(q.data(), dim), 10);
        REQUIRE(approx.size() == 10);
        for (const Hit& h : approx) {  // every returned score is the exact one
            const auto want = brute_force(idx.vector(h.id).transpose(), {h.id}, q, metric, 1);
            CHECK(h.score == Approx(want[0].score).margin(1e-3).epsilon(1e-4));
        }
        for (const Hit& h : exact)
            found += std::count_if(approx.begin(), approx.end(), [&](const Hit& a) { return a.id == h.id; });
    }
    const double recall = static_cast<double>(found) / (10.0 * static_cast<double>(queries.rows()));
    CHECK(recall >= 0.99);
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
