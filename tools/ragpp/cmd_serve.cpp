// ragpp serve DIR: an HTTP/1.1 JSON service over an index folder (Boost.Beast, Debian's
// libboost-dev: an event loop over the connections, see docs/http.md). POST /search and POST /ask answer with exactly the JSON of
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

#include <nlohmann/json.hpp>

// Boost.Beast over Boost.Asio (Debian's libboost-dev, headers only). <utility> first: Boost
// 1.74's asio/awaitable.hpp uses std::exchange without including it, which GCC 12 in
// C++20 refuses.
#include <utility>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <pthread.h>
#include <sys/resource.h>

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

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

/// A request as the handlers see it: the message, its path and its decoded query.
struct Request {
    const http::request<http::string_body>& msg;
    std::string path;
    std::map<std::string, std::string> params;

    [[nodiscard]] bool has_header(http::field f) const { return msg.find(f) != msg.end(); }
    [[nodiscard]] std::string header(http::field f) const { return std::string(msg[f]); }
    [[nodiscard]] bool has_param(const std::string& name) const { return params.count(name) != 0; }
    [[nodiscard]] const std::string& param(const std::string& name) const { return params.at(name); }
};

/// What a handler answers: a status, a JSON body (or none) and extra headers.
struct Response {
    int status = 200;
    std::string body;
    std::vector<std::pair<http::field, std::string>> headers;
};

/// `s` with %XX escapes decoded and '+' read as a space (a query string's form encoding).
std::string url_decode(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    const auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '+') {
            out += ' ';
        } else if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
            out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
            i += 2;
        } else {
            out += s[i];
        }
    }
    return out;
}

/// The request's path and query parameters (the first of a name repeated wins).
void split_target(std::string_view target, std::string& path, std::map<std::string, std::string>& params) {
    const auto q = target.find('?');
    path = url_decode(target.substr(0, q));
    if (q == std::string_view::npos) return;
    std::string_view query = target.substr(q + 1);
    while (!query.empty()) {
        const auto amp = query.find('&');
        const std::string_view pair = query.substr(0, amp);
        const auto eq = pair.find('=');
        if (!pair.empty())
            params.emplace(url_decode(pair.substr(0, eq)),
                           eq == std::string_view::npos ? std::string() : url_decode(pair.substr(eq + 1)));
        if (amp == std::string_view::npos) break;
        query.remove_prefix(amp + 1);
    }
}

class Service {
public:
    Service(cli::EngineSlot& slot, std::map<std::string, std::vector<std::string>> tokens)
        : slot_(slot), tokens_(std::move(tokens)) {}

    /// The reader of a request: its bearer token's groups; no token: no group.
    ragpp::Principal reader(const Request& req) const {
        if (!req.has_header(http::field::authorization)) return {};
        const std::string h = req.header(http::field::authorization);
        const std::string scheme = "Bearer ";
        if (h.compare(0, scheme.size(), scheme) != 0) throw HttpError{401, "Authorization: expected Bearer TOKEN"};
        const auto it = tokens_.find(h.substr(scheme.size()));
        if (it == tokens_.end()) throw HttpError{401, "unknown token"};
        return ragpp::Principal::with_groups(it->second);
    }

