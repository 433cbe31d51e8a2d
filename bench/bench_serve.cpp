// bench_serve: ragpp serve under concurrent clients on loopback while a writer commits a
// generation every second, beside the same searches called in-process.
//
//   bench_serve --ragpp build/release/ragpp [--data ../shared/data/scifact] [--seconds 10]
//               [--clients 8,32] [--rounds 3] [--work /tmp/bench-serve] [--server-threads 0]
//
// The corpus: SciFact's 5,183 abstracts, one Markdown file each (a folder corpus, so that
// the writer can change one file a second), indexed by `ragpp index` (BM25 and hashing
// vectors, the tool's defaults). The queries: SciFact's 1,109 claims, in turn.
// For each client count C, each for --seconds, both under the same writer (every second
// it rewrites one file and runs `ragpp index`, which commits a new generation):
//   in-process  C threads calling ragpp::Engine::search on one engine (k 5, the default
//               pipeline, sources checked: what ragpp search runs), its latencies;
//   http        `ragpp serve --threads N` (--server-threads N; 0, the tool's default: one
//               per core), C client threads each with one keep-alive connection (a
//               minimal client, LeanClient below) sending POST /search {"query", "k": 5}:
//               every reply must be 200 with a result list, else it counts as failed.
// Each client count runs --rounds rounds of both sides, in turn first (the machine's speed
// drifts; a single pair of runs moved the ratio by 0.15). One JSON line per round:
// requests, failed, requests/s, p50, p99 and mean latency of both, the CPU time a request took
// (server, clients, in-process threads) and the ratio of the server's to the in-process
// one, the generations committed during each side and the one /health reported at the
// HTTP side's end; then one line per
// C with the medians over the rounds (requests/s, p50s, the per-round ratio) and the
// ratio's range.
#include <ragpp/engine/engine.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

std::string arg(int argc, char** argv, const std::string& name, const std::string& fallback) {
    for (int i = 1; i + 1 < argc; ++i)
        if (argv[i] == "--" + name) return argv[i + 1];
    return fallback;
}

/// The measured side (search threads, server, clients) runs at this niceness, the writer at
/// the default 0: on 2 cores 32 busy threads would otherwise hold `ragpp index` to a 33rd
/// of the machine, and the writer would commit every 3-4 s instead of every second (and
/// less often under the in-process side, whose threads never wait, than under HTTP).
constexpr int kMeasuredNice = 10;
/// Lowers the calling thread's priority to kMeasuredNice (Linux: niceness is per thread).
void lower_this_thread() { (void)setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), kMeasuredNice); }

/// CPU seconds (user and system) of the calling thread so far.
double thread_cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_THREAD, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

