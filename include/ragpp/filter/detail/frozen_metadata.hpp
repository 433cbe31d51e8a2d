// ragpp detail: the saved form of a MetadataIndex (filter/metadata_index.hpp), used in
// place from a read or memory-mapped file: opening it reads one record per field, never
// one per value or per document, and a filter reads only the postings it needs.
//
// File (detail/binary_file.hpp's container, format "METAINDX" version 1), payload:
//   u64 universe U (one past the largest indexed DocId) | u64 size (indexed documents)
//   u64 h | u32 holes[h] (the DocIds below U that are not indexed, increasing)
//   u64 E (posting entries) | u64 F (fields)
//   per field, sorted by name:
//     str name | u64 presence posting [begin, end) | u64 S, N, D (string, number, date values)
//     pad to 8 | u64 text[S + 1] (offsets into the field's text) | u64 strings' postings[S + 1]
//     | text (the S values, sorted, concatenated)
//     pad to 8 | f64 numbers[N] (increasing) | u64 numbers' postings[N + 1]
//     | i32 dates[D] (days, increasing) | pad to 8 | u64 dates' postings[D + 1]
//   pad to 8 | u32 postings[E] (each term's DocIds, increasing; a term's posting is
//   postings[p[i], p[i + 1]) of its table p)
// Padding is counted from the start of the file, so every array is aligned in a mapped
// file. Postings of consecutive values are consecutive: a range filter reads one span.
//
// Checks: every count and array against the bytes left at open (O(fields)); offsets and
// DocIds when a lookup uses them (a FormatError naming the file, never a read out of
// bounds); with verify, everything at open (orders, offsets, DocIds) - check() does that.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <ragpp/core/bitset.hpp>
#include <ragpp/core/error.hpp>
#include <ragpp/detail/binary_file.hpp>
#include <ragpp/detail/mapped_file.hpp>

