// ragpp: the concepts every index and analyzer model.
#pragma once

#include <concepts>
#include <cstddef>
#include <functional>
#include <ranges>
#include <string>
#include <string_view>
#include <utility>
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

/// The per-call options type of index `I`: its member `search_options` (BM25Index's
/// BM25SearchOptions, a Retriever's RetrieverSearchOptions...), else SearchOptions.
template <class I>
struct search_options_of {
    using type = SearchOptions;
};
template <class I>
    requires requires { typename I::search_options; }
struct search_options_of<I> {
    using type = typename I::search_options;
};
template <class I>
using search_options_t = typename search_options_of<I>::type;

/// The index concept shared by BM25Index, VectorIndex and Retriever itself.
///
/// - `add_document(id, doc)`: indexes `doc` under the caller-chosen dense `id`.
///   Throws (and changes nothing) on a duplicate id or bad input.
/// - `remove_document(id)`: removes it; throws NotFoundError (and changes nothing)
///   for an id that is not there.
/// - `search(query, k, options)`: at most k results, best first, ties by smaller id,
///   each id at most once, none outside `options.allowed`. `const`, so safe to call
///   from many threads at once; writes need exclusive access. `options` is the index's
///   own options type (search_options_t<I>, derived from SearchOptions), and a plain
///   SearchOptions (a filter alone) is accepted too.
/// - `size()`: the number of documents currently indexed.
template <class I>
concept SearchIndex = requires(I& index, const I& cindex, DocId id, const Document& doc,
                               std::string_view query, std::size_t k, const SearchOptions& options) {
    requires std::derived_from<search_options_t<I>, SearchOptions>;
    index.add_document(id, doc);
    index.remove_document(id);
    { cindex.search(query, k, options) } -> std::ranges::random_access_range;
    cindex.search(query, k, std::declval<const search_options_t<I>&>());
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

/// An analyzer that may analyse each document its own way (in its language, say) and a
/// query against an index's vocabulary (text/analyzer.hpp's MultilingualAnalyzer):
/// - `analyze_document(doc, out)`: the terms under which `doc.text` is indexed (they may
///   include terms no text gives, such as the mark of the document's language);
/// - `analyze_field(doc, text, out)`: the terms of `text`, a field of `doc` (its title,
///   say), as `doc` is analysed;
/// - `analyze_query(query, out, known)`: the terms of `query`, where `known(term)` tells
///   whether the index holds `term` (an empty function: unknown vocabulary).
/// Plain analyzers do none of these: ragpp::analyze_document, analyze_field and
/// analyze_query call their `analyze`.
template <class A>
concept DocumentAnalyzer = Analyzer<A> && requires(const A& a, const Document& doc, std::string_view text,
                                                   std::vector<std::string>& out,
                                                   const std::function<bool(std::string_view)>& known) {
    a.analyze_document(doc, out);
    a.analyze_field(doc, text, out);
    a.analyze_query(text, out, known);
};

/// Appends the terms under which `doc.text` is indexed (see DocumentAnalyzer).
template <Analyzer A>
void analyze_document(const A& analyzer, const Document& doc, std::vector<std::string>& out) {
    if constexpr (DocumentAnalyzer<A>) analyzer.analyze_document(doc, out);
    else analyzer.analyze(doc.text, out);
}

/// Appends the terms of `text`, a field of `doc` (see DocumentAnalyzer).
template <Analyzer A>
void analyze_field(const A& analyzer, const Document& doc, std::string_view text, std::vector<std::string>& out) {
    if constexpr (DocumentAnalyzer<A>) analyzer.analyze_field(doc, text, out);
    else analyzer.analyze(text, out);
}

/// Appends the terms of `query` against a vocabulary `known` (see DocumentAnalyzer).
template <Analyzer A>
void analyze_query(const A& analyzer, std::string_view query, std::vector<std::string>& out,
                   const std::function<bool(std::string_view)>& known) {
    if constexpr (DocumentAnalyzer<A>) analyzer.analyze_query(query, out, known);
    else analyzer.analyze(query, out);
}

/// The terms of `text`, as a new vector.
template <Analyzer A>
[[nodiscard]] std::vector<std::string> analyze(const A& analyzer, std::string_view text) {
    std::vector<std::string> out;
    analyzer.analyze(text, out);
    return out;
}

}  // namespace ragpp
