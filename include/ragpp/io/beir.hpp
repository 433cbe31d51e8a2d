// ragpp: readers for BEIR-layout collections (corpus.jsonl, queries.jsonl,
// qrels/<split>.tsv), the layout of ../shared/data and of the BEIR benchmark.
//
// Errors name the file, the 1-based line and the field: a malformed line is a
// ParseError, an unreadable file an IoError.
#pragma once

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

#include <ragpp/core/error.hpp>
#include <ragpp/detail/json.hpp>
#include <ragpp/io/detail/beir.hpp>
#include <ragpp/io/metadata_json.hpp>
#include <ragpp/text/utf8.hpp>

namespace ragpp {

struct BeirDocument {
    std::string id;
    std::string title;
    std::string text;
};

struct BeirQuery {
    std::string id;
    std::string text;
};

/// Judgments by query id (graded: corpus id -> score).
using BeirQrels = std::map<std::string, std::unordered_map<std::string, double>>;  // = Judgments<std::string> (eval/metrics.hpp)

struct BeirCollection {
    std::vector<BeirDocument> corpus;
    /// The queries that have judgments in the split, in file order.
    std::vector<BeirQuery> queries;
    BeirQrels qrels;
};

/// Reads corpus.jsonl: one object per line with "_id", optional "title", "text" (its
/// "metadata" is not read). A line with an access declaration (`access_field`, or a key
/// that looks like one, inside "metadata" or not) is a ParseError, since it would be
/// ignored: a BEIR corpus carries no access (check_json_access).
inline std::vector<BeirDocument> read_beir_corpus(const std::filesystem::path& path,
                                                  std::string_view access_field = "groups") {
    std::vector<BeirDocument> docs;
    std::set<std::string> seen;
    detail::for_each_jsonl(path, [&](const nlohmann::json& j, std::size_t line) {
        check_json_access(j, path.string() + ":" + std::to_string(line), access_field, false);
        BeirDocument d{detail::json_string_field(j, "_id", path, line, true),
                       detail::json_string_field(j, "title", path, line, false),
                       detail::json_string_field(j, "text", path, line, true)};
        if (!seen.insert(d.id).second)
            throw DuplicateError(path.string() + ":" + std::to_string(line) + ": duplicate _id '" + d.id + "'");
        docs.push_back(std::move(d));
    });
    return docs;
}

/// Reads queries.jsonl: one object per line with "_id" and "text".
inline std::vector<BeirQuery> read_beir_queries(const std::filesystem::path& path) {
    std::vector<BeirQuery> queries;
    detail::for_each_jsonl(path, [&](const nlohmann::json& j, std::size_t line) {
        queries.push_back({detail::json_string_field(j, "_id", path, line, true),
                           detail::json_string_field(j, "text", path, line, true)});
    });
    return queries;
}

/// Reads a qrels TSV: "query-id<TAB>corpus-id<TAB>score", with an optional header line.
inline BeirQrels read_beir_qrels(const std::filesystem::path& path) {
    auto in = detail::open_for_reading(path);
    BeirQrels qrels;
    std::string line;
    std::size_t n = 0;
    while (std::getline(in, line)) {
        ++n;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) continue;
        std::vector<std::string_view> cols;
        std::string_view rest(line);
        for (std::size_t tab; (tab = rest.find('\t')) != std::string_view::npos; rest.remove_prefix(tab + 1))
            cols.push_back(rest.substr(0, tab));
        cols.push_back(rest);
        if (n == 1 && cols.size() >= 1 && cols[0] == "query-id") continue;
        text::validate_utf8(line, path.string() + ":" + std::to_string(n));
        if (cols.size() != 3)
            throw ParseError(path.string() + ":" + std::to_string(n) + ": expected 3 tab-separated columns, found " +
                             std::to_string(cols.size()));
        double score = 0;
        try {
            std::size_t used = 0;
            score = std::stod(std::string(cols[2]), &used);
            if (used != cols[2].size() || !std::isfinite(score)) throw std::invalid_argument("not a finite number");
        } catch (const std::exception&) {
            throw ParseError(path.string() + ":" + std::to_string(n) + ": score '" + std::string(cols[2]) +
                             "' is not a finite number");
        }
        qrels[std::string(cols[0])][std::string(cols[1])] = score;
    }
    return qrels;
}

/// Reads a BEIR folder: the corpus, the qrels of `split`, and the queries judged in it.
inline BeirCollection read_beir(const std::filesystem::path& dir, const std::string& split = "test") {
    BeirCollection c;
    c.corpus = read_beir_corpus(dir / "corpus.jsonl");
    c.qrels = read_beir_qrels(dir / "qrels" / (split + ".tsv"));
    for (auto& q : read_beir_queries(dir / "queries.jsonl"))
        if (c.qrels.count(q.id) != 0) c.queries.push_back(std::move(q));
    return c;
}

}  // namespace ragpp
