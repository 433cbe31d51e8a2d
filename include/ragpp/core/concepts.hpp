// ragpp: the concepts every index and analyzer model.
#pragma once

#include <concepts>
#include <cstddef>
#include <ranges>
#include <string>
#include <string_view>
#include <vector>

#include <ragpp/core/types.hpp>

namespace ragpp {

/// An element of a result list: something with an `id` (a DocId) and a `score`.
/// Hit models it, and so does the Retriever's Result.
template <class R>
concept ScoredResult = requires(const R& r) {
    { r.id } -> std::convertible_to<DocId>;
    { r.score } -> std::convertible_to<double>;
};

/// The index concept shared by BM25Index, VectorIndex and Retriever itself.
///
/// - `add_document(id, doc)`: indexes `doc` under the caller-chosen dense `id`.
///   Throws (and changes nothing) on a duplicate id or bad input.
/// - `remove_document(id)`: removes it; throws NotFoundError (and changes nothing)
///   for an id that is not there.
/// - `search(query, k, options)`: at most k results, best first, ties by smaller id,
///   each id at most once, none outside `options.allowed`. `const`, so safe to call
///   from many threads at once; writes need exclusive access.
/// - `size()`: the number of documents currently indexed.
template <class I>
concept SearchIndex = requires(I& index, const I& cindex, DocId id, const Document& doc,
                               std::string_view query, std::size_t k, const SearchOptions& options) {
    index.add_document(id, doc);
    index.remove_document(id);
    { cindex.search(query, k, options) } -> std::ranges::random_access_range;
    requires ScoredResult<std::ranges::range_value_t<decltype(cindex.search(query, k, options))>>;
    { cindex.size() } -> std::convertible_to<std::size_t>;
};

/// An analyzer turns text into index terms, the same way for documents and queries.
/// - `analyze(text, out)` appends the terms of `text` to `out`, in text order;
/// - `name()` identifies the analysis (saved with an index, checked on load).
template <class A>
concept Analyzer = requires(const A& a, std::string_view text, std::vector<std::string>& out) {
    a.analyze(text, out);
    { a.name() } -> std::convertible_to<std::string_view>;
};

/// The terms of `text`, as a new vector.
template <Analyzer A>
[[nodiscard]] std::vector<std::string> analyze(const A& analyzer, std::string_view text) {
    std::vector<std::string> out;
    analyzer.analyze(text, out);
    return out;
}

}  // namespace ragpp
