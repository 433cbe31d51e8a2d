// ragpp: SoftMatchReranker, late interaction over an embedder's word vectors.
//
// The question is cut into words as ProximityReranker does (rerank/proximity.hpp:
// detail::rerank_words, the caller's Analyzer): a plain word is one term; a compound
// ("MX-200" -> mx, 200, mx200) is its parts and its joined form. Each distinct term of
// the question is compared with each distinct term of the passage through the
// vectors an Embedder gives the terms (embedded alone, Role::passage for both sides
// so that they share one space), and keeps its best match
// m(t) = max_j cos(e(t), e(p_j)). A word's credit is m of its term; for a compound,
//
//   credit(w) = max(m(joined form), beta * sum_p u_p m(p) / sum_p u_p)
//
// (u_p the parts' own weights, beta = SoftMatchOptions::part_credit = 0.5): the parts
// found as is earn beta, not the whole word, as in ProximityReranker. Then
//
//   S = sum_i v_i credit(w_i) / sum_i v_i
//
// the MaxSim operator of ColBERT (Khattab & Zaharia, "ColBERT: Efficient and
// Effective Passage Search via Contextualized Late Interaction over BERT", SIGIR
// 2020) over words, averaged with weights v_i (the largest term_weight of the word's
// terms, e.g. idf; 1 without a function; words of weight 0 are ignored) instead of
// summed, so the score is in [-1, 1]. A term found as is in the passage scores 1;
// "vectorise" against "vectorize" scores their vectors' cosine. A term whose vector
// is zero scores 0 against everything.
//
// Documents (score_documents): the passage's terms are those of its fields (title,
// heading path, source path: bm25_document_fields) and of its text; when a field is
// non-empty, F is S with the field terms alone as the passage, and the score is
// (S + f F) / (1 + f), f = SoftMatchOptions::field_weight (1): a page named by the
// question's words leads one that mentions them. Plain passages score S.
//
// With HashingEmbedder the vectors are character n-gram features: the match is
// morphological (inflections, spelling variants, compounds). With word vectors
// (WordVectorEmbedder, a Model2Vec StaticEmbedder) it is semantic.
//
// Cost: each call embeds the distinct terms of the question and of all its passages
// once (embed_batch), then one (q x d) by (d x p) product per passage; passages
// longer than `max_passage_terms` distinct terms (fields first) keep their first ones.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include <ragpp/core/concepts.hpp>
#include <ragpp/core/error.hpp>
#include <ragpp/embed/embedder.hpp>
#include <ragpp/rerank/proximity.hpp>
#include <ragpp/rerank/reranker.hpp>

namespace ragpp {

struct SoftMatchOptions {
    /// Distinct passage terms considered, in text order (fields first).
    std::size_t max_passage_terms = 1024;
    /// The most a compound earns through its parts alone, as a share of its credit; in [0, 1).
    double part_credit = 0.5;
    /// Weight of the field score F (documents with fields only); >= 0.
    double field_weight = 1.0;
};

template <Embedder E, Analyzer A>
class SoftMatchReranker {
public:
    SoftMatchReranker(E embedder, A analyzer, SoftMatchOptions options = {}, TermWeightFn term_weight = {})
        : embedder_(std::move(embedder)), analyzer_(std::move(analyzer)), options_(options),
          term_weight_(std::move(term_weight)) {
        if (options_.max_passage_terms == 0) throw InvalidArgument("SoftMatchReranker: max_passage_terms is 0");
        if (!(options_.part_credit >= 0 && options_.part_credit < 1))
            throw InvalidArgument("SoftMatchReranker: part_credit must be in [0, 1)");
        if (!(std::isfinite(options_.field_weight) && options_.field_weight >= 0))
            throw InvalidArgument("SoftMatchReranker: field_weight must be finite and >= 0");
        joins_ = detail::adds_joined_forms(analyzer_);
    }

    /// Scores passages given as plain text (no fields).
    [[nodiscard]] std::vector<double> operator()(std::string_view question, std::span<const std::string_view> passages) const {
        std::vector<std::array<std::string_view, 2>> views;
        views.reserve(passages.size());
        for (auto p : passages) views.push_back({std::string_view(), p});
        return score(question, views);
    }

    /// Scores documents: their fields and text (a null pointer scores as an empty text).
    [[nodiscard]] std::vector<double> score_documents(std::string_view question,
                                                      std::span<const Document* const> documents) const {
        std::vector<std::string> fields;
        std::vector<std::array<std::string_view, 2>> views;
        fields.reserve(documents.size());
        for (const Document* d : documents) {
            const auto seg = detail::rerank_segments(d);
            std::string f;
            for (std::size_t i = 0; i < 3; ++i)
                if (!seg[i].empty()) f += (f.empty() ? "" : "\n") + seg[i];
            fields.push_back(std::move(f));
        }
        for (std::size_t i = 0; i < documents.size(); ++i)
            views.push_back({fields[i], documents[i] ? std::string_view(documents[i]->text) : std::string_view()});
        return score(question, views);
    }

