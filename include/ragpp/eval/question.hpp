// ragpp: a question of an evaluation set, and how its relevance labels match chunks.
// Reading question sets from files is in eval/questions.hpp.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ragpp/chunk/chunk.hpp>  // section_of
#include <ragpp/eval/metrics.hpp>

namespace ragpp {

struct Question {
    std::string id;
    std::string text;
    /// label -> grade (> 0 relevant); empty for an unanswerable question.
    Judgments<std::string> relevant;
    std::optional<std::string> answer;
    /// Free-form category ("identifier", "paraphrase", ...), empty if not given.
    std::string kind;
};

using QuestionSet = std::vector<Question>;

/// True when chunk `chunk_id` belongs to the section or file named by `label`:
/// equal ids, or `chunk_id` = label + "#N" (a further part of the same section), or
/// `label` is a bare path and `chunk_id` = label + ":line...".
[[nodiscard]] inline bool label_matches(std::string_view label, std::string_view chunk_id) noexcept {
    if (chunk_id.size() < label.size() || chunk_id.substr(0, label.size()) != label) return false;
    std::string_view rest = chunk_id.substr(label.size());
    if (rest.empty()) return true;
    auto digits = [](std::string_view s) {
        return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
    };
    if (rest[0] == '#') return digits(rest.substr(1));
    if (rest[0] == ':') {  // a bare path label: rest is ":line" or ":line#N"
        const std::string_view lab_tail = label.substr(label.rfind(':') == std::string_view::npos ? 0 : label.rfind(':') + 1);
        if (label.find(':') != std::string_view::npos && digits(lab_tail)) return false;  // label was path:line
        rest.remove_prefix(1);
        const auto hash = rest.find('#');
        return digits(rest.substr(0, hash)) && (hash == std::string_view::npos || digits(rest.substr(hash + 1)));
    }
    return false;
}

}  // namespace ragpp
