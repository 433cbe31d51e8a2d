// ragpp: the Metadata <-> JSON codec of JSONL corpora (and of index folders before
// version 3). A string is a JSON string, a number a JSON number, a list of strings a JSON
// array, and a date an object {"date": "YYYY-MM-DD"}, so that it reads back as a date
// and not as a string. Reading also accepts booleans (stored as "true" / "false") and
// null (the field is absent).
#pragma once

#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>

namespace ragpp {

/// The JSON object of `m`, one member per field.
[[nodiscard]] inline nlohmann::json metadata_to_json(const Metadata& m) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& field : m) {
        const std::string& k = field.first;  // (clang 14 cannot capture a structured binding)
        std::visit(
            [&](const auto& x) {
                using T = std::decay_t<decltype(x)>;
                if constexpr (std::is_same_v<T, Date>) j[k] = {{"date", x.to_string()}};
                else j[k] = x;
            },
            field.second);
    }
    return j;
}

/// The Metadata of a JSON object (null: empty). Throws ParseError starting with `where`
/// (e.g. "docs.jsonl:12") and naming the field when a value has another type.
[[nodiscard]] inline Metadata metadata_from_json(const nlohmann::json& j, const std::string& where) {
    Metadata m;
    if (j.is_null()) return m;
    if (!j.is_object()) throw ParseError(where + ": field 'metadata' must be an object");
    for (const auto& [k, v] : j.items()) {
        if (v.is_string()) m[k] = v.get<std::string>();
        else if (v.is_number()) m[k] = v.get<double>();
        else if (v.is_boolean()) m[k] = std::string(v.get<bool>() ? "true" : "false");
        else if (v.is_object() && v.contains("date") && v["date"].is_string()) {
            try {
                m[k] = Date::parse(v["date"].get<std::string>());
            } catch (const ParseError& e) {
                throw ParseError(where + ": metadata field '" + k + "': " + e.what());
            }
        } else if (v.is_array()) {
            std::vector<std::string> list;
            for (const auto& e : v) {
                if (!e.is_string()) throw ParseError(where + ": metadata field '" + k + "' must be a list of strings");
                list.push_back(e.get<std::string>());
            }
            m[k] = std::move(list);
        } else if (!v.is_null()) {
            throw ParseError(where + ": metadata field '" + k + "' has an unsupported type");
        }
    }
    return m;
}

}  // namespace ragpp
