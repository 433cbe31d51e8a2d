// ragpp: Snowball stemmers (libstemmer, https://snowballstem.org) as a ragpp stemmer
// hook. Needs the optional target ragpp::snowball (Debian: libstemmer-dev).
//
//   ragpp::AnalyzerOptions o;
//   o.elision = ragpp::Elision::french;
//   o.stop_words = &ragpp::text::french_stop_words();
//   ragpp::CustomAnalyzer french_snowball("french-snowball", o, ragpp::ext::SnowballStemmer("french"));
//
// Every language libstemmer was built with is available (SnowballStemmer::languages()).
// libstemmer's stemmer objects are not thread-safe: each thread gets its own, created
// on first use, so a SnowballStemmer (and an analyzer holding it) can be called from
// many threads at once. Words are passed as UTF-8.
#pragma once

#include <libstemmer.h>

#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <ragpp/core/error.hpp>

namespace ragpp::ext {

class SnowballStemmer {
public:
    /// A stemmer for `language` ("english", "french", "porter", ... or an ISO 639 code
    /// libstemmer accepts, e.g. "fr"). Throws InvalidArgument listing the languages.
    explicit SnowballStemmer(std::string language) : language_(std::move(language)) { (void)stemmer(); }

    /// The stem of `word` (UTF-8).
    [[nodiscard]] std::string operator()(std::string_view word) const {
        sb_stemmer* s = stemmer();
        const sb_symbol* r =
            sb_stemmer_stem(s, reinterpret_cast<const sb_symbol*>(word.data()), static_cast<int>(word.size()));
        if (!r) throw std::bad_alloc();  // libstemmer returns NULL only when out of memory
        return std::string(reinterpret_cast<const char*>(r), static_cast<std::size_t>(sb_stemmer_length(s)));
    }

    [[nodiscard]] const std::string& language() const noexcept { return language_; }

    /// The algorithms libstemmer provides.
    [[nodiscard]] static std::vector<std::string> languages() {
        std::vector<std::string> out;
        for (const char** p = sb_stemmer_list(); *p; ++p) out.emplace_back(*p);
        return out;
    }

private:
    struct Deleter {
        void operator()(sb_stemmer* s) const noexcept { sb_stemmer_delete(s); }
    };

    /// This thread's stemmer for language_.
    sb_stemmer* stemmer() const {
        thread_local std::unordered_map<std::string, std::unique_ptr<sb_stemmer, Deleter>> cache;
        auto it = cache.find(language_);
        if (it != cache.end()) return it->second.get();
        sb_stemmer* s = sb_stemmer_new(language_.c_str(), "UTF_8");
        if (!s) {
            std::string valid;
            for (const auto& l : languages()) {
                if (!valid.empty()) valid += ", ";
                valid += l;
            }
            throw InvalidArgument("snowball: unknown language '" + language_ + "' (valid: " + valid + ")");
        }
        return cache.emplace(language_, std::unique_ptr<sb_stemmer, Deleter>(s)).first->second.get();
    }

    std::string language_;
};

}  // namespace ragpp::ext
