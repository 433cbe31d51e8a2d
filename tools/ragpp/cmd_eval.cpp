// ragpp eval CORPUS QUESTIONS: one or several pipelines over the same chunks and
// questions; metrics at each k, latency per stage, per-question outcomes and where a
// miss happened, paired randomization tests, JSON / SVG / TREC outputs; TREC runs of
// other engines (--run) as further rows, tested against the first pipeline. The run
// itself is the library's (engine/evaluation_run.hpp): this file parses and prints.
#include "cli.hpp"
#include "engine.hpp"

#include <ragpp/answer/abstain.hpp>
#include <ragpp/engine/evaluation_run.hpp>
#include <ragpp/eval/questions.hpp>
#include <ragpp/eval/report.hpp>
#include <ragpp/io/trec.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

namespace {

std::vector<std::size_t> parse_ks(const std::string& text) {
    std::vector<std::size_t> ks;
    for (std::size_t b = 0; b <= text.size();) {  // every item, an empty one ("1,,3", "1,") included
        const std::size_t e = std::min(text.find(',', b), text.size());
        ks.push_back(cli::count_value("k", text.substr(b, e - b)));  // --k's range, [1, 100000]
        b = e + 1;
    }
    std::sort(ks.begin(), ks.end());
    ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
    if (ks.empty()) throw cli::UsageError("--k needs at least one cut-off");
    return ks;
}

void write_file(const std::filesystem::path& path, const std::string& text) {
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (!out) throw ragpp::IoError("cannot write '" + path.string() + "'");
}

std::string truncate(const std::string& s, std::size_t n) {
    if (s.size() <= n) return s;
    std::size_t cut = n;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0U) == 0x80U) --cut;  // not inside a UTF-8 sequence
    return s.substr(0, cut) + "...";
}

/// One line per question with its outcome in every pipeline, then what the last
/// pipeline found for its misses.
void print_questions(const std::vector<ragpp::PipelineReport>& reports, std::size_t k) {
    const auto& qs = reports.front().questions();
    std::printf("\nper question at k = %zu (ok, or MISS: 'rank' = among the candidates but below k, "
                "'retr' = not among the candidates):\n",
                k);
    std::printf("  %-10s", "id");
    for (const auto& r : reports) std::printf(" %-12s", r.name().c_str());
    std::printf(" question\n");
    for (std::size_t i = 0; i < qs.size(); ++i) {
        std::printf("  %-10s", truncate(cli::printable(qs[i].id), 10).c_str());
        for (const auto& r : reports) {
            std::string s;
            if (qs[i].relevant.empty()) s = "n/a";
            else
                switch (r.miss(i, k)) {
                    case ragpp::MissStage::none: s = "ok #" + std::to_string(r.outcomes()[i].first_relevant); break;
                    case ragpp::MissStage::ranking: s = "MISS rank " + std::to_string(r.outcomes()[i].first_relevant); break;
                    case ragpp::MissStage::retrieval: s = "MISS retr"; break;
                }
            std::printf(" %-12s", s.c_str());
        }
        std::printf(" %s\n", truncate(cli::printable(qs[i].text), 70).c_str());
        const auto& last = reports.back();
        if (!qs[i].relevant.empty() && last.miss(i, k) != ragpp::MissStage::none) {
            std::printf("  %-10s expected:", "");
            for (const auto& [label, g] : qs[i].relevant)
                if (g > 0) std::printf(" %s", cli::printable(label).c_str());
            std::printf("\n  %-10s %s found:", "", last.name().c_str());
            const auto& keys = last.outcomes()[i].keys;
            for (std::size_t x = 0; x < std::min<std::size_t>(3, keys.size()); ++x) std::printf(" %s", cli::printable(keys[x]).c_str());
            std::printf("\n");
        }
    }
}

/// "  a b c ...": at most five of `items`, escaped.
std::string some_of(const std::vector<std::string>& items) {
    std::string out;
    for (std::size_t i = 0; i < std::min<std::size_t>(5, items.size()); ++i) out += " " + cli::printable(items[i]);
    return out + (items.size() > 5 ? " ..." : "");
}