/// CPU seconds (user and system, all threads) of process `pid` so far, from /proc.
double process_cpu_seconds(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = stat.rfind(')');  // the command name may hold spaces
    if (close == std::string::npos) return 0;
    std::istringstream fields(stat.substr(close + 2));
    std::string f;
    double ticks = 0;
    for (int i = 3; i <= 15 && fields >> f; ++i)  // fields 14 and 15: utime, stime
        if (i >= 14) ticks += std::stod(f);
    return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double mean(const std::vector<double>& v) {
    double sum = 0;
    for (const double x : v) sum += x;
    return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
}

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

double quantile(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

int run_quiet(const std::vector<std::string>& args) {
    const pid_t pid = fork();
    if (pid == 0) {
        std::freopen("/dev/null", "w", stdout);
        std::freopen("/dev/null", "w", stderr);
        std::vector<char*> a;
        for (const auto& s : args) a.push_back(const_cast<char*>(s.c_str()));
        a.push_back(nullptr);
        execv(a[0], a.data());
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/// Every second: one file rewritten and `ragpp index` run; counts the commits.
struct Writer {
    Writer(std::string r, fs::path c, fs::path i) : ragpp(std::move(r)), corpus(std::move(c)), index(std::move(i)) {}
    std::string ragpp;
    fs::path corpus, index;
    std::atomic<bool> stop{false};
    std::atomic<int> commits{0}, failures{0};
    std::thread thread;

    void start() {
        thread = std::thread([this] {
            for (int round = 0; !stop; ++round) {
                const auto next = Clock::now() + std::chrono::seconds(1);
                std::ofstream(corpus / "writer.md") << "# Writer\n\nRound " << round << " of the writer's edits.\n";
                if (run_quiet({ragpp, "index", corpus.string(), "--out", index.string()}) == 0) ++commits;
                else ++failures;
                while (!stop && Clock::now() < next) std::this_thread::sleep_for(std::chrono::milliseconds(20));
            }
        });
    }
    void finish() {
        stop = true;
        thread.join();
    }
};

/// The load generator's HTTP/1.1 client: one keep-alive connection, each request sent
/// with one write from bytes prepared beforehand, each reply read until its
/// Content-Length, as load generators (wrk) do, so that the 2 cores the server shares
/// with it go to the server. (cpp-httplib's client, used before, formats headers, polls
/// before each read and writes head and body apart: about 60 us of CPU a request against
/// about 30, docs/http.md.) The correctness of the server's HTTP is tested with clients
/// we did not write (tools/ragpp/tests/serve_http.py); this one only checks the status
/// and the reply's result list.
class LeanClient {
public:
    explicit LeanClient(int port) : port_(port) { buf_.reserve(1 << 16); }
    ~LeanClient() { disconnect(); }
    LeanClient(const LeanClient&) = delete;
    LeanClient& operator=(const LeanClient&) = delete;

    /// Sends `request` (a whole HTTP request) and reads the reply: its status and body, or
    /// status 0 and what went wrong in place of the body.
    std::pair<int, std::string_view> send(const std::string& request) {
        if (fd_ < 0 && !connect_to()) return {0, "connect failed"};
        for (std::size_t sent = 0; sent < request.size();) {
            const ssize_t n = ::send(fd_, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
            if (n <= 0) {
                disconnect();
                return {0, "send failed"};
            }
            sent += static_cast<std::size_t>(n);
        }
        buf_.clear();
        std::size_t head_end = std::string::npos, need = 0;
        for (;;) {
            if (head_end == std::string::npos) {
                head_end = buf_.find("\r\n\r\n");
                if (head_end != std::string::npos) {
                    const auto at = find_header(std::string_view(buf_).substr(0, head_end), "content-length:");
                    if (at == std::string::npos) {
                        disconnect();
                        return {0, "no Content-Length"};
                    }
                    need = head_end + 4 + std::strtoull(buf_.c_str() + at, nullptr, 10);
                }
            }
            if (head_end != std::string::npos && buf_.size() >= need) break;
            const std::size_t old = buf_.size();
            buf_.resize(old + 65536);
            const ssize_t n = ::recv(fd_, buf_.data() + old, 65536, 0);
            buf_.resize(old + static_cast<std::size_t>(n > 0 ? n : 0));
            if (n <= 0) {
                disconnect();
                return {0, n == 0 ? "connection closed" : "recv failed or timed out"};
            }
        }
        const std::string_view head(buf_.data(), head_end);
        const int status = head.substr(0, 9) == "HTTP/1.1 " ? std::atoi(buf_.c_str() + 9) : 0;
        if (find_header(head, "connection: close") != std::string::npos) disconnect();  // reconnect next time
        return {status, std::string_view(buf_).substr(head_end + 4, need - head_end - 4)};
    }

private:
    /// The offset just after `name` (lower case) at the start of a header line of `head`.
    static std::size_t find_header(std::string_view head, std::string_view name) {
        for (std::size_t line = head.find("\r\n"); line != std::string_view::npos; line = head.find("\r\n", line + 2)) {
            const auto rest = head.substr(line + 2);
            if (rest.size() < name.size()) continue;
            bool same = true;
            for (std::size_t i = 0; i < name.size() && same; ++i)
                same = std::tolower(static_cast<unsigned char>(rest[i])) == name[i];
            if (same) return line + 2 + name.size();
        }
        return std::string::npos;
    }
    bool connect_to() {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        if (fd_ < 0) return false;
        const int one = 1;
        setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        const timeval timeout{20, 0};
        setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(static_cast<std::uint16_t>(port_));
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
            disconnect();
            return false;
        }
        return true;
    }
    void disconnect() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }
    int port_;
    int fd_ = -1;
    std::string buf_;
};

}  // namespace

int main(int argc, char** argv) {
    const std::string ragpp = arg(argc, argv, "ragpp", "");
    if (ragpp.empty()) {
        std::fprintf(stderr, "usage: bench_serve --ragpp PATH [--data DIR] [--seconds S] [--clients 8,32] [--rounds R] "
                             "[--work DIR] [--server-threads N]\n");
        return 2;
    }
    const fs::path data = arg(argc, argv, "data", RAGPP_SHARED_DIR "/data/scifact");
    const double seconds = std::stod(arg(argc, argv, "seconds", "10"));
    const std::size_t server_threads = std::stoul(arg(argc, argv, "server-threads", "0"));
    const int rounds = std::max(1, std::stoi(arg(argc, argv, "rounds", "3")));
    const fs::path work = arg(argc, argv, "work", (fs::temp_directory_path() / "ragpp-bench-serve").string());
    std::vector<std::size_t> clients;
    {
        std::string list = arg(argc, argv, "clients", "8,32");
        for (std::size_t b = 0; b < list.size();) {
            auto e = list.find(',', b);
            if (e == std::string::npos) e = list.size();
            clients.push_back(std::stoul(list.substr(b, e - b)));
            b = e + 1;
        }
    }
    if (!fs::exists(data / "corpus.jsonl")) {
        std::fprintf(stderr, "bench_serve: %s has no corpus.jsonl (SciFact, in ../shared/data)\n", data.c_str());
        return 1;
    }
    fs::remove_all(work);
    const fs::path corpus = work / "corpus", index = work / "index";
    fs::create_directories(corpus);
    std::vector<std::string> queries;
    {
        std::ifstream in(data / "corpus.jsonl");
        for (std::string line; std::getline(in, line);) {
            const auto j = nlohmann::json::parse(line);
            std::ofstream(corpus / ("d" + j["_id"].get<std::string>() + ".md"))
                << "# " << j.value("title", "") << "\n\n" << j["text"].get<std::string>() << "\n";
        }
        std::ifstream qin(data / "queries.jsonl");
        for (std::string line; std::getline(qin, line);) queries.push_back(nlohmann::json::parse(line)["text"]);
    }
    // Each query's whole request, prepared beforehand.
    std::vector<std::string> requests;
    for (const auto& q : queries) {
        const std::string body = nlohmann::json{{"query", q}, {"k", 5}}.dump();
        requests.push_back("POST /search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                           "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
    }
    if (run_quiet({ragpp, "index", corpus.string(), "--out", index.string()}) != 0) {
        std::fprintf(stderr, "bench_serve: ragpp index failed\n");
        return 1;
    }
    std::printf("{\"bench\":\"serve\",\"corpus_files\":%zu,\"queries\":%zu,\"seconds\":%g,\"cores\":%u,"
                "\"server_threads\":%zu}\n",
                static_cast<std::size_t>(std::distance(fs::directory_iterator(corpus), fs::directory_iterator{})),
                queries.size(), seconds, std::thread::hardware_concurrency(), server_threads);
    std::fflush(stdout);

    // One phase of C clients for `seconds`: latencies (ms) of the requests that succeeded,
    // the failed ones, the elapsed time, the generations the writer committed meanwhile.
    struct Phase {
        std::vector<double> ms;
        std::size_t failed = 0;
        double elapsed = 0;
        int commits = 0, writer_failures = 0;
        std::uint64_t generation = 0;
        int server_exit = 0;
        /// CPU seconds spent by the searching threads (in-process) or the server process,
        /// and by the HTTP clients, while the clients ran.
        double service_cpu = 0, client_cpu = 0;
        [[nodiscard]] double per_s() const { return elapsed > 0 ? static_cast<double>(ms.size()) / elapsed : 0.0; }
    };
    const auto in_process = [&](std::size_t c) {
        Phase out;
        Writer writer(ragpp, corpus, index);
        const auto engine = ragpp::Engine::open(index);
        ragpp::EngineQuery q;
        q.k = 5;
        q.mode = ragpp::default_search_mode(engine.config());
        writer.start();
        std::vector<std::vector<double>> lat(c);
        std::vector<double> cpu(c);
        std::vector<std::thread> threads;
        const auto t_start = Clock::now();
        const auto end = t_start + std::chrono::duration<double>(seconds);
        for (std::size_t t = 0; t < c; ++t)
            threads.emplace_back([&, t] {
                lower_this_thread();
                const double cpu0 = thread_cpu_seconds();
                for (std::size_t i = t; Clock::now() < end; i += c) {
                    const auto t0 = Clock::now();
                    (void)engine.search(queries[i % queries.size()], q);
                    lat[t].push_back(ms_since(t0));
                }
                cpu[t] = thread_cpu_seconds() - cpu0;
            });
        for (auto& th : threads) th.join();
        out.elapsed = std::chrono::duration<double>(Clock::now() - t_start).count();
        writer.finish();
        for (auto& l : lat) out.ms.insert(out.ms.end(), l.begin(), l.end());
        for (const double x : cpu) out.service_cpu += x;
        out.commits = writer.commits;
        out.writer_failures = writer.failures;
        return out;
    };
    // HTTP: ragpp serve with --server-threads threads, C keep-alive clients.
    const auto http = [&](std::size_t c) -> std::optional<Phase> {
        Phase out;
        int err[2];
        if (pipe(err) != 0) return std::nullopt;
        const pid_t server = fork();
        if (server == 0) {
            dup2(err[1], 2);
            close(err[0]);
            std::freopen("/dev/null", "w", stdout);
            const std::string threads = std::to_string(server_threads);
            (void)setpriority(PRIO_PROCESS, 0, kMeasuredNice);  // its threads inherit it
            execl(ragpp.c_str(), ragpp.c_str(), "serve", index.c_str(), "--port", "0", "--threads", threads.c_str(),
                  static_cast<char*>(nullptr));
            _exit(127);
        }
        close(err[1]);
        int port = 0;
        {
            std::string head;
            char ch = 0;
            while (read(err[0], &ch, 1) == 1 && ch != '\n') head += ch;
            const auto at = head.find("http://127.0.0.1:");
            if (at != std::string::npos) port = std::atoi(head.c_str() + at + 17);
        }
        if (port == 0) {
            std::fprintf(stderr, "bench_serve: ragpp serve did not start\n");
            kill(server, SIGKILL);
            return std::nullopt;
        }
        std::thread drain([fd = err[0]] {  // keep reading its stderr (generation notes)
            char buf[4096];
            while (read(fd, buf, sizeof buf) > 0) {
            }
        });
        Writer writer(ragpp, corpus, index);
        writer.start();
        std::vector<std::vector<double>> lat(c);
        std::vector<double> cpu(c);
        const double server_cpu0 = process_cpu_seconds(server);
        std::atomic<std::size_t> failed{0};
        std::vector<std::thread> threads;
        const auto t_start = Clock::now();
        const auto end = t_start + std::chrono::duration<double>(seconds);
        for (std::size_t t = 0; t < c; ++t)
            threads.emplace_back([&, t] {
                lower_this_thread();
                const double cpu0 = thread_cpu_seconds();
                const auto fail = [&](std::size_t i, const std::string& what) {
                    if (++failed <= 5)  // what failed, for the first few
                        std::fprintf(stderr, "bench_serve: request failed at %.0f ms, client %zu request %zu: %s\n",
                                     ms_since(t_start), t, i / c, what.c_str());
                };
                const auto good = [](int status, std::string_view body) {
                    return status == 200 && body.find("\"results\":[") != std::string_view::npos;
                };
                LeanClient cl(port);
                for (std::size_t i = t; Clock::now() < end; i += c) {
                    const auto t0 = Clock::now();
                    const auto [status, body] = cl.send(requests[i % requests.size()]);
                    const double ms = ms_since(t0);
                    if (!good(status, body))
                        fail(i, "status " + std::to_string(status) + ": " + std::string(body.substr(0, 300)));
                    else
                        lat[t].push_back(ms);
                }
                cpu[t] = thread_cpu_seconds() - cpu0;
            });
        for (auto& th : threads) th.join();
        out.elapsed = std::chrono::duration<double>(Clock::now() - t_start).count();
        out.service_cpu = process_cpu_seconds(server) - server_cpu0;
        for (const double x : cpu) out.client_cpu += x;
        writer.finish();
        {
            LeanClient cl(port);
            if (const auto [status, body] = cl.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); status == 200)
                out.generation = nlohmann::json::parse(body)["generation"].get<std::uint64_t>();
        }
        kill(server, SIGTERM);
        int status = 0;
        waitpid(server, &status, 0);
        drain.join();
        close(err[0]);
        for (auto& l : lat) out.ms.insert(out.ms.end(), l.begin(), l.end());
        out.failed = failed;
        out.commits = writer.commits;
        out.writer_failures = writer.failures;
        out.server_exit = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        return out;
    };
    const auto median = [](std::vector<double> v) { return quantile(std::move(v), 0.5); };

    for (const std::size_t c : clients) {
        std::vector<double> http_qps, local_qps, http_p50, local_p50, ratios;
        std::size_t failed = 0, sent = 0;
        for (int round = 0; round < rounds; ++round) {
            // The two sides one after the other, in turn first (the machine's speed drifts).
            std::optional<Phase> remote;
            Phase local;
            if (round % 2 == 0) {
                local = in_process(c);
                remote = http(c);
            } else {
                remote = http(c);
                local = in_process(c);
            }
            if (!remote) return 1;
            const double rp50 = quantile(remote->ms, 0.5), lp50 = quantile(local.ms, 0.5);
            // CPU a request: the server's (all its threads) and the clients' over HTTP, the
            // searching threads' in-process. Their ratio is the throughput ratio the
            // service would reach with its clients on another machine.
            const auto per_request_us = [](double cpu, std::size_t n) { return n ? cpu / static_cast<double>(n) * 1e6 : 0.0; };
            const double server_us = per_request_us(remote->service_cpu, remote->ms.size() + remote->failed);
            const double client_us = per_request_us(remote->client_cpu, remote->ms.size() + remote->failed);
            const double local_us = per_request_us(local.service_cpu, local.ms.size());
            std::printf(
                "{\"clients\":%zu,\"round\":%d,\"http\":{\"requests\":%zu,\"failed\":%zu,\"requests_per_s\":%.0f,"
                "\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"mean_ms\":%.3f,\"server_cpu_us\":%.0f,\"client_cpu_us\":%.0f,\"commits\":%d,"
                "\"writer_failures\":%d,\"generation_at_end\":%llu,\"server_exit\":%d},\"in_process\":{\"requests\":%zu,"
                "\"requests_per_s\":%.0f,\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"mean_ms\":%.3f,\"cpu_us\":%.0f,\"commits\":%d},"
                "\"p50_over_in_process_ms\":%.3f,\"throughput_ratio\":%.2f,\"cpu_ratio\":%.2f}\n",
                c, round + 1, remote->ms.size() + remote->failed, remote->failed, remote->per_s(), rp50,
                quantile(remote->ms, 0.99), mean(remote->ms), server_us, client_us, remote->commits, remote->writer_failures,
                static_cast<unsigned long long>(remote->generation), remote->server_exit, local.ms.size(), local.per_s(),
                lp50, quantile(local.ms, 0.99), mean(local.ms), local_us, local.commits, rp50 - lp50, remote->per_s() / local.per_s(),
                server_us > 0 ? local_us / server_us : 0.0);
            std::fflush(stdout);
            http_qps.push_back(remote->per_s());
            local_qps.push_back(local.per_s());
            http_p50.push_back(rp50);
            local_p50.push_back(lp50);
            ratios.push_back(remote->per_s() / local.per_s());
            failed += remote->failed;
            sent += remote->ms.size() + remote->failed;
        }
        std::printf("{\"clients\":%zu,\"rounds\":%d,\"median\":{\"http_requests_per_s\":%.0f,"
                    "\"in_process_requests_per_s\":%.0f,\"http_p50_ms\":%.3f,\"in_process_p50_ms\":%.3f,"
                    "\"p50_over_in_process_ms\":%.3f,\"throughput_ratio\":%.2f},\"ratio_min\":%.2f,\"ratio_max\":%.2f,"
                    "\"http_requests\":%zu,\"failed\":%zu}\n",
                    c, rounds, median(http_qps), median(local_qps), median(http_p50), median(local_p50),
                    median(http_p50) - median(local_p50), median(ratios),
                    *std::min_element(ratios.begin(), ratios.end()), *std::max_element(ratios.begin(), ratios.end()),
                    sent, failed);
        std::fflush(stdout);
    }
    return 0;
}
