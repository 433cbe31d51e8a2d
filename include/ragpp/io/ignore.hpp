// ragpp: ignore files (.gitignore, .ignore, .ragppignore) as the corpus walk reads them.
//
// IgnoreFile::parse(text, base) reads one ignore file found in the folder `base` (a path
// relative to the corpus root with '/', "" for the root), in gitignore's syntax:
//   - a blank line matches nothing; a line starting with '#' is a comment ("\#" for a
//     literal '#'); trailing spaces are dropped unless escaped ("\ ");
//   - '!' negates: a path an earlier rule ignored is included again ("\!" for a literal
//     '!'); a path below an ignored folder cannot be included again, since the walk
//     never enters that folder;
//   - a trailing '/' matches folders only;
//   - a pattern with a '/' at its start or in its middle is anchored: it matches the path
//     relative to `base` ("/todo.md" is base's todo.md only, "doc/*.md" is base/doc's);
//     a pattern without one matches the name at any depth below `base` ("*.tmp");
//   - '*' matches anything but '/', '?' one character but '/', "[a-z]" "[!0-9]" "[^x]"
//     "[[:digit:]]" one character of a class (never '/'); "**/" at the start matches any
//     folders ("**/drafts"), "/**/" in the middle zero or more folders ("a/**/b"), "/**"
//     at the end everything inside ("tmp/**"); elsewhere "**" is '*'; '\' escapes.
// Matching is case-sensitive (git's default on Linux).
//
// IgnoreStack is what the walk holds while it descends: the ignore files of the folders
// from the root down to the current one, in that order, each folder's own files in the
// order .gitignore, .ignore, .ragppignore. decide(path, is_folder) applies the last rule
// that matches, so a deeper folder's rule beats its parents', .ragppignore beats .ignore
// beats .gitignore, and a later line of a file beats an earlier one.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ragpp/io/detail/ignore.hpp>

namespace ragpp {

/// The ignore files the corpus walk reads in each folder, from the weakest to the strongest.
inline constexpr std::string_view ignore_file_names[] = {".gitignore", ".ignore", ".ragppignore"};

/// What the ignore rules say about a path.
enum class IgnoreDecision { none, ignored, included };

/// The rules of one ignore file.
class IgnoreFile {
public:
    struct Rule {
        std::string pattern;      // without '!', trailing '/' and a leading '/'
        bool negated = false;     // "!pattern"
        bool folders_only = false;  // "pattern/"
        bool anchored = false;    // a '/' at the start or in the middle: matched against the relative path
        std::size_t line = 0;     // 1-based, in the file
    };

    /// The rules of `text`, an ignore file in folder `base` (relative to the corpus root,
    /// '/'-separated, "" for the root).
    [[nodiscard]] static IgnoreFile parse(std::string_view text, std::string base = "") {
        IgnoreFile f;
        f.base_ = std::move(base);
        std::size_t line = 0;
        for (std::size_t b = 0; b <= text.size();) {
            std::size_t e = text.find('\n', b);
            if (e == std::string_view::npos) e = text.size();
            std::string_view l = text.substr(b, e - b);
            b = e + 1;
            ++line;
            if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
            // Trailing spaces go, unless the last one is escaped.
            while (!l.empty() && l.back() == ' ' && !(l.size() >= 2 && l[l.size() - 2] == '\\')) l.remove_suffix(1);
            if (l.empty() || l.front() == '#') continue;
            Rule r;
            r.line = line;
            if (l.front() == '!') {
                r.negated = true;
                l.remove_prefix(1);
            }
            if (!l.empty() && l.back() == '/' && !(l.size() >= 2 && l[l.size() - 2] == '\\')) {
                r.folders_only = true;
                l.remove_suffix(1);
            }
            r.anchored = l.find('/') != std::string_view::npos;
            if (!l.empty() && l.front() == '/') l.remove_prefix(1);
            if (l.empty()) continue;
            r.pattern = std::string(l);
            f.rules_.push_back(std::move(r));
        }
        return f;
    }

    /// The last rule of this file matching `path` (relative to the corpus root), a folder
    /// when `is_folder`: ignored, included (a negated rule), or none (no rule matches, or
    /// `path` is not below this file's folder).
    [[nodiscard]] IgnoreDecision decide(std::string_view path, bool is_folder) const {
        if (!base_.empty()) {
            if (path.size() <= base_.size() || !path.starts_with(base_) || path[base_.size()] != '/')
                return IgnoreDecision::none;
            path.remove_prefix(base_.size() + 1);
        }
        const auto slash = path.rfind('/');
        const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
        for (auto it = rules_.rbegin(); it != rules_.rend(); ++it) {
            if (it->folders_only && !is_folder) continue;
            if (detail::ignore::wildmatch(it->pattern, it->anchored ? path : name))
                return it->negated ? IgnoreDecision::included : IgnoreDecision::ignored;
        }
        return IgnoreDecision::none;
    }

    [[nodiscard]] const std::vector<Rule>& rules() const noexcept { return rules_; }
    [[nodiscard]] const std::string& base() const noexcept { return base_; }

private:
    std::string base_;
    std::vector<Rule> rules_;
};

/// The ignore files in force in a folder of the walk: its ancestors' and its own, root first.
class IgnoreStack {
public:
    /// Adds a file read deeper than (or beside, and stronger than) the ones held.
    void push(IgnoreFile file) { files_.push_back(std::make_shared<const IgnoreFile>(std::move(file))); }

    /// Whether `path` (relative to the corpus root) is ignored: the last matching rule
    /// of the strongest file that has one decides; no rule: not ignored.
    [[nodiscard]] bool ignored(std::string_view path, bool is_folder) const {
        for (auto it = files_.rbegin(); it != files_.rend(); ++it) {
            const IgnoreDecision d = (*it)->decide(path, is_folder);
            if (d != IgnoreDecision::none) return d == IgnoreDecision::ignored;
        }
        return false;
    }

    [[nodiscard]] bool empty() const noexcept { return files_.empty(); }

private:
    std::vector<std::shared_ptr<const IgnoreFile>> files_;  // shared: a walk copies the stack per folder
};

}  // namespace ragpp
