// ragpp search DIR QUERY: the best passages, with citation, fused score and trace.
#include "cli.hpp"
#include "engine.hpp"
#include "service.hpp"


namespace {

int run_search(cli::ArgParser& p) {
    auto engine = ragpp::Engine::open(p.get("DIR"), p.count("threads"));
    cli::SearchRequest rq;
    rq.query = p.get("QUERY");
    rq.k = p.count("k");
    rq.mode = p.get("mode");
    rq.filters = p.all("filter");
    rq.reranker = p.get("rerank");
    rq.principal = cli::principal(p);
    rq.check_sources = cli::check_sources(p);
    // This query's search settings: the options over the index's saved defaults.
    ragpp::SearchSettings settings = engine.config().search;
    cli::apply_search_options(p, settings);
    cli::apply_rerank_options(p, settings);
    rq.settings = settings;
    return cli::print_reply(cli::search(engine, rq), p.has("json"));
}

const cli::Register register_search{{"search", "search an index folder; print citations, fused scores and traces",
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
