// ragpp ask DIR QUESTION: the evidence block a language model should read (numbered,
// cited, neutralised sources), or a refusal naming the best passage found and why it
// was not enough.
#include "cli.hpp"
#include "engine.hpp"
#include "service.hpp"

#include <ragpp/answer/answer.hpp>
#include <ragpp/answer/evidence.hpp>
#include <ragpp/detail/file.hpp>

#include <cstdio>

namespace {

// The default threshold as the help text shows it (ragpp::default_min_confidence).
const std::string ragpp_default_min_confidence = [] {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%g", ragpp::default_min_confidence);
    return std::string(buf);
}();

int run_ask(cli::ArgParser& p) {
    auto engine = ragpp::Engine::open(p.get("DIR"), p.count("threads"));
    // This query's search settings: the options over the index's saved defaults.
    ragpp::SearchSettings settings = engine.config().search;
    cli::apply_search_options(p, settings);
    cli::apply_rerank_options(p, settings);
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

    cli::AskRequest rq;
    rq.search.query = question;
    rq.search.k = passages;
    rq.search.mode = p.get("mode");
    rq.search.filters = p.all("filter");
    rq.search.reranker = reranker;
    rq.search.principal = cli::principal(p);
    rq.search.check_sources = cli::check_sources(p);
    rq.search.settings = settings;
    rq.answer = ao;
    rq.reopen = "run `ragpp get " + cli::shell_word(p.get("DIR")) + " PATH:LINE` with the path:line of its citation.";
    return cli::print_reply(cli::ask(engine, rq), p.has("json"));
}

const cli::Register register_ask{{"ask", "the evidence block for a question (numbered, cited sources), or a reasoned refusal",
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