/// What the evaluation found about the labels and the runs, on stderr.
void print_warnings(const ragpp::EvaluationRunReport& r) {
    if (r.labels.inside_section > 0)
        std::fprintf(stderr, "note: %zu relevance label(s) name a line inside a section: they count for that section "
                             "(its id is the line of its heading)\n", r.labels.inside_section);
    if (!r.hidden_labels.empty())
        std::fprintf(stderr, "warning: %zu relevance label(s) are in documents this reader may not read "
                             "(--as/--as-all): they can only be missed:%s\n",
                     r.hidden_labels.size(), some_of(r.hidden_labels).c_str());
    if (r.labels.resolved > 0)
        std::fprintf(stderr, "note: %zu relevance label(s) matched once the corpus folder's path was removed from "
                             "their start\n", r.labels.resolved);
    if (!r.labels.unmatched.empty())
        std::fprintf(stderr, "warning: %zu relevance label(s) match no chunk of the corpus (they can only be missed):%s\n",
                     r.labels.unmatched.size(), some_of(r.labels.unmatched).c_str());
    for (const auto& run : r.runs) {
        if (run.unknown_docnos > 0)
            std::fprintf(stderr, "warning: run '%s': %zu of %zu docnos are no %s of the corpus (e.g. '%s'); they count as "
                                 "not relevant\n",
                         run.file.c_str(), run.unknown_docnos, run.lines,
                         r.match == ragpp::RunMatch::chunk ? "chunk id (see --run-match document)" : "chunk or document id",
                         run.unknown_docno_example.c_str());
        if (!run.unknown_queries.empty())
            std::fprintf(stderr, "warning: run '%s': %zu of its queries are no question id of the set (ignored), e.g. '%s'\n",
                         run.file.c_str(), run.unknown_queries.size(), run.unknown_queries.front().c_str());
    }
}

void print_report(const ragpp::EvaluationRunReport& r, const cli::EngineConfig& config, bool per_question) {
    const auto& questions = r.questions;
    const auto& ks = r.ks;
    std::printf("%zu chunks, %zu questions; analyzer %s, embedder %s, BM25 %s k1=%g b=%g, RRF k=%g, %zu candidates\n\n",
                r.readable_chunks, questions.size(), config.analyzer.c_str(), config.embedder.c_str(), std::string(ragpp::to_string(config.variant)).c_str(),
                config.search.k1, config.search.b, config.search.rrf_k, config.search.candidates);
    if (r.default_pipelines)
        std::printf("default pipeline (search, ask and the first row here, without --mode): %s (embedder %s; see "
                    "docs/evaluation.md)\n\n",
                    cli::mode_name(r.default_mode).c_str(), config.embedder.c_str());
    if (!r.runs.empty()) {
        std::printf("TREC runs (docnos matched to the labels at %s level, see docs/evaluation.md):\n",
                    r.match == ragpp::RunMatch::chunk ? "chunk" : "document");
        for (const auto& run : r.runs) {
            std::printf("  %s: %s, %zu of the %zu questions", run.name.c_str(), run.file.c_str(),
                        run.queries - run.unknown_queries.size(), questions.size());
            if (run.questions_missing > 0)
                std::printf(" (%zu answerable question%s missing from the run count%s 0, as in trec_eval -c)",
                            run.questions_missing, run.questions_missing == 1 ? "" : "s",
                            run.questions_missing == 1 ? "s" : "");
            std::printf("\n");
        }
        std::printf("\n");
    }
    std::printf("%s\n", ragpp::format_metrics_table(r.rows, ks).c_str());
    if (const auto c = ragpp::format_answer_containment(r.rows, ks); !c.empty()) {
        std::printf("%s", c.c_str());
        if (r.answers_in_corpus < r.with_answer)
            std::printf("(%zu of the %zu reference answers occur nowhere in the corpus: no pipeline can exceed %.4f)\n",
                        r.with_answer - r.answers_in_corpus, r.with_answer,
                        static_cast<double>(r.answers_in_corpus) / static_cast<double>(r.with_answer));
        std::printf("\n");
    } else if (r.has_answers && r.with_answer > 0 && r.answers_in_corpus == 0) {
        std::printf("answer containment: not measured: none of the %zu reference answers occurs in the corpus "
                    "(paraphrased answers, not spans of the passages)\n\n", r.with_answer);
    }
    if (r.rows.size() > 1) std::printf("%s\n", ragpp::format_comparisons(r.rows, ks).c_str());
    std::printf("%s", ragpp::format_latency(r.pipelines).c_str());
    if (per_question || questions.size() <= 100) print_questions(r.rows, r.passages);
    for (const auto& row : r.rows) {
        std::size_t ok = 0, rank = 0, retr = 0, none = 0;
        for (std::size_t i = 0; i < questions.size(); ++i) {
            if (questions[i].relevant.empty()) ++none;
            else if (row.miss(i, r.passages) == ragpp::MissStage::none) ++ok;
            else if (row.miss(i, r.passages) == ragpp::MissStage::ranking) ++rank;
            else ++retr;
        }
        std::printf("%s at k = %zu: %zu ok, %zu missed by ranking, %zu missed by retrieval, %zu without a relevant passage\n",
                    row.name().c_str(), r.passages, ok, rank, retr, none);
    }
    // Abstention: with unanswerable questions in the set, how a confidence threshold
    // separates them from the answerable ones, per pipeline.
    if (!r.abstention.empty()) {
        std::printf("\nabstention: %zu answerable and %zu unanswerable questions; a question is kept when its "
                    "confidence >= threshold (see docs/abstention.md)\n",
                    r.answerable, r.unanswerable);
        for (std::size_t i = 0; i < r.pipelines.size(); ++i) {
            std::printf("\n%s:\n%s", r.pipelines[i].name().c_str(),
                        ragpp::format_calibration(r.abstention[i].calibration).c_str());
            if (const auto a = r.abstention[i].auroc) std::printf("AUROC (answerable vs unanswerable): %.3f\n", *a);
        }
    }
}

