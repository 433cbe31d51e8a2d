// ragpp detail: block-compressed BM25 posting lists (not API) and their cursor.
//
// A list is a run of blocks of up to 128 postings (full ones while the index is
// built by appending), then an uncompressed tail of fewer than 128 postings being
// filled (kept raw after the blocks, in the same buffer); compact()
// (BM25Index::shrink_to_fit; a list read from a file has no tail) turns the tail into
// a last, partial block, which the next append reopens. A block is self-contained:
//
//   header (19 bytes): u32 first doc | u32 last doc | u32 max tf | u32 min length |
//                      u8 count - 1 | u8 gap bits | u8 tf bits
//   payload:           count - 1 doc gaps (doc[i] - doc[i-1] - 1), bit-packed with
//                      `gap bits` each, then count (tf - 1), packed with `tf bits`;
//                      each array padded to a whole byte (LSB first)
//
// Bit-packing per block (as PISA's and Lucene's FOR blocks, without their SIMD
// layouts) rather than a varint family: gaps of a random document order and
// frequencies mostly 1 take a handful of bits, where a varint pays at least a byte
// for each of the two (docs/bm25.md "Complexity and memory" has the figures).
//
// The block bound (max tf, min length of its documents) caps every BM25 term score
// of the block for any k1, b, delta and variant, since scores grow with tf and
// shrink with the length: MaxScore skips a block whose bound cannot help a candidate
// enter the top k (bm25_maxscore.hpp). A removed document leaves the bound of its
// block valid (a maximum over fewer postings is not larger), so removal re-encodes
// only its block; blocks are independent (the first doc is in the header), so an id
// below the list's last re-encodes only the block it falls in (split in two when
// it overflows).
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <span>
#include <utility>
#include <vector>

#include <ragpp/core/types.hpp>
#include <ragpp/index/detail/bm25_postings.hpp>

