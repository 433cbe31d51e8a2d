// ragpp: source diversity, a post-filter over a ranked list (field collapsing with a
// cap of N, as Elasticsearch's `collapse` with inner hits or Solr's grouping limit
// do for one hit per group, here N per group).
//
// cap_per_source(results, n, k): walks the list best first and keeps at most n
// results of any one source in the first k places; the results over the cap are not
// dropped but moved after every result that fits, in their order, so k results
// still come back whenever the list has k, and the order among kept results is the
// input order. n = 0 turns the cap off. The source of a Result is its document's
// metadata "source" (a chunk's file, see Chunk::to_document); results without one
// are never capped. Cost: O(size) time, O(distinct sources) memory.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include <ragpp/core/types.hpp>
#include <ragpp/retrieve/retriever.hpp>

namespace ragpp {

/// The source of a result: its document's metadata "source" when it is a string, else "".
[[nodiscard]] inline std::string_view result_source(const Result& r) noexcept {
    if (!r.document) return {};
    const auto it = r.document->metadata.find("source");
    if (it == r.document->metadata.end()) return {};
    const auto* s = std::get_if<std::string>(&it->second);
    return s == nullptr ? std::string_view{} : std::string_view(*s);
}

/// The generic form: `key(item)` names the group of an item ("" = no group, never capped).
/// Items past the first `k` kept ones are left in their order after them.
template <class T, class Key>
[[nodiscard]] std::vector<T> cap_per_group(std::vector<T> items, std::size_t per_group, std::size_t k, Key&& key) {
    if (per_group == 0 || items.empty()) return items;
    std::vector<T> kept, over;
    kept.reserve(items.size());
    std::unordered_map<std::string, std::size_t> count;
    for (auto& item : items) {
        const std::string_view g = key(item);
        if (kept.size() >= k || g.empty() || count[std::string(g)]++ < per_group) kept.push_back(std::move(item));
        else over.push_back(std::move(item));
    }
    std::vector<T> out;
    out.reserve(kept.size() + over.size());
    const std::size_t head = std::min(k, kept.size());
    for (std::size_t i = 0; i < head; ++i) out.push_back(std::move(kept[i]));
    for (auto& o : over) out.push_back(std::move(o));
    for (std::size_t i = head; i < kept.size(); ++i) out.push_back(std::move(kept[i]));
    return out;
}

/// At most `per_source` results of one source among the first `k` (see the top of
/// this header); 0 = no cap. Ask the Retriever for more than k candidates (e.g. k
/// times per_source, or the fusion's candidates) so there is something to move up.
[[nodiscard]] inline std::vector<Result> cap_per_source(std::vector<Result> results, std::size_t per_source,
                                                        std::size_t k) {
    return cap_per_group(std::move(results), per_source, k, [](const Result& r) { return result_source(r); });
}

}  // namespace ragpp
