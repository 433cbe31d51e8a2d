// ragpp detail: running a shell command with a text on its stdin and a time limit,
// reading what it writes (the context command of io/contexts.hpp). POSIX: posix_spawn
// of /bin/sh -c in a process group of its own, so a timeout kills the command and
// whatever it started; the pipes are polled, so a command that writes before it has
// read all of its input never blocks us, and one that exits without reading it does not
// raise SIGPIPE in the caller.
#pragma once

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ragpp/core/error.hpp>

extern char** environ;

namespace ragpp::detail::subprocess {

struct Output {
    int status = 0;          // the exit status (128 + N when killed by signal N)
    bool timed_out = false;  // killed at the time limit
    std::string out;         // stdout, at most max_out bytes (the rest is read and dropped)
    std::string err;         // stderr, at most 4 KiB
};

/// Runs `/bin/sh -c command` with `input` on its stdin. IoError when it cannot be started.
inline Output run_shell(const std::string& command, std::string_view input, std::chrono::milliseconds timeout,
                        std::size_t max_out) {
    int in[2], out[2], err[2];
    auto close_all = [](std::initializer_list<int> fds) {
        for (int fd : fds)
            if (fd >= 0) ::close(fd);
    };
    if (::pipe2(in, O_CLOEXEC) != 0) throw IoError("cannot create a pipe: " + std::string(std::strerror(errno)));
    if (::pipe2(out, O_CLOEXEC) != 0) {
        close_all({in[0], in[1]});
        throw IoError("cannot create a pipe: " + std::string(std::strerror(errno)));
    }
    if (::pipe2(err, O_CLOEXEC) != 0) {
        close_all({in[0], in[1], out[0], out[1]});
        throw IoError("cannot create a pipe: " + std::string(std::strerror(errno)));
    }
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    posix_spawnattr_init(&attr);
    posix_spawnattr_setpgroup(&attr, 0);
    sigset_t defaults;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
    pid_t pid = -1;
    const int rc = ::posix_spawn(&pid, "/bin/sh", &fa, &attr, const_cast<char* const*>(argv), environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    close_all({in[0], out[1], err[1]});
    if (rc != 0) {
        close_all({in[1], out[0], err[0]});
        throw IoError("cannot start '/bin/sh -c " + command + "': " + std::strerror(rc));
    }
    for (int fd : {in[1], out[0], err[0]}) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);

    // Writing to a pipe whose reader exited raises SIGPIPE: blocked in this thread while
    // we write, and a pending one we caused taken back.
    sigset_t pipe_only, old;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
    sigset_t pending;
    sigpending(&pending);
    const bool pipe_was_pending = sigismember(&pending, SIGPIPE) == 1;

    Output o;
    std::size_t written = 0;
    int to_child = in[1];
    if (input.empty()) ::close(to_child), to_child = -1;
    int from_out = out[0], from_err = err[0];
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    char buf[65536];
    while (from_out >= 0 || from_err >= 0) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            o.timed_out = true;
            break;
        }
        pollfd fds[3];
        nfds_t n = 0;
        if (to_child >= 0) fds[n++] = {to_child, POLLOUT, 0};
        if (from_out >= 0) fds[n++] = {from_out, POLLIN, 0};
        if (from_err >= 0) fds[n++] = {from_err, POLLIN, 0};
        const int ready = ::poll(fds, n, static_cast<int>(std::min<long long>(left.count(), 1000)));
        if (ready < 0 && errno != EINTR) break;
        for (nfds_t i = 0; i < n && ready > 0; ++i) {
            if (fds[i].revents == 0) continue;
            if (fds[i].fd == to_child) {
                const ssize_t w = ::write(to_child, input.data() + written, input.size() - written);
                if (w > 0) written += static_cast<std::size_t>(w);
                if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == input.size()) {
                    ::close(to_child);
                    to_child = -1;
                }
                continue;
            }
            const ssize_t r = ::read(fds[i].fd, buf, sizeof buf);
            if (r > 0) {
                std::string& dst = fds[i].fd == from_out ? o.out : o.err;
                const std::size_t cap = fds[i].fd == from_out ? max_out : 4096;
                if (dst.size() < cap) dst.append(buf, std::min<std::size_t>(static_cast<std::size_t>(r), cap - dst.size()));
            } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
                ::close(fds[i].fd);
                (fds[i].fd == from_out ? from_out : from_err) = -1;
            }
        }
    }
    if (to_child >= 0) ::close(to_child);
    if (from_out >= 0) ::close(from_out);
    if (from_err >= 0) ::close(from_err);
    if (o.timed_out) ::kill(-pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (o.timed_out) ::kill(-pid, SIGKILL);  // what it started and left behind
    o.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    if (!pipe_was_pending) {
        sigpending(&pending);
        if (sigismember(&pending, SIGPIPE) == 1) {
            const timespec zero{0, 0};
            (void)::sigtimedwait(&pipe_only, nullptr, &zero);
        }
    }
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    return o;
}

}  // namespace ragpp::detail::subprocess
