#include <ragpp/embed/dispatch.hpp>

#include <catch2/catch.hpp>

#include "support.hpp"

TEST_CASE("with_embedder picks the embedder named on a command line", "[embed]") {
    auto describe = [](const auto& e) { return std::to_string(e.dimension()) + " " + std::string(e.name()); };
    CHECK(ragpp::with_embedder("hashing", ragpp::EmbedderSettings{}, describe) == "256 " + ragpp::HashingEmbedder().name());
    const std::string e5 = ragpp::with_embedder("hashing", ragpp::RolePrefixes::e5(), describe);
    CHECK(e5.find("prefixes='query: ','passage: '") != std::string::npos);
    CHECK_THROWS_AS(ragpp::with_embedder("bert", ragpp::EmbedderSettings{}, describe), ragpp::InvalidArgument);
    const std::string help = ragpp::embedder_help();
    CHECK(help.find("query: ") != std::string::npos);
    for (const auto& kind : ragpp::embedder_kinds) CHECK(help.find(kind.name) != std::string::npos);
    std::size_t start = 0;  // wrapped: no line past 92 columns
    for (std::size_t nl; (nl = help.find('\n', start)) != std::string::npos; start = nl + 1) CHECK(nl - start <= 92);
}

TEST_CASE("with_embedder loads model2vec folders and word vector files", "[embed]") {
    const auto model = ragpp_test::require_shared("fixtures/model2vec/test-model-float32");
    const auto vectors = ragpp_test::require_shared("fixtures/sentencepiece/nl.wiki.bpe.vs1000.d25.w2v.txt");
    auto dim = [](const auto& e) { return e.dimension(); };
    CHECK(ragpp::with_embedder("model2vec:" + model.string(), ragpp::EmbedderSettings{}, dim) == 2);
    CHECK(ragpp::with_embedder("vectors:" + vectors.string(), ragpp::EmbedderSettings{}, dim) == 25);
    CHECK_THROWS_AS(ragpp::with_embedder("model2vec:/nonexistent", ragpp::EmbedderSettings{}, dim), ragpp::IoError);  // a missing model folder, as for transformer embedders (docs/errors.md)
}

TEST_CASE("with_embedder builds transformer embedders with the folder's prompts unless prefixes are given", "[embed]") {
    const std::string dir = std::string(RAGPP_SOURCE_DIR) + "/tests/fixtures/transformer/bert-max-bf16";
    auto name = [](const auto& e) { return std::string(e.name()); };
    // No prefixes given: the folder's config_sentence_transformers.json prompts apply.
    ragpp::EmbedderSettings s;
    s.threads = 1;
    const std::string folder = ragpp::with_embedder("transformer:" + dir, s, name);
    CHECK(folder.find("prefixes='query: ','passage: '") != std::string::npos);
    // Explicit prefixes replace them, and the name says so (an index built with one set
    // refuses the other).
    s.prefixes = ragpp::RolePrefixes{"Q: ", ""};
    const std::string own = ragpp::with_embedder("transformer:" + dir, s, name);
    CHECK(own.find("prefixes='Q: ',''") != std::string::npos);
    CHECK(own != folder);
    // int8 and float32 embed alike (cosine >= 0.99), and the progress callback runs.
    ragpp::EmbedderSettings q;
    q.int8 = true;
    std::size_t last = 0;
    q.progress = [&](std::size_t done, std::size_t) { last = done; };
    const std::vector<std::string> texts{"hello world", "The quick brown fox jumps over the lazy dog."};
    const auto a = ragpp::with_embedder("transformer:" + dir, q, [&](const auto& e) { return e.embed_batch(texts, ragpp::Role::passage); });
    const auto b = ragpp::with_embedder("transformer:" + dir, ragpp::EmbedderSettings{}, [&](const auto& e) { return e.embed_batch(texts, ragpp::Role::passage); });
    CHECK(last == texts.size());
    for (Eigen::Index i = 0; i < a.rows(); ++i)
        CHECK(a.row(i).dot(b.row(i)) / (a.row(i).norm() * b.row(i).norm()) >= 0.99f);
    CHECK_THROWS_AS(ragpp::with_embedder("transformer:/nonexistent", ragpp::EmbedderSettings{}, name), ragpp::Error);
}
