// ragpp (internal): the word lists and helpers of query coverage (answer/abstain.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <iterator>
#include <string>
#include <string_view>

namespace ragpp {

namespace detail {

/// The question words of query coverage (see the header comment), lower case, sorted.
inline constexpr std::string_view coverage_question_words[] = {
    "a", "about", "am", "an", "and", "any", "are", "as", "at", "au", "aux", "avec", "be", "been", "being", "but",
    "by", "c'est", "can", "ce", "ces", "cet", "cette", "combien", "comment", "could", "d", "dans", "de", "des",
    "describe", "did", "do", "does", "doing", "doit", "done", "du", "elle", "elles", "en", "est", "est-ce", "et",
    "explain", "faire", "faut", "for", "from", "get", "give", "had", "has", "have", "he", "her", "here", "his", "how",
    "i", "if", "il", "ils", "in", "into", "is", "it", "its", "j", "je", "l", "la", "laquelle", "le", "lequel", "les",
    "lesquels", "leur", "leurs", "ma", "may", "me", "mes", "might", "mon", "must", "my", "ne", "nos", "notre", "nous",
    "of", "on", "or", "ou", "our", "où", "par", "pas", "peut", "please", "pour", "pourquoi", "qu", "qu'est-ce",
    "quand", "que", "quel", "quelle", "quelles", "quels", "qui", "quoi", "s", "sa", "se", "ses", "shall", "she",
    "should", "show", "so", "some", "son", "sont", "sur", "ta", "tell", "tes", "that", "the", "their", "them", "then",
    "there", "these", "they", "this", "those", "to", "ton", "tu", "un", "une", "us", "vos", "votre", "vous", "was",
    "we", "were", "what", "what's", "when", "where", "which", "who", "whom", "whose", "why", "will", "with", "would",
    "y", "you", "your", "à"};

/// Whether `word` (trimmed of punctuation) is a question word, in any case (ASCII case
/// folding; the accented ones are listed in lower case).
[[nodiscard]] inline bool is_question_word(std::string_view word) noexcept {
    if (word.size() > 12) return false;
    char buf[12];
    for (std::size_t i = 0; i < word.size(); ++i) {
        const char c = word[i];
        buf[i] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    }
    std::string_view w(buf, word.size());
    // The typographic apostrophe of "qu’est-ce" and "what’s" read as '.
    std::string folded;
    if (w.find("\xe2\x80\x99") != std::string_view::npos) {
        folded = std::string(w);
        for (std::size_t at; (at = folded.find("\xe2\x80\x99")) != std::string::npos;) folded.replace(at, 3, "'");
        w = folded;
    }
    return std::binary_search(std::begin(coverage_question_words), std::end(coverage_question_words), w);
}

/// Whether `term` is made of hiragana only (U+3040..U+309F): in Japanese the particles,
/// endings and auxiliaries ("です", "すか", "ている"), not what a question is about.
[[nodiscard]] inline bool all_hiragana(std::string_view term) noexcept {
    if (term.empty() || term.size() % 3 != 0) return false;
    for (std::size_t i = 0; i < term.size(); i += 3) {
        const auto b0 = static_cast<unsigned char>(term[i]), b1 = static_cast<unsigned char>(term[i + 1]);
        // U+3040..U+309F is E3 81 80..E3 82 9F in UTF-8.
        if (b0 != 0xE3 || (b1 != 0x81 && b1 != 0x82)) return false;
        if (b1 == 0x82 && static_cast<unsigned char>(term[i + 2]) > 0x9F) return false;
    }
    return true;
}

/// Lucene's BM25 idf.
[[nodiscard]] inline double coverage_idf(double n, double df) { return std::log(1.0 + (n - df + 0.5) / (df + 0.5)); }

}  // namespace detail

}  // namespace ragpp
