// ragpp: the command-line tool. See `ragpp --help` and docs/cli.md.
#include "cli.hpp"

#include <ragpp/core/error.hpp>
#include <ragpp/detail/json_dump.hpp>
#include <ragpp/text/utf8_decode.hpp>
#include <ragpp/version.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iomanip>
#include <limits>
#include <map>
#include <new>
#include <iostream>
#include <sstream>

#include <csignal>
#include <unistd.h>

namespace cli {

std::vector<Command>& registry() {
    static std::vector<Command> commands;
    return commands;
}

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

ArgParser& ArgParser::flag(const std::string& name, const std::string& help) {
    options_.push_back({name, "", help, true, false, std::nullopt});
    return *this;
}
ArgParser& ArgParser::option(const std::string& name, const std::string& metavar, const std::string& help,
                             std::optional<std::string> default_value) {
    options_.push_back({name, metavar, help, false, false, std::move(default_value)});
    return *this;
}
ArgParser& ArgParser::repeated(const std::string& name, const std::string& metavar, const std::string& help) {
    options_.push_back({name, metavar, help, false, true, std::nullopt});
    return *this;
}
ArgParser& ArgParser::positional(const std::string& name, const std::string& help, Arity arity) {
    positionals_.push_back({name, help, arity});
    return *this;
}

const ArgParser::Spec* ArgParser::find(const std::string& name) const {
    for (const auto& s : options_)
        if (s.name == name) return &s;
    return nullptr;
}

bool ArgParser::parse(const std::vector<std::string>& args) {
    std::vector<std::string> free;
    bool only_positionals = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (only_positionals || a.size() < 2 || a[0] != '-' || a == "-") {
            free.push_back(a);
            continue;
        }
        if (a == "--") {
            only_positionals = true;
            continue;
        }
        if (a == "--help" || a == "-h") {
            std::cout << help();
            return false;
        }
        if (a.rfind("--", 0) != 0) throw UsageError("unknown option '" + a + "'");
        std::string name = a.substr(2), value;
        bool inline_value = false;
        if (auto eq = name.find('='); eq != std::string::npos) {
            value = name.substr(eq + 1);
            name = name.substr(0, eq);
            inline_value = true;
        }
        const Spec* spec = find(name);
        if (!spec) throw UsageError("unknown option '--" + name + "'");
        if (spec->is_flag) {
            if (inline_value) throw UsageError("option '--" + name + "' takes no value");
            values_[name].push_back("1");
            continue;
        }
        if (!inline_value) {
            if (i + 1 >= args.size()) throw UsageError("option '--" + name + "' needs a value (" + spec->metavar + ")");
            value = args[++i];
        }
        auto& slot = values_[name];
        if (!spec->is_repeated && !slot.empty()) throw UsageError("option '--" + name + "' given twice");
        slot.push_back(value);
    }
    std::size_t next = 0;
    for (const auto& p : positionals_) {
        auto& slot = values_[p.name];
        if (p.arity == one || p.arity == optional_one) {
            if (next < free.size()) slot.push_back(free[next++]);
            else if (p.arity == one) throw UsageError("missing argument " + p.name);
        } else {
            while (next < free.size()) slot.push_back(free[next++]);
            if (slot.empty() && p.arity == many) throw UsageError("missing argument " + p.name);
        }
    }
    if (next < free.size()) throw UsageError("unexpected argument '" + free[next] + "'");
    return true;
}

bool ArgParser::has(const std::string& name) const {
    auto it = values_.find(name);
    if (it != values_.end() && !it->second.empty()) return true;
    const Spec* s = find(name);
    return s && s->default_value.has_value();
}

bool ArgParser::given(const std::string& name) const {
    auto it = values_.find(name);
    return it != values_.end() && !it->second.empty();
}

std::string ArgParser::get(const std::string& name) const {
    auto it = values_.find(name);
    if (it != values_.end() && !it->second.empty()) return it->second.front();
    if (const Spec* s = find(name); s && s->default_value) return *s->default_value;
    throw UsageError("missing " + (find(name) ? "option --" + name : "argument " + name));
}

