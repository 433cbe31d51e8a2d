// ragpp detail: address space set aside while a batch is added, released before its undo.
#pragma once

#include <cstddef>
#include <memory>
#include <new>

namespace ragpp::detail {

/// When memory runs out midway through a batch, taking the batch back must not need
/// memory the batch used up: a batch holds this reserve while it adds and releases it
/// before its undo runs. Address space only (allocated, never written: no page is
/// touched, so it costs nothing in RSS; it counts against `ulimit -v`). Used by
/// Retriever::add_documents and Collection's inserts (whose metadata step comes after
/// the retriever's batch has released its own).
struct UndoReserve {
    /// 16 MiB and 96 bytes a document: what a batch undo of BM25, vectors and metadata
    /// allocates (sorted ids, rewritten lists), measured by cli.hostile.out_of_memory.
    explicit UndoReserve(std::size_t documents) noexcept
        : p(new (std::nothrow) char[(std::size_t{16} << 20) + 96 * documents]) {}
    void release() noexcept { p.reset(); }
    std::unique_ptr<char[]> p;
};

}  // namespace ragpp::detail
