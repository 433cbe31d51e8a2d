// ragpp: the Porter stemmer for English.
//
// Source: M. F. Porter, "An algorithm for suffix stripping", Program 14(3), 130-137,
// 1980; with the two changes of Porter's own reference implementation (the ANSI C
// "porter.c" from tartarus.org), which Lucene's PorterStemFilter (and so Anserini's
// BM25 baselines) also make: step 2 maps "bli" -> "ble" (instead of "abli" -> "able")
// and adds "logi" -> "log". Words of one or two letters are left alone.
//
// Notation (from the paper): a word is [C](VC)^m[V], C a run of consonants, V a run of
// vowels (a e i o u, and y after a consonant); m is the measure of a stem. *v* = the
// stem contains a vowel; *d = it ends with a double consonant; *o = it ends cvc where
// the last c is not w, x or y.
//
// Non-ASCII bytes count as consonants (as any non-vowel character does in the
// original), so UTF-8 words pass through unharmed. Complexity: O(length) per word.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ragpp::text {

class PorterStemmer {
public:
    /// Words longer than this many bytes are left as they are. No word of a natural
    /// language is that long, and the algorithm's consonant test recurses over runs of
    /// 'y' (stack depth the run's length, time its square: "a" + 100,000 'y' + "ing"
    /// took 55 s). Lucene's StandardTokenizer cuts tokens at the same 255
    /// (StandardAnalyzer.DEFAULT_MAX_TOKEN_LENGTH).
    static constexpr std::size_t max_word_bytes = 255;

    /// Stems `word` (lowercase) in place.
    void operator()(std::string& word) const {
        if (word.size() <= 2 || word.size() > max_word_bytes) return;
        State s{word, static_cast<std::ptrdiff_t>(word.size()) - 1, 0};
        s.step1ab();
        s.step1c();
        s.step2();
        s.step3();
        s.step4();
        s.step5();
        word.resize(static_cast<std::size_t>(s.k + 1));
    }

    /// The stem of `word`.
    [[nodiscard]] std::string stem(std::string_view word) const {
        std::string w(word);
        (*this)(w);
        return w;
    }

private:
    struct State {
        std::string& b;
        std::ptrdiff_t k;  // index of the last character of the current word
        std::ptrdiff_t j;  // index of the last character of the stem before a suffix

        [[nodiscard]] char at(std::ptrdiff_t i) const { return b[static_cast<std::size_t>(i)]; }

        [[nodiscard]] bool cons(std::ptrdiff_t i) const {
            switch (at(i)) {
                case 'a': case 'e': case 'i': case 'o': case 'u': return false;
                case 'y': return i == 0 ? true : !cons(i - 1);
                default: return true;
            }
        }
        /// m, the number of VC sequences in b[0..j].
        [[nodiscard]] int measure() const {
            int n = 0;
            std::ptrdiff_t i = 0;
            while (true) {
                if (i > j) return n;
                if (!cons(i)) break;
                ++i;
            }
            ++i;
            while (true) {
                while (true) {
                    if (i > j) return n;
                    if (cons(i)) break;
                    ++i;
                }
                ++i;
                ++n;
                while (true) {
                    if (i > j) return n;
                    if (!cons(i)) break;
                    ++i;
                }
                ++i;
            }
        }
        [[nodiscard]] bool vowel_in_stem() const {
            for (std::ptrdiff_t i = 0; i <= j; ++i)
                if (!cons(i)) return true;
            return false;
        }
        [[nodiscard]] bool double_consonant(std::ptrdiff_t i) const {
            return i >= 1 && at(i) == at(i - 1) && cons(i);
        }
        [[nodiscard]] bool cvc(std::ptrdiff_t i) const {
            if (i < 2 || !cons(i) || cons(i - 1) || !cons(i - 2)) return false;
            const char c = at(i);
            return c != 'w' && c != 'x' && c != 'y';
        }
        /// True when b[0..k] ends with `s`; then j is the end of the stem before it.
        bool ends(std::string_view s) {
            const auto len = static_cast<std::ptrdiff_t>(s.size());
            if (len > k + 1) return false;
            const char* tail = b.data() + (k - len + 1);
            for (std::size_t i = s.size(); i-- > 0;)  // suffixes are short: no memcmp call
                if (tail[i] != s[i]) return false;
            j = k - len;
            return true;
        }
        /// Replaces b[j+1..k] by `s`.
        void set_to(std::string_view s) {
            b.resize(static_cast<std::size_t>(j + 1));
            b.append(s);
            k = j + static_cast<std::ptrdiff_t>(s.size());
        }
        void replace_if_measure(std::string_view s) {
            if (measure() > 0) set_to(s);
        }

