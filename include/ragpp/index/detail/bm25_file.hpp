// ragpp detail: the BM25 index file (not API): BM25Index::to_bytes / from_bytes in the
// container of every ragpp index file (detail/binary_file.hpp), format id "BM25INDX".
//
// Payload (format 4; format 3 stored the body postings as (u32 doc, u32 tf) pairs,
// formats 1 and 2 had their own header, magic "RGPPBM25"; all are refused as written
// by an older ragpp):
//   str analyzer name | u8 variant | f64 k1, b, delta, epsilon
//   f64 title, headings, path weights, field_b
//   u64 slots | slots x (u8 live, u32 length)
//   u64 terms | terms x (str term | u64 n | u64 bytes | the list's blocks, as in
//                        bm25_blocks.hpp, the tail compressed into a last block)
//   3 x (title, headings, path): u64 terms | terms x (str term | u64 n | n x (u32 doc, u32 tf))
//   (a field's length is the sum of its frequencies; terms without a live document are
//   not saved)
// Every count is checked against the bytes left before anything is sized by it, and
// every block is decoded and checked (header fields, bit widths, sizes, increasing
// live documents, tf >= 1, its max tf and min length bounds) before it is used.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>
#include <ragpp/detail/binary_file.hpp>
#include <ragpp/index/bm25/scoring.hpp>
#include <ragpp/index/detail/bm25_blocks.hpp>
#include <ragpp/index/detail/bm25_postings.hpp>

namespace ragpp::detail::bm25 {

inline constexpr BinaryFormat file_format{"BM25INDX", 4, "BM25 index", "RGPPBM25"};

/// Reads and writes a BM25Index's private state (a friend of BM25Index).
struct Codec {
    /// A terms section: the count of terms with postings, then each with its postings.
    static void write_terms(BinaryWriter& w, const TermDict& dict, const std::vector<TermData>& terms) {
        std::uint64_t count = 0;
        for (const auto& td : terms) count += td.postings.empty() ? 0 : 1;
        w.u64(count);
        for (std::size_t t = 0; t < terms.size(); ++t) {
            const auto& pl = terms[t].postings;
            if (pl.empty()) continue;
            w.str(dict.name(static_cast<std::uint32_t>(t)));
            w.u64(pl.size());
            for (const auto& p : pl) {
                w.u32(p.doc);
                w.u32(p.tf);
            }
        }
    }

    /// The body terms section: each list's blocks, its tail compressed into a last block.
    static void write_lists(BinaryWriter& w, const TermDict& dict, const std::vector<BlockTermData>& terms,
                            const std::vector<std::uint32_t>& lens) {
        std::uint64_t count = 0;
        for (const auto& td : terms) count += td.postings.empty() ? 0 : 1;
        w.u64(count);
        std::vector<std::uint8_t> last;
        for (std::size_t t = 0; t < terms.size(); ++t) {
            const auto& pl = terms[t].postings;
            if (pl.empty()) continue;
            last.clear();
            if (pl.tail_size() != 0) encode_block(last, pl.tail().data(), pl.tail_size(), lens.data());
            w.str(dict.name(static_cast<std::uint32_t>(t)));
            w.u64(pl.size());
            w.u64(pl.blocks().size() + last.size());
            w.bytes(pl.blocks().data(), pl.blocks().size());
            w.bytes(last.data(), last.size());
        }
    }

