// A brute-force test index (the oracle kind hnswlib keeps beside its fast index): the
// score of a document is the number of distinct query terms (ASCII-lowercased,
// whitespace-separated) it contains; only documents with a positive score are
// returned. It honours SearchOptions::allowed inside its scoring loop, as every ragpp
// index must. Models SearchIndex.
#pragma once

#include <algorithm>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <ragpp/core/concepts.hpp>
#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>
#include <ragpp/text/whitespace.hpp>

namespace ragpp_test {

inline std::set<std::string> lowercase_terms(std::string_view text) {
    std::vector<std::string> terms;
    ragpp::WhitespaceAnalyzer{}.analyze(text, terms);
    std::set<std::string> out;
    for (auto& t : terms) {
        for (auto& c : t)
            if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        out.insert(t);
    }
    return out;
}

template <bool HonourAllowed = true>
class BasicTermOverlapIndex {
public:
    void add_document(ragpp::DocId id, const ragpp::Document& doc) {
        if (docs_.count(id) != 0) throw ragpp::DuplicateError("TermOverlapIndex: DocId " + std::to_string(id));
        docs_.emplace(id, lowercase_terms(doc.text));
    }
    void remove_document(ragpp::DocId id) {
        if (docs_.erase(id) == 0) throw ragpp::NotFoundError("TermOverlapIndex: DocId " + std::to_string(id));
    }
    [[nodiscard]] std::vector<ragpp::Hit> search(std::string_view query, std::size_t k,
                                                 const ragpp::SearchOptions& options = {}) const {
        const auto q = lowercase_terms(query);
        std::vector<ragpp::Hit> hits;
        for (const auto& [id, terms] : docs_) {
            if (HonourAllowed && !options.allows(id)) continue;
            std::size_t n = 0;
            for (const auto& t : q) n += terms.count(t);
            if (n > 0) hits.push_back({id, static_cast<float>(n)});
        }
        std::sort(hits.begin(), hits.end(), ragpp::better_hit);
        if (hits.size() > k) hits.resize(k);
        return hits;
    }
    [[nodiscard]] std::size_t size() const noexcept { return docs_.size(); }
    /// Whether `id` is indexed (for stale-entry checks).
    [[nodiscard]] bool contains(ragpp::DocId id) const { return docs_.count(id) != 0; }

private:
    std::map<ragpp::DocId, std::set<std::string>> docs_;
};

/// The oracle index.
using TermOverlapIndex = BasicTermOverlapIndex<true>;
/// A deliberately broken index that ignores the allowed set: the leak tests must catch it.
using LeakyIndex = BasicTermOverlapIndex<false>;

static_assert(ragpp::SearchIndex<TermOverlapIndex>);
static_assert(ragpp::SearchIndex<LeakyIndex>);

}  // namespace ragpp_test
