// ragpp detail: FileBytes, the bytes of a whole file, read into memory or mapped
// read-only (POSIX mmap, MAP_PRIVATE). Index files, the document store and model
// weights are opened through it, so opening a large index costs a few page-table
// entries and memory follows what queries touch.
//
// A mapped file must not change underneath its mapping: ragpp only ever replaces its
// files by writing a new file and renaming it over the old name (detail/binary_file.hpp,
// io/generations.hpp), which leaves the mapped inode intact. Truncating or rewriting a
// mapped file in place (another program, `cp` over it) is undefined: reads past the new
// end raise SIGBUS. docs/persistence.md says so.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ragpp/core/error.hpp>
#include <ragpp/detail/file.hpp>

namespace ragpp::detail {

/// How a file's bytes are obtained: read whole into memory, or memory-mapped.
enum class FileLoad { read, mmap };

/// The bytes of a file, read into memory or memory-mapped read-only. Not copyable
/// (share it through a shared_ptr); the bytes live as long as the object.
class FileBytes {
public:
    FileBytes(const std::filesystem::path& path, bool mmap) {
        if (mmap) {
            // fstat before mapping: a FIFO, a device (/dev/zero) or a folder in the file's
            // place is a FormatError naming it (detail::open_regular_file), never a hang.
            struct stat st {};
            const int fd = open_regular_file(path, static_cast<std::uint64_t>(-1), st);
            size_ = static_cast<std::size_t>(st.st_size);
            if (size_ > 0) {
                void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
                if (p == MAP_FAILED) {
                    ::close(fd);
                    throw IoError("cannot mmap '" + path.string() + "'");
                }
                map_ = p;
                data_ = static_cast<const char*>(p);
            }
            ::close(fd);
        } else {
            buf_ = read_regular_file(path);
            size_ = buf_.size();
            data_ = buf_.data();
        }
    }
    FileBytes(const std::filesystem::path& path, FileLoad load) : FileBytes(path, load == FileLoad::mmap) {}
    ~FileBytes() {
        if (map_ != nullptr) ::munmap(map_, size_);
    }
    FileBytes(const FileBytes&) = delete;
    FileBytes& operator=(const FileBytes&) = delete;

    [[nodiscard]] const char* data() const noexcept { return data_; }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] std::string_view view() const noexcept { return {data_, size_}; }
    [[nodiscard]] bool mapped() const noexcept { return map_ != nullptr; }

    /// Access-pattern hints for a mapped range (no-ops for read files): `random` for
    /// postings and graph neighbours, `willneed` to start reading ahead.
    void advise_random() const noexcept { advise(MADV_RANDOM); }
    void advise_willneed() const noexcept { advise(MADV_WILLNEED); }

private:
    void advise(int advice) const noexcept {
        if (map_ != nullptr) (void)::madvise(map_, size_, advice);
    }

    std::string buf_;
    void* map_ = nullptr;
    const char* data_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace ragpp::detail
