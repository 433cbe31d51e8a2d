// Benchmark: text analysis throughput on one core, in MB of UTF-8 input per second.
//
//   bench_analyze [--reps N] [--data DIR]
//
// For each collection of DIR (default: the shared data folder) and each analyzer,
// analyzes every document (title + " " + text) N times (default 5) and prints one JSON
// line with the median CPU and wall-clock times and the throughput (mb_per_s from the
// CPU time of the analyzing thread, mb_per_s_wall from the wall clock). Xapian's TermGenerator (with its
// Snowball stemmer, default STEM_SOME) runs on the same texts as a peer when
// installed. When the BM25 index (ragpp/index/bm25.hpp) is present, it also prints the
// nDCG@10 of Lucene-variant BM25 (k1 = 0.9, b = 0.4, Anserini's BEIR settings) on the
// test queries: SciFact with the english analyzer and its variants (what the
// identifier terms change), PIAF with french, JaQuAD with cjk (and standard on both). Targets: standard >= 40 MB/s, english >= 20 MB/s.
#include <ragpp/io/beir.hpp>
#include <ragpp/text/analyzer.hpp>

#if __has_include(<ragpp/index/bm25.hpp>)
#include <ragpp/eval/metrics.hpp>
#include <ragpp/index/bm25.hpp>
#define RAGPP_BENCH_BM25 1
#endif
#ifdef RAGPP_BENCH_XAPIAN
#include <xapian.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