namespace ragpp::detail::bm25 {

inline constexpr std::size_t block_size = 128;
inline constexpr std::size_t block_header_bytes = 19;

/// The decoded header of a block.
struct BlockHeader {
    DocId first = 0;
    DocId last = 0;
    std::uint32_t max_tf = 0;
    std::uint32_t min_len = 0;
    std::uint32_t count = 0;
    std::uint32_t gap_bits = 0;
    std::uint32_t tf_bits = 0;
    [[nodiscard]] std::size_t gap_bytes() const noexcept { return ((count - 1) * std::size_t{gap_bits} + 7) / 8; }
    [[nodiscard]] std::size_t payload_bytes() const noexcept {
        return gap_bytes() + (count * std::size_t{tf_bits} + 7) / 8;
    }
    [[nodiscard]] std::size_t bytes() const noexcept { return block_header_bytes + payload_bytes(); }
};

inline std::uint32_t load_u32(const std::uint8_t* p) noexcept {
    std::uint32_t v;
    std::memcpy(&v, p, 4);  // little-endian host (detail/binary_file.hpp)
    return v;
}

[[nodiscard]] inline BlockHeader read_header(const std::uint8_t* p) noexcept {
    BlockHeader h;
    h.first = load_u32(p);
    h.last = load_u32(p + 4);
    h.max_tf = load_u32(p + 8);
    h.min_len = load_u32(p + 12);
    h.count = std::uint32_t{p[16]} + 1;
    h.gap_bits = p[17];
    h.tf_bits = p[18];
    return h;
}

/// Appends n values of `bits` bits each (LSB first), padded to a byte.
inline void pack_bits(std::vector<std::uint8_t>& out, const std::uint32_t* v, std::size_t n, std::uint32_t bits) {
    if (bits == 0 || n == 0) return;
    std::uint64_t acc = 0;
    std::uint32_t filled = 0;
    for (std::size_t i = 0; i < n; ++i) {
        acc |= std::uint64_t{v[i]} << filled;
        filled += bits;
        while (filled >= 8) {
            out.push_back(static_cast<std::uint8_t>(acc));
            acc >>= 8;
            filled -= 8;
        }
    }
    if (filled > 0) out.push_back(static_cast<std::uint8_t>(acc));
}

/// The `bits`-bit value (1 to 32) at bit offset `bit` of p, which holds `total` bytes.
[[nodiscard]] inline std::uint32_t extract_bits(const std::uint8_t* p, std::size_t total, std::size_t bit,
                                                std::uint32_t bits) noexcept {
    const std::size_t byte = bit >> 3;
    std::uint64_t w = 0;
    if (byte + 8 <= total) {
        std::memcpy(&w, p + byte, 8);
    } else {
        for (std::size_t k = 0; byte + k < total; ++k) w |= std::uint64_t{p[byte + k]} << (8 * k);
    }
    return static_cast<std::uint32_t>((w >> (bit & 7)) & ((std::uint64_t{1} << bits) - 1));
}

/// Fixed-width unpacking, one function per width 0..32 (as the frame-of-reference
/// blocks of PISA's and Lucene's codecs, scalar, without their SIMD layouts): every
/// shift and mask is a constant, and eight values fill exactly B bytes, so each group
/// of eight is eight unaligned 8-byte loads at constant offsets. p must be readable
/// 8 bytes past the packed values (callers copy a run that ends a buffer; padded()).
template <std::uint32_t B>
struct FixedWidth {
    static constexpr std::uint64_t mask = B == 0 ? 0 : (std::uint64_t{1} << B) - 1;
    /// Value i of the run at p.
    static std::uint32_t at(const std::uint8_t* p, std::size_t i) noexcept {
        std::uint64_t w;
        std::memcpy(&w, p + i * B / 8, 8);
        return static_cast<std::uint32_t>((w >> (i * B % 8)) & mask);
    }
    /// put(i, value i) for i = 0 .. n-1, in order.
    template <class Put>
    static void each(const std::uint8_t* p, std::size_t n, Put& put) noexcept {
        std::size_t i = 0;
        for (; i + 8 <= n; i += 8, p += B)
            [&]<std::size_t... J>(std::index_sequence<J...>) { (put(i + J, at(p, J)), ...); }(std::make_index_sequence<8>{});
        for (std::size_t j = 0; i < n; ++i, ++j) put(i, at(p, j));
    }
    /// out[i] = value i.
    static void unpack(const std::uint8_t* p, std::uint32_t* out, std::size_t n) noexcept {
        auto put = [out](std::size_t i, std::uint32_t v) { out[i] = v; };
        each(p, n, put);
    }
    /// The values are gaps - 1 after docs[0]: docs[i + 1] = docs[i] + value i + 1 (the
    /// running sum in a register, fused with the unpacking).
    static void gaps(const std::uint8_t* p, std::uint32_t* docs, std::size_t n) noexcept {
        std::uint32_t doc = docs[0];
        auto put = [&doc, docs](std::size_t i, std::uint32_t v) {
            doc += v + 1;
            docs[i + 1] = doc;
        };
        each(p, n, put);
    }
};

using UnpackFn = void (*)(const std::uint8_t*, std::uint32_t*, std::size_t) noexcept;
template <std::size_t... B>
constexpr std::array<UnpackFn, sizeof...(B)> unpack_table(std::index_sequence<B...>) noexcept {
    return {&FixedWidth<B>::unpack...};
}
template <std::size_t... B>
constexpr std::array<UnpackFn, sizeof...(B)> gaps_table(std::index_sequence<B...>) noexcept {
    return {&FixedWidth<B>::gaps...};
}
/// By bit width, 0 to 32.
inline constexpr std::array<UnpackFn, 33> unpackers = unpack_table(std::make_index_sequence<33>{});
inline constexpr std::array<UnpackFn, 33> gap_decoders = gaps_table(std::make_index_sequence<33>{});

/// A packed run of n values of `bits` bits at p (readable up to `limit`): p itself
/// when 8 bytes past its end are readable, else a zero-padded copy in buf.
struct PaddedRun {
    alignas(8) std::uint8_t buf[block_size * 4 + 8];
    const std::uint8_t* get(const std::uint8_t* p, std::size_t n, std::uint32_t bits, const std::uint8_t* limit) noexcept {
        const std::size_t total = (n * bits + 7) / 8;
        if (limit - p >= static_cast<std::ptrdiff_t>(total + 8)) return p;
        if (total != 0) std::memcpy(buf, p, total);  // (an empty run may have no buffer)
        std::memset(buf + total, 0, 8);
        return buf;
    }
};

/// Reads n values (up to 128) of `bits` bits each (0 to 32) from p, which holds
/// (n * bits + 7) / 8 bytes and is readable up to `limit`.
inline void unpack_bits(const std::uint8_t* p, std::uint32_t* out, std::size_t n, std::uint32_t bits,
                        const std::uint8_t* limit) noexcept {
    PaddedRun run;
    unpackers[bits](run.get(p, n, bits, limit), out, n);
}
inline void unpack_bits(const std::uint8_t* p, std::uint32_t* out, std::size_t n, std::uint32_t bits) noexcept {
    unpack_bits(p, out, n, bits, p + (n * bits + 7) / 8);
}

/// Appends one block of postings (1 to 128, docs increasing); lens is the index's
/// document lengths by DocId.
inline void encode_block(std::vector<std::uint8_t>& out, const Posting* p, std::size_t n, const std::uint32_t* lens) {
    std::uint32_t gaps[block_size];
    std::uint32_t tfs[block_size];
    std::uint32_t max_gap = 0, max_tf = 0, min_len = std::numeric_limits<std::uint32_t>::max();
    for (std::size_t i = 0; i < n; ++i) {
        if (i > 0) {
            gaps[i - 1] = p[i].doc - p[i - 1].doc - 1;
            max_gap = std::max(max_gap, gaps[i - 1]);
        }
        tfs[i] = p[i].tf - 1;
        max_tf = std::max(max_tf, p[i].tf);
        min_len = std::min(min_len, lens[p[i].doc]);
    }
    std::uint8_t h[block_header_bytes];
    std::memcpy(h, &p[0].doc, 4);
    std::memcpy(h + 4, &p[n - 1].doc, 4);
    std::memcpy(h + 8, &max_tf, 4);
    std::memcpy(h + 12, &min_len, 4);
    h[16] = static_cast<std::uint8_t>(n - 1);
    h[17] = static_cast<std::uint8_t>(std::bit_width(max_gap));
    h[18] = static_cast<std::uint8_t>(std::bit_width(max_tf - 1));
    out.insert(out.end(), h, h + block_header_bytes);
    pack_bits(out, gaps, n - 1, h[17]);
    pack_bits(out, tfs, n, h[18]);
}

/// Decodes the documents of the block at p (header h) into docs (h.count); the
/// buffer holding the block is readable up to `limit` (its end by default).
inline void decode_docs(const std::uint8_t* p, const BlockHeader& h, std::uint32_t* docs,
                        const std::uint8_t* limit = nullptr) noexcept {
    const std::uint8_t* payload = p + block_header_bytes;
    const std::size_t n = h.count - 1;
    docs[0] = h.first;
    PaddedRun run;
    gap_decoders[h.gap_bits](run.get(payload, n, h.gap_bits, limit ? limit : p + h.bytes()), docs, n);
}
/// Decodes the frequencies of the block at p (header h) into tfs (h.count).
inline void decode_tfs(const std::uint8_t* p, const BlockHeader& h, std::uint32_t* tfs,
                       const std::uint8_t* limit = nullptr) noexcept {
    const std::uint8_t* packed = p + block_header_bytes + h.gap_bytes();
    unpack_bits(packed, tfs, h.count, h.tf_bits, limit ? limit : p + h.bytes());
    for (std::uint32_t i = 0; i < h.count; ++i) tfs[i] += 1;
}
/// Decodes the block at p (header h) into docs / tfs (h.count each).
inline void decode_block(const std::uint8_t* p, const BlockHeader& h, std::uint32_t* docs, std::uint32_t* tfs,
                         const std::uint8_t* limit = nullptr) noexcept {
    decode_docs(p, h, docs, limit);
    decode_tfs(p, h, tfs, limit);
}

/// Appends the block at p (header h) to out as postings.
inline void decode_block(const std::uint8_t* p, const BlockHeader& h, std::vector<Posting>& out) {
    std::uint32_t docs[block_size], tfs[block_size];
    decode_block(p, h, docs, tfs);
    for (std::uint32_t i = 0; i < h.count; ++i) out.push_back({docs[i], tfs[i]});
}

/// One term's postings, block-compressed (see the top of this header). One buffer
/// holds the blocks then the tail's raw (u32 doc, u32 tf) pairs, so a term costs one
/// vector and a few counters (most of a vocabulary has one short block).
class PostingList {
public:
    // The owned buffer and a view's (pointer, size) share their storage: a built index
    // holds a PostingList a term, and a view pair beside the vector cost 16 bytes a term
    // (2.59 against 2.49 bytes a posting on the 1M synthetic corpus).
    PostingList() noexcept : bytes_() {}
    PostingList(const PostingList& o) : size_(o.size_), last_(o.last_), tail_n_(o.tail_n_), last_count_(o.last_count_), is_view_(o.is_view_) {
        if (is_view_) view_ = o.view_;
        else new (&bytes_) std::vector<std::uint8_t>(o.bytes_);
    }
    PostingList(PostingList&& o) noexcept
        : size_(o.size_), last_(o.last_), tail_n_(o.tail_n_), last_count_(o.last_count_), is_view_(o.is_view_) {
        if (is_view_) view_ = o.view_;
        else new (&bytes_) std::vector<std::uint8_t>(std::move(o.bytes_));
    }
    PostingList& operator=(const PostingList& o) {
        if (this != &o) {
            PostingList copy(o);
            *this = std::move(copy);
        }
        return *this;
    }
    PostingList& operator=(PostingList&& o) noexcept {
        if (this == &o) return *this;
        if (is_view_ && !o.is_view_) new (&bytes_) std::vector<std::uint8_t>(std::move(o.bytes_));
        else if (!is_view_ && o.is_view_) {
            bytes_.~vector();
            view_ = o.view_;
        } else if (is_view_) view_ = o.view_;
        else bytes_ = std::move(o.bytes_);
        size_ = o.size_;
        last_ = o.last_;
        tail_n_ = o.tail_n_;
        last_count_ = o.last_count_;
        is_view_ = o.is_view_;
        return *this;
    }
    ~PostingList() {
        if (!is_view_) bytes_.~vector();
    }

    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
    [[nodiscard]] DocId last_doc() const noexcept { return last_; }
    /// The blocks (without the tail).
    [[nodiscard]] std::span<const std::uint8_t> blocks() const noexcept { return {data(), blocks_end()}; }
    /// The tail's raw pairs (tail_size() of them, 8 bytes each, unaligned).
    [[nodiscard]] const std::uint8_t* tail_bytes() const noexcept { return data() + blocks_end(); }
    [[nodiscard]] std::size_t tail_size() const noexcept { return tail_n_; }
    [[nodiscard]] Posting tail_at(std::size_t i) const noexcept { return load_posting(tail_bytes() + 8 * i); }
    [[nodiscard]] std::vector<Posting> tail() const {
        std::vector<Posting> out(tail_n_);
        for (std::size_t i = 0; i < tail_n_; ++i) out[i] = tail_at(i);
        return out;
    }
    [[nodiscard]] std::size_t memory_bytes() const noexcept { return is_view_ ? 0 : bytes_.capacity(); }

