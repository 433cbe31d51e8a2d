// nDCG@10 on SciFact (BEIR test split, 300 queries, 5,183 abstracts) for vector search
// with averaged GloVe word vectors (bench/glove_from_npm.sh), with the built-in
// HashingEmbedder, with BM25, and for the BM25 + GloVe hybrid (reciprocal rank fusion,
// k = 60) at a few fusion weights. One JSON line per configuration.
// Documents are "title text", as BEIR does. MTEB reports nDCG@10 = 0.296 on SciFact
// for the 300-dimensional GloVe average (average_word_embeddings_glove.6B.300d).
// Usage: bench_vector_scifact [--vectors FILE] [--data DIR]
//   FILE defaults to $RAGPP_CACHE/glove-6B-100d.w2v.txt (RAGPP_CACHE: ~/.cache/ragpp);
//   DIR to the shared data's scifact folder.
#include <ragpp/embed/hashing.hpp>
#include <ragpp/embed/word_vectors.hpp>
#include <ragpp/eval/metrics.hpp>
#include <ragpp/index/bm25.hpp>
#include <ragpp/index/vector.hpp>
#include <ragpp/io/beir.hpp>
#include <ragpp/retrieve/retriever.hpp>
#include <ragpp/text/analyzer.hpp>
#include <ragpp/text/stopwords.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

std::string arg(int argc, char** argv, const char* name, std::string fallback) {
    for (int i = 1; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
    return fallback;
}

struct Run {
    double index_ms = 0, query_ms = 0;
    std::vector<ragpp::RankedQuestion<std::string>> ranked;
};

/// Indexes the corpus in `index` (DocId = corpus position), runs every query.
template <class Index>
Run evaluate(Index& index, const ragpp::BeirCollection& c, const ragpp::SearchOptions& options = {}) {
    Run run;
    auto t0 = Clock::now();
    for (std::size_t i = 0; i < c.corpus.size(); ++i)
        index.add_document(static_cast<ragpp::DocId>(i),
                           ragpp::Document{c.corpus[i].id, c.corpus[i].title + " " + c.corpus[i].text, {}});
    run.index_ms = ms_since(t0);
    t0 = Clock::now();
    for (const auto& q : c.queries) {
        ragpp::RankedQuestion<std::string> r;
        for (const auto& hit : index.search(q.text, 100, options)) r.ranking.push_back(c.corpus[hit.id].id);
        r.judgments = c.qrels.at(q.id);
        run.ranked.push_back(std::move(r));
    }
    run.query_ms = ms_since(t0) / static_cast<double>(c.queries.size());
    return run;
}

void report(const char* config, const std::string& extra, const Run& run, const ragpp::BeirCollection& c) {
    std::printf(R"({"bench":"vector_scifact","config":"%s"%s,"docs":%zu,"queries":%zu,"ndcg_at_10":%.4f,"recall_at_100":%.4f,"index_ms":%.0f,"ms_per_query":%.3f})"
                "\n",
                config, extra.c_str(), c.corpus.size(), c.queries.size(), ragpp::mean_ndcg_at_k(run.ranked, 10).mean,
                ragpp::mean_recall_at_k(run.ranked, 100).mean, run.index_ms, run.query_ms);
    std::fflush(stdout);
}

/// The GloVe analysis: the standard analyzer without compound joining (GloVe's words
/// are lowercased, unstemmed, accent-free words), optionally without English stop words.
ragpp::CustomAnalyzer<> glove_analyzer(bool stop_words) {
    ragpp::AnalyzerOptions o;
    o.joined_form = false;
    o.english_possessive = true;
    if (stop_words) o.stop_words = &ragpp::text::english_stop_words();
    return ragpp::CustomAnalyzer<>(stop_words ? "glove-stop" : "glove", o);
}

}  // namespace

int main(int argc, char** argv) {
    const char* cache_env = std::getenv("RAGPP_CACHE");
    const char* home = std::getenv("HOME");
    const std::filesystem::path cache = cache_env ? cache_env : std::filesystem::path(home ? home : ".") / ".cache/ragpp";
    const std::filesystem::path vectors_path = arg(argc, argv, "--vectors", (cache / "glove-6B-100d.w2v.txt").string());
    const std::filesystem::path data = arg(argc, argv, "--data", std::string(RAGPP_SHARED_DIR) + "/data/scifact");
    if (!std::filesystem::exists(data / "corpus.jsonl")) {
        std::printf(R"({"bench":"vector_scifact","skipped":"no SciFact at %s"})" "\n", data.string().c_str());
        return 0;
    }
    const ragpp::BeirCollection c = ragpp::read_beir(data);

    {
        ragpp::VectorIndex<ragpp::HashingEmbedder> idx;
        report("hashing", R"(,"embedder":")" + idx.embedder().name() + "\"", evaluate(idx, c), c);
    }
    {
        ragpp::BM25Index<ragpp::EnglishAnalyzer> bm25;
        report("bm25", R"(,"analyzer":"english")", evaluate(bm25, c), c);
    }
    if (!std::filesystem::exists(vectors_path)) {
        std::printf(R"({"bench":"vector_scifact","config":"glove","skipped":"%s missing: run bench/glove_from_npm.sh"})" "\n",
                    vectors_path.string().c_str());
        return 0;
    }
    const auto t0 = Clock::now();
    auto wv = std::make_shared<const ragpp::WordVectors>(ragpp::WordVectors::load(vectors_path));
    const double load_ms = ms_since(t0);
    using Glove = ragpp::WordVectorEmbedder<ragpp::CustomAnalyzer<>>;
    for (bool stop : {false, true}) {
        ragpp::VectorIndex<Glove> idx(Glove(wv, glove_analyzer(stop)));
        char extra[256];
        std::snprintf(extra, sizeof extra, R"(,"vectors":"%s","words":%zu,"dim":%zu,"load_ms":%.0f,"stop_words":%s)",
                      vectors_path.filename().string().c_str(), wv->size(), wv->dimension(), load_ms, stop ? "true" : "false");
        report("glove_mean", extra, evaluate(idx, c), c);
    }
    // Hybrid: BM25 (english) + GloVe (stop words removed), RRF k = 60, 100 candidates each.
    for (const auto& w : std::vector<std::vector<double>>{{1.0, 1.0}, {1.0, 0.5}, {1.0, 0.25}, {0.5, 1.0}}) {
        ragpp::RetrieverOptions ro;
        ro.weights = w;
        ragpp::Retriever<ragpp::BM25Index<ragpp::EnglishAnalyzer>, ragpp::VectorIndex<Glove>> hybrid(
            ro, ragpp::BM25Index<ragpp::EnglishAnalyzer>{}, ragpp::VectorIndex<Glove>(Glove(wv, glove_analyzer(true))));
        char extra[128];
        std::snprintf(extra, sizeof extra, R"(,"weights":[%.2f,%.2f],"rrf_k":60,"candidates":%zu)", w[0], w[1], ro.candidates);
        report("hybrid_bm25_glove", extra, evaluate(hybrid, c), c);
    }
    return 0;
}
