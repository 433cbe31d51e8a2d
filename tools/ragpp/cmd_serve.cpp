// ragpp serve DIR: an HTTP/1.1 JSON service over an index folder (cpp-httplib, Debian's
// libcpp-httplib-dev). POST /search and POST /ask answer with exactly the JSON of
// `ragpp search --json` and `ragpp ask --json` (one implementation: service.hpp); GET
// /get?source=PATH:LINE reopens a source (ragpp get); GET /health; POST /mcp is the MCP
// server over Streamable HTTP (mcp.hpp). The reader of a request is the one its bearer
// token maps to (--tokens FILE: lines TOKEN<TAB>group,group); no token: unlabelled
// documents only; an unknown token: 401. A watcher opens each generation `ragpp index`
// commits, and requests use it from then on without waiting for the open. SIGTERM and
// SIGINT stop accepting, finish the requests in flight and exit 0.
#include "cli.hpp"
#include "engine.hpp"
#include "mcp.hpp"
#include "service.hpp"

#include <ragpp/detail/file.hpp>
#include <ragpp/detail/json_dump.hpp>
#include <ragpp/chunk/front_matter.hpp>
#include <ragpp/filter/access.hpp>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <pthread.h>
#include <sys/socket.h>

namespace {

using nlohmann::json;

/// A request the client got wrong: its status and message.
struct HttpError {
    int status;
    std::string message;
};

/// TOKEN -> groups, from a file of lines TOKEN<TAB>group,group ('#' comments, blank lines).
std::map<std::string, std::vector<std::string>> read_tokens(const std::string& path) {
    std::map<std::string, std::vector<std::string>> out;
    std::istringstream in(ragpp::detail::read_regular_file(path, std::uint64_t{16} << 20));
    std::size_t number = 0;
    for (std::string line; std::getline(in, line);) {
        ++number;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty() || line[0] == '#') continue;
        const std::string at = cli::printable(path) + ":" + std::to_string(number);
        const auto tab = line.find('\t');
        if (tab == std::string::npos || tab == 0)
            throw cli::UsageError("--tokens " + at + ": expected TOKEN<TAB>group,group");
        const std::string token = line.substr(0, tab);
        if (token.size() < 16) throw cli::UsageError("--tokens " + at + ": a token shorter than 16 characters");
        std::vector<std::string> groups;
        std::stringstream ss(line.substr(tab + 1));
        for (std::string g; std::getline(ss, g, ',');) {
            if (const std::string why = ragpp::group_name_problem(g); !why.empty())
                throw cli::UsageError("--tokens " + at + ": '" + cli::printable(g) + "' is no group name: it " + why);
            groups.push_back(g);
        }
        if (!out.emplace(token, std::move(groups)).second)
            throw cli::UsageError("--tokens " + at + ": a token listed twice");
    }
    return out;
}

std::string error_body(const std::string& message) { return cli::dump_json(json{{"error", message}}); }

class Service {
public:
    Service(cli::EngineSlot& slot, std::map<std::string, std::vector<std::string>> tokens)
        : slot_(slot), tokens_(std::move(tokens)) {}

    /// The reader of a request: its bearer token's groups; no token: no group.
    ragpp::Principal reader(const httplib::Request& req) const {
        if (!req.has_header("Authorization")) return {};
        const std::string h = req.get_header_value("Authorization");
        const std::string scheme = "Bearer ";
        if (h.compare(0, scheme.size(), scheme) != 0) throw HttpError{401, "Authorization: expected Bearer TOKEN"};
        const auto it = tokens_.find(h.substr(scheme.size()));
        if (it == tokens_.end()) throw HttpError{401, "unknown token"};
        return ragpp::Principal::with_groups(it->second);
    }

