// ragpp: answer containment, the open-domain QA retrieval measure ("top-k retrieval
// accuracy" of DPR, Karpukhin et al. 2020, section 5.1): the share of questions whose
// reference answer occurs in at least one of the top k passages.
//
// Matching is on a normalised form of both texts (answer_match_form):
//   - text::normalize: full Unicode case folding, compatibility folding (full-width
//     forms, ligatures: NFKC-like) and diacritics removed ("Été" -> "ete");
//   - apostrophes as spaces (French elisions: "l'été" holds "ete");
//   - then the words of the text (text::Tokenizer, UAX #29: punctuation and whitespace
//     dropped, "MX-200" -> "mx 200", each Han or Hiragana character a word of its own),
//     joined by one space.
// The answer occurs when its words are a contiguous run of the passage's words (so
// "2 mois" is in "préavis de 2 mois." but "mois" is not in "moisson"), as DPR's
// has_answer does on its tokens.
//
// The passages of a question are the chunks behind its ranking entries
// (QuestionOutcome::keys: the best-ranked chunk of each label or section), in rank order.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <ragpp/eval/evaluate.hpp>
#include <ragpp/text/normalize.hpp>
#include <ragpp/text/tokenizer.hpp>

namespace ragpp {

/// " w1 w2 ... wn " (see the header comment); " " for a text without words.
[[nodiscard]] inline std::string answer_match_form(std::string_view text) {
    std::string folded = text::normalize(text);
    for (char& c : folded)
        if (c == '\'') c = ' ';  // elisions: "l'ete" holds "ete" (U+2019 is folded to ' first)
    std::string out = " ";
    text::Tokenizer(text::TokenizerOptions{}).tokenize(folded, [&](const text::TokenPiece* parts, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) {
            out += parts[i].text;
            out += ' ';
        }
    });
    return out;
}

/// True when the words of `answer` are a contiguous run of the words of `passage`;
/// false for an answer without words.
[[nodiscard]] inline bool contains_answer(std::string_view passage, std::string_view answer) {
    const std::string a = answer_match_form(answer);
    return a.size() > 1 && answer_match_form(passage).find(a) != std::string::npos;
}

/// Finds which reference answers occur anywhere in a corpus, in one pass over its
/// passages: an answer that occurs in no passage cannot be found by any retrieval, so
/// the share of answers that occur is the ceiling of answer containment (a question set
/// whose answers are paraphrases, not spans of the corpus, has a ceiling near 0).
/// Each passage is normalised once and every run of its words whose length is that of
/// some answer is looked up in a hash table: O(words x distinct answer lengths).
class AnswerFinder {
public:
    /// `answers[i]` is the reference answer of question i (empty: none).
    explicit AnswerFinder(const std::vector<std::string>& answers) : found_(answers.size(), false) {
        forms_.reserve(answers.size());
        for (const auto& a : answers) forms_.push_back(a.empty() ? std::string() : answer_match_form(a));
        for (std::size_t i = 0; i < forms_.size(); ++i) {
            const auto& f = forms_[i];
            if (f.size() <= 1) continue;
            by_form_[f].push_back(i);
            std::size_t words = 0;
            for (std::size_t c = 1; c < f.size(); ++c) words += f[c] == ' ' ? 1 : 0;
            if (std::find(lengths_.begin(), lengths_.end(), words) == lengths_.end()) lengths_.push_back(words);
        }
    }

    /// Marks the answers that occur in `passage`.
    void scan(std::string_view passage) {
        if (by_form_.empty()) return;
        const std::string p = answer_match_form(passage);
        spaces_.clear();
        for (std::size_t c = 0; c < p.size(); ++c)
            if (p[c] == ' ') spaces_.push_back(c);
        for (std::size_t i = 0; i < spaces_.size(); ++i)
            for (std::size_t len : lengths_) {
                if (i + len >= spaces_.size()) continue;
                const auto it = by_form_.find(std::string_view(p).substr(spaces_[i], spaces_[i + len] - spaces_[i] + 1));
                if (it == by_form_.end()) continue;
                for (std::size_t q : it->second) found_[q] = true;
            }
    }

    /// found()[i]: the answer of question i occurs in a scanned passage.
    [[nodiscard]] const std::vector<bool>& found() const noexcept { return found_; }
    /// How many answers (with words) occur in a scanned passage.
    [[nodiscard]] std::size_t found_count() const noexcept {
        return static_cast<std::size_t>(std::count(found_.begin(), found_.end(), true));
    }

private:
    struct Hash {
        using is_transparent = void;
        std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
    };
    std::vector<std::string> forms_;
    std::unordered_map<std::string, std::vector<std::size_t>, Hash, std::equal_to<>> by_form_;
    std::vector<std::size_t> lengths_;  // distinct answer lengths, in words
    std::vector<std::size_t> spaces_;   // scratch: the word boundaries of a passage
    std::vector<bool> found_;
};

/// Looks for each question's reference answer in the passages of its first `max_rank`
/// ranking entries; `text_of(chunk id)` gives a passage's text (empty when unknown).
/// Each passage is normalised once. Then report.answer_containment(k) is set for k <= max_rank.
inline void find_answers(PipelineReport& report, const std::function<std::string(std::string_view)>& text_of,
                         std::size_t max_rank) {
    std::unordered_map<std::string, std::string> forms;  // chunk id -> answer_match_form
    std::vector<std::size_t> ranks(report.outcomes().size(), 0);
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        const auto& q = report.questions()[i];
        if (!q.answer) continue;
        const std::string answer = answer_match_form(*q.answer);
        if (answer.size() <= 1) continue;
        const auto& keys = report.outcomes()[i].keys;
        for (std::size_t r = 0; r < keys.size() && r < max_rank; ++r) {
            auto it = forms.find(keys[r]);
            if (it == forms.end()) it = forms.emplace(keys[r], answer_match_form(text_of(keys[r]))).first;
            if (it->second.find(answer) != std::string::npos) {
                ranks[i] = r + 1;
                break;
            }
        }
    }
    report.set_answer_ranks(ranks);
}

}  // namespace ragpp
