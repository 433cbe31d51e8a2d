// BM25 search with per-query parameters and a filter applied inside the index.
#include <ragpp/index/bm25.hpp>
#include <ragpp/text/analyzer.hpp>

#include <cstdio>
#include <memory>

int main() {
    ragpp::BM25Index<ragpp::EnglishAnalyzer> index(ragpp::BM25Params{ragpp::BM25Variant::lucene, 0.9, 0.4});
    index.add_document(0, {"mx200", "Contract MX-200\nNotice period: two months since the 2025 amendment.", {}});
    index.add_document(1, {"mx300", "Contract MX-300\nNotice period: one month.", {}});
    index.add_document(2, {"faq", "How to renew a contract and read its notice clauses.", {}});

    std::printf("query 'notice MX-200':\n");
    for (const auto& hit : index.search("notice MX-200", 10)) std::printf("  doc %u  %.4f\n", hit.id, hit.score);

    ragpp::BM25SearchOptions only_faq = ragpp::SearchOptions::only(ragpp::DocSet(3, {2}));
    only_faq.k1 = 1.2;  // chosen for this query, no re-indexing
    std::printf("same query, only doc 2 allowed, k1 = 1.2:\n");
    for (const auto& hit : index.search("notice MX-200", 10, only_faq)) std::printf("  doc %u  %.4f\n", hit.id, hit.score);

    index.remove_document(0);
    std::printf("after removing doc 0: %zu documents, %zu hits\n", index.size(), index.search("notice MX-200", 10).size());
    return 0;
}
