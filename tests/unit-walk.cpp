// The corpus walk as a notes tool needs it: hidden entries, ignore files (gitignore
// syntax, checked by hand and against `git ls-files` when git is installed), binary and
// not-UTF-8 files, each left out with its reason.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <ragpp/io/contexts.hpp>
#include <ragpp/io/corpus.hpp>
#include <ragpp/io/ignore.hpp>

#include "support.hpp"

namespace fs = std::filesystem;
using ragpp::FolderContexts;
using ragpp::IgnoreFile;
using ragpp::IgnoreStack;
using ragpp::SkipReason;

namespace {

void put(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
}

std::vector<std::string> paths_of(const ragpp::CorpusScan& scan) {
    std::vector<std::string> out;
    for (const auto& f : scan.files) out.push_back(f.path);
    return out;
}

std::vector<std::string> skipped_as(const ragpp::CorpusScan& scan, SkipReason reason) {
    std::vector<std::string> out;
    for (const auto& s : scan.skipped)
        if (s.reason == reason) out.push_back(s.path);
    std::sort(out.begin(), out.end());
    return out;
}

/// Whether `path` is ignored by the one ignore file `text` at the root.
bool ignored(const std::string& text, const std::string& path, bool folder = false) {
    IgnoreStack s;
    s.push(IgnoreFile::parse(text));
    return s.ignored(path, folder);
}

}  // namespace

TEST_CASE("ignore: gitignore patterns by hand", "[walk][ignore]") {
    // A name pattern matches at any depth; a leading or middle '/' anchors it.
    CHECK(ignored("*.log", "a.log"));
    CHECK(ignored("*.log", "dir/deep/b.log"));
    CHECK_FALSE(ignored("*.log", "a.log.md"));
    CHECK(ignored("/todo.md", "todo.md"));
    CHECK_FALSE(ignored("/todo.md", "sub/todo.md"));
    CHECK(ignored("doc/*.md", "doc/a.md"));
    CHECK_FALSE(ignored("doc/*.md", "doc/sub/a.md"));  // '*' never crosses '/'
    CHECK_FALSE(ignored("doc/*.md", "x/doc/a.md"));    // anchored at the file's folder
    // A trailing '/': folders only.
    CHECK(ignored("build/", "build", true));
    CHECK(ignored("build/", "src/build", true));
    CHECK_FALSE(ignored("build/", "build", false));
    // "**": any folders at the start, zero or more in the middle, everything at the end.
    CHECK(ignored("**/drafts", "drafts", true));
    CHECK(ignored("**/drafts", "a/b/drafts"));
    CHECK(ignored("a/**/b", "a/b"));
    CHECK(ignored("a/**/b", "a/x/b"));
    CHECK(ignored("a/**/b", "a/x/y/b"));
    CHECK_FALSE(ignored("a/**/b", "ab"));
    CHECK(ignored("tmp/**", "tmp/x"));
    CHECK(ignored("tmp/**", "tmp/x/y.md"));
    CHECK_FALSE(ignored("tmp/**", "tmp", true));
    CHECK(ignored("a**b.md", "axyb.md"));  // "**" not between slashes is '*'
    CHECK_FALSE(ignored("a**b.md", "a/b.md"));
    // '?' and classes, never '/'.
    CHECK(ignored("?.md", "a.md"));
    CHECK_FALSE(ignored("?.md", "ab.md"));
    CHECK(ignored("[abc].md", "b.md"));
    CHECK_FALSE(ignored("[abc].md", "d.md"));
    CHECK(ignored("[!abc].md", "d.md"));
    CHECK_FALSE(ignored("[!abc].md", "a.md"));
    CHECK(ignored("[^abc].md", "d.md"));
    CHECK(ignored("file[0-9].md", "file5.md"));
    CHECK_FALSE(ignored("file[0-9].md", "filex.md"));
    CHECK(ignored("[[:digit:]]x.md", "7x.md"));
    CHECK_FALSE(ignored("[[:digit:]]x.md", "ax.md"));
    CHECK(ignored("[]a].md", "].md"));
    CHECK_FALSE(ignored("a[/]b", "a/b"));
    CHECK_FALSE(ignored("[ab.md", "a.md"));  // an unclosed class matches nothing
    // Comments, escapes, blank lines, trailing spaces.
    CHECK_FALSE(ignored("#notes.md", "#notes.md"));
    CHECK(ignored("\\#notes.md", "#notes.md"));
    CHECK(ignored("\\!important.md", "!important.md"));
    CHECK(ignored("bar   ", "bar"));
    CHECK(ignored("foo\\ ", "foo "));
    CHECK_FALSE(ignored("foo\\ ", "foo"));
    CHECK_FALSE(ignored("\n\n   \n", "x"));
    CHECK(ignored("a\\*b", "a*b"));
    CHECK_FALSE(ignored("a\\*b", "axb"));
    // Many stars against a long name that almost matches: pruned, not exponential.
    const std::string stars = "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b";
    CHECK_FALSE(ignored(stars, std::string(250, 'a')));
    CHECK(ignored(stars, std::string(250, 'a') + "b"));
    CHECK_FALSE(ignored("**/**/**/**/**/**/**/**/x/**/**/**/y", "a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/x/a/a/a/a/a/a/a/a/z"));
    // The last matching rule wins: negation, and ignoring again.
    CHECK_FALSE(ignored("*.md\n!keep.md\n", "keep.md"));
    CHECK(ignored("*.md\n!keep.md\n", "other.md"));
    CHECK(ignored("!keep.md\n*.md\n", "keep.md"));
    CHECK(ignored("*.md\r\n!keep.md\r\n*\r\n", "keep.md"));  // CRLF lines
    // A rule of a sub-folder's file is relative to that folder; deeper files win.
    IgnoreStack s;
    s.push(IgnoreFile::parse("*.md\n/top.txt\n"));
    s.push(IgnoreFile::parse("!keep.md\n/x.txt\n", "sub"));
    CHECK(s.ignored("a.md", false));
    CHECK(s.ignored("sub/a.md", false));
    CHECK_FALSE(s.ignored("sub/keep.md", false));
    CHECK(s.ignored("keep.md", false));  // the sub-folder's negation does not reach the root
    CHECK(s.ignored("sub/x.txt", false));
    CHECK_FALSE(s.ignored("sub/deeper/x.txt", false));
    CHECK_FALSE(s.ignored("x.txt", false));
    CHECK(s.ignored("top.txt", false));
    CHECK_FALSE(s.ignored("sub/top.txt", false));
    CHECK_FALSE(s.ignored("subway/x.txt", false));  // "sub" is a folder, not a prefix of a name
    const auto f = IgnoreFile::parse("# c\n!/a/b/\n\n*.x\n", "d");
    REQUIRE(f.rules().size() == 2);
    CHECK(f.rules()[0].pattern == "a/b");
    CHECK(f.rules()[0].negated);
    CHECK(f.rules()[0].folders_only);
    CHECK(f.rules()[0].anchored);
    CHECK(f.rules()[0].line == 2);
    CHECK_FALSE(f.rules()[1].anchored);
    CHECK(f.rules()[1].line == 4);
}

