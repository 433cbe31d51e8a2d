// The Model Context Protocol side of the tool: the protocol (JSON-RPC 2.0 messages, the
// tools search, ask, get and status, each the command's own implementation from
// service.hpp) apart from its transports: stdio (cmd_mcp.cpp) and Streamable HTTP
// (cmd_serve.cpp, POST /mcp). And EngineSlot, the current generation of an index folder,
// which both servers read.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "engine.hpp"

namespace cli {

inline constexpr const char* mcp_latest_protocol = "2025-11-25";
/// A message longer than this is refused (a parse error), not read whole.
inline constexpr std::size_t mcp_max_message_bytes = std::size_t{8} << 20;

/// The engine of an index folder's current generation. current() hands out the engine
/// a call uses (a shared snapshot: a call keeps its generation to the end); refresh()
/// opens a generation committed since (the folder's CURRENT replaced) without holding
/// the lock current() takes, so readers never wait for an open; a failed open keeps the
/// previous engine and says so on stderr.
class EngineSlot {
public:
    EngineSlot(std::filesystem::path dir, std::size_t threads);
    [[nodiscard]] std::shared_ptr<const Engine> current() const;
    /// True when it opened a new generation.
    bool refresh();
    [[nodiscard]] const std::filesystem::path& dir() const noexcept { return dir_; }

private:
    [[nodiscard]] std::string current_stamp() const;
    std::filesystem::path dir_;
    std::size_t threads_;
    mutable std::mutex mutex_;  // engine_ and stamp_
    std::mutex open_mutex_;     // one open at a time
    std::string stamp_;
    std::shared_ptr<const Engine> engine_;
};

/// The reply to one MCP message for `reader` (fixed by the server, never by the message),
/// or nothing for a notification or a response.
std::optional<nlohmann::json> mcp_reply(const nlohmann::json& message, EngineSlot& slot, const ragpp::Principal& reader);
/// A JSON-RPC error reply without an id (a parse error: -32700).
nlohmann::json mcp_error(int code, const std::string& message);

}  // namespace cli