    /// Adds a posting for a document not in the list (any id); lens: document lengths.
    void add(Posting p, const std::uint32_t* lens) {
        if (size_ == 0 || p.doc > last_) {
            if (tail_n_ == 0 && last_count_ != 0 && last_count_ < block_size) reopen_last_block();
            std::uint8_t raw[8];
            std::memcpy(raw, &p.doc, 4);
            std::memcpy(raw + 4, &p.tf, 4);
            bytes_.insert(bytes_.end(), raw, raw + 8);
            ++tail_n_;
            ++size_;
            last_ = p.doc;
            if (tail_n_ == block_size) flush_tail(lens);
            return;
        }
        // An id below the list's last: into the block it falls in, else into the tail.
        const std::size_t at = find_block(p.doc);
        if (at == blocks_end()) {
            auto t = take_tail();
            t.insert(std::lower_bound(t.begin(), t.end(), p.doc, doc_less), p);
            put_tail(t);
            ++size_;
            if (tail_n_ == block_size) flush_tail(lens);
            return;
        }
        std::vector<Posting> ps;
        decode_block(bytes_.data() + at, read_header(bytes_.data() + at), ps);
        ps.insert(std::lower_bound(ps.begin(), ps.end(), p.doc, doc_less), p);
        std::vector<std::uint8_t> enc;
        if (ps.size() <= block_size) {
            encode_block(enc, ps.data(), ps.size(), lens);
        } else {
            encode_block(enc, ps.data(), ps.size() / 2, lens);
            encode_block(enc, ps.data() + ps.size() / 2, ps.size() - ps.size() / 2, lens);
        }
        splice(at, read_header(bytes_.data() + at).bytes(), enc);
        ++size_;
    }