int run_eval(cli::ArgParser& p) {
    const bool progress = !p.has("quiet") && cli::stderr_is_terminal();
    cli::EngineConfig config = cli::usage_of([&] { return cli::engine_config(p); });
    cli::check_embedder_spec(config.embedder);
    config.threads = p.count("threads");
    cli::apply_search_options(p, config.search);
    cli::apply_rerank_options(p, config.search);
    ragpp::EvaluationPlan plan;
    plan.ks = parse_ks(p.get("k"));
    plan.passages = p.count("passages");
    for (const auto& m : p.all("mode")) plan.pipelines.push_back(cli::parse_pipeline(m));
    plan.rerankers = p.all("rerank");
    for (const auto& r : plan.rerankers) cli::check_reranker(r);
    plan.relative_floor = p.number("relative-floor");
    plan.target_precision = p.number("target-precision");
    plan.questions_name = p.get("QUESTIONS");
    plan.corpus_name = p.get("CORPUS");
    plan.corpus_prefixes = ragpp::corpus_label_prefixes(p.get("CORPUS"));
    auto questions = ragpp::read_questions(p.get("QUESTIONS"));
    if (questions.empty()) throw ragpp::ParseError("'" + p.get("QUESTIONS") + "' holds no question");
    // Runs of other engines: read (and rejected) before any indexing.
    const std::string run_match = p.get("run-match");
    if (run_match != "chunk" && run_match != "document")
        throw cli::UsageError("--run-match: '" + run_match + "' is not chunk or document");
    plan.match = run_match == "chunk" ? ragpp::RunMatch::chunk : ragpp::RunMatch::document;
    for (const auto& file : p.all("run")) plan.runs.push_back(ragpp::read_trec_run(file));
    // The plan's mistakes (a pipeline or a run given twice) are the user's: exit 2, before indexing.
    (void)cli::usage_of([&] { return ragpp::evaluation_pipelines(plan, config); });
    const auto engine = cli::build_engine(p.get("CORPUS"), config, cli::corpus_options(p), progress);
    plan.principal = cli::principal(p);
    const auto report = cli::evaluate(engine, std::move(questions), plan, progress);
    print_warnings(report);

    if (p.has("json")) std::cout << cli::dump_json(report.to_json(), 2) << "\n";
    else print_report(report, config, p.has("per-question"));

    if (p.has("json-out")) write_file(p.get("json-out"), cli::dump_json(report.to_json(), 2) + "\n");
    if (p.has("svg")) write_file(p.get("svg"), ragpp::recall_chart_svg(report.rows, report.ks, ragpp::Measure::recall,
                                                                       "recall at k: " + p.get("QUESTIONS")));
    const auto& files = report.pipeline_files;
    if (p.has("run-dir")) {
        const std::filesystem::path dir = p.get("run-dir");
        std::filesystem::create_directories(dir);
        for (std::size_t i = 0; i < report.pipelines.size(); ++i) {
            std::ostringstream run;
            ragpp::write_trec_run(run, report.pipelines[i]);
            write_file(dir / (files[i] + ".run"), run.str());
        }
        std::ostringstream qrels;
        ragpp::write_trec_qrels(qrels, report.questions);
        write_file(dir / "qrels.txt", qrels.str());
    }
    if (p.has("run-out"))
        for (std::size_t i = 0; i < report.pipelines.size(); ++i) {
            std::ostringstream run;
            ragpp::write_trec_run(run, report.pipelines[i], ragpp::no_cutoff, ragpp::RunDocnos::chunks);
            write_file(p.get("run-out") + files[i] + ".run", run.str());
        }
    return 0;
}

