// ragpp: a list of names a setting accepts (embedder kinds, rerankers, search modes),
// each with a line of help: one table per list, from which checks, error messages and
// help texts are made, so that they cannot disagree.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace ragpp {

/// One accepted name ("model2vec:DIR") and what it is ("a Model2Vec model folder").
struct Choice {
    std::string_view name, help;
};

/// "a, b or c": the names of `choices`, the last joined by `last` (" or ", " and ").
[[nodiscard]] inline std::string choice_names(std::span<const Choice> choices, std::string_view last = " or ") {
    std::string out;
    for (std::size_t i = 0; i < choices.size(); ++i) {
        if (i > 0) out += i + 1 == choices.size() ? last : std::string_view(", ");
        out += choices[i].name;
    }
    return out;
}

/// "a (help of a), b (help of b) or c": each name with its help in parentheses (none
/// when its help is empty).
[[nodiscard]] inline std::string choice_help(std::span<const Choice> choices, std::string_view last = " or ") {
    std::string out;
    for (std::size_t i = 0; i < choices.size(); ++i) {
        if (i > 0) out += i + 1 == choices.size() ? last : std::string_view(", ");
        out += choices[i].name;
        if (!choices[i].help.empty()) {
            out += " (";
            out += choices[i].help;
            out += ')';
        }
    }
    return out;
}

}  // namespace ragpp
