// ragpp_bounded_run --max-rss-mb N --max-seconds S -- CMD ARG...
//
// Runs CMD in its own process group and fails when it goes past a memory or a time
// bound: the hostile-input tests run under it (tests/CMakeLists.txt, the tool's
// tests/hostile_*.cmake). CMD's stdout and stderr pass through unchanged; one line
// "bounded: peak X MB of N, T s of S" goes to stderr when CMD ends. The exit status is
// CMD's (a signal that ended CMD ends this program the same way), or:
//   123  CMD's peak resident memory (ru_maxrss of wait4: CMD and the descendants it
//        waited for) went past N MB; polled while it runs too (/proc/PID/status, VmHWM),
//        so a runaway is stopped early;
//   124  CMD ran S seconds: its process group is killed (SIGKILL);
//   125  a usage error, or CMD could not be started (127: not found).
// Resident memory, not address space: it works under AddressSanitizer, whose shadow
// memory is reserved but mostly untouched (ulimit -v cannot tell the two apart).
// No ragpp include: it compiles in about a second.
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

namespace {

pid_t child_group = 0;

void forward(int sig) {
    if (child_group > 0) kill(-child_group, sig);
}

/// A positive number from `text`, or -1.
double positive(const char* text) {
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(text, &end);
    if (errno || end == text || *end || !(v > 0) || v > 1e9) return -1;
    return v;
}

/// The peak resident memory so far of process `pid` in KiB (VmHWM), or 0 when unknown.
long peak_kib(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6);
    return 0;
}

int usage(const char* why) {
    std::fprintf(stderr, "ragpp_bounded_run: %s\nusage: ragpp_bounded_run --max-rss-mb N --max-seconds S -- CMD [ARG...]\n",
                 why);
    return 125;
}

}  // namespace

int main(int argc, char** argv) {
    double max_mb = -1, max_s = -1;
    int i = 1;
    for (; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--") {
            ++i;
            break;
        }
        if (i + 1 >= argc) return usage(("'" + a + "' needs a value").c_str());
        if (a == "--max-rss-mb")
            max_mb = positive(argv[++i]);
        else if (a == "--max-seconds")
            max_s = positive(argv[++i]);
        else
            return usage(("unknown option '" + a + "'").c_str());
    }
    if (max_mb < 0 || max_s < 0) return usage("--max-rss-mb and --max-seconds take a number > 0, and both are needed");
    if (i >= argc) return usage("no command after --");
    char** cmd = argv + i;

    const auto t0 = std::chrono::steady_clock::now();
    const pid_t pid = fork();
    if (pid < 0) {
        std::perror("ragpp_bounded_run: fork");
        return 125;
    }
    if (pid == 0) {
        setpgid(0, 0);
        execvp(cmd[0], cmd);
        std::fprintf(stderr, "ragpp_bounded_run: cannot run '%s': %s\n", cmd[0], std::strerror(errno));
        _exit(errno == ENOENT ? 127 : 125);
    }
    setpgid(pid, pid);  // also here: no race with the kill below
    child_group = pid;
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) std::signal(sig, forward);

    const double max_kib = max_mb * 1024;
    int status = 0;
    rusage ru{};
    bool timed_out = false, too_big = false;
    long polled = 0;
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
    for (;;) {
        const pid_t r = wait4(pid, &status, WNOHANG, &ru);
        if (r == pid) break;
        if (r < 0 && errno != EINTR) {
            std::perror("ragpp_bounded_run: wait4");
            kill(-pid, SIGKILL);
            return 125;
        }
        if (!timed_out && !too_big) {
            if (elapsed() >= max_s) timed_out = true;
            polled = peak_kib(pid);
            if (static_cast<double>(polled) > max_kib) too_big = true;
            if (timed_out || too_big) kill(-pid, SIGKILL);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(timed_out || too_big ? 1 : 10));
    }
    kill(-pid, SIGKILL);  // what CMD left running in its group goes too
    const double seconds = elapsed();
    const double peak_mb = static_cast<double>(std::max<long>(ru.ru_maxrss, polled)) / 1024;
    std::fprintf(stderr, "bounded: peak %.1f MB of %g, %.2f s of %g\n", peak_mb, max_mb, seconds, max_s);
    if (too_big || peak_mb > max_mb) {
        std::fprintf(stderr, "bounded: memory bound exceeded: peak %.1f MB > %g MB (%s)\n", peak_mb, max_mb, cmd[0]);
        return 123;
    }
    if (timed_out) {
        std::fprintf(stderr, "bounded: time bound exceeded: killed after %.2f s > %g s (%s)\n", seconds, max_s, cmd[0]);
        return 124;
    }
    if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        const rlimit no_core{0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
        std::signal(sig, SIG_DFL);
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, sig);
        sigprocmask(SIG_UNBLOCK, &set, nullptr);
        raise(sig);
        return 128 + sig;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 125;
}
