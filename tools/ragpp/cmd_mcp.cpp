// ragpp mcp DIR: a Model Context Protocol server over stdio (JSON-RPC 2.0, one message per
// line; protocol versions 2025-11-25 and 2025-06-18). Its tools, search, ask, get and
// status, are the commands' own implementations (service.hpp): the same JSON as --json as
// structured content, the same text as the command as text content. The reader is fixed
// when the server starts (--as, --as-all), never taken from a tool's arguments. A
// generation committed while it runs (ragpp index) is picked up before the next call.
// stdout carries only protocol messages; notes go to stderr.
#include "cli.hpp"
#include "engine.hpp"
#include "mcp.hpp"


#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>


namespace {

using nlohmann::json;

/// One line of stdin into `line` (without its end), at most cli::mcp_max_message_bytes kept:
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
            if (line.size() + chunk.size() > cli::mcp_max_message_bytes) {
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
    const ragpp::Principal reader = cli::principal(p);
    cli::EngineSlot slot(p.get("DIR"), p.count("threads"));
    std::fprintf(stderr, "ragpp mcp: serving %s over stdio (MCP %s)\n", cli::printable(p.get("DIR")).c_str(),
                 cli::mcp_latest_protocol);
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
            send(cli::mcp_error(-32700, "Parse error: a message longer than 8 MiB"));
            continue;
        }
        if (line.find_first_not_of(" \t") == std::string::npos) continue;
        json msg;
        try {
            msg = json::parse(line);
        } catch (const json::parse_error& e) {
            send(cli::mcp_error(-32700, std::string("Parse error: ") + e.what()));
            continue;
        }
        slot.refresh();  // a generation committed since the last message
        if (auto reply = cli::mcp_reply(msg, slot, reader)) send(*reply);
    }
    return 0;
}

const cli::Register register_mcp{
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
