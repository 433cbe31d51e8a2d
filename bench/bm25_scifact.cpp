// bench_bm25_scifact: BM25 on SciFact (5,183 documents, title + text, 300 test
// queries), english analyzer, lucene variant, k1 = 0.9, b = 0.4, one thread.
// Prints one JSON line per configuration: ragpp (MaxScore, and exhaustive), and
// Xapian (BM25Weight, same k1 and b, same analyzed documents and query terms) when
// built with libxapian.
//   build_s              indexing from analyzed terms (analysis excluded)
//   build_with_analysis_s indexing from text
//   qps_topK             queries per second from analyzed terms (analysis excluded)
//   qps_topK_with_analysis from query text (ragpp's analyzer in both engines)
//   ..._cpu               the same from the thread's CPU time (the machine may be shared)
// Each figure is the median of --repeat runs (default 7) over the 300 queries.
// Usage: bench_bm25_scifact [--data DIR] [--repeat N] [--analyzer english|standard]
#include "bm25_bench.hpp"

#include <ragpp/text/analyzer.hpp>

#ifdef RAGPP_BENCH_XAPIAN
#include <unistd.h>
#include <xapian.h>
#endif

namespace {

using Terms = std::vector<std::string>;

struct Input {
    ragpp::BeirCollection c;
    std::vector<Terms> doc_terms, query_terms;
    double analysis_s = 0;
};

struct Timing {
    double wall = 0, cpu = 0;  // medians, seconds
};

template <class F>
Timing measure(int repeat, F&& f) {
    std::vector<double> wall, cpu;
    for (int r = 0; r < repeat; ++r) {
        const double t0 = bench::now_s(), c0 = bench::cpu_now_s();
        f();
        wall.push_back(bench::now_s() - t0);
        cpu.push_back(bench::cpu_now_s() - c0);
    }
    return {bench::median(wall), bench::median(cpu)};
}

template <class F>
double median_seconds(int repeat, F&& f) {
    return measure(repeat, std::forward<F>(f)).wall;
}

template <class A>
void run_ragpp(const Input& in, const A& analyzer, const std::string& analyzer_name, int repeat) {
    using Index = ragpp::BM25Index<A>;
    const ragpp::BM25Params params{ragpp::BM25Variant::lucene, 0.9, 0.4, 0.5, 0.25};
    Index index(params, analyzer);
    const double build = median_seconds(repeat, [&] {
        index = Index(params, analyzer);
        for (std::size_t i = 0; i < in.doc_terms.size(); ++i) index.add_terms(static_cast<ragpp::DocId>(i), in.doc_terms[i]);
    });
    const double build_text = median_seconds(std::max(1, repeat / 2), [&] {
        Index fresh(params, analyzer);
        for (const auto& d : in.c.corpus) fresh.add_document({d.id, bench::document_text(d), {}});
    });
    const auto q = bench::evaluate(index, in.c);
    const double nq = static_cast<double>(in.query_terms.size());
    for (auto strategy : {ragpp::BM25Strategy::automatic, ragpp::BM25Strategy::exhaustive}) {
        nlohmann::json j{{"bench", "bm25_scifact"}, {"engine", "ragpp"},
                         {"strategy", strategy == ragpp::BM25Strategy::automatic ? "automatic" : "exhaustive"},
                         {"analyzer", analyzer_name}, {"variant", "lucene"}, {"k1", 0.9}, {"b", 0.4},
                         {"docs", in.c.corpus.size()}, {"queries", in.query_terms.size()},
                         {"analysis_s", in.analysis_s}, {"build_s", build}, {"build_with_analysis_s", build_text},
                         {"postings", index.posting_count()}, {"index_bytes", index.memory_bytes()},
                         {"ndcg@10", q.ndcg10}, {"recall@100", q.recall100}, {"repeat", repeat}};
        std::size_t sink = 0;
        for (std::size_t k : {std::size_t{10}, std::size_t{100}}) {
            const Timing terms_s = measure(repeat, [&] {
                for (const auto& t : in.query_terms) sink += index.search_terms(t, k, {}, strategy).size();
            });
            const Timing text_s = measure(repeat, [&] {
                for (const auto& qq : in.c.queries) {
                    Terms t;
                    analyzer.analyze(qq.text, t);
                    sink += index.search_terms(t, k, {}, strategy).size();
                }
            });
            const std::string key = "qps_top" + std::to_string(k);
            j[key] = nq / terms_s.wall;
            j[key + "_with_analysis"] = nq / text_s.wall;
            j[key + "_cpu"] = nq / terms_s.cpu;
            j[key + "_with_analysis_cpu"] = nq / text_s.cpu;
        }
        j["checksum"] = sink;
        bench::print(j);
    }
}

#ifdef RAGPP_BENCH_XAPIAN
// Xapian's term length limit is 245 bytes; longer terms are left out (counted).
constexpr std::size_t xapian_max_term = 240;

template <class A>
void run_xapian(const Input& in, const A& analyzer, const std::string& analyzer_name, int repeat) {
    const auto dir = std::filesystem::temp_directory_path() / ("ragpp-bench-xapian-" + std::to_string(::getpid()));
    std::size_t skipped = 0;
    auto build_db = [&] {
        std::filesystem::remove_all(dir);
        Xapian::WritableDatabase db(dir.string(), Xapian::DB_CREATE_OR_OVERWRITE | Xapian::DB_BACKEND_GLASS);
        skipped = 0;
        for (const auto& terms : in.doc_terms) {
            Xapian::Document doc;
            for (const auto& t : terms) {
                if (t.size() > xapian_max_term) {
                    ++skipped;
                    continue;
                }
                doc.add_term(t);
            }
            db.add_document(doc);
        }
        db.commit();
    };
    const double build = median_seconds(std::max(1, repeat / 2), build_db);
    Xapian::Database db(dir.string());
    Xapian::Enquire enquire(db);
    // BM25Weight(k1, k2, k3, b, min_normlen): k2 = 0 (no extra length term), k3 = 1,
    // min_normlen = 0 so short documents are normalised as in the other engines.
    enquire.set_weighting_scheme(Xapian::BM25Weight(0.9, 0, 1, 0.4, 0));
    enquire.set_docid_order(Xapian::Enquire::ASCENDING);
    auto query_of = [&](const Terms& terms) {
        std::vector<std::string> ok;
        for (const auto& t : terms)
            if (t.size() <= xapian_max_term) ok.push_back(t);
        return Xapian::Query(Xapian::Query::OP_OR, ok.begin(), ok.end());
    };
    // Quality, from the top 100.
    std::vector<ragpp::RankedQuestion<std::string>> set;
    for (std::size_t i = 0; i < in.query_terms.size(); ++i) {
        enquire.set_query(query_of(in.query_terms[i]));
        ragpp::RankedQuestion<std::string> rq;
        const auto mset = enquire.get_mset(0, 100);
        for (auto it = mset.begin(); it != mset.end(); ++it) rq.ranking.push_back(in.c.corpus[*it - 1].id);
        rq.judgments = in.c.qrels.at(in.c.queries[i].id);
        set.push_back(std::move(rq));
    }
    nlohmann::json j{{"bench", "bm25_scifact"}, {"engine", "xapian"}, {"version", Xapian::version_string()},
                     {"weighting", "BM25Weight(0.9, 0, 1, 0.4, 0)"}, {"backend", "glass"},
                     {"analyzer", analyzer_name}, {"docs", db.get_doccount()},
                     {"queries", in.query_terms.size()}, {"build_s", build}, {"terms_skipped", skipped},
                     {"ndcg@10", ragpp::mean_ndcg_at_k(set, 10).mean},
                     {"recall@100", ragpp::mean_recall_at_k(set, 100).mean}, {"repeat", repeat}};
    const double nq = static_cast<double>(in.query_terms.size());
    std::size_t sink = 0;
    for (Xapian::doccount k : {10U, 100U}) {
        const Timing terms_s = measure(repeat, [&] {
            for (const auto& t : in.query_terms) {
                enquire.set_query(query_of(t));
                sink += enquire.get_mset(0, k).size();
            }
        });
        const Timing text_s = measure(repeat, [&] {
            for (const auto& qq : in.c.queries) {
                Terms t;
                analyzer.analyze(qq.text, t);
                enquire.set_query(query_of(t));
                sink += enquire.get_mset(0, k).size();
            }
        });
        const std::string key = "qps_top" + std::to_string(k);
        j[key] = nq / terms_s.wall;
        j[key + "_with_analysis"] = nq / text_s.wall;
        j[key + "_cpu"] = nq / terms_s.cpu;
        j[key + "_with_analysis_cpu"] = nq / text_s.cpu;
    }
    j["checksum"] = sink;
    bench::print(j);
    std::filesystem::remove_all(dir);
}
#endif

}  // namespace

