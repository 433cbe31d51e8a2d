// ragpp: ProximityReranker, a term-proximity and coverage reranker (no model).
//
// Question words (shared with SoftMatchReranker: detail::rerank_words). The question
// is cut into pieces at ASCII whitespace and at ASCII punctuation other than the
// compound connectors - . _ / : and the apostrophe; each piece, trimmed of ASCII
// punctuation, is analysed alone (the caller's Analyzer). A piece is a compound when
// it gives at least two terms, it holds a connector or an ASCII letter next to a
// digit, its last term is longer than each other one, and the analyzer adds joined
// forms (checked once: "qz-xw" must give qz, xw, qzxw): "MX-200" -> mx, 200, mx200 and
// "CMAKE_EXPORT_COMPILE_COMMANDS" -> cmake, export, compil, command,
// cmakeexportcompilecommand are one word each, whose joined form is the last term and
// whose parts are the others. Any other piece gives one word per term ("set(CACHE)" is
// cut into set and CACHE; a Japanese run's bigrams are words of their own). Words
// without terms (stop words) and repeated words are dropped.
//
// A word is present as written when its joined form occurs (a plain word: its term).
// A compound found only through its parts earns a part of its credit:
//
//   credit(w) = 1                                 joined form present
//             = beta * sum of u_p over its parts present / sum of u_p over its parts
//                                                 else (0 for a plain word)
//
// u_p a part's own weight (`term_weight`; 1 without a function; counts when every part
// weighs 0), beta = ProximityOptions::part_credit (0.5; in [0, 1)), so parts never
// earn the word's full credit: the made-up CMAKE_QUUX_FROBNICATE_WIDGETS is not
// present where only "cmake" and "widgets" are.
//
// A passage is analysed into terms at positions 0, 1, 2, ...; a document given to
// score_documents is its fields as BM25F reads them (title, heading path, source
// path: bm25_document_fields) and its text, four segments analysed apart. For a
// question of words w_1..w_m with weights v_i (the largest `term_weight` of the word's
// terms; 1 without a function):
//
//   coverage    C = sum of v_i credit(w_i) / sum of v_i (over all segments; with every
//                   v_i = 0, the unweighted mean of the credits);
//   proximity   P = 0 when fewer than two words are present; else, with d = MinDist,
//                   the smallest distance |p - q| between occurrences (joined forms)
//                   of two different present words in one segment, and alpha = 0.3,
//                   P = (ln(alpha + exp(-(d - 1))) - ln alpha) / (ln(1 + alpha) - ln alpha)
//                   so P = 1 for adjacent words and decreases towards 0 with distance
//                   (Tao & Zhai, "An Exploration of Proximity Measures in Information
//                   Retrieval", SIGIR 2007: MinDist and the ln(alpha + exp(-d))
//                   transform, here shifted and scaled to [0, 1]); P = 0 when no two
//                   present words share a segment;
//   identifiers I = share of the question's identifiers present: a word is an
//                   identifier when it holds letters and digits ("MX-200",
//                   "ORA-01555", "CMP0077"; detail/identifiers.hpp);
//   fields      T = C computed over the three field segments alone (documents with a
//                   non-empty field only): what BM25F's title, heading and path fields
//                   see, so a page titled or named by the question's identifier leads
//                   a page whose body mentions it.
//
//   score = (c C + p P + i I + f T) / (c + p + i' + f'),  i' = i when the question has
//           an identifier, else 0 (and I is left out), f' = f when the passage has a
//           field, else 0 (a plain text, a BEIR document), with c, p, i, f the weights
//           of ProximityOptions (1 each by default). The score is in [0, 1].
//
// Complexity: O(terms of the passage) per passage plus the merge of the words'
// position lists (O(m * occurrences)).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include <ragpp/core/concepts.hpp>
#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>
#include <ragpp/detail/identifiers.hpp>
#include <ragpp/detail/whitespace.hpp>
#include <ragpp/index/bm25/fields.hpp>
#include <ragpp/rerank/reranker.hpp>

namespace ragpp {

/// A term's weight (e.g. its idf in the collection); must be >= 0.
using TermWeightFn = std::function<double(std::string_view term)>;

namespace detail {

/// One question word as the lexical rerankers read it (see the header comment).
struct RerankWord {
    /// As written: the trimmed piece, or the term when the piece gave several words.
    std::string text;
    /// Its terms: one for a plain word; the parts, then the joined form, for a compound.
    std::vector<std::string> terms;
    /// A compound's distinct parts other than its joined form; empty for a plain word.
    std::vector<std::string> parts;
    /// The weight of the word (its largest term weight) and of each part.
    double weight = 1.0;
    std::vector<double> part_weights;
    bool identifier = false;

