// A program outside ragpp's tree that uses only ragpp::core (no Eigen, no nlohmann_json
// on its include path): chunks Markdown, indexes it with two BM25 indexes nested in
// retrievers, filters, fuses and scores the result.
#include <ragpp/ragpp_core.hpp>

#if defined(EIGEN_WORLD_VERSION) || defined(NLOHMANN_JSON_VERSION_MAJOR)
#error "ragpp/ragpp_core.hpp included Eigen or nlohmann_json"
#endif

#include <cstdio>
#include <string>
#include <vector>

int main() {
    using Words = ragpp::BM25Index<ragpp::StandardAnalyzer>;
    using Inner = ragpp::Retriever<Words, Words>;
    ragpp::CollectionOptions everyone;
    everyone.access = ragpp::AccessPolicy(ragpp::Unlabeled::allow);
    ragpp::Collection<ragpp::Retriever<Inner, Words>> docs(
        ragpp::Retriever<Inner, Words>(Inner(Words{}, Words(ragpp::BM25Params{})), Words{}), everyone);
    docs.add({"contract.md", "# Contract\n\n## Notice\n\nThe notice period is three months.\n\n"
                             "## Rates\n\nThe rate is 4.5 percent a month.\n", {}});
    docs.add({"canteen.md", "# Canteen\n\nThe menu changes every month.\n", {}});

    ragpp::Retriever<Inner, Words>::search_options o;  // each level's own, typed
    o.weights = {1.0, 0.5};              // the outer retriever
    o.index<0>().weights = {1.0, 2.0};  // the inner one
    o.index<0>().rrf_k = 10;
    o.index<0>().index<1>().k1 = 1.5;   // its second BM25 index
    o.index<1>().b = 0.5;               // the outer one's BM25 index
    const auto results = docs.search("notice period", 2, ragpp::parse_filter("source=contract.md"),
                                     ragpp::Principal::system(), o);
    const std::string top = results.empty() ? "-" : results.front().document->id;

    const std::vector<std::string> ranking{top};
    const ragpp::Judgments<std::string> qrels{{"contract.md:3", 1.0}};
    const double recall = ragpp::recall_at_k<std::string>(ranking, qrels, 1).value_or(0.0);
    std::printf("consumer core ok: %s recall@1 %.1f\n", top.c_str(), recall);
    return top == "contract.md:3" && recall == 1.0 ? 0 : 1;
}
