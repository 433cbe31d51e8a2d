// ragpp: DocumentStore, the documents of a Retriever by dense DocId and by key.
//
// Documents are held as shared_ptr<const Document>: a search result keeps its
// document alive and valid even if the document is removed afterwards, and copying a
// result never copies text. DocIds are never reused: a removed document leaves an
// empty slot, so an id that anything may still refer to never names another document.
//
// Saved and opened: save(path) writes a binary file (format "DOCSTORE", index/detail/
// store.hpp: an offsets table, a key table sorted by key, then the documents); open(path,
// OpenOptions) reads or maps it (OpenOptions::mmap) without decoding any document. The
// ids of the file then live "in the file": get() decodes the document from the file's
// bytes on each call (a new shared_ptr each time, equal contents), find() is a binary
// search of the file's key table (O(log n) key reads, nothing built at open, no memory
// per document but one bit). Documents inserted after the open are resident, as in a
// store never saved; erase() of a document in the file marks it removed (one bit).
// Opening costs one pass over the 8 bytes per id of the offsets table (checked to
// increase within the file) and, with OpenOptions::verify, one over every byte for the
// checksum. A file that changes underneath a mapped store: see detail/mapped_file.hpp.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>
#include <ragpp/detail/binary_file.hpp>
#include <ragpp/detail/mapped_file.hpp>
#include <ragpp/index/detail/store.hpp>

namespace ragpp {

class DocumentStore {
public:
    DocumentStore() = default;

    /// Opens a file written by save(): read whole or mapped (options.mmap), its checksum
    /// checked when options.verify; no document is decoded. Throws IoError when the file
    /// cannot be read, FormatError naming it when it is not a document store file, is of
    /// another version, truncated or corrupted (a corrupted document not caught without
    /// verify is a FormatError naming the file and the DocId when get() decodes it).
    [[nodiscard]] static DocumentStore open(const std::filesystem::path& path, OpenOptions options = {}) {
        // No MADV_RANDOM: an Engine reads every document once at open (sequentially), so
        // the kernel's read-ahead helps; queries then touch a few pages each.
        auto bytes = std::make_shared<const detail::FileBytes>(path, options.mmap);
        DocumentStore s;
        s.file_ = std::make_shared<const detail::store::File>(std::move(bytes), path.string(), options.verify);
        s.base_ = s.file_->capacity();
        s.in_file_ = s.file_->present();
        s.live_ = s.file_->live();
        return s;
    }

    /// Writes every document (those in an opened file included) to `path` (a temporary
    /// file renamed over it: a failed save leaves any old file intact). Throws IoError.
    void save(const std::filesystem::path& path) const {
        // Two passes, so the file streams through detail::BinaryWriter's buffer and the
        // documents are never encoded whole in memory: the offsets table (which comes
        // first) from each document's encoded size, then the documents one at a time.
        const std::size_t n = capacity();
        std::vector<std::uint64_t> offsets;
        offsets.reserve(n + 1);
        offsets.push_back(0);
        std::vector<DocId> keyed;
        for (std::size_t i = 0; i < n; ++i) {
            const auto id = static_cast<DocId>(i);
            std::size_t bytes = 0;
            if (id < base_) {
                if (in_file_.test(id)) bytes = file_->record_size(id);
                if (in_file_.test(id) && !file_->key(id).empty()) keyed.push_back(id);
            } else if (const auto& d = slots_[id - base_]) {
                bytes = detail::store::encoded_size(*d);
                if (!d->id.empty()) keyed.push_back(id);
            }
            offsets.push_back(offsets.back() + bytes);
        }
        auto key = [&](DocId id) { return id < base_ ? file_->key(id) : std::string_view(slots_[id - base_]->id); };
        std::sort(keyed.begin(), keyed.end(), [&](DocId a, DocId b) { return key(a) < key(b); });
        detail::BinaryWriter w(path);
        w.u64(n);
        w.u64(live_);
        w.array(offsets.data(), offsets.size());
        w.u64(keyed.size());
        w.array(keyed.data(), keyed.size());
        w.u64(offsets.back());
        for (std::size_t i = 0; i < n; ++i) {
            const auto d = get(static_cast<DocId>(i));  // a document of the file decoded: checked
            if (!d) continue;
            std::size_t bytes = 0;
            detail::store::encode_to(
                [&](const char* p, std::size_t k) {
                    w.bytes(p, k);
                    bytes += k;
                },
                *d);
            if (bytes != offsets[i + 1] - offsets[i])
                throw FormatError(file_->name() + ": document " + std::to_string(i) + " re-encodes to " +
                                  std::to_string(bytes) + " bytes, not the file's " +
                                  std::to_string(offsets[i + 1] - offsets[i]));
        }
        w.save(path, detail::store::format);
    }

