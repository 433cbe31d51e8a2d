// ragpp detail: the plumbing of ragpp's binary index files.
//
// A file is: an 8-byte magic, a little-endian payload, and an 8-byte FNV-1a-64
// checksum of everything before it. BinaryWriter builds the bytes in memory and
// writes them to "<path>.tmp-<pid>" before renaming over `path`, so a crash mid-save
// leaves the old file intact. BinaryReader loads a whole file, checks its size, magic
// and checksum, and bounds-checks every read, throwing FormatError naming the file.
// (Little-endian hosts only, which is every platform ragpp builds on; a static_assert
// says so.)
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

#include <unistd.h>

#include <ragpp/core/error.hpp>
#include <ragpp/detail/hash.hpp>

namespace ragpp::detail {

static_assert(std::endian::native == std::endian::little, "ragpp's binary files assume a little-endian host");

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename,
/// so a crash mid-save leaves any previous file intact. Throws IoError.
inline void write_file_atomically(const std::filesystem::path& path, std::string_view bytes) {
    auto tmp = path;
    tmp += ".tmp-" + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) throw IoError("cannot open '" + tmp.string() + "' for writing");
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        out.flush();
        if (!out) {
            out.close();
            std::error_code ec;
            std::filesystem::remove(tmp, ec);
            throw IoError("cannot write '" + tmp.string() + "' (disk full?)");
        }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        std::error_code ignored;
        std::filesystem::remove(tmp, ignored);
        throw IoError("cannot rename '" + tmp.string() + "' to '" + path.string() + "': " + ec.message());
    }
}

class BinaryWriter {
public:
    explicit BinaryWriter(std::string_view magic) { bytes(magic.data(), magic.size()); }

    void bytes(const void* p, std::size_t n) {
        const auto* c = static_cast<const char*>(p);
        buf_.insert(buf_.end(), c, c + n);
    }
    template <class T>
        requires std::is_trivially_copyable_v<T>
    void put(const T& v) { bytes(&v, sizeof v); }
    void string(std::string_view s) {
        put(static_cast<std::uint64_t>(s.size()));
        bytes(s.data(), s.size());
    }
    template <class T>
        requires std::is_trivially_copyable_v<T>
    void array(const T* p, std::size_t n) { bytes(p, n * sizeof(T)); }

    /// Appends the checksum and writes atomically (temporary file + rename).
    /// Throws IoError naming the file on failure; the old file is then untouched.
    void commit(const std::filesystem::path& path) {
        const std::uint64_t sum = fnv1a64(buf_.data(), buf_.size());
        put(sum);
        write_file_atomically(path, std::string_view(buf_.data(), buf_.size()));
    }

private:
    std::vector<char> buf_;
};

class BinaryReader {
public:
    /// Reads `path`, checks its magic and checksum. Throws IoError when it cannot be
    /// read, FormatError when it is too short, of another format or corrupted.
    BinaryReader(const std::filesystem::path& path, std::string_view magic) : name_(path.string()) {
        std::error_code ec;  // a folder opens as a stream whose size reads as 2^63 - 1: bad_alloc
        if (std::filesystem::is_directory(path, ec)) throw IoError("cannot read '" + name_ + "': it is a directory");
        std::ifstream in(path, std::ios::binary);
        if (!in) throw IoError("cannot open '" + name_ + "'");
        in.seekg(0, std::ios::end);
        const auto end = in.tellg();
        if (end < 0) throw IoError("cannot read '" + name_ + "'");
        const auto size = static_cast<std::size_t>(end);
        in.seekg(0);
        buf_.resize(size);
        in.read(buf_.data(), static_cast<std::streamsize>(size));
        if (!in) throw IoError("cannot read '" + name_ + "'");
        if (size < magic.size() + sizeof(std::uint64_t) || std::string_view(buf_.data(), magic.size()) != magic)
            throw FormatError("'" + name_ + "' is not a " + std::string(magic) + " file (wrong magic or truncated)");
        std::uint64_t stored = 0;
        std::memcpy(&stored, buf_.data() + size - sizeof stored, sizeof stored);
        if (fnv1a64(buf_.data(), size - sizeof stored) != stored)
            throw FormatError("'" + name_ + "': checksum mismatch (the file is truncated or corrupted)");
        end_ = size - sizeof stored;
        pos_ = magic.size();
    }

    [[nodiscard]] const std::string& name() const noexcept { return name_; }
    [[nodiscard]] std::size_t remaining() const noexcept { return end_ - pos_; }

    void bytes(void* p, std::size_t n, const char* what) {
        if (n > remaining()) throw FormatError("'" + name_ + "': truncated while reading " + what);
        std::memcpy(p, buf_.data() + pos_, n);
        pos_ += n;
    }
    template <class T>
        requires std::is_trivially_copyable_v<T>
    T get(const char* what) {
        T v{};
        bytes(&v, sizeof v, what);
        return v;
    }
    std::string string(const char* what) {
        const auto n = get<std::uint64_t>(what);
        if (n > remaining()) throw FormatError("'" + name_ + "': truncated while reading " + what);
        std::string s(buf_.data() + pos_, static_cast<std::size_t>(n));
        pos_ += static_cast<std::size_t>(n);
        return s;
    }
    template <class T>
        requires std::is_trivially_copyable_v<T>
    void array(std::vector<T>& out, std::size_t n, const char* what) {
        if (n > remaining() / sizeof(T)) throw FormatError("'" + name_ + "': truncated while reading " + what);
        out.resize(n);
        bytes(out.data(), n * sizeof(T), what);
    }
    /// Throws FormatError unless every byte was consumed.
    void expect_end() const {
        if (pos_ != end_) throw FormatError("'" + name_ + "': " + std::to_string(end_ - pos_) + " unexpected trailing bytes");
    }
    [[noreturn]] void fail(const std::string& what) const { throw FormatError("'" + name_ + "': " + what); }

private:
    std::string name_;
    std::vector<char> buf_;
    std::size_t pos_ = 0;
    std::size_t end_ = 0;
};

}  // namespace ragpp::detail
