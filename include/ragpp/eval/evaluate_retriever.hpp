// ragpp: evaluate(Retriever, questions): eval/evaluate.hpp over a Retriever's fused list.
//
// It lives in eval/, not in the Retriever, so that dependencies run one way: eval may
// read what retrieve/ produces, retrieve/ never includes eval/ (docs/architecture.md).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>
#include <ragpp/eval/evaluate.hpp>
#include <ragpp/eval/question.hpp>
#include <ragpp/retrieve/retriever.hpp>

namespace ragpp {

/// Runs every question of `questions` through `retriever` and returns the per-question
/// and overall metrics (see eval/evaluate.hpp): the ranking evaluated is the whole fused
/// list of candidates (`candidates` per index, the options' or the retriever's), so a
/// miss is classified as retrieval or ranking. Stage times are recorded as "index 0",
/// "index 1", ..., "fusion" unless `stage_names` names the indexes. Throws
/// InvalidArgument when `stage_names` is neither empty nor one name per index, and what
/// Retriever::search throws for invalid options.
template <SearchIndex... Indexes>
[[nodiscard]] PipelineReport evaluate(const Retriever<Indexes...>& retriever, const QuestionSet& questions,
                                      const typename Retriever<Indexes...>::search_options& options = {},
                                      std::string name = "retriever",
                                      std::vector<std::string> stage_names = {}) {
    constexpr std::size_t n = Retriever<Indexes...>::index_count;
    if (stage_names.empty())
        for (std::size_t i = 0; i < n; ++i) stage_names.push_back("index " + std::to_string(i));
    if (stage_names.size() != n)
        throw InvalidArgument("evaluate(Retriever): " + std::to_string(stage_names.size()) + " stage names for " +
                              std::to_string(n) + " indexes");
    const std::size_t all = options.candidates.value_or(retriever.options().candidates) * n;
    return evaluate(std::move(name), questions, [&](std::string_view q, StageTimes& times) {
        SearchTimings t;
        const auto results = retriever.search(q, all, options, t);
        for (std::size_t i = 0; i < n; ++i) times.emplace_back(stage_names[i], t.index_seconds[i]);
        times.emplace_back("fusion", t.fusion_seconds);
        std::vector<Retrieved> out;
        out.reserve(results.size());
        for (const auto& r : results) out.push_back({r.document ? r.document->id : std::to_string(r.id), r.score});
        return out;
    });
}

}  // namespace ragpp
