// Property tests of the chunkers over generated Markdown, reStructuredText and plain
// text. The generator knows what it wrote (which lines are content, which heading
// each line sits under); the properties compare the chunks with that knowledge:
//  - no text lost: every word of every content line lies in some chunk's raw span;
//  - spans are right: raw == normalized source [begin, end), first_line and last_line
//    are the lines of its first and last byte;
//  - no chunk splits a word or a UTF-8 sequence: a span starts and ends next to
//    whitespace (or the text's ends);
//  - sizes: at most max_tokens tokens per raw span (markup lines not counted); consecutive parts of a section
//    share at most `overlap` tokens and each ends later than the previous one;
//  - places: each chunk's section id and heading path are the generator's;
//  - tables: a part starting inside a table body repeats the header row in its text.
#include <ragpp/chunk/chunker.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <random>
#include <string>
#include <vector>

using ragpp::Chunk;
using ragpp::ChunkOptions;
using ragpp::Document;

namespace {

enum class Format { markdown, rst, text };

struct Generated {
    std::vector<std::string> lines;
    std::vector<bool> content;                          // must appear in a chunk
    std::vector<std::vector<std::string>> heading_path;  // for content lines
    std::vector<std::size_t> section_line;              // 1-based id line, for content lines
    std::vector<std::size_t> table_header;              // 1-based header line of a table body row, else 0
};

class Generator {
public:
    Generator(unsigned seed, Format f) : rng_(seed), format_(f) {}

    Generated make() {
        if (format_ == Format::markdown && coin(0.3)) front_matter();
        const int blocks = between(1, 25);
        for (int b = 0; b < blocks; ++b) {
            const int r = between(0, 99);
            if (format_ != Format::text && r < 22) heading();
            else if (format_ == Format::markdown && r < 30) fence();
            else if (format_ == Format::markdown && r < 36) table();
            else if (format_ != Format::text && r < 40) rule();
            else if (format_ == Format::rst && r < 46) literal();
            else paragraph();
            blank();
        }
        return g_;
    }

private:
    int between(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
    bool coin(double p) { return std::bernoulli_distribution(p)(rng_); }

    std::string word() {
        static const char* const vocab[] = {"alpha", "beta", "café", "日本語", "naïve", "x1", "Ünïcödé", "e.g.",
                                            "tax", "4,5", "5%", "MX-200", "ORA-01555", "😀", "l'été", "a|b",
                                            "résumé", "word", "C++", "x#y"};
        std::string w = vocab[between(0, 19)];
        if (coin(0.12)) w += '.';
        return w;
    }
    std::string words(int lo, int hi) {
        std::string s;
        const int n = between(lo, hi);
        for (int i = 0; i < n; ++i) {
            if (i > 0) s += coin(0.1) ? "\t" : coin(0.1) ? "  " : " ";
            s += word();
        }
        return s;
    }

    void push(std::string line, bool content, std::size_t table_header = 0) {
        g_.lines.push_back(std::move(line));
        g_.content.push_back(content);
        g_.heading_path.push_back(content ? path() : std::vector<std::string>{});
        if (content && !has_heading_ && preamble_line_ == 0) preamble_line_ = g_.lines.size();
        g_.section_line.push_back(content ? (has_heading_ ? heading_line_ : preamble_line_) : 0);
        g_.table_header.push_back(table_header);
    }
    void blank() {
        const int n = between(1, 2);
        for (int i = 0; i < n; ++i) push(coin(0.2) ? " \t" : "", false);
    }
    std::vector<std::string> path() const {
        std::vector<std::string> p;
        for (const auto& [level, text] : stack_) p.push_back(text);
        return p;
    }

    void front_matter() {
        push("---", false);
        push("title: " + words(1, 3), false);
        push("groups: [a, b]", false);
        push("---", false);
    }

    void heading() {
        const int level = between(1, std::min(max_level_ + 1, 4));
        max_level_ = std::max(max_level_, level);
        std::string text = "H" + std::to_string(between(0, 99)) + " " + words(1, 3);  // never a lone punctuation word
        while (!stack_.empty() && stack_.back().first >= level) stack_.pop_back();
        stack_.emplace_back(level, text);
        has_heading_ = true;
        if (format_ == Format::markdown) {
            if (level <= 2 && coin(0.4)) {  // setext
                heading_line_ = g_.lines.size() + 1;
                push(text, false);
                push(std::string(static_cast<std::size_t>(between(1, 12)), level == 1 ? '=' : '-'), false);
            } else {
                std::string line = std::string(static_cast<std::size_t>(between(0, 3)), ' ') +
                                   std::string(static_cast<std::size_t>(level), '#') + (coin(0.3) ? "\t" : " ") + text;
                if (coin(0.3)) line += " ##";
                heading_line_ = g_.lines.size() + 1;
                push(line, false);
            }
        } else {  // rst: styles by level, first appearance in level order
            static const char styles[] = {'=', '-', '~', '^'};
            const char c = styles[level - 1];
            const bool over = level == 1;
            const std::size_t width = ragpp::detail::rst::width(text);
            const std::string adorn(width + static_cast<std::size_t>(between(0, 3)), c);
            if (over) push(adorn, false);
            heading_line_ = g_.lines.size() + 1;
            push(text, false);
            push(adorn, false);
            blank();
        }
        if (coin(0.3)) blank();  // sometimes a heading with nothing under it follows
    }

    void paragraph() {
        const int n = between(1, 6);
        for (int i = 0; i < n; ++i) push(words(1, 14) + (coin(0.3) ? "." : "") + (coin(0.1) ? "  " : ""), true);
    }

    void fence() {
        const bool tilde = coin(0.5);
        const std::string f = tilde ? "~~~" : "```";
        push(f + (coin(0.5) ? "bash" : ""), true);
        const int n = between(0, 6);
        for (int i = 0; i < n; ++i) {
            const int r = between(0, 3);
            push(r == 0 ? "# not a heading " + words(1, 3) : r == 1 ? "" : "    " + words(1, 5), r != 1);
            if (r == 1) g_.content.back() = false;
        }
        push(f, true);
    }

    void table() {
        const std::size_t header = g_.lines.size() + 1;
        push("| head" + std::to_string(between(0, 9)) + " | h2 |", true);
        push("|---|:--:|", true);
        const int n = between(1, 12);
        for (int i = 0; i < n; ++i) push("| " + words(1, 3) + " | " + std::to_string(i) + " |", true, header);
    }

    void rule() { push(format_ == Format::markdown ? "***" : "--------", false); }

    void literal() {
        push(words(1, 5) + " ::", true);
        push("", false);
        const int n = between(1, 5);
        for (int i = 0; i < n; ++i) push("    " + words(1, 6), true);
    }

    std::mt19937 rng_;
    Format format_;
    Generated g_;
    std::vector<std::pair<int, std::string>> stack_;
    int max_level_ = 0;
    bool has_heading_ = false;
    std::size_t heading_line_ = 0, preamble_line_ = 0;
};

bool space(char c) { return c == ' ' || c == '\t' || c == '\n'; }

std::size_t tokens(std::string_view s) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < s.size();) {
        while (i < s.size() && space(s[i])) ++i;
        if (i < s.size()) ++n;
        while (i < s.size() && !space(s[i])) ++i;
    }
    return n;
}

