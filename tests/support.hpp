// Shared helpers for ragpp's tests.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

namespace ragpp_test {

/// The shared data folder (../shared beside the clone, or RAGPP_SHARED_DATA_DIR).
inline std::filesystem::path shared_dir() {
    if (const char* env = std::getenv("RAGPP_SHARED_DIR")) return env;
    return RAGPP_SHARED_DIR;
}

/// The path of `relative` under the shared folder. When it is missing, the test is
/// reported as skipped by ctest (exit code 4, SKIP_RETURN_CODE), with a message: it
/// neither fails nor passes vacuously; in CI (environment CI=true) it fails instead
/// (exit code 1), since a CI run without the oracles would pass without testing them.
/// Each Catch test case runs in its own process under ctest, so only this test case stops.
inline std::filesystem::path require_shared(const std::string& relative) {
    auto p = shared_dir() / relative;
    if (!std::filesystem::exists(p)) {
        const char* ci = std::getenv("CI");
        const bool in_ci = ci != nullptr && std::string(ci) == "true";
        std::fprintf(stderr, "%s: shared data %s is missing (set RAGPP_SHARED_DIR)%s\n", in_ci ? "FAILED" : "SKIPPED",
                     p.string().c_str(), in_ci ? ": CI=true requires it" : "");
        std::fflush(stderr);
        std::_Exit(in_ci ? 1 : 4);
    }
    return p;
}

inline std::string read_file(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

/// A fresh empty temporary directory, removed by the destructor.
struct TempDir {
    std::filesystem::path path;
    TempDir() {
        static int counter = 0;
        path = std::filesystem::temp_directory_path() /
               ("ragpp-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
};

}  // namespace ragpp_test
