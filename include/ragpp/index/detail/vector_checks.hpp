// ragpp detail: the checks of a batch of precomputed vectors shared by VectorIndex's
// backends (Flat and Hnsw): one id per row, the index's dimension, no id already there
// or given twice. Nothing changes when they throw.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>

#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>

namespace ragpp::detail {

/// Throws DimensionError (naming `where`) when `rows` != ids.size() or `cols` != `dim`,
/// and `duplicate(id)` (a DuplicateError) for an id `contains` or given twice.
template <class Contains, class Duplicate>
void check_vector_batch(std::string_view where, std::span<const DocId> ids, std::size_t rows, std::size_t cols,
                        std::size_t dim, const Contains& contains, const Duplicate& duplicate) {
    if (rows != ids.size())
        throw DimensionError(std::string(where) + ": " + std::to_string(ids.size()) + " ids for " + std::to_string(rows) +
                             " vectors");
    if (cols != dim)
        throw DimensionError(std::string(where) + ": vectors have " + std::to_string(cols) + " dimensions, the index has " +
                             std::to_string(dim));
    std::unordered_set<DocId> seen;
    for (DocId id : ids)
        if (contains(id) || !seen.insert(id).second) throw duplicate(id);
}

}  // namespace ragpp::detail