        // Step 1a (plurals) and 1b (-ed, -ing).
        void step1ab() {
            if (at(k) == 's') {
                if (ends("sses")) k -= 2;
                else if (ends("ies")) set_to("i");
                else if (at(k - 1) != 's') --k;
            }
            if (ends("eed")) {
                if (measure() > 0) --k;
            } else if ((ends("ed") || ends("ing")) && vowel_in_stem()) {
                k = j;
                if (ends("at")) set_to("ate");
                else if (ends("bl")) set_to("ble");
                else if (ends("iz")) set_to("ize");
                else if (double_consonant(k)) {
                    const char c = at(k);
                    if (c != 'l' && c != 's' && c != 'z') --k;
                } else {
                    j = k;
                    if (measure() == 1 && cvc(k)) set_to("e");
                }
            }
        }
        // Step 1c: (*v*) y -> i.
        void step1c() {
            if (ends("y") && vowel_in_stem()) b[static_cast<std::size_t>(k)] = 'i';
        }
        // Step 2: double suffixes to single ones, when m > 0.
        void step2() {
            if (k == 0) return;
            struct Rule {
                std::string_view from, to;
            };
            static constexpr Rule rules[] = {
                {"ational", "ate"}, {"tional", "tion"}, {"enci", "ence"}, {"anci", "ance"}, {"izer", "ize"},
                {"bli", "ble"},     {"alli", "al"},     {"entli", "ent"}, {"eli", "e"},     {"ousli", "ous"},
                {"ization", "ize"}, {"ation", "ate"},   {"ator", "ate"},  {"alism", "al"},  {"iveness", "ive"},
                {"fulness", "ful"}, {"ousness", "ous"}, {"aliti", "al"},  {"iviti", "ive"}, {"biliti", "ble"},
                {"logi", "log"}};
            apply_first(rules, at(k - 1), false);
        }
        // Step 3: -ic-, -full, -ness etc., when m > 0.
        void step3() {
            struct Rule {
                std::string_view from, to;
            };
            static constexpr Rule rules[] = {{"icate", "ic"}, {"ative", ""}, {"alize", "al"}, {"iciti", "ic"},
                                             {"ical", "ic"},  {"ful", ""},   {"ness", ""}};
            apply_first(rules, at(k), true);
        }
        /// Applies the first rule whose suffix matches, only if m > 0; a matching
        /// suffix stops the search even when m = 0, as in the original. `key` is the
        /// word's last (or, with !last, penultimate) letter: a cheap pre-filter.
        template <class Rules>
        void apply_first(const Rules& rules, char key, bool last) {
            for (const auto& r : rules) {
                if (r.from[r.from.size() - (last ? 1 : 2)] != key) continue;
                if (ends(r.from)) {
                    replace_if_measure(r.to);
                    return;
                }
            }
        }
        // Step 4: remove -ant, -ence etc. when m > 1.
        void step4() {
            if (k == 0) return;
            static constexpr std::string_view suffixes[] = {"al",  "ance", "ence", "er",  "ic",  "able", "ible",
                                                            "ant", "ement", "ment", "ent", "ion", "ou",   "ism",
                                                            "ate", "iti",  "ous",  "ive", "ize"};
            for (std::string_view s : suffixes) {
                if (s[s.size() - 2] != at(k - 1)) continue;
                if (!ends(s)) continue;
                if (s == "ion" && !(j >= 0 && (at(j) == 's' || at(j) == 't'))) continue;
                if (measure() > 1) k = j;
                return;
            }
        }
        // Step 5: remove a final -e when m > 1 (or m = 1 and not *o); -ll -> -l when m > 1.
        void step5() {
            j = k;
            if (at(k) == 'e') {
                const int m = measure();
                if (m > 1 || (m == 1 && !cvc(k - 1))) --k;
            }
            if (at(k) == 'l' && double_consonant(k) && measure() > 1) --k;
        }
    };
};

}  // namespace ragpp::text
