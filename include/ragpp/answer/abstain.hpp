// ragpp: abstention. The nearest passage always exists, even when nothing answers;
// below a calibrated confidence the pipeline says so instead of passing weak evidence.
//
// Signals (confidence_signals), from the final results of one question:
//   reranker   the top result's reranker score (Result::rerank), clamped to [0, 1]
//              (the built-in rerankers score in [0, 1]: ProximityReranker's coverage,
//              proximity and identifiers; SoftMatchReranker's mean best cosine);
//              absent when the results were not reranked;
//   margin     the relative gap between the two best fused scores,
//              g = (s1 - s2) / s1, scaled: min(1, g / margin_scale), 1 for a single
//              result (fused scores taken from Result::rerank when reranked);
//   agreement  for the top result, the mean over the index lists that returned
//              anything of 1 / (its rank in that list), 0 where it is absent
//              (1 when every index ranks it first);
//   results    the number of results (0: confidence 0).
//
// confidence = (w_r reranker + w_m margin + w_a agreement) / (w_r + w_m + w_a), the
// reranker's term left out (weight and all) when it is absent. Defaults: w_r = 2,
// w_m = 1, w_a = 1, margin_scale = 0.05.
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
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <ragpp/core/error.hpp>
#include <ragpp/retrieve/retriever.hpp>

namespace ragpp {

struct ConfidenceSignals {
    std::optional<double> reranker;
    double margin = 0.0;
    double agreement = 0.0;
    std::size_t results = 0;
};

struct ConfidenceOptions {
    double reranker_weight = 2.0;
    double margin_weight = 1.0;
    double agreement_weight = 1.0;
    double margin_scale = 0.05;

    void validate() const {
        for (double w : {reranker_weight, margin_weight, agreement_weight})
            if (!std::isfinite(w) || w < 0) throw InvalidArgument("ConfidenceOptions: a weight is negative or not finite");
        if (!std::isfinite(margin_scale) || margin_scale <= 0)
            throw InvalidArgument("ConfidenceOptions: margin_scale must be > 0");
    }
};

/// The signals of one question's final results (best first).
[[nodiscard]] inline ConfidenceSignals confidence_signals(std::span<const Result> results,
                                                          const ConfidenceOptions& options = {}) {
    options.validate();
    ConfidenceSignals s;
    s.results = results.size();
    if (results.empty()) return s;
    const Result& top = results.front();
    if (top.rerank) s.reranker = std::clamp(top.rerank->reranker_score, 0.0, 1.0);
    // The two best fused scores.
    double s1 = -1, s2 = -1;
    for (const auto& r : results) {
        const double f = r.rerank ? r.rerank->fused_score : r.score;
        if (f > s1) {
            s2 = s1;
            s1 = f;
        } else if (f > s2) {
            s2 = f;
        }
    }
    if (s2 < 0) s.margin = 1.0;
    else if (s1 > 0) s.margin = std::min(1.0, (s1 - s2) / s1 / options.margin_scale);
    // Agreement over the lists that returned anything.
    std::size_t lists = 0;
    double sum = 0;
    for (std::size_t i = 0; i < top.trace.size(); ++i) {
        const bool used = std::any_of(results.begin(), results.end(),
                                      [&](const Result& r) { return i < r.trace.size() && r.trace[i].rank.has_value(); });
        if (!used) continue;
        ++lists;
        if (top.trace[i].rank) sum += 1.0 / static_cast<double>(*top.trace[i].rank);
    }
    s.agreement = lists ? sum / static_cast<double>(lists) : 0.0;
    return s;
}

/// The confidence in [0, 1] (see the header comment).
[[nodiscard]] inline double confidence(const ConfidenceSignals& s, const ConfidenceOptions& options = {}) {
    options.validate();
    if (s.results == 0) return 0.0;
    double num = options.margin_weight * s.margin + options.agreement_weight * s.agreement;
    double den = options.margin_weight + options.agreement_weight;
    if (s.reranker) {
        num += options.reranker_weight * *s.reranker;
        den += options.reranker_weight;
    }
    return den > 0 ? num / den : 0.0;
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
