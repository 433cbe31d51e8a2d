// ragpp detail (VectorIndex): ExactRows, the float32 rows of a quantized index kept in a
// file on disk instead of RAM, read back one row at a time (pread) to re-score the best
// candidates of a quantized scan exactly (VectorIndexOptions::exact_rescore).
//
// File layout (little-endian), "<index>.f32" beside a saved index:
//   offset  0  magic "RAGPPF32"   8 bytes
//   offset  8  u32 version (1)    u32 reserved (0)
//   offset 16  u64 token          the same random number as the index file that owns it,
//                                 so a side file of another save is refused
//   offset 24  u64 record count   u64 dimension
//   offset 64  records: dimension x f32 each
// No checksum (a check would read every row, the opposite of keeping them on disk): the
// size and header are checked at open, and a row read back with a NaN or infinite value
// is a FormatError naming the file. An index being built appends to a working file of
// the same layout (count and token 0 in its header: it is never opened by open()).
// Copies of an index share one ExactRows (a shared_ptr): appends take a mutex and go
// to the end, so two copies adding rows never overwrite each other's records (each
// keeps its own row -> record map); reads (pread) are safe from any thread.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ragpp/core/error.hpp>
#include <ragpp/detail/binary_file.hpp>

namespace ragpp::detail {

class ExactRows {
public:
    static constexpr std::size_t header_size = 64;
    static constexpr std::string_view magic = "RAGPPF32";
    static constexpr std::uint32_t version = 1;

    /// A new, empty working file at `path` (created or truncated), records appended by
    /// append(). Throws IoError.
    static std::shared_ptr<ExactRows> create(const std::filesystem::path& path, std::size_t dim) {
        std::shared_ptr<ExactRows> f(new ExactRows(path, dim, true));
        const std::string h = header(0, 0, dim);
        f->write_at(h.data(), h.size(), 0);
        return f;
    }

    /// The side file `path` written by write_file() for the index whose token is `token`,
    /// holding `n` rows of `dim` floats. Throws IoError when it cannot be opened,
    /// FormatError (naming it) when its header or size does not match.
    static std::shared_ptr<ExactRows> open(const std::filesystem::path& path, std::size_t dim, std::uint64_t token,
                                           std::size_t n) {
        std::shared_ptr<ExactRows> f(new ExactRows(path, dim, false));
        char h[header_size] = {};
        struct stat st {};
        if (::fstat(f->fd_, &st) != 0) throw IoError("cannot stat '" + path.string() + "'");
        const auto size = static_cast<std::uint64_t>(st.st_size);
        if (size < header_size) f->fail("truncated: " + std::to_string(size) + " bytes, less than the 64-byte header");
        f->read_at(h, header_size, 0);
        if (std::string_view(h, 8) != magic) f->fail("not a ragpp float32 rows file (bad magic)");
        std::uint32_t v = 0;
        std::uint64_t tok = 0, count = 0, d = 0;
        std::memcpy(&v, h + 8, 4);
        std::memcpy(&tok, h + 16, 8);
        std::memcpy(&count, h + 24, 8);
        std::memcpy(&d, h + 32, 8);
        if (v != version) f->fail("format " + std::to_string(v) + ", this build reads format " + std::to_string(version));
        if (tok != token) f->fail("it belongs to another save of the index (token mismatch); save the index again");
        if (count != n || d != dim)
            f->fail("it holds " + std::to_string(count) + " rows of " + std::to_string(d) + " dimensions, the index " +
                    std::to_string(n) + " of " + std::to_string(dim));
        if ((size - header_size) / 4 / dim != n || (size - header_size) != n * dim * 4)
            f->fail("truncated or with trailing bytes: " + std::to_string(size) + " bytes for " + std::to_string(n) + " rows");
        f->records_ = n;
        return f;
    }

    ExactRows(const ExactRows&) = delete;
    ExactRows& operator=(const ExactRows&) = delete;
    ~ExactRows() { ::close(fd_); }

