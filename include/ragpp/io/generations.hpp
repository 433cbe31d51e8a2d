// ragpp: an index folder whose parts are replaced atomically, as a whole.
//
// (declarations first; the implementation follows in the next commit)
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <ragpp/core/error.hpp>

namespace ragpp {

/// One part of a generation: its file name (no '/'), size and FNV-1a-64 checksum.
struct GenerationPart {
    std::string name;
    std::uint64_t size = 0;
    std::uint64_t checksum = 0;
};

/// Writes a new generation of the folder `dir` beside the current one; nothing is
/// visible until commit().
class GenerationWriter {
public:
    explicit GenerationWriter(std::filesystem::path dir) : dir_(std::move(dir)) { throw UnsupportedError("not yet"); }
    GenerationWriter(const GenerationWriter&) = delete;
    GenerationWriter& operator=(const GenerationWriter&) = delete;
    ~GenerationWriter() = default;

    /// Where to write part `name`.
    [[nodiscard]] std::filesystem::path path(std::string_view name) const { return partial_ / name; }
    /// Writes part `name` with `bytes`.
    void write(std::string_view, std::string_view) { throw UnsupportedError("not yet"); }
    /// Makes the generation current; returns its number.
    std::uint64_t commit(const nlohmann::json&) { throw UnsupportedError("not yet"); }

private:
    std::filesystem::path dir_;
    std::filesystem::path partial_;
};

struct OpenedGeneration {
    std::filesystem::path dir;  // the generation's folder: read parts from dir / name
    std::uint64_t generation = 0;
    nlohmann::json info;        // what commit() was given
    std::vector<GenerationPart> parts;
};

inline OpenedGeneration open_generation(const std::filesystem::path&, bool = true) { throw UnsupportedError("not yet"); }

inline std::size_t clean_generations(const std::filesystem::path&) { throw UnsupportedError("not yet"); }

}  // namespace ragpp
