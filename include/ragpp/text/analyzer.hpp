// ragpp: the analyzers. Each turns text into index terms, the same way for documents
// and queries (the ragpp::Analyzer concept), but multilingual (below):
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
//   multilingual  (the default of EngineConfig and the tool) each document in ONE
//             language, its own (`lang` metadata, else text::identify_language's
//             function-word counts): English as english plus French elisions removed,
//             French as french; CJK runs as bigrams in both. Each document's terms end
//             with a mark of its language, and a query is analysed in the languages the
//             index holds (see MultilingualAnalyzer). The one analyzer whose documents
//             and queries are not analysed alike: it models DocumentAnalyzer
//             (core/concepts.hpp), whose hooks BM25Index calls.
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

#include <algorithm>
#include <array>
#include <cstddef>
#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <ragpp/core/concepts.hpp>
#include <ragpp/core/types.hpp>
#include <ragpp/core/error.hpp>
#include <ragpp/text/detail/language.hpp>
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
        Tokenizer(o_.tokenizer).tokenize(text, [&](const TokenPiece* pieces, std::size_t count) { word(pieces, count, out); });
    }

    /// The terms of one token (its `count` pieces: a word, a compound's parts, ...).
    void word(const TokenPiece* pieces, std::size_t count, std::vector<std::string>& out) const {
        if (count == 1 && pieces[0].kind == TokenKind::emoji) {
            emit_emoji(pieces[0].text, out);
            return;
        }
        if (count == 1 && pieces[0].kind == TokenKind::cjk_run) {
            scratch_.clear();
            normalize_append(pieces[0].text, scratch_, {o_.strip_diacritics});
            if (o_.cjk_bigrams) cjk_bigrams(scratch_, out);
            else out.push_back(scratch_);
            return;
        }
        parts_.resize(count);
        joined_.clear();
        for (std::size_t i = 0; i < count; ++i) {
            std::string& w = parts_[i];
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
            joined_ += w;
        }
        for (std::size_t i = 0; i < count; ++i) emit(std::move(parts_[i]), out, true);
        if (count >= 2 && o_.joined_form) emit(std::move(joined_), out, false);
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
    // Buffers of word(), reused from word to word (a Pipeline serves one call).
    mutable std::string scratch_, joined_;
    mutable std::vector<std::string> parts_;
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

/// The languages whose stemmers the multilingual analyzer applies.
enum class Language { english, french };

[[nodiscard]] constexpr std::string_view language_name(Language l) noexcept {
    return l == Language::french ? "french" : "english";
}

namespace text {

/// The function-word counts of `text` (see identify_language): {English, French}.
[[nodiscard]] inline std::pair<std::size_t, std::size_t> language_counts(std::string_view text, std::size_t max_words = 1000);

/// The language of `text` by function-word profiles: among its first `max_words` words
/// (runs of letters, ASCII case folded), each English function word counts for English,
/// each French one, and each French elision ("l'", "d'", "qu'", ... before a letter, with
/// ' or ’), for French. French when its count is larger, else English (so a text of
/// neither language, code, or CJK text, is analysed as English; CJK runs are bigrammed
/// in every language). Deterministic and linear in the words read.
[[nodiscard]] inline Language identify_language(std::string_view text, std::size_t max_words = 1000) {
    const auto [en, fr] = language_counts(text, max_words);
    return fr > en ? Language::french : Language::english;
}

inline std::pair<std::size_t, std::size_t> language_counts(std::string_view text, std::size_t max_words) {
    static constexpr std::string_view elided[] = {"l", "d", "j", "m", "n", "s", "t", "c", "qu", "jusqu", "lorsqu",
                                                  "puisqu", "quoiqu"};
    std::size_t en = 0, fr = 0, words = 0, i = 0;
    std::string w;
    while (i < text.size() && words < max_words) {
        Utf8Char c = decode_utf8(text, i);
        if (!detail::profile_letter(c.code_point)) {
            i += c.length;
            continue;
        }
        w.clear();
        while (i < text.size() && detail::profile_letter(c.code_point)) {
            if (c.code_point < 0x80) w += static_cast<char>(c.code_point | 0x20);
            else w.append(text.substr(i, c.length));
            i += c.length;
            if (i < text.size()) c = decode_utf8(text, i);
        }
        ++words;
        const bool apostrophe = i < text.size() && (c.code_point == '\'' || c.code_point == 0x2019);
        if (apostrophe && i + c.length < text.size() &&
            detail::profile_letter(decode_utf8(text, i + c.length).code_point) &&
            std::find(std::begin(elided), std::end(elided), w) != std::end(elided)) {
            ++fr;
            continue;
        }
        if (detail::english_profile().contains(w)) ++en;
        else if (detail::french_profile().contains(w)) ++fr;
    }
    return {en, fr};
}

/// The language a `lang` tag names: "en", "en-US", "eng", "english" -> English; "fr",
/// "fr-CA", "fr_FR", "fra", "fre", "french", "français", "francais" -> French (ASCII
/// case folded); nullopt for any other tag.
[[nodiscard]] inline std::optional<Language> language_of_tag(std::string_view tag) {
    std::string t;
    for (char ch : tag) t += (ch >= 'A' && ch <= 'Z') ? static_cast<char>(ch | 0x20) : ch;
    if (const auto cut = t.find_first_of("-_"); cut != std::string::npos) t.resize(cut);
    if (t == "en" || t == "eng" || t == "english") return Language::english;
    if (t == "fr" || t == "fra" || t == "fre" || t == "french" || t == "français" || t == "francais")
        return Language::french;
    return std::nullopt;
}

}  // namespace text

/// Mixed-language folders (the default analyzer, "multilingual"). Each document is
/// analysed in ONE language, its own: the `lang` metadata (front matter "lang: fr") when
/// text::language_of_tag knows it, else text::identify_language of its text. English:
/// the english analyzer's steps plus French elisions removed ("l'entreprise" gives
/// "entrepris", as in French); French: the french analyzer's steps. In both, CJK runs
/// become overlapping bigrams, as in the cjk analyzer. A document's fields (title,
/// headings) are analysed in the document's language.
///
/// Each document's terms end with the mark of its language (language_mark), so an index
/// knows the languages of its documents, exactly, through updates and saved files. (The
/// mark is one term of the document's length: every length grows by one.)
///
/// A query is analysed against an index (analyze_query with the index's vocabulary:
/// BM25Index's search, query coverage). When the index's documents are all of one
/// language, the query is analysed in that language alone, exactly as its documents
/// (a French-only or English-only folder searches as with the french or english
/// analyzer). When both languages are there, a query with more English than French
/// function words and elisions (text::language_counts, as for documents: "What is the
/// notice period?") is analysed in English alone, one with more French ones ("Quel est
/// le préavis ?", "l'entreprise") in French alone. A query with as many of each (none,
/// usually: "préavis MX-200", "running costs") is analysed word by word: the English terms of a
/// word, then its French terms that differ (each distinct term once, so a word whose
/// forms agree, "entreprises" -> "entrepris", is one query term, not two); the French
/// terms are kept only when the index knows one of them, and the English terms when the
/// index knows one of them, or else when no French term is kept and the word is not a
/// French stop word ("le", "de": they are no English query terms). A form no document
/// holds adds nothing to BM25; left out, it is not counted missing by query coverage.
/// Without an index (analyze, or an empty `known`), every form of both languages.
/// BM25 then sums, for a word, the term of each form that the document holds: an
/// English document holds the English form, a French one the French form, so each
/// counts the word once (unless a document holds both forms, from two different words:
/// then both count).
class MultilingualAnalyzer {
public:
    [[nodiscard]] static constexpr std::string_view name() noexcept { return "multilingual"; }
    /// The analysis options of `language` (see the class comment).
    [[nodiscard]] static const AnalyzerOptions& options(Language language) {
        static const AnalyzerOptions en = [] {
            AnalyzerOptions a;
            a.english_possessive = true;
            a.elision = Elision::french;
            a.stop_words = &text::english_stop_words();
            a.tokenizer.cjk_runs = true;
            a.cjk_bigrams = true;
            return a;
        }();
        static const AnalyzerOptions fr = [] {
            AnalyzerOptions a;
            a.elision = Elision::french;
            a.strip_diacritics_after_stemming = true;
            a.stop_words = &text::french_stop_words();
            a.tokenizer.cjk_runs = true;
            a.cjk_bigrams = true;
            return a;
        }();
        return language == Language::french ? fr : en;
    }

    /// The language `doc` is indexed in: its `lang` metadata if known, else its text's.
    [[nodiscard]] static Language document_language(const Document& doc) {
        if (const auto it = doc.metadata.find("lang"); it != doc.metadata.end())
            if (const auto* tag = std::get_if<std::string>(&it->second))
                if (const auto l = text::language_of_tag(*tag)) return *l;
        return text::identify_language(doc.text);
    }

    /// The terms of `text` in `language` alone.
    void analyze_as(Language language, std::string_view text, std::vector<std::string>& out) const {
        if (language == Language::french)
            text::detail::Pipeline<text::FrenchLightStemmer>(options(language), french_).run(text, out);
        else
            text::detail::Pipeline<text::PorterStemmer>(options(language), english_).run(text, out);
    }
    /// The index term that marks a document of `language` ("\x1Flang:en", "\x1Flang:fr":
    /// no text gives it, the control character U+001F is no word character).
    [[nodiscard]] static constexpr std::string_view language_mark(Language language) noexcept {
        return language == Language::french ? "\x1F" "lang:fr" : "\x1F" "lang:en";
    }
    /// The terms of `doc.text` in doc's language, then the mark of that language (when
    /// the text gave any term): an index knows which languages its documents have.
    void analyze_document(const Document& doc, std::vector<std::string>& out) const {
        const Language language = document_language(doc);
        const std::size_t before = out.size();
        analyze_as(language, doc.text, out);
        if (out.size() > before) out.emplace_back(language_mark(language));
    }
    /// The terms of `text`, a field of `doc` (title, headings), in doc's language.
    void analyze_field(const Document& doc, std::string_view text, std::vector<std::string>& out) const {
        analyze_as(document_language(doc), text, out);
    }
    /// The terms of `text` in both languages (a query; see the class comment).
    void analyze(std::string_view text, std::vector<std::string>& out) const { analyze_query(text, out, {}); }
    /// The same against an index's vocabulary `known` (see the class comment); an empty
    /// function: both languages, every form.
    void analyze_query(std::string_view text, std::vector<std::string>& out,
                       const std::function<bool(std::string_view)>& known) const {
        if (known) {
            const bool en = known(language_mark(Language::english)), fr = known(language_mark(Language::french));
            if (en != fr) return analyze_as(en ? Language::english : Language::french, text, out);
            // Both: a query with more function words of one language is in that one.
            const auto [en_words, fr_words] = text::language_counts(text);
            if (en && en_words != fr_words)
                return analyze_as(en_words > fr_words ? Language::english : Language::french, text, out);
        }
        const text::detail::Pipeline<text::PorterStemmer> en(options(Language::english), english_);
        const text::detail::Pipeline<text::FrenchLightStemmer> fr(options(Language::french), french_);
        std::vector<std::string> e, f;
        auto any_known = [&](const std::vector<std::string>& terms) {
            return !known || std::any_of(terms.begin(), terms.end(), [&](const std::string& t) { return known(t); });
        };
        text::Tokenizer(options(Language::english).tokenizer).tokenize(text, [&](const text::TokenPiece* pieces, std::size_t count) {
            e.clear();
            f.clear();
            en.word(pieces, count, e);
            fr.word(pieces, count, f);
            const bool french_stop = f.empty();
            // The French terms not among the English ones, each once.
            std::vector<std::string> extra;
            for (auto& t : f)
                if (std::find(e.begin(), e.end(), t) == e.end() && std::find(extra.begin(), extra.end(), t) == extra.end())
                    extra.push_back(std::move(t));
            const bool french = !extra.empty() && any_known(extra);
            const bool english = !known || any_known(e) || (!french && !french_stop);
            f = std::move(extra);
            if (english) out.insert(out.end(), std::make_move_iterator(e.begin()), std::make_move_iterator(e.end()));
            if (french) out.insert(out.end(), std::make_move_iterator(f.begin()), std::make_move_iterator(f.end()));
        });
    }

private:
    text::PorterStemmer english_{};
    text::FrenchLightStemmer french_{};
};

static_assert(Analyzer<StandardAnalyzer>);
static_assert(Analyzer<EnglishAnalyzer>);
static_assert(Analyzer<FrenchAnalyzer>);
static_assert(Analyzer<CjkAnalyzer>);
static_assert(Analyzer<MultilingualAnalyzer>);
static_assert(Analyzer<CustomAnalyzer<>>);

/// The names of the built-in analyzers, for the command line and saved indexes.
inline constexpr std::array<std::string_view, 5> analyzer_names{"multilingual", "standard", "english", "french", "cjk"};

/// Calls f(analyzer) with the built-in analyzer called `name` and returns its result;
/// throws InvalidArgument listing the valid names for any other name.
template <class F>
decltype(auto) with_analyzer(std::string_view name, F&& f) {
    if (name == MultilingualAnalyzer::name()) return std::forward<F>(f)(MultilingualAnalyzer{});
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
