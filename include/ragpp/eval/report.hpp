// ragpp: reports of an evaluation: a readable table, JSON with everything, an SVG chart
// of recall at k, and TREC run and qrels files for trec_eval or ranx.
//
// TREC files. Identifiers are written with whitespace replaced by '_' (trec_eval splits
// on whitespace) in both the run and the qrels. trec_eval orders a run by score, then by
// document id in *decreasing* order; our rankings break score ties by the smaller id
// instead. So that trec_eval sees exactly our order, the run file's score column is
// not the pipeline score but a strictly decreasing rank score (n - rank + 1); the
// pipeline scores are in the JSON report. Our figures then equal trec_eval's
// (`trec_eval -c -m ndcg_cut -m recall -m recip_rank qrels run`): -c counts questions
// without results as zero, as we do. Unanswerable questions (no relevant label) are
// left out of the qrels, so trec_eval skips them, as our averages do.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <ragpp/eval/detail/report.hpp>
#include <ragpp/eval/evaluate.hpp>
#include <ragpp/eval/significance.hpp>
#include <ragpp/io/trec.hpp>

namespace ragpp {

/// The metrics table: one row per pipeline and k.
[[nodiscard]] inline std::string format_metrics_table(const std::vector<PipelineReport>& reports,
                                                      const std::vector<std::size_t>& ks) {
    std::ostringstream o;
    std::size_t w = 8;
    for (const auto& r : reports) w = std::max(w, r.name().size() + 1);
    o << detail::pad("pipeline", w) << "    k  hit_rate  recall  precision     mrr    ndcg     map\n";
    for (const auto& r : reports) {
        for (std::size_t k : ks) {
            o << detail::pad(r.name(), w) << detail::lpad(std::to_string(k), 5);
            const int widths[] = {10, 8, 11, 8, 8, 8};
            int wi = 0;
            for (Measure m : all_measures)
                o << detail::lpad(detail::fmt("%.4f", r.summary(m, k).mean), static_cast<std::size_t>(widths[wi++]));
            o << "\n";
        }
    }
    if (!reports.empty()) {
        const auto s = reports.front().summary(Measure::recall, ks.empty() ? 10 : ks.back());
        o << "(" << s.questions << " answerable questions averaged; " << s.without_relevant
          << " without any relevant passage counted apart)\n";
    }
    return o.str();
}

/// Answer containment at each k, one row per pipeline (eval/containment.hpp); empty when
/// no report has it (no reference answers, or find_answers not run).
[[nodiscard]] inline std::string format_answer_containment(const std::vector<PipelineReport>& reports,
                                                           const std::vector<std::size_t>& ks) {
    if (reports.empty() || ks.empty() || !reports.front().answer_containment(ks.front())) return {};
    std::ostringstream o;
    std::size_t w = 8;
    for (const auto& r : reports) w = std::max(w, r.name().size() + 1);
    o << "answer containment: share of the " << reports.front().questions_with_answer()
      << " questions with a reference answer whose answer occurs in the top k passages (case, accents, "
         "punctuation and spacing folded)\n"
      << detail::pad("pipeline", w);
    for (std::size_t k : ks) o << detail::lpad("k=" + std::to_string(k), 8);
    o << "\n";
    for (const auto& r : reports) {
        o << detail::pad(r.name(), w);
        for (std::size_t k : ks) {
            const auto v = r.answer_containment(k);
            o << detail::lpad(v ? detail::fmt("%.4f", *v) : std::string("-"), 8);
        }
        o << "\n";
    }
    return o.str();
}

/// Differences of each pipeline with the first one, with paired randomization p-values.
[[nodiscard]] inline std::string format_comparisons(const std::vector<PipelineReport>& reports,
                                                    const std::vector<std::size_t>& ks, std::size_t trials = 10000) {
    std::ostringstream o;
    if (reports.size() < 2) return {};
    o << "differences with " << reports.front().name() << " (paired randomization test, " << trials << " trials):\n";
    std::size_t w = 10;
    for (const auto& r : reports) w = std::max(w, r.name().size() + 2);
    for (std::size_t p = 1; p < reports.size(); ++p) {
        for (Measure m : {Measure::ndcg, Measure::recall}) {
            o << "  " << detail::pad(reports[p].name(), w) << detail::pad(std::string(measure_name(m)), 7);
            for (std::size_t k : ks) {
                const auto t = paired_randomization_test(reports.front().per_question(m, k),
                                                         reports[p].per_question(m, k), trials);
                o << "  @" << k << " " << detail::fmt("%+.4f", t.difference) << " (p=" << detail::fmt("%.3f", t.p_value)
                  << ")";
            }
            o << "\n";
        }
        const auto t = paired_randomization_test(reports.front().per_question(Measure::mrr, no_cutoff),
                                                 reports[p].per_question(Measure::mrr, no_cutoff), trials);
        o << "  " << detail::pad(reports[p].name(), w) << detail::pad("mrr", 7) << "  " << detail::fmt("%+.4f", t.difference)
          << " (p=" << detail::fmt("%.3f", t.p_value) << ")\n";
    }
    return o.str();
}

/// Latency per pipeline and stage, p50 and p95 in milliseconds.
[[nodiscard]] inline std::string format_latency(const std::vector<PipelineReport>& reports) {
    std::ostringstream o;
    o << "latency per question (ms)       p50       p95\n";
    for (const auto& r : reports) {
        const auto t = r.total_latency();
        o << "  " << detail::pad(r.name() + " (total)", 26) << detail::lpad(detail::fmt("%.3f", t.p50 * 1e3), 9)
          << detail::lpad(detail::fmt("%.3f", t.p95 * 1e3), 10) << "\n";
        for (const auto& [stage, l] : r.stage_latencies())
            o << "    " << detail::pad(stage, 24) << detail::lpad(detail::fmt("%.3f", l.p50 * 1e3), 9)
              << detail::lpad(detail::fmt("%.3f", l.p95 * 1e3), 10) << "\n";
    }
    return o.str();
}

/// One line per question: ok, MISS (ranking: relevant passage among the candidates
/// but below k; retrieval: not among the candidates) or "unanswerable", with what was
/// found at the top.
[[nodiscard]] inline std::string format_questions(const PipelineReport& r, std::size_t k, std::size_t show = 3) {
    std::ostringstream o;
    o << r.name() << ": per question at k = " << k << "\n";
    std::size_t ok = 0, rank_miss = 0, retr_miss = 0, unanswerable = 0;
    for (std::size_t i = 0; i < r.outcomes().size(); ++i) {
        const auto& q = r.questions()[i];
        const auto& out = r.outcomes()[i];
        std::string status;
        if (q.relevant.empty()) {
            status = "n/a ";
            ++unanswerable;
        } else {
            switch (r.miss(i, k)) {
                case MissStage::none: status = "ok  "; ++ok; break;
                case MissStage::ranking: status = "MISS"; ++rank_miss; break;
                case MissStage::retrieval: status = "MISS"; ++retr_miss; break;
            }
        }
        o << "  " << status << " " << detail::pad(q.id, 8) << " " << q.text << "\n";
        if (!q.relevant.empty() && r.miss(i, k) != MissStage::none) {
            o << "       " << (r.miss(i, k) == MissStage::ranking
                                   ? "ranking: first relevant at rank " + std::to_string(out.first_relevant)
                                   : std::string("retrieval: no relevant passage among the candidates"))
              << "; expected";
            for (const auto& [label, g] : q.relevant)
                if (g > 0) o << " " << label;
            o << "\n";
        }
        o << "       found:";
        for (std::size_t j = 0; j < std::min(show, out.keys.size()); ++j) o << " " << out.keys[j];
        if (out.keys.empty()) o << " nothing";
        o << "\n";
    }
    o << "  " << ok << " ok, " << rank_miss << " missed by ranking, " << retr_miss << " missed by retrieval, "
      << unanswerable << " without a relevant passage\n";
    return o.str();
}

/// Everything as JSON.
[[nodiscard]] inline nlohmann::json report_json(const std::vector<PipelineReport>& reports,
                                                const std::vector<std::size_t>& ks, std::size_t miss_k) {
    nlohmann::json j;
    j["ks"] = ks;
    j["miss_k"] = miss_k;
    for (const auto& r : reports) {
        nlohmann::json p;
        p["name"] = r.name();
        for (Measure m : all_measures)
            for (std::size_t k : ks) {
                const auto s = r.summary(m, k);
                p["metrics"][std::string(measure_name(m))][std::to_string(k)] = s.mean;
                p["answerable"] = s.questions;
                p["without_relevant"] = s.without_relevant;
            }
        p["metrics"]["mrr"]["all"] = r.summary(Measure::mrr, no_cutoff).mean;
        for (std::size_t k : ks)
            if (auto v = r.answer_containment(k)) p["metrics"]["answer_containment"][std::to_string(k)] = *v;
        p["metrics"]["map"]["all"] = r.summary(Measure::map, no_cutoff).mean;
        const auto t = r.total_latency();
        p["latency_ms"]["total"] = {{"p50", t.p50 * 1e3}, {"p95", t.p95 * 1e3}};
        for (const auto& [stage, l] : r.stage_latencies()) p["latency_ms"][stage] = {{"p50", l.p50 * 1e3}, {"p95", l.p95 * 1e3}};
        nlohmann::json qs = nlohmann::json::array();
        for (std::size_t i = 0; i < r.outcomes().size(); ++i) {
            const auto& q = r.questions()[i];
            const auto& out = r.outcomes()[i];
            nlohmann::json jq;
            jq["id"] = q.id;
            jq["question"] = q.text;
            jq["relevant"] = q.relevant;
            jq["status"] = q.relevant.empty() ? "unanswerable" : std::string(miss_stage_name(r.miss(i, miss_k)));
            jq["first_relevant"] = out.first_relevant;
            if (out.confidence) jq["confidence"] = *out.confidence;
            if (q.answer && r.answer_containment(ks.empty() ? 1 : ks.back())) {
                jq["answer"] = *q.answer;
                jq["answer_rank"] = out.answer_rank;
            }
            for (std::size_t k : ks)
                if (auto v = r.value(i, Measure::ndcg, k)) jq["ndcg"][std::to_string(k)] = *v;
            nlohmann::json top = nlohmann::json::array();
            for (std::size_t x = 0; x < std::min<std::size_t>(10, out.keys.size()); ++x)
                top.push_back({{"key", out.keys[x]}, {"label", out.ranking[x]}, {"score", out.scores[x]}});
            jq["top"] = top;
            jq["ms"] = out.seconds * 1e3;
            qs.push_back(jq);
        }
        p["questions"] = qs;
        j["pipelines"].push_back(p);
    }
    for (std::size_t p = 1; p < reports.size(); ++p)
        for (std::size_t k : ks) {
            const auto t = paired_randomization_test(reports.front().per_question(Measure::ndcg, k),
                                                     reports[p].per_question(Measure::ndcg, k));
            j["comparisons"].push_back({{"baseline", reports.front().name()},
                                        {"pipeline", reports[p].name()},
                                        {"metric", "ndcg@" + std::to_string(k)},
                                        {"difference", t.difference},
                                        {"p_value", t.p_value}});
        }
    return j;
}

/// What the docno column of a run written from a report holds.
enum class RunDocnos {
    /// The ranking entries: the question's labels, or the section of a chunk that
    /// matches none (what the qrels of write_trec_qrels judge).
    labels,
    /// The chunk id behind each ranking entry (the best-ranked chunk of each label or
    /// section): what an engine that indexed ragpp's chunks would return.
    chunks
};

/// A TREC run file: "qid Q0 docid rank score run", `depth` results per question at most.
inline void write_trec_run(std::ostream& out, const PipelineReport& r, std::size_t depth = 1000,
                           RunDocnos docnos = RunDocnos::labels) {
    std::vector<TrecRunEntry> entries;
    for (std::size_t i = 0; i < r.outcomes().size(); ++i) {
        const auto& o = r.outcomes()[i];
        const std::size_t n = std::min(depth, o.ranking.size());
        entries.clear();
        for (std::size_t x = 0; x < n; ++x)
            entries.push_back({docnos == RunDocnos::chunks ? o.keys[x] : o.ranking[x], static_cast<double>(n - x)});
        write_trec_run(out, r.questions()[i].id, entries, r.name());
    }
}

/// A TREC qrels file: "qid 0 docid grade" for the questions with a relevant label.
inline void write_trec_qrels(std::ostream& out, const QuestionSet& questions) {
    for (const auto& q : questions) {
        bool any = false;
        for (const auto& [label, g] : q.relevant) any = any || g > 0;
        if (!any) continue;
        std::vector<std::pair<std::string, double>> sorted(q.relevant.begin(), q.relevant.end());
        std::sort(sorted.begin(), sorted.end());
        for (const auto& [label, g] : sorted)
            out << trec_id(q.id) << " 0 " << trec_id(label) << ' ' << static_cast<long long>(std::lround(g))
                << '\n';
    }
}

/// An SVG line chart of `metric` at each k, one line per pipeline.
[[nodiscard]] inline std::string recall_chart_svg(const std::vector<PipelineReport>& reports, const std::vector<std::size_t>& ks,
                                                  Measure metric = Measure::recall, const std::string& title = {}) {
    const double W = 640, H = 400, left = 60, right = 150, top = 40, bottom = 50;
    const double pw = W - left - right, ph = H - top - bottom;
    std::ostringstream o;
    o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H << "\" viewBox=\"0 0 " << W << ' ' << H
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
    o << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    const std::string t = title.empty() ? std::string(measure_name(metric)) + " at k" : title;
    o << "<text x=\"" << W / 2 << "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">" << t << "</text>\n";
    auto xpos = [&](std::size_t i) {
        return ks.size() <= 1 ? left + pw / 2 : left + pw * static_cast<double>(i) / static_cast<double>(ks.size() - 1);
    };
    auto ypos = [&](double v) { return top + ph * (1.0 - v); };
    for (int g = 0; g <= 10; g += 2) {
        const double v = g / 10.0;
        o << "<line x1=\"" << left << "\" x2=\"" << left + pw << "\" y1=\"" << ypos(v) << "\" y2=\"" << ypos(v)
          << "\" stroke=\"#ddd\"/>\n";
        o << "<text x=\"" << left - 8 << "\" y=\"" << ypos(v) + 4 << "\" text-anchor=\"end\">" << detail::fmt("%.1f", v)
          << "</text>\n";
    }
    for (std::size_t i = 0; i < ks.size(); ++i)
        o << "<text x=\"" << xpos(i) << "\" y=\"" << top + ph + 18 << "\" text-anchor=\"middle\">" << ks[i] << "</text>\n";
    o << "<text x=\"" << left + pw / 2 << "\" y=\"" << H - 10 << "\" text-anchor=\"middle\">k (passages given to the model)</text>\n";
    o << "<line x1=\"" << left << "\" x2=\"" << left << "\" y1=\"" << top << "\" y2=\"" << top + ph << "\" stroke=\"black\"/>\n";
    o << "<line x1=\"" << left << "\" x2=\"" << left + pw << "\" y1=\"" << top + ph << "\" y2=\"" << top + ph
      << "\" stroke=\"black\"/>\n";
    const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};
    for (std::size_t p = 0; p < reports.size(); ++p) {
        const char* c = colors[p % 8];
        o << "<polyline fill=\"none\" stroke=\"" << c << "\" stroke-width=\"2\" points=\"";
        for (std::size_t i = 0; i < ks.size(); ++i)
            o << xpos(i) << ',' << ypos(reports[p].summary(metric, ks[i]).mean) << ' ';
        o << "\"/>\n";
        for (std::size_t i = 0; i < ks.size(); ++i) {
            const double v = reports[p].summary(metric, ks[i]).mean;
            o << "<circle cx=\"" << xpos(i) << "\" cy=\"" << ypos(v) << "\" r=\"3.5\" fill=\"" << c << "\"><title>"
              << reports[p].name() << ' ' << measure_name(metric) << '@' << ks[i] << " = " << detail::fmt("%.3f", v)
              << "</title></circle>\n";
        }
        const double ly = top + 10 + 22 * static_cast<double>(p);
        o << "<line x1=\"" << left + pw + 15 << "\" x2=\"" << left + pw + 40 << "\" y1=\"" << ly << "\" y2=\"" << ly
          << "\" stroke=\"" << c << "\" stroke-width=\"3\"/>\n";
        std::string name = reports[p].name();
        for (auto& ch : name)
            if (ch == '<' || ch == '>' || ch == '&') ch = '_';
        o << "<text x=\"" << left + pw + 46 << "\" y=\"" << ly + 4 << "\">" << name << "</text>\n";
    }
    o << "</svg>\n";
    return o.str();
}

}  // namespace ragpp
