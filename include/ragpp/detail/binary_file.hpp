// ragpp detail: the one container of ragpp's binary index files (BM25 and vector).
//
// Layout (little-endian; the 36-byte header is the same for every index file):
//   offset  0  magic "RAGPPIDX"                    8 bytes
//   offset  8  format id ("BM25INDX", "VECINDEX")  8 bytes
//   offset 16  u32 format version                  (per format id)
//   offset 20  u64 payload size                    bytes after the header
//   offset 28  u64 FNV-1a-64 of the payload        (detail/hash.hpp)
//   offset 36  payload
// In a payload: integers u8 / u32 / u64 and f64 (IEEE binary64) little-endian, a
// string is a u32 byte count then the bytes, a count of items is a u64.
//
// BinaryWriter(path) streams the file to "<path>.tmp-<pid>" through a buffer of
// binary_write_buffer_bytes (1 MiB), larger pieces written straight from the caller's
// memory, the checksum computed as the bytes go out; save() writes the header last
// (pwrite at offset 0) and renames the temporary over `path`, so a failed or crashed
// save leaves the old file intact and memory stays at the buffer whatever the file's
// size (a 10M x 384 int8 vector index no longer needs its 3.9 GB twice). BinaryWriter()
// builds the whole file in memory (finish() returns it); the two make the same bytes.
// BinaryReader checks the header (magic, format id, version, size, checksum) before
// the payload is read, bounds-checks every read, and checks every count against the
// bytes left before anything is allocated for it; each failure is a FormatError naming
// the file and the byte offset. Files written before this container (their own magic
// at offset 0) are refused as "written by an older ragpp".
// (Little-endian hosts only, which is every platform ragpp builds on; a static_assert
// says so.)
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

#include <ragpp/core/error.hpp>
#include <ragpp/detail/file.hpp>
#include <ragpp/detail/hash.hpp>

namespace ragpp::detail {

static_assert(std::endian::native == std::endian::little, "ragpp's binary files assume a little-endian host");

/// Renames the finished temporary file `tmp` over `path` (atomic on POSIX); on failure
/// removes `tmp` and throws IoError naming both.
inline void rename_over(const std::filesystem::path& tmp, const std::filesystem::path& path) {
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        std::error_code ignored;
        std::filesystem::remove(tmp, ignored);
        throw IoError("cannot rename '" + tmp.string() + "' to '" + path.string() + "': " + ec.message());
    }
}

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
    rename_over(tmp, path);
}

/// One kind of index file.
struct BinaryFormat {
    std::string_view id;            ///< 8 bytes at offset 8
    std::uint32_t version;          ///< the version this build writes and reads
    std::string_view what;          ///< for messages: "BM25 index"
    std::string_view legacy_magic;  ///< the magic of its files before this container
};

inline constexpr std::string_view binary_magic = "RAGPPIDX";
inline constexpr std::size_t binary_header_size = 36;

/// The buffer of a streaming BinaryWriter. 0 builds every file in memory before writing
/// it, as ragpp did before the streaming writer (the tests' oracle: both ways must give
/// the same bytes). Set it before a save, never during one.
inline std::size_t binary_write_buffer_bytes = std::size_t{1} << 20;