    /// Removes the posting of `doc`; returns its tf, 0 (nothing changes) when absent.
    std::uint32_t erase(DocId doc, const std::uint32_t* lens) {
        if (size_ == 0 || doc > last_) return 0;
        std::uint32_t tf = 0;
        const std::size_t at = find_block(doc);
        if (at == blocks_end()) {
            auto t = tail();
            auto it = std::lower_bound(t.begin(), t.end(), doc, doc_less);
            if (it == t.end() || it->doc != doc) return 0;
            tf = it->tf;
            t.erase(it);
            take_tail();
            put_tail(t);
        } else {
            const BlockHeader h = read_header(bytes_.data() + at);
            if (doc < h.first) return 0;
            std::vector<Posting> ps;
            decode_block(bytes_.data() + at, h, ps);
            auto it = std::lower_bound(ps.begin(), ps.end(), doc, doc_less);
            if (it == ps.end() || it->doc != doc) return 0;
            tf = it->tf;
            ps.erase(it);
            std::vector<std::uint8_t> enc;
            if (!ps.empty()) encode_block(enc, ps.data(), ps.size(), lens);
            splice(at, h.bytes(), enc);
        }
        --size_;
        refresh_last();
        if (size_ == 0) std::vector<std::uint8_t>().swap(bytes_);
        return tf;
    }

