// ragpp mcp DIR: a Model Context Protocol server over stdio (JSON-RPC 2.0, one message per
// line; protocol versions 2025-11-25 and 2025-06-18). Its tools, search, ask, get and
// status, are the commands' own implementations (service.hpp): the same JSON as --json as
// structured content, the same text as the command as text content. The reader is fixed
// when the server starts (--as, --as-all), never taken from a tool's arguments. A
// generation committed while it runs (ragpp index) is picked up before the next call.
// stdout carries only protocol messages; notes go to stderr.
#include "cli.hpp"
#include "engine.hpp"
#include "service.hpp"

#include <ragpp/version.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <sys/stat.h>

namespace {

using nlohmann::json;

constexpr const char* latest_protocol = "2025-11-25";
constexpr const char* supported_protocols[] = {"2025-11-25", "2025-06-18"};
/// A message longer than this is refused (a parse error) and skipped, not read whole.
constexpr std::size_t max_message_bytes = std::size_t{8} << 20;

/// A tool argument of the wrong type or out of range: a tool error naming it.
struct ArgumentError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

json mode_schema() {
    json modes = json::array();
    for (const auto& m : ragpp::search_modes) modes.push_back(std::string(m.name));
    return {{"type", "string"},
            {"enum", modes},
            {"description", "bm25: exact words and identifiers; vector: the same idea in other words; hybrid: both, "
                            "fused. Leave it out for the index's default."}};
}

json filter_schema() {
    return {{"type", "array"},
            {"items", {{"type", "string"}}},
            {"description", "metadata filters, and-ed, e.g. \"type=guide\", \"version>=2\", \"date>=2025-01-01\""}};
}

json tools() {
    return json::array({
        {{"name", "search"},
         {"title", "Search the indexed documents"},
         {"description",
          "Find the passages of the indexed documents that match a query: exact identifiers (error codes, part "
          "numbers, option names) by BM25, paraphrases by vector search. Returns the best passages, each with its "
          "citation (path:line and heading path), score and text. Cite passages by their citation; reopen one with "
          "the get tool to read the file as it is now."},
         {"inputSchema",
          {{"type", "object"},
           {"properties",
            {{"query", {{"type", "string"}, {"description", "what to look for, in the documents' own words if known"}}},
             {"k", {{"type", "integer"}, {"minimum", 1}, {"maximum", 100}, {"default", 5},
                    {"description", "number of passages"}}},
             {"mode", mode_schema()},
             {"filter", filter_schema()}}},
           {"required", {"query"}},
           {"additionalProperties", false}}}},
        {{"name", "ask"},
         {"title", "Evidence for a question"},
         {"description",
          "The evidence block to answer a question from: numbered, cited passages inside markers, with instructions "
          "to answer only from them; or a refusal when the documents hold no passage that answers it well enough, "
          "with the reasons (words found nowhere, low coverage). Answer from the evidence only and cite its source "
          "numbers; when it refuses, say the documents do not answer."},
         {"inputSchema",
          {{"type", "object"},
           {"properties",
            {{"question", {{"type", "string"}, {"description", "the user's question"}}},
             {"passages", {{"type", "integer"}, {"minimum", 1}, {"maximum", 50}, {"default", 5},
                           {"description", "passages passed on as evidence, at most"}}},
             {"budget", {{"type", "integer"}, {"minimum", 1}, {"maximum", 100000}, {"default", 1500},
                         {"description", "tokens of passage text in the evidence"}}},
             {"mode", mode_schema()},
             {"filter", filter_schema()}}},
           {"required", {"question"}},
           {"additionalProperties", false}}}},
        {{"name", "get"},
         {"title", "Reopen a source"},
         {"description",
          "Read a source as its file holds it now (the index reflects the files as they were when indexed): a "
          "citation path:line gives that section, path:first-last those lines, a bare path the whole file. Says "
          "whether the file changed since it was indexed, or is gone. Use it to check a passage before concluding."},
         {"inputSchema",
          {{"type", "object"},
           {"properties",
            {{"source", {{"type", "string"},
                         {"description", "a citation as search and ask give it (path:line), or a path"}}},
             {"lines", {{"type", "string"}, {"pattern", "^[0-9]+(-[0-9]+)?$"},
                        {"description", "lines FIRST-LAST of the file instead of the section"}}}}},
           {"required", {"source"}},
           {"additionalProperties", false}}}},
        {{"name", "status"},
         {"title", "Index status"},
         {"description",
          "What the index holds for this reader: its generation, the chunks and sources readable, and which sources "
          "changed or were deleted since indexing (their passages may be outdated)."},
         {"inputSchema", {{"type", "object"}, {"properties", json::object()}, {"additionalProperties", false}}}},
    });
}

const json& argument(const json& args, const char* name) {
    static const json none;
    const auto it = args.find(name);
    return it == args.end() ? none : *it;
}

std::string string_argument(const json& args, const char* name, bool required) {
    const json& v = argument(args, name);
    if (v.is_null()) {
        if (required) throw ArgumentError(std::string("argument '") + name + "' is required");
        return {};
    }
    if (!v.is_string()) throw ArgumentError(std::string("argument '") + name + "' must be a string");
    return v.get<std::string>();
}

std::size_t count_argument(const json& args, const char* name, std::size_t fallback, std::size_t lo, std::size_t hi) {
    const json& v = argument(args, name);
    if (v.is_null()) return fallback;
    if (!v.is_number_integer() || v.get<long long>() < static_cast<long long>(lo) ||
        v.get<long long>() > static_cast<long long>(hi))
        throw ArgumentError(std::string("argument '") + name + "' must be an integer in [" + std::to_string(lo) + ", " +
                            std::to_string(hi) + "]");
    return static_cast<std::size_t>(v.get<long long>());
}

std::vector<std::string> filter_argument(const json& args) {
    const json& v = argument(args, "filter");
    if (v.is_null()) return {};
    if (v.is_string()) return {v.get<std::string>()};
    std::vector<std::string> out;
    if (v.is_array())
        for (const auto& f : v) {
            if (!f.is_string()) break;
            out.push_back(f.get<std::string>());
        }
    if (!v.is_array() || out.size() != v.size())
        throw ArgumentError("argument 'filter' must be a string or an array of strings");
    return out;
}

void check_names(const json& args, std::initializer_list<const char*> names) {
    for (const auto& [key, value] : args.items()) {
        bool known = false;
        for (const char* n : names) known = known || key == n;
        if (!known) throw ArgumentError("unknown argument '" + cli::printable(key) + "'");
    }
}

/// The server: the engine of the index folder, reopened when its CURRENT changes.
class Server {
public:
    Server(std::filesystem::path dir, ragpp::Principal reader, std::size_t threads)
        : dir_(std::move(dir)), reader_(std::move(reader)), threads_(threads) {
        stamp_ = current_stamp();
        engine_ = std::make_unique<cli::Engine>(cli::Engine::open(dir_, threads_));
    }

