// ragpp: question sets for evaluation, in three forms.
//
// 1. JSON (see ../shared/DESIGN.md): a list of objects
//      {"id": "q1", "question": "...", "relevant": ["a.md:12", "b.md:3"], "answer": "..."}
//    `relevant` is a list (every label grade 1), an object of graded judgments
//    {"doc-17": 2, "doc-4": 1}, or [] for a question the documents do not answer.
//    The short form {"question": "...", "chunk_attendu": "a.md:12"} (a label or a list)
//    is accepted too. `id` defaults to "q<N>" (1-based position); optional "kind".
// 2. TSV: one question per line, "question<TAB>label[<TAB>label...]"; a line with no
//    label is unanswerable; '#' starts a comment line.
// 3. A BEIR folder: queries.jsonl + qrels/<split>.tsv (only judged queries kept).
//
// A label "path:line" is satisfied by any chunk of that section: "path:line",
// "path:line#2", ... (see label_matches). Errors name the file, the line and the field;
// text that is not UTF-8 is a ParseError when the set is read (JSON and TSV alike).
#pragma once

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

#include <ragpp/core/error.hpp>
#include <ragpp/detail/file.hpp>
#include <ragpp/detail/json.hpp>
#include <ragpp/eval/detail/questions.hpp>
#include <ragpp/eval/metrics.hpp>
#include <ragpp/eval/question.hpp>
#include <ragpp/io/beir.hpp>
#include <ragpp/text/utf8.hpp>

