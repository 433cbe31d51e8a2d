// ragpp eval CORPUS QUESTIONS: one or several pipelines over the same chunks and
// questions; metrics at each k, latency per stage, per-question outcomes and where a
// miss happened, paired randomization tests, JSON / SVG / TREC outputs; TREC runs of
// other engines (--run) as further rows, tested against the first pipeline.
#include "cli.hpp"
#include "engine.hpp"

#include <ragpp/answer/abstain.hpp>
#include <ragpp/eval/containment.hpp>
#include <ragpp/eval/questions.hpp>
#include <ragpp/eval/report.hpp>
#include <ragpp/eval/run.hpp>
#include <ragpp/io/trec.hpp>

#include <algorithm>
#include <memory>
#include <set>
#include <span>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <variant>

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

/// "a/b/notes/", "b/notes/", "notes/" for the corpus a/b/notes: the prefixes a label
/// written from a parent folder of the corpus starts with, longest first.
std::vector<std::string> corpus_prefixes(const std::string& corpus) {
    std::vector<std::string> parts;
    for (const auto& part : std::filesystem::path(corpus).lexically_normal())
        if (!part.empty() && part != "." && part != "/") parts.push_back(part.generic_string());
    std::vector<std::string> prefixes;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        std::string prefix;
        for (std::size_t j = i; j < parts.size(); ++j) prefix += parts[j] + "/";
        prefixes.push_back(prefix);
    }
    return prefixes;
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

