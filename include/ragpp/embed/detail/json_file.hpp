// ragpp detail (embed/): a whole JSON file (detail::read_file, then detail::parse_json: depth-limited), with
// errors naming the file.
#pragma once

#include <filesystem>
#include <optional>
#include <system_error>
#include <string>

#include <nlohmann/json.hpp>

#include <ragpp/core/error.hpp>
#include <ragpp/detail/file.hpp>
#include <ragpp/detail/json.hpp>

namespace ragpp::detail {

/// The JSON value of `p`. Throws IoError (cannot read) or ParseError, naming the file.
[[nodiscard]] inline nlohmann::json read_json_file(const std::filesystem::path& p) {
    return parse_json(read_file(p), p.string());
}

/// read_json_file, or nullopt when `p` does not exist.
[[nodiscard]] inline std::optional<nlohmann::json> read_json_if_exists(const std::filesystem::path& p) {
    std::error_code ec;  // a name too long or a permission error: not found here, read_file names it
    if (!std::filesystem::exists(p, ec) && !ec) return std::nullopt;
    return read_json_file(p);
}

}  // namespace ragpp::detail
