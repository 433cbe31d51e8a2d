// The persistence mechanisms of an index folder: generations switched atomically
// (io/generations.hpp), the corpus walker (io/corpus.hpp), the per-source manifest and
// its diff (io/sources.hpp), the metadata codec (io/metadata_json.hpp).
// Oracles: bytes written against bytes read back; kill -9 (fork + SIGKILL) at random
// instants and at every step of commit(), and a file-size limit (RLIMIT_FSIZE), against
// "the old or the new generation, each part byte for byte"; real folders with real
// links, hard links, loops and unreadable entries; the diff against re-hashing every
// file.
#include <ragpp/io/corpus.hpp>
#include <ragpp/io/generations.hpp>
#include <ragpp/io/metadata_json.hpp>
#include <ragpp/io/sources.hpp>
#include <ragpp/detail/file_io.hpp>
#include <ragpp/detail/mapped_file.hpp>

#include "support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using ragpp::GenerationWriter;
using ragpp::open_generation;

namespace {

void write_text(const fs::path& p, const std::string& text) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << text;
    REQUIRE(out.good());
}

std::vector<std::string> listing(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

/// The deterministic content of part `index` of generation `g` in the kill tests: its
/// size and bytes depend on both, so a part of another generation never passes.
std::string part_content(std::uint64_t g, int index) {
    const std::size_t size = 1000 + (g * 7919 + static_cast<std::uint64_t>(index) * 104729) % 150000;
    std::string s(size, '\0');
    std::uint64_t x = g * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(index) + 1;
    for (auto& c : s) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        c = static_cast<char>('a' + x % 26);
    }
    return s;
}
int part_count(std::uint64_t g) { return 2 + static_cast<int>(g % 3); }

/// Commits generation number `w.generation()` with its deterministic parts.
std::uint64_t commit_generation(const fs::path& dir) {
    GenerationWriter w(dir);
    const auto g = w.generation();
    for (int i = 0; i < part_count(g); ++i) {
        if (i == 0) {  // one part written by the caller itself, through path()
            std::ofstream out(w.path("p0"), std::ios::binary);
            out << part_content(g, 0);
        } else {
            w.write("p" + std::to_string(i), part_content(g, i));
        }
    }
    return w.commit({{"g", g}, {"parts", part_count(g)}});
}

/// Opens `dir` and checks that it is exactly one whole generation: its info, its part
/// list and every part's bytes. Returns its number.
std::uint64_t check_whole_generation(const fs::path& dir) {
    const auto opened = open_generation(dir);
    const auto g = opened.generation;
    REQUIRE(opened.info.at("g") == g);
    REQUIRE(opened.parts.size() == static_cast<std::size_t>(part_count(g)));
    for (int i = 0; i < part_count(g); ++i) {
        const auto name = "p" + std::to_string(i);
        REQUIRE(opened.parts[static_cast<std::size_t>(i)].name == name);
        REQUIRE(ragpp_test::read_file(opened.dir / name) == part_content(g, i));
    }
    return g;
}

