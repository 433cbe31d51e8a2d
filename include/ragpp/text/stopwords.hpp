// ragpp: stop word lists.
//
// - english_stop_words(): the 33 words of Lucene's EnglishAnalyzer default set
//   (ENGLISH_STOP_WORDS_SET), which Anserini's BM25 baselines use; keeping exactly
//   these words is part of reproducing its figures.
// - french_stop_words(): articles, pronouns, prepositions, conjunctions and the
//   common forms of "être" and "avoir", written for ragpp, without accents (the
//   french analyzer compares the accent-free form, so "à" and "a", "où" and "ou",
//   "été" and "ete" are all stop words).
#pragma once

#include <algorithm>
#include <array>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace ragpp::text {

/// A set of words. Lookup compares only the words of the same first byte and length
/// (the lists are small), so a miss usually costs one table read.
class StopWords {
public:
    StopWords() = default;
    StopWords(std::initializer_list<std::string_view> words) { assign(words.begin(), words.end()); }
    template <class Range>
    explicit StopWords(const Range& words) {
        assign(std::begin(words), std::end(words));
    }

    [[nodiscard]] bool contains(std::string_view word) const noexcept {
        if (word.empty() || word.size() > max_size_) return false;
        const auto& bucket = buckets_[static_cast<unsigned char>(word[0])];
        for (const std::string& w : bucket)
            if (w.size() == word.size() && std::string_view(w) == word) return true;
        return false;
    }
    [[nodiscard]] std::size_t size() const noexcept { return words_.size(); }
    /// The words, sorted.
    [[nodiscard]] const std::vector<std::string>& words() const noexcept { return words_; }

private:
    template <class It>
    void assign(It first, It last) {
        words_.assign(first, last);
        std::sort(words_.begin(), words_.end());
        words_.erase(std::unique(words_.begin(), words_.end()), words_.end());
        for (const auto& w : words_) {
            if (w.empty()) continue;
            buckets_[static_cast<unsigned char>(w[0])].push_back(w);
            max_size_ = std::max(max_size_, w.size());
        }
    }

    std::vector<std::string> words_;
    std::array<std::vector<std::string>, 256> buckets_{};
    std::size_t max_size_ = 0;
};

/// Lucene's English stop set (33 words).
[[nodiscard]] inline const StopWords& english_stop_words() {
    static const StopWords words{"a",    "an",    "and",  "are",  "as",    "at",   "be",   "but",   "by",
                                 "for",  "if",    "in",   "into", "is",    "it",   "no",   "not",   "of",
                                 "on",   "or",    "such", "that", "the",   "their", "then", "there", "these",
                                 "they", "this",  "to",   "was",  "will",  "with"};
    return words;
}

/// French function words, accent-free.
[[nodiscard]] inline const StopWords& french_stop_words() {
    static const StopWords words{
        // articles and determiners
        "le", "la", "les", "l", "un", "une", "des", "du", "de", "d", "au", "aux", "ce", "cet", "cette", "ces",
        "mon", "ma", "mes", "ton", "ta", "tes", "son", "sa", "ses", "notre", "nos", "votre", "vos", "leur", "leurs",
        // pronouns
        "je", "j", "tu", "il", "elle", "on", "nous", "vous", "ils", "elles", "me", "m", "te", "t", "se", "s", "lui",
        "y", "en", "moi", "toi", "soi", "eux", "qui", "que", "qu", "quoi", "dont", "ou", "c", "ca", "ceci", "cela",
        "celui", "celle", "ceux", "celles", "lequel", "laquelle", "lesquels", "lesquelles", "duquel", "auquel",
        // prepositions and conjunctions
        "a", "dans", "par", "pour", "sur", "sous", "avec", "sans", "chez", "entre", "vers", "et", "ni", "mais",
        "or", "donc", "car", "si", "comme", "lorsque", "lorsqu", "puisque", "puisqu", "quand", "ne", "n", "pas",
        "plus", "jusqu", "quoiqu",
        // etre
        "etre", "suis", "es", "est", "sommes", "etes", "sont", "etais", "etait", "etions", "etiez", "etaient",
        "fus", "fut", "fumes", "furent", "sois", "soit", "soyons", "soyez", "soient", "serai", "sera", "serons",
        "serez", "seront", "serait", "seraient", "ete", "etant",
        // avoir
        "avoir", "ai", "as", "avons", "avez", "ont", "avais", "avait", "avions", "aviez", "avaient", "eu", "eus",
        "eut", "eurent", "aie", "aies", "ait", "ayons", "ayez", "aient", "aurai", "aura", "aurons", "aurez",
        "auront", "aurait", "auraient", "ayant"};
    return words;
}

}  // namespace ragpp::text