    [[nodiscard]] const std::string& joined() const noexcept { return terms.back(); }
};

/// Whether `analyzer` adds the joined form of a compound after its parts.
template <Analyzer A>
[[nodiscard]] bool adds_joined_forms(const A& analyzer) {
    std::vector<std::string> t;
    analyzer.analyze("qz-xw", t);
    return t.size() == 3 && t[2].size() > t[0].size() && t[2].size() > t[1].size();
}

/// The words of `question` (see the header comment); weights from `weight` (1 each
/// without one), checked finite and >= 0 (InvalidArgument naming `who` otherwise).
template <Analyzer A>
[[nodiscard]] std::vector<RerankWord> rerank_words(const A& analyzer, bool joins, std::string_view question,
                                                   const TermWeightFn& weight, const char* who) {
    auto splits = [](char c) {
        if (is_ascii_space(c)) return true;
        const bool punct = (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') ||
                           (c >= '{' && c <= '~');
        return punct && c != '-' && c != '.' && c != '_' && c != '/' && c != ':' && c != '\'';
    };
    auto connected = [](std::string_view w) {
        auto digit = [](char c) { return c >= '0' && c <= '9'; };
        auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
        for (std::size_t i = 0; i < w.size(); ++i) {
            if (w[i] == '-' || w[i] == '.' || w[i] == '_' || w[i] == '/' || w[i] == ':') return true;
            if (i > 0 && ((letter(w[i - 1]) && digit(w[i])) || (digit(w[i - 1]) && letter(w[i])))) return true;
        }
        return false;
    };
    auto weigh = [&](const std::string& t) {
        if (!weight) return 1.0;
        const double v = weight(t);
        if (!std::isfinite(v) || v < 0)
            throw InvalidArgument(std::string(who) + ": the weight of term '" + t + "' is negative or not finite");
        return v;
    };
    std::vector<RerankWord> out;
    auto add = [&](RerankWord w) {
        if (std::any_of(out.begin(), out.end(), [&](const RerankWord& o) { return o.terms == w.terms; })) return;
        w.weight = 0;
        for (const auto& t : w.terms) w.weight = std::max(w.weight, weigh(t));
        for (const auto& p : w.parts) w.part_weights.push_back(weigh(p));
        out.push_back(std::move(w));
    };
    std::size_t i = 0;
    std::vector<std::string> terms;
    while (i < question.size()) {
        while (i < question.size() && splits(question[i])) ++i;
        const std::size_t b = i;
        while (i < question.size() && !splits(question[i])) ++i;
        const std::string_view piece = trim_punctuation(question.substr(b, i - b));
        if (piece.empty()) continue;
        terms.clear();
        analyzer.analyze(piece, terms);
        if (terms.empty()) continue;
        const bool compound = joins && terms.size() >= 2 && connected(piece) &&
                              std::all_of(terms.begin(), terms.end() - 1,
                                          [&](const std::string& t) { return t.size() < terms.back().size(); });
        if (compound || terms.size() == 1) {
            RerankWord w;
            w.text = std::string(piece);
            w.terms = terms;
            for (std::size_t k = 0; k + 1 < terms.size(); ++k)
                if (std::find(w.parts.begin(), w.parts.end(), terms[k]) == w.parts.end()) w.parts.push_back(terms[k]);
            w.identifier = is_identifier(trim_identifier(piece));
            add(std::move(w));
        } else {
            for (const auto& t : terms) {
                RerankWord w;
                w.text = t;
                w.terms = {t};
                w.identifier = is_identifier(trim_identifier(t));
                add(std::move(w));
            }
        }
    }
    return out;
}

/// The weighted share of a compound's parts for which `value(part)` holds (a number
/// in [0, 1] or a similarity), times `beta`; 0 for a plain word.
template <class Value>
[[nodiscard]] double part_credit(const RerankWord& w, double beta, Value&& value) {
    if (w.parts.empty()) return 0.0;
    double have = 0, all = 0;
    for (std::size_t k = 0; k < w.parts.size(); ++k) {
        have += w.part_weights[k] * value(w.parts[k]);
        all += w.part_weights[k];
    }
    if (all <= 0) {  // every part weighs 0: their plain mean
        have = 0;
        for (const auto& p : w.parts) have += value(p);
        all = static_cast<double>(w.parts.size());
    }
    return beta * have / all;
}

/// A document's fields (title, heading path, source path) and text, in that order.
[[nodiscard]] inline std::array<std::string, 4> rerank_segments(const Document* doc) {
    if (doc == nullptr) return {};
    const auto f = bm25_document_fields(*doc);
    return {f[0], f[1], f[2], doc->text};
}

}  // namespace detail

struct ProximityOptions {
    double coverage_weight = 1.0;
    double proximity_weight = 1.0;
    double identifier_weight = 1.0;
    /// Tao & Zhai's alpha.
    double alpha = 0.3;
    /// The most a compound found only through its parts earns, as a share of the
    /// word's credit; in [0, 1).
    double part_credit = 0.5;
    /// Weight of the field share T (documents with fields only).
    double field_weight = 1.0;