/// Runs `child` in a forked process and returns its exit status (or 128 + signal).
template <class Fn>
int in_child(Fn child) {
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        int code = 99;
        try {
            code = child();
        } catch (...) {
            code = 98;
        }
        std::_Exit(code);
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

// --- generations ----------------------------------------------------------------------

TEST_CASE("generations: round trip, previous generation kept until the next commit", "[generations]") {
    ragpp_test::TempDir tmp;
    const auto dir = tmp.path / "index";
    {
        GenerationWriter w(dir);
        CHECK(w.generation() == 1);
        w.write("a.bin", std::string("\0\1\2abc", 6));
        write_text(w.path("b.txt"), "written by the caller");
        w.write("empty", "");
        CHECK(w.commit({{"analyzer", "english"}, {"n", 3}}) == 1);
        CHECK_THROWS_AS(w.write("c", "x"), ragpp::InvalidArgument);  // spent
    }
    auto g = open_generation(dir);
    CHECK(g.generation == 1);
    CHECK(g.info == nlohmann::json{{"analyzer", "english"}, {"n", 3}});
    REQUIRE(g.parts.size() == 3);
    CHECK(g.parts[0].name == "a.bin");
    CHECK(g.parts[0].size == 6);
    CHECK(g.parts[0].checksum == ragpp::detail::fnv1a64(std::string("\0\1\2abc", 6)));
    CHECK(g.parts[1].name == "b.txt");
    CHECK(g.parts[2].name == "empty");
    CHECK(g.parts[2].checksum == ragpp::detail::fnv1a64_basis);
    CHECK(ragpp_test::read_file(g.dir / "b.txt") == "written by the caller");
    REQUIRE(g.part("a.bin") != nullptr);
    CHECK(g.part("zzz") == nullptr);

    CHECK(commit_generation(dir) == 2);
    CHECK(listing(dir) == std::vector<std::string>{"CURRENT", "LOCK", "gen-000001", "gen-000002"});
    CHECK(commit_generation(dir) == 3);  // removes 1, keeps 2 (the previous) and 3
    CHECK(listing(dir) == std::vector<std::string>{"CURRENT", "LOCK", "gen-000002", "gen-000003"});
    CHECK(check_whole_generation(dir) == 3);
    CHECK(ragpp::clean_generations(dir) == 1);
    CHECK(listing(dir) == std::vector<std::string>{"CURRENT", "LOCK", "gen-000003"});
    CHECK(check_whole_generation(dir) == 3);
}

TEST_CASE("generations: a corrupted, truncated or missing part gives a FormatError naming it", "[generations]") {
    ragpp_test::TempDir tmp;
    const auto dir = tmp.path / "index";
    {
        GenerationWriter w(dir);
        w.write("bm25.idx", std::string(1000, 'x'));
        w.write("documents.jsonl", "{\"id\":\"a\"}\n");
        w.commit(nlohmann::json::object());
    }
    const auto part = dir / "gen-000001" / "bm25.idx";
    SECTION("one byte changed, same size") {
        std::fstream f(part, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(500);
        f.put('y');
        f.close();
        CHECK_THROWS_AS(open_generation(dir), ragpp::FormatError);
        CHECK_THROWS_WITH(open_generation(dir), Contains("part 'bm25.idx'") && Contains("checksum mismatch") &&
                                                    Contains(dir.string()));
        CHECK(open_generation(dir, false).generation == 1);  // sizes only
    }
    SECTION("truncated") {
        fs::resize_file(part, 999);
        CHECK_THROWS_WITH(open_generation(dir, false), Contains("part 'bm25.idx'") && Contains("has 999 bytes, the manifest says 1000"));
    }
    SECTION("missing") {
        fs::remove(part);
        CHECK_THROWS_AS(open_generation(dir), ragpp::FormatError);
        CHECK_THROWS_WITH(open_generation(dir), Contains("part 'bm25.idx'") && Contains("is missing"));
    }
    SECTION("the manifest edited") {
        auto text = ragpp_test::read_file(dir / "gen-000001" / "generation.json");
        text.replace(text.find("1000"), 4, "1001");
        write_text(dir / "gen-000001" / "generation.json", text);
        CHECK_THROWS_WITH(open_generation(dir), Contains("generation.json") && Contains("does not match CURRENT"));
    }
    SECTION("the pointer damaged") {
        write_text(dir / "CURRENT", "ragpp-generations 1\ngen-000001 12\n");
        CHECK_THROWS_AS(open_generation(dir), ragpp::FormatError);
        CHECK_THROWS_WITH(open_generation(dir), Contains("CURRENT"));
        write_text(dir / "CURRENT", std::string(5000, 'x'));  // read no further than 4096 bytes
        CHECK_THROWS_WITH(open_generation(dir), Contains("CURRENT") && Contains("has 5000 bytes, more than the 4096 expected"));
    }
}

TEST_CASE("generations: no index, the old layout, writer errors", "[generations]") {
    ragpp_test::TempDir tmp;
    CHECK_THROWS_AS(open_generation(tmp.path / "nowhere"), ragpp::NotFoundError);
    CHECK_THROWS_AS(open_generation(tmp.path), ragpp::NotFoundError);
    CHECK(ragpp::clean_generations(tmp.path) == 0);

    SECTION("the old single-generation layout is refused, then replaced by the first commit") {
        write_text(tmp.path / "manifest.json", R"({"format": "ragpp-index", "version": 1, "analyzer": "english"})");
        write_text(tmp.path / "bm25.idx", "old");
        write_text(tmp.path / "notes.txt", "not ours: kept");
        CHECK_THROWS_AS(open_generation(tmp.path), ragpp::FormatError);
        CHECK_THROWS_WITH(open_generation(tmp.path), Contains("built by an older ragpp: rebuild it with ragpp index --rebuild"));
        CHECK(commit_generation(tmp.path) == 1);
        CHECK(check_whole_generation(tmp.path) == 1);
        CHECK(listing(tmp.path) == std::vector<std::string>{"CURRENT", "LOCK", "gen-000001", "notes.txt"});
        write_text(tmp.path / "bm25.idx", "a file of that name, without the old manifest: not ours, kept");
        CHECK(commit_generation(tmp.path) == 2);
        CHECK(ragpp::clean_generations(tmp.path) == 1);
        CHECK(listing(tmp.path) == std::vector<std::string>{"CURRENT", "LOCK", "bm25.idx", "gen-000002", "notes.txt"});
    }
    SECTION("one writer at a time; bad part names; a writer without commit leaves no trace") {
        commit_generation(tmp.path);
        {
            GenerationWriter w(tmp.path);
            CHECK_THROWS_AS(GenerationWriter(tmp.path), ragpp::IoError);
            CHECK_THROWS_WITH(GenerationWriter(tmp.path), Contains("another GenerationWriter"));
            for (const char* bad : {"", ".", "..", "a/b", "generation.json"}) CHECK_THROWS_AS(w.path(bad), ragpp::InvalidArgument);
            w.write("p0", "never committed");
            CHECK(fs::exists(tmp.path / "gen-000002.partial" / "p0"));
            CHECK(check_whole_generation(tmp.path) == 1);
        }
        CHECK(listing(tmp.path) == std::vector<std::string>{"CURRENT", "LOCK", "gen-000001"});
        CHECK(commit_generation(tmp.path) == 2);
    }
    SECTION("a folder in the generation is refused") {
        GenerationWriter w(tmp.path);
        fs::create_directory(w.path("sub"));
        CHECK_THROWS_AS(w.commit({}), ragpp::InvalidArgument);
        CHECK_THROWS_AS(w.commit({}), ragpp::InvalidArgument);  // spent
    }
}

namespace {
const char* const commit_steps[] = {"parts", "manifest", "renamed", "pointer", "switched"};
}

TEST_CASE("generations: a failure at each step of commit changes nothing", "[generations]") {
    ragpp_test::TempDir tmp;
    REQUIRE(commit_generation(tmp.path) == 1);
    for (const char* failing : {"parts", "manifest", "renamed", "pointer"}) {
        INFO("failing after step " << failing);
        static std::string target;
        target = failing;
        ragpp::detail::generations::commit_hook = [](std::string_view step) {
            if (step == target) throw ragpp::IoError("simulated: No space left on device");
        };
        CHECK_THROWS_AS(commit_generation(tmp.path), ragpp::IoError);
        ragpp::detail::generations::commit_hook = nullptr;
        CHECK(check_whole_generation(tmp.path) == 1);
        CHECK(listing(tmp.path) == std::vector<std::string>{"CURRENT", "LOCK", "gen-000001"});
    }
    CHECK(commit_generation(tmp.path) == 2);
}

TEST_CASE("generations: kill -9 after each step of commit leaves the old or the new generation", "[generations]") {
    for (const char* step : commit_steps) {
        INFO("killed after step " << step);
        ragpp_test::TempDir tmp;
        REQUIRE(commit_generation(tmp.path) == 1);
        static std::string target;
        target = step;
        const auto dir = tmp.path;
        std::fflush(nullptr);
        const pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            ragpp::detail::generations::commit_hook = [](std::string_view s) {
                if (s == target) ::kill(::getpid(), SIGKILL);
            };
            try {
                commit_generation(dir);
            } catch (...) {
            }
            std::_Exit(0);
        }
        int st = 0;
        REQUIRE(::waitpid(pid, &st, 0) == pid);
        REQUIRE(WIFSIGNALED(st));
        REQUIRE(WTERMSIG(st) == SIGKILL);
        const auto g = check_whole_generation(dir);
        CHECK(g == (std::string(step) == "switched" ? 2u : 1u));
        // The next commit cleans what the killed one left.
        CHECK(commit_generation(dir) == 3);
        CHECK(check_whole_generation(dir) == 3);
        CHECK(ragpp::clean_generations(dir) == 1);  // the generation before 3
        CHECK(listing(dir) == std::vector<std::string>{"CURRENT", "LOCK", "gen-000003"});
    }
}

TEST_CASE("generations: kill -9 at 60 random instants of commits in a loop leaves one whole generation", "[generations]") {
    ragpp_test::TempDir tmp;
    const auto dir = tmp.path / "index";
    REQUIRE(commit_generation(dir) == 1);
    std::mt19937 rng(20261201);
    std::uniform_int_distribution<int> delay_us(0, 40000);
    std::uint64_t last = 1;
    int advanced = 0, leftovers = 0, opened_during = 0;
    constexpr int kills = 60;
    for (int k = 0; k < kills; ++k) {
        std::fflush(nullptr);
        const pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            try {
                for (;;) commit_generation(dir);
            } catch (...) {
                std::_Exit(1);
            }
        }
        // Meanwhile a reader opens (and verifies) the folder: it never fails.
        const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(delay_us(rng));
        do {
            CHECK_NOTHROW(open_generation(dir));
            ++opened_during;
        } while (std::chrono::steady_clock::now() < until);
        // On a loaded machine 40 ms may hold no whole commit: the last child is killed only
        // after one (within 20 s), so that the loop is seen to advance.
        if (k == kills - 1 && advanced == 0)
            for (int i = 0; i < 2000 && open_generation(dir).generation == last; ++i)
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
        ::kill(pid, SIGKILL);
        int st = 0;
        REQUIRE(::waitpid(pid, &st, 0) == pid);
        REQUIRE(WIFSIGNALED(st));  // not an exit: no commit threw
        const auto g = check_whole_generation(dir);
        REQUIRE(g >= last);
        advanced += g > last;
        last = g;
        const auto names = listing(dir);
        leftovers += std::any_of(names.begin(), names.end(), [](const std::string& n) {
            return n.ends_with(".partial") || n.starts_with("CURRENT.tmp");
        });
    }
    std::printf("generations kill test: %d kills, %d advanced the generation (to %llu), %d left a partial folder or "
                "pointer tmp file, %d opens during commits\n",
                kills, advanced, static_cast<unsigned long long>(last), leftovers, opened_during);
    CHECK(advanced > 0);
    ragpp::clean_generations(dir);
    CHECK(listing(dir) == std::vector<std::string>{"CURRENT", "LOCK", ragpp::detail::generations::folder_name(last)});
}

