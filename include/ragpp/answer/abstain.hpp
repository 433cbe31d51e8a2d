// ragpp: abstention. The nearest passage always exists, even when nothing answers;
// below a calibrated confidence the pipeline says so instead of passing weak evidence.
//
// Query coverage (query_coverage), a lexical query-performance signal: how much of
// the question's rare vocabulary the best passages contain. The question is split into
// whitespace words, each analysed alone (the index's Analyzer; a DocumentAnalyzer's
// analyze_query against the words TermStatistics knows). A word becomes units:
//   - a compound (two or more terms whose last, the analyzer's joined form, is longer
//     than each of the others: "MX-200" -> mx, 200, mx200; "CMAKE_EXPORT_COMPILE_COMMANDS")
//     is ONE unit keyed by its joined form, its other terms being its parts;
//   - any other word gives one unit per term (a CJK run gives its bigrams).
// Repeated units are dropped; a word without terms (stop words) gives none, and so does
// a question word (question_words: "what", "which", "how", "does", "please", "quel",
// "comment", ... in English and French): such words say what kind of answer is asked, not
// what it is about, and a small folder that holds none of them would count them missing.
// Likewise a CJK term made of hiragana only (Japanese particles and endings: "です").
// A unit's
// weight is w = idf^p with idf = ln(1 + (N - df + 0.5) / (df + 0.5)) (Lucene's BM25 idf)
// from TermStatistics (N documents, df of the key term) and p = idf_power (1.5, so that
// rare words weigh more than in plain idf); a unit whose key occurs in no document
// counts at the highest idf, that of df = 1: a word the corpus does not know is missing
// at full weight instead of dropping out. A passage's terms are those of its text and of
// the fields BM25 scores (title, heading path, source path: index/bm25/fields.hpp).
// A unit is covered by a passage when its key term occurs there; a compound whose
// joined form does not occur gets part_credit (0.5) times the idf-weighted share of its
// parts that occur (a made-up CMAKE_QUUX_FROBNICATE_WIDGETS is not covered by a page
// saying "cmake"). The coverage of passage j is
//   C_j = sum of the credit of its units / sum of the weights of all units  (in [0, 1])
// and the query coverage of the ranked passages p_1, p_2, ... is
//   coverage = sum_j a_j C_j   over the first passage_weights.size() passages,
// with a = passage_weights = (0.7, 0.15, 0.15) (a missing passage counts C = 0), so the
// best passage decides most and two more confirm. In [0, 1]. Measured (docs/abstention.md):
// AUROC answerable vs unanswerable 0.957 (SciFact + Cranfield questions), 0.997
// (Cranfield + SciFact questions), 0.924 (examples/cmake-questions.json).
//
// Confidence (confidence): from ConfidenceSignals
//   coverage   the query coverage of the final passages (above);
//   reranker   when a cross-encoder reranked them: its calibrated score of the first
//              passage, the logistic sigmoid of its logit (absent otherwise: the lexical
//              rerankers' scores are not probabilities and are not used);
//   results    the number of passages (0: confidence 0).
// confidence = coverage without a cross-encoder, else
//   (w_c coverage + w_r reranker) / (w_c + w_r), w_c = w_r = 1 (ConfidenceOptions).
// default_min_confidence (0.38) answers 87% / 84% of the answerable questions and refuses
// 92% / 100% of the unanswerable ones on the two cross sets of docs/abstention.md.
//
// Calibration (calibrate): given each question's confidence and whether it is
// answerable (it has a relevant passage), for each threshold t a question is kept
// when confidence >= t and refused otherwise; the table gives the share of
// answerable questions kept, of unanswerable ones refused, and the precision
// (answerable among kept). The suggested threshold is the smallest confidence value
// seen whose precision reaches the target (so it keeps the most answerable questions
// among those that reach it); none when no threshold does.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <ragpp/answer/detail/coverage.hpp>
#include <ragpp/core/concepts.hpp>
#include <ragpp/core/error.hpp>
#include <ragpp/detail/identifiers.hpp>
#include <ragpp/detail/whitespace.hpp>
#include <ragpp/index/bm25/fields.hpp>
#include <ragpp/retrieve/retriever.hpp>