const cli::Register register_eval{{"eval", "evaluate pipelines on a question set: metrics, misses by stage, latency, significance",
                         [](cli::ArgParser& p) {
                             p.positional("CORPUS", cli::corpus_help())
                                 .positional("QUESTIONS", "a JSON question set, a .tsv file (question<TAB>path:line) or a "
                                                          "BEIR folder")
                                 .repeated("mode", "M",
                                           "a pipeline: " + ragpp::choice_names(ragpp::search_modes, ", ") +
                                               ", or hybrid:W1,W2 (fusion weights of this "
                                           "pipeline) [default: the default pipeline (bm25 with the hashing embedder, hybrid with a semantic one), then the other two]")
                                 .repeated("rerank", "R",
                                           "rerank each mode's candidates: " + ragpp::choice_names(ragpp::reranker_kinds) +
                                               "; repeat to "
                                           "compare (each mode runs once per value) [default: none]")
                                 .option("target-precision", "P",
                                         "abstention: the precision the suggested threshold must reach", "0.9")
                                 .option("relative-floor", "X",
                                         "as ragpp ask: with a reranker, passages scoring below X times the best one's "
                                         "are not read by the confidence",
                                         "0.5")
                                 .option("k", "K1,K2,...", "cut-offs of the metrics", "1,3,5,10,20")
                                 .option("passages", "N",
                                         "k at which a question is ok or a miss, and the passages the confidence reads "
                                         "(as ragpp ask --passages)",
                                         "5")
                                 .flag("json", "print everything as JSON on stdout instead of the text report")
                                 .option("json-out", "FILE", "write everything as JSON to FILE (beside the text report)")
                                 .option("svg", "FILE", "write a chart of recall at k for each pipeline")
                                 .option("run-dir", "DIR", "write TREC run files (<mode>.run, up to 200 results) and qrels.txt")
                                 .repeated("run", "FILE",
                                           "a TREC run of any engine ('qid Q0 docno rank score tag' lines, docnos = chunk "
                                           "ids): one more row, tested against the first pipeline; repeat for several")
                                 .option("run-match", "LEVEL",
                                         "how a run's docnos meet chunk labels: chunk (as ragpp's own results) or "
                                         "document (a document id counts for the labels of its chunks)",
                                         "chunk")
                                 .option("run-out", "PREFIX",
                                         "write each pipeline's ranking as a TREC run of chunk ids, all candidates: "
                                         "PREFIX<mode>.run (readable again with --run)")
                                 .flag("per-question", "print every question even for large sets")
                                 .flag("quiet", "no progress bar");
                             cli::declare_engine_options(p);
                             cli::declare_threads_option(p);
                             cli::declare_search_options(p);
                             cli::declare_rerank_options(p);
                             cli::declare_access_options(p);
                             cli::declare_corpus_options(p);
                             p.epilog("Figures equal trec_eval's on the --run-dir files: trec_eval -c -m ndcg_cut -m recall "
                                      "-m recip_rank DIR/qrels.txt DIR/hybrid.run (run scores are rank-based so that "
                                      "trec_eval keeps our tie order).");
                         },
                         run_eval}};

}  // namespace