TEST_CASE("generations: a full disk (EFBIG under RLIMIT_FSIZE) leaves the old generation", "[generations]") {
    ragpp_test::TempDir tmp;
    const auto dir = tmp.path;
    REQUIRE(commit_generation(dir) == 1);
    struct Case {
        const char* failing;  // the file whose write must fail
        std::size_t part_size, info_size;
    };
    for (const Case c : {Case{"big", 200000, 10}, Case{"generation.json", 1000, 200000}}) {
        INFO("the write of " << c.failing << " fails");
        const int code = in_child([&] {
            std::signal(SIGXFSZ, SIG_IGN);  // then write() fails with EFBIG instead of killing
            const rlimit lim{100000, 100000};
            if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) return 3;
            try {
                GenerationWriter w(dir);
                w.write("small", "x");
                w.write("big", std::string(c.part_size, 'b'));
                w.commit({{"pad", std::string(c.info_size, 'i')}});
            } catch (const ragpp::IoError& e) {
                const std::string m = e.what();
                return m.find("File too large") != std::string::npos && m.find(c.failing) != std::string::npos ? 0 : 4;
            }
            return 2;
        });
        CHECK(code == 0);
        CHECK(check_whole_generation(dir) == 1);
        CHECK(listing(dir) == std::vector<std::string>{"CURRENT", "LOCK", "gen-000001"});
    }
    CHECK(commit_generation(dir) == 2);
}

// --- special files and leftovers (FIFOs, devices, file-size limits) ----------------------------

namespace {

/// Puts a FIFO (`fifo`) or a link to /dev/zero at `p`, replacing what is there.
void make_special(const fs::path& p, bool fifo) {
    fs::remove(p);
    if (fifo) REQUIRE(::mkfifo(p.c_str(), 0644) == 0);
    else fs::create_symlink("/dev/zero", p);
}

/// Runs `fn` in a child under a 10 s alarm: a hang (a blocking open of a FIFO, an endless
/// read of /dev/zero) ends the child with SIGALRM, so the test fails instead of blocking.
template <class Fn>
int bounded(Fn fn) {
    return in_child([&] {
        ::alarm(10);
        return fn();
    });
}

}  // namespace

