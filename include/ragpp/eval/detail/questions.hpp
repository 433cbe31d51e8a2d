// ragpp detail: the not-API helpers of eval/questions.hpp (namespace detail), moved out of it.
#pragma once

#include <cstddef>
#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <ragpp/eval/question.hpp>

namespace ragpp {

namespace detail {

/// Byte offsets where each element of a top-level JSON array starts (the array must
/// already be known to parse). Strings are skipped so brackets inside them do not count.
inline std::vector<std::size_t> top_level_element_offsets(std::string_view text) {
    std::vector<std::size_t> out;
    int depth = 0;
    bool in_string = false, expect_element = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\') ++i;
            else if (c == '"') in_string = false;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
        if (depth == 1 && expect_element && c != ']') {
            out.push_back(i);
            expect_element = false;
        }
        if (c == '"') in_string = true;
        else if (c == '[' || c == '{') {
            ++depth;
            if (depth == 1) expect_element = true;
        } else if (c == ']' || c == '}') --depth;
        else if (c == ',' && depth == 1) expect_element = true;
    }
    return out;
}

inline std::string where(const std::filesystem::path& file, std::size_t line) {
    return file.string() + ":" + std::to_string(line);
}

inline void check_unique_ids(const QuestionSet& set, const std::filesystem::path& file) {
    std::set<std::string> seen;
    for (const auto& q : set)
        if (!seen.insert(q.id).second) throw DuplicateError(file.string() + ": question id '" + q.id + "' appears twice");
}

}  // namespace detail

}  // namespace ragpp