TEST_CASE("walk: hidden, ignored, binary and not-UTF-8 entries are left out with their reason", "[walk][corpus]") {
    ragpp_test::TempDir tmp;
    const auto& r = tmp.path;
    put(r / "a.md", "# A\n\nsecret price 10\n");
    put(r / ".trash" / "old.md", "secret price 99\n");
    put(r / ".obsidian" / "workspace.md", "x\n");
    put(r / ".git" / "notes.md", "x\n");
    put(r / ".hidden.md", "x\n");
    put(r / "notes" / ".draft.md", "x\n");
    put(r / ".gitignore", "private/\n*.tmp.md\n!keep.tmp.md\n");
    put(r / "private" / "p.md", "x\n");
    put(r / "x.tmp.md", "x\n");
    put(r / "keep.tmp.md", "x\n");
    put(r / "sub" / ".ignore", "secret.md\n");
    put(r / "sub" / ".ragppignore", "!deep/secret.md\n");  // stronger than .ignore
    put(r / "sub" / "secret.md", "x\n");
    put(r / "sub" / "ok.md", "x\n");
    put(r / "sub" / "deep" / "secret.md", "x\n");
    put(r / "bin.md", std::string("PK\x03\x04\0\0", 6));
    put(r / "latin1.md", "# Note\n\ncaf\xE9 cr\xE8me\n");
    put(r / "big.md", std::string(9000, 'a') + "\xE9");  // past the first 8 KiB: the walk keeps it
    put(r / "cut.md", std::string(8191, 'a') + "\xC3\xA9");  // a valid sequence across the 8 KiB mark
    put(r / "data.bin", std::string("\0\0", 2));  // not a wanted extension: not counted

    const auto scan = ragpp::scan_corpus(r);
    CHECK(paths_of(scan) == std::vector<std::string>{"a.md", "big.md", "cut.md", "keep.tmp.md", "sub/deep/secret.md", "sub/ok.md"});
    CHECK(skipped_as(scan, SkipReason::hidden) ==
          std::vector<std::string>{".git", ".hidden.md", ".obsidian", ".trash", "notes/.draft.md"});
    CHECK(skipped_as(scan, SkipReason::ignored) == std::vector<std::string>{"private", "sub/secret.md", "x.tmp.md"});
    CHECK(skipped_as(scan, SkipReason::binary) == std::vector<std::string>{"bin.md"});
    CHECK(skipped_as(scan, SkipReason::not_utf8) == std::vector<std::string>{"latin1.md"});
    const auto latin = std::find_if(scan.skipped.begin(), scan.skipped.end(), [](const auto& s) { return s.path == "latin1.md"; });
    CHECK(latin->detail == "line 3, byte 0xE9");
    const auto trash = std::find_if(scan.skipped.begin(), scan.skipped.end(), [](const auto& s) { return s.path == ".trash"; });
    CHECK(trash->folder);
    CHECK(ragpp::skipped_summary(scan.skipped) == "5 hidden, 3 ignored, 1 binary, 1 not UTF-8");
    CHECK(scan.notes.empty());

    ragpp::CorpusOptions hidden;
    hidden.hidden = true;
    const auto with_hidden = ragpp::scan_corpus(r, hidden);
    CHECK(paths_of(with_hidden) == std::vector<std::string>{".hidden.md", ".obsidian/workspace.md", ".trash/old.md", "a.md",
                                                           "big.md", "cut.md", "keep.tmp.md", "notes/.draft.md",
                                                           "sub/deep/secret.md", "sub/ok.md"});
    CHECK(skipped_as(with_hidden, SkipReason::hidden) == std::vector<std::string>{".git"});  // never walked

    ragpp::CorpusOptions no_ignore;
    no_ignore.ignore_files = false;
    const auto all = ragpp::scan_corpus(r, no_ignore);
    CHECK(paths_of(all) == std::vector<std::string>{"a.md", "big.md", "cut.md", "keep.tmp.md", "private/p.md",
                                                   "sub/deep/secret.md", "sub/ok.md", "sub/secret.md", "x.tmp.md"});
    CHECK(skipped_as(all, SkipReason::ignored).empty());
    CHECK(ragpp::skipped_summary({}) == "");
}