TEST_CASE("generations: a FIFO or a device as CURRENT, generation.json or a part is a FormatError naming it", "[generations]") {
    for (const bool fifo : {true, false})
        for (const std::string which : {"CURRENT", "gen-000001/generation.json", "gen-000001/p1"}) {
            INFO((fifo ? "a FIFO" : "/dev/zero") << " as " << which);
            ragpp_test::TempDir tmp;
            const auto dir = tmp.path;
            REQUIRE(commit_generation(dir) == 1);
            make_special(dir / which, fifo);
            const std::string name = (dir / which).string();
            for (const bool verify : {true, false}) {
                const int code = bounded([&] {
                    try {
                        (void)open_generation(dir, verify);
                    } catch (const ragpp::FormatError& e) {
                        const std::string m = e.what();
                        return m.find(name) != std::string::npos && m.find("not a regular file") != std::string::npos ? 0 : 4;
                    }
                    return 2;
                });
                CHECK(code == 0);
            }
            // A writer rebuilds over the damaged folder.
            CHECK(bounded([&] { return commit_generation(dir) == 2 ? 0 : 2; }) == 0);
            CHECK(check_whole_generation(dir) == 2);
        }
}

TEST_CASE("special files: fstat before reading, at most the limit read", "[generations]") {
    ragpp_test::TempDir tmp;
    const auto fifo = tmp.path / "fifo";
    const auto zero = tmp.path / "zero";
    const auto big = tmp.path / "big";
    make_special(fifo, true);
    make_special(zero, false);
    write_text(big, std::string(5000, 'x'));
    for (const auto& p : {fifo, zero}) {
        INFO(p.string());
        const auto named = [&](auto&& fn) {
            return bounded([&] {
                try {
                    fn();
                } catch (const ragpp::FormatError& e) {
                    return std::string(e.what()).find("'" + p.string() + "' is not a regular file") != std::string::npos ? 0 : 4;
                }
                return 2;
            });
        };
        CHECK(named([&] { (void)ragpp::detail::read_small_file(p, 4096); }) == 0);
        CHECK(named([&] { (void)ragpp::detail::read_regular_file(p); }) == 0);
        CHECK(named([&] { (void)ragpp::detail::FileBytes(p, false); }) == 0);
        CHECK(named([&] { (void)ragpp::detail::FileBytes(p, true); }) == 0);
        CHECK(named([&] { (void)ragpp::hash_file(p); }) == 0);
    }
    CHECK_THROWS_WITH(ragpp::detail::read_regular_file(big, 4999), Contains(big.string()) && Contains("5000 bytes, more than the 4999"));
    CHECK(ragpp::detail::read_regular_file(big, 5000) == std::string(5000, 'x'));
    CHECK_THROWS_AS(ragpp::detail::read_regular_file(tmp.path / "missing"), ragpp::IoError);
    CHECK_THROWS_WITH(ragpp::detail::read_regular_file(tmp.path), Contains("is a directory"));
}

TEST_CASE("generations: a killed writer's partial folder is removed by the next writer or remove_partial_generations", "[generations]") {
    ragpp_test::TempDir tmp;
    const auto dir = tmp.path;
    REQUIRE(commit_generation(dir) == 1);
    REQUIRE(commit_generation(dir) == 2);
    const auto leave_leftovers = [&] {
        fs::create_directories(dir / "gen-000007.partial");
        write_text(dir / "gen-000007.partial" / "p0", "half");
        write_text(dir / "CURRENT.tmp-4242", "half");
        write_text(dir / "notes.txt", "not ragpp's");
    };
    leave_leftovers();
    {
        // While a writer holds the lock, its partial folder is alive: nothing removed.
        GenerationWriter w(dir);
        CHECK(!fs::exists(dir / "gen-000007.partial"));  // the writer removed the dead one
        CHECK(!fs::exists(dir / "CURRENT.tmp-4242"));
        CHECK(w.generation() == 8);  // above the dead writer's number
        CHECK(ragpp::remove_partial_generations(dir) == 0);
        CHECK(fs::exists(dir / "gen-000008.partial"));
    }
    CHECK(listing(dir) == std::vector<std::string>{"CURRENT", "LOCK", "gen-000001", "gen-000002", "notes.txt"});
    leave_leftovers();
    CHECK(ragpp::remove_partial_generations(dir) == 2);
    CHECK(listing(dir) == std::vector<std::string>{"CURRENT", "LOCK", "gen-000001", "gen-000002", "notes.txt"});
    CHECK(check_whole_generation(dir) == 2);
    CHECK(ragpp::remove_partial_generations(tmp.path / "missing") == 0);
}

// --- corpus ---------------------------------------------------------------------------

namespace {

std::vector<std::string> paths_of(const ragpp::CorpusScan& scan) {
    std::vector<std::string> out;
    for (const auto& f : scan.files) out.push_back(f.path);
    return out;
}

bool any_note(const ragpp::CorpusScan& scan, const std::string& a, const std::string& b = "") {
    return std::any_of(scan.notes.begin(), scan.notes.end(), [&](const std::string& n) {
        return n.find(a) != std::string::npos && n.find(b) != std::string::npos;
    });
}

void set_mtime(const fs::path& p, std::int64_t ns) {
    const timespec times[2] = {{ns / 1'000'000'000, ns % 1'000'000'000}, {ns / 1'000'000'000, ns % 1'000'000'000}};
    REQUIRE(::utimensat(AT_FDCWD, p.c_str(), times, 0) == 0);
}

}  // namespace