    [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
    [[nodiscard]] bool writable() const noexcept { return writable_; }
    [[nodiscard]] std::size_t records() const {
        std::lock_guard lock(mutex_);
        return records_;
    }

    /// Record `rec` into out[0, dim). Throws IoError on a failed read, FormatError when
    /// the row has a NaN or infinite value. Safe to call concurrently.
    void read(std::size_t rec, float* out) const {
        read_at(out, dim_ * sizeof(float), header_size + rec * dim_ * sizeof(float));
        for (std::size_t j = 0; j < dim_; ++j)
            if (!std::isfinite(out[j])) fail("row " + std::to_string(rec) + " has a NaN or infinite value");
    }

    /// Appends a row; returns its record number. Throws IoError (the file is then as
    /// before, or holds one unreferenced record more).
    std::size_t append(const float* row) {
        std::lock_guard lock(mutex_);
        write_at(row, dim_ * sizeof(float), header_size + records_ * dim_ * sizeof(float));
        return records_++;
    }

    /// A writable copy of every record at `to` (copy-on-write of a loaded side file).
    [[nodiscard]] std::shared_ptr<ExactRows> copy_to(const std::filesystem::path& to) const {
        std::error_code ec;
        if (std::filesystem::equivalent(to, path_, ec))
            throw InvalidArgument("VectorIndexOptions::exact_rows '" + to.string() + "' is the side file being read");
        auto out = create(to, dim_);
        std::vector<float> row(dim_);
        const std::size_t n = records();
        for (std::size_t r = 0; r < n; ++r) {
            read(r, row.data());
            out->append(row.data());
        }
        return out;
    }

    /// Writes records `recs`, in this order, to `path` as a side file with `token`,
    /// atomically (temporary file + rename). Throws IoError.
    void write_file(const std::filesystem::path& path, std::span<const std::uint32_t> recs, std::uint64_t token) const {
        auto tmp = path;
        tmp += ".tmp-" + std::to_string(::getpid());
        {
            std::shared_ptr<ExactRows> out(new ExactRows(tmp, dim_, true));
            const std::string h = header(token, recs.size(), dim_);
            out->write_at(h.data(), h.size(), 0);
            constexpr std::size_t batch = 256;
            std::vector<float> buf(batch * dim_);
            try {
                for (std::size_t i = 0; i < recs.size(); i += batch) {
                    const std::size_t m = std::min(batch, recs.size() - i);
                    for (std::size_t t = 0; t < m; ++t) read(recs[i + t], buf.data() + t * dim_);
                    out->write_at(buf.data(), m * dim_ * sizeof(float), header_size + i * dim_ * sizeof(float));
                }
            } catch (...) {
                std::error_code ignored;
                std::filesystem::remove(tmp, ignored);
                throw;
            }
        }
        rename_over(tmp, path);
    }

private:
    ExactRows(std::filesystem::path path, std::size_t dim, bool writable)
        : path_(std::move(path)), dim_(dim), writable_(writable) {
        fd_ = writable ? ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)
                       : ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd_ < 0)
            throw IoError("cannot open '" + path_.string() + "' for " + (writable ? "writing" : "reading") + ": " +
                          std::strerror(errno));
    }

    static std::string header(std::uint64_t token, std::uint64_t n, std::uint64_t dim) {
        std::string h(header_size, '\0');
        std::memcpy(h.data(), magic.data(), 8);
        std::memcpy(h.data() + 8, &version, 4);
        std::memcpy(h.data() + 16, &token, 8);
        std::memcpy(h.data() + 24, &n, 8);
        std::memcpy(h.data() + 32, &dim, 8);
        return h;
    }

    [[noreturn]] void fail(const std::string& what) const { throw FormatError("'" + path_.string() + "': " + what); }

    void read_at(void* out, std::size_t n, std::size_t at) const {
        auto* p = static_cast<char*>(out);
        while (n > 0) {
            const ::ssize_t got = ::pread(fd_, p, n, static_cast<::off_t>(at));
            if (got < 0 && errno == EINTR) continue;
            if (got < 0) throw IoError("cannot read '" + path_.string() + "': " + std::strerror(errno));
            if (got == 0) fail("truncated: no bytes at offset " + std::to_string(at));
            p += got;
            n -= static_cast<std::size_t>(got);
            at += static_cast<std::size_t>(got);
        }
    }
    void write_at(const void* in, std::size_t n, std::size_t at) {
        const auto* p = static_cast<const char*>(in);
        while (n > 0) {
            const ::ssize_t put = ::pwrite(fd_, p, n, static_cast<::off_t>(at));
            if (put < 0 && errno == EINTR) continue;
            if (put <= 0) throw IoError("cannot write '" + path_.string() + "' (disk full?): " + std::strerror(errno));
            p += put;
            n -= static_cast<std::size_t>(put);
            at += static_cast<std::size_t>(put);
        }
    }

    std::filesystem::path path_;
    std::size_t dim_;
    bool writable_;
    int fd_ = -1;
    mutable std::mutex mutex_;
    std::size_t records_ = 0;
};

}  // namespace ragpp::detail
