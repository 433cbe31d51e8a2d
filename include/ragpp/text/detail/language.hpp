// ragpp detail: the function-word profiles of text::identify_language (text/analyzer.hpp).
#pragma once

#include <ragpp/text/stopwords.hpp>

namespace ragpp::text::detail {

/// English function words that are not French words (no "a", "an", "as", "on", "or", "but").
inline const StopWords& english_profile() {
    static const StopWords w{"the",  "of",    "and",  "to",    "is",    "was",   "that",  "for",   "with", "are",
                             "this", "from",  "by",   "have",  "has",   "were",  "which", "be",    "been", "not",
                             "they", "their", "its",  "it",    "at",    "we",    "these", "can",   "will", "would",
                             "than", "also",  "into", "there", "when",  "what",  "who",   "our",   "you",  "had",
                             "such", "in",    "how",  "about", "after", "between"};
    return w;
}
/// French function words that are not English words (no "a", "un", "il", "se", "ne", "sa", "ses": also
/// abbreviations in English text, "IL-6", "SE").
inline const StopWords& french_profile() {
    static const StopWords w{"le",   "la",    "les",  "des",   "du",    "de",    "et",    "est",  "une",  "dans",
                             "pour", "pas",   "sur",  "au",    "aux",   "avec",  "ce",    "cette", "ces", "qui",
                             "que",  "sont",  "ont",  "été",   "être",  "nous",  "vous",  "mais", "ou",   "où",
                             "leur", "leurs", "par",  "plus",  "elle",  "ils",   "elles", "lui",  "très", "aussi",
                             "comme", "donc", "entre", "sans", "sous",  "selon", "après", "peut", "quel", "quelle",
                             "quels", "quelles", "pourquoi", "quand", "combien"};
    return w;
}
/// A letter of a word for identify_language: ASCII letters and code points from U+00C0 on,
/// except × ÷ and general punctuation (U+2000-U+206F: ’, —, ...).
inline bool profile_letter(char32_t c) noexcept {
    if (c < 0x80) return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
    return c >= 0xC0 && c != 0xD7 && c != 0xF7 && !(c >= 0x2000 && c <= 0x206F);
}

}  // namespace ragpp::text::detail
