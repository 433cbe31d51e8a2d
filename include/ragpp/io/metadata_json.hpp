// ragpp: the Metadata <-> JSON codec of JSONL corpora (and of index folders before
// version 3). A string is a JSON string, a number a JSON number, a list of strings a JSON
// array, and a date an object {"date": "YYYY-MM-DD"}, so that it reads back as a date
// and not as a string. Reading also accepts booleans (stored as "true" / "false") and
// null (the field is absent).
#pragma once

#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include <ragpp/chunk/front_matter.hpp>
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

/// The access checks of one document of a JSONL corpus (`doc`: its line's object, with
/// "_id"|"id", "title", "text", "metadata"), read from `where` ("docs.jsonl:12"), whose
/// access field is `field`. A slip never makes a document public: each is a ParseError
/// naming the place and the key (a JSONL file is written by a program, which is better
/// told than guessed for):
///   - "metadata" present but not an object (null included);
///   - `field`, or a key that looks like an access declaration (misdeclared_access_key:
///     "Groups", "group", "acl", ...), at the top level instead of inside "metadata";
///   - such a look-alike key inside "metadata";
///   - metadata.`field` that names no group: null, a number, a boolean, a date, an
///     object, a list holding anything but strings, or a name that is not a group name
///     (group_name_problem: "", "hr, admins", "null", "true", ...). An empty list is
///     valid: nobody but Principal::system().
/// `metadata_read` false (a BEIR corpus.jsonl, whose metadata is not read): any access
/// declaration, the field included, inside or outside "metadata", is the error, and
/// "metadata" itself is not checked.
/// (Duplicate keys are refused when the line is parsed: detail::for_each_jsonl.)
inline void check_json_access(const nlohmann::json& doc, const std::string& where, std::string_view field = "groups",
                              bool metadata_read = true) {
    const auto looks_like = [&](const std::string& key) { return key == field || misdeclared_access_key(key, field); };
    for (const auto& [key, value] : doc.items())
        if (key != "metadata" && looks_like(key))
            throw ParseError(where + ": field '" + key + "' looks like an access declaration outside 'metadata'" +
                             (metadata_read ? ": ragpp reads only 'metadata." + std::string(field) + "'"
                                            : ": a BEIR corpus.jsonl carries no access (use a .jsonl corpus)"));
    const auto meta = doc.find("metadata");
    if (meta == doc.end()) return;
    if (!metadata_read) {
        if (meta->is_object())
            for (const auto& [key, value] : meta->items())
                if (looks_like(key))
                    throw ParseError(where + ": field 'metadata." + key + "' is an access declaration, but a BEIR " +
                                     "corpus.jsonl carries no access (use a .jsonl corpus)");
        return;
    }
    if (!meta->is_object())
        throw ParseError(where + ": field 'metadata' must be an object, not " + std::string(meta->type_name()));
    for (const auto& [key, value] : meta->items())
        if (misdeclared_access_key(key, field))
            throw ParseError(where + ": metadata key '" + key + "' looks like an access declaration, but only '" +
                             std::string(field) + "' is read");
    const auto it = meta->find(std::string(field));
    if (it == meta->end()) return;
    const std::string bad = where + ": metadata field '" + std::string(field) + "' ";
    const auto check_name = [&](const std::string& g) {
        if (const std::string why = group_name_problem(g); !why.empty())
            throw ParseError(bad + "holds '" + g + "', which is no group name: it " + why);
    };
    if (it->is_string()) return check_name(it->get<std::string>());
    if (it->is_array()) {
        for (const auto& g : *it) {
            if (!g.is_string()) throw ParseError(bad + "must be a list of strings (it holds " + std::string(g.type_name()) + ")");
            check_name(g.get<std::string>());
        }
        return;
    }
    throw ParseError(bad + "must be a group name or a list of them, not " + std::string(it->type_name()));
}

}  // namespace ragpp
