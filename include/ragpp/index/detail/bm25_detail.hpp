// ragpp: internals of BM25Index (not API): postings, the (tf, length) skyline used
// for exact score upper bounds, a top-k heap, and the little-endian binary codec with
// its checksum used by save/load.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <unistd.h>

#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>
#include <ragpp/detail/binary_file.hpp>
#include <ragpp/detail/hash.hpp>

namespace ragpp::detail::bm25 {

/// One entry of a posting list: a document and the raw frequency of the term in it.
struct Posting {
    DocId doc;
    std::uint32_t tf;
};

/// A point of a term's skyline: a term frequency and a document length.
struct SkyPoint {
    std::uint32_t tf;
    std::uint32_t len;
};

/// The Pareto skyline of the (tf, length) pairs of a posting list: the pairs not
/// dominated by another one with a tf at least as high and a length at least as
/// short. Every BM25 term score grows with tf and shrinks with the length (b >= 0),
/// so its maximum over the list is reached on the skyline, for any k1, b and delta
/// chosen at query time. Kept sorted by tf ascending; lengths are then strictly
/// ascending too.
inline void skyline_add(std::vector<SkyPoint>& s, SkyPoint p) {
    auto it = std::lower_bound(s.begin(), s.end(), p.tf, [](const SkyPoint& q, std::uint32_t tf) { return q.tf < tf; });
    // The point with the smallest length among those with tf' >= p.tf is *it.
    if (it != s.end() && it->len <= p.len) return;  // dominated
    auto last = it;
    if (last != s.end() && last->tf == p.tf) ++last;  // same tf, longer: dominated by p
    auto first = it;
    while (first != s.begin() && std::prev(first)->len >= p.len) --first;  // lower tf, not shorter
    it = s.erase(first, last);
    s.insert(it, p);
}

/// A scored candidate during top-k selection. Scores are ranked as the float the
/// caller receives, so the returned list is ordered by its own scores, ties by id.
struct Scored {
    float score;
    DocId id;
};

/// Higher score first, then smaller id (the order of every ragpp result list).
[[nodiscard]] inline bool better(const Scored& a, const Scored& b) noexcept {
    return a.score > b.score || (a.score == b.score && a.id < b.id);
}

/// The k best candidates seen so far; the worst of them on top of a heap.
class TopK {
public:
    explicit TopK(std::size_t k) : k_(k) { heap_.reserve(std::min<std::size_t>(k, 1U << 16)); }
    [[nodiscard]] bool full() const noexcept { return heap_.size() >= k_; }
    /// The score to beat once full (a candidate scoring exactly this and arriving with
    /// a larger id than the current worst does not enter).
    [[nodiscard]] double threshold() const noexcept { return static_cast<double>(heap_.front().score); }
    /// Offers a candidate; returns whether it entered.
    bool push(Scored s) {
        if (k_ == 0) return false;
        if (heap_.size() < k_) {
            heap_.push_back(s);
            std::push_heap(heap_.begin(), heap_.end(), better);
            return true;
        }
        if (!better(s, heap_.front())) return false;
        std::pop_heap(heap_.begin(), heap_.end(), better);
        heap_.back() = s;
        std::push_heap(heap_.begin(), heap_.end(), better);
        return true;
    }
    /// The candidates as hits, best first.
    [[nodiscard]] std::vector<Hit> take() {
        std::sort(heap_.begin(), heap_.end(), better);
        std::vector<Hit> out;
        out.reserve(heap_.size());
        for (const auto& s : heap_) out.push_back(Hit{s.id, s.score});
        heap_.clear();
        return out;
    }

private:
    std::size_t k_;
    std::vector<Scored> heap_;
};

/// First position in [first, last) whose doc is >= target: galloping, then binary search.
[[nodiscard]] inline const Posting* next_geq(const Posting* first, const Posting* last, DocId target) noexcept {
    if (first == last || first->doc >= target) return first;
    std::size_t step = 1;
    const Posting* lo = first;
    while (static_cast<std::size_t>(last - lo) > step && lo[step].doc < target) {
        lo += step;
        step *= 2;
    }
    const Posting* hi = static_cast<std::size_t>(last - lo) > step ? lo + step + 1 : last;
    return std::lower_bound(lo, hi, target, [](const Posting& p, DocId d) { return p.doc < d; });
}

/// A cache prefetch hint (a no-op where the compiler has no builtin for it).
inline void prefetch(const void* p) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(p);
#else
    (void)p;
#endif
}

/// The term dictionary: term -> dense id, open addressing with linear probing over
/// 64-bit slots (32-bit hash tag, id + 1; 0 = empty), the names in a vector by id.
/// One probe usually costs one cache miss for the slot and one for the name.
class TermDict {
public:
    static constexpr std::uint32_t npos = 0xFFFFFFFFU;