    void install(httplib::Server& server) {
        server.Post("/search", [this](const httplib::Request& req, httplib::Response& res) {
            guarded(res, [&] {
                auto rq = cli::search_request(parse_body(req), 1000, reader(req), "field");
                rq.text = false;  // the JSON is the reply, written as text from the results
                rq.json_tree = false;
                reply(res, cli::search(*slot_.current(), rq));
            });
        });
        server.Post("/ask", [this](const httplib::Request& req, httplib::Response& res) {
            guarded(res, [&] {
                auto rq = cli::ask_request(parse_body(req), reader(req), "field");
                rq.reopen = "ask GET /get?source=PATH:LINE with the path:line of its citation.";
                reply(res, cli::ask(*slot_.current(), rq));
            });
        });
        server.Get("/get", [this](const httplib::Request& req, httplib::Response& res) {
            guarded(res, [&] {
                if (!req.has_param("source")) throw HttpError{400, "query parameter 'source' is missing"};
                const std::string spec = cli::source_spec(req.get_param_value("source"),
                                                          req.has_param("lines") ? req.get_param_value("lines") : "");
                const auto who = reader(req);
                cli::Reply r;
                try {
                    r = cli::get(*slot_.current(), spec, who);
                } catch (const ragpp::NotFoundError& e) {
                    throw HttpError{404, e.what()};
                }
                const int status = r.exit_status != 0 ? 410 : 200;
                reply(res, std::move(r), status);  // 410 Gone: deleted since indexed
            });
        });
        server.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
            const auto engine = slot_.current();
            res.set_content(cli::dump_json(json{{"status", "ok"}, {"generation", engine->generation()}}),
                            "application/json");
        });
        // MCP over Streamable HTTP: one JSON-RPC message per POST, answered with one JSON
        // reply (202 for a notification); no server-sent event stream (GET: 405).
        server.Post("/mcp", [this](const httplib::Request& req, httplib::Response& res) {
            guarded(res, [&] {
                check_origin(req);
                const auto who = reader(req);
                json msg;
                try {
                    msg = json::parse(req.body);
                } catch (const json::parse_error& e) {
                    res.status = 400;
                    res.set_content(cli::dump_json(cli::mcp_error(-32700, std::string("Parse error: ") + e.what())),
                                    "application/json");
                    return;
                }
                const auto r = cli::mcp_reply(msg, slot_, who);
                if (!r) {
                    res.status = 202;
                    return;
                }
                res.set_content(cli::dump_json(*r), "application/json");
            });
        });
        server.Get("/mcp", [](const httplib::Request&, httplib::Response& res) {
            res.status = 405;
            res.set_header("Allow", "POST");
            res.set_content(error_body("this server sends no event stream: POST JSON-RPC messages"), "application/json");
        });
        server.Delete("/mcp", [](const httplib::Request&, httplib::Response& res) {
            res.status = 405;
            res.set_header("Allow", "POST");
        });
        server.set_error_handler([](const httplib::Request&, httplib::Response& res) {
            if (!res.body.empty()) return;
            const char* what = res.status == 413   ? "request body too large (--max-body)"
                               : res.status == 404 ? "no such endpoint: POST /search, /ask, /mcp; GET /get, /health"
                                                   : "bad request";
            res.set_content(error_body(what), "application/json");
        });
    }

private:
    template <class F>
    static void guarded(httplib::Response& res, F&& f) {
        try {
            f();
        } catch (const HttpError& e) {
            res.status = e.status;
            if (e.status == 401) res.set_header("WWW-Authenticate", "Bearer");
            res.set_content(error_body(e.message), "application/json");
        } catch (const cli::RequestError& e) {
            res.status = 400;
            res.set_content(error_body(e.what()), "application/json");
        } catch (const cli::UsageError& e) {
            res.status = 400;
            res.set_content(error_body(e.what()), "application/json");
        } catch (const ragpp::InvalidArgument& e) {
            res.status = 400;
            res.set_content(error_body(e.what()), "application/json");
        } catch (const ragpp::Error& e) {
            res.status = 500;
            res.set_content(error_body(e.what()), "application/json");
        } catch (const std::exception& e) {
            res.status = 500;
            res.set_content(error_body(std::string("internal error: ") + e.what()), "application/json");
        }
    }

    /// The reply's JSON written straight into the response's body (set_content would copy it).
    static void reply(httplib::Response& res, cli::Reply&& r, int status = 200) {
        res.status = status;
        if (!r.json_text.empty()) {
            res.body = std::move(r.json_text);
        } else {
            res.body.clear();
            ragpp::detail::append_json(res.body, r.json);
        }
        res.set_header("Content-Type", "application/json");
    }

    /// DNS rebinding: a browser page's request carries its Origin; only loopback pages may call.
    static void check_origin(const httplib::Request& req) {
        if (!req.has_header("Origin")) return;
        const std::string o = req.get_header_value("Origin");
        for (const char* ok : {"http://localhost", "http://127.0.0.1", "http://[::1]"})
            if (o == ok || o.rfind(std::string(ok) + ":", 0) == 0) return;
        throw HttpError{403, "Origin '" + cli::printable(o) + "' is not allowed"};
    }

    static json parse_body(const httplib::Request& req) {
        json body;
        try {
            body = json::parse(req.body);
        } catch (const json::parse_error& e) {
            throw HttpError{400, std::string("malformed JSON: ") + e.what()};
        }
        if (!body.is_object()) throw HttpError{400, "the body must be a JSON object"};
        return body;
    }

    cli::EngineSlot& slot_;
    std::map<std::string, std::vector<std::string>> tokens_;
};

