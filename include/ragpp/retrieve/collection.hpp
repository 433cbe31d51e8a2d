// ragpp: Collection<R>, the document-level layer over a Retriever.
//
// A source document (id = its path, text, metadata) is chunked by its format
// (chunk/chunker.hpp); each chunk becomes one Document of the Retriever (id
// "path:line[#part]", the indexed text with its context line, the metadata of
// Chunk::to_document) and one entry of a MetadataIndex. The Collection keeps them in
// step:
//  - remove(path) removes every chunk of the source from the store, from every index
//    and from the metadata index: nothing stale is left to find;
//  - update(source) replaces the source's chunks by the new text's;
//  - DocIds are never reused (DocumentStore), so an id held by an old result never
//    names another chunk.
// search(query, k, filter, principal) compiles the access policy and the filter to
// an allowed set before searching: the indexes never score a chunk outside it.
//
// Metadata: a chunk carries the source's front matter, then the caller's metadata
// over it (the caller's fields win: pass "groups" with the source to make sure a
// file cannot grant itself access through its own front matter).
//
// Saved and opened in place: save_parts(places, metadata) writes the sources with their
// chunks, each chunk's place and the MetadataIndex; load() starts a Collection from them
// over a retriever opened from the same save without reading any chunk: the places are
// arrays used in place from the (mapped) file, the metadata index is frozen
// (filter/metadata_index.hpp). The first write (add, update, remove, adopt) builds the
// in-memory structures from those arrays (O(chunks + postings), still no chunk read).
//
// Threading: as the Retriever (const members concurrently; writes exclusive).
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include <ragpp/chunk/chunker.hpp>
#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>
#include <ragpp/detail/undo_reserve.hpp>
#include <ragpp/filter/access.hpp>
#include <ragpp/filter/filter.hpp>
#include <ragpp/filter/metadata_index.hpp>
#include <ragpp/retrieve/detail/frozen_places.hpp>
#include <ragpp/retrieve/retriever.hpp>

namespace ragpp {

/// What Collection needs of its retriever (Retriever<...> models it).
template <class R>
concept DocumentRetriever = requires(R& r, const R& cr, Document d, DocId id, std::string_view q, std::size_t k,
                                     const SearchOptions& o) {
    { r.add_document(d) } -> std::same_as<DocId>;
    r.remove_document(id);
    { cr.document(id) } -> std::convertible_to<std::shared_ptr<const Document>>;
    cr.search(q, k, o);
};

struct CollectionOptions {
    ChunkOptions chunking;
    /// Deny by default: chunks without a "groups" field are visible to Principal::system() only.
    AccessPolicy access;
};

/// Where a chunk sits: its source, its section id (the chunk's metadata "section" when it
/// is a string, else its id), its 0-based position in the source.
struct ChunkPlace {
    std::string source;
    std::string section;
    std::size_t position = 0;
};

template <DocumentRetriever R>
class Collection {
public:
    Collection()
        requires std::default_initializable<R>
        : Collection(R{}) {}
    explicit Collection(R retriever, CollectionOptions options = CollectionOptions())
        : retriever_(std::move(retriever)), options_(std::move(options)) {
        options_.chunking.validate("Collection");
        options_.chunking.access_field = options_.access.field();  // a front-matter slip locks the field read
    }

    /// Chunks `source` and adds its chunks; returns their DocIds in document order.
    /// Throws InvalidArgument for an empty source id, DuplicateError when a source
    /// with this id is present (see update),
    /// ParseError on malformed input, and whatever an index throws; in every case the
    /// collection is unchanged (DocIds handed out meanwhile stay unused).
    std::vector<DocId> add(const Document& source) {
        check_id(source, "add");
        if (sources_.count(source.id) != 0)
            throw DuplicateError("Collection::add: source '" + source.id + "' is already present (use update)");
        return insert(source.id, chunk_document(source, options_.chunking));
    }

    /// Adds already-made chunk documents, in document order, as the source `source_id` (chunks
    /// with extra metadata, or a corpus whose documents are not chunked). A chunk's section is
    /// its metadata "section" when it is a string, else its id. Same guarantees as add().
    std::vector<DocId> add_chunks(const std::string& source_id, std::vector<Document> chunks) {
        check_id(Document{source_id, {}, {}}, "add_chunks");
        if (sources_.count(source_id) != 0)
            throw DuplicateError("Collection::add_chunks: source '" + source_id + "' is already present");
        std::vector<std::string> sections;
        for (const auto& d : chunks) sections.push_back(section_field(d));
        return insert_documents(source_id, std::move(chunks), sections);
    }

