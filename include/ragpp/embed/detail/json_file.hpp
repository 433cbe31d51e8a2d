// ragpp detail (embed/): a whole JSON file (detail::read_file, then nlohmann's parser), with
// errors naming the file.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include <ragpp/core/error.hpp>
#include <ragpp/detail/file.hpp>

namespace ragpp::detail {

/// The JSON value of `p`. Throws IoError (cannot read) or ParseError, naming the file.
[[nodiscard]] inline nlohmann::json read_json_file(const std::filesystem::path& p) {
    const std::string text = read_file(p);
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        throw ParseError("'" + p.string() + "': " + e.what());
    }
}

/// read_json_file, or nullopt when `p` does not exist.
[[nodiscard]] inline std::optional<nlohmann::json> read_json_if_exists(const std::filesystem::path& p) {
    if (!std::filesystem::exists(p)) return std::nullopt;
    return read_json_file(p);
}

}  // namespace ragpp::detail
