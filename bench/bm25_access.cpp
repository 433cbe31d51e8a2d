// bench_bm25_access: the cost of non-interference. A synthetic corpus with a Zipfian
// vocabulary (as bench_bm25_synthetic: --docs documents of 50 to 150 terms from --vocab
// terms, P(rank r) ~ 1 / r^1.07, fixed seed), each document in one of --groups access
// groups or public (document d: group d % (groups + 1), the last being public). A reader
// of group 0 reads group 0 and the public documents. Top-10 queries of 2 to 5 terms
// (the 100 most frequent terms left out), three ways:
//   as_all          no restriction (what --as-all searches);
//   reader_leaky    the reader's documents only, with the whole index's statistics (the
//                   former behaviour: scores depend on documents it cannot read);
//   reader          the reader's documents with its own statistics
//                   (BM25SearchOptions::statistics = BM25Index::reader_statistics: N and
//                   lengths of its documents, document frequencies counted over them
//                   the first time a term is asked for, then kept in the statistics).
// Each way runs the queries twice; the second round is timed. For `reader` the first
// round's figures are printed too (cold_p50_ms...: every term's count made for the first
// time, the cost a reader pays once per term and index state).
// Prints one JSON line per way (p50/p99/mean latency, ratio to as_all), the time and
// memory of reader_statistics, and the check that `reader` returns exactly what an index
// built from the reader's documents alone returns (ids and scores, every query).
// With --fields 1 every document is a chunk as the engine indexes it: a title of 2 terms,
// a heading path of 2 headings, a source path of 2 terms, searched as BM25F with the
// default field weights (the engine's path: the reader's df counted in the merge of each
// term's body and field lists that a fielded search makes anyway).
// Usage: bench_bm25_access [--docs N] [--vocab V] [--groups G] [--queries Q] [--seed S]
//                          [--fields 0|1]
#include "bm25_bench.hpp"

#include <random>

