// ragpp: core types shared by every index, the Retriever and the evaluation.
#pragma once

#include <cmath>
#include <compare>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <ragpp/core/bitset.hpp>
#include <ragpp/core/error.hpp>

namespace ragpp {

// DocId is declared in bitset.hpp: a dense std::uint32_t assigned in insertion order
// by the document store. All indexes of one Retriever share this id space.

/// How a saved index file is opened (BM25Index::load, VectorIndex::load, Engine::open).
struct OpenOptions {
    /// Map the file read-only (POSIX mmap) instead of reading it whole: opening costs a
    /// few page-table entries and memory follows what queries touch. ragpp replaces its
    /// files by rename, never in place; a file changed in place while mapped (another
    /// program truncating or rewriting it) is undefined behaviour (SIGBUS on a read past
    /// its new end). docs/persistence.md.
    bool mmap = false;
    /// Check the checksum of the whole payload on open, which reads every byte. The
    /// header, every size and every bound are checked either way.
    bool verify = true;
};

/// A calendar date, stored as days since 1970-01-01 (proleptic Gregorian).
struct Date {
    std::int32_t days = 0;

    /// Parses "YYYY-MM-DD"; throws ParseError naming the text otherwise.
    static Date parse(std::string_view text) {
        auto bad = [&] { return ParseError("date '" + std::string(text) + "' is not YYYY-MM-DD"); };
        if (text.size() != 10 || text[4] != '-' || text[7] != '-') throw bad();
        auto num = [&](std::size_t pos, std::size_t len) {
            int v = 0;
            for (std::size_t i = pos; i < pos + len; ++i) {
                if (text[i] < '0' || text[i] > '9') throw bad();
                v = v * 10 + (text[i] - '0');
            }
            return v;
        };
        const int y = num(0, 4), m = num(5, 2), d = num(8, 2);
        if (m < 1 || m > 12 || d < 1 || d > days_in_month(y, m)) throw bad();
        return Date{days_from_civil(y, m, d)};
    }
    [[nodiscard]] std::string to_string() const {
        // The inverse of days_from_civil, in 400-year eras of 146,097 days (0000-03-01 based).
        const std::int64_t z = std::int64_t{days} + 719468;
        const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
        const auto doe = static_cast<unsigned>(z - era * 146097);                    // [0, 146096]
        const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;  // [0, 399]
        const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);                // [0, 365], from March 1
        const unsigned mp = (5 * doy + 2) / 153;                                     // [0, 11], March = 0
        const unsigned d = doy - (153 * mp + 2) / 5 + 1;
        const unsigned m = mp < 10 ? mp + 3 : mp - 9;
        const auto y = static_cast<int>(static_cast<std::int64_t>(yoe) + era * 400 + (m <= 2 ? 1 : 0));
        char buf[40];  // room for any int (GCC checks snprintf sizes)
        std::snprintf(buf, sizeof buf, "%04d-%02u-%02u", y, m, d);
        return buf;
    }
    /// Days of month `m` (1-12) of year `y` in the proleptic Gregorian calendar.
    [[nodiscard]] static constexpr int days_in_month(int y, int m) noexcept {
        constexpr int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
        const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        return m == 2 && leap ? 29 : days[m - 1];
    }
    /// Days from 1970-01-01 to the valid date y-m-d (negative before), counted in 400-year
    /// eras whose years start on March 1 (so that the leap day ends a year). No <chrono>:
    /// this header is included everywhere, and <chrono> would be half of what it costs.
    [[nodiscard]] static constexpr std::int32_t days_from_civil(int y, int m, int d) noexcept {
        const int yy = m <= 2 ? y - 1 : y;
        const int era = (yy >= 0 ? yy : yy - 399) / 400;
        const auto yoe = static_cast<unsigned>(yy - era * 400);                                  // [0, 399]
        const unsigned doy = (153 * static_cast<unsigned>(m > 2 ? m - 3 : m + 9) + 2) / 5 +
                             static_cast<unsigned>(d) - 1;                                      // [0, 365]
        const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;                              // [0, 146096]
        return static_cast<std::int32_t>(era * 146097 + static_cast<int>(doe) - 719468);
    }
    friend auto operator<=>(const Date&, const Date&) = default;
};

/// One metadata value: a string, a number, a date or a list of strings (access groups,
/// tags). Numbers are doubles (exact for integers up to 2^53).
using MetaValue = std::variant<std::string, double, Date, std::vector<std::string>>;

/// A document's metadata, by field name. Ordered, so output is deterministic.
using Metadata = std::map<std::string, MetaValue, std::less<>>;

/// What is indexed. `id` is the caller's key (a BEIR id, or "path:line" for a chunk);
/// the store maps it to a dense DocId.
struct Document {
    std::string id;
    std::string text;
    Metadata metadata;
};

/// What an index returns: best first, ties broken by smaller DocId.
struct Hit {
    DocId id = 0;
    float score = 0.0F;
    friend bool operator==(const Hit&, const Hit&) = default;
};

/// The order of every result list: higher score first, then smaller id.
/// NaN scores never occur in ragpp results (indexes reject them at the source).
[[nodiscard]] constexpr bool better_hit(const Hit& a, const Hit& b) noexcept {
    return a.score > b.score || (a.score == b.score && a.id < b.id);
}

/// Per-call options every index understands: which documents a query may see. Each
/// index takes its own options type, derived from this one and named by its member
/// `search_options` (BM25SearchOptions and VectorSearchOptions in index/options.hpp, a
/// Retriever's RetrieverSearchOptions, with the fusion knobs and one options object per
/// index), so that each layer is given its own knobs, typed, at the call site. Every
/// index also takes a plain SearchOptions: a filter alone, its knobs at their defaults.
struct SearchOptions {
    /// The documents this query may see; null means every document. Indexes test it
    /// inside their scoring loop: a document outside it is never scored or returned.
    std::shared_ptr<const DocSet> allowed;

    [[nodiscard]] bool allows(DocId id) const noexcept { return !allowed || allowed->test(id); }

    /// Convenience: options restricted to `set`.
    [[nodiscard]] static SearchOptions only(DocSet set) {
        SearchOptions o;
        o.allowed = std::make_shared<const DocSet>(std::move(set));
        return o;
    }
};

/// Whether a text is embedded as a query or as a passage (E5-style models need
/// different prefixes for the two).
enum class Role { query, passage };

}  // namespace ragpp
