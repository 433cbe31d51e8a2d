// 03: hybrid search in twenty lines (the README's example): BM25 finds the exact
// identifier, vector search the paraphrase, reciprocal rank fusion merges them and the
// trace says which index found what.
#include <ragpp/embed/hashing.hpp>
#include <ragpp/index/bm25.hpp>
#include <ragpp/index/vector.hpp>
#include <ragpp/retrieve/retriever.hpp>
#include <ragpp/text/analyzer.hpp>
#include <cstdio>

int main() {
    ragpp::Retriever retriever{ragpp::BM25Index<ragpp::EnglishAnalyzer>{},
                               ragpp::VectorIndex<ragpp::HashingEmbedder>{}};
    retriever.add_document({"mx200.md:1", "Contract MX-200: the notice period is three months.", {}});
    retriever.add_document({"ora.md:1", "ORA-01555 snapshot too old: increase the undo retention.", {}});
    retriever.add_document({"leave.md:1", "Terminating the agreement requires written notification.", {}});
    for (const auto& r : retriever.search("MX200 notice", 2))
        std::printf("%-12s %.4f  bm25 #%zu  vector #%zu\n", r.document->id.c_str(), r.score,
                    r.trace[0].rank.value_or(0), r.trace[1].rank.value_or(0));
}