    /// The reply to one message, or nothing for a notification or a response.
    std::optional<json> handle(const json& msg) {
        if (!msg.is_object()) return error(nullptr, -32600, "Invalid Request: a message is a JSON object");
        const json id = msg.contains("id") ? msg["id"] : json();
        const bool request = msg.contains("id");
        if (!msg.contains("method")) return std::nullopt;  // a response to us: we send no requests
        if (!msg.contains("jsonrpc") || msg["jsonrpc"] != "2.0" || !msg["method"].is_string())
            return request ? std::optional<json>(error(id, -32600, "Invalid Request: jsonrpc must be \"2.0\" and method a string"))
                           : std::nullopt;
        if (!request) return std::nullopt;  // notifications (initialized, cancelled, ...) need no answer
        if (!(id.is_string() || id.is_number_integer()))
            return error(nullptr, -32600, "Invalid Request: id must be a string or an integer");
        const std::string method = msg["method"].get<std::string>();
        const json params = msg.contains("params") ? msg["params"] : json::object();
        if (!params.is_object()) return error(id, -32602, "Invalid params: params must be an object");
        if (method == "initialize") return result(id, initialize(params));
        if (method == "ping") return result(id, json::object());
        if (method == "tools/list") return result(id, {{"tools", tools()}});
        if (method == "tools/call") {
            const json name = params.contains("name") ? params["name"] : json();
            if (!name.is_string()) return error(id, -32602, "Invalid params: tools/call needs a tool name");
            const std::string n = name.get<std::string>();
            if (n != "search" && n != "ask" && n != "get" && n != "status")
                return error(id, -32602, "Unknown tool: " + cli::printable(n));
            const json args = params.contains("arguments") ? params["arguments"] : json::object();
            if (!args.is_object()) return result(id, tool_error("arguments must be an object"));
            return result(id, call(n, args));
        }
        return error(id, -32601, "Method not found: " + cli::printable(method));
    }

private:
    static json result(const json& id, json r) { return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(r)}}; }
    static json error(const json& id, int code, const std::string& message) {
        return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
    }
    static json tool_error(const std::string& message) {
        return {{"content", json::array({{{"type", "text"}, {"text", message}}})}, {"isError", true}};
    }

    json initialize(const json& params) {
        std::string version = latest_protocol;
        if (params.contains("protocolVersion") && params["protocolVersion"].is_string())
            for (const char* v : supported_protocols)
                if (params["protocolVersion"] == v) version = v;
        return {{"protocolVersion", version},
                {"capabilities", {{"tools", {{"listChanged", false}}}}},
                {"serverInfo", {{"name", "ragpp"}, {"title", "ragpp retrieval"}, {"version", ragpp::version_string}}},
                {"instructions",
                 "Search the documents of the index folder " + dir_.string() +
                     " (search), get cited evidence for a question or a refusal (ask), reopen a cited source as "
                     "its file is now (get), and see what the index holds (status)."}};
    }

    /// (inode, size, mtime) of DIR/CURRENT: a commit replaces it by a rename.
    [[nodiscard]] std::string current_stamp() const {
        struct stat st {};
        if (::stat((dir_ / "CURRENT").c_str(), &st) != 0) return {};
        return std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) +
               "." + std::to_string(st.st_mtim.tv_nsec);
    }

    /// Opens the generation committed since the last call, if any; on failure keeps the
    /// one it has (and says so on stderr).
    void refresh() {
        const std::string stamp = current_stamp();
        if (stamp == stamp_ || stamp.empty()) return;
        try {
            auto next = std::make_unique<cli::Engine>(cli::Engine::open(dir_, threads_));
            engine_ = std::move(next);
            stamp_ = stamp;
            std::fprintf(stderr, "ragpp mcp: opened generation %llu\n",
                         static_cast<unsigned long long>(engine_->generation()));
        } catch (const std::exception& e) {
            std::fprintf(stderr, "ragpp mcp: keeping generation %llu: %s\n",
                         static_cast<unsigned long long>(engine_->generation()), e.what());
        }
    }

    json call(const std::string& name, const json& args) {
        try {
            refresh();
            cli::Reply reply;
            if (name == "search") {
                check_names(args, {"query", "k", "mode", "filter"});
                cli::SearchRequest rq;
                rq.query = string_argument(args, "query", true);
                rq.k = count_argument(args, "k", 5, 1, 100);
                rq.mode = string_argument(args, "mode", false);
                rq.filters = filter_argument(args);
                rq.principal = reader_;
                reply = cli::search(*engine_, rq);
            } else if (name == "ask") {
                check_names(args, {"question", "passages", "budget", "mode", "filter"});
                cli::AskRequest rq;
                rq.search.query = string_argument(args, "question", true);
                rq.search.k = count_argument(args, "passages", 5, 1, 50);
                rq.search.mode = string_argument(args, "mode", false);
                rq.search.filters = filter_argument(args);
                rq.search.principal = reader_;
                rq.answer.evidence.token_budget = count_argument(args, "budget", 1500, 1, 100000);
                reply = cli::ask(*engine_, rq);
            } else if (name == "get") {
                check_names(args, {"source", "lines"});
                std::string spec = string_argument(args, "source", true);
                const std::string lines = string_argument(args, "lines", false);
                if (!lines.empty()) {
                    // The lines replace a citation's line: "guide.md:8" with lines "2-3" is guide.md:2-3.
                    const auto colon = spec.rfind(':');
                    if (colon != std::string::npos && spec.find_first_not_of("0123456789#", colon + 1) == std::string::npos)
                        spec.resize(colon);
                    spec += ":" + lines;
                }
                reply = cli::get(*engine_, spec, reader_);
            } else {
                check_names(args, {});
                reply = cli::status(*engine_, dir_, reader_);
            }
            std::string text;
            for (const auto& w : reply.warnings) text += w + "\n";
            text += reply.text;
            json out{{"content", json::array({{{"type", "text"}, {"text", text}}})},
                     {"structuredContent", reply.json}};
            if (reply.exit_status != 0) out["isError"] = true;
            return out;
        } catch (const ArgumentError& e) {
            return tool_error(e.what());
        } catch (const cli::UsageError& e) {
            return tool_error(e.what());
        } catch (const ragpp::Error& e) {
            return tool_error(e.what());
        } catch (const std::exception& e) {
            return tool_error(std::string("internal error: ") + e.what());
        }
    }

    std::filesystem::path dir_;
    ragpp::Principal reader_;
    std::size_t threads_;
    std::string stamp_;
    std::unique_ptr<cli::Engine> engine_;
};

