// A progress bar on stderr with rate and time left, drawn only when stderr is a
// terminal and --quiet was not given; redrawn at most every 100 ms.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>

namespace cli {

class Progress {
public:
    Progress(std::string label, std::size_t total, bool enabled)
        : label_(std::move(label)), total_(total), enabled_(enabled), start_(std::chrono::steady_clock::now()) {}
    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;
    ~Progress() { finish(); }

    void tick(std::size_t n = 1) {
        done_ += n;
        if (!enabled_) return;
        const auto now = std::chrono::steady_clock::now();
        if (done_ < total_ && now - last_ < std::chrono::milliseconds(100)) return;
        last_ = now;
        draw(now);
    }
    void finish() {
        if (!enabled_ || finished_) return;
        finished_ = true;
        draw(std::chrono::steady_clock::now());
        std::fputc('\n', stderr);
    }

private:
    void draw(std::chrono::steady_clock::time_point now) const {
        const double elapsed = std::chrono::duration<double>(now - start_).count();
        const double rate = elapsed > 0 ? static_cast<double>(done_) / elapsed : 0.0;
        const double frac = total_ ? static_cast<double>(done_) / static_cast<double>(total_) : 1.0;
        const int width = 28;
        const int filled = static_cast<int>(frac * width);
        std::string bar(static_cast<std::size_t>(filled), '#');
        bar.append(static_cast<std::size_t>(width - filled), '.');
        const double left = rate > 0 ? static_cast<double>(total_ - done_) / rate : 0.0;
        std::fprintf(stderr, "\r%s [%s] %3.0f%% %zu/%zu  %.0f/s  %s %.0fs  ", label_.c_str(), bar.c_str(), frac * 100,
                     done_, total_, rate, done_ >= total_ ? "took" : "left", done_ >= total_ ? elapsed : left);
        std::fflush(stderr);
    }

    std::string label_;
    std::size_t total_, done_ = 0;
    bool enabled_, finished_ = false;
    std::chrono::steady_clock::time_point start_, last_{};
};

}  // namespace cli
