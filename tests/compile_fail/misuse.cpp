// Misuse that the concepts reject at compile time, one case per RAGPP_MISUSE value
// (tests/compile_fail.cmake compiles each with -fsyntax-only; tests/CMakeLists.txt names
// the diagnostic each must give). Case `none` is the control: the same includes and
// flags, well-formed code, which must compile (so a failure above is the misuse's, not
// the harness's).
#include <ragpp/embed/hashing.hpp>
#include <ragpp/index/bm25.hpp>
#include <ragpp/index/vector.hpp>
#include <ragpp/rerank/proximity.hpp>
#include <ragpp/rerank/reranker.hpp>
#include <ragpp/retrieve/collection.hpp>
#include <ragpp/retrieve/retriever.hpp>
#include <ragpp/text/analyzer.hpp>

#include <string>
#include <vector>

namespace {

using Bm25 = ragpp::BM25Index<ragpp::StandardAnalyzer>;
using Vectors = ragpp::VectorIndex<ragpp::HashingEmbedder>;

/// Looks like an index, but its results have no score.
struct UnscoredIndex {
    struct Entry {
        ragpp::DocId id;
    };
    void add_document(ragpp::DocId, const ragpp::Document&) {}
    void remove_document(ragpp::DocId) {}
    [[nodiscard]] std::vector<Entry> search(std::string_view, std::size_t, const ragpp::SearchOptions&) const {
        return {};
    }
    [[nodiscard]] std::size_t size() const { return 0; }
};

/// An analyzer without name(): what it wrote into an index could not be checked on load.
struct NamelessAnalyzer {
    void analyze(std::string_view, std::vector<std::string>&) const {}
};

/// An embedder whose batch call is missing.
struct OneAtATimeEmbedder {
    [[nodiscard]] std::size_t dimension() const { return 4; }
    [[nodiscard]] Eigen::VectorXf embed(std::string_view, ragpp::Role) const { return Eigen::VectorXf::Zero(4); }
    [[nodiscard]] std::string name() const { return "one"; }
};

}  // namespace

int main() {
#if RAGPP_MISUSE_none
    ragpp::Retriever<Bm25, Vectors> retriever;
    ragpp::Collection<ragpp::Retriever<Bm25, Vectors>> collection;
    ragpp::Retriever<Bm25, Vectors>::search_options options = ragpp::SearchOptions::only(ragpp::DocSet(4));
    options.index<0>().k1 = 1.2;  // each layer's knobs on its own options
    options.index<1>().ef_search = 64;
    const auto results = retriever.search("query", 5, options);
    (void)retriever.index<0>().search("query", 5, ragpp::SearchOptions{});  // a filter alone suits any index
    (void)ragpp::rerank("query", results, ragpp::ProximityReranker(ragpp::StandardAnalyzer{}));
    return static_cast<int>(collection.retriever().size() + results.size());
#elif RAGPP_MISUSE_retriever_of_a_non_index
    ragpp::Retriever<Bm25, std::string> retriever;  // a string is no SearchIndex
#elif RAGPP_MISUSE_unscored_results
    ragpp::Retriever<Bm25, UnscoredIndex> retriever;  // results without a score cannot be fused
#elif RAGPP_MISUSE_empty_retriever
    ragpp::Retriever<> retriever;  // nothing to fuse
#elif RAGPP_MISUSE_nameless_analyzer
    ragpp::BM25Index<NamelessAnalyzer> index;
#elif RAGPP_MISUSE_embedder_without_batch
    ragpp::VectorIndex<OneAtATimeEmbedder> index;
#elif RAGPP_MISUSE_collection_of_an_index
    ragpp::Collection<Bm25> collection;  // a Collection stores documents: it needs a Retriever
#elif RAGPP_MISUSE_bm25_knob_on_the_fusion_level
    ragpp::Retriever<Bm25, Vectors>::search_options options;
    options.k1 = 1.2;  // k1 is the BM25 index's: options.index<0>().k1
#elif RAGPP_MISUSE_options_of_another_index
    // ef_search would be dropped unseen: another index's options do not convert
    (void)Bm25{}.search("query", 5, ragpp::VectorSearchOptions{});
#elif RAGPP_MISUSE_rerank_with_an_index
    ragpp::Retriever<Bm25, Vectors> retriever;
    (void)ragpp::rerank("query", retriever.search("query", 5), Bm25{});  // an index is no Reranker
#else
#error "tests/compile_fail/misuse.cpp: unknown RAGPP_MISUSE case"
#endif
    return 0;
}