namespace ragpp::detail {

inline constexpr BinaryFormat metadata_format{"METAINDX", 1, "metadata index", ""};

/// Skips the zero padding to the next multiple of `a` bytes from the start of the file.
inline void skip_padding(BinaryReader& in, std::size_t a) { (void)in.raw((a - in.offset() % a) % a, "padding"); }
/// Writes zeros up to the next multiple of `a` bytes of `at`, the file offset of the next byte.
inline void write_padding(BinaryWriter& w, std::size_t& at, std::size_t a) {
    static constexpr char zeros[64] = {};
    const std::size_t n = (a - at % a) % a;
    w.bytes(zeros, n);
    at += n;
}

struct FrozenMetadataField {
    std::string_view name;
    std::uint64_t present_begin = 0, present_end = 0;
    std::size_t strings = 0, numbers = 0, dates = 0;
    const std::uint64_t* text_at = nullptr;       // strings + 1
    const std::uint64_t* string_postings = nullptr;  // strings + 1
    std::string_view text;
    const double* number_values = nullptr;
    const std::uint64_t* number_postings = nullptr;  // numbers + 1
    const std::int32_t* date_values = nullptr;
    const std::uint64_t* date_postings = nullptr;  // dates + 1
};

/// A MetadataIndex file, parsed down to its fields (the arrays stay in the file's bytes).
class FrozenMetadata {
public:
    /// `max_universe` bounds the universe before anything is allocated for it.
    FrozenMetadata(const std::filesystem::path& path, bool mmap, bool verify,
                   std::uint64_t max_universe = std::uint64_t{1} << 32)
        : bytes_(std::make_shared<const FileBytes>(path, mmap)), file_("'" + path.string() + "'") {
        BinaryReader in(bytes_->view(), metadata_format, path.string(), verify);
        payload_ = bytes_->view().substr(binary_header_size);
        universe_ = in.u64("universe");
        size_ = in.u64("size");
        if (universe_ > std::min(max_universe, std::uint64_t{1} << 32))
            in.fail("universe " + std::to_string(universe_) + " is beyond the " +
                    std::to_string(std::min(max_universe, std::uint64_t{1} << 32)) + " DocIds expected");
        const std::size_t h = in.count("hole count", 4);
        holes_ = {reinterpret_cast<const DocId*>(in.raw(h * 4, "holes").data()), h};
        if (h > universe_ || universe_ - h != size_)
            in.fail("size " + std::to_string(size_) + " is not the universe " + std::to_string(universe_) + " less " +
                    std::to_string(h) + " holes");
        entries_ = in.u64("posting entries");
        const std::size_t f = in.count("field count", 40);
        fields_.resize(f);
        for (auto& x : fields_) {
            x.name = in.str("field name");
            x.present_begin = in.u64("presence posting");
            x.present_end = in.u64("presence posting");
            x.strings = in.count("string values", 16);
            x.numbers = in.count("number values", 16);
            x.dates = in.count("date values", 12);
            skip_padding(in, 8);
            x.text_at = table(in, x.strings + 1, "string offsets");
            x.string_postings = table(in, x.strings + 1, "string postings");
            const std::uint64_t text = x.text_at[x.strings];
            if (text > in.remaining()) in.fail("the text of field '" + std::string(x.name) + "' does not fit");
            x.text = in.raw(text, "string values");
            skip_padding(in, 8);
            x.number_values = reinterpret_cast<const double*>(in.raw(x.numbers * 8, "number values").data());
            x.number_postings = table(in, x.numbers + 1, "number postings");
            x.date_values = reinterpret_cast<const std::int32_t*>(in.raw(x.dates * 4, "date values").data());
            skip_padding(in, 8);
            x.date_postings = table(in, x.dates + 1, "date postings");
        }
        skip_padding(in, 8);
        if (entries_ > in.remaining() / 4) in.fail("posting entries " + std::to_string(entries_) + " do not fit");
        postings_ = reinterpret_cast<const DocId*>(in.raw(entries_ * 4, "postings").data());
        in.expect_end();
        for (std::size_t i = 1; i < fields_.size(); ++i)
            if (!(fields_[i - 1].name < fields_[i].name)) in.fail("field '" + std::string(fields_[i].name) + "' is out of order");
        if (verify) verify_all();
    }

    [[nodiscard]] std::uint64_t universe() const noexcept { return universe_; }
    [[nodiscard]] std::uint64_t size() const noexcept { return size_; }
    [[nodiscard]] std::uint64_t entries() const noexcept { return entries_; }
    [[nodiscard]] std::span<const DocId> holes() const noexcept { return holes_; }
    [[nodiscard]] const std::vector<FrozenMetadataField>& fields() const noexcept { return fields_; }
    /// The payload as read (save() of an unchanged index writes it again).
    [[nodiscard]] std::string_view payload() const noexcept { return payload_; }

    [[nodiscard]] const FrozenMetadataField* field(std::string_view name) const {
        auto it = std::lower_bound(fields_.begin(), fields_.end(), name,
                                   [](const FrozenMetadataField& f, std::string_view n) { return f.name < n; });
        return it != fields_.end() && it->name == name ? &*it : nullptr;
    }
    /// String value i of `f` (offsets checked).
    [[nodiscard]] std::string_view string_at(const FrozenMetadataField& f, std::size_t i) const {
        const std::uint64_t b = f.text_at[i], e = f.text_at[i + 1];
        if (b > e || e > f.text.size()) fail("field '" + std::string(f.name) + "': string offsets out of order");
        return f.text.substr(b, e - b);
    }
    /// The index of string value `v` of `f`, or f.strings.
    [[nodiscard]] std::size_t find_string(const FrozenMetadataField& f, std::string_view v) const {
        std::size_t lo = 0, hi = f.strings;
        while (lo < hi) {
            const std::size_t mid = lo + (hi - lo) / 2;
            if (string_at(f, mid) < v) lo = mid + 1;
            else hi = mid;
        }
        return lo < f.strings && string_at(f, lo) == v ? lo : f.strings;
    }
    /// postings[b, e) (bounds checked), as DocIds below the universe when read by set_all.
    [[nodiscard]] std::span<const DocId> posting(std::uint64_t b, std::uint64_t e, std::string_view field) const {
        if (b > e || e > entries_) fail("field '" + std::string(field) + "': a posting is out of bounds");
        return {postings_ + b, static_cast<std::size_t>(e - b)};
    }
    /// Sets the DocIds of postings[b, e) in `s`.
    void set_all(DocSet& s, std::uint64_t b, std::uint64_t e, std::string_view field) const {
        for (DocId id : posting(b, e, field)) {
            if (id >= universe_) fail("field '" + std::string(field) + "': DocId " + std::to_string(id) + " is beyond the universe");
            s.set(id);
        }
    }

