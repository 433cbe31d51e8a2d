// The ragpp tool's plumbing: a registry of subcommands and a small declarative
// argument parser that also writes each subcommand's --help.
//
// A subcommand lives in tools/ragpp/cmd_<name>.cpp and registers itself:
//
//   static int run_analyze(cli::ArgParser& args) { ... return 0; }
//   static const cli::Register reg{{"analyze", "print the terms of a text",
//       [](cli::ArgParser& p) { p.option("analyzer", "NAME", "...", "standard")
//                                .positional("TEXT", "...", cli::many); },
//       run_analyze}};
//
// Errors: throw cli::UsageError for bad arguments (exit 2, usage hint on stderr) or
// let a ragpp::Error through (exit 1, its message on stderr).
#pragma once

#include <ragpp/core/error.hpp>

#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cli {

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

enum Arity { one, many, optional_one, optional_many };

class ArgParser {
public:
    ArgParser(std::string command, std::string summary) : command_(std::move(command)), summary_(std::move(summary)) {}

    /// A boolean switch --name.
    ArgParser& flag(const std::string& name, const std::string& help);
    /// An option --name VALUE (or --name=VALUE), with an optional default.
    ArgParser& option(const std::string& name, const std::string& metavar, const std::string& help,
                      std::optional<std::string> default_value = std::nullopt);
    /// A repeatable option --name VALUE ...
    ArgParser& repeated(const std::string& name, const std::string& metavar, const std::string& help);
    /// A positional argument (declare them in order; only the last may be many/optional_many).
    ArgParser& positional(const std::string& name, const std::string& help, Arity arity = one);
    /// Free text printed after the options in --help.
    ArgParser& epilog(const std::string& text) {
        epilog_ = text;
        return *this;
    }

    /// Parses; returns false when --help was asked (the help is printed on stdout).
    /// Throws UsageError on an unknown option, a missing value or positional.
    bool parse(const std::vector<std::string>& args);

    [[nodiscard]] bool has(const std::string& name) const;                      // flag set, or option given/defaulted
    [[nodiscard]] bool given(const std::string& name) const;                    // on the command line (not a default)
    [[nodiscard]] std::string get(const std::string& name) const;               // option or single positional
    [[nodiscard]] std::vector<std::string> all(const std::string& name) const;  // repeated option or many positional
    /// The option parsed as a finite number / a non-negative integer, within the range
    /// main.cpp's table gives for its name (counts without an entry: [0, 1e9]); UsageError
    /// naming the option otherwise (not a number, negative, NaN, 1e999, overflow).
    [[nodiscard]] double number(const std::string& name) const;
    [[nodiscard]] std::size_t count(const std::string& name) const;
    /// "[1, 100000]": the range of a numeric option, when the table has one.
    [[nodiscard]] static std::optional<std::string> range(const std::string& name);
    [[nodiscard]] std::string help() const;
    [[nodiscard]] const std::string& command() const { return command_; }

private:
    struct Spec {
        std::string name, metavar, help;
        bool is_flag = false, is_repeated = false;
        std::optional<std::string> default_value;
    };
    struct Pos {
        std::string name, help;
        Arity arity;
    };
    const Spec* find(const std::string& name) const;
    std::string command_, summary_, epilog_;
    std::vector<Spec> options_;
    std::vector<Pos> positionals_;
    std::map<std::string, std::vector<std::string>> values_;
};

struct Command {
    std::string name;
    std::string summary;
    std::function<void(ArgParser&)> declare;
    std::function<int(ArgParser&)> run;
};

std::vector<Command>& registry();

struct Register {
    explicit Register(Command c) { registry().push_back(std::move(c)); }
};

/// The one reader of numbers on the command line (ArgParser::number, number_list): `text`
/// as a decimal number, [+-]digits[.digits][e[+-]digits] (".5" and "5." too), or nullopt
/// (hex such as "0x10", "inf", "nan", spaces, an empty text). Too large a magnitude, or
/// too small to be represented but not 0, gives infinity (the callers' "out of range").
std::optional<double> decimal(std::string_view text);
/// `v` read as the value of count option --`name` (ArgParser::count: decimal digits,
/// within the option's range); UsageError naming the option otherwise. For the items of
/// a list of counts (eval --k 1,3,5).
std::size_t count_value(const std::string& name, const std::string& v);
/// The comma-separated list `text` of exactly `n` decimal numbers >= 0 (--weights,
/// --field-weights, hybrid:W1,W2); UsageError naming `option` otherwise, an empty text or
/// an empty item included (`what` says what the numbers are).
std::vector<double> number_list(const std::string& text, const std::string& option, std::size_t n,
                                const std::string& what);

/// `text` with what could forge or hide output escaped, for a path, an id, a title or a
/// heading printed as text: C0 controls and DEL (\n, \r, \t, \xHH), C1 controls,
/// U+2028/U+2029 and the bidirectional controls (\u{HHHH}), and each byte that is not
/// part of valid UTF-8 (\xHH). A backslash is left as it is. JSON output needs none of
/// this (use dump_json).
std::string printable(std::string_view text);
/// `j` as JSON text (indented by `indent` when >= 0); a stored string that is not valid
/// UTF-8 (an index of an older ragpp) has each bad byte replaced by U+FFFD instead of
/// failing the whole output.
std::string dump_json(const nlohmann::json& j, int indent = -1);

/// True when stderr is a terminal (progress bars only then).
bool stderr_is_terminal();

/// Runs `f`, which only interprets option values (a name, an expression): a
/// ragpp::Error it throws is the user's bad value, so a UsageError (exit 2).
template <class F>
decltype(auto) usage_of(F&& f) {
    try {
        return std::forward<F>(f)();
    } catch (const ragpp::Error& e) {
        throw UsageError(e.what());
    }
}

/// Throws UsageError unless `spec` names a kind of embedder the tool knows (hashing,
/// hashing:DIM, model2vec:DIR, vectors:FILE, transformer:DIR), before any work is done.
void check_embedder_spec(const std::string& spec);

}  // namespace cli