namespace ragpp {

/// The threshold ragpp ask refuses below by default (see the header comment).
inline constexpr double default_min_confidence = 0.38;

/// The corpus statistics query coverage reads: the number of documents and a term's
/// document frequency (an index term, already analysed). Give those of the documents
/// the reader may read.
struct TermStatistics {
    std::size_t documents = 0;
    std::function<std::size_t(std::string_view term)> document_frequency;
};

struct CoverageOptions {
    /// Exponent p of a unit's weight idf^p.
    double idf_power = 1.5;
    /// a_j: the weight of passage j's coverage (best first).
    std::vector<double> passage_weights{0.7, 0.15, 0.15};
    /// Credit of a compound's parts when its joined form is missing, times their share.
    double part_credit = 0.5;
    /// Leave question words out (detail::coverage_question_words).
    bool skip_question_words = true;

    void validate() const {
        if (!std::isfinite(idf_power) || idf_power <= 0) throw InvalidArgument("CoverageOptions: idf_power must be > 0");
        double sum = 0;
        for (double a : passage_weights) {
            if (!std::isfinite(a) || a < 0) throw InvalidArgument("CoverageOptions: a passage weight is negative or not finite");
            sum += a;
        }
        if (passage_weights.empty() || std::abs(sum - 1.0) > 1e-9)
            throw InvalidArgument("CoverageOptions: the passage weights must sum to 1");
        if (!std::isfinite(part_credit) || part_credit < 0 || part_credit > 1)
            throw InvalidArgument("CoverageOptions: part_credit must be in [0, 1]");
    }
};

/// One unit of the question (see the header comment).
struct CoverageUnit {
    /// The question word as written, trimmed of punctuation ("MX-200").
    std::string word;
    /// The key term (a compound's joined form) and a compound's parts.
    std::string key;
    std::vector<std::string> parts;
    double weight = 0;
    /// Each part's idf (the highest for a part no document holds), for part credit.
    std::vector<double> part_idf;
    bool compound = false;
    /// Whether the key term occurs in some document of the statistics.
    bool in_corpus = false;
};

struct CoverageReport {
    /// The query coverage, in [0, 1].
    double score = 0;
    /// C_j of each passage scored (at most passage_weights.size()).
    std::vector<double> passages;
    std::vector<CoverageUnit> units;
    /// Question words that matter and that the best passage does not cover: compounds
    /// (identifiers) first, then by weight, heaviest first. A word matters when it is a
    /// compound, occurs in no document, or weighs at least a quarter of the highest
    /// weight (that of df = 1): common words ("what", "does") are not listed. Empty when
    /// there is no passage.
    std::vector<std::string> missing;
    /// Question words whose key occurs in no document, compounds first.
    std::vector<std::string> unknown;
};


/// The units of `question` (see the header comment), weighted with `stats`.
template <Analyzer A>
[[nodiscard]] std::vector<CoverageUnit> coverage_units(const A& analyzer, std::string_view question,
                                                       const TermStatistics& stats, const CoverageOptions& options = {}) {
    options.validate();
    const double n = static_cast<double>(stats.documents);
    const double top_idf = stats.documents ? detail::coverage_idf(n, 1.0) : 1.0;
    auto idf_of = [&](const std::string& term, bool* in_corpus) {
        const std::size_t df = stats.document_frequency ? stats.document_frequency(term) : 0;
        if (in_corpus) *in_corpus = df > 0;
        return df > 0 ? detail::coverage_idf(n, static_cast<double>(df)) : top_idf;
    };
    auto weigh = [&](CoverageUnit& u) {
        u.weight = std::pow(idf_of(u.key, &u.in_corpus), options.idf_power);
        for (const auto& part : u.parts) u.part_idf.push_back(idf_of(part, nullptr));
    };
    // A DocumentAnalyzer (the multilingual one) keeps the forms the documents know.
    std::function<bool(std::string_view)> known;
    if (stats.document_frequency) known = [&](std::string_view t) { return stats.document_frequency(t) > 0; };
    std::vector<CoverageUnit> units;
    std::unordered_set<std::string> seen;
    std::vector<std::string> terms;
    for (const std::string_view raw : detail::split_words(question)) {
        terms.clear();
        ragpp::analyze_query(analyzer, raw, terms, known);
        if (terms.empty()) continue;
        std::string word(detail::trim_punctuation(raw));
        if (word.empty()) word = std::string(raw);
        if (options.skip_question_words && detail::is_question_word(word)) continue;
        bool compound = terms.size() >= 2;
        for (std::size_t i = 0; compound && i + 1 < terms.size(); ++i) compound = terms.back().size() > terms[i].size();
        if (compound) {
            if (!seen.insert(terms.back()).second) continue;
            CoverageUnit u{word, terms.back(), {terms.begin(), terms.end() - 1}, 0, {}, true, false};
            weigh(u);
            units.push_back(std::move(u));
            continue;
        }
        for (auto& t : terms) {
            if (options.skip_question_words && detail::all_hiragana(t)) continue;
            if (!seen.insert(t).second) continue;
            CoverageUnit u{terms.size() == 1 ? word : t, t, {}, 0, {}, false, false};
            weigh(u);
            units.push_back(std::move(u));
        }
    }
    return units;
}

/// The terms of a passage as query coverage sees them: its text and its BM25 fields.
template <Analyzer A>
[[nodiscard]] std::unordered_set<std::string> coverage_terms(const A& analyzer, const Document& doc) {
    std::vector<std::string> terms;
    analyzer.analyze(doc.text, terms);
    for (const auto& field : bm25_document_fields(doc))
        if (!field.empty()) analyzer.analyze(field, terms);
    return {std::make_move_iterator(terms.begin()), std::make_move_iterator(terms.end())};
}

/// The query coverage of `passages` (best first; see the header comment). Only the
/// first passage_weights.size() passages are read. Throws InvalidArgument for bad options.
template <Analyzer A>
[[nodiscard]] CoverageReport query_coverage(const A& analyzer, std::string_view question,
                                            std::span<const Document* const> passages, const TermStatistics& stats,
                                            const CoverageOptions& options = {}) {
    CoverageReport r;
    r.units = coverage_units(analyzer, question, stats, options);
    double total = 0;
    for (const auto& u : r.units) {
        total += u.weight;
        if (!u.in_corpus && u.compound) r.unknown.push_back(u.word);
    }
    for (const auto& u : r.units)
        if (!u.in_corpus && !u.compound) r.unknown.push_back(u.word);
    const std::size_t n = std::min(passages.size(), options.passage_weights.size());
    std::vector<bool> best_covered(r.units.size(), false);
    for (std::size_t j = 0; j < n; ++j) {
        if (passages[j] == nullptr) throw InvalidArgument("query_coverage: passage " + std::to_string(j) + " is null");
        const auto terms = coverage_terms(analyzer, *passages[j]);
        double credit = 0;
        for (std::size_t i = 0; i < r.units.size(); ++i) {
            const auto& u = r.units[i];
            if (terms.count(u.key)) {
                credit += u.weight;
                if (j == 0) best_covered[i] = true;
            } else if (u.compound && options.part_credit > 0) {
                // Parts weighted by their own idf (unknown parts at the highest).
                double all = 0, got = 0;
                for (std::size_t p = 0; p < u.parts.size(); ++p) {
                    all += u.part_idf[p];
                    if (terms.count(u.parts[p])) got += u.part_idf[p];
                }
                if (all > 0) credit += options.part_credit * u.weight * got / all;
            }
        }
        const double c = total > 0 ? std::min(1.0, credit / total) : 0.0;
        r.passages.push_back(c);
        r.score += options.passage_weights[j] * c;
    }
    r.score = std::clamp(r.score, 0.0, 1.0);
    if (n > 0) {
        const double nd = static_cast<double>(stats.documents);
        const double heaviest = std::pow(stats.documents ? detail::coverage_idf(nd, 1.0) : 1.0, options.idf_power);
        std::vector<std::size_t> order;
        for (std::size_t i = 0; i < r.units.size(); ++i) {
            const auto& u = r.units[i];
            if (!best_covered[i] && (u.compound || !u.in_corpus || u.weight >= 0.25 * heaviest)) order.push_back(i);
        }
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            if (r.units[a].compound != r.units[b].compound) return r.units[a].compound;
            return r.units[a].weight > r.units[b].weight;
        });
        for (std::size_t i : order)
            if (std::find(r.missing.begin(), r.missing.end(), r.units[i].word) == r.missing.end())
                r.missing.push_back(r.units[i].word);
    }
    return r;
}