    /// Every order, offset and DocId (what a lookup checks lazily), at once.
    void verify_all() const {
        DocSet live = DocSet::all(static_cast<std::size_t>(universe_));
        for (std::size_t i = 0; i < holes_.size(); ++i) {
            if (holes_[i] >= universe_ || (i > 0 && holes_[i] <= holes_[i - 1])) fail("the holes are out of order");
            live.reset(holes_[i]);
        }
        std::uint64_t at = 0;  // postings are written in field and value order, back to back
        auto check = [&](std::uint64_t b, std::uint64_t e, std::string_view field) {
            if (b != at) fail("field '" + std::string(field) + "': postings are not back to back");
            const auto p = posting(b, e, field);
            if (p.empty()) fail("field '" + std::string(field) + "': an empty posting");
            for (std::size_t i = 0; i < p.size(); ++i)
                if (!live.test(p[i]) || (i > 0 && p[i] <= p[i - 1]))
                    fail("field '" + std::string(field) + "': DocId " + std::to_string(p[i]) + " is out of order or not indexed");
            at = e;
        };
        for (const auto& f : fields_) {
            check(f.present_begin, f.present_end, f.name);
            for (std::size_t i = 0; i < f.strings; ++i) {
                if (i > 0 && !(string_at(f, i - 1) < string_at(f, i))) fail("field '" + std::string(f.name) + "': strings out of order");
                check(f.string_postings[i], f.string_postings[i + 1], f.name);
            }
            if (f.text_at[0] != 0 || f.text_at[f.strings] != f.text.size()) fail("field '" + std::string(f.name) + "': bad text");
            for (std::size_t i = 0; i < f.numbers; ++i) {
                if (!(f.number_values[i] == f.number_values[i]) || (i > 0 && !(f.number_values[i - 1] < f.number_values[i])))
                    fail("field '" + std::string(f.name) + "': numbers out of order");
                check(f.number_postings[i], f.number_postings[i + 1], f.name);
            }
            for (std::size_t i = 0; i < f.dates; ++i) {
                if (i > 0 && !(f.date_values[i - 1] < f.date_values[i])) fail("field '" + std::string(f.name) + "': dates out of order");
                check(f.date_postings[i], f.date_postings[i + 1], f.name);
            }
        }
        if (at != entries_) fail("postings are not back to back");
    }

    [[noreturn]] void fail(const std::string& what) const { throw FormatError(file_ + ": " + what); }

private:
    static const std::uint64_t* table(BinaryReader& in, std::size_t n, const char* what) {
        if (n > in.remaining() / 8) in.fail(std::string("truncated while reading ") + what);
        return reinterpret_cast<const std::uint64_t*>(in.raw(n * 8, what).data());
    }

    std::shared_ptr<const FileBytes> bytes_;
    std::string file_;
    std::string_view payload_;
    std::uint64_t universe_ = 0, size_ = 0, entries_ = 0;
    std::span<const DocId> holes_;
    std::vector<FrozenMetadataField> fields_;
    const DocId* postings_ = nullptr;
};

}  // namespace ragpp::detail
