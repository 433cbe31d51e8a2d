// ragpp: reciprocal rank fusion (RRF), a free function over ranked lists of ids.
//
//   score(d) = sum over lists i in which d appears of  w_i / (k + rank_i(d))
//
// with rank_i(d) the 1-based position of d in list i, k = 60 by default and w_i = 1
// by default. Source: G. V. Cormack, C. L. A. Clarke, S. Buettcher, "Reciprocal Rank
// Fusion outperforms Condorcet and individual Rank Learning Methods", SIGIR 2009
// (k = 60 is the value of that paper). Scores of different systems need not share a
// scale: only ranks are used. A document absent from a list gets nothing from it.
//
// Ties (equal fused scores) are broken deterministically: the better best rank over
// all lists first, then the smaller id (operator<). The sums are accumulated list by
// list in input order, so documents with the same rank pattern get bit-identical
// scores.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <optional>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <ragpp/core/error.hpp>
#include <ragpp/retrieve/detail/fusion.hpp>

namespace ragpp {

struct FusionOptions {
    /// The RRF constant; must be >= 0 and finite.
    double k = 60.0;
    /// One weight per input list, each >= 0 and finite; empty means 1 for every list.
    std::vector<double> weights;
};

/// One fused result: its id, fused score, and its 1-based rank in every input list
/// (`ranks[i]` is empty when the id is absent from list i).
template <class Id>
struct Fused {
    Id id;
    double score = 0.0;
    std::vector<std::optional<std::size_t>> ranks;
};

/// The one validation of fusion parameters, used by reciprocal_rank_fusion and by the
/// Retriever: `k` finite and >= 0; `weights` empty or one per list (`n_lists`), each
/// finite and >= 0. Throws InvalidArgument whose message starts with `where` and counts
/// the lists as `what` ("2 weights for 3 indexes").
inline void check_fusion_options(double k, std::span<const double> weights, std::size_t n_lists,
                                 std::string_view where, std::string_view what = "lists") {
    const std::string at(where);
    if (!std::isfinite(k) || k < 0)
        throw InvalidArgument(at + ": rrf_k is " + std::to_string(k) + " (must be finite and >= 0)");
    if (!weights.empty() && weights.size() != n_lists)
        throw InvalidArgument(at + ": " + std::to_string(weights.size()) + " weights for " + std::to_string(n_lists) +
                              " " + std::string(what));
    for (std::size_t i = 0; i < weights.size(); ++i)
        if (!std::isfinite(weights[i]) || weights[i] < 0)
            throw InvalidArgument(at + ": weight " + std::to_string(i) + " is " + std::to_string(weights[i]) +
                                  " (must be finite and >= 0)");
}

/// Fuses `lists` (any range of ranges of ids, best first). Each id appears once in the
/// output, best first. Throws InvalidArgument when k is negative or not finite, when a
/// weight is negative or not finite, when the number of weights differs from the
/// number of lists, or when a list repeats an id (naming the list and positions).
template <std::ranges::input_range Lists>
    requires std::ranges::input_range<std::ranges::range_reference_t<Lists>>
[[nodiscard]] auto reciprocal_rank_fusion(const Lists& lists, const FusionOptions& options = {}) {
    using Id = std::remove_cvref_t<std::ranges::range_reference_t<std::ranges::range_reference_t<Lists>>>;
    static_assert(std::totally_ordered<Id>, "RRF ids must be totally ordered for the deterministic tie-break");

    std::size_t n_lists = 0;
    for ([[maybe_unused]] const auto& l : lists) ++n_lists;
    check_fusion_options(options.k, options.weights, n_lists, "reciprocal_rank_fusion", "lists");

    std::vector<Fused<Id>> out;
    std::vector<detail::FusionAcc> acc;
    std::unordered_map<Id, std::size_t> where;  // id -> index in out/acc
    std::size_t li = 0;
    for (const auto& list : lists) {
        const double w = options.weights.empty() ? 1.0 : options.weights[li];
        std::size_t rank = 0;
        for (const auto& raw : list) {
            ++rank;
            const Id& id = raw;
            auto [it, inserted] = where.try_emplace(id, out.size());
            if (inserted) {
                out.push_back(Fused<Id>{id, 0.0, std::vector<std::optional<std::size_t>>(n_lists)});
                acc.push_back({0.0, rank});
            }
            auto& f = out[it->second];
            if (f.ranks[li])
                throw InvalidArgument("reciprocal_rank_fusion: list " + std::to_string(li) +
                                      " repeats an id (ranks " + std::to_string(*f.ranks[li]) + " and " +
                                      std::to_string(rank) + ")");
            f.ranks[li] = rank;
            auto& a = acc[it->second];
            a.score += w / (options.k + static_cast<double>(rank));
            a.best_rank = std::min(a.best_rank, rank);
        }
        ++li;
    }
    for (std::size_t i = 0; i < out.size(); ++i) out[i].score = acc[i].score;
    std::vector<std::size_t> order(out.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        if (acc[a].score != acc[b].score) return acc[a].score > acc[b].score;
        if (acc[a].best_rank != acc[b].best_rank) return acc[a].best_rank < acc[b].best_rank;
        return out[a].id < out[b].id;
    });
    std::vector<Fused<Id>> sorted;
    sorted.reserve(out.size());
    for (std::size_t i : order) sorted.push_back(std::move(out[i]));
    return sorted;
}

/// Overload for braced lists: `reciprocal_rank_fusion({{"C","A"},{"A","B"}})`.
template <class Id>
[[nodiscard]] std::vector<Fused<Id>> reciprocal_rank_fusion(std::initializer_list<std::vector<Id>> lists,
                                                            const FusionOptions& options = {}) {
    return reciprocal_rank_fusion(std::vector<std::vector<Id>>(lists), options);
}

}  // namespace ragpp