TEST_CASE("walk: a name that is not UTF-8 is left out with its reason, a folder with its content", "[walk][corpus]") {
    // Names are data (source ids, citations, JSON): a name with byte 0xFF could not be
    // printed as JSON. A name with a newline is valid UTF-8 and kept (the tool escapes it).
    ragpp_test::TempDir tmp;
    const auto& r = tmp.path;
    put(r / "ok.md", "# Ok\n\nfine\n");
    put(r / "bad\xFFname.md", "# Bad\n\nsecret\n");
    put(r / "caf\xE9" / "inside.md", "# In\n\nsecret\n");  // Latin-1 folder name
    put(r / "line\nbreak.md", "# Nl\n\nkept\n");
    put(r / "image\xFF.png", "x");  // not a wanted extension: not counted
    put(r / ".hid\xFF.md", "x\n");  // hidden first
    const auto scan = ragpp::scan_corpus(r);
    CHECK(paths_of(scan) == std::vector<std::string>{"line\nbreak.md", "ok.md"});
    CHECK(skipped_as(scan, SkipReason::not_utf8) == std::vector<std::string>{"bad\xFFname.md", "caf\xE9"});
    CHECK(skipped_as(scan, SkipReason::hidden) == std::vector<std::string>{".hid\xFF.md"});
    for (const auto& s : scan.skipped)
        if (s.reason == SkipReason::not_utf8) {
            CHECK(s.folder == (s.path == "caf\xE9"));
            CHECK(s.detail == (s.folder ? "its name, byte 0xE9" : "its name, byte 0xFF"));
        }
    CHECK(ragpp::skipped_summary(scan.skipped) == "1 hidden, 2 not UTF-8");
}

