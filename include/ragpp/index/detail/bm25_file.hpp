// ragpp detail: the BM25 index file (not API): BM25Index::to_bytes / load / from_bytes in
// the container of every ragpp index file (detail/binary_file.hpp), format id "BM25INDX".
//
// Payload (format 5, laid out to be used in place: a loaded index is "frozen", it answers
// queries from the file's bytes - a mapped file's pages - and decodes nothing at open;
// its first write decodes the file into memory, BM25Index::thaw):
//   str analyzer name | u8 variant | f64 k1, b, delta, epsilon
//   f64 title, headings, path weights, field_b
//   u64 slots | u64 live documents | u64 total length | u64 postings | u64 fielded documents
//   u64 terms V | u64 table slots H (0 or a power of two > V) | u64 name bytes
//   u64 skyline points | u64 block bytes
//   [8] slots x u8 live flag            [8] slots x u32 length (0 for a removed document)
//   [8] H x u64 hash table: (high 32 bits of the term's hash, TermDict::hash) << 32 | id + 1,
//       0 for an empty slot; linear probing (TermDict's own layout)
//   [8] V x 56-byte term entries, by id: u64 name offset, list offset, list bytes, skyline
//       offset | u32 name bytes, document frequency, skyline points, last doc, last block's count, 0
//   [8] skyline points x (u32 tf, u32 length)   (each term's (tf, length) skyline, bm25_postings.hpp)
//   [8] names (the bytes of every term, by id)
//   [64] the body's posting lists, each its blocks as in bm25_blocks.hpp
//   3 x (title, headings, path): u64 terms F | u64 postings | u64 skyline points | u64 total | u64 documents
//       then, when F > 0: [8] slots x u32 field length | [8] F x 32-byte entries by increasing
//       term id: u64 posting offset, skyline offset | u32 term id, postings, skyline points, 0
//       | [8] postings x (u32 doc, u32 tf) | [8] skyline points x (u32 tf, u32 length)
//   ([8], [64]: zero bytes up to a multiple of 8 or 64 from the start of the file.)
// A term of the dictionary has body postings, field postings or both (ids are renumbered
// at save: terms without a live posting are dropped).
//
// Checks. At open, always: the container (magic, format, version, size), the analyzer, the
// parameters and every count against the bytes left (no count from a file sizes an
// allocation). With OpenOptions::verify (and always before a frozen index is decoded, at
// its first write): the checksum, then everything: every entry in range, every name found
// at its id through the table, every block decoded and checked (header fields, bit widths,
// sizes, increasing live documents, tf >= 1, its max tf and min length bounds), every
// skyline equal to the one of its postings, each document's length the sum of its
// frequencies, the counts. Without verify, what a query reads is checked when it reads it:
// a name lookup checks the entry and name it compares, and a term's postings are checked
// whole (as with verify) the first time a query uses the term - a damaged list is a
// FormatError naming the file at that query, never a crash. (What no check short of the
// checksum can see - a skyline or length changed to another plausible value - gives wrong
// scores, not a crash.)
//
// Formats 1 to 4 are refused as written by an older ragpp ("rebuild the index"): format 4
// (the same blocks, but a term table decoded at open) is what the session before this
// format wrote; its fixture is tests/fixtures/index/bm25-format4.bin.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>
#include <ragpp/detail/binary_file.hpp>
#include <ragpp/detail/mapped_file.hpp>
#include <ragpp/index/bm25/scoring.hpp>
#include <ragpp/index/detail/bm25_blocks.hpp>
#include <ragpp/index/detail/bm25_postings.hpp>

