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
// A reranker may also read the candidates as documents (DocumentReranker): a member
//
//   std::vector<double> reranker.score_documents(std::string_view question,
//                                                std::span<const Document* const> docs);
//
// (a null pointer for a result without its document). The stage calls it instead of
// the text form when it exists; the built-in lexical rerankers use it to read the
// fields BM25F scores (a chunk's title, heading path and source path,
// index/bm25/fields.hpp) beside the text. The text form stays the concept, so a plain
// lambda or the cross-encoder, which read text only, need nothing more.
//
// The rerank stage (`rerank`, `search_reranked`): the first `candidates` results of
// the fused list (default 50) are re-scored; their new order is by stage score
// (higher first), ties by fused rank; the results beyond `candidates` follow in fused
// order, unchanged; the first `keep` results are returned. With w = fused_weight, the
// stage score of the candidate at fused rank f (1-based) is, by `fusion`:
//   score  s = reranker score + w * fused score / best fused score
//          (w = 0: the reranker alone decides; w > 0 interpolates with the fused
//          ranking, as in the BERT reranking follow-ups of Nogueira & Cho that mix
//          first-stage and reranker scores);
//   lists  s = reranker score + w * g, g the mean over the index lists (Result::trace)
//          whose best score among the candidates is > 0 of the candidate's score in
//          that list over that best (0 where the list did not return it): the
//          retrieval scores themselves, so a wide first-stage gap stays and a near tie
//          is the reranker's to break (the fused score over the best when no list has
//          a score); the engine's default for the lexical rerankers, with
//          w = lexical_fused_weight;
//   rank   s = 1 / (rank_k + r) + w / (rank_k + f), r the candidate's rank by
//          reranker score (1 + the number of candidates scoring strictly higher, so
//          equal scores share a rank): reciprocal rank fusion (Cormack, Clarke &
//          Buettcher, SIGIR 2009) of the reranker's order with the fused order,
//          blind to the reranker's scale: a candidate passes one the fused list put
//          before it only when the reranker ranks it strictly higher, and by how far
//          is bounded by w (docs/reranking.md works the bound out).
// Each re-scored result keeps its fused rank and score, the reranker's score and its
// new rank in Result::rerank.
//
// Errors: InvalidArgument when candidates or keep is 0, fused_weight is negative or
// not finite, rank_k is not > 0, the reranker returns a number of scores different
// from the number of passages, or a NaN score.
//
// Complexity: one reranker call on min(candidates, results) passages, then
// O(n log n) for the sorts.
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

/// A reranker that can also score the candidates' documents (their metadata fields
/// with their text); the rerank stage then calls score_documents.
template <class R>
concept DocumentReranker = Reranker<R> && requires(const R& r, std::string_view question,
                                                   std::span<const Document* const> documents) {
    { r.score_documents(question, documents) } -> std::convertible_to<std::vector<double>>;
};

/// How the stage combines the reranker with the fused list (see the header comment).
enum class RerankFusion { score, lists, rank };

struct RerankOptions {
    /// How many fused candidates are re-scored.
    std::size_t candidates = 50;
    /// How many results are returned.
    std::size_t keep = 10;
    /// Weight of the fused list in the stage score (see the header comment).
    double fused_weight = 0.0;
    RerankFusion fusion = RerankFusion::score;
    /// The k of the reciprocal ranks of RerankFusion::rank.
    double rank_k = 60.0;

    void validate(const char* where) const {
        if (candidates == 0) throw InvalidArgument(std::string(where) + ": candidates is 0");
        if (keep == 0) throw InvalidArgument(std::string(where) + ": keep is 0");
        if (!std::isfinite(fused_weight) || fused_weight < 0)
            throw InvalidArgument(std::string(where) + ": fused_weight is " + std::to_string(fused_weight) +
                                  " (must be finite and >= 0)");
        if (!std::isfinite(rank_k) || rank_k <= 0)
            throw InvalidArgument(std::string(where) + ": rank_k is " + std::to_string(rank_k) + " (must be > 0)");
    }
};