    /// The id the next `insert(Document)` will assign.
    [[nodiscard]] DocId next_id() const noexcept { return static_cast<DocId>(capacity()); }

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
        const std::size_t slot = std::size_t{id} - base_;
        // May throw before anything changed. Geometric growth: an exact reserve per insert
        // made n inserts quadratic (200k inserts: 346 s before, 0.76 s now, on the loaded machine).
        if (slot + 1 > slots_.capacity()) slots_.reserve(std::max(slot + 1, slots_.capacity() + slots_.capacity() / 2));
        if (!ptr->id.empty()) by_key_.emplace(ptr->id, id);
        slots_.resize(slot + 1);
        slots_[slot] = ptr;
        ++live_;
        return ptr;
    }

    /// Removes the document `id`; throws NotFoundError when it is not there.
    void erase(DocId id) {
        if (!contains(id)) throw NotFoundError("no document with DocId " + std::to_string(id));
        if (id < base_) {
            in_file_.reset(id);  // its key stays in the file's table; find() skips it
        } else {
            auto& slot = slots_[id - base_];
            if (!slot->id.empty()) by_key_.erase(slot->id);
            slot.reset();
        }
        --live_;
    }

    /// Undoes the `insert` of `id` after a failure elsewhere: when `id` was the last
    /// id handed out it becomes free again, so a failed add leaves the store as it was.
    void undo_insert(DocId id) {
        erase(id);
        if (id >= base_ && std::size_t{id} + 1 == capacity()) slots_.pop_back();
    }

    [[nodiscard]] bool contains(DocId id) const noexcept {
        return id < base_ ? in_file_.test(id) : id - base_ < slots_.size() && slots_[id - base_] != nullptr;
    }
    /// The document `id`, or null when there is none. A document in an opened file is
    /// decoded (allocates; FormatError naming the file when its bytes are corrupted).
    [[nodiscard]] std::shared_ptr<const Document> get(DocId id) const {
        if (id < base_) return in_file_.test(id) ? std::make_shared<const Document>(file_->decode(id)) : nullptr;
        return id - base_ < slots_.size() ? slots_[id - base_] : nullptr;
    }
    /// The DocId of key `key`, if present.
    [[nodiscard]] std::optional<DocId> find(std::string_view key) const {
        if (!by_key_.empty()) {
            auto it = by_key_.find(std::string(key));
            if (it != by_key_.end()) return it->second;
        }
        if (file_)
            if (auto id = file_->find(key); id && in_file_.test(*id)) return id;
        return std::nullopt;
    }
    /// Live documents.
    [[nodiscard]] std::size_t size() const noexcept { return live_; }
    /// One past the largest id ever assigned.
    [[nodiscard]] std::size_t capacity() const noexcept { return base_ + slots_.size(); }
    /// The set of live ids.
    [[nodiscard]] DocSet live() const {
        DocSet s = in_file_;
        s.resize(capacity());
        for (std::size_t i = 0; i < slots_.size(); ++i)
            if (slots_[i]) s.set(static_cast<DocId>(base_ + i));
        return s;
    }
    /// Whether documents are read from an opened file (and that file is mapped).
    [[nodiscard]] bool from_file() const noexcept { return file_ != nullptr; }

private:
    void check_insert(DocId id, const Document& doc) const {
        if (id < capacity())
            throw DuplicateError("DocId " + std::to_string(id) + " is already used (ids are never reused)");
        if (!doc.id.empty() && find(doc.id))
            throw DuplicateError("document id '" + doc.id + "' is already in the store");
    }

    std::shared_ptr<const detail::store::File> file_;  // null: every document is resident
    std::size_t base_ = 0;                             // ids below are the file's
    DocSet in_file_;                                   // the file's ids not erased
    std::vector<std::shared_ptr<const Document>> slots_;  // ids base_, base_ + 1, ...
    std::unordered_map<std::string, DocId> by_key_;       // keys of the resident documents
    std::size_t live_ = 0;
};

}  // namespace ragpp