    /// Registers chunks the retriever already holds (one reassembled from disk) as the source
    /// `source_id`, in document order. Throws DuplicateError when the source or one of the
    /// chunks is already registered, NotFoundError when the retriever lacks an id; nothing
    /// changes then.
    void adopt(const std::string& source_id, const std::vector<DocId>& ids) {
        check_id(Document{source_id, {}, {}}, "adopt");
        thaw();
        if (sources_.count(source_id) != 0)
            throw DuplicateError("Collection::adopt: source '" + source_id + "' is already present");
        // One pass, each chunk read once and not kept (a source may have a million chunks,
        // read from a mapped store); on a failure the chunks registered so far are undone.
        std::size_t done = 0;
        bool placed = false;
        std::string previous;  // the section of the chunk before
        try {
            for (; done < ids.size(); ++done) {
                const DocId id = ids[done];
                placed = false;
                if (places_.count(id) != 0)
                    throw DuplicateError("Collection::adopt: chunk " + std::to_string(id) + " of '" + source_id +
                                         "' is already registered");
                const auto d = retriever_.document(id);
                if (!d) throw NotFoundError("Collection::adopt: the retriever holds no chunk " + std::to_string(id));
                MetadataIndex::validate(d->metadata, "chunk '" + d->id + "'");
                std::string section = section_field(*d);
                const auto start = done > 0 && section == previous ? places_.at(ids[done - 1]).section_start
                                                                    : static_cast<std::uint32_t>(done);
                places_.emplace(id, Slot{source_id, static_cast<std::uint32_t>(done), start});
                previous = std::move(section);
                placed = true;
                metadata_.add_document(id, d->metadata);
            }
        } catch (...) {
            if (placed) places_.erase(ids[done]);
            for (std::size_t i = 0; i < done; ++i) {
                metadata_.remove_document(ids[i]);
                places_.erase(ids[i]);
            }
            throw;
        }
        sources_.emplace(source_id, ids);
    }

    /// Removes every chunk of `source_id`. Throws NotFoundError (nothing changes) when absent.
    void remove(std::string_view source_id) {
        thaw();
        auto it = sources_.find(source_id);
        if (it == sources_.end())
            throw NotFoundError("Collection::remove: no source '" + std::string(source_id) + "'");
        // At once (each posting list rewritten once): a source may have 400,000 sections.
        const auto& ids = it->second;
        retriever_.remove_documents(ids);
        std::vector<DocId> with_metadata;
        for (DocId id : ids)
            if (metadata_.contains(id)) with_metadata.push_back(id);
        metadata_.remove_documents(with_metadata);
        for (DocId id : ids) places_.erase(id);
        sources_.erase(it);
    }

    /// Adds `source`, or replaces the chunks of the source with the same id. Returns the
    /// new chunks' DocIds. On failure the old chunks stay searchable (re-added under
    /// new DocIds if they had already been removed).
    std::vector<DocId> update(const Document& source) {
        check_id(source, "update");
        auto chunks = chunk_document(source, options_.chunking);  // may throw: nothing changed yet
        thaw();
        auto it = sources_.find(source.id);
        if (it == sources_.end()) return insert(source.id, std::move(chunks));
        std::vector<std::shared_ptr<const Document>> old;
        for (DocId id : it->second) old.push_back(retriever_.document(id));
        remove(source.id);
        try {
            return insert(source.id, std::move(chunks));
        } catch (...) {
            restore(source.id, old);
            throw;
        }
    }

    /// add_chunks(), or the replacement of the chunks of the source `source_id`, as update().
    std::vector<DocId> update_chunks(const std::string& source_id, std::vector<Document> chunks) {
        thaw();
        auto it = sources_.find(source_id);
        if (it == sources_.end()) return add_chunks(source_id, std::move(chunks));
        std::vector<std::shared_ptr<const Document>> old;
        for (DocId id : it->second) old.push_back(retriever_.document(id));
        remove(source_id);
        try {
            return add_chunks(source_id, std::move(chunks));
        } catch (...) {
            restore(source_id, old);
            throw;
        }
    }

