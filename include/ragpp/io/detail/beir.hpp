// ragpp detail: the not-API helpers of io/beir.hpp (namespace detail), moved out of it.
#pragma once

#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

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

/// The first key that appears twice in one object (at any depth) of the valid JSON
/// `text`, or nullopt. nlohmann keeps the last of duplicate keys silently, so a second
/// "metadata" would replace the first. A second parse that keeps no value.
[[nodiscard]] inline std::optional<std::string> json_duplicate_key(std::string_view text) {
    std::vector<std::set<std::string>> open;  // the keys of each open object
    std::optional<std::string> duplicate;
    using event = nlohmann::json::parse_event_t;
    const nlohmann::json kept = nlohmann::json::parse(
        text,
        [&](int, event e, nlohmann::json& parsed) {
            if (e == event::object_start) open.emplace_back();
            else if (e == event::object_end && !open.empty()) open.pop_back();
            else if (e == event::key && !open.empty() && !duplicate && !open.back().insert(parsed.get<std::string>()).second)
                duplicate = parsed.get<std::string>();
            return e != event::value;  // keep nothing: only the keys are wanted
        },
        false);
    (void)kept;
    return duplicate;
}

/// Calls f(json, line_number) for each non-blank line of a JSON-lines file. A line that
/// is not an object, or holds a key twice in one object, is a ParseError naming it.
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
        if (const auto key = json_duplicate_key(line))
            throw ParseError(path.string() + ":" + std::to_string(n) + ": key '" + *key + "' appears twice in one object");
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