namespace {

struct Corpus {
    std::string name;
    std::vector<std::string> texts;
    std::size_t bytes = 0;
};

double thread_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

/// Median wall-clock and median CPU time (this thread) of `reps` runs of f. On a
/// shared machine the CPU time is the fairer "one core" figure; both are printed.
struct Timing {
    double wall, cpu;
};
template <class F>
Timing median_seconds(int reps, F&& f) {
    std::vector<double> wall, cpu;
    for (int r = 0; r < reps; ++r) {
        const auto start = std::chrono::steady_clock::now();
        const double cpu_start = thread_cpu_seconds();
        f();
        cpu.push_back(thread_cpu_seconds() - cpu_start);
        wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(wall.begin(), wall.end());
    std::sort(cpu.begin(), cpu.end());
    return {wall[wall.size() / 2], cpu[cpu.size() / 2]};
}

void print_line(const Corpus& c, const char* system, std::string_view analyzer, int reps, Timing t,
                std::size_t terms, double target) {
    const double mb = static_cast<double>(c.bytes) / 1e6;
    std::printf(
        "{\"bench\":\"analyze\",\"collection\":\"%s\",\"system\":\"%s\",\"analyzer\":\"%.*s\",\"docs\":%zu,"
        "\"bytes\":%zu,\"terms\":%zu,\"reps\":%d,\"median_cpu_s\":%.4f,\"median_wall_s\":%.4f,\"mb_per_s\":%.1f,"
        "\"mb_per_s_wall\":%.1f",
        c.name.c_str(), system, static_cast<int>(analyzer.size()), analyzer.data(), c.texts.size(), c.bytes, terms, reps,
        t.cpu, t.wall, mb / t.cpu, mb / t.wall);
    if (target > 0) std::printf(",\"target_mb_per_s\":%.0f", target);
    std::printf("}\n");
    std::fflush(stdout);
}

#ifdef RAGPP_BENCH_BM25
template <class A>
void bm25_quality(const char* collection, const ragpp::BeirCollection& c, const A& analyzer, std::string_view label) {
    ragpp::BM25Params p;
    p.k1 = 0.9;
    p.b = 0.4;
    ragpp::BM25Index<A> index(p, analyzer);
    for (std::size_t i = 0; i < c.corpus.size(); ++i)
        index.add_document(static_cast<ragpp::DocId>(i),
                           ragpp::Document{c.corpus[i].id, c.corpus[i].title + " " + c.corpus[i].text, {}});
    double sum = 0;
    std::size_t n = 0;
    for (const auto& q : c.queries) {
        std::vector<std::string> ranking;
        for (const auto& h : index.search(q.text, 10)) ranking.push_back(c.corpus[h.id].id);
        if (auto v = ragpp::ndcg_at_k<std::string>(ranking, c.qrels.at(q.id), 10)) {
            sum += *v;
            ++n;
        }
    }
    std::printf("{\"bench\":\"analyze_quality\",\"collection\":\"%s\",\"index\":\"bm25 lucene k1=0.9 b=0.4\","
                "\"analyzer\":\"%.*s\",\"queries\":%zu,\"ndcg_at_10\":%.4f}\n",
                collection, static_cast<int>(label.size()), label.data(), n, sum / static_cast<double>(n));
    std::fflush(stdout);
}
#endif

}  // namespace

int main(int argc, char** argv) {
    int reps = 5;
    std::filesystem::path data = std::filesystem::path(RAGPP_SHARED_DIR) / "data";
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--reps" && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
        else if (a == "--data" && i + 1 < argc) data = argv[++i];
        else {
            std::fprintf(stderr, "usage: bench_analyze [--reps N] [--data DIR]\n");
            return 2;
        }
    }
    const std::pair<const char*, const char*> collections[] = {
        {"scifact", "english"}, {"piaf-v1.0-fr", "french"}, {"jaquad-dev-ja", "cjk"}};
    for (const auto& [name, language] : collections) {
        const auto path = data / name / "corpus.jsonl";
        if (!std::filesystem::exists(path)) {
            std::fprintf(stderr, "bench_analyze: %s is missing, skipped\n", path.string().c_str());
            continue;
        }
        Corpus c{name, {}, 0};
        for (auto& d : ragpp::read_beir_corpus(path)) {
            c.texts.push_back(d.title + " " + d.text);
            c.bytes += c.texts.back().size();
        }
        for (auto analyzer_name : ragpp::analyzer_names) {
            ragpp::with_analyzer(analyzer_name, [&](const auto& a) {
                std::size_t terms = 0;
                std::vector<std::string> out;
                const Timing s = median_seconds(reps, [&] {
                    terms = 0;
                    for (const auto& t : c.texts) {
                        out.clear();
                        a.analyze(t, out);
                        terms += out.size();
                    }
                });
                const double target = analyzer_name == "standard" ? 40 : analyzer_name == "english" ? 20 : 0;
                print_line(c, "ragpp", analyzer_name, reps, s, terms, target);
            });
        }
#ifdef RAGPP_BENCH_XAPIAN
        if (std::string_view(language) != "cjk") {
            Xapian::TermGenerator tg;
            tg.set_stemmer(Xapian::Stem(language));
            std::size_t terms = 0;
            const Timing s = median_seconds(reps, [&] {
                terms = 0;
                for (const auto& t : c.texts) {
                    Xapian::Document doc;
                    tg.set_document(doc);
                    tg.index_text(t);
                    terms += doc.termlist_count();
                }
            });
            print_line(c, "xapian TermGenerator", language, reps, s, terms, 0);
        }
#else
        (void)language;
#endif
    }
#ifdef RAGPP_BENCH_BM25
    // Anserini's BM25 "flat" on SciFact: nDCG@10 = 0.6789 (data/README.md).
    if (std::filesystem::exists(data / "scifact" / "corpus.jsonl")) {
        const auto c = ragpp::read_beir(data / "scifact");
        bm25_quality("scifact", c, ragpp::EnglishAnalyzer{}, "english");
        auto variant = [&](const char* label, auto&& change) {
            ragpp::AnalyzerOptions o = ragpp::EnglishAnalyzer::options();
            change(o);
            bm25_quality("scifact", c, ragpp::CustomAnalyzer(label, o, ragpp::text::PorterStemmer{}), label);
        };
        variant("english, no joined forms", [](ragpp::AnalyzerOptions& o) { o.joined_form = false; });
        variant("english, no letter-digit split", [](ragpp::AnalyzerOptions& o) { o.tokenizer.split_letter_digit = false; });
        variant("english, no identifier handling (Lucene-like)",
                [](ragpp::AnalyzerOptions& o) { o.tokenizer.identifiers = false; });
    }
    if (std::filesystem::exists(data / "piaf-v1.0-fr" / "corpus.jsonl")) {
        const auto c = ragpp::read_beir(data / "piaf-v1.0-fr");
        bm25_quality("piaf-v1.0-fr", c, ragpp::FrenchAnalyzer{}, "french");
        ragpp::AnalyzerOptions o = ragpp::FrenchAnalyzer::options();
        o.elision_joined_form = false;
        bm25_quality("piaf-v1.0-fr", c, ragpp::CustomAnalyzer("f", o, ragpp::text::FrenchLightStemmer{}),
                     "french, no elision joined forms");
        bm25_quality("piaf-v1.0-fr", c, ragpp::StandardAnalyzer{}, "standard");
    }
    if (std::filesystem::exists(data / "jaquad-dev-ja" / "corpus.jsonl")) {
        const auto c = ragpp::read_beir(data / "jaquad-dev-ja");
        bm25_quality("jaquad-dev-ja", c, ragpp::CjkAnalyzer{}, "cjk");
        bm25_quality("jaquad-dev-ja", c, ragpp::StandardAnalyzer{}, "standard");
    }
#endif
    return 0;
}