    /// The tf of `doc`, 0 when absent.
    [[nodiscard]] std::uint32_t find(DocId doc) const noexcept {
        if (size_ == 0 || doc > last_) return 0;
        const std::size_t at = find_block(doc);
        if (at == blocks_end()) {
            for (std::size_t i = 0; i < tail_n_; ++i) {
                const Posting p = tail_at(i);
                if (p.doc >= doc) return p.doc == doc ? p.tf : 0;
            }
            return 0;
        }
        const BlockHeader h = read_header(data() + at);
        if (doc < h.first) return 0;
        std::uint32_t docs[block_size], tfs[block_size];
        decode_block(data() + at, h, docs, tfs);
        const auto* it = std::lower_bound(docs, docs + h.count, doc);
        return it != docs + h.count && *it == doc ? tfs[it - docs] : 0;
    }

    /// Turns the tail into a last (partial) block and releases spare capacity.
    void compact(const std::uint32_t* lens) {
        if (tail_n_ != 0) flush_tail(lens);
        bytes_.shrink_to_fit();
    }

    /// Calls f(doc, tf) for every posting, by increasing doc.
    template <class F>
    void for_each(F&& f) const {
        std::uint32_t docs[block_size], tfs[block_size];
        const std::size_t end = blocks_end();
        for (std::size_t at = 0; at < end;) {
            const BlockHeader h = read_header(data() + at);
            decode_block(data() + at, h, docs, tfs);
            for (std::uint32_t i = 0; i < h.count; ++i) f(docs[i], tfs[i]);
            at += h.bytes();
        }
        for (std::size_t i = 0; i < tail_n_; ++i) {
            const Posting p = tail_at(i);
            f(p.doc, p.tf);
        }
    }

    /// Whether pred(doc) holds for some posting; stops at the first block that has one.
    template <class P>
    [[nodiscard]] bool any_doc(P&& pred) const {
        std::uint32_t docs[block_size], tfs[block_size];
        const std::size_t end = blocks_end();
        for (std::size_t at = 0; at < end;) {
            const BlockHeader h = read_header(data() + at);
            decode_block(data() + at, h, docs, tfs);
            for (std::uint32_t i = 0; i < h.count; ++i)
                if (pred(docs[i])) return true;
            at += h.bytes();
        }
        for (std::size_t i = 0; i < tail_n_; ++i)
            if (pred(tail_at(i).doc)) return true;
        return false;
    }

