// ragpp: the top-k algorithms of BM25Index (index/bm25.hpp), as a caller chooses and
// observes them. Each has its own header under index/detail/: bm25_exhaustive.hpp,
// bm25_accumulate.hpp, bm25_maxscore.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ragpp {

/// The top-k algorithms. All return exactly the same ids and scores.
enum class BM25Algorithm : std::uint8_t {
    exhaustive,  ///< document at a time over every matching document (the oracle)
    accumulate,  ///< term at a time into one accumulator per document
    maxscore,    ///< document at a time with MaxScore dynamic pruning
};

/// Which top-k algorithm `search_terms` uses.
enum class BM25Strategy : std::uint8_t {
    automatic,   ///< accumulate when the query's lists cover much of the collection,
                 ///< else MaxScore where valid, else exhaustive
    exhaustive,  ///< BM25Algorithm::exhaustive
    accumulate,  ///< BM25Algorithm::accumulate where valid, else exhaustive
    maxscore,    ///< BM25Algorithm::maxscore where valid, else exhaustive
};

[[nodiscard]] constexpr std::string_view to_string(BM25Algorithm a) noexcept {
    switch (a) {
        case BM25Algorithm::exhaustive: return "exhaustive";
        case BM25Algorithm::accumulate: return "accumulate";
        case BM25Algorithm::maxscore: return "maxscore";
    }
    return "?";
}

/// What a search did (for tests and benchmarks).
struct BM25SearchStats {
    std::size_t scored = 0;  ///< documents fully scored
    BM25Algorithm algorithm = BM25Algorithm::exhaustive;
};


}  // namespace ragpp