class BinaryWriter {
public:
    /// Builds the file in memory: finish() returns it, save() writes it.
    BinaryWriter() : buf_(binary_header_size, '\0') {}
    /// Streams the file to a temporary beside `path` (created now: IoError naming it when
    /// it cannot be); save(path, format) completes it. A writer destroyed before save()
    /// removes its temporary. With binary_write_buffer_bytes == 0, as BinaryWriter().
    explicit BinaryWriter(const std::filesystem::path& path) : buf_(binary_header_size, '\0') {
        if (binary_write_buffer_bytes == 0) return;
        path_ = path;
        tmp_ = path;
        tmp_ += ".tmp-" + std::to_string(::getpid());
        fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd_ < 0) throw IoError("cannot open '" + tmp_.string() + "' for writing: " + std::strerror(errno));
        cap_ = binary_write_buffer_bytes;
        buf_.reserve(std::max(cap_, binary_header_size));
    }
    BinaryWriter(const BinaryWriter&) = delete;
    BinaryWriter& operator=(const BinaryWriter&) = delete;
    ~BinaryWriter() { discard(); }

    void bytes(const void* p, std::size_t n) {
        if (fd_ < 0 || buf_.size() + n <= cap_) {
            buf_.append(static_cast<const char*>(p), n);
            return;
        }
        flush();
        if (n < cap_) buf_.append(static_cast<const char*>(p), n);
        else write_out(p, n);  // a large array: straight from the caller's memory
    }
    template <class T>
        requires std::is_trivially_copyable_v<T>
    void put(const T& v) { bytes(&v, sizeof v); }
    void u8(std::uint8_t v) { put(v); }
    void u32(std::uint32_t v) { put(v); }
    void u64(std::uint64_t v) { put(v); }
    void f64(double v) { put(v); }
    /// A u32 byte count, then the bytes. Throws InvalidArgument beyond 4 GiB - 1.
    void str(std::string_view s) {
        if (s.size() > std::numeric_limits<std::uint32_t>::max())
            throw InvalidArgument("binary file: a string of " + std::to_string(s.size()) + " bytes (at most 2^32-1)");
        u32(static_cast<std::uint32_t>(s.size()));
        bytes(s.data(), s.size());
    }
    template <class T>
        requires std::is_trivially_copyable_v<T>
    void array(const T* p, std::size_t n) { bytes(p, n * sizeof(T)); }

    /// The file: the header of `format` (payload size and checksum filled in), then the
    /// payload. The writer is left empty. In memory only (InvalidArgument when streaming).
    [[nodiscard]] std::string finish(const BinaryFormat& format) {
        if (fd_ >= 0) throw InvalidArgument("BinaryWriter::finish: this writer streams to '" + path_.string() + "'");
        const std::uint64_t size = buf_.size() - binary_header_size;
        const std::uint64_t sum = fnv1a64(buf_.data() + binary_header_size, size);
        header(buf_.data(), format, size, sum);
        return std::move(buf_);
    }
    /// Writes the file to `path` atomically (temporary file + rename). Throws IoError
    /// naming the file on failure; the old file is then untouched. A streaming writer
    /// takes the path it was made with (InvalidArgument otherwise).
    void save(const std::filesystem::path& path, const BinaryFormat& format) {
        if (fd_ < 0) {
            write_file_atomically(path, finish(format));
            return;
        }
        if (path != path_)
            throw InvalidArgument("BinaryWriter::save: '" + path.string() + "', but this writer streams to '" +
                                  path_.string() + "'");
        flush();
        char h[binary_header_size];
        header(h, format, written_ - binary_header_size, sum_);
        for (std::size_t done = 0; done < sizeof h;) {  // the header last, over the zeros written first
            const ::ssize_t w = ::pwrite(fd_, h + done, sizeof h - done, static_cast<::off_t>(done));
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) fail();
            done += static_cast<std::size_t>(w);
        }
        const int fd = std::exchange(fd_, -1);
        if (::close(fd) != 0) {
            const int err = errno;
            std::error_code ignored;
            std::filesystem::remove(tmp_, ignored);
            throw IoError("cannot write '" + tmp_.string() + "': " + std::strerror(err));
        }
        rename_over(tmp_, path_);
    }

