// ragpp detail: the saved sources and chunk places of a Collection (retrieve/collection.hpp),
// used in place from a read or memory-mapped file: opening reads one record per source,
// never one per chunk.
//
// File (detail/binary_file.hpp's container, format "CHUNKPLC" version 1), payload:
//   u64 S | per source, sorted by id: str id | u64 n | u32 DocIds[n] (document order)
//   u64 U (one past the largest DocId placed)
//   then three arrays of U u32 indexed by DocId, each at a multiple of 64 bytes from the
//   start of the file: the source (its rank among the S; 0xFFFFFFFF for a DocId that is
//   no chunk) | the position in its source | the position of the first chunk of its section
//
// Checks at open: counts and sizes, source ids strictly increasing (O(S)); a lookup checks
// its entry against its source's list (a damaged entry is no place, never a read out of
// bounds); with verify, every entry at open.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ragpp/core/bitset.hpp>
#include <ragpp/core/error.hpp>
#include <ragpp/detail/binary_file.hpp>
#include <ragpp/detail/mapped_file.hpp>
#include <ragpp/filter/detail/frozen_metadata.hpp>

namespace ragpp::detail {

inline constexpr BinaryFormat places_format{"CHUNKPLC", 1, "chunk places", ""};
inline constexpr std::uint32_t no_source = 0xFFFFFFFFU;

using SourceChunks = std::map<std::string, std::vector<DocId>, std::less<>>;

class FrozenPlaces {
public:
    struct Entry {
        std::uint32_t source, position, section_start;
    };

    /// Reads the file at `path`; the sources and their chunks go to `sources` (copied: 4
    /// bytes a chunk), the three arrays stay in the file's bytes.
    FrozenPlaces(const std::filesystem::path& path, bool mmap, bool verify, SourceChunks& sources)
        : bytes_(std::make_shared<const FileBytes>(path, mmap)), file_("'" + path.string() + "'") {
        BinaryReader in(bytes_->view(), places_format, path.string(), verify);
        payload_ = bytes_->view().substr(binary_header_size);
        SourceChunks out;
        const std::size_t s = in.count("source count", 12);
        names_.reserve(s);
        for (std::size_t i = 0; i < s; ++i) {
            const std::string_view name = in.str("source id");
            if (!names_.empty() && !(names_.back() < name)) in.fail("source '" + std::string(name) + "' is out of order");
            names_.push_back(name);
            auto& ids = out.emplace_hint(out.end(), std::string(name), std::vector<DocId>{})->second;
            in.array(ids, in.count("chunk count", 4), "chunk DocIds");
            chunks_ += ids.size();
        }
        universe_ = in.u64("universe");
        if (universe_ > in.remaining() / 12) in.fail("universe " + std::to_string(universe_) + " does not fit");
        for (const std::uint32_t** a : {&source_, &position_, &section_start_}) {
            skip_padding(in, 64);
            *a = reinterpret_cast<const std::uint32_t*>(in.raw(universe_ * 4, "places").data());
        }
        in.expect_end();
        if (verify) verify_all(out);
        sources = std::move(out);
    }

    [[nodiscard]] std::size_t chunks() const noexcept { return chunks_; }
    [[nodiscard]] std::uint64_t universe() const noexcept { return universe_; }
    [[nodiscard]] std::string_view source_name(std::uint32_t s) const { return names_.at(s); }
    [[nodiscard]] std::string_view payload() const noexcept { return payload_; }

    /// The entry of `id`, or nothing when it is no chunk or its entry is out of range.
    [[nodiscard]] std::optional<Entry> at(DocId id) const noexcept {
        if (id >= universe_ || source_[id] >= names_.size() || section_start_[id] > position_[id]) return std::nullopt;
        return Entry{source_[id], position_[id], section_start_[id]};
    }

    /// Every entry against the sources' lists.
    void verify_all(const SourceChunks& sources) const {
        DocSet seen(static_cast<std::size_t>(universe_));
        std::uint32_t s = 0;
        for (const auto& [name, ids] : sources) {
            for (std::size_t i = 0; i < ids.size(); ++i) {
                const DocId id = ids[i];
                const auto e = at(id);
                if (seen.test(id) || !e || e->source != s || e->position != i ||
                    (e->section_start != i && (i == 0 || section_start_[ids[i - 1]] != e->section_start)))
                    fail("the place of chunk " + std::to_string(id) + " of '" + name + "' is wrong");
                seen.set(id);
            }
            ++s;
        }
        for (std::uint64_t id = 0; id < universe_; ++id)
            if (!seen.test(static_cast<DocId>(id)) && source_[id] != no_source)
                fail("DocId " + std::to_string(id) + " is placed but listed by no source");
    }

    [[noreturn]] void fail(const std::string& what) const { throw FormatError(file_ + ": " + what); }

private:
    std::shared_ptr<const FileBytes> bytes_;
    std::string file_;
    std::string_view payload_;
    std::vector<std::string_view> names_;
    std::size_t chunks_ = 0;
    std::uint64_t universe_ = 0;
    const std::uint32_t* source_ = nullptr;
    const std::uint32_t* position_ = nullptr;
    const std::uint32_t* section_start_ = nullptr;
};

}  // namespace ragpp::detail