std::vector<std::string> ArgParser::all(const std::string& name) const {
    auto it = values_.find(name);
    if (it != values_.end()) return it->second;
    return {};
}

namespace {

/// The accepted range of every numeric option, by name (one name means one thing in
/// every subcommand). An option missing here is still bounded: counts by
/// default_count_limit, numbers by finiteness.
struct Limit {
    double min, max;
    bool min_open = false;  // min itself excluded
};
constexpr Limit default_count_limit{0, 1e9};
const std::map<std::string, Limit>& option_limits() {
    static const std::map<std::string, Limit> limits{
        // counts
        {"k", {1, 100000}},
        {"passages", {1, 100000}},
        {"candidates", {1, 1000000}},
        {"per-source", {0, 1000000}},
        {"rerank-candidates", {1, 100000}},
        {"threads", {0, 1024}},
        {"budget", {1, 100000000}},
        {"neighbours", {0, 1000}},
        {"max-neighbours", {0, 100000}},
        {"max-tokens", {1, 1000000}},
        {"overlap", {0, 1000000}},
        // numbers
        {"k1", {0, 1000}},
        {"b", {0, 1}},
        {"delta", {0, 1000}},
        {"rrf-k", {0, 1e9}},
        {"rerank-weight", {0, 1e6}},
        {"min-confidence", {0, 1}},
        {"relative-floor", {0, 1}},
        {"target-precision", {0, 1, true}},
        {"context-timeout", {0, 86400, true}},
        {"watch-interval", {0.05, 3600}},
    };
    return limits;
}

std::string format_bound(double v) {
    std::ostringstream o;
    o << std::setprecision(12) << v;
    return o.str();
}

std::string range_text(const Limit& l) {
    return std::string(l.min_open ? "(" : "[") + format_bound(l.min) + ", " + format_bound(l.max) + "]";
}

}  // namespace

std::optional<std::string> ArgParser::range(const std::string& name) {
    const auto& limits = option_limits();
    if (auto it = limits.find(name); it != limits.end()) return range_text(it->second);
    return std::nullopt;
}

std::optional<double> decimal(std::string_view text) {
    // [+-]? digits [. digits?] | [+-]? . digits, then [eE][+-]? digits: strtod alone also
    // reads hex ("0x10"), "inf", "nan" and leading spaces.
    std::size_t i = 0, digits = 0;
    const auto is_digit = [&](std::size_t at) { return at < text.size() && text[at] >= '0' && text[at] <= '9'; };
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    for (; is_digit(i); ++i) ++digits;
    if (i < text.size() && text[i] == '.')
        for (++i; is_digit(i); ++i) ++digits;
    if (digits == 0) return std::nullopt;
    if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
        ++i;
        if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
        if (!is_digit(i)) return std::nullopt;
        while (is_digit(i)) ++i;
    }
    if (i != text.size()) return std::nullopt;
    const std::string copy(text);
    errno = 0;
    const double d = std::strtod(copy.c_str(), nullptr);
    if (errno == ERANGE && std::isfinite(d) && d != 0) return d;  // a subnormal: representable
    return errno == ERANGE ? std::numeric_limits<double>::infinity() : d;
}

