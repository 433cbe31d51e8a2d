#include <ragpp/embed/hashing.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

using ragpp::HashingEmbedder;
using ragpp::HashingOptions;
using ragpp::Role;

namespace {
float cosine(const Eigen::VectorXf& a, const Eigen::VectorXf& b) { return a.dot(b); }
}  // namespace

TEST_CASE("FNV-1a 64 matches the published test vectors", "[hashing]") {
    // Test vectors of the FNV reference page (isthe.com/chongo/tech/comp/fnv).
    CHECK(ragpp::detail::fnv1a64("") == 0xcbf29ce484222325ULL);
    CHECK(ragpp::detail::fnv1a64("a") == 0xaf63dc4c8601ec8cULL);
    CHECK(ragpp::detail::fnv1a64("foobar") == 0x85944171f73967e8ULL);
}

TEST_CASE("HashingEmbedder: one short word, computed by hand from the formula", "[hashing]") {
    HashingOptions o;
    o.dimension = 1 << 20;  // large: no collisions among three features
    o.min_n = 3;
    o.max_n = 3;
    o.word_weight = 1.0F;
    const HashingEmbedder e(o);
    // "Ab" -> word "ab"; "<ab>" has two 3-grams "<ab" and "ab>", each weight 1/sqrt(2).
    Eigen::VectorXf want = Eigen::VectorXf::Zero(static_cast<Eigen::Index>(o.dimension));
    auto add = [&](std::string key, float w) {
        const std::uint64_t h = ragpp::detail::mix64(ragpp::detail::fnv1a64(key));
        want[static_cast<Eigen::Index>(h % o.dimension)] += (h >> 63) ? -w : w;
    };
    add(std::string("w\x1f") + "ab", 1.0F);
    add(std::string("c\x1f") + "<ab", 1.0F / std::sqrt(2.0F));
    add(std::string("c\x1f") + "ab>", 1.0F / std::sqrt(2.0F));
    REQUIRE(want.norm() == Approx(std::sqrt(2.0F)));
    want /= want.norm();
    const Eigen::VectorXf got = e.embed("Ab");
    CHECK((got - want).cwiseAbs().maxCoeff() < 1e-7F);
}

TEST_CASE("HashingEmbedder: deterministic, normalised, case-insensitive", "[hashing]") {
    const HashingEmbedder e;
    CHECK(e.dimension() == 256);
    const auto a = e.embed("Vector search at memory speed");
    CHECK(a.norm() == Approx(1.0F));
    CHECK(a == e.embed("Vector search at memory speed"));
    CHECK(a == e.embed("VECTOR   search, at memory-speed!"));  // punctuation separates, case folds
    CHECK(e.embed("").isZero());
    CHECK(e.embed(" ,;! ").isZero());
    // Pinned values: the hash is fixed, so these are the same on every platform.
    const auto p = e.embed("hello world");
    int nonzero = 0;
    for (Eigen::Index i = 0; i < p.size(); ++i) nonzero += p[i] != 0.0F ? 1 : 0;
    CHECK(nonzero >= 20);
    CHECK(HashingEmbedder::words("Élan ÉCOLE naïve") ==
          std::vector<std::u32string>{U"élan", U"école", U"naïve"});
}

TEST_CASE("HashingEmbedder: spelling variants and word parts are close, unrelated words are not", "[hashing]") {
    const HashingEmbedder e;
    const auto v = e.embed("vectorize");
    CHECK(cosine(v, e.embed("vectorise")) > 0.4F);
    CHECK(cosine(v, e.embed("vectorization")) > 0.3F);
    CHECK(std::abs(cosine(v, e.embed("banana"))) < 0.2F);
    // And what it cannot do: synonyms that share no letters.
    CHECK(std::abs(cosine(e.embed("car"), e.embed("automobile"))) < 0.2F);
}

TEST_CASE("HashingEmbedder: role prefixes change the query vector only when set", "[hashing]") {
    const HashingEmbedder plain;
    CHECK(plain.embed("x y", Role::query) == plain.embed("x y", Role::passage));
    HashingOptions o;
    o.prefixes = ragpp::RolePrefixes::e5();
    const HashingEmbedder e5(o);
    CHECK(e5.embed("x y", Role::query) != e5.embed("x y", Role::passage));
    CHECK(e5.embed("x y", Role::query) == plain.embed("query: x y", Role::query));
    CHECK(e5.name() != plain.name());
    const std::vector<std::string> texts{"alpha", "beta gamma", ""};
    const ragpp::RowMatrixXf m = e5.embed_batch(texts, Role::query);
    REQUIRE(m.rows() == 3);
    for (Eigen::Index i = 0; i < 3; ++i) CHECK(m.row(i).transpose() == e5.embed(texts[static_cast<std::size_t>(i)], Role::query));
}

TEST_CASE("HashingEmbedder: invalid options are rejected", "[hashing]") {
    HashingOptions o;
    o.dimension = 0;
    CHECK_THROWS_AS(HashingEmbedder(o), ragpp::InvalidArgument);
    o = {};
    o.min_n = 6;
    o.max_n = 3;
    CHECK_THROWS_AS(HashingEmbedder(o), ragpp::InvalidArgument);
    o = {};
    o.word_weight = -1.0F;
    CHECK_THROWS_AS(HashingEmbedder(o), ragpp::InvalidArgument);
}

TEST_CASE("SharedEmbedder shares one embedder by ownership", "[hashing]") {
    auto shared = ragpp::make_shared_embedder<HashingEmbedder>();
    auto copy = shared;
    CHECK(shared.use_count() == 2);
    CHECK(copy.embed("abc", Role::query) == HashingEmbedder().embed("abc", Role::query));
    CHECK(copy.name() == HashingEmbedder().name());
    CHECK_THROWS_AS(ragpp::SharedEmbedder<HashingEmbedder>(nullptr), ragpp::InvalidArgument);
    static_assert(ragpp::Embedder<ragpp::SharedEmbedder<HashingEmbedder>>);
}
