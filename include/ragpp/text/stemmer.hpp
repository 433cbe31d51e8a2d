// ragpp: the stemmer hook, and a light French stemmer.
//
// A stemmer is any callable that either rewrites a term in place,
//   void(std::string& term)                       e.g. ragpp::text::PorterStemmer
// or returns the stem (taking std::string_view, const std::string& or std::string),
//   std::string(std::string_view term)            e.g. a lambda, ragpp::ext::SnowballStemmer
// `apply_stemmer(stemmer, term)` calls either form. Terms reach the stemmer case
// folded (and, in the french analyzer, still accented). `NoStemmer` does nothing.
#pragma once

#include <concepts>
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <ragpp/text/detail/stemmer.hpp>

namespace ragpp::text {

/// A callable usable as a stemmer (see the header comment).
template <class S>
concept StemmerHook = detail::InPlaceStemmer<S> || detail::ReturningStemmer<S>;

/// Stems `term` in place with either form of stemmer.
template <StemmerHook S>
void apply_stemmer(const S& stemmer, std::string& term) {
    if constexpr (detail::InPlaceStemmer<S>) {
        stemmer(term);
    } else {
        std::string stem(stemmer(std::as_const(term)));
        term = std::move(stem);
    }
}

struct NoStemmer {
    void operator()(std::string&) const noexcept {}
};

/// A light French stemmer, written for ragpp after the idea of J. Savoy's "light"
/// stemmers (J. Savoy, "A stemming procedure and stopword list for general French
/// corpora", JASIS 50(10), 1999): remove inflection only (plural, feminine, the
/// past participle and infinitive of -er verbs), never derivation, so that
/// "résiliée", "résiliés", "résilier" and "résilié" meet but "résiliation" stays apart.
/// The rules treat "e", "é" and "è" alike, so the result is the same whether or not
/// the writer typed the accents. On words of 4 letters or more:
///   1. plural: -eaux -> -eau, -aux -> -al, else a final -s or -x is removed;
///   2. feminine / participle: a final -e, then a final -é or -e, is removed;
///   3. infinitive: a final -er (or -èr, -ér) is removed;
///   4. a final double consonant is made single (bonn -> bon).
/// Each step applies only while the word keeps at least 3 letters.
class FrenchLightStemmer {
public:
    void operator()(std::string& w) const {
        if (letters(w) < 4) return;
        // 1. plural
        if (ends(w, "eaux")) {
            w.pop_back();
        } else if (ends(w, "aux") && letters(w) >= 5) {
            w.resize(w.size() - 2);
            w.push_back('l');
        } else if ((w.back() == 's' || w.back() == 'x') && letters(w) > 3) {
            w.pop_back();
        }
        // 2. feminine and past participle (-e, -ée, -é)
        if (letters(w) > 3 && w.back() == 'e') w.pop_back();
        if (letters(w) > 3) drop_final_e(w);
        // 3. infinitive -er
        if (letters(w) > 4 && w.back() == 'r') {
            std::string tmp = w.substr(0, w.size() - 1);
            if (drop_final_e(tmp)) w = std::move(tmp);
        }
        // 4. double consonant
        if (letters(w) > 3) {
            const char a = w[w.size() - 1], b = w[w.size() - 2];
            if (a == b && a >= 'b' && a <= 'z' && a != 'e' && a != 'i' && a != 'o' && a != 'u' && a != 'y')
                w.pop_back();
        }
    }

    [[nodiscard]] std::string stem(std::string_view word) const {
        std::string w(word);
        (*this)(w);
        return w;
    }

private:
    static bool ends(const std::string& w, std::string_view s) {
        return w.size() >= s.size() && std::string_view(w).substr(w.size() - s.size()) == s;
    }
    /// Number of code points.
    static std::size_t letters(const std::string& w) {
        std::size_t n = 0;
        for (char c : w) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
        return n;
    }
    /// Removes a final "e", "é" or "è"; true when it did.
    static bool drop_final_e(std::string& w) {
        if (!w.empty() && w.back() == 'e') {
            w.pop_back();
            return true;
        }
        if (ends(w, "\xC3\xA9") || ends(w, "\xC3\xA8")) {  // é, è
            w.resize(w.size() - 2);
            return true;
        }
        return false;
    }
};

}  // namespace ragpp::text