    [[nodiscard]] bool contains(std::string_view source_id) const { return sources_.find(source_id) != sources_.end(); }
    /// The chunks of `source_id` in document order (empty when absent).
    [[nodiscard]] std::vector<DocId> chunks_of(std::string_view source_id) const {
        auto it = sources_.find(source_id);
        return it == sources_.end() ? std::vector<DocId>{} : it->second;
    }
    /// Where chunk `id` sits, or nothing when it is not a live chunk of this collection.
    /// O(1) (O(log sources) when frozen) and one read of the chunk for its section.
    [[nodiscard]] std::optional<ChunkPlace> place(DocId id) const {
        const auto s = slot(id);
        if (!s) return std::nullopt;
        const auto d = retriever_.document(id);
        return ChunkPlace{*s->source, d ? section_field(*d) : std::string{}, s->position};
    }
    /// The source of chunk `id` (a key of sources()), or null when it is not a live chunk.
    [[nodiscard]] const std::string* source_of(DocId id) const {
        const auto s = slot(id);
        return s ? s->source : nullptr;
    }
    [[nodiscard]] std::size_t source_count() const noexcept { return sources_.size(); }
    /// Every source id with its chunks in document order, sorted by source id.
    [[nodiscard]] const std::map<std::string, std::vector<DocId>, std::less<>>& sources() const noexcept { return sources_; }
    [[nodiscard]] std::size_t chunk_count() const noexcept { return frozen_ ? frozen_->chunks() : places_.size(); }
    /// True while the places are used in place from a file (load(), before any write).
    [[nodiscard]] bool frozen() const noexcept { return frozen_ != nullptr; }

    /// The chunks `principal` may read among those passing `filter`.
    [[nodiscard]] DocSet allowed(const Filter& filter, const Principal& principal) const {
        return metadata_.compile(options_.access.filter_for(principal) && filter);
    }

    /// The k best chunks for `query` that `principal` may read and `filter` accepts.
    /// `options` passes per-query knobs (the retriever's own options type); its own
    /// allowed set, if any, is intersected.
    [[nodiscard]] auto search(std::string_view query, std::size_t k, const Filter& filter, const Principal& principal,
                              search_options_t<R> options = {}) const {
        DocSet set = allowed(filter, principal);
        if (options.allowed) set &= *options.allowed;
        options.allowed = std::make_shared<const DocSet>(std::move(set));
        return retriever_.search(query, k, options);
    }

    /// The chunks of the same source at positions [p - radius, p + radius] around chunk
    /// `id` (itself included), in document order. Throws NotFoundError for an unknown chunk.
    [[nodiscard]] std::vector<DocId> neighbours(DocId id, std::size_t radius = 1) const {
        const SlotRef p = checked_slot(id, "neighbours");
        const auto w = window(*p.ids, p.position, radius);
        return std::vector<DocId>(w.begin(), w.end());
    }

    /// The same for a chunk given as its document (the evidence builder's NeighbourFn,
    /// answer/evidence.hpp's collection_neighbours): the stored chunks, in document order.
    /// The chunk is found through its metadata "source" and "position" (as
    /// Chunk::to_document writes them), checked against its key, else by its key among its
    /// source's chunks; a chunk of no source of this collection has no neighbours.
    /// O(log sources + radius), nothing rebuilt per call.
    [[nodiscard]] std::vector<std::shared_ptr<const Document>> neighbours(const Document& chunk,
                                                                          std::size_t radius) const {
        std::vector<std::shared_ptr<const Document>> out;
        const auto src = chunk.metadata.find("source");
        const auto* source = src == chunk.metadata.end() ? nullptr : std::get_if<std::string>(&src->second);
        const auto it = source ? sources_.find(*source) : sources_.end();
        if (it == sources_.end()) return out;
        const auto& all = it->second;
        auto is_chunk = [&](std::size_t i) {
            const auto d = retriever_.document(all[i]);
            return d && d->id == chunk.id;
        };
        std::size_t position = all.size();
        const auto pos = chunk.metadata.find("position");
        if (const auto* p = pos == chunk.metadata.end() ? nullptr : std::get_if<double>(&pos->second);
            p && *p >= 0 && *p < static_cast<double>(all.size()) && is_chunk(static_cast<std::size_t>(*p)))
            position = static_cast<std::size_t>(*p);
        for (std::size_t i = 0; i < all.size() && position == all.size(); ++i)
            if (is_chunk(i)) position = i;
        if (position == all.size()) return out;
        for (DocId id : window(all, position, radius))
            if (auto d = retriever_.document(id)) out.push_back(std::move(d));
        return out;
    }