    /// Every posting, by increasing doc.
    [[nodiscard]] std::vector<Posting> decode() const {
        std::vector<Posting> out;
        out.reserve(size_);
        for_each([&](DocId d, std::uint32_t tf) { out.push_back({d, tf}); });
        return out;
    }

    /// Adopts blocks read from a file and already checked (Codec::check_blocks in
    /// bm25_file.hpp): `size` postings, the last block `last_count` long ending at `last`.
    void adopt(std::vector<std::uint8_t> bytes, std::size_t size, DocId last, std::uint32_t last_count) {
        bytes_ = std::move(bytes);
        tail_n_ = 0;
        size_ = static_cast<std::uint32_t>(size);
        last_ = last;
        last_count_ = static_cast<std::uint8_t>(last_count);
    }

    /// A read-only list over `n_bytes` bytes of blocks that live elsewhere (a loaded
    /// file's, checked: bm25_file.hpp), with `size` postings, the last block `last_count`
    /// long ending at `last`. Only the const members may be called on it.
    [[nodiscard]] static PostingList view(const std::uint8_t* p, std::size_t n_bytes, std::size_t size, DocId last,
                                          std::uint32_t last_count) noexcept {
        PostingList l;
        l.bytes_.~vector();
        l.view_ = View{p, n_bytes};
        l.is_view_ = true;
        l.size_ = static_cast<std::uint32_t>(size);
        l.last_ = last;
        l.last_count_ = static_cast<std::uint8_t>(last_count);
        return l;
    }

private:
    static bool doc_less(const Posting& p, DocId d) noexcept { return p.doc < d; }
    static Posting load_posting(const std::uint8_t* p) noexcept { return {load_u32(p), load_u32(p + 4)}; }
    [[nodiscard]] std::size_t blocks_end() const noexcept {
        return is_view_ ? view_.bytes : bytes_.size() - 8 * std::size_t{tail_n_};
    }
    [[nodiscard]] const std::uint8_t* data() const noexcept { return is_view_ ? view_.p : bytes_.data(); }

    /// Copies the tail out and removes it from the buffer.
    std::vector<Posting> take_tail() {
        auto t = tail();
        bytes_.resize(blocks_end());
        tail_n_ = 0;
        return t;
    }
    /// Appends `t` (fewer than 129 postings, increasing) as the tail.
    void put_tail(const std::vector<Posting>& t) {
        for (const auto& p : t) {
            std::uint8_t raw[8];
            std::memcpy(raw, &p.doc, 4);
            std::memcpy(raw + 4, &p.tf, 4);
            bytes_.insert(bytes_.end(), raw, raw + 8);
        }
        tail_n_ = static_cast<std::uint8_t>(t.size());  // up to 128: the caller flushes a full tail
        refresh_last();
    }

    /// The offset of the first block whose last doc is >= doc (blocks_end() when none).
    [[nodiscard]] std::size_t find_block(DocId doc) const noexcept {
        const std::size_t end = blocks_end();
        std::size_t at = 0;
        while (at < end) {
            const BlockHeader h = read_header(data() + at);
            if (h.last >= doc) return at;
            at += h.bytes();
        }
        return end;
    }

    void splice(std::size_t at, std::size_t old_bytes, const std::vector<std::uint8_t>& enc) {
        const auto pos = bytes_.begin() + static_cast<std::ptrdiff_t>(at);
        if (enc.size() <= old_bytes) {
            std::copy(enc.begin(), enc.end(), pos);
            bytes_.erase(pos + static_cast<std::ptrdiff_t>(enc.size()), pos + static_cast<std::ptrdiff_t>(old_bytes));
        } else {
            std::copy(enc.begin(), enc.begin() + static_cast<std::ptrdiff_t>(old_bytes), pos);
            bytes_.insert(pos + static_cast<std::ptrdiff_t>(old_bytes), enc.begin() + static_cast<std::ptrdiff_t>(old_bytes),
                          enc.end());
        }
        refresh_last();
    }