namespace ragpp::detail::bm25 {

inline constexpr BinaryFormat file_format{"BM25INDX", 5, "BM25 index", "RGPPBM25"};

/// A term's entry in the file's term table (56 bytes).
struct TermEntry {
    std::uint64_t name_off = 0, list_off = 0, list_bytes = 0, sky_off = 0;
    std::uint32_t name_len = 0, df = 0, sky_n = 0, last_doc = 0, last_count = 0, zero = 0;
};
static_assert(sizeof(TermEntry) == 56);
/// A term's entry in a field's table (32 bytes).
struct FieldEntry {
    std::uint64_t post_off = 0, sky_off = 0;
    std::uint32_t tid = 0, n = 0, sky_n = 0, zero = 0;
};
static_assert(sizeof(FieldEntry) == 32);

template <class T>
[[nodiscard]] inline T load_at(const std::uint8_t* base, std::size_t i) noexcept {
    T v;
    std::memcpy(&v, base + i * sizeof(T), sizeof(T));
    return v;
}

/// A posting list (of a field) or a skyline checked against the index's documents.
struct ListView {
    const Posting* begin = nullptr;
    const Posting* end = nullptr;
    std::vector<SkyPoint> skyline;
};

/// A field's arrays in a loaded file.
struct FrozenField {
    std::size_t nterms = 0, npostings = 0, nsky = 0;
    std::uint64_t total = 0, docs = 0;
    std::span<const std::uint32_t> len;  // empty when the field has no term
    const std::uint8_t* entries = nullptr;
    const Posting* postings = nullptr;
    const std::uint8_t* sky = nullptr;
};

/// The arrays of a loaded file, used in place (shared by the copies of a frozen index;
/// immutable but for the record of the terms already checked).
struct FrozenIndex {
    std::shared_ptr<const FileBytes> file;  // the bytes (mapped or read), or
    std::string copy;                       // a copy of them (from_bytes)
    std::string name;                       // the source, quoted, as messages begin
    std::size_t slots = 0;
    std::span<const std::uint8_t> live;
    std::span<const std::uint32_t> len;
    std::uint64_t live_count = 0, total_len = 0, postings = 0, fielded_docs = 0;
    std::size_t nterms = 0, table_size = 0, pool_bytes = 0, nsky = 0, block_bytes = 0;
    const std::uint64_t* table = nullptr;
    const std::uint8_t* entries = nullptr;
    const std::uint8_t* sky = nullptr;
    const char* pool = nullptr;
    const std::uint8_t* blocks = nullptr;
    std::array<FrozenField, 3> fields;
    std::unique_ptr<std::atomic<std::uint8_t>[]> checked;  // by term id: postings checked
    mutable std::atomic<bool> verified{false};             // everything checked

    [[noreturn]] void fail(const std::string& what) const { throw FormatError(name + ": " + what); }

    [[nodiscard]] TermEntry entry(std::uint32_t t) const noexcept { return load_at<TermEntry>(entries, t); }
    /// The name of term t, its range checked.
    [[nodiscard]] std::string_view term_name(std::uint32_t t) const {
        if (t >= nterms) fail("the term table names term " + std::to_string(t) + " of " + std::to_string(nterms));
        const TermEntry e = entry(t);
        if (e.name_off > pool_bytes || e.name_len > pool_bytes - e.name_off)
            fail("the name of term " + std::to_string(t) + " lies outside the names");
        return {pool + e.name_off, e.name_len};
    }
    /// The id of `term`, TermDict::npos when absent.
    [[nodiscard]] std::uint32_t find(std::string_view term) const {
        return TermDict::probe(table, table_size, term, TermDict::hash(term),
                               [&](std::uint32_t id) { return term_name(id); });
    }
    /// n skyline points at `off` of an array of `total`; what() names the list in a message.
    template <class What>
    [[nodiscard]] std::vector<SkyPoint> skyline(const std::uint8_t* base, std::size_t total, std::uint64_t off,
                                                std::uint32_t n, What&& what) const {
        if (off > total || n > total - off) fail("the skyline of " + what() + " lies outside the skylines");
        std::vector<SkyPoint> s(n);
        if (n != 0) std::memcpy(s.data(), base + off * sizeof(SkyPoint), n * sizeof(SkyPoint));
        return s;
    }
    [[nodiscard]] static std::string quote(std::string_view term) { return "term '" + std::string(term) + "'"; }