std::string printable(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    const auto escape = [&](const char* prefix, unsigned v, int digits, const char* suffix) {
        static constexpr char h[] = "0123456789abcdef";
        out += prefix;
        for (int d = digits - 1; d >= 0; --d) out += h[(v >> (4 * d)) & 0xFu];
        out += suffix;
    };
    for (std::size_t i = 0; i < text.size();) {
        const auto b = static_cast<unsigned char>(text[i]);
        if (b >= 0x20 && b < 0x7f) {
            out += static_cast<char>(b);
            ++i;
            continue;
        }
        if (b < 0x80) {  // C0 and DEL
            if (b == '\n') out += "\\n";
            else if (b == '\r') out += "\\r";
            else if (b == '\t') out += "\\t";
            else escape("\\x", b, 2, "");
            ++i;
            continue;
        }
        const auto c = ragpp::text::decode_utf8(text, i);
        if (!c.valid) {
            for (std::uint32_t k = 0; k < c.length; ++k) escape("\\x", static_cast<unsigned char>(text[i + k]), 2, "");
        } else if ((c.code_point >= 0x80 && c.code_point < 0xA0) || c.code_point == 0x2028 || c.code_point == 0x2029 ||
                   (c.code_point >= 0x202A && c.code_point <= 0x202E) || (c.code_point >= 0x2066 && c.code_point <= 0x2069) ||
                   c.code_point == 0x200E || c.code_point == 0x200F || c.code_point == 0x061C) {
            escape("\\u{", static_cast<unsigned>(c.code_point), 4, "}");
        } else {
            out.append(text.substr(i, c.length));
        }
        i += c.length;
    }
    return out;
}

std::string dump_json(const nlohmann::json& j, int indent) { return ragpp::detail::dump_json(j, indent); }

std::vector<double> number_list(const std::string& text, const std::string& option, std::size_t n,
                                const std::string& what) {
    std::vector<double> out;
    std::size_t b = 0;
    while (b <= text.size()) {
        std::size_t e = text.find(',', b);
        if (e == std::string::npos) e = text.size();
        const std::string item = text.substr(b, e - b);
        const auto v = decimal(item);
        if (!v || !(*v >= 0) || !std::isfinite(*v))
            throw UsageError(option + ": '" + item + "' is not a number >= 0 (in '" + text + "')");
        out.push_back(*v);
        b = e + 1;
    }
    if (out.size() != n) {
        static const char* const words[] = {"no", "one", "two", "three"};
        throw UsageError(option + " needs " + (n < 4 ? std::string(words[n]) : std::to_string(n)) + " numbers: " + what);
    }
    return out;
}

double ArgParser::number(const std::string& name) const {
    const std::string v = get(name);
    const auto parsed = decimal(v);
    if (!parsed) throw UsageError("--" + name + ": '" + v + "' is not a number");
    const double d = *parsed;
    const auto& limits = option_limits();
    const auto it = limits.find(name);
    if (!std::isfinite(d) ||
        (it != limits.end() && (d < it->second.min || d > it->second.max || (it->second.min_open && d == it->second.min))))
        throw UsageError("--" + name + ": " + v + " is out of range" +
                         (it != limits.end() ? " " + range_text(it->second) : std::string(" (not a finite number)")));
    return d;
}

std::size_t ArgParser::count(const std::string& name) const { return count_value(name, get(name)); }

std::size_t count_value(const std::string& name, const std::string& v) {
    const auto& limits = option_limits();
    const auto it = limits.find(name);
    const Limit limit = it != limits.end() ? it->second : default_count_limit;
    const bool negative = !v.empty() && v[0] == '-';
    const std::string digits = negative ? v.substr(1) : v;
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos)
        throw UsageError("--" + name + ": '" + v + "' is not an integer");
    // Compared as text first: no conversion can overflow.
    const auto first = digits.find_first_not_of('0');
    const std::string significant = first == std::string::npos ? "0" : digits.substr(first);
    const bool zero = significant == "0";
    if ((negative && !zero) || significant.size() > 15 ||
        static_cast<double>(std::stoull(significant)) < limit.min ||
        static_cast<double>(std::stoull(significant)) > limit.max)
        throw UsageError("--" + name + ": " + v + " is out of range " + range_text(limit));
    return static_cast<std::size_t>(std::stoull(significant));
}

