// bench_bm25_quality: BM25 (lucene, k1 = 0.9, b = 0.4, title + text) nDCG@10,
// recall@100 and MRR@10 on the shared collections, one JSON line per collection:
//   scifact (english, and standard for comparison), cranfield (english),
//   piaf-v1.0-fr (french), jaquad-dev-ja (cjk).
// Usage: bench_bm25_quality [--data DIR]
#include "bm25_bench.hpp"

#include <ragpp/text/analyzer.hpp>

int main(int argc, char** argv) try {
    const auto data = bench::data_dir(argc, argv);
    const std::vector<std::pair<std::string, std::string>> runs{{"scifact", "english"},
                                                                {"scifact", "standard"},
                                                                {"cranfield", "english"},
                                                                {"piaf-v1.0-fr", "french"},
                                                                {"jaquad-dev-ja", "cjk"}};
    for (const auto& [collection, analyzer] : runs) {
        if (!std::filesystem::exists(data / collection / "corpus.jsonl")) {
            std::fprintf(stderr, "skipping %s: %s missing\n", collection.c_str(), (data / collection).c_str());
            continue;
        }
        const auto c = ragpp::read_beir(data / collection);
        ragpp::with_analyzer(analyzer, [&](auto a) {
            ragpp::BM25Index<decltype(a)> index(ragpp::BM25Params{ragpp::BM25Variant::lucene, 0.9, 0.4, 0.5, 0.25}, a);
            const double t0 = bench::now_s();
            for (const auto& d : c.corpus) index.add_document({d.id, bench::document_text(d), {}});
            const double build = bench::now_s() - t0;
            const auto q = bench::evaluate(index, c);
            bench::print({{"bench", "bm25_quality"}, {"engine", "ragpp"}, {"collection", collection},
                          {"analyzer", analyzer}, {"variant", "lucene"}, {"k1", 0.9}, {"b", 0.4},
                          {"docs", c.corpus.size()}, {"queries", q.queries}, {"build_s", build},
                          {"ndcg@10", q.ndcg10}, {"recall@100", q.recall100}, {"mrr@10", q.mrr10}});
            return 0;
        });
    }
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "bench_bm25_quality: %s\n", e.what());
    return 1;
}