    /// Checks term t's body postings whole (the blocks, their bounds, the skyline, the
    /// last document and block); f(doc, tf) sees each posting. Throws FormatError; with
    /// `bad_skyline`, a wrong skyline is recorded there (the first term's id) instead.
    template <class F>
    void check_term(std::uint32_t t, F&& f, std::uint32_t* bad_skyline = nullptr) const {
        const std::string what = quote(term_name(t));
        const TermEntry e = entry(t);
        if (e.list_off > block_bytes || e.list_bytes > block_bytes - e.list_off)
            fail("the postings of " + what + " lie outside the posting lists");
        if ((e.df == 0) != (e.list_bytes == 0)) fail(what + ": " + std::to_string(e.df) + " postings in " +
                                                     std::to_string(e.list_bytes) + " bytes");
        if (e.df > slots) fail(what + " has more postings than documents");
        std::vector<SkyPoint> points;  // the skyline of the postings
        SkyPoint front{0, 0};
        DocId last = 0;
        const std::uint32_t last_count = check_blocks(what, blocks + e.list_off, e.list_bytes, e.df, [&](DocId d, std::uint32_t tf) {
            const SkyPoint p{tf, len[d]};
            if (points.empty() || p.tf > front.tf || p.len < front.len) {
                skyline_add(points, p);
                front = points.front();
            }
            last = d;
            f(d, tf);
        });
        if (e.df != 0 && (last != e.last_doc || last_count != e.last_count))
            fail(what + ": the entry's last document or last block count is wrong");
        const auto stored = skyline(sky, nsky, e.sky_off, e.sky_n, [&] { return what; });
        if (stored.size() != points.size() ||
            !std::equal(points.begin(), points.end(), stored.begin(),
                        [](const SkyPoint& a, const SkyPoint& b) { return a.tf == b.tf && a.len == b.len; })) {
            if (bad_skyline == nullptr) fail(what + ": the skyline does not match the postings");
            if (*bad_skyline == TermDict::npos) *bad_skyline = t;
        }
    }

    /// Checks the blocks of a list (n postings) and calls f(doc, tf) for each posting;
    /// returns the last block's count.
    template <class F>
    std::uint32_t check_blocks(const std::string& what, const std::uint8_t* p, std::size_t size, std::size_t n, F&& f) const {
        auto bad = [&](const std::string& why) { fail("postings of " + what + ": " + why); };
        std::uint32_t docs[block_size], tfs[block_size];
        std::size_t seen = 0, at = 0;
        std::uint32_t last_count = 0;
        std::int64_t prev = -1;
        while (at < size) {
            if (size - at < block_header_bytes) bad("a block header is truncated");
            const BlockHeader h = read_header(p + at);
            if (h.count > block_size) bad("a block holds " + std::to_string(h.count) + " postings (at most 128)");
            if (h.gap_bits > 32 || h.tf_bits > 32) bad("a block has a bit width above 32");
            if (size - at < h.bytes()) bad("a block is truncated");
            decode_block(p + at, h, docs, tfs);
            if (docs[0] != h.first || docs[h.count - 1] != h.last) bad("a block's first or last document is wrong");
            for (std::uint32_t i = 0; i < h.count; ++i) {
                if (static_cast<std::int64_t>(docs[i]) <= prev) bad("documents are not in increasing order");
                prev = docs[i];
                if (docs[i] >= slots || !live[docs[i]]) bad("a posting for absent document " + std::to_string(docs[i]));
                if (tfs[i] == 0) bad("a zero frequency");
                if (tfs[i] > h.max_tf || len[docs[i]] < h.min_len) bad("a block's bound does not hold");
                f(docs[i], tfs[i]);
            }
            seen += h.count;
            last_count = h.count;
            at += h.bytes();
        }
        if (seen != n) bad(std::to_string(seen) + " postings in the blocks, " + std::to_string(n) + " announced");
        return last_count;
    }

