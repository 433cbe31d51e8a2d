// ragpp detail: the not-API half of index/store.hpp (namespace detail::store): the
// binary document store file (format "DOCSTORE" in the container of detail/binary_file.hpp)
// and its reader, which decodes one document at a time from the file's (mapped) bytes.
//
// Payload (little-endian, integers unaligned: read with memcpy):
//   u64 capacity N              one past the largest DocId ever assigned
//   u64 live                    documents present
//   u64 offsets[N + 1]          document i is blob[offsets[i], offsets[i+1]); an empty
//                               range is a DocId without a document (removed)
//   u64 K, u32 by_key[K]        the DocIds of the present documents with a non-empty key,
//                               sorted by key (bytewise): find(key) is a binary search
//   u64 B, blob[B]              the documents
// A document: str id, str text, u32 field count, then per field: str name, u8 kind
// (0 string: str, 1 number: f64, 2 date: i32 days, 3 string list: u32 n, n str); a str is
// a u32 byte count and the bytes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>
#include <ragpp/detail/binary_file.hpp>
#include <ragpp/detail/mapped_file.hpp>

namespace ragpp::detail::store {

inline constexpr BinaryFormat format{"DOCSTORE", 1, "document store", ""};

enum : std::uint8_t { kind_string = 0, kind_number = 1, kind_date = 2, kind_list = 3 };

/// Passes the encoding of `doc` to put(const char*, std::size_t), piece by piece.
template <class Put>
void encode_to(Put&& put, const Document& doc) {
    auto u32 = [&](std::uint32_t v) { put(reinterpret_cast<const char*>(&v), 4); };
    auto str = [&](std::string_view s) {
        if (s.size() > 0xffffffffULL) throw InvalidArgument("DocumentStore::save: a string of " + std::to_string(s.size()) + " bytes");
        u32(static_cast<std::uint32_t>(s.size()));
        put(s.data(), s.size());
    };
    auto kind = [&](std::uint8_t k) { put(reinterpret_cast<const char*>(&k), 1); };
    str(doc.id);
    str(doc.text);
    u32(static_cast<std::uint32_t>(doc.metadata.size()));
    for (const auto& [name, value] : doc.metadata) {
        str(name);
        if (const auto* s = std::get_if<std::string>(&value)) {
            kind(kind_string);
            str(*s);
        } else if (const auto* x = std::get_if<double>(&value)) {
            kind(kind_number);
            put(reinterpret_cast<const char*>(x), 8);
        } else if (const auto* d = std::get_if<Date>(&value)) {
            kind(kind_date);
            put(reinterpret_cast<const char*>(&d->days), 4);
        } else {
            const auto& list = std::get<std::vector<std::string>>(value);
            kind(kind_list);
            u32(static_cast<std::uint32_t>(list.size()));
            for (const auto& e : list) str(e);
        }
    }
}

/// The number of bytes encode_to passes for `doc`.
[[nodiscard]] inline std::size_t encoded_size(const Document& doc) {
    std::size_t n = 0;
    encode_to([&](const char*, std::size_t k) { n += k; }, doc);
    return n;
}

/// Bounds-checked reads over one document's bytes; failures are FormatErrors naming the
/// file and the DocId.
class Cursor {
public:
    Cursor(std::string_view bytes, const std::string& file, DocId id) : bytes_(bytes), file_(file), id_(id) {}
    std::string_view take(std::size_t n, const char* field) {
        if (n > bytes_.size() - pos_)
            throw FormatError(file_ + ": document " + std::to_string(id_) + ": truncated while reading " + field);
        const auto s = bytes_.substr(pos_, n);
        pos_ += n;
        return s;
    }
    template <class T>
    T get(const char* field) {
        T v{};
        std::memcpy(&v, take(sizeof v, field).data(), sizeof v);
        return v;
    }
    std::string_view str(const char* field) { return take(get<std::uint32_t>(field), field); }
    [[nodiscard]] bool done() const noexcept { return pos_ == bytes_.size(); }
    [[nodiscard]] std::size_t left() const noexcept { return bytes_.size() - pos_; }

private:
    std::string_view bytes_;
    const std::string& file_;
    DocId id_;
    std::size_t pos_ = 0;
};

/// A document store file opened (read or mapped): the tables are checked at open, a
/// document is decoded when asked for.
class File {
public:
    /// Checks the header (and, when `verify`, the payload checksum), the sizes of the
    /// tables and that the offsets increase within the blob (one pass over the 8(N+1)
    /// bytes of offsets, none over the documents). With `verify`, also the key table
    /// (check_keys: every key read once). FormatError naming the file otherwise.
    File(std::shared_ptr<const FileBytes> bytes, std::string source, bool verify) : bytes_(std::move(bytes)) {
        BinaryReader r(bytes_->view(), format, source, verify);
        name_ = r.name();
        capacity_ = r.count("capacity", 8);
        if (capacity_ > 0xffffffffULL) r.fail("capacity " + std::to_string(capacity_) + " exceeds the DocId range");
        live_ = r.u64("live");
        if (capacity_ + 1 > r.remaining() / 8) r.fail("the offsets table does not fit in the file");
        offsets_ = r.raw(8 * (capacity_ + 1), "offsets").data();
        keyed_ = r.count("key table size", 4);
        keys_ = r.raw(4 * keyed_, "key table").data();
        const std::size_t blob = r.count("blob size", 1);
        blob_ = r.raw(blob, "blob");
        r.expect_end();
        present_ = DocSet(capacity_);
        std::uint64_t prev = offset(0);
        if (prev != 0) r.fail("the first document offset is " + std::to_string(prev) + ", not 0");
        std::size_t n = 0;
        for (std::size_t i = 0; i < capacity_; ++i) {
            const std::uint64_t next = offset(i + 1);
            if (next < prev || next > blob) r.fail("document " + std::to_string(i) + " has a bad offset");
            if (next != prev) present_.set(static_cast<DocId>(i)), ++n;
            prev = next;
        }
        if (prev != blob) r.fail("the documents end at " + std::to_string(prev) + ", the blob has " + std::to_string(blob) + " bytes");
        if (n != live_) r.fail("'live' says " + std::to_string(live_) + " documents, the offsets hold " + std::to_string(n));
        if (keyed_ > n) r.fail("the key table lists more documents than there are");
        if (verify) check_keys();
    }

