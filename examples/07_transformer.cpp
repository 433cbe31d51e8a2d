// A transformer embedder and a cross-encoder reranker, from Hugging Face folders.
//
// The folders used here are the tiny RANDOM models of tests/fixtures/transformer (made by
// scripts/gen_transformer_fixtures.py to test ragpp against PyTorch): the code is the one
// you write for bge-small-en-v1.5 or ms-marco-MiniLM-L-6-v2, but these weights know no
// language, so the ranking below means nothing. See docs/transformers.md.
#include <ragpp/embed/transformer.hpp>
#include <ragpp/index/bm25.hpp>
#include <ragpp/index/vector.hpp>
#include <ragpp/rerank/cross_encoder.hpp>
#include <ragpp/rerank/reranker.hpp>
#include <ragpp/retrieve/retriever.hpp>
#include <ragpp/text/analyzer.hpp>

#include <cstdio>
#include <string>
#include <vector>

int main() {
    const std::string models = std::string(RAGPP_SOURCE_DIR) + "/tests/fixtures/transformer/";

    ragpp::TransformerEmbedderOptions eo;
    eo.threads = 1;  // 0 (the default) uses every core
    auto embedder = ragpp::make_shared_embedder<ragpp::TransformerEmbedder>(models + "bert-mean", eo);
    std::printf("embedder: %zu dimensions, max %zu tokens\n", embedder.dimension(), embedder.get().max_seq_length());

    ragpp::Retriever retriever{ragpp::BM25Index<ragpp::EnglishAnalyzer>{}, ragpp::VectorIndex{embedder}};
    std::vector<ragpp::Document> docs{
        {"lto.md:1", "Set INTERPROCEDURAL_OPTIMIZATION to ON to enable link-time optimization.", {}},
        {"cmp0077.md:1", "Policy CMP0077: option() honors normal variables.", {}},
        {"bananas.md:1", "Bananas are rich in potassium.", {}}};
    retriever.add_documents(std::move(docs));  // one batched embed_batch call

    ragpp::CrossEncoderOptions co;
    co.threads = 1;
    const ragpp::CrossEncoderReranker reranker(models + "ce-bert", co);
    for (const auto& r : ragpp::search_reranked(retriever, "how do I enable link time optimization?", reranker, {50, 3}))
        std::printf("%-13s fused rank %zu  cross-encoder logit %+.3f\n", r.document->id.c_str(),
                    r.rerank ? r.rerank->fused_rank : 0, r.rerank ? r.rerank->reranker_score : 0.0);
}