TEST_CASE("walk: a link is judged by its own path, and a linked folder by its rules", "[walk][corpus]") {
    ragpp_test::TempDir tmp;
    const auto& r = tmp.path;
    put(r / "real" / "a.md", "a\n");
    put(r / "real" / "b.md", "b\n");
    put(r / "real" / ".gitignore", "b.md\n");
    put(r / ".gitignore", "ignored-link.md\n");
    fs::create_symlink("real/a.md", r / "ignored-link.md");
    fs::create_symlink("real", r / "linked");
    fs::create_symlink("real/a.md", r / ".hidden-link.md");
    const auto scan = ragpp::scan_corpus(r);
    CHECK(paths_of(scan) == std::vector<std::string>{"real/a.md"});
    CHECK(skipped_as(scan, SkipReason::ignored) == std::vector<std::string>{"ignored-link.md", "real/b.md"});
    CHECK(skipped_as(scan, SkipReason::hidden) == std::vector<std::string>{".hidden-link.md"});
}

TEST_CASE("walk: ignore rules agree with git ls-files on generated trees", "[walk][ignore][git]") {
    if (std::system("git --version >/dev/null 2>&1") != 0) {
        std::fprintf(stderr, "SKIPPED: git is not installed (the oracle of this test)\n");
        std::fflush(stderr);
        std::_Exit(4);
    }
    static const char* const pool[] = {
        "*.md",  "!*.md",     "a.md",   "/a.md",     "a/",     "b/",       "/a/b",    "a/**",     "**/c.md",
        "a/**/c.md", "*.tmp", "!keep.tmp", "[ab].md", "[!a]*.txt", "?.txt", "x*",    "!x1.md",   "b",
        "**/b/", "a/*.md",    "*/c.md", "!a/",       "c.md/",  "!b/c.md",  "d[0-9].md", "\\#h.md", "#c.md",
        "",      "a**.md",    "e",      "!e/",       "/c",     "c/**/z.md", "![a-c].md", "**/e/**", "*"};
    static const char* const tree[] = {"a.md",     "b.md",       "c.md",       "x1.md",     "x2.txt",   "k.tmp",
                                       "keep.tmp", "#h.md",      "d1.md",      "dx.md",     "q.txt",    "ab.txt",
                                       "a/a.md",   "a/c.md",     "a/x1.md",    "a/k.tmp",   "a/b/c.md", "a/b/d2.md",
                                       "a/b/e/c.md", "b/a.md",   "b/c.md",     "c/b/z.md",  "c/c.md/in.txt",
                                       "c/e/z.md", "e/f/a.md"};
    const char* const folders[] = {"", "a", "a/b", "c"};
    constexpr int pool_size = static_cast<int>(sizeof(pool) / sizeof(pool[0]));
    ragpp::CorpusOptions options;
    options.hidden = true;  // git lists hidden files (the .gitignore files themselves)
    options.extensions.clear();
    for (unsigned seed = 1; seed <= 60; ++seed) {
        ragpp_test::TempDir tmp;
        const auto& r = tmp.path;
        for (const char* p : tree) put(r / p, "x\n");
        std::mt19937 rng(seed);
        std::string rules_text;
        for (const char* folder : folders) {
            const int n = std::uniform_int_distribution<int>(0, std::string(folder).empty() ? 6 : 3)(rng);
            if (n == 0) continue;
            std::string text;
            for (int i = 0; i < n; ++i) text += std::string(pool[std::uniform_int_distribution<int>(0, pool_size - 1)(rng)]) + "\n";
            put(r / folder / ".gitignore", text);
            rules_text += std::string("[") + folder + "/.gitignore]\n" + text;
        }
        const std::string cmd = "cd '" + r.string() +
                                "' && GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null HOME=/nonexistent git init -q . && "
                                "GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null HOME=/nonexistent "
                                "git ls-files -o --exclude-standard -z";
        FILE* pipe = ::popen(cmd.c_str(), "r");
        REQUIRE(pipe);
        std::string out;
        char buf[4096];
        for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
        REQUIRE(::pclose(pipe) == 0);
        std::set<std::string> git;
        for (std::size_t b = 0; b < out.size();) {
            const auto e = out.find('\0', b);
            git.insert(out.substr(b, e - b));
            b = e + 1;
        }
        const auto scan = ragpp::scan_corpus(r, options);
        const auto listed = paths_of(scan);
        const std::set<std::string> ours(listed.begin(), listed.end());
        INFO("seed " << seed << "\n" << rules_text);
        CHECK(ours == git);
    }
}

