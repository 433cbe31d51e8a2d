// ragpp: the analyzers. Each turns text into index terms, the same way for documents
// and queries (the ragpp::Analyzer concept):
//
//   standard  tokenize (UAX #29 words, identifiers as parts + joined form), case fold,
//             compatibility fold, remove diacritics; no stop words, no stemming.
//   english   as Lucene's EnglishAnalyzer (Anserini's BM25 baselines): the standard
//             steps, then the English possessive 's removed, Lucene's 33 English stop
//             words, and the Porter stemmer.
//   french    elisions removed first (l' d' j' m' n' s' t' c' qu' jusqu' lorsqu'
//             puisqu' quoiqu', with ' or ’), case fold, French stop words, a light
//             French stemmer, and diacritics removed after stemming ("préavis" and
//             "preavis" both give "preavi"). "L'avenant" gives "avenant" only: an
//             elided article is not part of an identifier, so no joined form
//             ("lavenant") unless AnalyzerOptions::elision_joined_form asks for it.
//   cjk       as standard, but runs of Han, Hiragana, Katakana and Hangul become
//             overlapping bigrams ("東京都" -> "東京", "京都"); a lone character stays
//             a unigram.
//
// CustomAnalyzer<Stemmer> takes any options and any stemmer (see text/stemmer.hpp),
// e.g. a Snowball stemmer from ragpp/ext/snowball.hpp.
//
// Compounds: for "MX-200" the terms are "mx", "200", then the joined form "mx200"
// (parts in text order, the joined form after them). Stop words apply to the parts,
// never to the joined form; the stemmer applies to both.
//
// Complexity: linear in the text. All analyzers are cheap to copy and const-callable
// from many threads at once.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <ragpp/core/concepts.hpp>
#include <ragpp/core/error.hpp>
#include <ragpp/text/normalize.hpp>
#include <ragpp/text/porter.hpp>
#include <ragpp/text/stemmer.hpp>
#include <ragpp/text/stopwords.hpp>
#include <ragpp/text/tokenizer.hpp>

namespace ragpp {

/// Language-specific steps applied to each word after normalization.
enum class Elision { none, french };

struct AnalyzerOptions {
    text::TokenizerOptions tokenizer{};
    /// Remove diacritics ("é" -> "e"). When `strip_diacritics_after_stemming`, the
    /// stemmer and stop words see accented words and the marks go afterwards.
    bool strip_diacritics = true;
    bool strip_diacritics_after_stemming = false;
    /// Remove a final 's ('s, ’s) from words (Lucene's EnglishPossessiveFilter).
    bool english_possessive = false;
    /// Remove French elided articles and pronouns ("l'", "qu'", ...).
    Elision elision = Elision::none;
    /// Also emit the apostrophe-free joined form of an elided word ("lavenant"), so
    /// that a query typed without the apostrophe meets it. Off by default: an elided
    /// article is not an identifier, and the joined form costs PIAF 0.005 nDCG@10.
    bool elision_joined_form = false;
    /// Emit the joined form of compounds ("mx200" for "MX-200").
    bool joined_form = true;
    /// Overlapping bigrams for CJK runs (needs tokenizer.cjk_runs).
    bool cjk_bigrams = false;
    /// Words dropped after normalization (compared accent-free when diacritics go
    /// after stemming); nullptr for none. Must outlive the analyzer.
    const text::StopWords* stop_words = nullptr;
};

namespace text::detail {

/// Removes a French elision prefix ("l'", "qu'", ...) from a folded word; true if removed.
inline bool remove_french_elision(std::string& w) {
    const std::size_t q = w.find('\'');
    if (q == std::string::npos || q == 0 || q + 1 >= w.size()) return false;
    static constexpr std::string_view prefixes[] = {"l", "d", "j", "m", "n", "s", "t", "c", "qu", "jusqu", "lorsqu",
                                                    "puisqu", "quoiqu"};
    const std::string_view head = std::string_view(w).substr(0, q);
    for (std::string_view p : prefixes) {
        if (head == p) {
            w.erase(0, q + 1);
            return true;
        }
    }
    return false;
}

/// Lucene's EnglishPossessiveFilter: a final 's removed.
inline void remove_english_possessive(std::string& w) {
    if (w.size() >= 2 && w[w.size() - 2] == '\'' && w.back() == 's') w.resize(w.size() - 2);
}

/// Emits overlapping bigrams of the code points of `run` (a lone one as a unigram).
inline void cjk_bigrams(std::string_view run, std::vector<std::string>& out) {
    std::size_t prev = std::string_view::npos, i = 0;
    bool any = false;
    while (i < run.size()) {
        const std::size_t len = decode_utf8(run, i).length;
        if (prev != std::string_view::npos) {
            out.emplace_back(run.substr(prev, i + len - prev));
            any = true;
        }
        prev = i;
        i += len;
    }
    if (!any && !run.empty()) out.emplace_back(run);
}

/// The analysis pipeline shared by every analyzer.
template <class Stemmer>
class Pipeline {
public:
    Pipeline(const AnalyzerOptions& options, const Stemmer& stemmer) : o_(options), stem_(stemmer) {}

