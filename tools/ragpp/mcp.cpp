// The MCP protocol of ragpp (mcp.hpp): tools, arguments, replies.
#include "mcp.hpp"

#include "cli.hpp"
#include "service.hpp"

#include <ragpp/version.hpp>

#include <cstdio>
#include <mutex>
#include <stdexcept>

#include <sys/stat.h>

namespace cli {

namespace {

using nlohmann::json;

constexpr const char* supported_protocols[] = {"2025-11-25", "2025-06-18"};

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

/// The protocol over one engine snapshot and one reader.
class Handler {
public:
    Handler(cli::EngineSlot& slot, const ragpp::Principal& reader) : slot_(slot), reader_(reader) {}

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
        std::string version = mcp_latest_protocol;
        if (params.contains("protocolVersion") && params["protocolVersion"].is_string())
            for (const char* v : supported_protocols)
                if (params["protocolVersion"] == v) version = v;
        return {{"protocolVersion", version},
                {"capabilities", {{"tools", {{"listChanged", false}}}}},
                {"serverInfo", {{"name", "ragpp"}, {"title", "ragpp retrieval"}, {"version", ragpp::version_string}}},
                {"instructions",
                 "Search the documents of the index folder " + slot_.dir().string() +
                     " (search), get cited evidence for a question or a refusal (ask), reopen a cited source as "
                     "its file is now (get), and see what the index holds (status)."}};
    }

    json call(const std::string& name, const json& args) {
        try {
            const std::shared_ptr<const cli::Engine> engine = slot_.current();
            cli::Reply reply;
            if (name == "search") {
                reply = cli::search(*engine, search_request(args, 100, reader_, "argument"));
            } else if (name == "ask") {
                auto rq = ask_request(args, reader_, "argument");
                rq.reopen = "call the get tool with the path:line of its citation.";
                reply = cli::ask(*engine, rq);
            } else if (name == "get") {
                const std::string spec = get_request(args, "argument");
                reply = cli::get(*engine, spec, reader_);
            } else {
                no_request_fields(args, "argument");
                reply = cli::status(*engine, slot_.dir(), reader_);
            }
            std::string text;
            for (const auto& w : reply.warnings) text += w + "\n";
            text += reply.text;
            json out{{"content", json::array({{{"type", "text"}, {"text", text}}})},
                     {"structuredContent", reply.json}};
            if (reply.exit_status != 0) out["isError"] = true;
            return out;
        } catch (const RequestError& e) {
            return tool_error(e.what());
        } catch (const cli::UsageError& e) {
            return tool_error(e.what());
        } catch (const ragpp::Error& e) {
            return tool_error(e.what());
        } catch (const std::exception& e) {
            return tool_error(std::string("internal error: ") + e.what());
        }
    }

    cli::EngineSlot& slot_;
    const ragpp::Principal& reader_;
};

}  // namespace

EngineSlot::EngineSlot(std::filesystem::path dir, std::size_t threads)
    : dir_(std::move(dir)), threads_(threads), stamp_(current_stamp()),
      engine_(std::make_shared<const Engine>(Engine::open(dir_, threads_))) {}

std::string EngineSlot::current_stamp() const {
    struct stat st {};
    if (::stat((dir_ / "CURRENT").c_str(), &st) != 0) return {};
    return std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
           std::to_string(st.st_mtim.tv_nsec);
}

std::shared_ptr<const Engine> EngineSlot::current() const {
    std::lock_guard lock(mutex_);
    return engine_;
}

bool EngineSlot::refresh() {
    std::unique_lock opening(open_mutex_, std::try_to_lock);
    if (!opening.owns_lock()) return false;  // another caller is opening it
    const std::string stamp = current_stamp();
    {
        std::lock_guard lock(mutex_);
        if (stamp == stamp_ || stamp.empty()) return false;
    }
    try {
        auto next = std::make_shared<const Engine>(Engine::open(dir_, threads_));  // no lock held: readers go on
        std::lock_guard lock(mutex_);
        engine_ = std::move(next);
        stamp_ = stamp;
        std::fprintf(stderr, "ragpp: opened generation %llu of %s\n", static_cast<unsigned long long>(engine_->generation()),
                     printable(dir_.string()).c_str());
        return true;
    } catch (const std::exception& e) {
        std::lock_guard lock(mutex_);
        stamp_ = stamp;  // tried once; the next commit is tried again
        std::fprintf(stderr, "ragpp: keeping generation %llu: %s\n", static_cast<unsigned long long>(engine_->generation()),
                     e.what());
        return false;
    }
}

std::optional<nlohmann::json> mcp_reply(const nlohmann::json& message, EngineSlot& slot, const ragpp::Principal& reader) {
    return Handler(slot, reader).handle(message);
}

nlohmann::json mcp_error(int code, const std::string& message) {
    return {{"jsonrpc", "2.0"}, {"id", nullptr}, {"error", {{"code", code}, {"message", message}}}};
}

}  // namespace cli
