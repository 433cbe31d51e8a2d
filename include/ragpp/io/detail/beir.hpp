// ragpp detail: the not-API helpers of io/beir.hpp (namespace detail), moved out of it.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include <ragpp/detail/json.hpp>

namespace ragpp {

namespace detail {
inline std::ifstream open_for_reading(const std::filesystem::path& path) {
    std::error_code ec;  // a folder opens as a stream that reads nothing: an empty file, silently
    if (std::filesystem::is_directory(path, ec)) throw IoError("cannot read '" + path.string() + "': it is a directory");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw IoError("cannot open '" + path.string() + "' for reading");
    return in;
}

/// Calls f(json, line_number) for each non-blank line of a JSON-lines file.
template <class F>
void for_each_jsonl(const std::filesystem::path& path, F&& f) {
    auto in = open_for_reading(path);
    std::string line;
    std::size_t n = 0;
    while (std::getline(in, line)) {
        ++n;
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        const nlohmann::json j = parse_json(line, path.string(), n);
        if (!j.is_object()) throw ParseError(path.string() + ":" + std::to_string(n) + ": expected a JSON object");
        f(j, n);
    }
}

inline std::string json_string_field(const nlohmann::json& j, const char* field, const std::filesystem::path& path,
                                     std::size_t line, bool required) {
    auto it = j.find(field);
    if (it == j.end() || it->is_null()) {
        if (required) throw ParseError(path.string() + ":" + std::to_string(line) + ": missing field '" + field + "'");
        return {};
    }
    if (it->is_string()) return it->get<std::string>();
    if (it->is_number_integer()) return std::to_string(it->get<long long>());
    throw ParseError(path.string() + ":" + std::to_string(line) + ": field '" + field + "' is not a string");
}
}  // namespace detail

}  // namespace ragpp