    void run(std::string_view text, std::vector<std::string>& out) const {
        const Tokenizer tokenizer(o_.tokenizer);
        std::string scratch, joined;
        std::vector<std::string> parts;
        tokenizer.tokenize(text, [&](const TokenPiece* pieces, std::size_t count) {
            if (count == 1 && pieces[0].kind == TokenKind::emoji) {
                emit_emoji(pieces[0].text, out);
                return;
            }
            if (count == 1 && pieces[0].kind == TokenKind::cjk_run) {
                scratch.clear();
                normalize_append(pieces[0].text, scratch, {o_.strip_diacritics});
                if (o_.cjk_bigrams) cjk_bigrams(scratch, out);
                else out.push_back(scratch);
                return;
            }
            parts.resize(count);
            joined.clear();
            for (std::size_t i = 0; i < count; ++i) {
                std::string& w = parts[i];
                w.clear();
                normalize_append(pieces[i].text, w, {o_.strip_diacritics && !o_.strip_diacritics_after_stemming});
                if (o_.english_possessive) remove_english_possessive(w);
                if (o_.elision == Elision::french && w.find('\'') != std::string::npos) {
                    std::string whole = w;
                    if (remove_french_elision(w) && o_.elision_joined_form && count == 1 && !is_stop(w)) {
                        whole.erase(whole.find('\''), 1);
                        emit(std::move(w), out, true);
                        emit(std::move(whole), out, false);
                        return;
                    }
                }
                joined += w;
            }
            for (std::size_t i = 0; i < count; ++i) emit(std::move(parts[i]), out, true);
            if (count >= 2 && o_.joined_form) emit(std::move(joined), out, false);
        });
    }

private:
    [[nodiscard]] bool is_stop(const std::string& w) const {
        if (!o_.stop_words) return false;
        if (o_.strip_diacritics_after_stemming) return o_.stop_words->contains(text::normalize(w));
        return o_.stop_words->contains(w);
    }

    void emit(std::string&& w, std::vector<std::string>& out, bool may_stop) const {
        if (w.empty()) return;
        if (may_stop && is_stop(w)) return;
        apply_stemmer(stem_, w);
        if (o_.strip_diacritics && o_.strip_diacritics_after_stemming) w = text::normalize(w);
        if (!w.empty()) out.push_back(std::move(w));
    }

    /// Emoji keep their zero-width joiners and modifiers; variation selectors go.
    static void emit_emoji(std::string_view e, std::vector<std::string>& out) {
        std::string t;
        std::size_t i = 0;
        while (i < e.size()) {
            const Utf8Char c = decode_utf8(e, i);
            if (c.code_point != 0xFE0E && c.code_point != 0xFE0F) t.append(e.substr(i, c.length));
            i += c.length;
        }
        if (!t.empty()) out.push_back(std::move(t));
    }

    const AnalyzerOptions& o_;
    const Stemmer& stem_;
};

}  // namespace text::detail

/// An analyzer with any options and any stemmer hook.
template <text::StemmerHook Stemmer = text::NoStemmer>
class CustomAnalyzer {
public:
    explicit CustomAnalyzer(std::string name, AnalyzerOptions options = {}, Stemmer stemmer = {})
        : name_(std::move(name)), options_(options), stemmer_(std::move(stemmer)) {}