    [[nodiscard]] const E& embedder() const noexcept { return embedder_; }

private:
    /// Each passage as {fields, text}; an empty `fields` leaves F out.
    [[nodiscard]] std::vector<double> score(std::string_view question,
                                            std::span<const std::array<std::string_view, 2>> passages) const {
        std::vector<detail::RerankWord> words;
        for (auto& w : detail::rerank_words(analyzer_, joins_, question, term_weight_, "SoftMatchReranker"))
            if (w.weight > 0) words.push_back(std::move(w));
        std::vector<double> out(passages.size(), 0.0);
        if (words.empty()) return out;

        std::unordered_map<std::string, Eigen::Index> row;  // term -> row of `vectors`
        std::vector<std::string> all;
        auto intern = [&](const std::string& t) {
            if (row.emplace(t, static_cast<Eigen::Index>(all.size())).second) all.push_back(t);
        };
        for (const auto& w : words)
            for (const auto& t : w.terms) intern(t);
        const std::size_t qn = all.size();  // the question's terms are rows 0..qn-1
        // Each passage's distinct terms, fields first; `nfield` of them come from its fields.
        std::vector<std::vector<std::string>> pterms;
        std::vector<std::size_t> nfield;
        for (const auto& [fields, text] : passages) {
            std::vector<std::string> terms;
            analyzer_.analyze(fields, terms);
            const std::size_t f = terms.size();
            analyzer_.analyze(text, terms);
            pterms.push_back(distinct(terms, f, nfield.emplace_back()));
            for (const auto& t : pterms.back()) intern(t);
        }
        RowMatrixXf vectors = embedder_.embed_batch(std::span<const std::string>(all), Role::passage);
        if (vectors.rows() != static_cast<Eigen::Index>(all.size()) ||
            vectors.cols() != static_cast<Eigen::Index>(embedder_.dimension()))
            throw DimensionError("SoftMatchReranker: the embedder returned a " + std::to_string(vectors.rows()) + "x" +
                                 std::to_string(vectors.cols()) + " matrix for " + std::to_string(all.size()) + " terms");
        for (Eigen::Index r = 0; r < vectors.rows(); ++r) {
            const float n = vectors.row(r).norm();
            if (n > 0) vectors.row(r) /= n;
        }
        const auto q = vectors.topRows(static_cast<Eigen::Index>(qn));
        double total = 0;
        for (const auto& w : words) total += w.weight;

        std::vector<double> best(qn);
        auto mean = [&](const std::vector<double>& m) {  // S over the best matches m
            auto at = [&](const std::string& t) { return m[static_cast<std::size_t>(row.at(t))]; };
            double s = 0;
            for (const auto& w : words)
                s += w.weight * (w.parts.empty() ? at(w.joined())
                                                 : std::max(at(w.joined()), detail::part_credit(w, options_.part_credit, at)));
            return s / total;
        };
        for (std::size_t p = 0; p < passages.size(); ++p) {
            const auto& terms = pterms[p];
            if (terms.empty()) continue;
            RowMatrixXf m(static_cast<Eigen::Index>(terms.size()), vectors.cols());
            for (std::size_t j = 0; j < terms.size(); ++j) m.row(static_cast<Eigen::Index>(j)) = vectors.row(row.at(terms[j]));
            const Eigen::MatrixXf sims = q * m.transpose();  // qn x terms
            for (std::size_t i = 0; i < qn; ++i) best[i] = static_cast<double>(sims.row(static_cast<Eigen::Index>(i)).maxCoeff());
            out[p] = mean(best);
            if (passages[p][0].empty() || options_.field_weight == 0) continue;
            const auto f = static_cast<Eigen::Index>(nfield[p]);
            for (std::size_t i = 0; i < qn; ++i)
                best[i] = f == 0 ? 0.0 : static_cast<double>(sims.row(static_cast<Eigen::Index>(i)).leftCols(f).maxCoeff());
            out[p] = (out[p] + options_.field_weight * mean(best)) / (1 + options_.field_weight);
        }
        return out;
    }

    /// The first `max_passage_terms` distinct terms; `from_fields` receives how many of
    /// them are among the first `fields` terms.
    [[nodiscard]] std::vector<std::string> distinct(const std::vector<std::string>& terms, std::size_t fields,
                                                    std::size_t& from_fields) const {
        std::vector<std::string> out;
        std::unordered_map<std::string_view, bool> seen;
        from_fields = 0;
        for (std::size_t i = 0; i < terms.size() && out.size() < options_.max_passage_terms; ++i)
            if (seen.emplace(terms[i], true).second) {
                out.push_back(terms[i]);
                if (i < fields) ++from_fields;
            }
        return out;
    }

    E embedder_;
    A analyzer_;
    SoftMatchOptions options_;
    TermWeightFn term_weight_;
    bool joins_ = true;
};

}  // namespace ragpp