    /// Answers one request (any thread; the engine is the slot's current one).
    void handle(http::verb method, const Request& req, Response& res) const {
        const auto& path = req.path;
        const bool get = method == http::verb::get || method == http::verb::head;
        if (path == "/search" && method == http::verb::post) {
            guarded(res, [&] {
                auto rq = cli::search_request(parse_body(req), 1000, reader(req), "field");
                rq.text = false;  // the JSON is the reply, written as text from the results
                rq.json_tree = false;
                reply(res, cli::search(*slot_.current(), rq));
            });
        } else if (path == "/ask" && method == http::verb::post) {
            guarded(res, [&] {
                auto rq = cli::ask_request(parse_body(req), reader(req), "field");
                rq.reopen = "ask GET /get?source=PATH:LINE with the path:line of its citation.";
                reply(res, cli::ask(*slot_.current(), rq));
            });
        } else if (path == "/get" && get) {
            guarded(res, [&] {
                if (!req.has_param("source")) throw HttpError{400, "query parameter 'source' is missing"};
                const std::string spec =
                    cli::source_spec(req.param("source"), req.has_param("lines") ? req.param("lines") : "");
                const auto who = reader(req);
                cli::Reply r;
                try {
                    r = cli::get(*slot_.current(), spec, who);
                } catch (const ragpp::NotFoundError& e) {
                    throw HttpError{404, e.what()};
                }
                const int status = r.exit_status != 0 ? 410 : 200;  // 410 Gone: deleted since indexed
                reply(res, std::move(r), status);
            });
        } else if (path == "/health" && get) {
            const auto engine = slot_.current();
            res.body = cli::dump_json(json{{"status", "ok"}, {"generation", engine->generation()}});
        } else if (path == "/mcp" && method == http::verb::post) {
            // MCP over Streamable HTTP: one JSON-RPC message per POST, answered with one JSON
            // reply (202 for a notification); no server-sent event stream (GET: 405).
            guarded(res, [&] {
                check_origin(req);
                const auto who = reader(req);
                json msg;
                try {
                    msg = json::parse(req.msg.body());
                } catch (const json::parse_error& e) {
                    res.status = 400;
                    res.body = cli::dump_json(cli::mcp_error(-32700, std::string("Parse error: ") + e.what()));
                    return;
                }
                const auto r = cli::mcp_reply(msg, slot_, who);
                if (!r) {
                    res.status = 202;
                    return;
                }
                res.body = cli::dump_json(*r);
            });
        } else if (path == "/mcp" && (get || method == http::verb::delete_)) {
            res.status = 405;
            res.headers.emplace_back(http::field::allow, "POST");
            res.body = error_body("this server sends no event stream: POST JSON-RPC messages");
        } else {
            res.status = 404;
            res.body = error_body("no such endpoint: POST /search, /ask, /mcp; GET /get, /health");
        }
    }

private:
    template <class F>
    static void guarded(Response& res, F&& f) {
        try {
            f();
        } catch (const HttpError& e) {
            res = {};
            res.status = e.status;
            if (e.status == 401) res.headers.emplace_back(http::field::www_authenticate, "Bearer");
            res.body = error_body(e.message);
        } catch (const cli::RequestError& e) {
            res = {400, error_body(e.what()), {}};
        } catch (const cli::UsageError& e) {
            res = {400, error_body(e.what()), {}};
        } catch (const ragpp::InvalidArgument& e) {
            res = {400, error_body(e.what()), {}};
        } catch (const ragpp::Error& e) {
            res = {500, error_body(e.what()), {}};
        } catch (const std::exception& e) {
            res = {500, error_body(std::string("internal error: ") + e.what()), {}};
        }
    }

    /// The reply's JSON, moved (search) or written (the others) into the body.
    static void reply(Response& res, cli::Reply&& r, int status = 200) {
        res.status = status;
        if (!r.json_text.empty()) res.body = std::move(r.json_text);
        else ragpp::detail::append_json(res.body, r.json);
    }

    /// DNS rebinding: a browser page's request carries its Origin; only loopback pages may call.
    static void check_origin(const Request& req) {
        if (!req.has_header(http::field::origin)) return;
        const std::string o = req.header(http::field::origin);
        for (const char* ok : {"http://localhost", "http://127.0.0.1", "http://[::1]"})
            if (o == ok || o.rfind(std::string(ok) + ":", 0) == 0) return;
        throw HttpError{403, "Origin '" + cli::printable(o) + "' is not allowed"};
    }

    static json parse_body(const Request& req) {
        json body;
        try {
            body = json::parse(req.msg.body());
        } catch (const json::parse_error& e) {
            throw HttpError{400, std::string("malformed JSON: ") + e.what()};
        }
        if (!body.is_object()) throw HttpError{400, "the body must be a JSON object"};
        return body;
    }

    cli::EngineSlot& slot_;
    std::map<std::string, std::vector<std::string>> tokens_;
};

class Session;

/// The connections alive, for stop(); shared with them, so that a connection destroyed
/// with the loop (after the 30 s bound of a stop) does not outlive it.
struct Sessions {
    std::mutex m;
    std::map<Session*, std::weak_ptr<Session>> live;
    void forget(Session* s) {
        std::lock_guard lock(m);
        live.erase(s);
    }
};

/// The listening socket and the connections: an event loop run by --threads threads, no
/// thread per connection. stop() closes the listening socket and the connections that
/// wait for a request; those with a request in flight answer it and close.
class Server {
public:
    Server(net::io_context& ioc, const Service& service, std::size_t max_body)
        : ioc_(ioc), acceptor_(net::make_strand(ioc)), retry_(acceptor_.get_executor()), service_(service),
          max_body_(max_body) {}

