// The tool's commands as requests and replies, one implementation each, shared by the
// command line (cmd_search, cmd_ask, cmd_get), the MCP server (cmd_mcp) and whatever else
// serves them: a request in, the JSON that --json prints and the text the command prints
// out. The decisions are the library's (ragpp::Engine::search, answer, reopen, status);
// this only checks the request and shapes the reply.
#pragma once

#include <ragpp/engine/config.hpp>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine.hpp"

namespace cli {

/// What ragpp search is asked.
struct SearchRequest {
    std::string query;
    std::size_t k = 5;
    /// --mode's value ("" for the index's default pipeline).
    std::string mode;
    /// Metadata filters, and-ed, each as written.
    std::vector<std::string> filters;
    std::string reranker = "none";
    ragpp::Principal principal;
    bool check_sources = true;
    /// This query's search settings (unset: the index's saved defaults).
    std::optional<ragpp::SearchSettings> settings;
    /// Whether the reply needs search's text too (the command's stdout without --json);
    /// false: the JSON alone (HTTP), which saves formatting it.
    bool text = true;
    /// false: the reply's JSON as compact text only (Reply::json_text), not read back into
    /// a tree (HTTP sends the text as it is).
    bool json_tree = true;
};

/// `s` as one word of a POSIX shell command: as is when it holds only letters, digits and
/// ._/-+=:@,% (and is not empty), else in single quotes.
std::string shell_word(const std::string& s);

/// What ragpp ask is asked: the search (k = passages) and the answer stage.
struct AskRequest {
    SearchRequest search;
    ragpp::AnswerOptions answer;
    /// How this interface reopens a source, for the evidence (EvidenceOptions::reopen),
    /// used when the index is of a folder of files and the instructions are the default.
    std::string reopen;
};

/// A command's reply: `json` is what --json prints; `text` what the command prints on
/// stdout without --json (with its final line end); `warnings` go to stderr in both
/// forms, `text_notes` only with the text. `exit_status` is the command's (0, or 1 when
/// ragpp get finds the source gone).
struct Reply {
    nlohmann::json json;
    /// Instead of `json` when the request asked for text (SearchRequest::json_tree false):
    /// what dump_json(json) would write.
    std::string json_text;
    std::string text;
    std::vector<std::string> warnings;
    std::vector<std::string> text_notes;
    int exit_status = 0;
};

/// A request written as a JSON object (an MCP tool's arguments, an HTTP body) that is
/// wrong: a missing, mistyped, out-of-range or unknown member, named.
struct RequestError : std::runtime_error {
    using std::runtime_error::runtime_error;
};
/// The search request of `fields` ({query, k?, mode?, filter?}; k in [1, max_k]) and the
/// ask request ({question, passages?, budget?, mode?, filter?}), for `reader`. `member`
/// names a member in messages ("argument", "field"). RequestError otherwise.
SearchRequest search_request(const nlohmann::json& fields, std::size_t max_k, const ragpp::Principal& reader,
                             const char* member);
AskRequest ask_request(const nlohmann::json& fields, const ragpp::Principal& reader, const char* member);
/// The SOURCE of ragpp get from `fields` ({source, lines?}: lines FIRST-LAST replace a
/// citation's line, see source_spec), and a check that `fields` has no member (status).
std::string get_request(const nlohmann::json& fields, const char* member);
void no_request_fields(const nlohmann::json& fields, const char* member);
/// `source` (a citation path:line, or a path) with `lines` (FIRST-LAST, or empty) in place
/// of its line: "guide.md:8" and "2-3" give "guide.md:2-3".
std::string source_spec(std::string source, const std::string& lines);

/// Throws UsageError for a bad mode, filter or reranker, or an empty query; a ragpp::Error
/// from the engine otherwise.
Reply search(const Engine& engine, const SearchRequest& request);
Reply ask(const Engine& engine, const AskRequest& request);
/// ragpp get: `spec` is path, path:line or path:first-last (ragpp::Engine::reopen).
Reply get(const Engine& engine, const std::string& spec, const ragpp::Principal& reader);
/// The index folder `dir` as `reader` sees it: generation, chunks, sources, changed and
/// deleted sources.
Reply status(const Engine& engine, const std::filesystem::path& dir, const ragpp::Principal& reader);

/// Prints a reply as a command does (JSON or text on stdout, the rest on stderr) and
/// returns its exit status.
int print_reply(const Reply& reply, bool json);

}  // namespace cli