int run_serve(cli::ArgParser& p) {
    const std::string bind = p.get("bind");
    const std::size_t port = p.count("port");
    if (port > 65535) throw cli::UsageError("--port must be in [0, 65535]");
    const std::size_t threads = p.count("threads");
    if (threads == 0) throw cli::UsageError("--threads must be >= 1");
    const std::size_t max_body = p.count("max-body");
    const bool watch = p.has("watch");
    const auto interval = std::chrono::milliseconds(static_cast<long long>(p.number("watch-interval") * 1000));
    const auto tokens = p.has("tokens") ? read_tokens(p.get("tokens")) : std::map<std::string, std::vector<std::string>>{};

    // SIGTERM and SIGINT are taken by a thread of their own (sigwait), blocked in every
    // other thread (masked before any is started).
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

    cli::EngineSlot slot(p.get("DIR"), 1);
    if (watch && slot.current()->corpus_kind() != "folder")
        throw cli::UsageError("--watch re-indexes a folder of files; '" + p.get("DIR") + "' is the index of a " +
                              slot.current()->corpus_kind() + " corpus");
    Service service(slot, tokens);
    httplib::Server server;
    service.install(server);
    server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    server.set_payload_max_length(max_body);
    server.set_read_timeout(10, 0);   // a client that stops sending mid-request
    server.set_write_timeout(10, 0);  // or stops reading
    server.set_keep_alive_timeout(5);
    server.set_keep_alive_max_count(1000);
    server.set_tcp_nodelay(true);  // a reply in two writes must not wait for a delayed ACK
    // cpp-httplib listens with a backlog of 5 (CPPHTTPLIB_LISTEN_BACKLOG, compiled into
    // Debian's library): 32 clients connecting at once overflow it, and a connection whose
    // handshake the kernel dropped fails its first request after about a second
    // (bench_serve saw it). The listening socket is kept here and listen() called again
    // with the system's maximum, which Linux allows on a listening socket.
    int listening = -1;
    server.set_socket_options([&listening](socket_t sock) {
        httplib::default_socket_options(sock);
        listening = sock;
    });

    int bound = static_cast<int>(port);
    if (port == 0) {
        bound = server.bind_to_any_port(bind);
        if (bound < 0) throw ragpp::IoError("ragpp serve: cannot bind to " + bind);
    } else if (!server.bind_to_port(bind, bound)) {
        throw ragpp::IoError("ragpp serve: cannot bind to " + bind + ":" + std::to_string(bound) +
                             " (in use, or not an address of this machine)");
    }
    if (listening >= 0 && ::listen(listening, SOMAXCONN) != 0)
        std::fprintf(stderr, "ragpp serve: note: the listen backlog stays at cpp-httplib's 5 (%s)\n", std::strerror(errno));
    const bool loopback = bind == "127.0.0.1" || bind == "::1" || bind == "localhost";
    std::fprintf(stderr, "ragpp serve: %s, generation %llu, on http://%s:%d with %zu threads (%s)\n",
                 cli::printable(p.get("DIR")).c_str(), static_cast<unsigned long long>(slot.current()->generation()),
                 bind.c_str(), bound, threads,
                 loopback ? "loopback only: --bind 0.0.0.0 serves other machines"
                          : "reachable from other machines: use --tokens, and TLS in front of it");
    if (watch)
        std::fprintf(stderr, "ragpp serve: watching %s every %g s\n", cli::printable(slot.current()->corpus_root().string()).c_str(),
                     static_cast<double>(interval.count()) / 1000);

    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    // A thread calling `work` every `period` until the server stops.
    auto periodic = [&](std::chrono::milliseconds period, auto work) {
        return std::thread([&m, &cv, &done, period, work]() mutable {
            std::unique_lock lock(m);
            while (!cv.wait_for(lock, period, [&] { return done; })) {
                lock.unlock();
                work();
                lock.lock();
            }
        });
    };
    // The watcher: a generation committed by ragpp index is opened here, not in a request.
    std::thread watcher = periodic(std::chrono::milliseconds(250), [&slot] { slot.refresh(); });
    // --watch: the corpus is looked at every interval; when a file was added, edited
    // (or its contexts) or deleted, a new generation is committed here (the
    // library's update_if_pending: the index's own settings, walk options and contexts),
    // which the watcher above then swaps in. A failure (another ragpp index holding the
    // folder, an unreadable file) is said once and retried at the next look.
    std::thread indexer;
    if (watch)
        indexer = periodic(interval, [&slot, last_error = std::string()]() mutable {
            try {
                if (const auto r = ragpp::update_if_pending(*slot.current(), slot.dir(), 1)) {
                    std::fprintf(stderr, "ragpp serve: re-indexed: %zu added, %zu changed, %zu removed: generation %llu\n",
                                 r->counts.added, r->counts.changed, r->counts.removed,
                                 static_cast<unsigned long long>(r->generation));
                    slot.refresh();
                }
                last_error.clear();
            } catch (const std::exception& e) {
                if (e.what() != last_error)
                    std::fprintf(stderr, "ragpp serve: --watch: %s (trying again)\n", cli::printable(e.what()).c_str());
                last_error = e.what();
            }
        });
    std::thread stopper([&] {
        int sig = 0;
        sigwait(&stop_signals, &sig);
        std::fprintf(stderr, "ragpp serve: %s: finishing the requests in flight\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
        server.stop();
    });
    const bool ok = server.listen_after_bind();  // returns once stopped, the pool drained
    {
        std::lock_guard lock(m);
        done = true;
    }
    cv.notify_all();
    watcher.join();
    if (indexer.joinable()) indexer.join();
    if (stopper.joinable()) {
        pthread_kill(stopper.native_handle(), SIGTERM);  // wakes its sigwait when listen ended on its own
        stopper.join();
    }
    std::fprintf(stderr, "ragpp serve: stopped\n");
    return ok ? 0 : 1;
}

const cli::Register register_serve{
    {"serve", "serve an index folder over HTTP: JSON search, ask, get, health, and MCP at /mcp",
     [](cli::ArgParser& p) {
         p.positional("DIR", "an index folder written by ragpp index")
             .option("bind", "ADDR", "the address to listen on (loopback unless told otherwise)", "127.0.0.1")
             .option("port", "N", "the port (0: any free one, printed on stderr)", "8080")
             .option("tokens", "FILE",
                     "bearer tokens: lines TOKEN<TAB>group,group (a token of 16 characters or more); a request "
                     "without a token reads unlabelled documents only, one with an unknown token gets 401")
             .option("threads", "N", "requests served at once", "8")
             .option("max-body", "BYTES", "the largest request body (413 beyond)", "1048576")
             .flag("watch",
                   "re-index the corpus when its files change (added, edited, deleted; or its contexts), with the "
                   "index's own settings, and serve the new generation")
             .option("watch-interval", "S", "with --watch: seconds between two looks at the corpus", "2");
         p.epilog("POST /search {query, k?, mode?, filter?} and POST /ask {question, passages?, budget?, mode?, "
                  "filter?} answer with the JSON of ragpp search --json and ragpp ask --json; GET "
                  "/get?source=PATH:LINE[&lines=A-B]; GET /health; POST /mcp: the MCP tools over Streamable HTTP. "
                  "A generation committed by ragpp index (or by --watch) is used without a restart. SIGTERM finishes the requests "
                  "in flight and exits. docs/http.md has a transcript.");
     },
     run_serve}};

}  // namespace