    /// The chunks of chunk `id`'s section (the parts of one heading's text), in document
    /// order; when there are more than `cap`, the `cap` nearest to `id` (a window
    /// around it). Throws NotFoundError for an unknown chunk, InvalidArgument for cap 0.
    [[nodiscard]] std::vector<DocId> section_of(DocId id, std::size_t cap = 8) const {
        if (cap == 0) throw InvalidArgument("Collection::section_of: cap is 0");
        const SlotRef p = checked_slot(id, "section_of");
        const auto& all = *p.ids;
        std::size_t b = p.position, e = p.position + 1;  // the section is contiguous
        auto same = [&](std::size_t i) {
            const auto s = slot(all[i]);
            return s && s->section_start == p.section_start;
        };
        while (b > 0 && same(b - 1)) --b;
        while (e < all.size() && same(e)) ++e;
        if (e - b > cap) {
            const std::size_t half = (cap - 1) / 2;
            b = std::max(b, std::min(p.position - std::min(p.position, half), e - cap));
            e = b + cap;
        }
        return std::vector<DocId>(all.begin() + static_cast<std::ptrdiff_t>(b), all.begin() + static_cast<std::ptrdiff_t>(e));
    }

    /// Writes the sources with their chunks and every chunk's place to `places`
    /// (detail/frozen_places.hpp) and the metadata index to `metadata` (MetadataIndex::save),
    /// each atomically. A frozen collection writes the bytes it was read from. Throws IoError.
    void save_parts(const std::filesystem::path& places, const std::filesystem::path& metadata) const {
        metadata_.save(metadata);
        detail::BinaryWriter w(places);  // streamed: the file is never whole in memory
        if (frozen_) {
            w.bytes(frozen_->payload().data(), frozen_->payload().size());
            w.save(places, detail::places_format);
            return;
        }
        std::size_t at = detail::binary_header_size;
        auto put = [&](const void* p, std::size_t n) {
            w.bytes(p, n);
            at += n;
        };
        auto u64 = [&](std::uint64_t v) { put(&v, 8); };
        u64(sources_.size());
        std::uint64_t universe = 0;
        for (const auto& [source, ids] : sources_) {
            const auto n = static_cast<std::uint32_t>(source.size());
            put(&n, 4);
            put(source.data(), source.size());
            u64(ids.size());
            put(ids.data(), ids.size() * sizeof(DocId));
            for (DocId id : ids) universe = std::max<std::uint64_t>(universe, std::uint64_t{id} + 1);
        }
        u64(universe);
        std::vector<std::uint32_t> source_of(universe, detail::no_source), position(universe, 0), start(universe, 0);
        std::uint32_t rank = 0;
        for (const auto& [source, ids] : sources_) {
            for (std::size_t i = 0; i < ids.size(); ++i) {
                source_of[ids[i]] = rank;
                position[ids[i]] = static_cast<std::uint32_t>(i);
                start[ids[i]] = places_.at(ids[i]).section_start;
            }
            ++rank;
        }
        for (const auto* a : {&source_of, &position, &start}) {
            detail::write_padding(w, at, 64);
            put(a->data(), a->size() * 4);
        }
        w.save(places, detail::places_format);
    }