    /// Term t's body postings as a read-only list over the file's bytes, with its skyline
    /// (checked whole the first time; see the top of this header); empty when the term
    /// has no body posting.
    [[nodiscard]] BlockTermData body(std::uint32_t t) const {
        BlockTermData td;
        const TermEntry e = entry(t);
        if (e.df == 0) return td;
        if (checked[t].load(std::memory_order_acquire) == 0) {
            check_term(t, [](DocId, std::uint32_t) {});
            checked[t].store(1, std::memory_order_release);
        }
        td.postings = PostingList::view(blocks + e.list_off, e.list_bytes, e.df, e.last_doc, e.last_count);
        td.skyline = skyline(sky, nsky, e.sky_off, e.sky_n, [&] { return quote(term_name(t)); });
        if (!td.skyline.empty()) td.front = td.skyline.front();
        return td;
    }
    [[nodiscard]] std::uint32_t df(std::uint32_t t) const noexcept { return entry(t).df; }

    /// The index in field fi's table of term t (fd.nterms when absent): binary search.
    [[nodiscard]] std::size_t field_slot(std::size_t fi, std::uint32_t t) const noexcept {
        const auto& fd = fields[fi];
        std::size_t lo = 0, hi = fd.nterms;
        while (lo < hi) {
            const std::size_t mid = lo + (hi - lo) / 2;
            if (load_at<FieldEntry>(fd.entries, mid).tid < t) lo = mid + 1;
            else hi = mid;
        }
        return lo < fd.nterms && load_at<FieldEntry>(fd.entries, lo).tid == t ? lo : fd.nterms;
    }
    /// Field fi's postings of term t, checked (documents live and increasing, tf >= 1,
    /// in range), with their skyline; begin == end when absent.
    [[nodiscard]] ListView field_list(std::size_t fi, std::uint32_t t) const {
        static constexpr const char* names[3] = {"title", "headings", "path"};
        ListView v;
        const auto& fd = fields[fi];
        const std::size_t at = field_slot(fi, t);
        if (at == fd.nterms) return v;
        const auto e = load_at<FieldEntry>(fd.entries, at);
        auto what = [&] { return std::string(names[fi]) + " " + quote(term_name(t)); };
        if (e.n == 0 || e.post_off > fd.npostings || e.n > fd.npostings - e.post_off)
            fail("the postings of " + what() + " lie outside the field's postings");
        v.begin = fd.postings + e.post_off;
        v.end = v.begin + e.n;
        for (const Posting* p = v.begin; p != v.end; ++p) {
            if (p->doc >= slots || !live[p->doc] || p->doc >= fd.len.size())
                fail(what() + " has a posting for absent document " + std::to_string(p->doc));
            if (p != v.begin && p->doc <= p[-1].doc) fail("postings of " + what() + " are not in increasing document order");
            if (p->tf == 0) fail(what() + " has a zero frequency");
        }
        v.skyline = skyline(fd.sky, fd.nsky, e.sky_off, e.sky_n, what);
        return v;
    }
};

/// Reads and writes a BM25Index's private state (a friend of BM25Index).
struct Codec {
    /// The bytes of the file being written, with the file offset of the next byte.
    struct Out {
        BinaryWriter& w;
        std::size_t at = binary_header_size;
        void bytes(const void* p, std::size_t n) {
            w.bytes(p, n);
            at += n;
        }
        template <class T>
        void put(const T& v) { bytes(&v, sizeof v); }
        void align(std::size_t to) {
            static constexpr char zeros[64] = {};
            bytes(zeros, (to - at % to) % to);
        }
    };