    /// Checks the blocks of a list read from a file (n postings) and calls
    /// f(doc, tf) for each posting; returns the last block's count.
    template <class F>
    static std::uint32_t check_blocks(BinaryReader& r, std::string_view name, std::string_view bytes, std::size_t n,
                                      const std::vector<std::uint8_t>& live, const std::vector<std::uint32_t>& lens,
                                      F&& f) {
        const auto* p = reinterpret_cast<const std::uint8_t*>(bytes.data());
        const std::size_t size = bytes.size();
        auto bad = [&](const std::string& what) {
            r.fail("postings of term '" + std::string(name) + "': " + what);
        };
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
                if (docs[i] >= live.size() || !live[docs[i]])
                    bad("a posting for absent document " + std::to_string(docs[i]));
                if (tfs[i] == 0) bad("a zero frequency");
                if (tfs[i] > h.max_tf || lens[docs[i]] < h.min_len) bad("a block's bound does not hold");
                f(docs[i], tfs[i]);
            }
            seen += h.count;
            last_count = h.count;
            at += h.bytes();
        }
        if (seen != n) bad(std::to_string(seen) + " postings in the blocks, " + std::to_string(n) + " announced");
        return last_count;
    }

    template <class Index>
    [[nodiscard]] static std::string write(const Index& ix) {
        BinaryWriter w;
        w.str(ix.analyzer_.name());
        w.u8(static_cast<std::uint8_t>(ix.params_.variant));
        w.f64(ix.params_.k1);
        w.f64(ix.params_.b);
        w.f64(ix.params_.delta);
        w.f64(ix.params_.epsilon);
        w.f64(ix.params_.field_weights.title);
        w.f64(ix.params_.field_weights.headings);
        w.f64(ix.params_.field_weights.path);
        w.f64(ix.params_.field_b);
        w.u64(ix.live_.size());
        for (std::size_t i = 0; i < ix.live_.size(); ++i) {
            w.u8(ix.live_[i]);
            w.u32(ix.doc_len_[i]);
        }
        write_lists(w, ix.dict_, ix.terms_, ix.doc_len_);
        for (const auto& fd : ix.fields_) write_terms(w, ix.dict_, fd.terms);
        return w.finish(file_format);
    }

    template <class Index, class A>
    [[nodiscard]] static Index read(std::string_view bytes, std::string_view source, A analyzer, bool verify = true) {
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
        const std::size_t slots = r.count("document slots", 5);
        if (slots > std::size_t{std::numeric_limits<DocId>::max()} + 1) r.fail("too many document slots");
        index.live_.resize(slots);
        index.doc_len_.resize(slots);
        for (std::size_t i = 0; i < slots; ++i) {
            const std::uint8_t live = r.u8("document live flag");
            if (live > 1) r.fail("document " + std::to_string(i) + " has live flag " + std::to_string(live));
            index.live_[i] = live;
            index.doc_len_[i] = r.u32("document length");
            if (!live && index.doc_len_[i] != 0) r.fail("removed document " + std::to_string(i) + " has a length");
            index.live_count_ += live;
            index.total_len_ += index.doc_len_[i];
        }
        const std::size_t nterms = r.count("term count", 4 + 8 + 8);
        std::vector<std::uint64_t> tf_sum(slots, 0);
        for (std::size_t t = 0; t < nterms; ++t) {
            const std::string_view name = r.str("term");
            if (index.dict_.find(name) != index.dict_.npos) r.fail("term '" + std::string(name) + "' appears twice");
            const std::uint32_t tid = index.intern(name);
            const std::uint64_t n = r.u64("posting count");
            if (n == 0) r.fail("term '" + std::string(name) + "' has no posting");
            if (n > slots) r.fail("term '" + std::string(name) + "' has more postings than documents");
            const std::size_t nbytes = r.count("block bytes", 1);
            const std::string_view blocks = r.raw(nbytes, "blocks");
            auto& td = index.terms_[tid];
            DocId last = 0;
            const std::uint32_t last_count =
                check_blocks(r, name, blocks, static_cast<std::size_t>(n), index.live_, index.doc_len_,
                             [&](DocId doc, std::uint32_t tf) {
                                 tf_sum[doc] += tf;
                                 td.add_point({tf, index.doc_len_[doc]});
                                 last = doc;
                             });
            td.postings.adopt(std::vector<std::uint8_t>(blocks.begin(), blocks.end()), static_cast<std::size_t>(n), last,
                              last_count);
            index.posting_count_ += n;
        }
        static constexpr const char* names[3] = {"title", "headings", "path"};
        for (std::size_t f = 0; f < index.fields_.size(); ++f) {
            auto& fd = index.fields_[f];
            const std::size_t nf = r.count("field term count", 4 + 8 + 8);
            if (nf == 0) continue;  // no per-slot arrays for an empty field
            std::vector<std::vector<std::uint32_t>> ids(slots);  // term ids of each document
            fd.len.assign(slots, 0);
            fd.fwd.assign(slots, {});
            for (std::size_t t = 0; t < nf; ++t) {
                const std::string_view name = r.str("field term");
                const std::uint32_t tid = index.intern(name);
                if (tid < fd.terms.size() && !fd.terms[tid].postings.empty())
                    r.fail(std::string(names[f]) + " term '" + std::string(name) + "' appears twice");
                if (fd.terms.size() < index.terms_.size()) fd.terms.resize(index.terms_.size());
                const std::size_t n = r.count("posting count", 8);
                if (n == 0) r.fail(std::string(names[f]) + " term '" + std::string(name) + "' has no posting");
                auto& pl = fd.terms[tid].postings;
                pl.resize(n);
                for (std::size_t i = 0; i < n; ++i) {
                    const DocId doc = r.u32("posting document");
                    const std::uint32_t tf = r.u32("posting frequency");
                    if (doc >= slots || !index.live_[doc])
                        r.fail(std::string(names[f]) + " term '" + std::string(name) +
                               "' has a posting for absent document " + std::to_string(doc));
                    if (i > 0 && doc <= pl[i - 1].doc)
                        r.fail("postings of " + std::string(names[f]) + " term '" + std::string(name) +
                               "' are not in increasing document order");
                    if (tf == 0) r.fail(std::string(names[f]) + " term '" + std::string(name) + "' has a zero frequency");
                    if (std::uint64_t{fd.len[doc]} + tf > std::numeric_limits<std::uint32_t>::max())
                        r.fail("document " + std::to_string(doc) + " has a " + names[f] + " field too long");
                    pl[i] = {doc, tf};
                    fd.len[doc] += tf;
                    ids[doc].push_back(tid);
                }
            }
            for (std::size_t d = 0; d < slots; ++d) {
                fd.total += fd.len[d];
                fd.docs += fd.len[d] > 0 ? 1 : 0;
                std::sort(ids[d].begin(), ids[d].end());
                std::uint32_t prev = 0;
                for (const std::uint32_t t : ids[d]) {
                    put_varint(fd.fwd[d], t - prev);
                    prev = t;
                }
            }
            for (auto& td : fd.terms)
                for (const auto& q : td.postings) td.add_point({q.tf, fd.len[q.doc]});
        }
        for (std::size_t d = 0; d < slots; ++d)
            if (index.fields_[0].length(static_cast<DocId>(d)) + index.fields_[1].length(static_cast<DocId>(d)) +
                    index.fields_[2].length(static_cast<DocId>(d)) >
                0)
                ++index.fielded_docs_;
        if (r.remaining() != 0) r.fail("unexpected bytes after the postings");
        for (std::size_t i = 0; i < slots; ++i)
            if (tf_sum[i] != index.doc_len_[i])
                r.fail("document " + std::to_string(i) + " has length " + std::to_string(index.doc_len_[i]) +
                       " but its postings sum to " + std::to_string(tf_sum[i]));
        return index;
    }
};

}  // namespace ragpp::detail::bm25