    /// Recomputes last_ and the last block's count from the blocks and the tail.
    void refresh_last() noexcept {
        std::uint32_t count = 0;
        last_ = 0;
        const std::size_t end = blocks_end();
        for (std::size_t at = 0; at < end;) {
            const BlockHeader h = read_header(bytes_.data() + at);
            last_ = h.last;
            count = h.count;
            at += h.bytes();
        }
        set_last_count(count);
        if (tail_n_ != 0) last_ = tail_at(tail_n_ - 1u).doc;
    }
    void set_last_count(std::uint32_t count) noexcept { last_count_ = static_cast<std::uint8_t>(count); }

    /// Moves the last block, partial, back into the (empty) tail, so appends refill it.
    void reopen_last_block() {
        std::size_t at = 0, last_at = 0;
        while (at < bytes_.size()) {
            last_at = at;
            at += read_header(bytes_.data() + at).bytes();
        }
        std::vector<Posting> t;
        decode_block(bytes_.data() + last_at, read_header(bytes_.data() + last_at), t);
        bytes_.resize(last_at);
        put_tail(t);
    }

    void flush_tail(const std::uint32_t* lens) {
        const std::uint32_t n = tail_n_;
        Posting t[block_size];
        for (std::uint32_t i = 0; i < n; ++i) t[i] = tail_at(i);
        bytes_.resize(blocks_end());
        tail_n_ = 0;
        encode_block(bytes_, t, n, lens);
        set_last_count(n);
    }

    struct View {
        const std::uint8_t* p;  ///< a view's blocks (in a loaded file)
        std::size_t bytes;
    };
    union {
        std::vector<std::uint8_t> bytes_;  ///< blocks, then the tail's raw pairs (!is_view_)
        View view_;                        ///< is_view_
    };
    std::uint32_t size_ = 0;
    DocId last_ = 0;               ///< the largest doc (when not empty)
    std::uint8_t tail_n_ = 0;      ///< postings in the tail (< 128 between calls)
    std::uint8_t last_count_ = 0;  ///< postings in the last block (0: no block)
    bool is_view_ = false;         ///< see view(); only const members are called then
};

// One per term in a built index: a vector and four counters (64-bit targets).
static_assert(sizeof(void*) != 8 || sizeof(PostingList) <= 40);

/// A forward cursor over a PostingList. It reads a block's documents whole, the first
/// time it stops in the block, and its frequencies one at a time (a probe reads one);
/// blocks it passes over are never decoded: their headers give their last document.
/// When not done(), the current posting is doc(), tf(); shallow(target) moves to the
/// block that may hold target without decoding it (for its bound).
class ListCursor {
public:
    explicit ListCursor(const PostingList& list) noexcept
        : p_(list.blocks().data()),
          end_(list.blocks().data() + list.blocks().size()),
          tail_b_(list.tail_bytes()),
          limit_(list.tail_bytes() + 8 * list.tail_size()),
          tail_n_(static_cast<std::uint32_t>(list.tail_size())) {
        enter();
        if (!done_) decode();
    }
    ListCursor(const ListCursor&) = delete;
    ListCursor& operator=(const ListCursor&) = delete;
    ListCursor(ListCursor&&) noexcept = default;

    [[nodiscard]] bool done() const noexcept { return done_; }
    [[nodiscard]] DocId doc() const noexcept { return docs_[i_]; }
    /// The current frequency: read from the tail, or extracted alone from the block's
    /// packed frequencies (one 8-byte load when the buffer goes on 8 bytes past them).
    [[nodiscard]] std::uint32_t tf() const noexcept {
        if (in_tail_) return tfs_[i_];
        const std::size_t bit = i_ * std::size_t{h_.tf_bits};
        if (tf_fast_) {
            std::uint64_t w;
            std::memcpy(&w, tf_p_ + (bit >> 3), 8);
            return static_cast<std::uint32_t>((w >> (bit & 7)) & tf_mask_) + 1;
        }
        if (h_.tf_bits == 0) return 1;
        return extract_bits(tf_p_, (h_.count * std::size_t{h_.tf_bits} + 7) / 8, bit, h_.tf_bits) + 1;
    }

    void next() noexcept {
        if (++i_ == n_) {
            advance();
            if (!done_) decode();
        }
    }

