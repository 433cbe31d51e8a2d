// ragpp detail: read_file, the one whole-file reader of the library and the tool, and
// read_regular_file, its checked form for the files ragpp owns or walks (index folder
// parts, CURRENT, generation.json, corpus files): fstat before reading, a regular file
// only, at most a limit. Every header that needs a file's bytes calls one of them, so
// each failure has one message naming the file.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <algorithm>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ragpp/core/error.hpp>

namespace ragpp::detail {

/// The whole content of `path`, in binary mode. Throws IoError naming the file when it
/// does not exist, is a directory, or cannot be opened or read.
[[nodiscard]] inline std::string read_file(const std::filesystem::path& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw IoError("cannot read '" + path.string() + "': '" + path.string() + "' is a directory");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw IoError("cannot open '" + path.string() + "' for reading");
    std::string bytes;
    std::string buf(std::size_t{1} << 16, '\0');
    while (in) {
        in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
        bytes.append(buf.data(), static_cast<std::size_t>(in.gcount()));
    }
    if (in.bad()) throw IoError("cannot read '" + path.string() + "'");
    return bytes;
}

/// What a file that is not a regular one is, for messages ("a FIFO", "a character device").
[[nodiscard]] inline const char* file_kind(mode_t mode) noexcept {
    if (S_ISDIR(mode)) return "a folder";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISLNK(mode)) return "a symbolic link";
    return "not a regular file";
}

/// An open descriptor of the regular file `path` (links followed): opened with
/// O_NONBLOCK so that a FIFO put in its place cannot block the open, then checked with
/// fstat. FormatError naming it when it is not a regular file (a FIFO, a device such as
/// /dev/zero, a socket) or holds more than `limit` bytes; IoError naming it when it
/// cannot be opened or is a folder (as read_file). The caller closes the descriptor.
[[nodiscard]] inline int open_regular_file(const std::filesystem::path& path, std::uint64_t limit, struct stat& st) {
    int fd;
    do fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        const int e = errno;
        throw IoError("cannot open '" + path.string() + "' for reading: " + std::strerror(e));
    }
    if (::fstat(fd, &st) != 0) {
        const int e = errno;
        ::close(fd);
        throw IoError("cannot stat '" + path.string() + "': " + std::strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {  // as read_file says it
        ::close(fd);
        throw IoError("cannot read '" + path.string() + "': '" + path.string() + "' is a directory");
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        throw FormatError("'" + path.string() + "' is not a regular file (" + file_kind(st.st_mode) + ")");
    }
    if (static_cast<std::uint64_t>(st.st_size) > limit) {
        ::close(fd);
        throw FormatError("'" + path.string() + "' has " + std::to_string(st.st_size) + " bytes, more than the " +
                          std::to_string(limit) + " expected");
    }
    return fd;
}

/// The whole content of the regular file `path`, of at most `limit` bytes: see
/// open_regular_file for the checks. Reads at most limit + 1 bytes, so a file that grows
/// past `limit` after the check is a FormatError too, never an unbounded read.
[[nodiscard]] inline std::string read_regular_file(const std::filesystem::path& path,
                                                   std::uint64_t limit = static_cast<std::uint64_t>(-1)) {
    struct stat st {};
    const int fd = open_regular_file(path, limit, st);
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    std::string bytes;
    bytes.reserve(static_cast<std::size_t>(st.st_size));
    std::string buf(std::size_t{1} << 16, '\0');
    for (;;) {
        std::size_t want = buf.size();
        const std::uint64_t room = limit - std::min<std::uint64_t>(limit, bytes.size());  // bytes allowed before limit + 1
        if (room < want) want = static_cast<std::size_t>(room) + 1;
        const ssize_t n = ::read(fd, buf.data(), want);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            const int e = errno;
            throw IoError("cannot read '" + path.string() + "': " + std::strerror(e));
        }
        if (n == 0) return bytes;
        bytes.append(buf.data(), static_cast<std::size_t>(n));
        if (bytes.size() > limit)
            throw FormatError("'" + path.string() + "' has more than the " + std::to_string(limit) + " bytes expected (it grew while read)");
    }
}

}  // namespace ragpp::detail