    void validate() const {
        for (double w : {coverage_weight, proximity_weight, identifier_weight, field_weight})
            if (!std::isfinite(w) || w < 0) throw InvalidArgument("ProximityOptions: a weight is negative or not finite");
        if (coverage_weight + proximity_weight + identifier_weight <= 0)
            throw InvalidArgument("ProximityOptions: every weight is 0");
        if (!std::isfinite(alpha) || alpha <= 0) throw InvalidArgument("ProximityOptions: alpha must be > 0");
        if (!(part_credit >= 0 && part_credit < 1))
            throw InvalidArgument("ProximityOptions: part_credit is " + std::to_string(part_credit) +
                                  " (must be in [0, 1))");
    }
};

/// The parts of one passage's score.
struct ProximityBreakdown {
    double coverage = 0, proximity = 0, identifiers = 0, fields = 0, score = 0;
    /// Words asked, and present as written.
    std::size_t words = 0, matched = 0;
    std::size_t identifiers_asked = 0, identifiers_found = 0;
    /// MinDist; 0 when fewer than two words occur in one segment.
    std::size_t min_distance = 0;
    /// Whether the passage had a non-empty field (T entered the score).
    bool has_fields = false;
    /// The question's words (as written) that do not occur as written in the passage.
    std::vector<std::string> missing;
    /// Those of `missing` found through some of their parts.
    std::vector<std::string> partial;
};

template <Analyzer A>
class ProximityReranker {
public:
    explicit ProximityReranker(A analyzer, ProximityOptions options = {}, TermWeightFn term_weight = {})
        : analyzer_(std::move(analyzer)), options_(options), term_weight_(std::move(term_weight)) {
        options_.validate();
        joins_ = detail::adds_joined_forms(analyzer_);
    }

    /// Scores passages given as plain text (no fields).
    [[nodiscard]] std::vector<double> operator()(std::string_view question, std::span<const std::string_view> passages) const {
        const auto words = prepare(question);
        std::vector<double> out;
        out.reserve(passages.size());
        for (auto p : passages) out.push_back(score(words, {}, p).score);
        return out;
    }

    /// Scores documents: their fields and text (a null pointer scores as an empty text).
    [[nodiscard]] std::vector<double> score_documents(std::string_view question,
                                                      std::span<const Document* const> documents) const {
        const auto words = prepare(question);
        std::vector<double> out;
        out.reserve(documents.size());
        for (const Document* d : documents) out.push_back(score_document(words, d).score);
        return out;
    }

    /// The score of one passage, part by part.
    [[nodiscard]] ProximityBreakdown explain(std::string_view question, std::string_view passage) const {
        return score(prepare(question), {}, passage);
    }
    /// The score of one document (fields and text), part by part.
    [[nodiscard]] ProximityBreakdown explain(std::string_view question, const Document& document) const {
        return score_document(prepare(question), &document);
    }

    [[nodiscard]] const A& analyzer() const noexcept { return analyzer_; }

private:
    using Words = std::vector<detail::RerankWord>;

    [[nodiscard]] Words prepare(std::string_view question) const {
        return detail::rerank_words(analyzer_, joins_, question, term_weight_, "ProximityReranker");
    }

    [[nodiscard]] ProximityBreakdown score_document(const Words& words, const Document* d) const {
        const auto seg = detail::rerank_segments(d);
        const std::string_view fields[] = {seg[0], seg[1], seg[2]};
        return score(words, fields, seg[3]);
    }