    [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
    [[nodiscard]] std::size_t live() const noexcept { return live_; }
    /// The DocIds with a document in the file.
    [[nodiscard]] const DocSet& present() const noexcept { return present_; }
    [[nodiscard]] const std::string& name() const noexcept { return name_; }

    /// Document `id` (present in the file), decoded.
    [[nodiscard]] Document decode(DocId id) const {
        Cursor c(record(id), name_, id);
        Document d{std::string(c.str("id")), std::string(c.str("text")), {}};
        const auto fields = c.get<std::uint32_t>("field count");
        for (std::uint32_t f = 0; f < fields; ++f) {
            std::string name(c.str("field name"));
            MetaValue v;
            switch (c.get<std::uint8_t>("field kind")) {
                case kind_string: v = std::string(c.str("string value")); break;
                case kind_number: v = c.get<double>("number value"); break;
                case kind_date: v = Date{c.get<std::int32_t>("date value")}; break;
                case kind_list: {
                    const std::uint32_t n = c.get<std::uint32_t>("list size");
                    if (n > c.left() / 4)
                        throw FormatError(name_ + ": document " + std::to_string(id) + ": a list of " + std::to_string(n) +
                                          " strings does not fit in its bytes");
                    std::vector<std::string> list;
                    list.reserve(n);
                    for (std::uint32_t i = 0; i < n; ++i) list.emplace_back(c.str("list element"));
                    v = std::move(list);
                    break;
                }
                default: throw FormatError(name_ + ": document " + std::to_string(id) + ": unknown metadata kind");
            }
            if (!d.metadata.emplace(std::move(name), std::move(v)).second)
                throw FormatError(name_ + ": document " + std::to_string(id) + ": a metadata field is repeated");
        }
        if (!c.done()) throw FormatError(name_ + ": document " + std::to_string(id) + ": unexpected bytes after it");
        return d;
    }

    /// The size of document `id`'s bytes in the file (0 for a DocId without a document).
    [[nodiscard]] std::size_t record_size(DocId id) const { return record(id).size(); }

    /// The key (Document::id) of document `id`, uncopied.
    [[nodiscard]] std::string_view key(DocId id) const {
        Cursor c(record(id), name_, id);
        return c.str("id");
    }

    /// The DocId of the present document with key `key` in the file's key table.
    [[nodiscard]] std::optional<DocId> find(std::string_view key) const {
        std::size_t lo = 0, hi = keyed_;
        while (lo < hi) {
            const std::size_t mid = lo + (hi - lo) / 2;
            const DocId id = keyed(mid);
            const int cmp = this->key(id).compare(key);
            if (cmp == 0) {
                // A damaged table may list the key twice: equal keys sit side by side.
                if (mid > 0 && this->key(keyed(mid - 1)) == key) throw duplicate(keyed(mid - 1), id, key);
                if (mid + 1 < keyed_ && this->key(keyed(mid + 1)) == key) throw duplicate(id, keyed(mid + 1), key);
                return id;
            }
            if (cmp < 0) lo = mid + 1;
            else hi = mid;
        }
        return std::nullopt;
    }

private:
    /// The key table against the documents: its keys strictly increasing (so no key twice;
    /// a neighbour compare, as the table is sorted), each non-empty, and as many entries as
    /// present documents with a key. Every key is read once, in key order (random places in
    /// the blob), so an open without `verify` skips it: a mapped open must not touch every
    /// document (find() still refuses a duplicate of the key it finds).
    void check_keys() const {
        std::string_view prev;
        DocId prev_id = 0;
        for (std::size_t i = 0; i < keyed_; ++i) {
            const DocId id = keyed(i);
            const std::string_view k = key(id);
            if (k.empty())
                throw FormatError(name_ + ": the key table lists DocId " + std::to_string(id) + ", which has no key");
            if (i > 0) {
                const int cmp = prev.compare(k);
                if (cmp == 0) throw duplicate(prev_id, id, k);
                if (cmp > 0)
                    throw FormatError(name_ + ": the key table is not sorted: '" + std::string(k) + "' (DocId " +
                                      std::to_string(id) + ") comes after '" + std::string(prev) + "'");
            }
            prev = k;
            prev_id = id;
        }
        std::size_t with_key = 0;
        for (std::size_t id = 0; id < capacity_; ++id)
            if (present_.test(static_cast<DocId>(id)) && !key(static_cast<DocId>(id)).empty()) ++with_key;
        if (with_key != keyed_)
            throw FormatError(name_ + ": " + std::to_string(with_key) + " documents have a key, the key table lists " +
                              std::to_string(keyed_));
    }
    [[nodiscard]] FormatError duplicate(DocId a, DocId b, std::string_view key) const {
        return FormatError(name_ + ": two documents have the key '" + std::string(key) + "' (DocIds " + std::to_string(a) +
                           " and " + std::to_string(b) + ")");
    }
    [[nodiscard]] std::uint64_t offset(std::size_t i) const noexcept {
        std::uint64_t v;
        std::memcpy(&v, offsets_ + 8 * i, 8);
        return v;
    }
    [[nodiscard]] DocId keyed(std::size_t i) const {
        std::uint32_t v;
        std::memcpy(&v, keys_ + 4 * i, 4);
        if (v >= capacity_ || !present_.test(v))
            throw FormatError(name_ + ": the key table names DocId " + std::to_string(v) + ", which holds no document");
        return v;
    }
    [[nodiscard]] std::string_view record(DocId id) const {
        const std::uint64_t a = offset(id), b = offset(std::size_t{id} + 1);
        return blob_.substr(a, b - a);  // checked at open: a <= b <= blob size
    }

    std::shared_ptr<const FileBytes> bytes_;
    std::string name_;
    std::size_t capacity_ = 0, live_ = 0, keyed_ = 0;
    const char* offsets_ = nullptr;
    const char* keys_ = nullptr;
    std::string_view blob_;
    DocSet present_;
};

}  // namespace ragpp::detail::store