int main(int argc, char** argv) try {
    const auto ndocs = static_cast<std::size_t>(bench::option(argc, argv, "docs", 1'000'000));
    const auto nvocab = static_cast<std::size_t>(bench::option(argc, argv, "vocab", 500'000));
    const auto ngroups = static_cast<std::size_t>(bench::option(argc, argv, "groups", 10));
    const auto nqueries = static_cast<std::size_t>(bench::option(argc, argv, "queries", 1'000));
    const auto seed = static_cast<std::uint64_t>(bench::option(argc, argv, "seed", 20260101));
    const bool fields = bench::option(argc, argv, "fields", 0) != 0;
    const bench::ZipfVocabulary zipf(nvocab, 1.07);
    std::mt19937_64 rng(seed);
    const ragpp::BM25Params params{ragpp::BM25Variant::lucene, 0.9, 0.4, 0.5, 0.25};
    auto readable = [&](std::size_t d) { const auto g = d % (ngroups + 1); return g == 0 || g == ngroups; };

    // The whole index, and (for the oracle) the reader's documents alone under the same ids.
    ragpp::BM25Index<ragpp::WhitespaceAnalyzer> all(params), own(params);
    auto reader_docs = std::make_shared<ragpp::DocSet>(ndocs);
    std::uniform_int_distribution<std::size_t> length(50, 150);
    std::vector<std::string> terms;
    const double b0 = bench::now_s();
    for (std::size_t d = 0; d < ndocs; ++d) {
        terms.clear();
        const std::size_t n = length(rng);
        for (std::size_t i = 0; i < n; ++i) terms.push_back(zipf.words[zipf.draw(rng, 0)]);
        ragpp::Document chunk;
        if (fields) {
            auto w = [&] { return zipf.words[zipf.draw(rng, 0)]; };
            for (const auto& t : terms) chunk.text += t + ' ';
            chunk.metadata["title"] = w() + " " + w();
            chunk.metadata["heading_path"] = std::vector<std::string>{w(), w()};
            chunk.metadata["source"] = "notes/" + w() + "/" + w() + ".md";
        }
        const auto id = static_cast<ragpp::DocId>(d);
        if (fields) all.add_document(id, chunk);
        else all.add_terms(id, terms);
        if (readable(d)) {
            if (fields) own.add_document(id, chunk);
            else own.add_terms(id, terms);
            reader_docs->set(static_cast<ragpp::DocId>(d));
        }
    }
    all.shrink_to_fit();
    own.shrink_to_fit();
    const double build_s = bench::now_s() - b0;
    std::vector<std::vector<std::string>> queries;
    std::uniform_int_distribution<std::size_t> qlen(2, 5);
    for (std::size_t q = 0; q < nqueries; ++q) {
        std::vector<std::string> t;
        const std::size_t n = qlen(rng);
        while (t.size() < n) {
            auto w = zipf.words[zipf.draw(rng, 100)];
            if (std::find(t.begin(), t.end(), w) == t.end()) t.push_back(std::move(w));
        }
        queries.push_back(std::move(t));
    }

    const double s0 = bench::now_s();
    const auto stats = std::make_shared<const ragpp::ReaderStatistics>(all.reader_statistics(reader_docs));
    const double stats_ms = (bench::now_s() - s0) * 1e3;

    ragpp::BM25SearchOptions as_all, leaky, reader;
    leaky.allowed = reader_docs;
    reader.allowed = reader_docs;
    reader.statistics = stats;
    std::map<std::string, double> p50;
    std::size_t mismatches = 0;
    for (const auto& [name, options] : {std::pair<const char*, const ragpp::BM25SearchOptions*>{"as_all", &as_all},
                                        {"reader_leaky", &leaky}, {"reader", &reader}}) {
        std::vector<double> ms, cold;
        for (int round = 0; round < 2; ++round) {  // the first round warms the caches, the second is timed
            if (round == 1) cold = ms;
            ms.clear();
            for (std::size_t q = 0; q < queries.size(); ++q) {
                const double t0 = bench::now_s();
                const auto hits = all.search_terms(queries[q], 10, *options);
                ms.push_back((bench::now_s() - t0) * 1e3);
                if (round == 0 && options == &reader && hits != own.search_terms(queries[q], 10)) ++mismatches;
            }
        }
        double mean = 0;
        for (double v : ms) mean += v;
        mean /= static_cast<double>(ms.size());
        p50[name] = bench::quantile(ms, 0.5);
        nlohmann::json line{{"bench", "bm25_access"}, {"way", name}, {"docs", ndocs}, {"fields", fields}, {"groups", ngroups},
                            {"reader_docs", reader_docs->count()}, {"queries", queries.size()}, {"k", 10},
                            {"p50_ms", p50[name]}, {"p99_ms", bench::quantile(ms, 0.99)}, {"mean_ms", mean},
                            {"p50_ratio_to_as_all", p50[name] / p50["as_all"]}};
        if (options == &reader) {
            line["mismatches_vs_own_index"] = mismatches;
            line["cold_p50_ms"] = bench::quantile(cold, 0.5);
            line["cold_p99_ms"] = bench::quantile(cold, 0.99);
            line["cold_p50_ratio_to_as_all"] = bench::quantile(cold, 0.5) / p50["as_all"];
        }
        bench::print(line);
    }
    bench::print({{"bench", "bm25_access"}, {"build_s", build_s}, {"postings", all.posting_count()},
                  {"reader_statistics_ms", stats_ms},
                  {"vocabulary", stats->term_count_slots},
                  {"reader_statistics_bytes", sizeof(ragpp::ReaderStatistics) + (ndocs + 7) / 8 +
                                                  stats->term_count_slots * sizeof(std::uint32_t)}});
    return mismatches == 0 ? 0 : 1;
} catch (const std::exception& e) {
    std::fprintf(stderr, "bench_bm25_access: %s\n", e.what());
    return 1;
}