// Folder contexts (io/contexts.hpp): which descriptions apply to which file, by hand.
TEST_CASE("contexts: rules parsed, and the descriptions of each path by hand", "[walk][contexts]") {
    const std::string text =
        "# the plant's notes\n"
        "\n"
        "/: the engineering notes of ACME's plant in Lyon\n"
        "contracts/: maintenance contracts of ACME, 2019-2026\n"
        "  contracts/mx200.md :  the MX-200 press line contract  \r\n"
        "**/drafts/\tdrafts, not approved\n"
        "**/*.rst: generated API reference\n"
        "guide: the user guide\n"
        "./contracts/: maintenance contracts of ACME, 2019-2026\n";
    const auto c = FolderContexts::parse(text, "ctx");
    REQUIRE(c.rules().size() == 7);
    CHECK(c.rules()[0].pattern.empty());
    CHECK(c.rules()[0].origin == "ctx:3");
    CHECK(c.rules()[1].pattern == "contracts");
    CHECK(c.rules()[1].folders_only);
    CHECK(c.rules()[2].pattern == "contracts/mx200.md");
    CHECK_FALSE(c.rules()[2].folders_only);
    CHECK(c.rules()[2].text == "the MX-200 press line contract");
    CHECK(c.rules()[3].pattern == "**/drafts");
    CHECK(c.rules()[3].text == "drafts, not approved");
    CHECK(c.rules()[6].origin == "ctx:9");

    using V = std::vector<std::string>;
    const std::string all = "the engineering notes of ACME's plant in Lyon", acme = "maintenance contracts of ACME, 2019-2026";
    // Rule order, each description once (rule 7 repeats rule 2).
    CHECK(c.for_path("contracts/mx200.md") == V{all, acme, "the MX-200 press line contract"});
    CHECK(c.for_path("contracts/old/mx100.md") == V{all, acme});
    CHECK(c.for_path("contracts.md") == V{all});
    // Anchored at the root: a deeper folder named contracts is not "contracts/".
    CHECK(c.for_path("archive/contracts/x.md") == V{all});
    // "**/drafts/": a drafts folder at any depth, never a file named drafts.
    CHECK(c.for_path("drafts/a.md") == V{all, "drafts, not approved"});
    CHECK(c.for_path("guide/drafts/b.md") == V{all, "drafts, not approved", "the user guide"});
    CHECK(c.for_path("notes/drafts") == V{all});
    // A pattern without a trailing '/' matches a file or a folder of that path.
    CHECK(c.for_path("guide") == V{all, "the user guide"});
    CHECK(c.for_path("guide/install.md") == V{all, "the user guide"});
    CHECK(c.for_path("guidebook/x.md") == V{all});
    CHECK(c.for_path("api.rst") == V{all, "generated API reference"});
    CHECK(c.for_path("ref/api/v2.rst") == V{all, "generated API reference"});
    CHECK(c.text_for("contracts/old/mx100.md") == all + "\n" + acme);
    CHECK(FolderContexts::parse("# only a comment\n", "x").for_path("a.md").empty());
    CHECK(FolderContexts::parse("", "x").empty());

    // Equality is of the rules, not of where they were written.
    CHECK(FolderContexts::parse("a/: x\n", "one") == FolderContexts::parse("\n\na/: x", "two"));
    CHECK_FALSE(FolderContexts::parse("a/: x\n", "one") == FolderContexts::parse("a: x", "one"));
}

TEST_CASE("contexts: a line that is not a rule is refused, naming file and line", "[walk][contexts]") {
    auto refused = [](const std::string& text, const std::string& says) {
        try {
            (void)FolderContexts::parse(text, "dir/.ragpp-contexts");
            FAIL("accepted: " << text);
        } catch (const ragpp::InvalidArgument& e) {
            const std::string m = e.what();
            CHECK(m.find(says) != std::string::npos);
            CHECK(m.find("dir/.ragpp-contexts:2") != std::string::npos);
        }
    };
    refused("a/: fine\ncontracts/ maintenance\n", "expected 'PATTERN: description'");
    refused("a/: fine\ncontracts/:\n", "expected 'PATTERN: description'");
    refused("a/: fine\ncontracts/:   \n", "expected 'PATTERN: description'");
    refused("a/: fine\n: text\n", "the pattern is empty");
    refused("a/: fine\n../x/: text\n", "'..' component");
    refused("a/: fine\na/./b: text\n", "'.' component");
    refused("a/: fine\n//x: text\n", "not a path relative to the corpus root");
    refused("a/: fine\nx: " + std::string(ragpp::max_context_bytes + 1, 'w') + "\n", "more than 500");
    refused("a/: fine\nx: a\x01z\n", "control character");
    refused("a/: fine\nx: caf\xc3\n", "not valid UTF-8");
    // At the limit, accepted.
    CHECK(FolderContexts::parse("x: " + std::string(ragpp::max_context_bytes, 'w'), "f").rules().size() == 1);
}
