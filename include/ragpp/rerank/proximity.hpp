// ragpp: ProximityReranker, a term-proximity and coverage reranker (no model).
//
// The question is split into words (whitespace); each word is analysed on its own
// (the caller's Analyzer), so the terms of one word ("MX-200" -> mx, 200, mx200) form
// one query word. Words without terms (stop words) and repeated words are dropped.
// A passage is analysed into terms at positions 0, 1, 2, ...; a query word occurs at
// every position holding one of its terms. For a question of words w_1..w_m with
// weights v_i (the largest `term_weight` of the word's terms; 1 without a function):
//
//   coverage    C = sum of v_i over the words occurring in the passage / sum of v_i
//   proximity   P = 0 when fewer than two words occur; else, with
//                   d = MinDist, the smallest distance |p - q| between occurrences of
//                   two different words, and alpha = 0.3,
//                   P = (ln(alpha + exp(-(d - 1))) - ln alpha) / (ln(1 + alpha) - ln alpha)
//                   so P = 1 for adjacent words and decreases towards 0 with distance
//                   (Tao & Zhai, "An Exploration of Proximity Measures in Information
//                   Retrieval", SIGIR 2007: MinDist and the ln(alpha + exp(-d))
//                   transform, here shifted and scaled to [0, 1]);
//   identifiers I = share of the question's identifiers present in the passage: a word
//                   is an identifier when it holds letters and digits ("MX-200",
//                   "ORA-01555", "CMP0077"; detail/identifiers.hpp), and it is present
//                   when the last term the analyzer gives it (the joined form) occurs.
//
//   score = (c C + p P + i I) / (c + p + i'),  i' = i when the question has an
//           identifier, else 0 (and I is left out), with c, p, i the weights of
//           ProximityOptions (1 each by default). The score is in [0, 1].
//
// Complexity: O(terms of the passage) per passage plus the merge of the words'
// position lists (O(m * occurrences)).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <ragpp/core/concepts.hpp>
#include <ragpp/core/error.hpp>
#include <ragpp/detail/identifiers.hpp>
#include <ragpp/detail/whitespace.hpp>
#include <ragpp/rerank/reranker.hpp>

namespace ragpp {

struct ProximityOptions {
    double coverage_weight = 1.0;
    double proximity_weight = 1.0;
    double identifier_weight = 1.0;
    /// Tao & Zhai's alpha.
    double alpha = 0.3;

    void validate() const {
        for (double w : {coverage_weight, proximity_weight, identifier_weight})
            if (!std::isfinite(w) || w < 0) throw InvalidArgument("ProximityOptions: a weight is negative or not finite");
        if (coverage_weight + proximity_weight + identifier_weight <= 0)
            throw InvalidArgument("ProximityOptions: every weight is 0");
        if (!std::isfinite(alpha) || alpha <= 0) throw InvalidArgument("ProximityOptions: alpha must be > 0");
    }
};

/// The parts of one passage's score.
struct ProximityBreakdown {
    double coverage = 0, proximity = 0, identifiers = 0, score = 0;
    std::size_t words = 0, matched = 0;
    std::size_t identifiers_asked = 0, identifiers_found = 0;
    /// MinDist; 0 when fewer than two words occur.
    std::size_t min_distance = 0;
    /// The question's words (as written) that do not occur in the passage.
    std::vector<std::string> missing;
};

/// A term's weight (e.g. its idf in the collection); must be >= 0.
using TermWeightFn = std::function<double(std::string_view term)>;

template <Analyzer A>
class ProximityReranker {
public:
    explicit ProximityReranker(A analyzer, ProximityOptions options = {}, TermWeightFn term_weight = {})
        : analyzer_(std::move(analyzer)), options_(options), term_weight_(std::move(term_weight)) {
        options_.validate();
    }

    [[nodiscard]] std::vector<double> operator()(std::string_view question, std::span<const std::string_view> passages) const {
        const Query q = prepare(question);
        std::vector<double> out;
        out.reserve(passages.size());
        for (auto p : passages) out.push_back(score(q, p).score);
        return out;
    }

    /// The score of one passage, part by part.
    [[nodiscard]] ProximityBreakdown explain(std::string_view question, std::string_view passage) const {
        return score(prepare(question), passage);
    }