    /// Writes the payload of ix's file into `w` (in memory, or streaming to its file);
    /// the caller finishes or saves it with file_format.
    template <class Index>
    static void write(const Index& ix, BinaryWriter& w) {
        if (ix.frozen_) {  // a loaded index not yet written to: from its decoded copy
            Index copy = ix;
            copy.thaw();
            write(copy, w);
            return;
        }
        const std::size_t slots = ix.live_.size();
        const std::size_t old_terms = ix.terms_.size();
        // Ids renumbered over the terms with a posting (body or field), in id order.
        std::vector<std::uint32_t> new_id(old_terms, TermDict::npos);
        std::vector<std::uint32_t> kept;
        for (std::size_t t = 0; t < old_terms; ++t) {
            bool any = !ix.terms_[t].postings.empty();
            for (const auto& fd : ix.fields_) any = any || fd.term(static_cast<std::uint32_t>(t)) != nullptr;
            if (!any) continue;
            new_id[t] = static_cast<std::uint32_t>(kept.size());
            kept.push_back(static_cast<std::uint32_t>(t));
        }
        const std::size_t nterms = kept.size();
        std::size_t table_size = 0;
        if (nterms > 0) {
            table_size = 64;
            while (table_size < 2 * nterms) table_size *= 2;
        }
        std::vector<std::uint64_t> table(table_size, 0);
        std::vector<TermEntry> entries(nterms);
        std::vector<std::vector<std::uint8_t>> tails(nterms);  // the tails (fewer than 128 postings), encoded
        std::uint64_t pool = 0, sky = 0, block_bytes = 0;
        for (std::size_t i = 0; i < nterms; ++i) {
            const auto& td = ix.terms_[kept[i]];
            const auto& name = ix.dict_.name(kept[i]);
            const std::uint64_t h = TermDict::hash(name);
            std::size_t s = h & (table_size - 1);
            while (table[s] != 0) s = (s + 1) & (table_size - 1);
            table[s] = TermDict::slot_value(h, static_cast<std::uint32_t>(i));
            auto& e = entries[i];
            e.name_off = pool;
            e.name_len = static_cast<std::uint32_t>(name.size());
            pool += name.size();
            const auto& pl = td.postings;
            if (pl.empty()) continue;
            if (pl.tail_size() != 0) encode_block(tails[i], pl.tail().data(), pl.tail_size(), ix.doc_len_.data());
            e.df = static_cast<std::uint32_t>(pl.size());
            e.last_doc = pl.last_doc();
            e.list_off = block_bytes;
            e.list_bytes = pl.blocks().size() + tails[i].size();
            block_bytes += e.list_bytes;
            e.sky_off = sky;
            e.sky_n = static_cast<std::uint32_t>(td.skyline.size());
            sky += td.skyline.size();
            if (!tails[i].empty()) {
                e.last_count = read_header(tails[i].data()).count;
            } else {
                for (std::size_t at = 0; at < pl.blocks().size(); at += read_header(pl.blocks().data() + at).bytes())
                    e.last_count = read_header(pl.blocks().data() + at).count;
            }
        }
        Out o{w};
        const std::string_view analyzer_name(ix.analyzer_.name());
        o.put(static_cast<std::uint32_t>(analyzer_name.size()));
        o.bytes(analyzer_name.data(), analyzer_name.size());
        o.put(static_cast<std::uint8_t>(ix.params_.variant));
        for (const double v : {ix.params_.k1, ix.params_.b, ix.params_.delta, ix.params_.epsilon, ix.params_.field_weights.title,
                               ix.params_.field_weights.headings, ix.params_.field_weights.path, ix.params_.field_b})
            o.put(v);
        for (const std::uint64_t v : {std::uint64_t{slots}, std::uint64_t{ix.live_count_}, ix.total_len_, ix.posting_count_,
                                      std::uint64_t{ix.fielded_docs_}, std::uint64_t{nterms}, std::uint64_t{table_size}, pool,
                                      sky, block_bytes})
            o.put(v);
        o.align(8);
        o.bytes(ix.live_.data(), slots);
        o.align(8);
        o.bytes(ix.doc_len_.data(), slots * 4);
        o.align(8);
        o.bytes(table.data(), table_size * 8);
        o.align(8);
        o.bytes(entries.data(), nterms * sizeof(TermEntry));
        o.align(8);
        for (const std::uint32_t t : kept) o.bytes(ix.terms_[t].skyline.data(), ix.terms_[t].skyline.size() * sizeof(SkyPoint));
        o.align(8);
        for (const std::uint32_t t : kept) o.bytes(ix.dict_.name(t).data(), ix.dict_.name(t).size());
        o.align(64);
        for (std::size_t i = 0; i < nterms; ++i) {
            const auto& pl = ix.terms_[kept[i]].postings;
            o.bytes(pl.blocks().data(), pl.blocks().size());
            o.bytes(tails[i].data(), tails[i].size());
        }
        for (const auto& fd : ix.fields_) {
            std::vector<FieldEntry> fe;
            std::uint64_t np = 0, ns = 0;
            for (std::size_t i = 0; i < nterms; ++i) {
                const auto* td = fd.term(kept[i]);
                if (td == nullptr) continue;
                fe.push_back({np, ns, static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(td->postings.size()),
                              static_cast<std::uint32_t>(td->skyline.size()), 0});
                np += td->postings.size();
                ns += td->skyline.size();
            }
            for (const std::uint64_t v : {std::uint64_t{fe.size()}, np, ns, fd.total, std::uint64_t{fd.docs}}) o.put(v);
            if (fe.empty()) continue;
            o.align(8);
            std::vector<std::uint32_t> flen(slots, 0);
            std::copy(fd.len.begin(), fd.len.begin() + static_cast<std::ptrdiff_t>(std::min(fd.len.size(), slots)), flen.begin());
            o.bytes(flen.data(), slots * 4);
            o.align(8);
            o.bytes(fe.data(), fe.size() * sizeof(FieldEntry));
            o.align(8);
            for (const auto& e : fe) {
                const auto& pl = fd.term(kept[e.tid])->postings;
                o.bytes(pl.data(), pl.size() * sizeof(Posting));
            }
            o.align(8);
            for (const auto& e : fe) {
                const auto& s = fd.term(kept[e.tid])->skyline;
                o.bytes(s.data(), s.size() * sizeof(SkyPoint));
            }
        }
    }