/// The fused weight the engine gives the built-in lexical rerankers (ProximityReranker,
/// SoftMatchReranker) with RerankFusion::lists, chosen on five question sets
/// (docs/reranking.md, "Measurements"). ProximityReranker scores in [0, 1], so with one
/// list a candidate can pass another only when its retrieval score is behind by less
/// than 1 / lexical_fused_weight (a quarter) of the best one (SoftMatchReranker, in
/// [-1, 1]: half): a clear first-stage lead is kept.
inline constexpr double lexical_fused_weight = 4.0;

/// Re-scores the first `options.candidates` of `fused` (best first) with `reranker`.
template <Reranker R>
[[nodiscard]] std::vector<Result> rerank(std::string_view question, std::vector<Result> fused, const R& reranker,
                                         const RerankOptions& options = {}) {
    options.validate("rerank");
    const std::size_t n = std::min(options.candidates, fused.size());
    std::vector<double> scores;
    if constexpr (DocumentReranker<R>) {
        std::vector<const Document*> documents;
        documents.reserve(n);
        for (std::size_t i = 0; i < n; ++i) documents.push_back(fused[i].document.get());
        scores = reranker.score_documents(question, std::span<const Document* const>(documents));
    } else {
        std::vector<std::string_view> passages;
        passages.reserve(n);
        for (std::size_t i = 0; i < n; ++i)
            passages.emplace_back(fused[i].document ? std::string_view(fused[i].document->text) : std::string_view());
        scores = reranker(question, std::span<const std::string_view>(passages));
    }
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
        if (options.fusion == RerankFusion::score)
            stage[i] = scores[i] + (options.fused_weight > 0 && best_fused > 0
                                        ? options.fused_weight * fused[i].score / best_fused
                                        : 0.0);
    }
    if (options.fusion == RerankFusion::lists) {
        // Each list's scores over its best among the candidates, averaged over the lists
        // with a positive best; the fused score when no list has one.
        std::size_t lists = 0;
        for (std::size_t i = 0; i < n; ++i) lists = std::max(lists, fused[i].trace.size());
        std::vector<double> first(n, 0.0);
        std::size_t used = 0;
        for (std::size_t l = 0; l < lists; ++l) {
            double best = 0;
            for (std::size_t i = 0; i < n; ++i)
                if (l < fused[i].trace.size() && fused[i].trace[l].score) best = std::max(best, *fused[i].trace[l].score);
            if (!(best > 0)) continue;
            ++used;
            for (std::size_t i = 0; i < n; ++i)
                if (l < fused[i].trace.size() && fused[i].trace[l].score) first[i] += *fused[i].trace[l].score / best;
        }
        for (std::size_t i = 0; i < n; ++i) {
            const double f = used > 0 ? first[i] / static_cast<double>(used) : best_fused > 0 ? fused[i].score / best_fused : 0.0;
            stage[i] = scores[i] + options.fused_weight * f;
        }
    }
    if (options.fusion == RerankFusion::rank) {
        // Competition ranks by reranker score: sorted by score, a rank changes only with the score.
        std::vector<std::size_t> by_score(order);
        std::stable_sort(by_score.begin(), by_score.end(), [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
        std::size_t rank = 1;
        for (std::size_t j = 0; j < n; ++j) {
            if (j > 0 && scores[by_score[j]] < scores[by_score[j - 1]]) rank = j + 1;
            const std::size_t i = by_score[j];
            stage[i] = 1.0 / (options.rank_k + static_cast<double>(rank)) +
                       options.fused_weight / (options.rank_k + static_cast<double>(i + 1));
        }
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
/// (ragpp::Retriever, Collection's retriever); `search_options` is its own options type.
template <class Searcher, Reranker R>
[[nodiscard]] std::vector<Result> search_reranked(const Searcher& retriever, std::string_view question,
                                                  const R& reranker, const RerankOptions& options = {},
                                                  const search_options_t<Searcher>& search_options = {}) {
    options.validate("search_reranked");
    return rerank(question, retriever.search(question, std::max(options.candidates, options.keep), search_options),
                  reranker, options);
}

}  // namespace ragpp