    void analyze(std::string_view text, std::vector<std::string>& out) const {
        text::detail::Pipeline<Stemmer>(options_, stemmer_).run(text, out);
    }
    [[nodiscard]] std::string_view name() const noexcept { return name_; }
    [[nodiscard]] const AnalyzerOptions& options() const noexcept { return options_; }

private:
    std::string name_;
    AnalyzerOptions options_;
    Stemmer stemmer_;
};

namespace text::detail {
/// The shared body of the built-in analyzers: Derived provides options() and name().
template <class Derived, class Stemmer>
class BuiltinAnalyzer {
public:
    void analyze(std::string_view text, std::vector<std::string>& out) const {
        Pipeline<Stemmer>(Derived::options(), stemmer_).run(text, out);
    }

private:
    Stemmer stemmer_{};
};
}  // namespace text::detail

/// Tokenize, case fold, compatibility fold, remove diacritics.
class StandardAnalyzer : public text::detail::BuiltinAnalyzer<StandardAnalyzer, text::NoStemmer> {
public:
    [[nodiscard]] static constexpr std::string_view name() noexcept { return "standard"; }
    [[nodiscard]] static const AnalyzerOptions& options() {
        static const AnalyzerOptions o{};
        return o;
    }
};

/// Lucene's EnglishAnalyzer steps (possessive, 33 stop words, Porter) on top of standard.
class EnglishAnalyzer : public text::detail::BuiltinAnalyzer<EnglishAnalyzer, text::PorterStemmer> {
public:
    [[nodiscard]] static constexpr std::string_view name() noexcept { return "english"; }
    [[nodiscard]] static const AnalyzerOptions& options() {
        static const AnalyzerOptions o = [] {
            AnalyzerOptions a;
            a.english_possessive = true;
            a.stop_words = &text::english_stop_words();
            return a;
        }();
        return o;
    }
};

/// French: elisions, stop words, light stemming, then diacritics removed.
class FrenchAnalyzer : public text::detail::BuiltinAnalyzer<FrenchAnalyzer, text::FrenchLightStemmer> {
public:
    [[nodiscard]] static constexpr std::string_view name() noexcept { return "french"; }
    [[nodiscard]] static const AnalyzerOptions& options() {
        static const AnalyzerOptions o = [] {
            AnalyzerOptions a;
            a.elision = Elision::french;
            a.strip_diacritics_after_stemming = true;
            a.stop_words = &text::french_stop_words();
            return a;
        }();
        return o;
    }
};

/// Standard, with overlapping bigrams over Han, Hiragana, Katakana and Hangul runs.
class CjkAnalyzer : public text::detail::BuiltinAnalyzer<CjkAnalyzer, text::NoStemmer> {
public:
    [[nodiscard]] static constexpr std::string_view name() noexcept { return "cjk"; }
    [[nodiscard]] static const AnalyzerOptions& options() {
        static const AnalyzerOptions o = [] {
            AnalyzerOptions a;
            a.tokenizer.cjk_runs = true;
            a.cjk_bigrams = true;
            return a;
        }();
        return o;
    }
};

static_assert(Analyzer<StandardAnalyzer>);
static_assert(Analyzer<EnglishAnalyzer>);
static_assert(Analyzer<FrenchAnalyzer>);
static_assert(Analyzer<CjkAnalyzer>);
static_assert(Analyzer<CustomAnalyzer<>>);

/// The names of the built-in analyzers, for the command line and saved indexes.
inline constexpr std::array<std::string_view, 4> analyzer_names{"standard", "english", "french", "cjk"};

/// Calls f(analyzer) with the built-in analyzer called `name` and returns its result;
/// throws InvalidArgument listing the valid names for any other name.
template <class F>
decltype(auto) with_analyzer(std::string_view name, F&& f) {
    if (name == StandardAnalyzer::name()) return std::forward<F>(f)(StandardAnalyzer{});
    if (name == EnglishAnalyzer::name()) return std::forward<F>(f)(EnglishAnalyzer{});
    if (name == FrenchAnalyzer::name()) return std::forward<F>(f)(FrenchAnalyzer{});
    if (name == CjkAnalyzer::name()) return std::forward<F>(f)(CjkAnalyzer{});
    std::string valid;
    for (auto n : analyzer_names) {
        if (!valid.empty()) valid += ", ";
        valid += n;
    }
    throw InvalidArgument("analyzer '" + std::string(name) + "' is unknown (valid: " + valid + ")");
}

}  // namespace ragpp