    [[nodiscard]] const A& analyzer() const noexcept { return analyzer_; }

private:
    struct Word {
        std::string text;
        std::vector<std::string> terms;
        double weight = 1.0;
        bool identifier = false;
    };
    struct Query {
        std::vector<Word> words;
        double total_weight = 0;
        std::size_t identifiers = 0;
    };

    [[nodiscard]] Query prepare(std::string_view question) const {
        Query q;
        for (const std::string_view raw : detail::split_words(question)) {
            Word w;
            analyzer_.analyze(raw, w.terms);
            if (w.terms.empty()) continue;
            if (std::any_of(q.words.begin(), q.words.end(), [&](const Word& o) { return o.terms == w.terms; })) continue;
            w.identifier = detail::is_identifier(detail::trim_identifier(raw));
            w.text = std::string(detail::trim_punctuation(raw));
            if (w.text.empty()) w.text = std::string(raw);
            if (term_weight_) {
                w.weight = 0;
                for (const auto& t : w.terms) {
                    const double v = term_weight_(t);
                    if (!std::isfinite(v) || v < 0)
                        throw InvalidArgument("ProximityReranker: the weight of term '" + t + "' is negative or not finite");
                    w.weight = std::max(w.weight, v);
                }
            }
            q.total_weight += w.weight;
            q.identifiers += w.identifier ? 1 : 0;
            q.words.push_back(std::move(w));
        }
        return q;
    }

    [[nodiscard]] ProximityBreakdown score(const Query& q, std::string_view passage) const {
        ProximityBreakdown b;
        b.words = q.words.size();
        b.identifiers_asked = q.identifiers;
        if (q.words.empty()) return b;
        std::vector<std::string> terms;
        analyzer_.analyze(passage, terms);
        std::unordered_map<std::string_view, std::vector<std::size_t>> positions;
        for (std::size_t p = 0; p < terms.size(); ++p) positions[terms[p]].push_back(p);

        // Occurrences of each word: (position, word index), merged over all words.
        std::vector<std::pair<std::size_t, std::size_t>> occ;
        double covered = 0;
        for (std::size_t w = 0; w < q.words.size(); ++w) {
            const Word& word = q.words[w];
            bool found = false;
            for (const auto& t : word.terms)
                if (auto it = positions.find(t); it != positions.end()) {
                    found = true;
                    for (std::size_t p : it->second) occ.emplace_back(p, w);
                }
            if (found) {
                ++b.matched;
                covered += word.weight;
            } else {
                b.missing.push_back(word.text);
            }
            if (word.identifier && positions.count(word.terms.back()) != 0) ++b.identifiers_found;
        }
        // All weights 0 (every word unknown to the collection): unweighted coverage.
        b.coverage = q.total_weight > 0 ? covered / q.total_weight
                                        : static_cast<double>(b.matched) / static_cast<double>(b.words);

        // MinDist: in position order, the nearest occurrence of a different word is
        // the previous occurrence of another word.
        if (b.matched >= 2) {
            std::sort(occ.begin(), occ.end());
            std::size_t best = std::numeric_limits<std::size_t>::max();
            // last position of the most recent word, and of the most recent other word
            std::size_t last_pos = 0, last_word = q.words.size();
            std::size_t other_pos = 0, other_word = q.words.size();
            for (const auto& [p, w] : occ) {
                if (last_word != q.words.size() && last_word != w) best = std::min(best, p - last_pos);
                else if (other_word != q.words.size() && other_word != w) best = std::min(best, p - other_pos);
                if (w != last_word) {
                    other_pos = last_pos;
                    other_word = last_word;
                }
                last_pos = p;
                last_word = w;
            }
            b.min_distance = best;
            const double a = options_.alpha;
            const double d = static_cast<double>(best == 0 ? 1 : best);
            b.proximity = (std::log(a + std::exp(-(d - 1))) - std::log(a)) / (std::log(1 + a) - std::log(a));
        }
        b.identifiers = q.identifiers ? static_cast<double>(b.identifiers_found) / static_cast<double>(q.identifiers) : 0.0;
        const double wi = q.identifiers ? options_.identifier_weight : 0.0;
        const double denom = options_.coverage_weight + options_.proximity_weight + wi;
        b.score = denom > 0 ? (options_.coverage_weight * b.coverage + options_.proximity_weight * b.proximity +
                               wi * b.identifiers) / denom
                            : 0.0;
        return b;
    }

    A analyzer_;
    ProximityOptions options_;
    TermWeightFn term_weight_;
};

}  // namespace ragpp