    /// A collection over `retriever` (opened from the same save) from the parts save_parts()
    /// wrote, frozen: nothing is read per chunk (see the header comment). Throws IoError,
    /// FormatError naming the file that is damaged or does not match the other; with
    /// open.verify every place and posting is checked, and that the metadata index holds
    /// exactly the placed chunks.
    [[nodiscard]] static Collection load(R retriever, CollectionOptions options, const std::filesystem::path& places,
                                         const std::filesystem::path& metadata, OpenOptions open = {}) {
        Collection c(std::move(retriever), std::move(options));
        c.frozen_ = std::make_shared<const detail::FrozenPlaces>(places, open.mmap, open.verify, c.sources_);
        c.metadata_ = MetadataIndex::load(metadata, open, static_cast<std::size_t>(c.frozen_->universe()));
        const auto mismatch = [&] {
            return FormatError("'" + metadata.string() + "' indexes " + std::to_string(c.metadata_.size()) + " documents, '" +
                               places.string() + "' places " + std::to_string(c.frozen_->chunks()) + " chunks (or others)");
        };
        if (c.metadata_.size() != c.frozen_->chunks()) throw mismatch();
        if (open.verify)
            for (const auto& [source, ids] : c.sources_)
                for (DocId id : ids)
                    if (!c.metadata_.contains(id)) throw mismatch();
        return c;
    }

    [[nodiscard]] const R& retriever() const noexcept { return retriever_; }
    [[nodiscard]] const MetadataIndex& metadata() const noexcept { return metadata_; }
    [[nodiscard]] const CollectionOptions& options() const noexcept { return options_; }

private:
    /// The one neighbour window: positions [position - radius, position + radius] of a
    /// source's chunks, clipped to the source.
    static std::span<const DocId> window(const std::vector<DocId>& all, std::size_t position, std::size_t radius) {
        const std::size_t b = position > radius ? position - radius : 0;
        const std::size_t e = std::min(all.size(), position + radius + 1);
        return std::span<const DocId>(all).subspan(b, e - b);
    }

    static void check_id(const Document& source, const char* where) {
        if (source.id.empty())
            throw InvalidArgument(std::string("Collection::") + where + ": the source has no id (its path)");
    }
    /// Where a chunk sits, as kept: its source (a key of sources_) and chunks, its position,
    /// the position of the first chunk of its section (a section is contiguous).
    struct SlotRef {
        const std::string* source;
        const std::vector<DocId>* ids;
        std::size_t position;
        std::uint32_t section_start;
    };
    std::optional<SlotRef> slot(DocId id) const {
        if (frozen_) {
            const auto p = frozen_->at(id);
            if (!p) return std::nullopt;
            const auto it = sources_.find(frozen_->source_name(p->source));
            if (it == sources_.end() || p->position >= it->second.size() || it->second[p->position] != id) return std::nullopt;
            return SlotRef{&it->first, &it->second, p->position, p->section_start};
        }
        const auto it = places_.find(id);
        if (it == places_.end()) return std::nullopt;
        const auto src = sources_.find(it->second.source);
        return SlotRef{&src->first, &src->second, it->second.position, it->second.section_start};
    }
    SlotRef checked_slot(DocId id, const char* where) const {
        const auto s = slot(id);
        if (!s) throw NotFoundError(std::string("Collection::") + where + ": no chunk with DocId " + std::to_string(id));
        return *s;
    }

    static std::string section_field(const Document& d) {
        const auto it = d.metadata.find("section");
        const auto* s = it == d.metadata.end() ? nullptr : std::get_if<std::string>(&it->second);
        return s ? *s : d.id;
    }

    /// Adds chunks as the source `source_id`; all or nothing.
    std::vector<DocId> insert(const std::string& source_id, std::vector<Chunk> chunks) {
        std::vector<Document> docs;
        std::vector<std::string> sections;
        docs.reserve(chunks.size());
        for (const auto& c : chunks) {
            docs.push_back(c.to_document());
            sections.push_back(c.section);
        }
        return insert_documents(source_id, std::move(docs), sections);
    }