TEST_CASE("corpus: a FIFO or a device among the files is skipped with a note naming it", "[corpus]") {
    ragpp_test::TempDir tmp;
    const auto r = tmp.path / "c";
    fs::create_directories(r);
    write_text(r / "a.md", "# A\n\ntext\n");
    make_special(r / "fifo.md", true);
    make_special(r / "zero.md", false);
    ragpp::CorpusOptions o;
    o.follow_symlinks_outside = true;
    const int code = bounded([&] {
        const auto scan = ragpp::scan_corpus(r, o);
        const bool ok = paths_of(scan) == std::vector<std::string>{"a.md"} &&
                        any_note(scan, "skipped 'fifo.md'", "not a regular file (a FIFO)") &&
                        any_note(scan, "skipped 'zero.md'", "not a regular file (a character device)");
        return ok ? 0 : 2;
    });
    CHECK(code == 0);
}

TEST_CASE("corpus: extensions, order, sizes and times", "[corpus]") {
    ragpp_test::TempDir tmp;
    const auto& r = tmp.path;
    fs::create_directories(r / "b");
    write_text(r / "f.markdown", "f");
    write_text(r / "a.md", "hello");
    write_text(r / "b" / "c.rst", "cc");
    write_text(r / "b" / "d.txt", "ddd");
    write_text(r / "e.bin", "eeee");
    write_text(r / "a-b.md", "x");
    set_mtime(r / "a.md", 1'700'000'000'123'456'789);
    const auto before = ragpp::detail::corpus::file_clock_now();
    const auto scan = ragpp::scan_corpus(r);
    CHECK(paths_of(scan) == std::vector<std::string>{"a-b.md", "a.md", "b/c.rst", "b/d.txt", "f.markdown"});
    CHECK(scan.notes.empty());
    const auto& a = scan.files[1];
    CHECK(a.size == 5);
    CHECK(a.mtime_ns == 1'700'000'000'123'456'789);
    CHECK(a.scanned_ns >= before);
    CHECK(ragpp_test::read_file(a.absolute) == "hello");
    CHECK(scan.files[2].size == 2);
    ragpp::CorpusOptions all;
    all.extensions.clear();
    CHECK(ragpp::scan_corpus(r, all).files.size() == 6);

    CHECK_THROWS_AS(ragpp::scan_corpus(r / "nowhere"), ragpp::IoError);
    CHECK_THROWS_WITH(ragpp::scan_corpus(r / "nowhere"), Contains((r / "nowhere").string()));
    CHECK_THROWS_WITH(ragpp::scan_corpus(r / "a.md"), Contains("a.md") && Contains("not a folder"));
}

TEST_CASE("corpus: links inside and outside the root, aliases, hard links and loops", "[corpus]") {
    ragpp_test::TempDir tmp;
    const auto r = tmp.path / "root";
    const auto out = tmp.path / "outside";
    fs::create_directories(r / "real" / "sub");
    fs::create_directories(out);
    write_text(r / "real" / "x.md", "x");
    write_text(r / "real" / "sub" / "y.md", "y");
    write_text(r / "real" / "data.bin", "data");
    write_text(out / "secret.md", "secret");
    fs::create_symlink("real/x.md", r / "link-file.md");         // alias of a file
    fs::create_symlink("real", r / "a-linkdir");                 // alias of a folder, sorts before it
    fs::create_hard_link(r / "real" / "x.md", r / "z-hard.md");  // hard link
    fs::create_symlink(".", r / "loop");                         // to the root
    fs::create_symlink("..", r / "real" / "sub" / "up");         // to an ancestor
    fs::create_symlink("real/data.bin", r / "doc.md");           // a link to a file not kept by itself
    fs::create_symlink("missing.md", r / "broken.md");
    fs::create_symlink(out, r / "out");                          // a folder outside
    fs::create_symlink(out / "secret.md", r / "out-file.md");    // a file outside

    const auto scan = ragpp::scan_corpus(r);
    CHECK(paths_of(scan) == std::vector<std::string>{"doc.md", "real/sub/y.md", "real/x.md"});
    CHECK(any_note(scan, "'z-hard.md'", "'real/x.md'"));
    CHECK(any_note(scan, "'link-file.md'", "'real/x.md'"));
    CHECK(any_note(scan, "'a-linkdir'", "'real'"));
    CHECK(any_note(scan, "'loop'", "'.'"));
    CHECK(any_note(scan, "'real/sub/up'", "'real'"));
    CHECK(any_note(scan, "'broken.md'", "broken link"));
    CHECK(any_note(scan, "'out'", "outside the corpus root"));
    CHECK(any_note(scan, "'out-file.md'", "outside the corpus root"));
    CHECK(scan.notes.size() == 8);

    ragpp::CorpusOptions follow;
    follow.follow_symlinks_outside = true;
    const auto followed = ragpp::scan_corpus(r, follow);
    CHECK(paths_of(followed) == std::vector<std::string>{"doc.md", "out/secret.md", "real/sub/y.md", "real/x.md"});
    CHECK(any_note(followed, "'out-file.md'", "'out/secret.md'"));
    for (const auto& f : followed.files) CHECK(f.path.find("..") == std::string::npos);
    CHECK(ragpp_test::read_file(followed.files[1].absolute) == "secret");

    // The root itself through a link: same ids.
    fs::create_symlink(r, tmp.path / "root-link");
    CHECK(paths_of(ragpp::scan_corpus(tmp.path / "root-link")) == paths_of(scan));
}