int run_eval(cli::ArgParser& p) {
    const bool progress = !p.has("quiet") && cli::stderr_is_terminal();
    cli::EngineConfig config = cli::usage_of([&] { return cli::engine_config(p); });
    cli::check_embedder_spec(config.embedder);
    config.threads = p.count("threads");
    cli::apply_search_options(p, config);
    const auto ks = parse_ks(p.get("k"));
    const std::size_t miss_k = p.count("passages");
    if (miss_k == 0) throw cli::UsageError("--passages must be >= 1");
    std::vector<cli::PipelineSpec> mode_list;
    for (const auto& m : p.all("mode")) mode_list.push_back(cli::parse_pipeline(m));
    // Without --mode: the default pipeline first (what search and ask run without --mode:
    // bm25 with the built-in hashing embedder, hybrid with a semantic one), then the
    // other two for comparison.
    const cli::Mode default_mode = cli::default_mode(config);
    const bool modes_given = !mode_list.empty();
    if (!modes_given) {
        mode_list = {{default_mode, {}}};
        for (auto m : {cli::Mode::bm25, cli::Mode::vector, cli::Mode::hybrid})
            if (m != default_mode) mode_list.push_back({m, {}});
    }
    // Each mode runs once per --rerank value (default: none only).
    cli::apply_rerank_options(p, config);
    std::vector<std::string> rerankers = p.all("rerank");
    if (rerankers.empty()) rerankers = {"none"};
    for (const auto& r : rerankers) cli::check_reranker(r);
    std::vector<cli::PipelineSpec> modes;
    std::vector<std::string> mode_rerankers;
    for (const auto& m : mode_list)
        for (const auto& r : rerankers) {
            modes.push_back(m);
            mode_rerankers.push_back(r);
        }
    const double relative_floor = p.number("relative-floor");
    if (!(relative_floor >= 0 && relative_floor <= 1)) throw cli::UsageError("--relative-floor must be in [0, 1]");
    const double target = p.number("target-precision");
    if (!(target > 0 && target <= 1)) throw cli::UsageError("--target-precision must be in (0, 1]");

    auto questions = ragpp::read_questions(p.get("QUESTIONS"));
    if (questions.empty()) throw ragpp::ParseError("'" + p.get("QUESTIONS") + "' holds no question");
    // Runs of other engines: read (and rejected) before any indexing.
    const std::string run_match = p.get("run-match");
    if (run_match != "chunk" && run_match != "document")
        throw cli::UsageError("--run-match: '" + run_match + "' is not chunk or document");
    const auto match = run_match == "chunk" ? ragpp::RunMatch::chunk : ragpp::RunMatch::document;
    std::vector<ragpp::TrecRun> runs;
    for (const auto& file : p.all("run")) runs.push_back(ragpp::read_trec_run(file));
    const auto engine = cli::Engine::build(p.get("CORPUS"), config, cli::corpus_options(p), progress);
    const auto principal = cli::principal(p);
    // Labels written relative to the corpus folder's parent ("notes/errors.md:7" for the
    // corpus notes, or data/notes/...) are matched too; a set none of whose labels
    // matches a chunk is an error, not a table of zeros.
    std::vector<std::string> chunk_ids;
    chunk_ids.reserve(engine.size());
    // Answer containment needs the passages' texts: kept when a question has an answer.
    const bool answers = std::any_of(questions.begin(), questions.end(), [](const auto& q) { return q.answer.has_value(); });
    std::unordered_map<std::string, std::string> texts;
    // The docnos a run may hold: chunk ids as TREC tokens (and their documents with --run-match document).
    std::unordered_set<std::string> known_docnos;
    // The chunks the reader may read, sorted (a label matches chunk ids that start with
    // it): answer containment and the counts printed read only those, so that notes the
    // reader cannot read change nothing in the report.
    auto readable = engine.readable_chunk_ids(principal);
    std::sort(readable.begin(), readable.end());
    auto is_readable = [&](const std::string& id) { return std::binary_search(readable.begin(), readable.end(), id); };
    std::vector<ragpp::ChunkLines> lines;  // for labels written on a line inside a section
    engine.for_each_chunk([&](const ragpp::Document& d) {
        chunk_ids.push_back(d.id);
        auto text_of = [&](const char* key) -> const std::string* {
            const auto it = d.metadata.find(key);
            return it == d.metadata.end() ? nullptr : std::get_if<std::string>(&it->second);
        };
        auto number_of = [&](const char* key) -> double {
            const auto it = d.metadata.find(key);
            const double* v = it == d.metadata.end() ? nullptr : std::get_if<double>(&it->second);
            return v ? *v : 0.0;
        };
        if (const auto* source = text_of("source"))
            if (const auto* section = text_of("section"))
                lines.push_back({*source, *section, static_cast<std::size_t>(number_of("first_line")),
                                 static_cast<std::size_t>(number_of("last_line"))});
        if (answers && is_readable(d.id)) texts.emplace(d.id, d.text);
        if (!runs.empty()) {
            known_docnos.insert(ragpp::trec_id(d.id));
            if (match == ragpp::RunMatch::document) known_docnos.insert(ragpp::trec_id(ragpp::document_of(d.id)));
        }
    });
    const std::string example_chunk = chunk_ids.empty() ? std::string("(none)") : chunk_ids.front();
    const auto check = ragpp::resolve_labels(questions, std::move(chunk_ids), corpus_prefixes(p.get("CORPUS")), lines);
    if (check.none_match())
        throw ragpp::NotFoundError("question set '" + p.get("QUESTIONS") + "': none of its " +
                                   std::to_string(check.labels) + " relevance labels matches a chunk of '" +
                                   p.get("CORPUS") + "' (label '" + check.unmatched.front() + "', chunk id '" +
                                   example_chunk + "'): labels are chunk ids ('path:line', or a path) relative to "
                                   "the corpus folder or to its parent");

    const auto& unmatched = check.unmatched;
    if (check.inside_section > 0)
        std::fprintf(stderr, "note: %zu relevance label(s) name a line inside a section: they count for that section "
                             "(its id is the line of its heading)\n", check.inside_section);
    // Labels the reader cannot reach: every chunk they match is in a document it may not read.
    {
        std::set<std::string> labels;
        for (const auto& q : questions)
            for (const auto& [label, grade] : q.relevant)
                if (grade > 0) labels.insert(label);
        std::vector<std::string> hidden;
        for (const auto& label : labels) {
            if (std::find(unmatched.begin(), unmatched.end(), label) != unmatched.end()) continue;
            bool reached = false;
            for (auto it = std::lower_bound(readable.begin(), readable.end(), label);
                 !reached && it != readable.end() && it->compare(0, label.size(), label) == 0; ++it)
                reached = ragpp::label_matches(label, *it);
            if (!reached) hidden.push_back(label);
        }
        if (!hidden.empty()) {
            std::fprintf(stderr, "warning: %zu relevance label(s) are in documents this reader may not read "
                                 "(--as/--as-all): they can only be missed:", hidden.size());
            for (std::size_t i = 0; i < std::min<std::size_t>(5, hidden.size()); ++i)
                std::fprintf(stderr, " %s", cli::printable(hidden[i]).c_str());
            std::fprintf(stderr, "%s\n", hidden.size() > 5 ? " ..." : "");
        }
    }
    if (check.resolved > 0)
        std::fprintf(stderr, "note: %zu relevance label(s) matched once the corpus folder's path was removed from "
                             "their start\n", check.resolved);
    if (!unmatched.empty()) {
        std::fprintf(stderr, "warning: %zu relevance label(s) match no chunk of the corpus (they can only be missed):",
                     unmatched.size());
        for (std::size_t i = 0; i < std::min<std::size_t>(5, unmatched.size()); ++i) std::fprintf(stderr, " %s", cli::printable(unmatched[i]).c_str());
        std::fprintf(stderr, "%s\n", unmatched.size() > 5 ? " ..." : "");
    }

    // The ceiling of answer containment: how many reference answers occur anywhere in the
    // corpus. Paraphrased answers (not spans of the corpus) occur nowhere, and the table
    // then measures nothing: it is replaced by a note.
    std::size_t with_answer = 0, answers_in_corpus = 0;
    if (answers) {
        std::vector<std::string> wanted;
        for (const auto& q : questions) wanted.push_back(q.answer ? *q.answer : std::string());
        ragpp::AnswerFinder finder(wanted);
        for (const auto& [id, text] : texts) finder.scan(text);
        for (const auto& q : questions) with_answer += q.answer && ragpp::answer_match_form(*q.answer).size() > 1 ? 1 : 0;
        answers_in_corpus = finder.found_count();
        if (answers_in_corpus == 0) texts.clear();  // nothing to look for in the rankings
    }
    // Answer containment of a pipeline's or a run's ranking, when the set has answers.
    auto find_answers_in = [&](ragpp::PipelineReport& report) {
        if (!texts.empty())
            ragpp::find_answers(
                report,
                [&](std::string_view id) {
                    const auto it = texts.find(std::string(id));
                    return it == texts.end() ? std::string() : it->second;
                },
                ks.back());
    };
    std::vector<ragpp::PipelineReport> reports;
    std::vector<std::vector<double>> confidences(modes.size());
    std::vector<std::string> file_names;
    for (std::size_t i = 0; i < modes.size(); ++i) {
        const auto m = modes[i].mode;
        std::string name = cli::mode_name(m);
        std::string file = name;
        const auto& w = modes[i].weights.empty() ? config.weights : modes[i].weights;
        if (m == cli::Mode::hybrid && (w[0] != 1.0 || w[1] != 1.0)) {
            std::ostringstream n, f;
            n << "hybrid(" << w[0] << "," << w[1] << ")";
            f << "hybrid-" << w[0] << "_" << w[1];
            name = n.str();
            file = f.str();
        }
        if (mode_rerankers[i] != "none") {
            name += "+" + mode_rerankers[i];
            file += "+" + mode_rerankers[i];
        }
        for (const auto& r : reports)
            if (r.name() == name) throw cli::UsageError("--mode: pipeline '" + name + "' given twice");
        file_names.push_back(file);
        ragpp::EvaluationOptions eo;
        eo.mode = m;
        eo.name = name;
        eo.principal = principal;
        eo.reranker = mode_rerankers[i];
        eo.weights = modes[i].weights;
        eo.depth = std::max(config.candidates, ks.back());
        eo.answer.passages = miss_k;
        eo.answer.relative_floor = relative_floor;
        reports.push_back(engine.evaluate(questions, eo, progress));
        for (const auto& o : reports.back().outcomes()) confidences[i].push_back(o.confidence.value_or(0.0));
        find_answers_in(reports.back());
    }

    // Each run is a row after ragpp's pipelines, evaluated on the same (resolved) labels.
    std::vector<ragpp::PipelineReport> rows = reports;
    nlohmann::json run_info = nlohmann::json::array();
    std::vector<std::string> run_notes;
    for (const auto& run : runs) {
        std::string name = "run:" + run.tag;
        for (const auto& r : rows)
            if (r.name() == name) name = "run:" + run.source;
        for (const auto& r : rows)
            if (r.name() == name) throw cli::UsageError("--run: '" + run.source + "' given twice");
        auto ev = ragpp::evaluate_run(name, questions, run, match);
        if (ev.unknown_queries.size() == run.queries.size())
            throw ragpp::NotFoundError("run '" + run.source + "': none of its " + std::to_string(run.queries.size()) +
                                       " queries is a question id of '" + p.get("QUESTIONS") + "' (query '" +
                                       run.queries.begin()->first + "', question id '" + questions.front().id + "')");
        std::size_t unknown_docnos = 0;
        std::string example;
        for (const auto& [qid, ranking] : run.queries)
            for (const auto& e : ranking)
                if (!known_docnos.contains(e.docno)) {
                    if (unknown_docnos++ == 0) example = e.docno;
                }
        if (unknown_docnos > 0)
            std::fprintf(stderr, "warning: run '%s': %zu of %zu docnos are no %s of the corpus (e.g. '%s'); they count as "
                                 "not relevant\n",
                         run.source.c_str(), unknown_docnos, run.lines,
                         match == ragpp::RunMatch::chunk ? "chunk id (see --run-match document)" : "chunk or document id",
                         example.c_str());
        if (!ev.unknown_queries.empty())
            std::fprintf(stderr, "warning: run '%s': %zu of its queries are no question id of the set (ignored), e.g. '%s'\n",
                         run.source.c_str(), ev.unknown_queries.size(), ev.unknown_queries.front().c_str());
        std::ostringstream note;
        note << name << ": " << run.source << ", " << run.queries.size() - ev.unknown_queries.size() << " of the "
             << questions.size() << " questions";
        if (ev.questions_missing > 0)
            note << " (" << ev.questions_missing << " answerable question" << (ev.questions_missing == 1 ? "" : "s")
                 << " missing from the run count" << (ev.questions_missing == 1 ? "s" : "") << " 0, as in trec_eval -c)";
        run_notes.push_back(note.str());
        run_info.push_back({{"name", name},
                            {"file", run.source},
                            {"tag", run.tag},
                            {"lines", run.lines},
                            {"match", run_match},
                            {"questions_missing", ev.questions_missing},
                            {"unknown_queries", ev.unknown_queries},
                            {"unknown_docnos", unknown_docnos}});
        rows.push_back(std::move(ev.report));
        find_answers_in(rows.back());
    }
    auto json_report = [&] {
        auto j = ragpp::report_json(rows, ks, miss_k);
        if (!runs.empty()) j["runs"] = run_info;
        if (answers) j["answers_in_corpus"] = {{"questions_with_answer", with_answer}, {"occurring", answers_in_corpus}};
        return j;
    };

    if (p.has("json")) {
        std::cout << cli::dump_json(json_report(), 2) << "\n";
    } else {
        std::printf("%zu chunks, %zu questions; analyzer %s, embedder %s, BM25 %s k1=%g b=%g, RRF k=%g, %zu candidates\n\n",
                    readable.size(), questions.size(), config.analyzer.c_str(), config.embedder.c_str(), config.variant.c_str(),
                    config.k1, config.b, config.rrf_k, config.candidates);
        if (!modes_given)
            std::printf("default pipeline (search, ask and the first row here, without --mode): %s (embedder %s; see "
                        "docs/evaluation.md)\n\n",
                        cli::mode_name(default_mode).c_str(), config.embedder.c_str());
        if (!run_notes.empty()) {
            std::printf("TREC runs (docnos matched to the labels at %s level, see docs/evaluation.md):\n", run_match.c_str());
            for (const auto& n : run_notes) std::printf("  %s\n", n.c_str());
            std::printf("\n");
        }
        std::printf("%s\n", ragpp::format_metrics_table(rows, ks).c_str());
        if (const auto c = ragpp::format_answer_containment(rows, ks); !c.empty()) {
            std::printf("%s", c.c_str());
            if (answers_in_corpus < with_answer)
                std::printf("(%zu of the %zu reference answers occur nowhere in the corpus: no pipeline can exceed %.4f)\n",
                            with_answer - answers_in_corpus, with_answer,
                            static_cast<double>(answers_in_corpus) / static_cast<double>(with_answer));
            std::printf("\n");
        } else if (answers && with_answer > 0 && answers_in_corpus == 0) {
            std::printf("answer containment: not measured: none of the %zu reference answers occurs in the corpus "
                        "(paraphrased answers, not spans of the passages)\n\n", with_answer);
        }
        if (rows.size() > 1) std::printf("%s\n", ragpp::format_comparisons(rows, ks).c_str());
        std::printf("%s", ragpp::format_latency(reports).c_str());
        if (p.has("per-question") || questions.size() <= 100) print_questions(rows, miss_k);
        for (const auto& r : rows) {
            std::size_t ok = 0, rank = 0, retr = 0, none = 0;
            for (std::size_t i = 0; i < questions.size(); ++i) {
                if (questions[i].relevant.empty()) ++none;
                else if (r.miss(i, miss_k) == ragpp::MissStage::none) ++ok;
                else if (r.miss(i, miss_k) == ragpp::MissStage::ranking) ++rank;
                else ++retr;
            }
            std::printf("%s at k = %zu: %zu ok, %zu missed by ranking, %zu missed by retrieval, %zu without a relevant passage\n",
                        r.name().c_str(), miss_k, ok, rank, retr, none);
        }

        // Abstention (issue 8): with unanswerable questions in the set, how a confidence
        // threshold separates them from the answerable ones, per pipeline.
        std::vector<bool> answerable;
        for (const auto& q : questions) answerable.push_back(!q.relevant.empty());
        const auto unanswerable = static_cast<std::size_t>(std::count(answerable.begin(), answerable.end(), false));
        if (unanswerable > 0 && unanswerable < questions.size()) {
            std::printf("\nabstention: %zu answerable and %zu unanswerable questions; a question is kept when its "
                        "confidence >= threshold (see docs/abstention.md)\n",
                        questions.size() - unanswerable, unanswerable);
            for (std::size_t i = 0; i < reports.size(); ++i) {
                const auto c = ragpp::calibrate(confidences[i], answerable, target,
                                                {0.0, 0.1, 0.2, 0.3, ragpp::default_min_confidence, 0.4, 0.5, 0.6, 0.7,
                                                 0.8, 0.9});
                std::printf("\n%s:\n%s", reports[i].name().c_str(), ragpp::format_calibration(c).c_str());
                if (const auto a = ragpp::auroc(confidences[i], answerable))
                    std::printf("AUROC (answerable vs unanswerable): %.3f\n", *a);
            }
        }

    }

    if (p.has("json-out")) write_file(p.get("json-out"), cli::dump_json(json_report(), 2) + "\n");
    if (p.has("svg")) write_file(p.get("svg"), ragpp::recall_chart_svg(rows, ks, ragpp::Measure::recall,
                                                                       "recall at k: " + p.get("QUESTIONS")));
    if (p.has("run-dir")) {
        const std::filesystem::path dir = p.get("run-dir");
        std::filesystem::create_directories(dir);
        for (std::size_t i = 0; i < reports.size(); ++i) {
            std::ostringstream run;
            ragpp::write_trec_run(run, reports[i]);
            write_file(dir / (file_names[i] + ".run"), run.str());
        }
        std::ostringstream qrels;
        ragpp::write_trec_qrels(qrels, questions);
        write_file(dir / "qrels.txt", qrels.str());
    }
    if (p.has("run-out"))
        for (std::size_t i = 0; i < reports.size(); ++i) {
            std::ostringstream run;
            ragpp::write_trec_run(run, reports[i], ragpp::no_cutoff, ragpp::RunDocnos::chunks);
            write_file(p.get("run-out") + file_names[i] + ".run", run.str());
        }
    return 0;
}

const cli::Register reg{{"eval", "evaluate pipelines on a question set: metrics, misses by stage, latency, significance",
                         [](cli::ArgParser& p) {
                             p.positional("CORPUS", "a folder of .md/.rst/.txt files, a .jsonl file or a BEIR folder")
                                 .positional("QUESTIONS", "a JSON question set, a .tsv file (question<TAB>path:line) or a "
                                                          "BEIR folder")
                                 .repeated("mode", "M",
                                           "a pipeline: bm25, vector, hybrid, or hybrid:W1,W2 (fusion weights of this "
                                           "pipeline) [default: the default pipeline (bm25 with the hashing embedder, hybrid with a semantic one), then the other two]")
                                 .repeated("rerank", "R",
                                           "rerank each mode's candidates: none, proximity, softmatch or cross-encoder:DIR; repeat to "
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