struct ConfidenceSignals {
    /// The query coverage of the final passages.
    double coverage = 0.0;
    /// A cross-encoder's calibrated score of the first passage (sigmoid of its logit).
    std::optional<double> reranker;
    std::size_t results = 0;
};

struct ConfidenceOptions {
    double coverage_weight = 1.0;
    double reranker_weight = 1.0;

    void validate() const {
        for (double w : {coverage_weight, reranker_weight})
            if (!std::isfinite(w) || w < 0) throw InvalidArgument("ConfidenceOptions: a weight is negative or not finite");
        if (coverage_weight + reranker_weight <= 0) throw InvalidArgument("ConfidenceOptions: both weights are 0");
    }
};

/// The logistic sigmoid of a cross-encoder's logit: its calibrated score in (0, 1).
[[nodiscard]] inline double calibrated_logit(double logit) noexcept { return 1.0 / (1.0 + std::exp(-logit)); }

/// The confidence in [0, 1] (see the header comment).
[[nodiscard]] inline double confidence(const ConfidenceSignals& s, const ConfidenceOptions& options = {}) {
    options.validate();
    if (s.results == 0) return 0.0;
    const double c = std::clamp(s.coverage, 0.0, 1.0);
    if (!s.reranker || options.reranker_weight == 0) return options.coverage_weight > 0 ? c : 0.0;
    const double r = std::clamp(*s.reranker, 0.0, 1.0);
    return (options.coverage_weight * c + options.reranker_weight * r) / (options.coverage_weight + options.reranker_weight);
}