private:
    static void header(char* h, const BinaryFormat& format, std::uint64_t size, std::uint64_t sum) {
        std::memcpy(h, binary_magic.data(), 8);
        std::memcpy(h + 8, format.id.data(), 8);
        std::memcpy(h + 16, &format.version, 4);
        std::memcpy(h + 20, &size, 8);
        std::memcpy(h + 28, &sum, 8);
    }
    void flush() {
        write_out(buf_.data(), buf_.size());
        buf_.clear();
    }
    /// Writes n bytes at the end of the temporary, the payload's into the checksum.
    void write_out(const void* p, std::size_t n) {
        const auto* c = static_cast<const char*>(p);
        const std::size_t skip = written_ >= binary_header_size ? 0 : std::min(n, binary_header_size - written_);
        sum_ = fnv1a64(c + skip, n - skip, sum_);
        for (std::size_t done = 0; done < n;) {
            const ::ssize_t w = ::write(fd_, c + done, std::min<std::size_t>(n - done, std::size_t{1} << 30));
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) fail();
            done += static_cast<std::size_t>(w);
        }
        written_ += n;
    }
    /// A failed write (disk full, RLIMIT_FSIZE, I/O error): the temporary removed, IoError.
    [[noreturn]] void fail() {
        const int err = errno;
        discard();
        throw IoError("cannot write '" + tmp_.string() + "': " + std::strerror(err == 0 ? EIO : err));
    }
    void discard() noexcept {
        if (fd_ < 0) return;
        ::close(std::exchange(fd_, -1));
        std::error_code ignored;
        std::filesystem::remove(tmp_, ignored);
    }

    std::string buf_;
    std::filesystem::path path_, tmp_;
    int fd_ = -1;
    std::size_t cap_ = 0;
    std::size_t written_ = 0;  // bytes written to the temporary, header included
    std::uint64_t sum_ = fnv1a64_basis;
};

class BinaryReader {
public:
    /// Checks the header of `bytes` (magic, format id, version, payload size, checksum)
    /// against `format`; `source` names the bytes in messages (a path, "<memory>").
    /// Throws FormatError when they are not a file of `format`, were written by an
    /// older or newer ragpp, or are truncated or corrupted. `bytes` must outlive the reader.
    /// With `verify` false the payload's checksum is not computed (the header, sizes and
    /// every bounds check still are): opening a memory-mapped index then touches only the
    /// pages it reads, as Lucene checks a large file's footer but not its whole checksum
    /// on open. verify_checksum() does the full check later.
    BinaryReader(std::string_view bytes, const BinaryFormat& format, std::string_view source, bool verify = true)
        : file_("'" + std::string(source) + "'") {
        const std::string what(format.what);
        if (!format.legacy_magic.empty() && bytes.substr(0, format.legacy_magic.size()) == format.legacy_magic) {
            std::uint32_t old = 0;
            if (bytes.size() >= format.legacy_magic.size() + 4) std::memcpy(&old, bytes.data() + format.legacy_magic.size(), 4);
            throw FormatError(file_ + " was written by an older ragpp (" + what + " format " + std::to_string(old) +
                              "; this build reads format " + std::to_string(format.version) + "); rebuild the index");
        }
        if (bytes.substr(0, binary_magic.size()) != binary_magic)
            throw FormatError(file_ + ": not a ragpp " + what + " file (bad magic)");
        if (bytes.size() < binary_header_size)
            throw FormatError(file_ + ": truncated: " + std::to_string(bytes.size()) + " bytes, less than the " +
                              std::to_string(binary_header_size) + "-byte header");
        if (bytes.substr(8, 8) != format.id)
            throw FormatError(file_ + ": not a ragpp " + what + " file (it holds format '" + printable(bytes.substr(8, 8)) +
                              "', not '" + std::string(format.id) + "')");
        std::uint32_t version = 0;
        std::uint64_t size = 0, sum = 0;
        std::memcpy(&version, bytes.data() + 16, 4);
        std::memcpy(&size, bytes.data() + 20, 8);
        std::memcpy(&sum, bytes.data() + 28, 8);
        if (version < format.version)
            throw FormatError(file_ + " was written by an older ragpp (" + what + " format " + std::to_string(version) +
                              "; this build reads format " + std::to_string(format.version) + "); rebuild the index");
        if (version > format.version)
            throw FormatError(file_ + " was written by a newer ragpp (" + what + " format " + std::to_string(version) +
                              "; this build reads format " + std::to_string(format.version) + ")");
        const std::size_t actual = bytes.size() - binary_header_size;
        if (size != actual)
            throw FormatError(file_ + ": " + (size > actual ? "truncated" : "has trailing bytes") + ": the header announces " +
                              std::to_string(size) + " payload bytes, the file has " + std::to_string(actual));
        bytes_ = bytes.substr(binary_header_size);
        sum_ = sum;
        if (verify) verify_checksum();
    }

