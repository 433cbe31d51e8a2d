// ragpp: the parts of a generation (GenerationPart) and a generation as opened (OpenedGeneration), of io/generations.hpp.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ragpp {

/// One part of a generation: its file name (no '/'), size in bytes and FNV-1a-64
/// checksum of its content (detail::fnv1a64).
struct GenerationPart {
    std::string name;
    std::uint64_t size = 0;
    std::uint64_t checksum = 0;
};

/// The current generation of an index folder, as open_generation() found it.
struct OpenedGeneration {
    std::filesystem::path dir;  // the generation's folder: read parts from dir / name
    std::uint64_t generation = 0;
    nlohmann::json info;        // what commit() was given
    std::vector<GenerationPart> parts;

    /// The part called `name`, or nullptr.
    [[nodiscard]] const GenerationPart* part(std::string_view name) const {
        for (const auto& p : parts)
            if (p.name == name) return &p;
        return nullptr;
    }
};

}  // namespace ragpp