struct CalibrationRow {
    double threshold = 0.0;
    std::size_t answerable_kept = 0, answerable = 0;
    std::size_t unanswerable_refused = 0, unanswerable = 0;
    /// Shares in [0, 1]; 0 when there is no question of the kind.
    double kept_share = 0.0, refused_share = 0.0;
    /// Answerable among kept; empty when nothing is kept.
    std::optional<double> precision;
};

struct Calibration {
    double target_precision = 0.9;
    /// One row per threshold asked.
    std::vector<CalibrationRow> rows;
    /// The suggested threshold and its row (see the header comment).
    std::optional<CalibrationRow> suggested;
};

/// The row of one threshold.
[[nodiscard]] inline CalibrationRow calibration_row(std::span<const double> confidences, std::span<const bool> answerable,
                                                    double threshold) {
    CalibrationRow row;
    row.threshold = threshold;
    for (std::size_t i = 0; i < confidences.size(); ++i) {
        const bool kept = confidences[i] >= threshold;
        if (answerable[i]) {
            ++row.answerable;
            row.answerable_kept += kept ? 1 : 0;
        } else {
            ++row.unanswerable;
            row.unanswerable_refused += kept ? 0 : 1;
        }
    }
    row.kept_share = row.answerable ? static_cast<double>(row.answerable_kept) / static_cast<double>(row.answerable) : 0.0;
    row.refused_share =
        row.unanswerable ? static_cast<double>(row.unanswerable_refused) / static_cast<double>(row.unanswerable) : 0.0;
    const std::size_t kept = row.answerable_kept + (row.unanswerable - row.unanswerable_refused);
    if (kept) row.precision = static_cast<double>(row.answerable_kept) / static_cast<double>(kept);
    return row;
}