    /// Opens the bytes of a file (owned by `fz`: its file or copy) as a frozen index;
    /// with `verify`, checks everything first (see the top of this header).
    template <class Index, class A>
    [[nodiscard]] static Index open(std::shared_ptr<FrozenIndex> fz, std::string_view bytes, std::string_view source,
                                    A analyzer, bool verify) {
        BinaryReader r(bytes, file_format, source, verify);
        Index index(std::move(analyzer));
        const std::string_view analyzer_name = r.str("analyzer name");
        if (analyzer_name != std::string_view(index.analyzer_.name()))
            throw InvalidArgument("BM25Index: " + r.name() + " was built with analyzer '" + std::string(analyzer_name) +
                                  "', this BM25Index uses '" + std::string(index.analyzer_.name()) + "'");  // the argument is wrong, not the file
        BM25Params p;
        const std::uint8_t variant = r.u8("variant");
        if (variant > static_cast<std::uint8_t>(BM25Variant::rank_bm25_plus))
            r.fail("unknown BM25 variant " + std::to_string(variant));
        p.variant = static_cast<BM25Variant>(variant);
        p.k1 = r.f64("k1");
        p.b = r.f64("b");
        p.delta = r.f64("delta");
        p.epsilon = r.f64("epsilon");
        p.field_weights.title = r.f64("title weight");
        p.field_weights.headings = r.f64("headings weight");
        p.field_weights.path = r.f64("path weight");
        p.field_b = r.f64("field_b");
        try {
            index.set_params(p);
        } catch (const InvalidArgument& e) {
            r.fail(std::string("bad parameters: ") + e.what());
        }
        FrozenIndex& f = *fz;
        f.name = r.name();
        auto align = [&](std::size_t to) { (void)r.raw((to - r.offset() % to) % to, "padding"); };
        // An array of n items of `size` bytes, after padding to `to`.
        auto array = [&](std::size_t n, std::size_t size, std::size_t to, const char* field) {
            align(to);
            if (n > r.remaining() / size) r.fail(std::string(field) + ": " + std::to_string(n) + " items do not fit in the " +
                                                 std::to_string(r.remaining()) + " bytes left");
            return reinterpret_cast<const std::uint8_t*>(r.raw(n * size, field).data());
        };
        f.slots = r.count("document slots", 5);
        if (f.slots > std::size_t{std::numeric_limits<DocId>::max()} + 1) r.fail("too many document slots");
        f.live_count = r.u64("live documents");
        f.total_len = r.u64("total length");
        f.postings = r.u64("posting count");
        f.fielded_docs = r.u64("fielded documents");
        f.nterms = r.count("term count", sizeof(TermEntry));
        if (f.nterms >= TermDict::npos) r.fail("term count " + std::to_string(f.nterms) + " exceeds 2^32-2");
        f.table_size = r.count("table slots", 8);
        if (f.nterms > 0 ? (!std::has_single_bit(f.table_size) || f.table_size <= f.nterms) : f.table_size != 0)
            r.fail("table slots " + std::to_string(f.table_size) + " for " + std::to_string(f.nterms) + " terms");
        f.pool_bytes = r.count("name bytes", 1);
        f.nsky = r.count("skyline points", sizeof(SkyPoint));
        f.block_bytes = r.count("block bytes", 1);
        f.live = {array(f.slots, 1, 8, "live flags"), f.slots};
        f.len = {reinterpret_cast<const std::uint32_t*>(array(f.slots, 4, 8, "document lengths")), f.slots};
        f.table = reinterpret_cast<const std::uint64_t*>(array(f.table_size, 8, 8, "hash table"));
        f.entries = array(f.nterms, sizeof(TermEntry), 8, "term entries");
        f.sky = array(f.nsky, sizeof(SkyPoint), 8, "skylines");
        f.pool = reinterpret_cast<const char*>(array(f.pool_bytes, 1, 8, "names"));
        f.blocks = array(f.block_bytes, 1, 64, "posting lists");
        for (auto& fd : f.fields) {
            fd.nterms = r.count("field term count", sizeof(FieldEntry));
            fd.npostings = r.count("field posting count", sizeof(Posting));
            fd.nsky = r.count("field skyline points", sizeof(SkyPoint));
            fd.total = r.u64("field total length");
            fd.docs = r.u64("field documents");
            if (fd.nterms == 0) continue;
            fd.len = {reinterpret_cast<const std::uint32_t*>(array(f.slots, 4, 8, "field lengths")), f.slots};
            fd.entries = array(fd.nterms, sizeof(FieldEntry), 8, "field term entries");
            fd.postings = reinterpret_cast<const Posting*>(array(fd.npostings, sizeof(Posting), 8, "field postings"));
            fd.sky = array(fd.nsky, sizeof(SkyPoint), 8, "field skylines");
        }
        r.expect_end();
        f.checked = std::make_unique<std::atomic<std::uint8_t>[]>(f.nterms);  // zeroed pages: nothing touched until used
        if (verify) verify_all(f);
        index.live_count_ = static_cast<std::size_t>(f.live_count);
        index.total_len_ = f.total_len;
        index.posting_count_ = f.postings;
        index.fielded_docs_ = static_cast<std::size_t>(f.fielded_docs);
        index.frozen_ = std::move(fz);
        return index;
    }

