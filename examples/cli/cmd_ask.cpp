// ragpp ask DIR QUESTION: the evidence block a language model should read (numbered,
// cited, neutralised sources), or a refusal naming the best passage found and why it
// was not enough (issue 8).
#include "cli.hpp"
#include "engine.hpp"

#include <ragpp/answer/abstain.hpp>
#include <ragpp/answer/evidence.hpp>
#include <ragpp/detail/file.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

namespace {

std::string fmt(double v, const char* f = "%.3f") {
    char buf[32];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

/// "bm25 #1, vector absent" for a result's trace (only the lists the mode used).
std::string ranks_of(const ragpp::Result& r, cli::Mode mode) {
    const char* names[] = {"bm25", "vector"};
    std::string out;
    for (std::size_t i = 0; i < r.trace.size(); ++i) {
        if ((mode == cli::Mode::bm25 && i == 1) || (mode == cli::Mode::vector && i == 0)) continue;
        out += std::string(out.empty() ? "" : ", ") + names[i] +
               (r.trace[i].rank ? " #" + std::to_string(*r.trace[i].rank) : std::string(" absent"));
    }
    return out;
}

int run_ask(cli::ArgParser& p) {
    auto engine = cli::Engine::open(p.get("DIR"), p.count("threads"));
    cli::apply_search_options(p, engine.config());
    cli::apply_rerank_options(p, engine.config());
    const auto mode = cli::parse_mode_or_default(p.get("mode"), engine.config());
    const std::string reranker = p.get("rerank");
    cli::check_reranker(reranker);
    const std::string question = p.get("QUESTION");
    const std::size_t passages = p.count("passages");
    if (passages == 0) throw cli::UsageError("--passages must be >= 1");
    const double min_confidence = p.number("min-confidence");
    if (!(min_confidence >= 0 && min_confidence <= 1)) throw cli::UsageError("--min-confidence must be in [0, 1]");

    ragpp::EvidenceOptions eo;
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
    for (const auto& f : p.all("filter")) {
        cli::usage_of([&] { return ragpp::parse_filter(f); });  // a bad expression is a usage error
        q.filter += (q.filter.empty() ? "(" : " and (") + f + ")";
    }
    q.principal = cli::principal(p);
    q.reranker = reranker;
    q.check_sources = cli::check_sources(p);
    auto found = engine.search(question, q);
    cli::warn_stale(found);
    auto results = std::move(found.results);
    // Reranked: passages scoring below `relative-floor` times the best one are not evidence.
    const double floor = p.number("relative-floor");
    if (!(floor >= 0 && floor <= 1)) throw cli::UsageError("--relative-floor must be in [0, 1]");
    if (!results.empty() && results.front().rerank) {
        const double cut = floor * results.front().rerank->reranker_score;
        std::size_t keep = 1;
        while (keep < results.size() && results[keep].rerank && results[keep].rerank->reranker_score >= cut) ++keep;
        results.resize(keep);
    }
    const auto signals = ragpp::confidence_signals(results);
    const double conf = ragpp::confidence(signals);
    const bool answered = !results.empty() && conf >= min_confidence;

    nlohmann::json j{{"question", question}, {"answered", answered}, {"confidence", conf},
                     {"min_confidence", min_confidence}, {"reranker", reranker}, {"mode", cli::mode_name(mode)}};
    const std::string note = cli::vector_list_note(mode, p.get("mode"), engine.config());
    j["vector_list_used"] = note.empty();
    if (!note.empty()) {
        j["vector_list_note"] = note;
        if (!p.has("json")) std::fprintf(stderr, "note: %s\n", note.c_str());  // stdout is the evidence, for the model
    }
    j["signals"] = {{"reranker", signals.reranker ? nlohmann::json(*signals.reranker) : nlohmann::json(nullptr)},
                    {"margin", signals.margin},
                    {"agreement", signals.agreement},
                    {"results", signals.results}};

    if (!answered) {
        // Why: the best passage and the signals that kept the confidence low.
        std::vector<std::string> reasons;
        std::string best;
        if (results.empty()) {
            reasons.push_back("no passage of the index matches the question");
        } else {
            const auto& top = results.front();
            best = cli::citation(*top.document);
            const auto b = engine.explain(question, *top.document);
            if (!b.missing.empty()) {
                std::string words;
                for (const auto& w : b.missing) words += (words.empty() ? "" : ", ") + w;
                reasons.push_back(std::to_string(b.missing.size()) + " of " + std::to_string(b.words) +
                                  " question words do not occur in it: " + words);
            }
            if (signals.reranker && *signals.reranker < 0.5)
                reasons.push_back("the " + reranker + " reranker scores it " + fmt(*signals.reranker) + " of 1");
            if (signals.agreement < 1.0)
                reasons.push_back("the indexes do not agree on it (" + ranks_of(top, mode) + ")");
            if (signals.margin < 0.5)
                reasons.push_back("it barely leads the next passage (fused margin signal " + fmt(signals.margin) + ")");
            if (reasons.empty()) reasons.push_back("the combined signals stay below the threshold");
        }
        j["best"] = results.empty() ? nlohmann::json(nullptr)
                                    : nlohmann::json{{"id", results.front().document->id}, {"citation", best}};
        j["reasons"] = reasons;
        if (p.has("json")) {
            std::cout << j.dump(2) << "\n";
            return 0;
        }
        std::printf("No answer: the index holds no passage that answers this question well enough (confidence %s < "
                    "%s).\n",
                    fmt(conf).c_str(), fmt(min_confidence).c_str());
        if (!best.empty()) std::printf("Best passage found: %s\n", best.c_str());
        std::printf("Why it was not enough:\n");
        for (const auto& r : reasons) std::printf("  - %s\n", r.c_str());
        return 0;
    }

    const auto ev = ragpp::EvidenceBuilder(eo).build(question, results, engine.neighbours());
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
                                                     [&](const auto& f) { return f.field == "stale" && f.sources[0] == s.number; })},
                               {"text", s.text}});
        nlohmann::json flags = nlohmann::json::array();
        for (const auto& f : ev.flags)
            flags.push_back({{"sources", f.sources}, {"subject", f.subject}, {"field", f.field}, {"values", f.values},
                             {"message", f.message}});
        j["evidence"] = {{"nonce", ev.nonce}, {"sources", sources}, {"flags", flags}, {"omitted", ev.omitted},
                         {"tokens", ev.tokens}, {"prompt", ev.render()}};
        std::cout << j.dump(2) << "\n";
        return 0;
    }
    std::printf("%s", ev.render().c_str());
    std::fprintf(stderr, "confidence %s (threshold %s), %zu sources, %zu tokens\n", fmt(conf).c_str(),
                 fmt(min_confidence).c_str(), ev.sources.size(), ev.tokens);
    return 0;
}

const cli::Register reg{{"ask", "the evidence block for a question (numbered, cited sources), or a reasoned refusal",
                         [](cli::ArgParser& p) {
                             p.positional("DIR", "an index folder written by ragpp index")
                                 .positional("QUESTION", "the question")
                                 .option("min-confidence", "X",
                                         "refuse below this confidence in [0, 1]; calibrate it with ragpp eval on "
                                         "questions with unanswerable ones",
                                         "0.45")
                                 .option("rerank", "R", "none, proximity or softmatch", "proximity")
                                 .option("mode", "M",
                                         "bm25, vector or hybrid [default: bm25 with the built-in hashing embedder, "
                                         "hybrid with a semantic one]",
                                         "")
                                 .option("passages", "N", "results passed on as evidence, at most", "5")
                                 .option("relative-floor", "X",
                                         "with a reranker, drop results scoring below X times the best one's score", "0.5")
                                 .option("budget", "N", "tokens of passage text in the evidence", "1500")
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
