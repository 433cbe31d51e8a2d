// ragpp detail: POSIX file plumbing for durable saves (io/generations.hpp) and for
// hashing a file in blocks (io/sources.hpp); whole files are read by detail/file.hpp.
// std::fstream cannot fsync and hides errno; these calls say what failed ("No space
// left on device") and name the file in an IoError.
#pragma once

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <optional>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ragpp/core/error.hpp>
#include <ragpp/detail/file.hpp>
#include <ragpp/detail/hash.hpp>

namespace ragpp::detail {

/// An open file descriptor, closed by the destructor.
class UniqueFd {
public:
    explicit UniqueFd(int fd = -1) noexcept : fd_(fd) {}
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;
    UniqueFd(UniqueFd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
    UniqueFd& operator=(UniqueFd&& o) noexcept {
        if (this != &o) {
            reset();
            fd_ = o.fd_;
            o.fd_ = -1;
        }
        return *this;
    }
    ~UniqueFd() { reset(); }
    [[nodiscard]] int get() const noexcept { return fd_; }
    explicit operator bool() const noexcept { return fd_ >= 0; }
    void reset() noexcept {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }
    /// Closes and reports the error of close() (a delayed write error on some file systems).
    int close() noexcept {
        const int r = fd_ >= 0 ? ::close(fd_) : 0;
        fd_ = -1;
        return r;
    }

private:
    int fd_;
};

/// 16 lower-case hex digits of `v`, and back (checksums in manifests).
[[nodiscard]] inline std::string hex64(std::uint64_t v) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
    return buf;
}
[[nodiscard]] inline std::optional<std::uint64_t> parse_hex64(std::string_view s) {
    if (s.size() != 16) return std::nullopt;
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
    if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
    return v;
}

[[nodiscard]] inline std::string errno_text(int e) { return std::strerror(e); }

[[nodiscard]] inline IoError io_error(const char* what, const std::filesystem::path& p, int e) {
    return IoError(std::string("cannot ") + what + " '" + p.string() + "': " + errno_text(e));
}

/// Opens `p` for reading; IoError naming it otherwise.
[[nodiscard]] inline UniqueFd open_fd_for_reading(const std::filesystem::path& p) {
    int fd;
    do fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) throw io_error("open", p, errno);
    return UniqueFd(fd);
}

/// Calls fn(const char* data, std::size_t n) for each block of the open file `fd`
/// (named `p` in errors) until its end; returns the number of bytes read.
template <class Fn>
std::uint64_t for_each_block(int fd, const std::filesystem::path& p, Fn&& fn) {
    char buf[1 << 16];
    std::uint64_t total = 0;
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw io_error("read", p, errno);
        }
        if (n == 0) return total;
        fn(static_cast<const char*>(buf), static_cast<std::size_t>(n));
        total += static_cast<std::uint64_t>(n);
    }
}

/// The FNV-1a-64 of the content of `fd` and its size in bytes.
struct SizedHash {
    std::uint64_t size = 0;
    std::uint64_t hash = fnv1a64_basis;
};
[[nodiscard]] inline SizedHash hash_fd(int fd, const std::filesystem::path& p) {
    SizedHash r;
    r.size = for_each_block(fd, p, [&](const char* d, std::size_t n) { r.hash = fnv1a64(d, n, r.hash); });
    return r;
}

/// The whole content of the regular file `p` (detail::read_regular_file): FormatError
/// naming it when it is not a regular file (a FIFO, a device) or holds more than `limit`
/// bytes, found by fstat before anything is allocated or read (at most limit + 1 bytes
/// are read). IoError naming it when it cannot be read.
[[nodiscard]] inline std::string read_small_file(const std::filesystem::path& p,
                                                 std::uint64_t limit = static_cast<std::uint64_t>(-1)) {
    return read_regular_file(p, limit);
}

/// Opens the regular file `p` for reading (detail::open_regular_file: a FIFO or a device
/// in its place is a FormatError naming it, never a blocking open or an endless read).
[[nodiscard]] inline UniqueFd open_regular_for_reading(const std::filesystem::path& p) {
    struct stat st {};
    return UniqueFd(open_regular_file(p, static_cast<std::uint64_t>(-1), st));
}

/// fsync of a file or a folder (a folder: so that the names created or renamed in it
/// survive a power cut). IoError naming it.
inline void fsync_path(const std::filesystem::path& p) {
    const auto fd = open_fd_for_reading(p);
    if (::fsync(fd.get()) != 0) throw io_error("fsync", p, errno);
}

/// Creates (or truncates) `p` and writes `bytes`, then fsyncs it when `sync`. On any
/// failure (ENOSPC, EFBIG, EIO) the file is removed and an IoError names it.
inline void write_whole_file(const std::filesystem::path& p, std::string_view bytes, bool sync) {
    int fd;
    do fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) throw io_error("create", p, errno);
    UniqueFd file(fd);
    auto fail = [&](const char* what, int e) {
        file.reset();
        ::unlink(p.c_str());
        return io_error(what, p, e);
    };
    const char* d = bytes.data();
    std::size_t left = bytes.size();
    while (left > 0) {
        const ssize_t n = ::write(file.get(), d, left);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw fail("write", errno);
        }
        d += n;
        left -= static_cast<std::size_t>(n);
    }
    if (sync && ::fsync(file.get()) != 0) throw fail("fsync", errno);
    if (file.close() != 0) {
        const int e = errno;
        ::unlink(p.c_str());
        throw io_error("close", p, e);
    }
}

}  // namespace ragpp::detail
