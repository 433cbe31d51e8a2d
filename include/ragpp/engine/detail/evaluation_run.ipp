// ragpp detail: the evaluation run (engine/evaluation_run.hpp declares it): inline in a
// header-only build, compiled once in src/engine_query.cpp with the compiled library
// (detail/compiled.hpp).
// Not a header to include on its own (hence .ipp): engine/evaluation_run.hpp includes it
// after engine/engine.hpp; so does src/engine_query.cpp.
#pragma once

#include <algorithm>
#include <set>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <variant>

#include <ragpp/eval/containment.hpp>
#include <ragpp/eval/report.hpp>

namespace ragpp {

RAGPP_FUNC std::vector<std::string> corpus_label_prefixes(const std::filesystem::path& corpus) {
    std::vector<std::string> parts;
    for (const auto& part : corpus.lexically_normal())
        if (!part.empty() && part != "." && part != "/") parts.push_back(part.generic_string());
    std::vector<std::string> prefixes;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        std::string prefix;
        for (std::size_t j = i; j < parts.size(); ++j) prefix += parts[j] + "/";
        prefixes.push_back(prefix);
    }
    return prefixes;
}

namespace detail::evaluation_run {

/// The name a run's row gets among `names`: "run:TAG", or "run:FILE" when that is taken;
/// InvalidArgument when that is taken too (the same file given twice).
inline std::string run_name(const TrecRun& run, const std::vector<std::string>& names) {
    auto taken = [&](const std::string& n) { return std::find(names.begin(), names.end(), n) != names.end(); };
    std::string name = "run:" + run.tag;
    if (taken(name)) name = "run:" + run.source;
    if (taken(name)) throw InvalidArgument("run '" + run.source + "' given twice");
    return name;
}

/// The file stem of a pipeline: its name with "hybrid-W1_W2" for "hybrid(W1,W2)".
struct Named {
    std::string name, file;
};
inline Named pipeline_name(SearchMode mode, const std::vector<double>& weights, const std::string& reranker) {
    Named n{search_mode_name(mode), search_mode_name(mode)};
    if (mode == SearchMode::hybrid && weights.size() == 2 && (weights[0] != 1.0 || weights[1] != 1.0)) {
        std::ostringstream name, file;
        name << "hybrid(" << weights[0] << "," << weights[1] << ")";
        file << "hybrid-" << weights[0] << "_" << weights[1];
        n = {name.str(), file.str()};
    }
    if (reranker != "none") {
        n.name += "+" + reranker;
        n.file += "+" + reranker;
    }
    return n;
}

inline std::vector<EvaluationPipeline> pipelines_of(const EvaluationPlan& plan, const EngineConfig& config) {
    if (!plan.pipelines.empty()) return plan.pipelines;
    const SearchMode first = default_search_mode(config);
    std::vector<EvaluationPipeline> out{{first, {}}};
    for (auto m : {SearchMode::bm25, SearchMode::vector, SearchMode::hybrid})
        if (m != first) out.push_back({m, {}});
    return out;
}

/// evaluation_pipelines, and each pipeline's file stem.
inline std::vector<Named> check_plan(const EvaluationPlan& plan, const EngineConfig& config,
                                     std::vector<EvaluationOptions>* out) {
    if (plan.ks.empty()) throw InvalidArgument("an evaluation needs at least one cut-off k");
    for (std::size_t k : plan.ks)
        if (k == 0) throw InvalidArgument("the cut-offs k of an evaluation must be >= 1");
    if (plan.passages == 0) throw InvalidArgument("the passages of an evaluation must be >= 1");
    if (!(plan.relative_floor >= 0 && plan.relative_floor <= 1))
        throw InvalidArgument("the relative floor of an evaluation must be in [0, 1]");
    if (!(plan.target_precision > 0 && plan.target_precision <= 1))
        throw InvalidArgument("the target precision of an evaluation must be in (0, 1]");
    const std::vector<std::string> rerankers = plan.rerankers.empty() ? std::vector<std::string>{"none"} : plan.rerankers;
    for (const auto& r : rerankers) check_reranker_name(r);
    const std::size_t largest_k = *std::max_element(plan.ks.begin(), plan.ks.end());
    if (plan.search) plan.search->validate();
    const SearchSettings& settings = plan.search ? *plan.search : config.search;
    std::vector<Named> named;
    std::vector<std::string> names;
    for (const auto& p : pipelines_of(plan, config)) {
        if (p.mode == SearchMode::hybrid && !p.weights.empty() && p.weights.size() != 2)
            throw InvalidArgument("a hybrid pipeline has two fusion weights, not " + std::to_string(p.weights.size()));
        for (const auto& r : rerankers) {
            auto n = pipeline_name(p.mode, p.weights.empty() ? settings.weights : p.weights, r);
            if (std::find(names.begin(), names.end(), n.name) != names.end())
                throw InvalidArgument("pipeline '" + n.name + "' given twice");
            names.push_back(n.name);
            if (out) {
                EvaluationOptions eo;
                eo.mode = p.mode;
                eo.name = n.name;
                eo.principal = plan.principal;
                eo.reranker = r;
                eo.weights = p.weights;
                eo.search = plan.search;
                eo.depth = std::max(settings.candidates, largest_k);
                eo.answer.passages = plan.passages;
                eo.answer.relative_floor = plan.relative_floor;
                out->push_back(std::move(eo));
            }
            named.push_back(std::move(n));
        }
    }
    for (const auto& run : plan.runs) names.push_back(run_name(run, names));
    return named;
}

/// " 'NAME'" or "" (errors name the set and the corpus when the plan does).
inline std::string quoted(const std::string& name) { return name.empty() ? std::string() : " '" + name + "'"; }

}  // namespace detail::evaluation_run

