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
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
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

/// Reads n values of `bits` bits each from p (which holds (n * bits + 7) / 8 bytes):
/// one unaligned 64-bit load a value while 8 bytes remain, byte by byte at the end.
inline void unpack_bits(const std::uint8_t* p, std::uint32_t* out, std::size_t n, std::uint32_t bits) noexcept {
    if (bits == 0) {
        std::fill(out, out + n, 0U);
        return;
    }
    const std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
    const std::size_t total = (n * bits + 7) / 8;
    std::size_t i = 0;
    const std::size_t fast = total >= 8 ? ((total - 8) * 8) / bits + 1 : 0;  // values whose 8-byte window fits
    for (std::size_t bit = 0; i < std::min(n, fast); ++i, bit += bits) {
        std::uint64_t w;
        std::memcpy(&w, p + (bit >> 3), 8);
        out[i] = static_cast<std::uint32_t>((w >> (bit & 7)) & mask);
    }
    for (; i < n; ++i) out[i] = extract_bits(p, total, i * bits, bits);
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

/// Decodes the documents of the block at p (header h) into docs (h.count).
/// (Unpacking and the running sum fused, the sum in a register: a separate pass
/// waits on a store-to-load forward per document.)
inline void decode_docs(const std::uint8_t* p, const BlockHeader& h, std::uint32_t* docs) noexcept {
    const std::uint8_t* payload = p + block_header_bytes;
    const std::uint32_t bits = h.gap_bits;
    const std::size_t n = h.count - 1;
    std::uint32_t doc = h.first;
    docs[0] = doc;
    if (bits == 0) {
        for (std::size_t i = 1; i <= n; ++i) docs[i] = ++doc;
        return;
    }
    const std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
    const std::size_t total = (n * bits + 7) / 8;
    const std::size_t fast = std::min(n, total >= 8 ? ((total - 8) * 8) / bits + 1 : 0);
    std::size_t i = 0;
    for (std::size_t bit = 0; i < fast; ++i, bit += bits) {
        std::uint64_t w;
        std::memcpy(&w, payload + (bit >> 3), 8);
        doc += static_cast<std::uint32_t>((w >> (bit & 7)) & mask) + 1;
        docs[i + 1] = doc;
    }
    for (; i < n; ++i) {  // the last values, whose 8-byte window would pass the end
        doc += extract_bits(payload, total, i * bits, bits) + 1;
        docs[i + 1] = doc;
    }
}
/// Decodes the frequencies of the block at p (header h) into tfs (h.count).
inline void decode_tfs(const std::uint8_t* p, const BlockHeader& h, std::uint32_t* tfs) noexcept {
    unpack_bits(p + block_header_bytes + h.gap_bytes(), tfs, h.count, h.tf_bits);
    for (std::uint32_t i = 0; i < h.count; ++i) tfs[i] += 1;
}
/// Decodes the block at p (header h) into docs / tfs (h.count each).
inline void decode_block(const std::uint8_t* p, const BlockHeader& h, std::uint32_t* docs, std::uint32_t* tfs) noexcept {
    decode_docs(p, h, docs);
    decode_tfs(p, h, tfs);
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
    [[nodiscard]] std::size_t memory_bytes() const noexcept { return bytes_.capacity(); }

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
        l.view_ = p;
        l.view_bytes_ = n_bytes;
        l.size_ = static_cast<std::uint32_t>(size);
        l.last_ = last;
        l.last_count_ = static_cast<std::uint8_t>(last_count);
        return l;
    }

private:
    static bool doc_less(const Posting& p, DocId d) noexcept { return p.doc < d; }
    static Posting load_posting(const std::uint8_t* p) noexcept { return {load_u32(p), load_u32(p + 4)}; }
    [[nodiscard]] std::size_t blocks_end() const noexcept {
        return view_ != nullptr ? view_bytes_ : bytes_.size() - 8 * std::size_t{tail_n_};
    }
    [[nodiscard]] const std::uint8_t* data() const noexcept { return view_ != nullptr ? view_ : bytes_.data(); }

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

    std::vector<std::uint8_t> bytes_;  ///< blocks, then the tail's raw pairs
    const std::uint8_t* view_ = nullptr;  ///< a view's blocks (bytes_ then unused)
    std::size_t view_bytes_ = 0;
    std::uint32_t size_ = 0;
    DocId last_ = 0;                   ///< the largest doc (when not empty)
    std::uint8_t tail_n_ = 0;          ///< postings in the tail (< 128 between calls)
    std::uint8_t last_count_ = 0;      ///< postings in the last block (0: no block)
};

