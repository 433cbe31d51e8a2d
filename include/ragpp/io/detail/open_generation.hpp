// ragpp detail: one attempt of open_generation() (io/generations.hpp) at the generation CURRENT names.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <system_error>
#include <utility>

#include <nlohmann/json.hpp>

#include <ragpp/core/error.hpp>
#include <ragpp/detail/file_io.hpp>
#include <ragpp/detail/hash.hpp>
#include <ragpp/io/detail/generations.hpp>
#include <ragpp/io/generation_parts.hpp>

namespace ragpp {

namespace detail::generations {

/// One attempt of open_generation() at the generation `pointer` names.
inline OpenedGeneration open_at(const std::filesystem::path& dir, const Pointer& pointer, bool verify) {
    namespace fs = std::filesystem;
    OpenedGeneration out;
    out.generation = pointer.generation;
    out.dir = dir / folder_name(pointer.generation);
    const std::string where = "generation " + std::to_string(pointer.generation) + " of '" + dir.string() + "'";
    const auto manifest_file = out.dir / manifest_name;
    std::string text;
    try {
        text = read_small_file(manifest_file, pointer.manifest_size);
    } catch (const Error& e) {
        throw FormatError(where + ": its manifest '" + manifest_file.string() + "' cannot be read (" + e.what() + ")");
    }
    if (text.size() != pointer.manifest_size || fnv1a64(text) != pointer.manifest_checksum)
        throw FormatError(where + ": its manifest '" + manifest_file.string() + "' does not match " +
                          std::string(pointer_name) + " (size or checksum differ: corrupted)");
    nlohmann::json m;
    try {
        m = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        throw FormatError(where + ": '" + manifest_file.string() + "' is not JSON: " + e.what());
    }
    auto field = [&](const char* name) -> const nlohmann::json& {
        if (!m.is_object() || !m.contains(name))
            throw FormatError(where + ": '" + manifest_file.string() + "' has no field '" + name + "'");
        return m[name];
    };
    if (field("format") != manifest_format || field("version") != manifest_version)
        throw FormatError(where + ": '" + manifest_file.string() + "' is not a version " + std::to_string(manifest_version) +
                          " " + std::string(manifest_format) + " manifest");
    if (field("generation") != pointer.generation)
        throw FormatError(where + ": '" + manifest_file.string() + "' belongs to another generation");
    out.info = field("info");
    const auto& parts = field("parts");
    if (!parts.is_array()) throw FormatError(where + ": field 'parts' of '" + manifest_file.string() + "' is not an array");
    std::set<std::string, std::less<>> seen;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const auto& p = parts[i];
        const std::string at = where + ": parts[" + std::to_string(i) + "] of '" + manifest_file.string() + "'";
        if (!p.is_object() || !p.contains("name") || !p["name"].is_string() || !p.contains("size") ||
            !p["size"].is_number_unsigned() || !p.contains("fnv1a64") || !p["fnv1a64"].is_string())
            throw FormatError(at + " needs 'name' (string), 'size' (unsigned) and 'fnv1a64' (16 hex digits)");
        GenerationPart part{p["name"].get<std::string>(), p["size"].get<std::uint64_t>(), 0};
        const auto sum = detail::parse_hex64(p["fnv1a64"].get<std::string>());
        if (!sum) throw FormatError(at + ": field 'fnv1a64' is not 16 hex digits");
        part.checksum = *sum;
        try {
            check_part_name(part.name, "open_generation");
        } catch (const InvalidArgument&) {
            throw FormatError(at + ": part name '" + part.name + "' is not a plain file name");
        }
        if (!seen.insert(part.name).second) throw FormatError(at + ": part '" + part.name + "' is listed twice");
        out.parts.push_back(std::move(part));
    }
    for (const auto& part : out.parts) {
        const auto file = out.dir / part.name;
        const std::string which = where + ": part '" + part.name + "' ('" + file.string() + "')";
        std::error_code ec;
        const auto st = fs::symlink_status(file, ec);
        if (ec || !fs::exists(st)) throw FormatError(which + " is missing");
        if (!fs::is_regular_file(st)) throw FormatError(which + " is not a regular file");
        const auto size = fs::file_size(file, ec);
        if (ec) throw FormatError(which + " cannot be read: " + ec.message());
        if (size != part.size)
            throw FormatError(which + " has " + std::to_string(size) + " bytes, the manifest says " +
                              std::to_string(part.size) + " (truncated or replaced)");
        if (verify) {
            SizedHash h;
            try {
                const auto fd = open_regular_for_reading(file);
                h = hash_fd(fd.get(), file);
            } catch (const Error& e) {
                throw FormatError(which + " cannot be read: " + e.what());
            }
            if (h.size != part.size || h.hash != part.checksum)
                throw FormatError(which + ": checksum mismatch (the file is corrupted)");
        }
    }
    return out;
}

}  // namespace detail::generations

}  // namespace ragpp
