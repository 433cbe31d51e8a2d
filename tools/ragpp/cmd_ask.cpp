// ragpp ask DIR QUESTION: the evidence block a language model should read (numbered,
// cited, neutralised sources), or a refusal naming the best passage found and why it
// was not enough.
#include "cli.hpp"
#include "engine.hpp"

#include <ragpp/answer/answer.hpp>
#include <ragpp/answer/evidence.hpp>
#include <ragpp/detail/file.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

namespace {

// The default threshold as the help text shows it (ragpp::default_min_confidence).
const std::string ragpp_default_min_confidence = [] {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%g", ragpp::default_min_confidence);
    return std::string(buf);
}();

std::string fmt(double v, const char* f = "%.3f") {
    char buf[32];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

int run_ask(cli::ArgParser& p) {
    auto engine = cli::Engine::open(p.get("DIR"), p.count("threads"));
    // This query's search settings: the options over the index's saved defaults.
    ragpp::SearchSettings settings = engine.config().search;
    cli::apply_search_options(p, settings);
    cli::apply_rerank_options(p, settings);
    const auto mode = cli::parse_mode_or_default(p.get("mode"), engine.config());
    const std::string reranker = p.get("rerank");
    cli::check_reranker(reranker);
    const std::string question = p.get("QUESTION");

    ragpp::AnswerOptions ao;
    const std::size_t passages = p.count("passages");
    if (passages == 0) throw cli::UsageError("--passages must be >= 1");
    ao.min_confidence = p.number("min-confidence");
    if (!(ao.min_confidence >= 0 && ao.min_confidence <= 1)) throw cli::UsageError("--min-confidence must be in [0, 1]");
    ao.relative_floor = p.number("relative-floor");
    if (!(ao.relative_floor >= 0 && ao.relative_floor <= 1)) throw cli::UsageError("--relative-floor must be in [0, 1]");
    auto& eo = ao.evidence;
    eo.token_budget = p.count("budget");
    if (eo.token_budget == 0) throw cli::UsageError("--budget must be >= 1");
    eo.neighbour_radius = p.count("neighbours");
    eo.max_neighbours = p.count("max-neighbours");
    if (p.has("instructions")) {
        eo.instructions = ragpp::detail::read_file(p.get("instructions"));
        while (!eo.instructions.empty() && eo.instructions.back() == '\n') eo.instructions.pop_back();
    }
    if (p.has("seed-nonce")) eo.nonce_mode = ragpp::NonceMode::content_hash;

    ragpp::EngineQuery q;
    q.k = passages;
    q.mode = mode;
    // Each --filter on its own, as written (no parenthesised join: it would add a level
    // of nesting and be quoted in errors); a bad expression is a usage error.
    q.filters = p.all("filter");
    for (const auto& f : q.filters) cli::usage_of([&] { return ragpp::parse_filter(f); });
    q.principal = cli::principal(p);
    q.reranker = reranker;
    q.check_sources = cli::check_sources(p);
    q.search = settings;
    // The decision is the library's (ragpp::Engine::answer); this prints it.
    const auto a = engine.answer(question, q, ao);
    cli::warn_stale(a.stale_sources);

    nlohmann::json j{{"question", question},         {"answered", a.answered}, {"confidence", a.confidence},
                     {"min_confidence", a.min_confidence}, {"reranker", reranker}, {"mode", cli::mode_name(mode)}};
    const std::string note = cli::vector_list_note(mode, p.get("mode"), engine.config().embedder, settings);
    j["vector_list_used"] = note.empty();
    if (!note.empty()) {
        j["vector_list_note"] = note;
        if (!p.has("json")) std::fprintf(stderr, "note: %s\n", note.c_str());  // stdout is the evidence, for the model
    }
    j["signals"] = {{"coverage", a.signals.coverage},
                    {"passage_coverage", a.coverage.passages},
                    {"reranker", a.signals.reranker ? nlohmann::json(*a.signals.reranker) : nlohmann::json(nullptr)},
                    {"passages", a.signals.results}};
    j["missing"] = a.coverage.missing;
    j["unknown"] = a.coverage.unknown;
    if (!a.stale_sources.empty()) j["stale_sources"] = a.stale_sources;

    if (!a.answered) {
        const std::string best = a.passages.empty() ? std::string() : cli::citation(*a.passages.front().document);
        j["best"] = a.passages.empty()
                        ? nlohmann::json(nullptr)
                        : nlohmann::json{{"id", a.passages.front().document->id}, {"citation", best}};
        auto reasons = a.reasons;
        if (a.passages.empty())
            if (auto hint = engine.filter_hint(q.filters, q.principal); !hint.empty()) reasons.push_back(hint);
        j["reasons"] = reasons;
        if (p.has("json")) {
            std::cout << cli::dump_json(j, 2) << "\n";
            return 0;
        }
        std::printf("No answer: the index holds no passage that answers this question well enough (confidence %s < "
                    "%s).\n",
                    fmt(a.confidence).c_str(), fmt(a.min_confidence).c_str());
        if (!best.empty()) std::printf("Best passage found: %s\n", cli::printable(best).c_str());
        std::printf("Why it was not enough:\n");
        for (const auto& r : reasons) std::printf("  - %s\n", cli::printable(r).c_str());
        return 0;
    }

    const auto& ev = *a.evidence;
    if (p.has("json")) {
        nlohmann::json sources = nlohmann::json::array();
        for (const auto& s : ev.sources)
            sources.push_back({{"number", s.number},
                               {"location", s.location},
                               {"citation", s.citation},
                               {"chunks", s.chunk_ids},
                               {"tokens", s.tokens},
                               {"truncated", s.truncated},
                               {"stale", std::any_of(ev.flags.begin(), ev.flags.end(),
                                                     [&](const auto& f) {
                                                         return f.field == "stale" &&
                                                                std::find(f.sources.begin(), f.sources.end(), s.number) !=
                                                                    f.sources.end();
                                                     })},
                               {"text", s.text}});
        nlohmann::json flags = nlohmann::json::array();
        for (const auto& f : ev.flags)
            flags.push_back({{"sources", f.sources}, {"subject", f.subject}, {"field", f.field}, {"fields", f.fields},
                             {"values", f.values},
                             {"message", f.message}});
        j["evidence"] = {{"nonce", ev.nonce}, {"sources", sources}, {"flags", flags}, {"omitted", ev.omitted},
                         {"tokens", ev.tokens}, {"prompt", ev.render()}};
        std::cout << cli::dump_json(j, 2) << "\n";
        return 0;
    }
    std::printf("%s", ev.render().c_str());
    std::fprintf(stderr, "confidence %s (threshold %s), %zu sources, %zu tokens\n", fmt(a.confidence).c_str(),
                 fmt(a.min_confidence).c_str(), ev.sources.size(), ev.tokens);
    return 0;
}

const cli::Register reg{{"ask", "the evidence block for a question (numbered, cited sources), or a reasoned refusal",
                         [](cli::ArgParser& p) {
                             p.positional("DIR", "an index folder written by ragpp index")
                                 .positional("QUESTION", "the question")
                                 .option("min-confidence", "X",
                                         "refuse below this confidence in [0, 1] (the query coverage of the passages, "
                                         "docs/abstention.md); ragpp eval suggests one for your questions",
                                         ragpp_default_min_confidence)
                                 .option("rerank", "R",
                                         ragpp::choice_help(ragpp::reranker_kinds) +
                                             " (without a cross-encoder, reranking does not beat the first stage: "
                                             "docs/reranking.md)",
                                         "none")
                                 .option("mode", "M", cli::mode_help(), "")
                                 .option("passages", "N", "results passed on as evidence, at most", "5")
                                 .option("relative-floor", "X",
                                         "with a reranker, drop results scoring below X times the best one's score", "0.5")
                                 .option("budget", "N",
                                         "tokens of passage text in the evidence, counted as the chunker counts "
                                         "(whitespace-separated words; each Chinese or Japanese character one)",
                                         "1500")
                                 .option("neighbours", "R", "add the chunks within R positions of each result", "0")
                                 .option("max-neighbours", "N", "at most N chunks added by --neighbours", "4")
                                 .option("instructions", "FILE",
                                         "the instructions above the sources ({nonce} is replaced by the block's nonce)")
                                 .flag("seed-nonce", "derive the nonce from the content (reproducible output) "
                                                     "instead of drawing it at random")
                                 .repeated("filter", "EXPR",
                                           "metadata filter, e.g. type=guide, 'version>=2' (several are and-ed)")
                                 .flag("json", "print JSON for programs");
                             cli::declare_search_options(p);
                             cli::declare_threads_option(p);
                             cli::declare_rerank_options(p);
                             cli::declare_access_options(p);
                             cli::declare_check_sources_option(p);
                             p.epilog("The evidence goes to stdout, the confidence to stderr. A refusal exits 0 too; "
                                      "--json says \"answered\": false.");
                         },
                         run_ask}};

}  // namespace