/// A forward cursor over a PostingList: decodes one block at a time into a buffer.
/// When not done(), the current posting is doc(), tf(); shallow(target) moves to the
/// block that may hold target without decoding it (for its bound).
class ListCursor {
public:
    explicit ListCursor(const PostingList& list) noexcept
        : p_(list.blocks().data()),
          end_(list.blocks().data() + list.blocks().size()),
          tail_b_(list.tail_bytes()),
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
    /// packed frequencies (a probe reads one, not 128).
    [[nodiscard]] std::uint32_t tf() const noexcept {
        if (in_tail_) return tfs_[i_];
        if (h_.tf_bits == 0) return 1;
        const std::uint8_t* packed = p_ + block_header_bytes + h_.gap_bytes();
        return extract_bits(packed, (h_.count * std::size_t{h_.tf_bits} + 7) / 8, i_ * std::size_t{h_.tf_bits}, h_.tf_bits) + 1;
    }

    void next() noexcept {
        if (++i_ == n_) {
            advance();
            if (!done_) decode();
        } else if (i_ == dec_) {  // a scan: the rest of the block
            if (dec_ == 1) {
                decode_docs(p_, h_, docs_);
                dec_ = n_;
            }
            while (dec_ < n_) decode_one();
        }
    }

    /// Moves to the first posting whose doc is >= target.
    void next_geq(DocId target) noexcept {
        if (!shallow(target) && done_) return;
        if (!decoded_) decode();
        if (docs_[i_] >= target) return;
        if (docs_[dec_ - 1] >= target) {
            i_ = static_cast<std::uint32_t>(std::lower_bound(docs_ + i_, docs_ + dec_, target) - docs_);
            return;
        }
        // Decodes only as far as target (a probe stops halfway through a block on average).
        while (dec_ < n_ && docs_[dec_ - 1] < target) decode_one();
        i_ = dec_ - 1;
        if (docs_[i_] < target) {  // only in the tail: past its last doc
            advance();
            if (!done_) decode();
        }
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
    /// Starts the current unit: the tail whole, a block's first document only.
    void decode() noexcept {
        if (in_tail_) {
            for (std::uint32_t i = 0; i < tail_n_; ++i) {
                docs_[i] = load_u32(tail_b_ + 8 * i);
                tfs_[i] = load_u32(tail_b_ + 8 * i + 4);
            }
            n_ = dec_ = tail_n_;
        } else {
            docs_[0] = h_.first;
            n_ = h_.count;
            dec_ = 1;
        }
        i_ = 0;
        decoded_ = true;
    }
    /// Decodes the next document of the block.
    void decode_one() noexcept {
        const std::uint32_t bits = h_.gap_bits;
        const std::uint32_t gap = bits == 0 ? 0
                                            : extract_bits(p_ + block_header_bytes, h_.gap_bytes(),
                                                      (dec_ - 1) * std::size_t{bits}, bits);
        docs_[dec_] = docs_[dec_ - 1] + gap + 1;
        ++dec_;
    }

    const std::uint8_t* p_;
    const std::uint8_t* end_;
    const std::uint8_t* tail_b_;
    std::uint32_t tail_n_;
    BlockHeader h_{};
    bool in_tail_ = false;
    bool decoded_ = false;
    bool done_ = false;
    std::uint32_t serial_ = 0;
    std::uint32_t n_ = 0, i_ = 0, dec_ = 0;  // docs_[0..dec_) decoded, i_ < dec_
    std::uint32_t docs_[block_size];
    std::uint32_t tfs_[block_size];  // the tail's
};

/// A body term: its block-compressed postings and their skyline.
using BlockTermData = BasicTermData<PostingList>;

}  // namespace ragpp::detail::bm25