TEST_CASE("corpus: an unreadable file or folder is an IoError naming it, or a note", "[corpus]") {
    ragpp_test::TempDir tmp;
    const auto r = tmp.path / "root";
    fs::create_directories(r / "locked");
    write_text(r / "locked" / "in.md", "in");
    write_text(r / "ok.md", "ok");
    write_text(r / "secret.md", "secret");
    fs::permissions(r / "secret.md", fs::perms::none);
    fs::permissions(r / "locked", fs::perms::none);
    // Root reads everything: run the scans as an unprivileged user in a child.
    const bool as_root = ::geteuid() == 0;
    const int code = in_child([&] {
        if (as_root && (::setgid(65534) != 0 || ::setuid(65534) != 0)) return 10;
        int failures = 0;
        try {
            (void)ragpp::scan_corpus(r);
            failures |= 1;
        } catch (const ragpp::IoError& e) {
            if (std::string(e.what()).find((r / "locked").string()) == std::string::npos) failures |= 2;
        }
        ragpp::CorpusOptions skip;
        skip.skip_unreadable = true;
        const auto scan = ragpp::scan_corpus(r, skip);
        if (paths_of(scan) != std::vector<std::string>{"ok.md"}) failures |= 4;
        if (!any_note(scan, "'locked'", "Permission denied") || !any_note(scan, "'secret.md'", "Permission denied")) failures |= 8;
        return failures;
    });
    fs::permissions(r / "locked", fs::perms::owner_all);
    if (code == 10) {
        WARN("SKIPPED: cannot drop root privileges to test unreadable files");
        return;
    }
    CHECK(code == 0);
    // A file alone, unreadable, as the first failure.
    fs::remove_all(r / "locked");
    const int code2 = in_child([&] {
        if (as_root && (::setgid(65534) != 0 || ::setuid(65534) != 0)) return 10;
        try {
            (void)ragpp::scan_corpus(r);
        } catch (const ragpp::IoError& e) {
            return std::string(e.what()).find((r / "secret.md").string()) != std::string::npos ? 0 : 2;
        }
        return 1;
    });
    CHECK(code2 == 0);
}

TEST_CASE("corpus: random trees of folders, files, links, hard links and loops", "[corpus]") {
    const auto seed = GENERATE(take(30, random(1u, 1000000u)));
    INFO("seed " << seed);
    std::mt19937 rng(seed);
    ragpp_test::TempDir tmp;
    const auto root = tmp.path / "root";
    const auto outside = tmp.path / "outside";
    fs::create_directories(root);
    fs::create_directories(outside / "o");
    write_text(outside / "o" / "far.md", "far");
    std::vector<fs::path> dirs{root}, files;
    for (int i = 0; i < 6; ++i) {
        const auto d = dirs[rng() % dirs.size()] / ("d" + std::to_string(i));
        fs::create_directory(d);
        dirs.push_back(d);
    }
    for (int i = 0; i < 12; ++i) {
        const auto f = dirs[rng() % dirs.size()] / ("f" + std::to_string(i) + (rng() % 4 ? ".md" : ".bin"));
        write_text(f, "file " + std::to_string(i));
        files.push_back(f);
    }
    for (int i = 0; i < 10; ++i) {
        const auto at = dirs[rng() % dirs.size()] / ("l" + std::to_string(i) + (rng() % 2 ? ".md" : ""));
        switch (rng() % 6) {
            case 0: fs::create_symlink(files[rng() % files.size()], at); break;
            case 1: fs::create_symlink(dirs[rng() % dirs.size()], at); break;  // may be an ancestor: a loop
            case 2: fs::create_symlink(outside / "o", at); break;
            case 3: fs::create_symlink(outside / "o" / "far.md", at); break;
            case 4: fs::create_symlink(at.parent_path() / "nothing", at); break;
            default: fs::create_hard_link(files[rng() % files.size()], at.string() + ".md");
        }
    }
    auto key = [](const fs::path& p) {
        struct stat st {};
        REQUIRE(::stat(p.c_str(), &st) == 0);
        return std::pair<dev_t, ino_t>(st.st_dev, st.st_ino);
    };
    // The oracle: what a walk that follows no link finds, and what every link names.
    std::set<std::pair<dev_t, ino_t>> real, linked_inside, linked_outside;
    for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
        const auto& p = it->path();
        const bool md = p.extension() == ".md";
        if (it->is_symlink()) {
            std::error_code ec;
            const auto target = fs::canonical(p, ec);
            if (ec || !fs::is_regular_file(target) || !md) continue;
            (ragpp::detail::corpus::within(fs::canonical(root), target) ? linked_inside : linked_outside).insert(key(target));
        } else if (it->is_regular_file() && md) {
            real.insert(key(p));
        }
    }
    for (const bool follow : {false, true}) {
        INFO("follow_symlinks_outside " << follow);
        ragpp::CorpusOptions options;
        options.follow_symlinks_outside = follow;
        const auto scan = ragpp::scan_corpus(root, options);
        std::set<std::pair<dev_t, ino_t>> found;
        std::vector<std::string> paths;
        for (const auto& f : scan.files) {
            paths.push_back(f.path);
            CHECK(f.path.find("..") == std::string::npos);
            CHECK(f.path.front() != '/');
            CHECK(fs::path(f.path).extension() == ".md");
            REQUIRE(fs::is_regular_file(root / f.path));
            CHECK(found.insert(key(root / f.path)).second);  // no file twice
            if (!follow) CHECK(ragpp::detail::corpus::within(fs::canonical(root), fs::canonical(root / f.path)));
        }
        CHECK(std::is_sorted(paths.begin(), paths.end()));
        for (const auto& k : real) CHECK(found.contains(k));
        for (const auto& k : linked_inside) CHECK(found.contains(k));
        if (follow)
            for (const auto& k : linked_outside) CHECK(found.contains(k));
    }
}

// --- sources --------------------------------------------------------------------------

