// ragpp detail: the corpus walker behind scan_corpus (io/corpus.hpp) and the file clock.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <map>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ragpp/core/error.hpp>
#include <ragpp/detail/file_io.hpp>
#include <ragpp/io/corpus_scan.hpp>

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
        walk(root_, "");
        // Links last, so that a real path always wins over a link to the same file.
        for (std::size_t i = 0; i < links_.size(); ++i) {
            const auto [abs, rel] = links_[i];
            follow(abs, rel);
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

    void walk(const std::filesystem::path& dir, const std::string& prefix) {
        namespace fs = std::filesystem;
        std::vector<std::string> names;
        std::error_code ec;
        fs::directory_iterator it(dir, ec);
        for (fs::directory_iterator end; !ec && it != end; it.increment(ec)) names.push_back(it->path().filename().string());
        if (ec) return unreadable("read the folder", dir, prefix.empty() ? "." : prefix, ec.value());
        std::sort(names.begin(), names.end());
        for (const auto& name : names) {
            const auto abs = dir / name;
            const std::string rel = prefix.empty() ? name : prefix + "/" + name;
            struct stat st {};
            if (::lstat(abs.c_str(), &st) != 0) {
                if (errno != ENOENT) unreadable("read", abs, rel, errno);  // ENOENT: removed meanwhile
                continue;
            }
            if (S_ISLNK(st.st_mode)) links_.emplace_back(abs, rel);
            else visit(abs, rel, st);
        }
    }

    /// A folder or a file met at `abs` (a real path or a link already resolved).
    void visit(const std::filesystem::path& abs, const std::string& rel, const struct stat& st) {
        const Key key{st.st_dev, st.st_ino};
        if (S_ISDIR(st.st_mode)) {
            if (const auto it = dirs_.find(key); it != dirs_.end()) {
                scan_.notes.push_back("skipped '" + rel + "': the same folder as '" + it->second + "' (an alias)");
                return;
            }
            dirs_.emplace(key, rel);
            walk(abs, rel);
            return;
        }
        if (!S_ISREG(st.st_mode) || !wanted(rel)) return;
        if (const auto it = files_.find(key); it != files_.end()) {
            scan_.notes.push_back("skipped '" + rel + "': the same file as '" + it->second + "' (an alias)");
            return;
        }
        int fd;
        do fd = ::open(abs.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        while (fd < 0 && errno == EINTR);
        if (fd < 0) return unreadable("read", abs, rel, errno);
        ::close(fd);
        files_.emplace(key, rel);
        scan_.files.push_back({rel, abs, static_cast<std::uint64_t>(st.st_size), ns_of(st.st_mtim), scanned_ns_});
    }

    /// A symbolic link at `abs`.
    void follow(const std::filesystem::path& abs, const std::string& rel) {
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
        visit(abs, rel, st);
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
    std::vector<std::pair<std::filesystem::path, std::string>> links_;
    CorpusScan scan_;
};

}  // namespace detail::corpus

}  // namespace ragpp
