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

// --- binary format ----------------------------------------------------------------

/// FNV-1a, 64 bits (Fowler, Noll, Vo; parameters from the IETF draft
/// draft-eastlake-fnv): h = (h xor byte) * 0x100000001b3, from 0xcbf29ce484222325.
[[nodiscard]] inline std::uint64_t fnv1a64(std::string_view bytes) noexcept {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (unsigned char c : bytes) {
        h ^= c;
        h *= 0x100000001b3ULL;
    }
    return h;
}

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

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename,
/// so a crash mid-save leaves any previous file intact. Throws IoError.
inline void write_file_atomically(const std::filesystem::path& path, std::string_view bytes) {
    auto tmp = path;
    tmp += ".tmp-" + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) throw IoError("cannot open '" + tmp.string() + "' for writing");
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        out.flush();
        if (!out) {
            out.close();
            std::error_code ec;
            std::filesystem::remove(tmp, ec);
            throw IoError("cannot write '" + tmp.string() + "' (disk full?)");
        }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        std::error_code ignored;
        std::filesystem::remove(tmp, ignored);
        throw IoError("cannot rename '" + tmp.string() + "' to '" + path.string() + "': " + ec.message());
    }
}

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