    /// Binds and listens (the system's largest backlog: 32 clients connecting at once
    /// must not have their handshakes dropped); the port bound.
    unsigned short listen(const std::string& host, std::size_t port) {
        beast::error_code ec;
        tcp::resolver resolver(ioc_);
        const auto found = resolver.resolve(host, std::to_string(port), tcp::resolver::passive | tcp::resolver::numeric_service, ec);
        if (ec || found.empty()) throw ragpp::IoError("ragpp serve: cannot bind to " + host + " (" + ec.message() + ")");
        const tcp::endpoint at = found.begin()->endpoint();
        acceptor_.open(at.protocol(), ec);
        if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
        if (!ec) acceptor_.bind(at, ec);
        if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
        if (ec)
            throw ragpp::IoError("ragpp serve: cannot bind to " + host + ":" + std::to_string(port) + " (" + ec.message() +
                                 ": in use, or not an address of this machine)");
        return acceptor_.local_endpoint().port();
    }
    void start() { net::dispatch(acceptor_.get_executor(), [this] { accept(); }); }
    void stop();

    [[nodiscard]] bool stopping() const { return stopping_; }
    [[nodiscard]] const Service& service() const { return service_; }
    [[nodiscard]] std::size_t max_body() const { return max_body_; }
    [[nodiscard]] const std::shared_ptr<Sessions>& sessions() const { return sessions_; }

private:
    void accept();

    net::io_context& ioc_;
    tcp::acceptor acceptor_;
    net::steady_timer retry_;  // on the acceptor's strand
    bool accept_trouble_ = false;
    const Service& service_;
    std::size_t max_body_;
    std::atomic<bool> stopping_{false};
    std::shared_ptr<Sessions> sessions_ = std::make_shared<Sessions>();
};

/// One connection: read a request (10 s at most, the wait for it included), answer it,
/// and again while the client keeps the connection alive.
class Session : public std::enable_shared_from_this<Session> {
public:
    Session(tcp::socket&& socket, Server& server)
        : stream_(std::move(socket)), server_(server), sessions_(server.sessions()) {}
    ~Session() { sessions_->forget(this); }
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    void start() {
        net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->read_header(); });
    }
    /// On the session's strand, when the server stops: a connection waiting for its next
    /// request is ended, unless that request's first bytes have arrived (it is then
    /// answered, with Connection: close). Ended gently: a FIN, and 1 s for the client to
    /// close its side, so that a request it sent meanwhile meets an end of stream, not a
    /// reset (closing a socket with unread bytes resets it).
    void close_if_idle() {
        if (!reading_ || !parser_ || parser_->got_some() || buffer_.size() != 0) return;
        beast::error_code ec;
        if (stream_.socket().available(ec) > 0 && !ec) return;
        shut_sending(std::chrono::seconds(1));  // the pending read then drains (on_header)
        ended_ = true;
    }
    [[nodiscard]] auto executor() { return stream_.get_executor(); }