TEST_CASE("sources: diff_sources against re-hashing every file, on random add/change/touch/delete sequences", "[sources]") {
    const auto seed = GENERATE(take(12, random(1u, 1000000u)));
    INFO("seed " << seed);
    std::mt19937 rng(seed);
    ragpp_test::TempDir tmp;
    const auto& r = tmp.path;
    fs::create_directories(r / "c");
    fs::create_directories(r / "g" / "h");
    const std::vector<std::string> names{"a.md", "b.md", "c/d.md", "c/e.txt", "f.rst", "g/h/i.md", "j.txt", "k.md"};
    // Half of the writes get an explicit mtime in the past (size and mtime then decide
    // without reading), half keep the current time (racily clean: the hash decides).
    std::int64_t past = 1'600'000'000'000'000'000;
    auto maybe_past = [&](const fs::path& p) {
        if (rng() % 2) set_mtime(p, past += 1'000'000'007);
    };
    auto random_text = [&](std::size_t n) {
        std::string s(n, ' ');
        for (auto& c : s) c = static_cast<char>('a' + rng() % 4);
        return s;
    };
    ragpp::SourceManifest manifest;
    int fast = 0;  // files found unchanged by size and mtime alone
    for (int step = 0; step < 20; ++step) {
        const int ops = 1 + static_cast<int>(rng() % 3);
        for (int o = 0; o < ops; ++o) {
            const auto p = r / names[rng() % names.size()];
            const bool exists = fs::exists(p);
            switch (exists ? rng() % 5 : 0) {
                case 0:  // a new content (adds the file when it is absent)
                    write_text(p, random_text(rng() % 40));
                    maybe_past(p);
                    break;
                case 1: {  // an edit of the same size
                    auto text = ragpp_test::read_file(p);
                    if (text.empty()) text = "z";
                    else text[rng() % text.size()] = 'z';
                    write_text(p, text);
                    maybe_past(p);
                    break;
                }
                case 2:  // touched: a new mtime, the same content
                    set_mtime(p, past += 1'000'000'007);
                    break;
                case 3:  // rewritten with the same content
                    write_text(p, ragpp_test::read_file(p));
                    break;
                default:
                    fs::remove(p);
            }
        }
        const auto scan = ragpp::scan_corpus(r);
        const auto diff = ragpp::diff_sources(manifest, scan);
        // The oracle: re-hash everything.
        std::set<std::string> added, changed, unchanged, removed, present;
        for (const auto& f : scan.files) {
            present.insert(f.path);
            const auto* rec = manifest.find(f.path);
            if (!rec) added.insert(f.path);
            else (ragpp::hash_file(f.absolute) == rec->hash ? unchanged : changed).insert(f.path);
        }
        for (const auto* rec : manifest.records())
            if (!present.contains(rec->path)) removed.insert(rec->path);
        auto set_of = [](const auto& v) {
            std::set<std::string> s;
            for (const auto& x : v) {
                if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::string>) s.insert(x);
                else s.insert(x.path);
            }
            return s;
        };
        CHECK(set_of(diff.added) == added);
        CHECK(set_of(diff.changed) == changed);
        CHECK(set_of(diff.unchanged) == unchanged);
        CHECK(set_of(diff.removed) == removed);
        CHECK(std::is_sorted(diff.unchanged.begin(), diff.unchanged.end()));
        for (const auto& t : diff.touched) CHECK(unchanged.contains(t.path));
        fast += static_cast<int>(unchanged.size() - diff.touched.size());
        // Apply it, as an incremental update does, and compare with a fresh manifest.
        for (const auto* list : {&diff.added, &diff.changed})
            for (const auto& f : *list) manifest.replace(ragpp::make_source_record(f, ragpp::hash_file(f.absolute), {f.path + ":1"}));
        for (const auto& p : diff.removed) CHECK(manifest.erase(p));
        for (const auto& f : diff.touched) manifest.refresh(f);
        REQUIRE(manifest.size() == scan.files.size());
        for (const auto& f : scan.files) {
            const auto* rec = manifest.find(f.path);
            REQUIRE(rec != nullptr);
            CHECK(rec->hash == ragpp::hash_file(f.absolute));
            CHECK(rec->size == f.size);
            CHECK(rec->mtime_ns == f.mtime_ns);
            CHECK(rec->chunks == std::vector<std::string>{f.path + ":1"});
        }
        CHECK(ragpp::SourceManifest::from_json(manifest.to_json(), "test") == manifest);
    }
    CHECK(fast > 0);  // the stat fast path was taken
}

TEST_CASE("sources: size and mtime decide without reading, unless the record is racily clean", "[sources]") {
    ragpp_test::TempDir tmp;
    const auto p = tmp.path / "a.md";
    write_text(p, "five seconds");
    set_mtime(p, 1'600'000'000'000'000'000);
    const auto scan = ragpp::scan_corpus(tmp.path);
    REQUIRE(scan.files.size() == 1);
    ragpp::SourceManifest m;
    m.add(ragpp::make_source_record(scan.files[0], ragpp::hash_file(p), {"a.md:1"}));
    CHECK_THROWS_AS(m.add(ragpp::make_source_record(scan.files[0], 0, {})), ragpp::DuplicateError);
    const auto& rec = *m.find("a.md");
    CHECK(ragpp::check_source(tmp.path, rec) == ragpp::Freshness::fresh);
    // Same size, same mtime, another content: not read, so still "unchanged"...
    write_text(p, "eight second");
    set_mtime(p, 1'600'000'000'000'000'000);
    CHECK(ragpp::diff_sources(m, ragpp::scan_corpus(tmp.path)).unchanged == std::vector<std::string>{"a.md"});
    CHECK(ragpp::check_source(tmp.path, rec) == ragpp::Freshness::fresh);
    // ... unless the record is racily clean (or its scan time unknown): then hashed.
    auto racy = rec;
    racy.scanned_ns = racy.mtime_ns;
    CHECK(ragpp::check_source(tmp.path, racy) == ragpp::Freshness::changed);
    racy.scanned_ns = -1;
    CHECK(ragpp::check_source(tmp.path, racy) == ragpp::Freshness::changed);
    ragpp::SourceManifest m2;
    m2.add(racy);
    CHECK(ragpp::diff_sources(m2, ragpp::scan_corpus(tmp.path)).changed.size() == 1);
    // A touched file with its old content is fresh; a new size is a change; removal deletes.
    write_text(p, "five seconds");
    CHECK(ragpp::check_source(tmp.path, rec) == ragpp::Freshness::fresh);
    write_text(p, "eight seconds");
    CHECK(ragpp::check_source(tmp.path, rec) == ragpp::Freshness::changed);
    fs::remove(p);
    CHECK(ragpp::check_source(tmp.path, rec) == ragpp::Freshness::deleted);
    fs::create_directory(p);
    CHECK(ragpp::check_source(tmp.path, rec) == ragpp::Freshness::deleted);
}

TEST_CASE("sources: hash_file reads in blocks and equals source_hash, errors name the file", "[sources]") {
    ragpp_test::TempDir tmp;
    std::string big(200'000, '\0');
    for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 31 % 251);
    write_text(tmp.path / "big", big);
    CHECK(ragpp::hash_file(tmp.path / "big") == ragpp::source_hash(big));
    CHECK(ragpp::source_hash("a") == 0xaf63dc4c8601ec8cULL);  // FNV-1a-64 of "a" (the published test vector)
    CHECK_THROWS_AS(ragpp::hash_file(tmp.path / "missing"), ragpp::IoError);
    CHECK_THROWS_WITH(ragpp::hash_file(tmp.path / "missing"), Contains((tmp.path / "missing").string()));
}

TEST_CASE("sources: from_json on a malformed manifest names the field", "[sources]") {
    const auto good = R"({"path": "a.md", "size": 3, "mtime_ns": 5, "hash": "00000000000000ff", "chunks": ["a.md:1"]})"_json;
    auto with = [&](const char* field, const nlohmann::json& v) {
        auto s = good;
        if (v.is_discarded()) s.erase(field);
        else s[field] = v;
        return nlohmann::json{{"version", 1}, {"sources", {good, s}}};
    };
    const auto gone = nlohmann::json(nlohmann::json::value_t::discarded);
    struct Bad {
        nlohmann::json j;
        const char* message;
    };
    const std::vector<Bad> bads{
        {nlohmann::json::array(), "not a JSON object"},
        {{{"sources", nlohmann::json::array()}}, "field 'version'"},
        {{{"version", 2}, {"sources", nlohmann::json::array()}}, "version 2 is not supported"},
        {{{"version", 1}, {"sources", 3}}, "field 'sources'"},
        {{{"version", 1}, {"sources", {1}}}, "field 'sources[0]' is not an object"},
        {with("path", gone), "field 'sources[1].path' is missing"},
        {with("path", ""), "field 'sources[1].path' is empty"},
        {with("size", -1), "field 'sources[1].size' is not an unsigned integer"},
        {with("mtime_ns", "x"), "field 'sources[1].mtime_ns'"},
        {with("scanned_ns", 1.5), "field 'sources[1].scanned_ns'"},
        {with("hash", "ff"), "field 'sources[1].hash' is not 16 hex digits"},
        {with("hash", "00000000000000fg"), "field 'sources[1].hash'"},
        {with("chunks", {"a", 2}), "field 'sources[1].chunks[1]' is not a string"},
    };
    for (const auto& b : bads) {
        INFO(b.j.dump());
        CHECK_THROWS_AS(ragpp::SourceManifest::from_json(b.j, "idx/sources.json"), ragpp::FormatError);
        CHECK_THROWS_WITH(ragpp::SourceManifest::from_json(b.j, "idx/sources.json"), Contains("idx/sources.json") && Contains(b.message));
    }
    const auto twice = nlohmann::json{{"version", 1}, {"sources", {good, good}}};
    CHECK_THROWS_AS(ragpp::SourceManifest::from_json(twice, "w"), ragpp::DuplicateError);
    const auto m = ragpp::SourceManifest::from_json(nlohmann::json{{"version", 1}, {"sources", {good}}}, "w");
    REQUIRE(m.find("a.md") != nullptr);
    CHECK(m.find("a.md")->hash == 255);
    CHECK(m.find("a.md")->scanned_ns == -1);
}

// --- metadata -------------------------------------------------------------------------

TEST_CASE("metadata_json: the format of saved indexes, round trip and errors naming the field", "[metadata]") {
    ragpp::Metadata m;
    m["title"] = std::string("Warranty");
    m["n"] = 1.5;
    m["date"] = ragpp::Date::parse("2024-02-29");
    m["groups"] = std::vector<std::string>{"admins", "ops"};
    const auto j = ragpp::metadata_to_json(m);
    CHECK(j.dump() == R"({"date":{"date":"2024-02-29"},"groups":["admins","ops"],"n":1.5,"title":"Warranty"})");
    CHECK(ragpp::metadata_from_json(j, "x") == m);
    CHECK(ragpp::metadata_from_json(nullptr, "x").empty());
    const auto loose = ragpp::metadata_from_json(R"({"ok": true, "gone": null})"_json, "x");
    REQUIRE(loose.size() == 1);
    CHECK(std::get<std::string>(loose.at("ok")) == "true");
    struct Bad {
        nlohmann::json j;
        const char* message;
    };
    for (const auto& b : std::vector<Bad>{{"[1]"_json, "docs.jsonl:7: field 'metadata' must be an object"},
                                          {R"({"tags": ["a", 1]})"_json, "docs.jsonl:7: metadata field 'tags' must be a list of strings"},
                                          {R"({"when": {"date": "2024-13-01"}})"_json, "docs.jsonl:7: metadata field 'when'"},
                                          {R"({"o": {"x": 1}})"_json, "docs.jsonl:7: metadata field 'o' has an unsupported type"}}) {
        CHECK_THROWS_AS(ragpp::metadata_from_json(b.j, "docs.jsonl:7"), ragpp::ParseError);
        CHECK_THROWS_WITH(ragpp::metadata_from_json(b.j, "docs.jsonl:7"), Contains(b.message));
    }
}
