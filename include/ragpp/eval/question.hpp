// ragpp: a question of an evaluation set, and how its relevance labels match chunks.
// Reading question sets from files is in eval/questions.hpp.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
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

/// How the relevance labels of a question set match the chunk ids of a corpus.
struct LabelCheck {
    /// Distinct labels of the set.
    std::size_t labels = 0;
    /// Labels that match no chunk (they can only be missed), sorted.
    std::vector<std::string> unmatched;
    /// Labels rewritten by removing a prefix (see resolve_labels).
    std::size_t resolved = 0;
    /// Labels "path:line" naming a line inside a section, rewritten to the section's id.
    std::size_t inside_section = 0;
    /// True when the set has labels and none of them matches a chunk.
    [[nodiscard]] bool none_match() const noexcept { return labels > 0 && unmatched.size() == labels; }
};

/// Matches every label of `questions` against `chunk_ids` (label_matches). A label
/// that matches no chunk as written, but does once one of `prefixes` is removed from
/// its start, is rewritten without it, in every question: labels written relative to
/// the corpus folder's parent ("notes/errors.md:7" when the chunk ids, relative to the
/// corpus folder notes, are "errors.md:7") then count. Prefixes are tried in order
/// (give the longest first); a prefix ends with '/'. O((L + C) log C) for L labels and
/// C chunk ids, plus the chunk ids each label is a prefix of.
/// Rewrites every label of `questions` named first in a pair of `renames` to the second;
/// two labels that become one keep the larger grade (resolve_labels' last step).
inline void rename_labels(QuestionSet& questions, const std::vector<std::pair<std::string, std::string>>& renames) {
    for (auto& q : questions) {
        Judgments<std::string> rewritten;
        for (const auto& [label, grade] : q.relevant) {
            std::string key = label;
            for (const auto& rename : renames)
                if (rename.first == label) key = rename.second;
            auto [it, fresh] = rewritten.emplace(std::move(key), grade);
            if (!fresh) it->second = std::max(it->second, grade);  // the same label written both ways
        }
        q.relevant = std::move(rewritten);
    }
}

/// Where a chunk lies in its file, for labels that name a line inside a section.
struct ChunkLines {
    std::string source;   // the file's id ("notes/a.md")
    std::string section;  // the section's id ("notes/a.md:3"): the label it answers to
    std::size_t first_line = 0, last_line = 0;
};

/// resolve_labels (below), and then a label "path:N" still unmatched whose line N lies
/// inside a chunk of `lines` (first_line <= N <= last_line, same path after the same
/// prefix removal) is rewritten to that chunk's section: a label written on the
/// answer's line rather than the heading's counts.
[[nodiscard]] inline LabelCheck resolve_labels(QuestionSet& questions, std::vector<std::string> chunk_ids,
                                               const std::vector<std::string>& prefixes,
                                               const std::vector<ChunkLines>& lines);

[[nodiscard]] inline LabelCheck resolve_labels(QuestionSet& questions, std::vector<std::string> chunk_ids,
                                               const std::vector<std::string>& prefixes = {}) {
    std::sort(chunk_ids.begin(), chunk_ids.end());
    auto matches_any = [&](std::string_view label) {
        // Every chunk id a label matches starts with the label: look from its lower bound.
        for (auto it = std::lower_bound(chunk_ids.begin(), chunk_ids.end(), label);
             it != chunk_ids.end() && std::string_view(*it).substr(0, label.size()) == label; ++it)
            if (label_matches(label, *it)) return true;
        return false;
    };
    std::set<std::string> labels;
    for (const auto& q : questions)
        for (const auto& entry : q.relevant) labels.insert(entry.first);
    LabelCheck check;
    check.labels = labels.size();
    std::vector<std::pair<std::string, std::string>> renames;  // label -> label without its prefix
    for (const auto& label : labels) {
        if (matches_any(label)) continue;
        bool renamed = false;
        for (const auto& prefix : prefixes)
            if (!prefix.empty() && label.size() > prefix.size() && label.starts_with(prefix) &&
                matches_any(std::string_view(label).substr(prefix.size()))) {
                renames.emplace_back(label, label.substr(prefix.size()));
                renamed = true;
                break;
            }
        if (!renamed) check.unmatched.push_back(label);
    }
    check.resolved = renames.size();
    if (renames.empty()) return check;
    rename_labels(questions, renames);
    return check;
}

[[nodiscard]] inline LabelCheck resolve_labels(QuestionSet& questions, std::vector<std::string> chunk_ids,
                                               const std::vector<std::string>& prefixes,
                                               const std::vector<ChunkLines>& lines) {
    LabelCheck check = resolve_labels(questions, std::move(chunk_ids), prefixes);
    if (check.unmatched.empty() || lines.empty()) return check;
    // "path:N" -> (path, N); the path as written, then without each prefix.
    auto section_of_line = [&](const std::string& label) -> std::optional<std::string> {
        const auto colon = label.rfind(':');
        if (colon == std::string::npos || colon + 1 == label.size() || label.size() - colon > 10) return std::nullopt;
        std::size_t n = 0;
        for (std::size_t i = colon + 1; i < label.size(); ++i) {
            if (label[i] < '0' || label[i] > '9') return std::nullopt;
            n = n * 10 + static_cast<std::size_t>(label[i] - '0');
        }
        std::vector<std::string> paths{label.substr(0, colon)};
        for (const auto& prefix : prefixes)
            if (!prefix.empty() && paths.front().starts_with(prefix)) paths.push_back(paths.front().substr(prefix.size()));
        for (const auto& path : paths)
            for (const auto& l : lines)
                if (l.source == path && l.first_line <= n && n <= l.last_line) return l.section;
        return std::nullopt;
    };
    std::vector<std::pair<std::string, std::string>> renames;
    std::vector<std::string> still;
    for (const auto& label : check.unmatched) {
        if (auto section = section_of_line(label)) renames.emplace_back(label, *section);
        else still.push_back(label);
    }
    if (renames.empty()) return check;
    check.unmatched = std::move(still);
    check.inside_section = renames.size();
    rename_labels(questions, renames);
    return check;
}

}  // namespace ragpp