std::string trimmed(const std::string& s) {
    std::size_t b = 0, e = s.size();
    while (b < e && space(s[b])) ++b;
    while (e > b && space(s[e - 1])) --e;
    return s.substr(b, e - b);
}

void check_properties(Format format, unsigned seed, const ChunkOptions& options) {
    const Generated g = Generator(seed, format).make();
    std::string text, normalized;
    const bool crlf = seed % 3 == 0, bom = seed % 5 == 0;
    if (bom) text = "\xEF\xBB\xBF";
    for (const auto& l : g.lines) {
        text += l + (crlf ? "\r\n" : "\n");
        normalized += l + "\n";
    }
    const char* ext = format == Format::markdown ? ".md" : format == Format::rst ? ".rst" : ".txt";
    const std::string path = "gen/" + std::to_string(seed) + ext;
    const auto chunks = ragpp::chunk_document(Document{path, text, {}}, options);
    INFO("seed " << seed << "\n" << normalized);

    std::vector<std::size_t> line_start{0};
    for (std::size_t i = 0; i < normalized.size(); ++i)
        if (normalized[i] == '\n') line_start.push_back(i + 1);
    auto line_of = [&](std::size_t offset) {
        return static_cast<std::size_t>(std::upper_bound(line_start.begin(), line_start.end(), offset) -
                                        line_start.begin());
    };

    // Tokens of [b, e) on content lines (markup lines inside a span, such as a rule,
    // are not counted).
    auto content_tokens = [&](std::size_t b, std::size_t e) {
        std::size_t n = 0;
        for (std::size_t ln = line_of(b) - 1; ln < g.lines.size() && line_start[ln] < e; ++ln) {
            if (!g.content[ln]) continue;
            const std::size_t lb = std::max(b, line_start[ln]), le = std::min(e, line_start[ln] + g.lines[ln].size());
            if (lb < le) n += tokens(std::string_view(normalized).substr(lb, le - lb));
        }
        return n;
    };
    for (std::size_t i = 0; i < chunks.size(); ++i) {
        const Chunk& c = chunks[i];
        INFO("chunk " << c.id << " raw [" << c.raw << "]");
        REQUIRE(c.end <= normalized.size());
        REQUIRE(c.begin < c.end);
        CHECK(c.raw == normalized.substr(c.begin, c.end - c.begin));
        CHECK(c.first_line == line_of(c.begin));
        CHECK(c.last_line == line_of(c.end - 1));
        CHECK((c.begin == 0 || space(normalized[c.begin - 1])));
        CHECK((c.end == normalized.size() || space(normalized[c.end])));
        CHECK((static_cast<unsigned char>(normalized[c.begin]) & 0xC0) != 0x80);
        CHECK(content_tokens(c.begin, c.end) <= options.max_tokens);
        CHECK(c.position == i);
        CHECK(c.path == path);
        CHECK(c.text.starts_with(c.context + "\n"));
        CHECK(c.text.ends_with(c.raw));
        CHECK(c.id == (c.part == 1 ? c.section : c.section + "#" + std::to_string(c.part)));
        if (i > 0 && chunks[i - 1].section == c.section) {
            const Chunk& p = chunks[i - 1];
            CHECK(c.part == p.part + 1);
            CHECK(c.end > p.end);
            CHECK(c.begin > p.begin);
            const std::size_t shared = c.begin < p.end ? content_tokens(c.begin, p.end) : 0;
            CHECK(shared <= options.overlap_tokens());
        } else {
            CHECK(c.part == 1);
        }
        // Its place, from the generator: the line of its first word.
        const std::size_t first = c.first_line - 1;
        REQUIRE(first < g.lines.size());
        if (g.content[first]) {
            CHECK(c.heading_path == g.heading_path[first]);
            CHECK(c.section == path + ":" + std::to_string(g.section_line[first]));
        }
        if (g.table_header[first] != 0 && c.begin == line_start[first])
            CHECK(c.text.find(g.lines[g.table_header[first] - 1]) != std::string::npos);
    }
    // No text lost: every word of every content line lies in some chunk.
    for (std::size_t ln = 0; ln < g.lines.size(); ++ln) {
        if (!g.content[ln] || trimmed(g.lines[ln]).empty()) continue;
        const std::string& l = g.lines[ln];
        for (std::size_t i = 0; i < l.size();) {
            while (i < l.size() && space(l[i])) ++i;
            if (i >= l.size()) break;
            const std::size_t b = i;
            while (i < l.size() && !space(l[i])) ++i;
            const std::size_t wb = line_start[ln] + b, we = line_start[ln] + i;
            bool found = false;
            for (const auto& c : chunks) found = found || (c.begin <= wb && we <= c.end);
            INFO("line " << ln + 1 << " word '" << l.substr(b, i - b) << "'");
            CHECK(found);
        }
    }
}

}  // namespace

TEST_CASE("Chunk properties over generated Markdown", "[chunk][property]") {
    const auto seed = static_cast<unsigned>(GENERATE(range(1, 151)));
    const std::size_t max = seed % 4 == 0 ? 400 : static_cast<std::size_t>(3 + seed % 23);
    check_properties(Format::markdown, seed, ChunkOptions{max, (seed % 2 == 0) ? max / 3 : 0, {}});
}

TEST_CASE("Chunk properties over generated reStructuredText", "[chunk][property]") {
    const auto seed = static_cast<unsigned>(GENERATE(range(1, 151)));
    const std::size_t max = static_cast<std::size_t>(3 + seed % 31);
    check_properties(Format::rst, seed, ChunkOptions{max, (seed % 3 == 0) ? max / 2 : 0, {}});
}

TEST_CASE("Chunk properties over generated plain text", "[chunk][property]") {
    const auto seed = static_cast<unsigned>(GENERATE(range(1, 101)));
    const std::size_t max = static_cast<std::size_t>(2 + seed % 17);
    check_properties(Format::text, seed, ChunkOptions{max, std::nullopt, {}});
}
