// ragpp detail: the corpus walker behind scan_corpus (io/corpus.hpp) and the file clock.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ragpp/core/error.hpp>
#include <ragpp/detail/file_io.hpp>
#include <ragpp/io/corpus_scan.hpp>
#include <ragpp/io/ignore.hpp>
#include <ragpp/text/utf8.hpp>

namespace ragpp {

namespace detail::corpus {

[[nodiscard]] inline std::int64_t ns_of(const timespec& t) noexcept {
    return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + static_cast<std::int64_t>(t.tv_nsec);
}

/// Now, on the coarse real-time clock the kernel stamps file times with.
[[nodiscard]] inline std::int64_t file_clock_now() noexcept {
    timespec t{};
    ::clock_gettime(CLOCK_REALTIME_COARSE, &t);
    return ns_of(t);
}

/// The bytes the walk reads of each kept file to judge it (as git and ripgrep do).
inline constexpr std::size_t sniff_bytes = 8192;

/// "line L, byte 0xHH": where the ill-formed sequence at s[bad] is.
[[nodiscard]] inline std::string utf8_place(std::string_view s, std::size_t bad) {
    static constexpr char hex[] = "0123456789ABCDEF";
    const auto c = static_cast<unsigned char>(s[bad]);
    const auto line = 1 + static_cast<std::size_t>(std::count(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(bad), '\n'));
    return "line " + std::to_string(line) + ", byte 0x" + hex[c >> 4] + hex[c & 15];
}

/// Why `head`, the first bytes of a file of `size` bytes, are not text: binary (a NUL
/// byte), not UTF-8 (its detail "line L, byte 0xHH"), or nullopt. A sequence cut by the
/// end of a partial head is not judged.
[[nodiscard]] inline std::optional<std::pair<SkipReason, std::string>> sniff(std::string_view head, std::uint64_t size) {
    if (head.find('\0') != std::string_view::npos) return std::pair{SkipReason::binary, std::string()};
    const std::size_t bad = text::find_invalid_utf8(head);
    if (bad == head.size() || (head.size() < size && bad + 4 > head.size())) return std::nullopt;
    return std::pair{SkipReason::not_utf8, utf8_place(head, bad)};
}

/// Whether canonical `p` is `root` or below it (component by component).
[[nodiscard]] inline bool within(const std::filesystem::path& root, const std::filesystem::path& p) {
    return std::mismatch(root.begin(), root.end(), p.begin(), p.end()).first == root.end();
}

class Walker {
public:
    Walker(std::filesystem::path root, const CorpusOptions& options) : root_(std::move(root)), options_(options) {}