    [[nodiscard]] std::uint32_t find(std::string_view term) const noexcept { return find(term, hash(term)); }
    [[nodiscard]] std::uint32_t find(std::string_view term, std::uint64_t h) const noexcept {
        if (slots_.empty()) return npos;
        const auto tag = static_cast<std::uint32_t>(h >> 32);
        for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
            const std::uint64_t s = slots_[i];
            if (s == 0) return npos;
            if (static_cast<std::uint32_t>(s >> 32) == tag) {
                const auto id = static_cast<std::uint32_t>(s) - 1;
                if (names_[id] == term) return id;
            }
        }
    }
    /// The id of `term`, added with the next id when absent.
    std::uint32_t intern(std::string_view term, std::uint64_t h) {
        const std::uint32_t found = find(term, h);
        if (found != npos) return found;
        if (names_.size() >= npos - 1) throw InvalidArgument("BM25Index: vocabulary exceeds 2^32-2 terms");
        if ((names_.size() + 1) * 2 > slots_.size()) rehash(std::max<std::size_t>(64, slots_.size() * 2));
        const auto id = static_cast<std::uint32_t>(names_.size());
        names_.emplace_back(term);
        place(h, id);
        return id;
    }
    /// A hint that the slot of hash `h` will be read soon.
    void prefetch(std::uint64_t h) const noexcept {
        if (!slots_.empty()) bm25::prefetch(&slots_[h & mask_]);
    }
    [[nodiscard]] const std::string& name(std::uint32_t id) const noexcept { return names_[id]; }
    [[nodiscard]] std::size_t size() const noexcept { return names_.size(); }
    [[nodiscard]] std::size_t memory_bytes() const noexcept {
        std::size_t n = slots_.capacity() * sizeof(std::uint64_t) + names_.capacity() * sizeof(std::string);
        for (const auto& s : names_) n += s.capacity() > 15 ? s.capacity() + 1 : 0;
        return n;
    }

    static std::uint64_t hash(std::string_view s) noexcept {
        // FNV-1a then a 64-bit finalizer (splitmix64's), so the low bits are mixed.
        std::uint64_t h = 0xcbf29ce484222325ULL;
        for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
        h ^= h >> 30;
        h *= 0xbf58476d1ce4e5b9ULL;
        h ^= h >> 27;
        h *= 0x94d049bb133111ebULL;
        return h ^ (h >> 31);
    }

private:
    void place(std::uint64_t h, std::uint32_t id) noexcept {
        std::size_t i = h & mask_;
        while (slots_[i] != 0) i = (i + 1) & mask_;
        slots_[i] = (h & 0xFFFFFFFF00000000ULL) | (std::uint64_t{id} + 1);
    }
    void rehash(std::size_t n) {
        slots_.assign(n, 0);
        mask_ = n - 1;
        for (std::uint32_t id = 0; id < names_.size(); ++id) place(hash(names_[id]), id);
    }
    std::vector<std::uint64_t> slots_;
    std::size_t mask_ = 0;
    std::vector<std::string> names_;
};

// --- binary format ----------------------------------------------------------------

// The checksum (FNV-1a 64, detail/hash.hpp) and the atomic write (temporary file +
// rename, detail/binary_file.hpp) are the ones every ragpp index file uses.
using ragpp::detail::fnv1a64;
using ragpp::detail::write_file_atomically;

/// Appends little-endian integers, doubles and length-prefixed strings to a buffer.
class Writer {
public:
    std::string bytes;
    void u8(std::uint8_t v) { bytes.push_back(static_cast<char>(v)); }
    void u32(std::uint32_t v) {
        for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<char>((v >> (8 * i)) & 0xFFU));
    }
    void u64(std::uint64_t v) {
        for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((v >> (8 * i)) & 0xFFU));
    }
    void f64(double v) { u64(std::bit_cast<std::uint64_t>(v)); }
    void str(std::string_view s) {
        u32(static_cast<std::uint32_t>(s.size()));
        bytes.append(s);
    }
};

/// Reads what Writer wrote, throwing FormatError (naming the file, the offset and
/// the field) instead of reading past the end.
class Reader {
public:
    Reader(std::string_view bytes, std::string file, std::size_t base_offset)
        : bytes_(bytes), file_(std::move(file)), base_(base_offset) {}

    std::uint8_t u8(const char* field) { return static_cast<std::uint8_t>(take(1, field)[0]); }
    std::uint32_t u32(const char* field) {
        const auto s = take(4, field);
        std::uint32_t v = 0;
        for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[static_cast<std::size_t>(i)]);
        return v;
    }
    std::uint64_t u64(const char* field) {
        const auto s = take(8, field);
        std::uint64_t v = 0;
        for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[static_cast<std::size_t>(i)]);
        return v;
    }
    double f64(const char* field) { return std::bit_cast<double>(u64(field)); }
    std::string_view str(const char* field) {
        const std::uint32_t n = u32(field);
        return take(n, field);
    }
    /// A count of items of `item_bytes` bytes each that must fit in what is left.
    std::size_t count(const char* field, std::size_t item_bytes) {
        const std::uint64_t n = u64(field);
        if (item_bytes != 0 && n > remaining() / item_bytes) fail(std::string(field) + " " + std::to_string(n) + " does not fit in the file");
        return static_cast<std::size_t>(n);
    }
    [[nodiscard]] std::size_t remaining() const noexcept { return bytes_.size() - pos_; }
    [[nodiscard]] std::size_t offset() const noexcept { return base_ + pos_; }
    [[noreturn]] void fail(const std::string& what) const {
        throw FormatError(file_ + ": " + what + " (at byte " + std::to_string(offset()) + ")");
    }

private:
    std::string_view take(std::size_t n, const char* field) {
        if (n > remaining()) fail(std::string("truncated while reading ") + field);
        auto s = bytes_.substr(pos_, n);
        pos_ += n;
        return s;
    }
    std::string_view bytes_;
    std::string file_;
    std::size_t base_;
    std::size_t pos_ = 0;
};

/// The whole content of a file; IoError when it cannot be opened or read.
inline std::string read_whole_file(const std::filesystem::path& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw IoError("cannot read '" + path.string() + "': it is a directory");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw IoError("cannot open '" + path.string() + "' for reading");
    std::string bytes;
    std::vector<char> buf(1 << 20);
    while (in) {
        in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
        bytes.append(buf.data(), static_cast<std::size_t>(in.gcount()));
    }
    if (in.bad()) throw IoError("cannot read '" + path.string() + "'");
    return bytes;
}

}  // namespace ragpp::detail::bm25
