#include <ragpp/embed/dispatch.hpp>

#include <catch2/catch.hpp>

#include "support.hpp"

TEST_CASE("with_embedder picks the embedder named on a command line", "[embed]") {
    auto describe = [](const auto& e) { return std::to_string(e.dimension()) + " " + std::string(e.name()); };
    CHECK(ragpp::with_embedder("hashing", {}, describe) == "256 " + ragpp::HashingEmbedder().name());
    const std::string e5 = ragpp::with_embedder("hashing", ragpp::RolePrefixes::e5(), describe);
    CHECK(e5.find("prefixes='query: ','passage: '") != std::string::npos);
    CHECK_THROWS_AS(ragpp::with_embedder("bert", {}, describe), ragpp::InvalidArgument);
    CHECK(ragpp::embedder_help.find("query: ") != std::string_view::npos);
}

TEST_CASE("with_embedder loads model2vec folders and word vector files", "[embed]") {
    const auto model = ragpp_test::require_shared("fixtures/model2vec/test-model-float32");
    const auto vectors = ragpp_test::require_shared("fixtures/sentencepiece/nl.wiki.bpe.vs1000.d25.w2v.txt");
    auto dim = [](const auto& e) { return e.dimension(); };
    CHECK(ragpp::with_embedder("model2vec:" + model.string(), {}, dim) == 2);
    CHECK(ragpp::with_embedder("vectors:" + vectors.string(), {}, dim) == 25);
    CHECK_THROWS_AS(ragpp::with_embedder("model2vec:/nonexistent", {}, dim), ragpp::NotFoundError);
}
