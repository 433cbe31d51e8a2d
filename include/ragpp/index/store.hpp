// ragpp: DocumentStore, the documents of a Retriever by dense DocId and by key.
//
// Documents are held as shared_ptr<const Document>: a search result keeps its
// document alive and valid even if the document is removed afterwards, and copying a
// result never copies text. DocIds are never reused: a removed document leaves an
// empty slot, so an id that anything may still refer to never names another document.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>

namespace ragpp {

class DocumentStore {
public:
    /// The id the next `insert(Document)` will assign.
    [[nodiscard]] DocId next_id() const noexcept { return static_cast<DocId>(slots_.size()); }

    /// Stores `doc` under `id`. Throws DuplicateError when the id is taken or was
    /// used before, or when another document has the same key; nothing changes then.
    std::shared_ptr<const Document> insert(DocId id, Document doc) {
        return insert(id, std::make_shared<const Document>(std::move(doc)));
    }

    /// Stores the document `ptr` points to under `id` without copying it: the store shares
    /// it with its other owners (a nested Retriever shares its outer one's documents this
    /// way). Same errors as above, InvalidArgument for a null pointer.
    std::shared_ptr<const Document> insert(DocId id, std::shared_ptr<const Document> ptr) {
        if (!ptr) throw InvalidArgument("DocumentStore::insert: null document for DocId " + std::to_string(id));
        check_insert(id, *ptr);
        slots_.reserve(std::size_t{id} + 1);  // may throw before anything changed
        if (!ptr->id.empty()) by_key_.emplace(ptr->id, id);
        slots_.resize(std::size_t{id} + 1);
        slots_[id] = ptr;
        ++live_;
        return ptr;
    }

    /// Removes the document `id`; throws NotFoundError when it is not there.
    void erase(DocId id) {
        if (!contains(id)) throw NotFoundError("no document with DocId " + std::to_string(id));
        if (!slots_[id]->id.empty()) by_key_.erase(slots_[id]->id);
        slots_[id].reset();
        --live_;
    }

    /// Undoes the `insert` of `id` after a failure elsewhere: when `id` was the last
    /// id handed out it becomes free again, so a failed add leaves the store as it was.
    void undo_insert(DocId id) {
        erase(id);
        if (std::size_t{id} + 1 == slots_.size()) slots_.pop_back();
    }

    [[nodiscard]] bool contains(DocId id) const noexcept { return id < slots_.size() && slots_[id] != nullptr; }
    /// The document `id`, or null when there is none.
    [[nodiscard]] std::shared_ptr<const Document> get(DocId id) const noexcept {
        return id < slots_.size() ? slots_[id] : nullptr;
    }
    /// The DocId of key `key`, if present.
    [[nodiscard]] std::optional<DocId> find(std::string_view key) const {
        auto it = by_key_.find(std::string(key));
        if (it == by_key_.end()) return std::nullopt;
        return it->second;
    }
    /// Live documents.
    [[nodiscard]] std::size_t size() const noexcept { return live_; }
    /// One past the largest id ever assigned.
    [[nodiscard]] std::size_t capacity() const noexcept { return slots_.size(); }
    /// The set of live ids.
    [[nodiscard]] DocSet live() const {
        DocSet s(slots_.size());
        for (std::size_t i = 0; i < slots_.size(); ++i)
            if (slots_[i]) s.set(static_cast<DocId>(i));
        return s;
    }

private:
    void check_insert(DocId id, const Document& doc) const {
        if (id < slots_.size())
            throw DuplicateError("DocId " + std::to_string(id) + " is already used (ids are never reused)");
        if (!doc.id.empty() && by_key_.count(doc.id) != 0)
            throw DuplicateError("document id '" + doc.id + "' is already in the store");
    }

    std::vector<std::shared_ptr<const Document>> slots_;
    std::unordered_map<std::string, DocId> by_key_;
    std::size_t live_ = 0;
};

}  // namespace ragpp
