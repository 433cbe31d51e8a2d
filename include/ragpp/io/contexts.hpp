// ragpp: folder contexts, short descriptions of the files of a corpus that the files do
// not say themselves ("contracts/: maintenance contracts of ACME, 2019-2026"), added
// before each chunk of the files they match, in both indexes, and shown in the evidence
// as the source's context.
//
// A contexts file (a `.ragpp-contexts` file at the corpus root, or one named to
// `ragpp index --contexts FILE`) holds one rule a line:
//
//     # comment
//     /: the engineering notes of ACME's plant in Lyon
//     contracts/: maintenance contracts of ACME, 2019-2026
//     contracts/mx200.md: the MX-200 press line contract
//     **/drafts/: drafts, not approved
//     **/*.rst: generated API reference
//
// - PATTERN, then ": " (a colon and a space, or a tab), then the description (one line,
//   at most max_context_bytes bytes of UTF-8 after trimming). A pattern cannot hold ": ".
// - Patterns are paths relative to the corpus root, always anchored there ("contracts/"
//   is the top folder "contracts", never a folder of that name deeper down; write
//   "**/contracts/" for that). "/" (or ".") is the whole corpus. A trailing '/' matches
//   folders only. gitignore's wildcards: '*' '?' and classes within a path component,
//   "**" across components (io/ignore.hpp, the same matcher).
// - A rule applies to a file when it matches the file's path, or one of the folders
//   holding it.
// - Every rule that applies is used, in the order of the file(s); a description given
//   twice is used once.
// Blank lines and lines starting with '#' are skipped; anything else that is not a rule
// (no ": ", an empty description, a ".." component) is an InvalidArgument naming
// "file:line".
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <ragpp/core/error.hpp>
#include <ragpp/io/detail/ignore.hpp>
#include <ragpp/text/utf8.hpp>

namespace ragpp {

/// The longest description a rule may give, in bytes (a context is a line, not a page).
inline constexpr std::size_t max_context_bytes = 500;

/// The name of the contexts file read at a corpus root.
inline constexpr std::string_view contexts_file_name = ".ragpp-contexts";

/// What a context command answered for each chunk, by content key (the command, the
/// document and the chunk: detail::contexts::chunk_key): kept in the index, so that a
/// re-index asks the command only about chunks it has not seen.
using ContextAnswers = std::map<std::uint64_t, std::string>;

struct ContextRule {
    std::string pattern;        // without a leading "/" or "./" and the trailing '/'; "" is the whole corpus
    bool folders_only = false;  // the pattern ended with '/'
    std::string text;           // the description
    std::string origin;         // "file:line", for messages