/// The calibration table over `thresholds` (default 0, 0.05, ..., 1) and the suggested
/// threshold for `target_precision`. Throws InvalidArgument when the spans differ in
/// size, a confidence is NaN, or the target is outside (0, 1].
[[nodiscard]] inline Calibration calibrate(std::span<const double> confidences, std::span<const bool> answerable,
                                           double target_precision = 0.9, std::vector<double> thresholds = {}) {
    if (confidences.size() != answerable.size())
        throw InvalidArgument("calibrate: " + std::to_string(confidences.size()) + " confidences for " +
                              std::to_string(answerable.size()) + " questions");
    if (!(target_precision > 0 && target_precision <= 1))
        throw InvalidArgument("calibrate: target precision " + std::to_string(target_precision) + " is not in (0, 1]");
    for (std::size_t i = 0; i < confidences.size(); ++i)
        if (std::isnan(confidences[i])) throw InvalidArgument("calibrate: confidence " + std::to_string(i) + " is NaN");
    if (thresholds.empty())
        for (int i = 0; i <= 20; ++i) thresholds.push_back(i / 20.0);
    Calibration c;
    c.target_precision = target_precision;
    for (double t : thresholds) c.rows.push_back(calibration_row(confidences, answerable, t));
    std::vector<double> seen(confidences.begin(), confidences.end());
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    for (double t : seen) {
        auto row = calibration_row(confidences, answerable, t);
        if (row.precision && *row.precision >= target_precision) {
            c.suggested = row;
            break;
        }
    }
    return c;
}

/// The same with the answerable flags in a std::vector<bool> (which has no span).
[[nodiscard]] inline Calibration calibrate(std::span<const double> confidences, const std::vector<bool>& answerable,
                                           double target_precision = 0.9, std::vector<double> thresholds = {}) {
    const std::unique_ptr<bool[]> flags(new bool[answerable.size()]);
    for (std::size_t i = 0; i < answerable.size(); ++i) flags[i] = answerable[i];
    return calibrate(confidences, std::span<const bool>(flags.get(), answerable.size()), target_precision,
                     std::move(thresholds));
}

/// The area under the ROC curve of `confidences` separating answerable questions
/// (positives) from unanswerable ones: the probability that an answerable question gets
/// a higher confidence than an unanswerable one, ties counting one half (Mann-Whitney U
/// over n1 n0 pairs). Empty when either kind is absent. O(n log n). Throws
/// InvalidArgument when the sizes differ or a confidence is NaN.
[[nodiscard]] inline std::optional<double> auroc(std::span<const double> confidences, const std::vector<bool>& answerable) {
    if (confidences.size() != answerable.size())
        throw InvalidArgument("auroc: " + std::to_string(confidences.size()) + " confidences for " +
                              std::to_string(answerable.size()) + " questions");
    std::vector<std::pair<double, bool>> v;
    v.reserve(confidences.size());
    for (std::size_t i = 0; i < confidences.size(); ++i) {
        if (std::isnan(confidences[i])) throw InvalidArgument("auroc: confidence " + std::to_string(i) + " is NaN");
        v.emplace_back(confidences[i], answerable[i]);
    }
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    double pos = 0, neg = 0, u = 0;
    // Walk groups of equal confidence: each positive beats the negatives below the group
    // and ties with the group's negatives.
    for (std::size_t i = 0; i < v.size();) {
        std::size_t j = i;
        double gp = 0, gn = 0;
        while (j < v.size() && v[j].first == v[i].first) (v[j++].second ? gp : gn) += 1;
        u += gp * (neg + 0.5 * gn);
        pos += gp;
        neg += gn;
        i = j;
    }
    if (pos == 0 || neg == 0) return std::nullopt;
    return u / (pos * neg);
}

/// The table as text: one line per row, then the suggestion.
[[nodiscard]] inline std::string format_calibration(const Calibration& c) {
    std::string out = "threshold  answerable kept  unanswerable refused  precision\n";
    char buf[160];
    auto line = [&](const CalibrationRow& r, const char* mark) {
        std::snprintf(buf, sizeof buf, "%9.3f  %6.1f%% (%zu/%zu)  %8.1f%% (%zu/%zu)  %s%s\n", r.threshold,
                      100 * r.kept_share, r.answerable_kept, r.answerable, 100 * r.refused_share,
                      r.unanswerable_refused, r.unanswerable,
                      r.precision ? std::to_string(*r.precision).substr(0, 6).c_str() : "-", mark);
        out += buf;
    };
    for (const auto& r : c.rows) line(r, "");
    if (c.suggested) {
        std::snprintf(buf, sizeof buf, "suggested threshold for precision >= %.2f:\n", c.target_precision);
        out += buf;
        line(*c.suggested, "  <- --min-confidence");
    } else {
        std::snprintf(buf, sizeof buf, "no threshold reaches precision %.2f\n", c.target_precision);
        out += buf;
    }
    return out;
}

}  // namespace ragpp