    /// Throws FormatError when the payload does not match the header's checksum.
    void verify_checksum() const {
        if (fnv1a64(bytes_) != sum_) throw FormatError(file_ + ": checksum mismatch, the file is corrupted");
    }

    /// The name of the source, quoted, as messages begin.
    [[nodiscard]] const std::string& name() const noexcept { return file_; }
    [[nodiscard]] std::size_t remaining() const noexcept { return bytes_.size() - pos_; }
    /// The offset of the next read from the start of the file.
    [[nodiscard]] std::size_t offset() const noexcept { return binary_header_size + pos_; }

    template <class T>
        requires std::is_trivially_copyable_v<T>
    T get(const char* field) {
        T v{};
        std::memcpy(&v, take(sizeof v, field).data(), sizeof v);
        return v;
    }
    std::uint8_t u8(const char* field) { return get<std::uint8_t>(field); }
    std::uint32_t u32(const char* field) { return get<std::uint32_t>(field); }
    std::uint64_t u64(const char* field) { return get<std::uint64_t>(field); }
    double f64(const char* field) { return get<double>(field); }
    /// The next n bytes, uncopied (a view into the bytes: a memory-mapped file's pages).
    std::string_view raw(std::size_t n, const char* field) { return take(n, field); }
    /// A string (a view into the bytes).
    std::string_view str(const char* field) { return take(u32(field), field); }
    /// A u64 count of items of `item_bytes` bytes each, refused unless that many items
    /// fit in the bytes left (so no count from a file can drive a large allocation).
    std::size_t count(const char* field, std::size_t item_bytes) {
        const std::uint64_t n = u64(field);
        if (item_bytes != 0 && n > remaining() / item_bytes)
            fail(std::string(field) + " " + std::to_string(n) + " does not fit in the " + std::to_string(remaining()) +
                 " bytes left");
        return static_cast<std::size_t>(n);
    }
    /// n items of T into `out`, refused before allocating when they do not fit.
    template <class T>
        requires std::is_trivially_copyable_v<T>
    void array(std::vector<T>& out, std::size_t n, const char* field) {
        if (n > remaining() / sizeof(T)) fail(std::string("truncated while reading ") + field);
        out.resize(n);
        if (n != 0) std::memcpy(out.data(), take(n * sizeof(T), field).data(), n * sizeof(T));
    }
    /// Throws FormatError unless every byte was read.
    void expect_end() const {
        if (remaining() != 0) fail(std::to_string(remaining()) + " unexpected bytes at the end");
    }
    [[noreturn]] void fail(const std::string& what) const {
        throw FormatError(file_ + ": " + what + " (at byte " + std::to_string(offset()) + ")");
    }

private:
    static std::string printable(std::string_view s) {
        std::string out;
        for (char c : s) out += c >= 0x20 && c < 0x7F ? c : '?';
        return out;
    }
    std::string_view take(std::size_t n, const char* field) {
        if (n > remaining()) fail(std::string("truncated while reading ") + field);
        auto s = bytes_.substr(pos_, n);
        pos_ += n;
        return s;
    }

    std::string file_;
    std::string_view bytes_;
    std::uint64_t sum_ = 0;
    std::size_t pos_ = 0;
};

}  // namespace ragpp::detail
