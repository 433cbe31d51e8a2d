// ragpp get DIR SOURCE: a source's section, lines or whole file as the file holds it now
// (the index reflects the files as they were), with its citation, and whether it changed
// since it was indexed or is gone.
#include "cli.hpp"
#include "engine.hpp"
#include "service.hpp"

namespace {

int run_get(cli::ArgParser& p) {
    const auto reader = cli::principal(p);
    auto engine = ragpp::Engine::open(p.get("DIR"));
    cli::Reply reply;
    try {
        reply = cli::get(engine, p.get("SOURCE"), reader);
    } catch (const ragpp::InvalidArgument& e) {
        throw cli::UsageError(e.what());  // a malformed SOURCE, or lines the file does not have
    }
    return cli::print_reply(reply, p.has("json"));
}

const cli::Register register_get{
    {"get", "print a source's section or lines as the file holds them now, with its citation",
     [](cli::ArgParser& p) {
         p.positional("DIR", "an index folder written by ragpp index")
             .positional("SOURCE",
                         "PATH (the whole file), PATH:LINE (the section whose heading is on that line, or that "
                         "holds it: a citation of search or ask) or PATH:FIRST-LAST (those lines)")
             .flag("json", "print JSON for programs");
         cli::declare_access_options(p);
         p.epilog("Only a source the reader may read in full is printed; any other path is \"no source\". A source "
                  "changed since it was indexed is printed as it is now, with a warning (its lines may have moved); "
                  "a deleted one exits 1.");
     },
     run_get}};

}  // namespace