    friend bool operator==(const ContextRule& a, const ContextRule& b) {
        return a.pattern == b.pattern && a.folders_only == b.folders_only && a.text == b.text;
    }
};

class FolderContexts {
public:
    /// The rules of `text`, a contexts file named `origin` in messages. InvalidArgument
    /// naming "origin:line" for a line that is not a rule.
    [[nodiscard]] static FolderContexts parse(std::string_view text, std::string_view origin) {
        FolderContexts out;
        std::size_t number = 0;
        for (std::size_t b = 0; b <= text.size();) {
            std::size_t e = text.find('\n', b);
            if (e == std::string_view::npos) e = text.size();
            std::string_view line = trim(text.substr(b, e - b));
            b = e + 1;
            ++number;
            const std::string where = std::string(origin) + ":" + std::to_string(number);
            if (line.empty() || line.front() == '#') continue;
            if (!text::is_valid_utf8(line)) throw InvalidArgument(where + ": not valid UTF-8");
            std::size_t cut = std::string_view::npos, skip = 0;
            for (std::size_t i = 0; i + 1 < line.size(); ++i)
                if (line[i] == '\t' || (line[i] == ':' && (line[i + 1] == ' ' || line[i + 1] == '\t'))) {
                    cut = i, skip = line[i] == '\t' ? 1 : 2;
                    break;
                }
            if (cut == std::string_view::npos)
                throw InvalidArgument(where + ": expected 'PATTERN: description' (a colon and a space after the pattern)");
            ContextRule r;
            r.origin = where;
            std::string_view pattern = trim(line.substr(0, cut));
            r.text = std::string(trim(line.substr(cut + skip)));
            if (r.text.empty()) throw InvalidArgument(where + ": the description is empty");
            if (r.text.size() > max_context_bytes)
                throw InvalidArgument(where + ": the description is " + std::to_string(r.text.size()) +
                                      " bytes, more than " + std::to_string(max_context_bytes) +
                                      ": a context is one short line");
            for (char c : r.text)
                if (static_cast<unsigned char>(c) < 0x20)
                    throw InvalidArgument(where + ": the description holds a control character");
            if (pattern.empty()) throw InvalidArgument(where + ": the pattern is empty (write / for the whole corpus)");
            if (pattern == "." || pattern == "./" || pattern == "/") {
                pattern = {};
                r.folders_only = true;
            } else {
                if (pattern.starts_with("./")) pattern.remove_prefix(2);
                else if (pattern.front() == '/') pattern.remove_prefix(1);
                if (!pattern.empty() && pattern.back() == '/') {
                    r.folders_only = true;
                    pattern.remove_suffix(1);
                }
                if (pattern.empty() || pattern.front() == '/' || pattern.find("//") != std::string_view::npos)
                    throw InvalidArgument(where + ": the pattern '" + std::string(trim(line.substr(0, cut))) +
                                          "' is not a path relative to the corpus root");
                for (std::size_t s = 0; s <= pattern.size();) {
                    std::size_t t = pattern.find('/', s);
                    if (t == std::string_view::npos) t = pattern.size();
                    const auto part = pattern.substr(s, t - s);
                    if (part == ".." || part == ".")
                        throw InvalidArgument(where + ": the pattern '" + std::string(pattern) +
                                              "' has a '" + std::string(part) + "' component; patterns are relative to the corpus root");
                    s = t + 1;
                }
            }
            r.pattern = std::string(pattern);
            out.rules_.push_back(std::move(r));
        }
        return out;
    }

    /// These rules, then `more`'s.
    FolderContexts& append(const FolderContexts& more) {
        rules_.insert(rules_.end(), more.rules_.begin(), more.rules_.end());
        return *this;
    }

    /// Whether `rule` applies to the file `path` (relative to the corpus root, '/'-separated).
    [[nodiscard]] static bool applies(const ContextRule& rule, std::string_view path) noexcept {
        if (rule.pattern.empty()) return true;
        // The folders holding the file, shortest first, then the file itself.
        for (std::size_t slash = path.find('/'); slash != std::string_view::npos; slash = path.find('/', slash + 1))
            if (detail::ignore::wildmatch(rule.pattern, path.substr(0, slash))) return true;
        return !rule.folders_only && detail::ignore::wildmatch(rule.pattern, path);
    }

    /// The descriptions that apply to `path`, in rule order, each once.
    [[nodiscard]] std::vector<std::string> for_path(std::string_view path) const {
        std::vector<std::string> out;
        for (const auto& r : rules_)
            if (applies(r, path) && std::find(out.begin(), out.end(), r.text) == out.end()) out.push_back(r.text);
        return out;
    }

    /// for_path(path) as one text: the descriptions joined by newlines ("" when none).
    [[nodiscard]] std::string text_for(std::string_view path) const {
        std::string s;
        for (const auto& t : for_path(path)) s += (s.empty() ? "" : "\n") + t;
        return s;
    }

    [[nodiscard]] const std::vector<ContextRule>& rules() const noexcept { return rules_; }
    [[nodiscard]] bool empty() const noexcept { return rules_.empty(); }
    void add(ContextRule r) { rules_.push_back(std::move(r)); }

    friend bool operator==(const FolderContexts& a, const FolderContexts& b) { return a.rules_ == b.rules_; }

private:
    static std::string_view trim(std::string_view s) noexcept {
        while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
        while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
        return s;
    }

    std::vector<ContextRule> rules_;
};

}  // namespace ragpp