namespace ragpp {

static_assert(std::is_same_v<BeirQrels::mapped_type, Judgments<std::string>>,
              "io/beir.hpp spells Judgments<std::string> out (io/ does not include eval/)");

/// Parses a JSON question set from `text`; `file` names it in error messages.
[[nodiscard]] inline QuestionSet parse_questions_json(std::string_view text, const std::filesystem::path& file = "<input>") {
    const nlohmann::json j = detail::parse_json(text, file.string());
    if (!j.is_array()) throw ParseError(file.string() + ":1: a question set is a JSON list of objects");
    const auto offsets = detail::top_level_element_offsets(text);
    QuestionSet out;
    // Lines are counted once over the text, from one question's offset to the next
    // (offsets increase): linear in the size of the file, not quadratic.
    std::size_t counted_to = 0, line_of_counted = 1;
    for (std::size_t i = 0; i < j.size(); ++i) {
        std::size_t line = 0;
        if (i < offsets.size()) {
            const std::string_view between = text.substr(counted_to, offsets[i] - counted_to);
            line_of_counted = detail::line_at(between, between.size(), line_of_counted);
            counted_to = offsets[i];
            line = line_of_counted;
        }
        const std::string at = detail::where(file, line) + ": question " + std::to_string(i + 1);
        const auto& q = j[i];
        if (!q.is_object()) throw ParseError(at + ": expected an object");
        Question question;
        if (auto it = q.find("id"); it != q.end()) {
            if (it->is_string()) question.id = it->get<std::string>();
            else if (it->is_number_integer()) question.id = std::to_string(it->get<long long>());
            else throw ParseError(at + ": field 'id' must be a string");
        } else {
            question.id = "q" + std::to_string(i + 1);
        }
        auto text_it = q.find("question");
        if (text_it == q.end() || !text_it->is_string()) throw ParseError(at + ": field 'question' (a string) is missing");
        question.text = text_it->get<std::string>();
        auto add_labels = [&](const nlohmann::json& v, const char* field) {
            auto add = [&](const nlohmann::json& label) {
                if (!label.is_string() || label.get<std::string>().empty())
                    throw ParseError(at + ": field '" + field + "' must hold non-empty strings");
                question.relevant[label.get<std::string>()] = 1.0;
            };
            if (v.is_string()) add(v);
            else if (v.is_array()) for (const auto& label : v) add(label);
            else if (v.is_object() && std::string_view(field) == "relevant") {
                for (const auto& [label, grade] : v.items()) {
                    if (!grade.is_number()) throw ParseError(at + ": grade of '" + label + "' in 'relevant' is not a number");
                    question.relevant[label] = grade.get<double>();
                }
            } else if (!v.is_null()) {
                throw ParseError(at + ": field '" + field + "' must be a list of labels" +
                                 (std::string_view(field) == "relevant" ? " or an object of graded labels" : " or a label"));
            }
        };
        const bool has_relevant = q.contains("relevant"), has_chunk = q.contains("chunk_attendu");
        if (!has_relevant && !has_chunk)
            throw ParseError(at + ": field 'relevant' is missing (use [] for a question the documents do not answer)");
        if (has_relevant) add_labels(q["relevant"], "relevant");
        if (has_chunk) add_labels(q["chunk_attendu"], "chunk_attendu");
        if (auto it = q.find("answer"); it != q.end() && it->is_string()) question.answer = it->get<std::string>();
        if (auto it = q.find("kind"); it != q.end() && it->is_string()) question.kind = it->get<std::string>();
        out.push_back(std::move(question));
    }
    detail::check_unique_ids(out, file);
    return out;
}

/// Parses a TSV question set: "question<TAB>label[<TAB>label...]" per line; a line
/// without a label is an unanswerable question, but a file without any tab is a
/// ParseError naming its first question line (spaces typed for tabs).
[[nodiscard]] inline QuestionSet parse_questions_tsv(std::string_view text, const std::filesystem::path& file = "<input>") {
    QuestionSet out;
    std::size_t line_no = 0;
    std::size_t pos = 0;
    bool any_tab = false;
    std::size_t first_untabbed = 0;
    while (pos <= text.size()) {
        const auto end = text.find('\n', pos);
        std::string_view line = text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
        pos = end == std::string_view::npos ? text.size() + 1 : end + 1;
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.empty() || line.front() == '#') continue;
        // Checked here, with the line, rather than when a report is written as JSON.
        ragpp::text::validate_utf8(line, detail::where(file, line_no));
        std::vector<std::string_view> cols;
        for (std::size_t tab; (tab = line.find('\t')) != std::string_view::npos; line.remove_prefix(tab + 1))
            cols.push_back(line.substr(0, tab));
        cols.push_back(line);
        if (cols.size() > 1) any_tab = true;
        else if (first_untabbed == 0) first_untabbed = line_no;
        Question q;
        q.id = "q" + std::to_string(out.size() + 1);
        q.text = std::string(cols[0]);
        if (q.text.find_first_not_of(" \t") == std::string::npos)
            throw ParseError(detail::where(file, line_no) + ": column 1 (the question) is empty");
        for (std::size_t c = 1; c < cols.size(); ++c)
            if (!cols[c].empty()) q.relevant[std::string(cols[c])] = 1.0;
        out.push_back(std::move(q));
    }
    // Not one label in the file: most likely spaces typed where tabs belong (a table of
    // zeros otherwise).
    if (!any_tab && first_untabbed != 0)
        throw ParseError(detail::where(file, first_untabbed) +
                         ": no tab in the file: a line is 'question<TAB>label[<TAB>label...]' (spaces do not separate "
                         "columns; a line without a tab is an unanswerable question, but a set of only those is a "
                         "mistake)");
    return out;
}

/// Reads a question set from a JSON file, a TSV file (.tsv) or a BEIR folder.
[[nodiscard]] inline QuestionSet read_questions(const std::filesystem::path& path, const std::string& split = "test") {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
        const BeirQrels qrels = read_beir_qrels(path / "qrels" / (split + ".tsv"));
        QuestionSet out;
        for (auto& q : read_beir_queries(path / "queries.jsonl")) {
            auto it = qrels.find(q.id);
            if (it == qrels.end()) continue;
            out.push_back(Question{q.id, q.text, it->second, std::nullopt, {}});
        }
        return out;
    }
    const std::string text = detail::read_file(path);
    if (path.extension() == ".tsv") return parse_questions_tsv(text, path);
    return parse_questions_json(text, path);
}

}  // namespace ragpp