    std::vector<DocId> insert_documents(const std::string& source_id, std::vector<Document> docs,
                                        const std::vector<std::string>& sections) {
        thaw();
        for (const auto& d : docs) MetadataIndex::validate(d.metadata, "chunk '" + d.id + "'");
        // The retriever's batch releases its own reserve when it returns; this one covers
        // the undo of a failure in the steps after it (the metadata index's, the places').
        detail::UndoReserve reserve(docs.size());
        std::vector<DocId> ids;
        try {
            // A retriever that adds in batches (Retriever::add_documents, all or nothing) gets
            // the source's chunks at once: a batching embedder embeds them together.
            if constexpr (requires(R& r, std::vector<Document> v) { r.add_documents(std::move(v)); }) {
                ids = retriever_.add_documents(std::move(docs));
            } else {
                for (auto& d : docs) ids.push_back(retriever_.add_document(std::move(d)));
            }
            for (std::size_t i = 0; i < ids.size(); ++i) {
                metadata_.add_document(ids[i], retriever_.document(ids[i])->metadata);
                places_.emplace(ids[i], Slot{source_id, static_cast<std::uint32_t>(i), section_start(sections, i, ids)});
            }
            sources_.emplace(source_id, ids);
        } catch (...) {
            reserve.release();
            erase_chunks(ids);
            throw;
        }
        return ids;
    }

    /// Removes chunks just added (the undo of a failed insert; never throws): at once
    /// where the retriever can, each posting list rewritten once.
    void erase_chunks(const std::vector<DocId>& ids) noexcept {
        bool done = false;
        if constexpr (requires(R& r, std::span<const DocId> v) { r.remove_documents(v); }) {
            try {
                std::vector<DocId> with_metadata;
                for (DocId id : ids)
                    if (metadata_.contains(id)) with_metadata.push_back(id);
                retriever_.remove_documents(ids);
                metadata_.remove_documents(with_metadata);
                for (DocId id : ids) places_.erase(id);
                done = true;
            } catch (...) {
            }
        }
        if (!done)
            for (DocId id : ids) {  // each step apart: a batch may have done some of them
                try {
                    retriever_.remove_document(id);
                } catch (...) {
                }
                try {
                    if (metadata_.contains(id)) metadata_.remove_document(id);
                } catch (...) {
                }
                places_.erase(id);
            }
    }

    /// Removes one chunk from the retriever (store and indexes) and the metadata index.
    void erase_chunk(DocId id) {
        retriever_.remove_document(id);
        if (metadata_.contains(id)) metadata_.remove_document(id);
        places_.erase(id);
    }

    /// Re-adds previously removed chunk documents of `source_id` (after a failed update).
    void restore(const std::string& source_id, const std::vector<std::shared_ptr<const Document>>& old) {
        std::vector<DocId> ids;
        std::vector<std::string> sections;
        for (std::size_t i = 0; i < old.size(); ++i) {
            const DocId id = retriever_.add_document(*old[i]);
            ids.push_back(id);
            sections.push_back(section_field(*old[i]));
            metadata_.add_document(id, old[i]->metadata);
            places_.emplace(id, Slot{source_id, static_cast<std::uint32_t>(i), section_start(sections, i, ids)});
        }
        sources_.emplace(source_id, std::move(ids));
    }

    /// The position of the first chunk of chunk i's section (chunks before it are placed).
    std::uint32_t section_start(const std::vector<std::string>& sections, std::size_t i, const std::vector<DocId>& ids) const {
        return i > 0 && sections[i] == sections[i - 1] ? places_.at(ids[i - 1]).section_start : static_cast<std::uint32_t>(i);
    }

    /// Builds places_ from the frozen arrays (the first write after load()); no chunk is read.
    void thaw() {
        if (!frozen_) return;
        std::unordered_map<DocId, Slot> places;
        places.reserve(frozen_->chunks());
        for (const auto& [source, ids] : sources_)
            for (std::size_t i = 0; i < ids.size(); ++i) {
                const auto p = frozen_->at(ids[i]);
                if (!p || p->position != i || frozen_->source_name(p->source) != source)
                    frozen_->fail("chunk " + std::to_string(ids[i]) + " of '" + source + "' is not placed there");
                places.emplace(ids[i], Slot{source, static_cast<std::uint32_t>(i), p->section_start});
            }
        places_ = std::move(places);
        frozen_.reset();
    }

    /// A live chunk's place (the section itself is read from the chunk when asked).
    struct Slot {
        std::string source;
        std::uint32_t position = 0;
        std::uint32_t section_start = 0;
    };

    R retriever_;
    CollectionOptions options_;
    MetadataIndex metadata_;
    std::map<std::string, std::vector<DocId>, std::less<>> sources_;
    std::unordered_map<DocId, Slot> places_;
    std::shared_ptr<const detail::FrozenPlaces> frozen_;  // set while used in place (load())
};

}  // namespace ragpp
