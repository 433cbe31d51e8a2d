// ragpp: SoftMatchReranker, late interaction over an embedder's word vectors.
//
// Each distinct term of the question (the caller's Analyzer) is compared with each
// distinct term of the passage through the vectors an Embedder gives the terms
// (embedded alone, Role::passage for both sides so that they share one space), and
// keeps its best match:
//
//   score = sum_i v_i * max_j cos(e(q_i), e(p_j)) / sum_i v_i
//
// the MaxSim operator of ColBERT (Khattab & Zaharia, "ColBERT: Efficient and
// Effective Passage Search via Contextualized Late Interaction over BERT", SIGIR
// 2020), averaged with weights v_i (term_weight, e.g. idf; 1 without a function;
// terms of weight 0 are ignored) instead of summed, so the score is in [-1, 1]. A term
// found as is in the passage scores 1; "vectorise" against "vectorize" scores their
// vectors' cosine. A term whose vector is zero scores 0 against everything.
//
// With HashingEmbedder the vectors are character n-gram features: the match is
// morphological (inflections, spelling variants, compounds). With word vectors
// (WordVectorEmbedder, a Model2Vec StaticEmbedder) it is semantic.
//
// Cost: each call embeds the distinct terms of the question and of all its passages
// once (embed_batch), then one (q x d) by (d x p) product per passage; passages
// longer than `max_passage_terms` distinct terms keep their first ones.
#pragma once

#include <algorithm>
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
    /// Distinct passage terms considered, in text order.
    std::size_t max_passage_terms = 1024;
};

template <Embedder E, Analyzer A>
class SoftMatchReranker {
public:
    SoftMatchReranker(E embedder, A analyzer, SoftMatchOptions options = {}, TermWeightFn term_weight = {})
        : embedder_(std::move(embedder)), analyzer_(std::move(analyzer)), options_(options),
          term_weight_(std::move(term_weight)) {
        if (options_.max_passage_terms == 0) throw InvalidArgument("SoftMatchReranker: max_passage_terms is 0");
    }

    [[nodiscard]] std::vector<double> operator()(std::string_view question, std::span<const std::string_view> passages) const {
        // Distinct terms of the question (with weights) and of each passage.
        std::vector<std::string> qterms;
        std::vector<double> qweights;
        for (auto& t : distinct(question, static_cast<std::size_t>(-1))) {
            const double w = term_weight_ ? term_weight_(t) : 1.0;
            if (!std::isfinite(w) || w < 0)
                throw InvalidArgument("SoftMatchReranker: the weight of term '" + t + "' is negative or not finite");
            if (w == 0) continue;
            qterms.push_back(std::move(t));
            qweights.push_back(w);
        }
        std::vector<double> out(passages.size(), 0.0);
        if (qterms.empty()) return out;

        std::vector<std::vector<std::string>> pterms;
        std::unordered_map<std::string, Eigen::Index> row;  // term -> row of `vectors`
        std::vector<std::string> all;
        auto intern = [&](const std::string& t) {
            if (row.emplace(t, static_cast<Eigen::Index>(all.size())).second) all.push_back(t);
        };
        for (const auto& t : qterms) intern(t);
        for (auto p : passages) {
            pterms.push_back(distinct(p, options_.max_passage_terms));
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
        const auto qn = static_cast<Eigen::Index>(qterms.size());
        RowMatrixXf q(qn, vectors.cols());
        for (Eigen::Index i = 0; i < qn; ++i) q.row(i) = vectors.row(row.at(qterms[static_cast<std::size_t>(i)]));
        double total = 0;
        for (double w : qweights) total += w;

        for (std::size_t p = 0; p < passages.size(); ++p) {
            const auto& terms = pterms[p];
            if (terms.empty()) continue;
            RowMatrixXf m(static_cast<Eigen::Index>(terms.size()), vectors.cols());
            for (std::size_t j = 0; j < terms.size(); ++j) m.row(static_cast<Eigen::Index>(j)) = vectors.row(row.at(terms[j]));
            const Eigen::MatrixXf sims = q * m.transpose();  // qn x terms
            double s = 0;
            for (Eigen::Index i = 0; i < qn; ++i)
                s += qweights[static_cast<std::size_t>(i)] * static_cast<double>(sims.row(i).maxCoeff());
            out[p] = s / total;
        }
        return out;
    }

    [[nodiscard]] const E& embedder() const noexcept { return embedder_; }

private:
    [[nodiscard]] std::vector<std::string> distinct(std::string_view text, std::size_t cap) const {
        std::vector<std::string> terms;
        analyzer_.analyze(text, terms);
        std::vector<std::string> out;
        std::unordered_map<std::string_view, bool> seen;
        for (const auto& t : terms) {
            if (out.size() >= cap) break;
            if (seen.emplace(t, true).second) out.push_back(t);
        }
        return out;
    }

    E embedder_;
    A analyzer_;
    SoftMatchOptions options_;
    TermWeightFn term_weight_;
};

}  // namespace ragpp