    [[nodiscard]] ProximityBreakdown score(const Words& words, std::span<const std::string_view> fields,
                                           std::string_view text) const {
        ProximityBreakdown b;
        b.words = words.size();
        for (const auto& w : words) b.identifiers_asked += w.identifier ? 1 : 0;
        b.has_fields = std::any_of(fields.begin(), fields.end(), [](std::string_view f) { return !f.empty(); });
        if (words.empty()) return b;
        // Each term's occurrences as (segment, position); fields are segments 0.., the text the last.
        std::vector<std::string> terms;
        std::vector<std::pair<std::size_t, std::size_t>> where;
        const std::size_t text_segment = fields.size();
        for (std::size_t s = 0; s <= text_segment; ++s) {
            const std::size_t before = terms.size();
            analyzer_.analyze(s < text_segment ? fields[s] : text, terms);
            for (std::size_t p = before; p < terms.size(); ++p) where.emplace_back(s, p - before);
        }
        std::unordered_map<std::string_view, std::vector<std::pair<std::size_t, std::size_t>>> positions;
        for (std::size_t k = 0; k < terms.size(); ++k) positions[terms[k]].push_back(where[k]);
        auto in_any = [&](const std::string& t) { return positions.count(t) != 0 ? 1.0 : 0.0; };
        auto in_field = [&](const std::string& t) {  // occurrences are in segment order: fields first
            const auto it = positions.find(t);
            return it != positions.end() && it->second.front().first < text_segment ? 1.0 : 0.0;
        };

        // Occurrences (segment, position, word) of the words present as written.
        std::vector<std::tuple<std::size_t, std::size_t, std::size_t>> occ;
        double total = 0, covered = 0, covered_fields = 0, plain = 0, plain_fields = 0;
        for (std::size_t w = 0; w < words.size(); ++w) {
            const auto& word = words[w];
            const bool present = in_any(word.joined()) > 0;
            const double credit = present ? 1.0 : detail::part_credit(word, options_.part_credit, in_any);
            const double field_credit =
                in_field(word.joined()) > 0 ? 1.0 : detail::part_credit(word, options_.part_credit, in_field);
            total += word.weight;
            covered += word.weight * credit;
            covered_fields += word.weight * field_credit;
            plain += credit;
            plain_fields += field_credit;
            if (present) {
                ++b.matched;
                for (const auto& [s, p] : positions.find(word.joined())->second) occ.emplace_back(s, p, w);
                if (word.identifier) ++b.identifiers_found;
            } else {
                b.missing.push_back(word.text);
                if (credit > 0) b.partial.push_back(word.text);
            }
        }
        // All weights 0 (every word unknown to the collection): unweighted shares.
        const double m = static_cast<double>(words.size());
        b.coverage = total > 0 ? covered / total : plain / m;
        b.fields = b.has_fields ? (total > 0 ? covered_fields / total : plain_fields / m) : 0.0;

        // MinDist: in position order within a segment, the nearest occurrence of a
        // different word is the previous occurrence of another word.
        if (b.matched >= 2) {
            std::sort(occ.begin(), occ.end());
            const std::size_t none = words.size();
            std::size_t best = std::numeric_limits<std::size_t>::max();
            std::size_t segment = none;
            // last position of the most recent word, and of the most recent other word
            std::size_t last_pos = 0, last_word = none, other_pos = 0, other_word = none;
            for (const auto& [s, p, w] : occ) {
                if (s != segment) {
                    segment = s;
                    last_word = other_word = none;
                }
                if (last_word != none && last_word != w) best = std::min(best, p - last_pos);
                else if (other_word != none && other_word != w) best = std::min(best, p - other_pos);
                if (w != last_word) {
                    other_pos = last_pos;
                    other_word = last_word;
                }
                last_pos = p;
                last_word = w;
            }
            if (best != std::numeric_limits<std::size_t>::max()) {
                b.min_distance = best;
                const double a = options_.alpha;
                const double d = static_cast<double>(best == 0 ? 1 : best);
                b.proximity = (std::log(a + std::exp(-(d - 1))) - std::log(a)) / (std::log(1 + a) - std::log(a));
            }
        }
        b.identifiers = b.identifiers_asked ? static_cast<double>(b.identifiers_found) / static_cast<double>(b.identifiers_asked) : 0.0;
        const double wi = b.identifiers_asked ? options_.identifier_weight : 0.0;
        const double wf = b.has_fields ? options_.field_weight : 0.0;
        const double denom = options_.coverage_weight + options_.proximity_weight + wi + wf;
        b.score = denom > 0 ? (options_.coverage_weight * b.coverage + options_.proximity_weight * b.proximity +
                               wi * b.identifiers + wf * b.fields) / denom
                            : 0.0;
        return b;
    }

    A analyzer_;
    ProximityOptions options_;
    TermWeightFn term_weight_;
    bool joins_ = true;
};

}  // namespace ragpp
