// ragpp search DIR QUERY: the best passages, with citation, fused score and trace.
#include "cli.hpp"
#include "engine.hpp"

#include <ragpp/filter/filter.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>

namespace {

/// The first `max_chars` bytes of `text` on one line (line ends as spaces, other
/// controls escaped), cut at a character boundary.
std::string first_lines(const std::string& text, std::size_t max_chars) {
    std::size_t end = std::min(max_chars, text.size());
    while (end < text.size() && end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
    std::string head = text.substr(0, end);
    for (char& c : head)
        if (c == '\n') c = ' ';
    return cli::printable(head) + (end < text.size() ? "..." : "");
}

int run_search(cli::ArgParser& p) {
    auto engine = cli::Engine::open(p.get("DIR"), p.count("threads"));
    // This query's search settings: the options over the index's saved defaults.
    ragpp::SearchSettings settings = engine.config().search;
    cli::apply_search_options(p, settings);
    cli::apply_rerank_options(p, settings);
    const std::string reranker = cli::check_reranker(p.get("rerank"));
    const auto mode = cli::parse_mode_or_default(p.get("mode"), engine.config());
    const std::size_t k = p.count("k");
    // Each --filter on its own, as written (no parenthesised join: it would add a level
    // of nesting and be quoted in errors); a bad expression is a usage error.
    const std::vector<std::string> filters = p.all("filter");
    for (const auto& f : filters) cli::usage_of([&] { return ragpp::parse_filter(f); });
    ragpp::EngineQuery q;
    q.k = k;
    q.mode = mode;
    q.filters = filters;
    q.principal = cli::principal(p);
    q.reranker = reranker;
    q.check_sources = cli::check_sources(p);
    q.search = settings;
    const auto found = engine.search(p.get("QUERY"), q);
    cli::warn_stale(found.stale_sources);
    const auto& results = found.results;
    // A filter that matches nothing the reader may read: say why (a misspelt field).
    const std::string hint = results.empty() ? engine.filter_hint(filters, q.principal) : std::string();
    if (!hint.empty()) std::fprintf(stderr, "note: %s\n", cli::printable(hint).c_str());
    const char* names[] = {"bm25", "vector"};
    const std::string note = cli::vector_list_note(mode, p.get("mode"), engine.config().embedder, settings);
    if (p.has("json")) {
        nlohmann::json j = nlohmann::json::array();
        for (std::size_t i = 0; i < results.size(); ++i) {
            const auto& r = results[i];
            nlohmann::json trace = nlohmann::json::object();
            for (std::size_t x = 0; x < r.trace.size(); ++x)
                trace[names[x]] = r.trace[x].rank ? nlohmann::json{{"rank", *r.trace[x].rank}, {"score", *r.trace[x].score}}
                                                  : nlohmann::json(nullptr);
            nlohmann::json item{{"rank", i + 1}, {"id", r.document->id}, {"citation", cli::citation(*r.document)},
                                {"score", r.score}, {"trace", trace}, {"stale", r.stale}, {"text", r.document->text}};
            if (r.rerank)
                item["rerank"] = {{"score", r.rerank->reranker_score}, {"fused_rank", r.rerank->fused_rank},
                                  {"fused_score", r.rerank->fused_score}};
            j.push_back(std::move(item));
        }
        nlohmann::json out{{"mode", cli::mode_name(mode)}, {"vector_list_used", note.empty()}};
        if (!note.empty()) out["vector_list_note"] = note;
        if (!hint.empty()) out["filter_note"] = hint;
        out["results"] = std::move(j);
        std::cout << cli::dump_json(out, 2) << "\n";
        return 0;
    }
    if (!note.empty()) std::printf("note: %s\n", note.c_str());
    if (results.empty()) std::printf("no result for \"%s\"\n", cli::printable(p.get("QUERY")).c_str());
    for (std::size_t i = 0; i < results.size(); ++i) {
        const auto& r = results[i];
        if (r.rerank)
            std::printf("%2zu. %s\n    %s %.4f (fused #%zu %.4f)", i + 1, cli::printable(cli::citation(*r.document)).c_str(),
                        reranker.c_str(), r.rerank->reranker_score, r.rerank->fused_rank, r.rerank->fused_score);
        else
            std::printf("%2zu. %s%s\n    fused %.4f", i + 1, cli::printable(cli::citation(*r.document)).c_str(),
                        r.stale ? "  (stale: the source changed)" : "", r.score);
        for (std::size_t x = 0; x < r.trace.size(); ++x) {
            if (r.trace[x].rank) std::printf("   %s #%zu (%.3f)", names[x], *r.trace[x].rank, *r.trace[x].score);
            else std::printf("   %s -", names[x]);
        }
        std::printf("\n    %s\n", first_lines(r.document->text, 160).c_str());
    }
    return 0;
}

const cli::Register reg{{"search", "search an index folder; print citations, fused scores and traces",
                         [](cli::ArgParser& p) {
                             p.positional("DIR", "an index folder written by ragpp index")
                                 .positional("QUERY", "the question")
                                 .option("mode", "M", cli::mode_help(), "")
                                 .option("k", "N", "number of results", "5")
                                 .repeated("filter", "EXPR",
                                           "metadata filter, e.g. type=guide, 'version>=2', 'groups in (a, b)' "
                                           "(several are and-ed)")
                                 .flag("json", "print JSON for programs");
                             cli::declare_search_options(p);
                             cli::declare_threads_option(p);
                             p.option("rerank", "R",
                                      "rerank the fused candidates: " + ragpp::choice_help(ragpp::reranker_kinds),
                                      "none");
                             cli::declare_rerank_options(p);
                             cli::declare_access_options(p);
                             cli::declare_check_sources_option(p);
                         },
                         run_search}};

}  // namespace
