// 40: the reference story. Six short documents about a maintenance contract; the
// question asks for its notice period, and the model reads two passages. Fusion alone
// ranks the product sheet (which repeats the contract's name) above the amendment that
// changed the answer, so the amendment is left out; the full
// pipeline (fusion -> proximity reranking -> confidence -> evidence) brings the
// amendment into the evidence, cites both the contract and the amendment, and flags
// that they differ in date, so the answer can say "three months, two since 2025".
#include <ragpp/answer/abstain.hpp>
#include <ragpp/answer/evidence.hpp>
#include <ragpp/chunk/chunker.hpp>
#include <ragpp/embed/hashing.hpp>
#include <ragpp/index/bm25.hpp>
#include <ragpp/index/vector.hpp>
#include <ragpp/rerank/proximity.hpp>
#include <ragpp/rerank/reranker.hpp>
#include <ragpp/text/analyzer.hpp>

#include <cstdio>
#include <string>

int main() {
    using ragpp::Date;
    const struct {
        const char* path;
        const char* text;
        ragpp::Metadata meta;
    } sources[] = {
        {"contracts/mx200.md",
         "# Maintenance contract MX-200\n\n## Termination\n\nEither party may terminate the contract with a notice "
         "period of three months, sent by registered letter.\n",
         {{"date", Date::parse("2023-01-10")}}},
        {"contracts/mx200-amendment-1.md",
         "# Amendment 1 to contract MX-200\n\n## Article 7\n\nFrom 1 March 2025, the notice period is reduced to two "
         "months.\n",
         {{"date", Date::parse("2025-03-01")}}},
        {"products/mx200-sheet.md",
         "# MX-200 product sheet\n\nThe MX-200 maintenance contract covers the MX-200 press. Order the MX-200 "
         "maintenance contract with the MX-200; the maintenance contract MX-200 includes spare parts.\n",
         {}},
        {"procedures/badge.md",
         "# Badge procedure\n\nA lost badge is reported to reception; a new badge is issued within one day.\n", {}},
        {"contracts/mx200-invoice.md",
         "# Invoice 2024-118\n\nMaintenance contract MX-200, yearly fee: 4,800 euros, payable within thirty days.\n", {}},
        {"glossary.md",
         "# Glossary\n\n## Notice period\n\nThe time between announcing the end of a contract and its end.\n", {}},
    };

    ragpp::Retriever retriever{ragpp::BM25Index<ragpp::EnglishAnalyzer>{}, ragpp::VectorIndex<ragpp::HashingEmbedder>{}};
    for (const auto& s : sources)
        for (const auto& chunk : ragpp::chunk_document({s.path, s.text, s.meta}, {}))
            retriever.add_document(ragpp::document_with_raw_offset(chunk));

    const std::string question = "What is the notice period of the MX-200 maintenance contract?";
    std::printf("Question: %s\n\n", question.c_str());

    // The model reads two passages.
    std::printf("Fusion alone, top 2 (what the model would read without reranking):\n");
    const auto fused = retriever.search(question, 2);
    for (std::size_t i = 0; i < fused.size(); ++i)
        std::printf("  %zu. %-34s fused %.4f  bm25 #%zu  vector #%zu\n", i + 1, fused[i].document->id.c_str(),
                    fused[i].score, fused[i].trace[0].rank.value_or(0), fused[i].trace[1].rank.value_or(0));

    // The full pipeline: 10 fused candidates re-scored by term proximity and coverage, 2 kept.
    const ragpp::ProximityReranker<ragpp::EnglishAnalyzer> reranker{ragpp::EnglishAnalyzer{}};
    const auto final_results = ragpp::search_reranked(retriever, question, reranker, ragpp::RerankOptions{10, 2, 0.0});
    std::printf("\nFusion then reranking, top 2:\n");
    for (std::size_t i = 0; i < final_results.size(); ++i) {
        const auto& r = *final_results[i].rerank;
        std::printf("  %zu. %-34s reranker %.3f  (fused #%zu)\n", i + 1, final_results[i].document->id.c_str(),
                    r.reranker_score, r.fused_rank);
    }
    const double confidence = ragpp::confidence(ragpp::confidence_signals(final_results));
    std::printf("\nConfidence %.3f: %s\n\n", confidence, confidence >= 0.45 ? "answer from the evidence" : "refuse");

    ragpp::EvidenceOptions options;
    options.nonce_mode = ragpp::NonceMode::content_hash;  // reproducible output; the default draws it at random
    std::printf("%s", ragpp::EvidenceBuilder(options).build(question, final_results).render().c_str());
}