    /// Moves to the first posting whose doc is >= target.
    void next_geq(DocId target) noexcept {
        if (decoded_ && docs_[i_] >= target) return;
        if (!shallow(target) && done_) return;
        if (!decoded_) decode();
        if (docs_[n_ - 1] < target) {  // only in the tail: past its last doc
            done_ = true;
            return;
        }
        // Binary search without branches (a conditional move a step): probes land anywhere.
        const std::uint32_t* base = docs_ + i_;
        for (std::uint32_t len = n_ - i_; len > 1;) {
            const std::uint32_t half = len / 2;
            base += static_cast<std::size_t>(base[half - 1] < target) * half;
            len -= half;
        }
        i_ = static_cast<std::uint32_t>(base - docs_) + (*base < target ? 1U : 0U);
    }

    /// Moves, without decoding, to the block that may hold target; false when the
    /// list cannot hold it (it ends before, or target falls before the block's first doc).
    bool shallow(DocId target) noexcept {
        if (done_) return false;
        if (decoded_ && docs_[i_] >= target) return docs_[i_] == target;
        while (!in_tail_ && h_.last < target) {
            advance();
            if (done_) return false;
        }
        if (in_tail_) return target <= load_u32(tail_b_ + 8 * (tail_n_ - 1));
        return target >= h_.first;
    }
    /// The document k postings ahead in the current unit (its last when the unit ends
    /// sooner), when not done(): what a scan will read soon, to prefetch its data.
    [[nodiscard]] DocId ahead(std::uint32_t k) const noexcept { return docs_[std::min(i_ + k, n_ - 1)]; }
    /// The current unit is the tail (no block bound: use the list's).
    [[nodiscard]] bool in_tail() const noexcept { return in_tail_; }
    /// The header of the current block (when not in_tail()).
    [[nodiscard]] const BlockHeader& block() const noexcept { return h_; }
    /// Changes each time the cursor enters another block.
    [[nodiscard]] std::uint32_t serial() const noexcept { return serial_; }

private:
    void enter() noexcept {
        decoded_ = false;
        ++serial_;
        if (p_ != end_) {
            h_ = read_header(p_);
            in_tail_ = false;
        } else if (tail_n_ != 0 && !in_tail_) {
            in_tail_ = true;
        } else {
            done_ = true;
        }
    }
    void advance() noexcept {
        if (!in_tail_) {
            p_ += h_.bytes();
            enter();
        } else {
            done_ = true;
        }
    }
    /// Reads the current unit's documents (and the tail's frequencies).
    void decode() noexcept {
        if (in_tail_) {
            for (std::uint32_t i = 0; i < tail_n_; ++i) {
                docs_[i] = load_u32(tail_b_ + 8 * i);
                tfs_[i] = load_u32(tail_b_ + 8 * i + 4);
            }
            n_ = tail_n_;
        } else {
            decode_docs(p_, h_, docs_, limit_);
            n_ = h_.count;
            tf_p_ = p_ + block_header_bytes + h_.gap_bytes();
            tf_fast_ = limit_ - tf_p_ >= static_cast<std::ptrdiff_t>((n_ * std::size_t{h_.tf_bits} + 7) / 8 + 8);
            tf_mask_ = h_.tf_bits == 0 ? 0 : (std::uint64_t{1} << h_.tf_bits) - 1;
        }
        i_ = 0;
        decoded_ = true;
    }

    const std::uint8_t* p_;
    const std::uint8_t* end_;
    const std::uint8_t* tail_b_;
    const std::uint8_t* limit_;  ///< the end of the list's buffer
    std::uint32_t tail_n_;
    BlockHeader h_{};
    bool in_tail_ = false;
    bool decoded_ = false;
    bool done_ = false;
    bool tf_fast_ = false;
    std::uint32_t serial_ = 0;
    std::uint32_t n_ = 0, i_ = 0;  // docs_[0..n_) decoded, i_ < n_
    const std::uint8_t* tf_p_ = nullptr;
    std::uint64_t tf_mask_ = 0;
    std::uint32_t docs_[block_size];
    std::uint32_t tfs_[block_size];  // the tail's
};

/// A body term: its block-compressed postings and their skyline.
using BlockTermData = BasicTermData<PostingList>;

}  // namespace ragpp::detail::bm25