    CorpusScan run() {
        scanned_ns_ = file_clock_now();
        struct stat st {};
        if (::stat(root_.c_str(), &st) != 0) throw io_error("read the corpus folder", root_, errno);
        if (!S_ISDIR(st.st_mode)) throw IoError("the corpus '" + root_.string() + "' is not a folder");
        dirs_[{st.st_dev, st.st_ino}] = ".";
        walk(root_, "", IgnoreStack{});
        // Links last, so that a real path always wins over a link to the same file.
        for (std::size_t i = 0; i < links_.size(); ++i) {
            const Link link = links_[i];
            follow(link.abs, link.rel, link.rules);
        }
        std::sort(scan_.files.begin(), scan_.files.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
        return std::move(scan_);
    }

private:
    using Key = std::pair<dev_t, ino_t>;

    void unreadable(const std::string& what, const std::filesystem::path& abs, const std::string& rel, int e) {
        if (!options_.skip_unreadable) throw io_error(what.c_str(), abs, e);
        scan_.notes.push_back("skipped '" + rel + "': cannot " + what + " (" + errno_text(e) + ")");
    }

    /// Opens `abs` for reading (EINTR retried): the descriptor, or -1 with errno set.
    static int open_file(const std::filesystem::path& abs) {
        int fd;
        do fd = ::open(abs.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        while (fd < 0 && errno == EINTR);
        return fd;
    }

    /// Up to `limit` bytes of the open file `fd` (closed here); false with errno set on a read error.
    static bool read_head(int fd, std::size_t limit, std::string& out) {
        out.resize(limit);
        std::size_t n = 0;
        while (n < limit) {
            const ssize_t r = ::read(fd, out.data() + n, limit - n);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) {
                const int e = errno;
                if (r < 0) {
                    ::close(fd);
                    errno = e;
                    return false;
                }
                break;
            }
            n += static_cast<std::size_t>(r);
        }
        ::close(fd);
        out.resize(n);
        return true;
    }

    /// The ignore files of folder `dir` (`prefix` relative to the root) pushed onto `rules`.
    void read_ignore_files(const std::filesystem::path& dir, const std::string& prefix, IgnoreStack& rules) {
        for (const std::string_view name : ignore_file_names) {
            const auto abs = dir / name;
            const std::string rel = prefix.empty() ? std::string(name) : prefix + "/" + std::string(name);
            struct stat st {};
            if (::stat(abs.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
            const int fd = open_file(abs);
            std::string text;
            if (fd < 0 || !read_head(fd, static_cast<std::size_t>(st.st_size), text)) {
                unreadable("read", abs, rel, errno);
                continue;
            }
            rules.push(IgnoreFile::parse(text, prefix));
        }
    }

    void skip(const std::string& rel, SkipReason reason, bool folder, std::string detail = {}) {
        scan_.skipped.push_back({rel, reason, folder, std::move(detail)});
    }

    void walk(const std::filesystem::path& dir, const std::string& prefix, IgnoreStack rules) {
        namespace fs = std::filesystem;
        std::vector<std::string> names;
        std::error_code ec;
        fs::directory_iterator it(dir, ec);
        for (fs::directory_iterator end; !ec && it != end; it.increment(ec)) names.push_back(it->path().filename().string());
        if (ec) return unreadable("read the folder", dir, prefix.empty() ? "." : prefix, ec.value());
        std::sort(names.begin(), names.end());
        if (options_.ignore_files) read_ignore_files(dir, prefix, rules);
        for (const auto& name : names) {
            const auto abs = dir / name;
            const std::string rel = prefix.empty() ? name : prefix + "/" + name;
            struct stat st {};
            if (::lstat(abs.c_str(), &st) != 0) {
                if (errno != ENOENT) unreadable("read", abs, rel, errno);  // ENOENT: removed meanwhile
                continue;
            }
            // A link is judged as a file (git's view), before it is followed.
            const bool folder = S_ISDIR(st.st_mode);
            const bool counted = folder || (S_ISREG(st.st_mode) && wanted(rel)) || S_ISLNK(st.st_mode);
            if (name.front() == '.' && (!options_.hidden || name == ".git")) {
                if (counted) skip(rel, SkipReason::hidden, folder);
                continue;
            }
            if (rules.ignored(rel, folder)) {
                if (counted) skip(rel, SkipReason::ignored, folder);
                continue;
            }
            // A name is data (the source id, citations, JSON output): one that is not
            // UTF-8 is left out, a folder with everything under it, and said.
            if (const std::size_t bad = text::find_invalid_utf8(name); bad != name.size()) {
                if (counted) skip(rel, SkipReason::not_utf8, folder, "its name, " + utf8_place(name, bad).substr(8));
                continue;
            }
            if (S_ISLNK(st.st_mode)) links_.push_back({abs, rel, rules});
            else visit(abs, rel, st, rules);
        }
    }

    /// A folder or a file met at `abs` (a real path or a link already resolved).
    void visit(const std::filesystem::path& abs, const std::string& rel, const struct stat& st, const IgnoreStack& rules) {
        const Key key{st.st_dev, st.st_ino};
        if (S_ISDIR(st.st_mode)) {
            if (const auto it = dirs_.find(key); it != dirs_.end()) {
                scan_.notes.push_back("skipped '" + rel + "': the same folder as '" + it->second + "' (an alias)");
                return;
            }
            dirs_.emplace(key, rel);
            walk(abs, rel, rules);
            return;
        }
        if (!wanted(rel)) return;
        if (!S_ISREG(st.st_mode)) {  // a FIFO would block a read, a device never end one
            scan_.notes.push_back("skipped '" + rel + "': not a regular file (" + file_kind(st.st_mode) + ")");
            return;
        }
        if (const auto it = files_.find(key); it != files_.end()) {
            scan_.notes.push_back("skipped '" + rel + "': the same file as '" + it->second + "' (an alias)");
            return;
        }
        const int fd = open_file(abs);
        if (fd < 0) return unreadable("read", abs, rel, errno);
        std::string head;
        if (!read_head(fd, sniff_bytes, head)) return unreadable("read", abs, rel, errno);
        if (auto why = sniff(head, static_cast<std::uint64_t>(st.st_size))) return skip(rel, why->first, false, std::move(why->second));
        files_.emplace(key, rel);
        scan_.files.push_back({rel, abs, static_cast<std::uint64_t>(st.st_size), ns_of(st.st_mtim), scanned_ns_});
    }

    /// A symbolic link at `abs`.
    void follow(const std::filesystem::path& abs, const std::string& rel, const IgnoreStack& rules) {
        std::error_code ec;
        const auto target = std::filesystem::canonical(abs, ec);
        if (ec == std::errc::permission_denied) return unreadable("resolve the link", abs, rel, ec.value());
        if (ec) {
            scan_.notes.push_back("skipped '" + rel + "': a broken link or a link loop (" + ec.message() + ")");
            return;
        }
        if (!within(root_, target) && !options_.follow_symlinks_outside) {
            scan_.notes.push_back("skipped '" + rel + "': a link to '" + target.string() + "', outside the corpus root");
            return;
        }
        struct stat st {};
        if (::stat(abs.c_str(), &st) != 0) return unreadable("read", abs, rel, errno);
        visit(abs, rel, st, rules);
    }

    [[nodiscard]] bool wanted(const std::string& rel) const {
        if (options_.extensions.empty()) return true;
        const auto ext = std::filesystem::path(rel).extension().string();
        return std::find(options_.extensions.begin(), options_.extensions.end(), ext) != options_.extensions.end();
    }

    std::filesystem::path root_;  // canonical
    const CorpusOptions& options_;
    std::int64_t scanned_ns_ = -1;
    std::map<Key, std::string> dirs_, files_;  // walked folders and kept files, by inode
    struct Link {
        std::filesystem::path abs;
        std::string rel;
        IgnoreStack rules;  // the ignore files in force in the link's folder
    };
    std::vector<Link> links_;
    CorpusScan scan_;
};

}  // namespace detail::corpus

}  // namespace ragpp