private:
    static constexpr auto kRequestTime = std::chrono::seconds(10);  // a request's reading, or a reply's writing

    void read_header() {
        if (server_.stopping()) return finish(std::chrono::seconds(1));  // no next request: say so gently
        parser_.emplace();
        parser_->body_limit(server_.max_body());
        reading_ = true;
        stream_.expires_after(kRequestTime);
        http::async_read_header(stream_, buffer_, *parser_,
                                [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_header(ec); });
    }
    void on_header(beast::error_code ec) {
        if (ended_) return ec ? close() : drain();  // a request sent after the server said it was done
        if (ec) return read_failed(ec);
        if (const auto length = parser_->content_length(); length && *length > server_.max_body())
            return refuse(413, "request body too large (--max-body)");
        if (beast::iequals(parser_->get()[http::field::expect], "100-continue")) {
            // curl asks before sending a body over 1 KB: tell it to go on.
            auto go_on = std::make_shared<http::response<http::empty_body>>(http::status::continue_, parser_->get().version());
            return http::async_write(stream_, *go_on, [self = shared_from_this(), go_on](beast::error_code e, std::size_t) {
                if (e) return self->close();
                self->read_body();
            });
        }
        read_body();
    }
    void read_body() {
        http::async_read(stream_, buffer_, *parser_,
                         [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_request(ec); });
    }
    void read_failed(beast::error_code ec) {
        reading_ = false;
        if (ec == http::error::body_limit) return refuse(413, "request body too large (--max-body)");
        if (ec == http::error::header_limit) return refuse(431, "request header too large");
        // The client closed, went silent for 10 s, or the server is stopping: nothing to answer.
        if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == net::error::operation_aborted ||
            ec == net::error::connection_reset || ec == net::error::eof || ec == http::error::partial_message ||
            !stream_.socket().is_open())
            return close();
        refuse(400, "bad request: " + ec.message());
    }
    void on_request(beast::error_code ec) {
        if (ended_) return ec ? close() : drain();
        if (ec) return read_failed(ec);
        reading_ = false;
        const auto& msg = parser_->get();
        Request req{msg, {}, {}};
        split_target(std::string_view(msg.target().data(), msg.target().size()), req.path, req.params);
        Response out;
        server_.service().handle(msg.method(), req, out);
        const bool keep = msg.keep_alive() && !server_.stopping();
        send(std::move(out), msg.version(), keep, msg.method() == http::verb::head);
    }
    void send(Response&& out, unsigned version, bool keep, bool head = false) {
        if (out.body.empty() && out.status >= 400) out.body = error_body("bad request");
        res_ = {};
        res_.version(version);
        res_.result(static_cast<unsigned>(out.status));
        for (auto& [field, value] : out.headers) res_.set(field, value);
        if (!out.body.empty()) res_.set(http::field::content_type, "application/json");
        res_.body() = std::move(out.body);
        res_.keep_alive(keep);
        res_.prepare_payload();
        if (head) res_.body().clear();  // HEAD: the headers of GET, Content-Length included
        stream_.expires_after(kRequestTime);
        http::async_write(stream_, res_, [self = shared_from_this(), keep](beast::error_code ec, std::size_t) {
            if (ec) return self->close();
            if (!keep) return self->finish();
            self->read_header();
        });
    }
    /// A request that cannot be read on: answered with `status`, then the connection ends.
    void refuse(int status, const std::string& message) {
        reading_ = false;
        send({status, error_body(message), {}}, parser_ && parser_->is_header_done() ? parser_->get().version() : 11, false);
    }
    /// No more sending (a FIN), and `wait` at most for the client to close its side.
    void shut_sending(std::chrono::seconds wait) {
        beast::error_code ec;
        stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
        stream_.expires_after(wait);
    }
    /// After the last reply: no more sending, and what the client still sends is read
    /// and dropped (`wait` at most) so that closing does not reset the connection before
    /// the client has read the reply (a 413 sent before the body was read).
    void finish(std::chrono::seconds wait = std::chrono::seconds(2)) {
        shut_sending(wait);
        drain();
    }
    void drain() {
        if (!drain_) drain_ = std::make_unique<std::array<char, 16384>>();
        stream_.async_read_some(net::buffer(*drain_), [self = shared_from_this()](beast::error_code ec, std::size_t) {
            if (ec) return self->close();
            self->drain();
        });
    }
    void close() {
        reading_ = false;
        beast::error_code ec;
        stream_.socket().close(ec);
    }

    beast::tcp_stream stream_;
    Server& server_;
    std::shared_ptr<Sessions> sessions_;
    beast::flat_buffer buffer_;
    std::optional<http::request_parser<http::string_body>> parser_;
    http::response<http::string_body> res_;
    std::unique_ptr<std::array<char, 16384>> drain_;
    bool reading_ = false;
    bool ended_ = false;  // stopped while idle: its sending side is shut
};

void Server::accept() {
    acceptor_.async_accept(net::make_strand(ioc_), [this](beast::error_code ec, tcp::socket socket) {
        if (ec) {
            if (stopping_ || !acceptor_.is_open()) return;
            // Out of file descriptors (or memory): accepting again at once would spin, the
            // connection still waiting in the queue. Said once, tried again in 100 ms.
            if (ec == net::error::no_descriptors || ec == net::error::no_buffer_space || ec == net::error::no_memory) {
                if (!accept_trouble_)
                    std::fprintf(stderr, "ragpp serve: cannot accept connections: %s (trying again every 0.1 s)\n",
                                 ec.message().c_str());
                accept_trouble_ = true;
                retry_.expires_after(std::chrono::milliseconds(100));
                retry_.async_wait([this](beast::error_code e) {
                    if (!e && !stopping_) accept();
                });
                return;
            }
            accept();  // a handshake that failed: go on
            return;
        }
        accept_trouble_ = false;
        beast::error_code ignored;
        socket.set_option(tcp::no_delay(true), ignored);  // a reply must not wait for a delayed ACK
        auto session = std::make_shared<Session>(std::move(socket), *this);
        {
            std::lock_guard lock(sessions_->m);
            sessions_->live.emplace(session.get(), session);
        }
        session->start();
        if (!stopping_) accept();
    });
}