int main(int argc, char** argv) try {
    const auto data = bench::data_dir(argc, argv) / "scifact";
    const int repeat = static_cast<int>(bench::option(argc, argv, "repeat", 7));
    std::string analyzer_name = "english";
    for (int i = 1; i + 1 < argc; ++i)
        if (std::string(argv[i]) == "--analyzer") analyzer_name = argv[i + 1];
    if (!std::filesystem::exists(data / "corpus.jsonl")) {
        std::fprintf(stderr, "bench_bm25_scifact: %s is missing\n", data.c_str());
        return 2;
    }
    Input in;
    in.c = ragpp::read_beir(data);
    return ragpp::with_analyzer(analyzer_name, [&](auto analyzer) {
        in.analysis_s = median_seconds(3, [&] {
            in.doc_terms.clear();
            for (const auto& d : in.c.corpus) in.doc_terms.push_back(ragpp::analyze(analyzer, bench::document_text(d)));
        });
        for (const auto& q : in.c.queries) in.query_terms.push_back(ragpp::analyze(analyzer, q.text));
        run_ragpp(in, analyzer, analyzer_name, repeat);
#ifdef RAGPP_BENCH_XAPIAN
        run_xapian(in, analyzer, analyzer_name, repeat);
#endif
        return 0;
    });
} catch (const std::exception& e) {
    std::fprintf(stderr, "bench_bm25_scifact: %s\n", e.what());
    return 1;
}
