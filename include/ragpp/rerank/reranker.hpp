// ragpp: the Reranker concept and the rerank stage.
//
// A reranker reads the question together with each candidate passage and gives each
// one score, higher is better:
//
//   std::vector<double> reranker(std::string_view question,
//                                std::span<const std::string_view> passages);
//
// Any callable of that shape is a reranker: a lambda calling a cross-encoder served
// elsewhere qualifies, as do the built-in ProximityReranker (rerank/proximity.hpp) and
// SoftMatchReranker (rerank/soft_match.hpp). The passages are the candidates' indexed
// texts (for a chunk: its context line, then its raw span), in fused order.
//
// The rerank stage (`rerank`, `search_reranked`): the first `candidates` results of
// the fused list (default 50) are re-scored; their new order is by stage score
// (higher first), ties by fused rank; the results beyond `candidates` follow in fused
// order, unchanged; the first `keep` results are returned. The stage score is
//     s = reranker score + fused_weight * fused score / best fused score
// (fused_weight = 0 by default: the reranker alone decides; a positive weight
// interpolates with the fused ranking, as in Nogueira & Cho's BERT reranking follow-ups
// that mix first-stage and reranker scores). Each re-scored result keeps its fused
// rank and score, the reranker's score and its new rank in Result::rerank.
//
// Errors: InvalidArgument when candidates or keep is 0, when the reranker returns a
// number of scores different from the number of passages, or a NaN score.
//
// Complexity: one reranker call on min(candidates, results) passages, then
// O(n log n) for the sort.
#pragma once

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>
#include <ragpp/retrieve/retriever.hpp>

namespace ragpp {

/// A reranker: (question, passages) -> one score per passage, higher is better.
template <class R>
concept Reranker = requires(const R& r, std::string_view question, std::span<const std::string_view> passages) {
    { r(question, passages) } -> std::convertible_to<std::vector<double>>;
};

struct RerankOptions {
    /// How many fused candidates are re-scored.
    std::size_t candidates = 50;
    /// How many results are returned.
    std::size_t keep = 10;
    /// Weight of the normalised fused score in the stage score (see the header comment).
    double fused_weight = 0.0;

    void validate(const char* where) const {
        if (candidates == 0) throw InvalidArgument(std::string(where) + ": candidates is 0");
        if (keep == 0) throw InvalidArgument(std::string(where) + ": keep is 0");
        if (!std::isfinite(fused_weight) || fused_weight < 0)
            throw InvalidArgument(std::string(where) + ": fused_weight is " + std::to_string(fused_weight) +
                                  " (must be finite and >= 0)");
    }
};

/// Re-scores the first `options.candidates` of `fused` (best first) with `reranker`.
template <Reranker R>
[[nodiscard]] std::vector<Result> rerank(std::string_view question, std::vector<Result> fused, const R& reranker,
                                         const RerankOptions& options = {}) {
    options.validate("rerank");
    const std::size_t n = std::min(options.candidates, fused.size());
    std::vector<std::string_view> passages;
    passages.reserve(n);
    for (std::size_t i = 0; i < n; ++i)
        passages.emplace_back(fused[i].document ? std::string_view(fused[i].document->text) : std::string_view());
    std::vector<double> scores = reranker(question, std::span<const std::string_view>(passages));
    if (scores.size() != n)
        throw InvalidArgument("rerank: the reranker returned " + std::to_string(scores.size()) + " scores for " +
                              std::to_string(n) + " passages");
    double best_fused = 0;
    for (std::size_t i = 0; i < n; ++i) best_fused = std::max(best_fused, fused[i].score);
    std::vector<std::size_t> order(n);
    std::vector<double> stage(n);
    for (std::size_t i = 0; i < n; ++i) {
        if (std::isnan(scores[i]))
            throw InvalidArgument("rerank: the reranker's score of passage " + std::to_string(i) + " is NaN");
        order[i] = i;
        stage[i] = scores[i] + (options.fused_weight > 0 && best_fused > 0
                                    ? options.fused_weight * fused[i].score / best_fused
                                    : 0.0);
    }
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return stage[a] > stage[b]; });
    std::vector<Result> out;
    out.reserve(std::min(options.keep, fused.size()));
    for (std::size_t r = 0; r < n && out.size() < options.keep; ++r) {
        Result res = std::move(fused[order[r]]);
        res.rerank = RerankTrace{order[r] + 1, res.score, scores[order[r]], r + 1};
        res.score = stage[order[r]];
        out.push_back(std::move(res));
    }
    for (std::size_t i = n; i < fused.size() && out.size() < options.keep; ++i) out.push_back(std::move(fused[i]));
    return out;
}

/// Searches `retriever` for max(candidates, keep) fused results, then reranks them.
/// `R` is anything whose `search(query, k, options)` returns std::vector<Result>
/// (ragpp::Retriever, Collection's retriever).
template <class Searcher, Reranker R>
[[nodiscard]] std::vector<Result> search_reranked(const Searcher& retriever, std::string_view question,
                                                  const R& reranker, const RerankOptions& options = {},
                                                  const SearchOptions& search_options = {}) {
    options.validate("search_reranked");
    return rerank(question, retriever.search(question, std::max(options.candidates, options.keep), search_options),
                  reranker, options);
}

}  // namespace ragpp