    /// Checks everything a frozen index holds (see the top of this header). Throws FormatError.
    static void verify_all(const FrozenIndex& f) {
        if (f.verified.load(std::memory_order_acquire)) return;
        std::uint64_t live_count = 0, total = 0, postings = 0, fielded = 0;
        for (std::size_t d = 0; d < f.slots; ++d) {
            if (f.live[d] > 1) f.fail("document " + std::to_string(d) + " has live flag " + std::to_string(f.live[d]));
            if (!f.live[d] && f.len[d] != 0) f.fail("removed document " + std::to_string(d) + " has a length");
            live_count += f.live[d];
            total += f.len[d];
        }
        std::vector<std::uint64_t> tf_sum(f.slots, 0);
        std::uint32_t bad_skyline = TermDict::npos;  // reported after the lengths (a wrong length is the likelier cause)
        for (std::uint32_t t = 0; t < f.nterms; ++t) {
            if (f.find(f.term_name(t)) != t) f.fail(FrozenIndex::quote(f.term_name(t)) + " is not found at its id (twice, or the table is wrong)");
            f.check_term(t, [&](DocId d, std::uint32_t tf) { tf_sum[d] += tf; }, &bad_skyline);
            postings += f.df(t);
        }
        for (std::size_t d = 0; d < f.slots; ++d)
            if (tf_sum[d] != f.len[d])
                f.fail("document " + std::to_string(d) + " has length " + std::to_string(f.len[d]) +
                       " but its postings sum to " + std::to_string(tf_sum[d]));
        if (bad_skyline != TermDict::npos) f.check_term(bad_skyline, [](DocId, std::uint32_t) {});  // throws
        for (std::uint32_t t = 0; t < f.nterms; ++t) f.checked[t].store(1, std::memory_order_release);
        std::vector<std::uint8_t> has_field(f.slots, 0);
        for (std::size_t fi = 0; fi < 3; ++fi) {
            const auto& fd = f.fields[fi];
            if (fd.nterms == 0) continue;
            std::vector<std::uint64_t> sums(f.slots, 0);
            std::int64_t prev = -1;
            for (std::size_t i = 0; i < fd.nterms; ++i) {
                const auto e = load_at<FieldEntry>(fd.entries, i);
                if (static_cast<std::int64_t>(e.tid) <= prev || e.tid >= f.nterms) f.fail("a field's terms are not in increasing id order");
                prev = e.tid;
                const ListView v = f.field_list(fi, e.tid);
                std::vector<SkyPoint> sky;
                for (const Posting* q = v.begin; q != v.end; ++q) sums[q->doc] += q->tf;
                for (const Posting* q = v.begin; q != v.end; ++q) skyline_add(sky, {q->tf, fd.len[q->doc]});
                if (sky.size() != v.skyline.size() ||
                    !std::equal(sky.begin(), sky.end(), v.skyline.begin(),
                                [](const SkyPoint& a, const SkyPoint& b) { return a.tf == b.tf && a.len == b.len; }))
                    f.fail("a field skyline does not match its postings");
            }
            std::uint64_t ftotal = 0, fdocs = 0;
            for (std::size_t d = 0; d < f.slots; ++d) {
                if (sums[d] != fd.len[d]) f.fail("document " + std::to_string(d) + " has a field length that is not the sum of its frequencies");
                ftotal += fd.len[d];
                fdocs += fd.len[d] > 0 ? 1 : 0;
                if (fd.len[d] > 0) has_field[d] = 1;
            }
            if (ftotal != fd.total || fdocs != fd.docs) f.fail("a field's total length or document count is wrong");
        }
        for (const auto h : has_field) fielded += h;
        if (live_count != f.live_count || total != f.total_len || postings != f.postings || fielded != f.fielded_docs)
            f.fail("the counts of documents, lengths or postings do not match the arrays");
        f.verified.store(true, std::memory_order_release);
    }
};

}  // namespace ragpp::detail::bm25
