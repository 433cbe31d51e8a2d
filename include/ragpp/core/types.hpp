// ragpp: core types shared by every index, the Retriever and the evaluation.
#pragma once

#include <array>
#include <atomic>
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

/// BM25F field weights of a chunk's metadata fields (index/bm25.hpp): how much one
/// occurrence of a term in the document title, the heading path or the source path
/// counts, relative to one occurrence in the body (weight 1). 0 turns a field off.
struct FieldWeights {
    double title = 0.0;
    double headings = 0.0;
    double path = 0.0;
    friend bool operator==(const FieldWeights&, const FieldWeights&) = default;
};

/// The corpus statistics of the documents one reader may read: what BM25 scores with
/// (the number of documents, their average lengths, each term's document frequency)
/// when SearchOptions::statistics is set, so that documents a reader cannot read change
/// nothing it sees. Made by BM25Index::reader_statistics(documents); a term's document
/// frequency among `documents` is counted the first time a query asks for it (a pass
/// over its postings) and kept in `term_counts`, so later queries read it in O(1).
/// Belongs to one index state: make new statistics after the index changes.
struct ReaderStatistics {
    /// The documents whose statistics count (live ones among them).
    std::shared_ptr<const DocSet> documents;
    double count = 0;
    double total_length = 0;
    /// Per BM25F field (title, headings, path): documents with the field, their total length.
    std::array<double, 3> field_documents{}, field_total{};
    /// rank_bm25's mean idf over the readers' vocabulary (its negative-idf floor).
    double okapi_mean_idf = 0;

    /// Each term's body document frequency among `documents` plus one, by the index's
    /// term id; 0 while not yet counted. Filled by the index on first use, from any
    /// thread (relaxed atomics: every writer stores the same value). 4 bytes per term of
    /// the index's vocabulary.
    std::shared_ptr<std::atomic<std::uint32_t>[]> term_counts;
    std::size_t term_count_slots = 0;
    /// The cached document frequency of term `id`, or nullopt when not counted yet.
    [[nodiscard]] std::optional<std::uint32_t> cached_df(std::size_t id) const noexcept {
        if (id >= term_count_slots) return std::nullopt;
        const auto v = term_counts[id].load(std::memory_order_relaxed);
        return v == 0 ? std::nullopt : std::optional<std::uint32_t>(v - 1);
    }
    void cache_df(std::size_t id, std::size_t df) const noexcept {
        if (id < term_count_slots && df < 0xFFFFFFFFu)
            term_counts[id].store(static_cast<std::uint32_t>(df + 1), std::memory_order_relaxed);
    }
};

/// Per-call options. Every field has a "not set" state meaning "use the index's own
/// default". A Retriever consumes the fusion knobs (candidates, rrf_k, weights) and
/// forwards to index i either `per_index[i]` or a copy without the fusion knobs
/// (retrieve/retriever.hpp); an index ignores the knobs it has no use for.
struct SearchOptions {
    /// The documents this query may see; null means every document. Indexes test it
    /// inside their scoring loop: a document outside it is never scored or returned.
    std::shared_ptr<const DocSet> allowed;

    // --- Retriever knobs -------------------------------------------------------
    /// How many candidates the Retriever asks of each index before fusing.
    std::optional<std::size_t> candidates;
    /// The reciprocal rank fusion constant k.
    std::optional<double> rrf_k;
    /// One fusion weight per index; empty means the Retriever's weights.
    std::vector<double> weights;
    /// The options of each index of a Retriever (size 0 or the number of indexes): how
    /// nested retrievers get their own fusion knobs. Each one's allowed set is
    /// intersected with this one's; empty means "forward these options, fusion knobs
    /// removed".
    std::vector<SearchOptions> per_index;

    // --- BM25 knobs, chosen per query without re-indexing ----------------------
    std::optional<double> k1;
    std::optional<double> b;
    std::optional<double> delta;
    /// BM25F field weights (indexes holding chunks with title, headings or path).
    std::optional<FieldWeights> field_weights;
    /// The statistics BM25 scores with; null: the whole index's (see ReaderStatistics).
    std::shared_ptr<const ReaderStatistics> statistics;

    // --- Vector knobs ----------------------------------------------------------
    /// HNSW's candidate list size for this query (VectorIndex<E, Hnsw> uses max(ef, k));
    /// unset: the index's HnswOptions::ef_search. Exact indexes (Flat) ignore it. A
    /// Retriever forwards it to each index, like the BM25 knobs (per_index: one each).
    std::optional<std::size_t> ef_search;

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
