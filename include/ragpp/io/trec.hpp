// ragpp: TREC run files, the exchange format of trec_eval, ranx and most engines'
// evaluation tooling: one retrieved document a line,
//
//     qid Q0 docno rank score tag
//
// six whitespace-separated columns (the second, "Q0", and the rank are ignored).
//
// Reading follows trec_eval (usnistgov/trec_eval, get_trec_results.c and
// form_res_rels.c): blank lines and lines starting with '#' are skipped; the rank
// column is ignored; a query's documents are ranked by score, highest first, and
// equal scores by docno in *decreasing* byte order (comp_sim_docno: strcmp(p2, p1));
// a docno twice for one query is an error there and here. Stricter than trec_eval:
// exactly six columns (trec_eval ignores what follows the tag), a score that is a
// finite number (trec_eval's atof reads "abc" as 0), and a file without any run line
// is an error. Errors are ParseError naming the file and the 1-based line; a file that
// cannot be read is an IoError.
//
// Writing: trec_id() makes an identifier a TREC token (whitespace becomes '_', the
// empty id "_"); write_trec_run() writes one query's ranking with ranks 1, 2, ... and
// the scores given. To keep an order with ties exactly, give strictly decreasing
// scores (ragpp's reports write n - rank + 1, see eval/report.hpp).
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <istream>
#include <map>
#include <ostream>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include <ragpp/core/error.hpp>

namespace ragpp {

/// One retrieved document of a run.
struct TrecRunEntry {
    std::string docno;
    double score = 0.0;
};

/// A run read from a file: each query's documents in trec_eval's order (score
/// descending, then docno descending).
struct TrecRun {
    /// Where it was read from (the file name), for messages.
    std::string source;
    /// The tag (sixth column) of the first run line.
    std::string tag;
    /// qid -> ranking.
    std::map<std::string, std::vector<TrecRunEntry>> queries;
    /// Run lines read.
    std::size_t lines = 0;
};

/// `id` as a TREC token: whitespace replaced by '_', the empty id written "_".
[[nodiscard]] inline std::string trec_id(std::string_view id) {
    std::string out(id);
    for (char& c : out)
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') c = '_';
    return out.empty() ? std::string("_") : out;
}

/// Parses a run from `in`; `source` names it in error messages.
[[nodiscard]] inline TrecRun parse_trec_run(std::istream& in, const std::string& source) {
    TrecRun run;
    run.source = source;
    // docno -> line, per query, to report where a duplicate was first seen.
    std::map<std::string, std::unordered_map<std::string, std::size_t>> seen;
    std::string line;
    std::size_t number = 0;
    auto fail = [&](const std::string& what) {
        throw ParseError(source + ":" + std::to_string(number) + ": " + what);
    };
    while (std::getline(in, line)) {
        ++number;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        std::istringstream fields(line);
        std::vector<std::string> cols;
        for (std::string f; fields >> f;) cols.push_back(std::move(f));
        if (cols.empty() || cols.front().front() == '#') continue;
        if (cols.size() != 6)
            fail("expected 6 columns (qid Q0 docno rank score tag), found " + std::to_string(cols.size()));
        const std::string& text = cols[4];
        std::string_view s = text;
        if (s.size() > 1 && s.front() == '+' && s[1] != '-') s.remove_prefix(1);
        double score = 0.0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), score);
        if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(score))
            fail("score '" + text + "' is not a finite number");
        const auto [it, fresh] = seen[cols[0]].emplace(cols[2], number);
        if (!fresh)
            fail("docno '" + cols[2] + "' appears twice for query '" + cols[0] + "' (first at line " +
                 std::to_string(it->second) + ")");
        if (run.lines == 0) run.tag = cols[5];
        ++run.lines;
        run.queries[cols[0]].push_back({std::move(cols[2]), score});
    }
    if (in.bad()) throw IoError("cannot read '" + source + "'");
    if (run.lines == 0) throw ParseError(source + ": no run line (expected 'qid Q0 docno rank score tag' lines)");
    for (auto& entry : run.queries)
        std::sort(entry.second.begin(), entry.second.end(), [](const TrecRunEntry& a, const TrecRunEntry& b) {
            if (a.score != b.score) return a.score > b.score;
            return a.docno > b.docno;  // trec_eval: ties by docno, decreasing
        });
    return run;
}

/// Reads the run file `path`.
[[nodiscard]] inline TrecRun read_trec_run(const std::filesystem::path& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw IoError("cannot read run file '" + path.string() + "': a directory");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw IoError("cannot open run file '" + path.string() + "'");
    return parse_trec_run(in, path.string());
}

/// Writes one query's ranking: "qid Q0 docno rank score tag" lines, rank from 1, ids
/// through trec_id().
inline void write_trec_run(std::ostream& out, std::string_view qid, std::span<const TrecRunEntry> ranking,
                           std::string_view tag) {
    const std::string q = trec_id(qid), t = trec_id(tag);
    char score[64];
    for (std::size_t r = 0; r < ranking.size(); ++r) {
        // The shortest text that reads back as the same double: no tie is made by rounding.
        const auto res = std::to_chars(score, score + sizeof score, ranking[r].score);
        out << q << " Q0 " << trec_id(ranking[r].docno) << ' ' << (r + 1) << ' '
            << std::string_view(score, static_cast<std::size_t>(res.ptr - score)) << ' ' << t << '\n';
    }
}

}  // namespace ragpp