std::string ArgParser::help() const {
    std::ostringstream o;
    o << "usage: ragpp " << command_;
    if (!options_.empty()) o << " [options]";
    for (const auto& p : positionals_) {
        switch (p.arity) {
            case one: o << ' ' << p.name; break;
            case many: o << ' ' << p.name << "..."; break;
            case optional_one: o << " [" << p.name << ']'; break;
            case optional_many: o << " [" << p.name << "...]"; break;
        }
    }
    o << "\n\n" << summary_ << "\n";
    if (!positionals_.empty()) {
        o << "\narguments:\n";
        for (const auto& p : positionals_) o << "  " << p.name << "\n      " << p.help << "\n";
    }
    o << "\noptions:\n";
    for (const auto& s : options_) {
        o << "  --" << s.name;
        if (!s.is_flag) o << ' ' << s.metavar;
        o << "\n      " << s.help;
        if (s.is_repeated) o << " (repeatable)";
        if (s.default_value && !s.default_value->empty()) o << " [default: " << *s.default_value << "]";
        if (!s.is_flag)
            if (auto r = range(s.name)) o << " (range " << *r << ")";
        o << "\n";
    }
    o << "  --help\n      print this help and exit\n";
    if (!epilog_.empty()) o << "\n" << epilog_ << "\n";
    return o.str();
}

}  // namespace cli

namespace {

void print_usage(std::ostream& o) {
    auto commands = cli::registry();
    std::sort(commands.begin(), commands.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    o << "usage: ragpp COMMAND [options] [arguments]\n\n"
         "ragpp finds the passages a language model should read, shows why, and measures it.\n\n"
         "commands:\n";
    for (const auto& c : commands) {
        o << "  " << c.name;
        for (std::size_t i = c.name.size(); i < 10; ++i) o << ' ';
        o << c.summary << "\n";
    }
    o << "\n`ragpp COMMAND --help` describes a command. `ragpp --version` prints the version.\n";
}

}  // namespace

int main(int argc, char** argv) {
    // A write past RLIMIT_FSIZE (ulimit -f) must fail with EFBIG, reported as an IoError
    // naming the file (the previous generation kept), not kill the tool with SIGXFSZ.
    std::signal(SIGXFSZ, SIG_IGN);
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) {
        print_usage(std::cerr);
        return 2;
    }
    if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        print_usage(std::cout);
        return 0;
    }
    if (args[0] == "--version") {
        std::cout << "ragpp " << ragpp::version_string << "\n";
        return 0;
    }
    const auto& commands = cli::registry();
    auto it = std::find_if(commands.begin(), commands.end(), [&](const auto& c) { return c.name == args[0]; });
    if (it == commands.end()) {
        std::cerr << "ragpp: unknown command '" << cli::printable(args[0]) << "' (see ragpp --help)\n";
        return 2;
    }
    cli::ArgParser parser(it->name, it->summary);
    try {
        it->declare(parser);
        if (!parser.parse(std::vector<std::string>(args.begin() + 1, args.end()))) return 0;
        return it->run(parser);
    } catch (const cli::UsageError& e) {
        std::cerr << "ragpp " << it->name << ": " << cli::printable(e.what()) << " (see ragpp " << it->name << " --help)\n";
        return 2;
    } catch (const ragpp::Error& e) {
        // Messages name files and quote values: escaped, so a name cannot forge a line.
        std::cerr << "ragpp " << it->name << ": " << cli::printable(e.what()) << "\n";
        return 1;
    } catch (const std::filesystem::filesystem_error& e) {
        // Not expected (the library names its files in ragpp::IoError), but never a crash.
        std::cerr << "ragpp " << it->name << ": file system error on '" << cli::printable(e.path1().string()) << "'"
                  << (e.path2().empty() ? std::string() : " and '" + cli::printable(e.path2().string()) + "'") << ": "
                  << e.code().message() << "\n";
        return 1;
    } catch (const std::bad_alloc&) {
        std::cerr << "ragpp " << it->name << ": out of memory (the input or an option asks for more memory than "
                  << "this machine has)\n";
        return 1;
    } catch (const nlohmann::json::exception& e) {
        std::cerr << "ragpp " << it->name << ": JSON error: " << cli::printable(e.what()) << "\n";
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "ragpp " << it->name << ": error: " << cli::printable(e.what()) << "\n";
        return 1;
    } catch (...) {
        std::cerr << "ragpp " << it->name << ": unknown error\n";
        return 1;
    }
}