RAGPP_FUNC std::vector<EvaluationOptions> evaluation_pipelines(const EvaluationPlan& plan, const EngineConfig& config) {
    std::vector<EvaluationOptions> out;
    (void)detail::evaluation_run::check_plan(plan, config, &out);
    return out;
}

RAGPP_FUNC nlohmann::json EvaluationRunReport::to_json() const {
    auto j = report_json(rows, ks, passages);
    if (!runs.empty()) {
        nlohmann::json info = nlohmann::json::array();
        for (const auto& r : runs)
            info.push_back({{"name", r.name},
                            {"file", r.file},
                            {"tag", r.tag},
                            {"lines", r.lines},
                            {"match", match == RunMatch::chunk ? "chunk" : "document"},
                            {"questions_missing", r.questions_missing},
                            {"unknown_queries", r.unknown_queries},
                            {"unknown_docnos", r.unknown_docnos}});
        j["runs"] = std::move(info);
    }
    if (has_answers) j["answers_in_corpus"] = {{"questions_with_answer", with_answer}, {"occurring", answers_in_corpus}};
    return j;
}

RAGPP_FUNC EvaluationRunReport run_evaluation(const Engine& engine, QuestionSet questions, const EvaluationPlan& plan) {
    namespace er = detail::evaluation_run;
    std::vector<EvaluationOptions> pipelines;
    const auto named = er::check_plan(plan, engine.config(), &pipelines);
    if (questions.empty()) throw InvalidArgument("question set" + er::quoted(plan.questions_name) + " holds no question");
    EvaluationRunReport out;
    out.ks = plan.ks;
    std::sort(out.ks.begin(), out.ks.end());
    out.ks.erase(std::unique(out.ks.begin(), out.ks.end()), out.ks.end());
    out.passages = plan.passages;
    out.match = plan.match;
    out.default_pipelines = plan.pipelines.empty();
    out.default_mode = default_search_mode(engine.config());
    for (const auto& n : named) out.pipeline_files.push_back(n.file);

    // Labels written relative to the corpus folder's parent are matched too; a set none
    // of whose labels matches a chunk is an error, not a table of zeros.
    std::vector<std::string> chunk_ids;
    chunk_ids.reserve(engine.size());
    // Answer containment needs the passages' texts: kept when a question has an answer.
    out.has_answers = std::any_of(questions.begin(), questions.end(), [](const auto& q) { return q.answer.has_value(); });
    std::unordered_map<std::string, std::string> texts;
    // The docnos a run may hold: chunk ids as TREC tokens (and their documents with RunMatch::document).
    std::unordered_set<std::string> known_docnos;
    // The chunks the reader may read, sorted (a label matches chunk ids that start with
    // it): answer containment and the counts read only those, so that notes the reader
    // cannot read change nothing in the report.
    auto readable = engine.readable_chunk_ids(plan.principal);
    std::sort(readable.begin(), readable.end());
    out.readable_chunks = readable.size();
    auto is_readable = [&](const std::string& id) { return std::binary_search(readable.begin(), readable.end(), id); };
    std::vector<ChunkLines> lines;  // for labels written on a line inside a section
    engine.for_each_chunk([&](const Document& d) {
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
        if (out.has_answers && is_readable(d.id)) texts.emplace(d.id, d.text);
        if (!plan.runs.empty()) {
            known_docnos.insert(trec_id(d.id));
            if (plan.match == RunMatch::document) known_docnos.insert(trec_id(document_of(d.id)));
        }
    });
    const std::string example_chunk = chunk_ids.empty() ? std::string("(none)") : chunk_ids.front();
    out.labels = resolve_labels(questions, std::move(chunk_ids), plan.corpus_prefixes, lines);
    if (out.labels.none_match())
        throw NotFoundError("question set" + er::quoted(plan.questions_name) + ": none of its " +
                            std::to_string(out.labels.labels) + " relevance labels matches a chunk of" +
                            (plan.corpus_name.empty() ? std::string(" the corpus") : er::quoted(plan.corpus_name)) +
                            " (label '" + out.labels.unmatched.front() + "', chunk id '" + example_chunk +
                            "'): labels are chunk ids ('path:line', or a path) relative to the corpus folder or to "
                            "its parent");
    const auto& unmatched = out.labels.unmatched;
    // Labels the reader cannot reach: every chunk they match is in a document it may not read.
    {
        std::set<std::string> labels;
        for (const auto& q : questions)
            for (const auto& [label, grade] : q.relevant)
                if (grade > 0) labels.insert(label);
        for (const auto& label : labels) {
            if (std::find(unmatched.begin(), unmatched.end(), label) != unmatched.end()) continue;
            bool reached = false;
            for (auto it = std::lower_bound(readable.begin(), readable.end(), label);
                 !reached && it != readable.end() && it->compare(0, label.size(), label) == 0; ++it)
                reached = label_matches(label, *it);
            if (!reached) out.hidden_labels.push_back(label);
        }
    }

    // The ceiling of answer containment: how many reference answers occur anywhere in
    // what the reader may read. Paraphrased answers (not spans of the corpus) occur
    // nowhere, and containment then measures nothing: it is not computed.
    if (out.has_answers) {
        std::vector<std::string> wanted;
        for (const auto& q : questions) wanted.push_back(q.answer ? *q.answer : std::string());
        AnswerFinder finder(wanted);
        for (const auto& [id, text] : texts) finder.scan(text);
        for (const auto& q : questions) out.with_answer += q.answer && answer_match_form(*q.answer).size() > 1 ? 1 : 0;
        out.answers_in_corpus = finder.found_count();
        if (out.answers_in_corpus == 0) texts.clear();  // nothing to look for in the rankings
    }
    auto find_answers_in = [&](PipelineReport& report) {
        if (!texts.empty())
            find_answers(
                report,
                [&](std::string_view id) {
                    const auto it = texts.find(std::string(id));
                    return it == texts.end() ? std::string() : it->second;
                },
                out.ks.back());
    };

    // The runs first (an error in one stops the run before any pipeline is evaluated),
    // rows after the pipelines.
    std::vector<std::string> names;
    for (const auto& eo : pipelines) names.push_back(eo.name);
    std::vector<PipelineReport> run_rows;
    for (const auto& run : plan.runs) {
        EvaluatedRun facts;
        facts.name = er::run_name(run, names);
        names.push_back(facts.name);
        auto ev = evaluate_run(facts.name, questions, run, plan.match);
        if (ev.unknown_queries.size() == run.queries.size())
            throw NotFoundError("run '" + run.source + "': none of its " + std::to_string(run.queries.size()) +
                                " queries is a question id of" +
                                (plan.questions_name.empty() ? std::string(" the question set")
                                                             : er::quoted(plan.questions_name)) +
                                " (query '" + run.queries.begin()->first + "', question id '" + questions.front().id +
                                "')");
        facts.file = run.source;
        facts.tag = run.tag;
        facts.lines = run.lines;
        facts.queries = run.queries.size();
        facts.questions_missing = ev.questions_missing;
        facts.unknown_queries = std::move(ev.unknown_queries);
        for (const auto& [qid, ranking] : run.queries)
            for (const auto& e : ranking)
                if (!known_docnos.contains(e.docno) && facts.unknown_docnos++ == 0) facts.unknown_docno_example = e.docno;
        out.runs.push_back(std::move(facts));
        run_rows.push_back(std::move(ev.report));
    }

    for (std::size_t i = 0; i < pipelines.size(); ++i) {
        auto eo = pipelines[i];
        std::size_t done = 0;
        const std::string stage = "evaluating " + eo.name;
        if (plan.progress) {
            plan.progress(stage, 0, questions.size());
            eo.tick = [&] { plan.progress(stage, ++done, questions.size()); };
        }
        out.pipelines.push_back(engine.evaluate(questions, eo));
        find_answers_in(out.pipelines.back());
    }
    out.rows = out.pipelines;
    for (auto& row : run_rows) {
        out.rows.push_back(std::move(row));
        find_answers_in(out.rows.back());
    }

    // Abstention: with answerable and unanswerable questions, how a confidence threshold
    // separates them, per pipeline.
    std::vector<bool> answerable;
    for (const auto& q : questions) answerable.push_back(!q.relevant.empty());
    out.unanswerable = static_cast<std::size_t>(std::count(answerable.begin(), answerable.end(), false));
    out.answerable = questions.size() - out.unanswerable;
    if (out.answerable > 0 && out.unanswerable > 0)
        for (const auto& report : out.pipelines) {
            std::vector<double> confidences;
            for (const auto& o : report.outcomes()) confidences.push_back(o.confidence.value_or(0.0));
            out.abstention.push_back(
                {calibrate(confidences, answerable, plan.target_precision,
                           {0.0, 0.1, 0.2, 0.3, default_min_confidence, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9}),
                 auroc(confidences, answerable)});
        }
    out.questions = std::move(questions);
    return out;
}

}  // namespace ragpp