/// One line of stdin into `line` (without its end), at most max_message_bytes kept:
/// false at the end of input; `too_long` when the line was longer (the rest skipped).
bool read_message(std::string& line, bool& too_long) {
    line.clear();
    too_long = false;
    char buf[1 << 16];
    bool any = false;
    while (std::fgets(buf, sizeof buf, stdin)) {
        any = true;
        std::string_view chunk(buf);
        const bool end = !chunk.empty() && chunk.back() == '\n';
        if (end) chunk.remove_suffix(1);
        if (!too_long) {
            if (line.size() + chunk.size() > max_message_bytes) {
                too_long = true;
                line.clear();
                line.shrink_to_fit();
            } else {
                line.append(chunk);
            }
        }
        if (end) break;
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return any;
}

int run_mcp(cli::ArgParser& p) {
    Server server(p.get("DIR"), cli::principal(p), p.count("threads"));
    std::fprintf(stderr, "ragpp mcp: serving %s over stdio (MCP %s)\n", cli::printable(p.get("DIR")).c_str(),
                 latest_protocol);
    std::string line;
    bool too_long = false;
    auto send = [](const json& reply) {
        const std::string text = cli::dump_json(reply);
        std::fwrite(text.data(), 1, text.size(), stdout);
        std::fputc('\n', stdout);
        std::fflush(stdout);
    };
    while (read_message(line, too_long)) {
        if (too_long) {
            send({{"jsonrpc", "2.0"}, {"id", nullptr},
                  {"error", {{"code", -32700}, {"message", "Parse error: a message longer than 8 MiB"}}}});
            continue;
        }
        if (line.find_first_not_of(" \t") == std::string::npos) continue;
        json msg;
        try {
            msg = json::parse(line);
        } catch (const json::parse_error& e) {
            send({{"jsonrpc", "2.0"}, {"id", nullptr}, {"error", {{"code", -32700}, {"message", std::string("Parse error: ") + e.what()}}}});
            continue;
        }
        if (auto reply = server.handle(msg)) send(*reply);
    }
    return 0;
}

const cli::Register reg{
    {"mcp", "serve an index folder to agents: a Model Context Protocol server over stdio",
     [](cli::ArgParser& p) {
         p.positional("DIR", "an index folder written by ragpp index");
         cli::declare_threads_option(p);
         cli::declare_access_options(p);
         p.epilog("Tools: search {query, k?, mode?, filter?}, ask {question, passages?, budget?, mode?, filter?}, get "
                  "{source, lines?}, status {}. The reader is the one --as names, for every call. A generation "
                  "committed while it runs is used from the next call on. docs/mcp.md has a transcript.");
     },
     run_mcp}};

}  // namespace