void Server::stop() {
    stopping_ = true;
    net::post(acceptor_.get_executor(), [this] {
        beast::error_code ec;
        acceptor_.close(ec);
        retry_.cancel();
    });
    std::vector<std::shared_ptr<Session>> live;
    {
        std::lock_guard lock(sessions_->m);
        for (auto& [raw, weak] : sessions_->live)
            if (auto s = weak.lock()) live.push_back(std::move(s));
    }
    for (auto& s : live) net::post(s->executor(), [s] { s->close_if_idle(); });
}

int run_serve(cli::ArgParser& p) {
    const std::string bind = p.get("bind");
    const std::size_t port = p.count("port");
    if (port > 65535) throw cli::UsageError("--port must be in [0, 65535]");
    const std::size_t threads = p.count("threads") != 0 ? p.count("threads")
                                                        : std::max<std::size_t>(1, std::thread::hardware_concurrency());
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

    // Each connection is a file descriptor: the soft limit (often 1024) is raised to the
    // hard one (at most 65536), as servers do, so that it is not the first limit met.
    if (rlimit fds{}; getrlimit(RLIMIT_NOFILE, &fds) == 0 && fds.rlim_cur < fds.rlim_max && fds.rlim_cur < 65536) {
        fds.rlim_cur = std::min<rlim_t>(fds.rlim_max, 65536);
        (void)setrlimit(RLIMIT_NOFILE, &fds);
    }

    cli::EngineSlot slot(p.get("DIR"), 1);
    if (watch && slot.current()->corpus_kind() != "folder")
        throw cli::UsageError("--watch re-indexes a folder of files; '" + p.get("DIR") + "' is the index of a " +
                              slot.current()->corpus_kind() + " corpus");
    Service service(slot, tokens);
    net::io_context ioc(static_cast<int>(threads));
    Server server(ioc, service, max_body);
    const unsigned short bound = server.listen(bind, port);
    const bool loopback = bind == "127.0.0.1" || bind == "::1" || bind == "localhost";
    std::fprintf(stderr, "ragpp serve: %s, generation %llu, on http://%s:%u with %zu threads (%s)\n",
                 cli::printable(p.get("DIR")).c_str(), static_cast<unsigned long long>(slot.current()->generation()),
                 (bind.find(':') != std::string::npos ? "[" + bind + "]" : bind).c_str(),  // an IPv6 address in a URL
                 static_cast<unsigned>(bound), threads,
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
    // SIGTERM or SIGINT: stop accepting and close the idle connections; the requests in
    // flight are answered, then the loop runs out of work and its threads return. Should a
    // client hold its connection past that (a reply it does not read), the loop is stopped
    // after 30 s.
    std::condition_variable finished_cv;
    bool finished = false;
    std::thread stopper([&] {
        int sig = 0;
        sigwait(&stop_signals, &sig);
        std::unique_lock lock(m);
        if (finished) return;  // woken by the end of the loop itself
        std::fprintf(stderr, "ragpp serve: %s: finishing the requests in flight\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
        server.stop();
        if (!finished_cv.wait_for(lock, std::chrono::seconds(30), [&] { return finished; })) ioc.stop();
    });
    server.start();
    std::vector<std::thread> loop;
    for (std::size_t i = 1; i < threads; ++i) loop.emplace_back([&ioc] { ioc.run(); });
    ioc.run();
    for (auto& t : loop) t.join();
    {
        std::lock_guard lock(m);
        done = true;
        finished = true;
    }
    cv.notify_all();
    finished_cv.notify_all();
    watcher.join();
    if (indexer.joinable()) indexer.join();
    pthread_kill(stopper.native_handle(), SIGTERM);  // wakes its sigwait if the loop ended on its own
    stopper.join();
    std::fprintf(stderr, "ragpp serve: stopped\n");
    return 0;
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
             .option("threads", "N",
                     "threads running the event loop, and so the requests served at once (0: one per core; more "
                     "only helps when requests wait, not when they compute)",
                     "0")
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
