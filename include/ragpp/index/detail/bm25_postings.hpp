// ragpp detail: the storage of BM25Index (not API): posting lists and the (tf, length)
// skyline that bounds a list's scores exactly, the galloping cursor step over a list,
// the term dictionary, the forward index's varints, and the fields' postings (the
// body's block-compressed lists are in bm25_blocks.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>
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
        return probe(slots_.data(), slots_.size(), term, h, [&](std::uint32_t id) { return std::string_view(names_[id]); });
    }
    /// The lookup over a table of `n` slots (0 or a power of two) laid out as this class
    /// lays out its own (a loaded file's, bm25_file.hpp); name(id) gives the name of an
    /// id found in a slot (and may throw for one out of range). At most n probes, so a
    /// damaged table without an empty slot still ends.
    template <class Name>
    [[nodiscard]] static std::uint32_t probe(const std::uint64_t* slots, std::size_t n, std::string_view term,
                                             std::uint64_t h, Name&& name) {
        if (n == 0) return npos;
        const std::size_t mask = n - 1;
        const auto tag = static_cast<std::uint32_t>(h >> 32);
        for (std::size_t k = 0, i = h & mask; k < n; ++k, i = (i + 1) & mask) {
            const std::uint64_t s = slots[i];
            if (s == 0) return npos;
            if (static_cast<std::uint32_t>(s >> 32) == tag) {
                const auto id = static_cast<std::uint32_t>(s) - 1;
                if (name(id) == term) return id;
            }
        }
        return npos;
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
    /// The slot of a term of hash `h` and id `id` in a table (see probe).
    [[nodiscard]] static std::uint64_t slot_value(std::uint64_t h, std::uint32_t id) noexcept {
        return (h & 0xFFFFFFFF00000000ULL) | (std::uint64_t{id} + 1);
    }
    /// Releases the spare capacity of the names.
    void shrink_to_fit() { names_.shrink_to_fit(); }
    [[nodiscard]] std::size_t size() const noexcept { return names_.size(); }
    [[nodiscard]] std::size_t memory_bytes() const noexcept {
        std::size_t n = slots_.capacity() * sizeof(std::uint64_t) + names_.capacity() * sizeof(std::string);
        for (const auto& s : names_) n += s.capacity() > 15 ? s.capacity() + 1 : 0;
        return n;
    }

    static std::uint64_t hash(std::string_view s) noexcept {
        // FNV-1a (detail/hash.hpp) then a 64-bit finalizer (splitmix64's), so the low bits are mixed.
        std::uint64_t h = fnv1a64(s);
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
        slots_[i] = slot_value(h, id);
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


/// A term's postings (a std::vector<Posting> for the fields, a block-compressed
/// PostingList, bm25_blocks.hpp, for the body) and their skyline.
template <class List>
struct BasicTermData {
    List postings;                  ///< sorted by doc, strictly increasing
    std::vector<SkyPoint> skyline;  ///< see skyline_add
    SkyPoint front{0, 0};           ///< skyline.front() when not empty: the lowest tf, shortest

    /// skyline_add, with the common case (a point dominated by the front, e.g. tf 1 in
    /// a document not shorter than the shortest one) decided without reading the skyline.
    void add_point(SkyPoint p) {
        if (!skyline.empty() && p.tf <= front.tf && p.len >= front.len) return;
        skyline_add(skyline, p);
        front = skyline.front();
    }
};
using TermData = BasicTermData<std::vector<Posting>>;

/// The mean rank_bm25_okapi idf over the vocabulary, computed once per index state.
struct MeanIdfCache {
    MeanIdfCache() = default;
    MeanIdfCache(const MeanIdfCache&) noexcept {}
    MeanIdfCache& operator=(const MeanIdfCache&) noexcept {
        valid = false;
        return *this;
    }
    std::mutex mutex;
    bool valid = false;
    std::uint64_t generation = 0;
    double value = 0.0;
};

inline void put_varint(std::vector<std::uint8_t>& out, std::uint32_t v) {
    while (v >= 0x80) {
        out.push_back(static_cast<std::uint8_t>(v | 0x80));
        v >>= 7;
    }
    out.push_back(static_cast<std::uint8_t>(v));
}

/// Calls f(term id) for each id of a forward-index entry (varint deltas of sorted ids).
template <class F>
void for_each_varint_delta(const std::vector<std::uint8_t>& in, F&& f) {
    std::uint32_t prev = 0;
    std::size_t i = 0;
    while (i < in.size()) {
        std::uint32_t v = 0;
        int shift = 0;
        while (in[i] & 0x80) {
            v |= static_cast<std::uint32_t>(in[i++] & 0x7F) << shift;
            shift += 7;
        }
        v |= static_cast<std::uint32_t>(in[i++]) << shift;
        prev += v;
        f(prev);
    }
}

/// The postings of the metadata fields of an index (see "Fields" in index/bm25/scoring.hpp).
struct FieldData {
    std::vector<TermData> terms;                   ///< by term id; may be shorter than the dictionary
    std::vector<std::uint32_t> len;                ///< by DocId; 0 for absent slots
    std::vector<std::vector<std::uint8_t>> fwd;    ///< by DocId: varint deltas of sorted term ids
    std::uint64_t total = 0;                       ///< sum of len over live documents
    std::size_t docs = 0;                          ///< live documents with len > 0
    [[nodiscard]] std::uint32_t length(DocId d) const noexcept { return d < len.size() ? len[d] : 0; }
    [[nodiscard]] const TermData* term(std::uint32_t t) const noexcept {
        return t < terms.size() && !terms[t].postings.empty() ? &terms[t] : nullptr;
    }
};

}  // namespace ragpp::detail::bm25
