// A program outside ragpp's tree that links the compiled library (ragpp::compiled): the
// engine over a folder of two notes, built, saved, reopened and searched; and the README's
// Retriever, which this program does not instantiate (src/instances.cpp holds it: a member
// missing from the library fails the link).
#include <ragpp/embed/hashing.hpp>
#include <ragpp/engine/engine.hpp>
#include <ragpp/index/bm25.hpp>
#include <ragpp/index/vector.hpp>
#include <ragpp/retrieve/retriever.hpp>
#include <ragpp/text/analyzer.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

int main() {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / "ragpp-consumer-compiled";
    fs::remove_all(dir);
    fs::create_directories(dir / "notes");
    std::ofstream(dir / "notes" / "mx200.md") << "# MX-200\n\nThe notice period of contract MX-200 is three months.\n";
    std::ofstream(dir / "notes" / "ora.md") << "# ORA-01555\n\nSnapshot too old: increase the undo retention.\n";
    ragpp::Engine::build(dir / "notes", ragpp::EngineConfig{}).save(dir / "index");
    const auto engine = ragpp::Engine::open(dir / "index");
    ragpp::EngineQuery q;
    q.k = 1;
    const auto found = engine.search("MX200 notice", q);
    ragpp::Retriever retriever{ragpp::BM25Index<ragpp::EnglishAnalyzer>{},
                               ragpp::VectorIndex<ragpp::HashingEmbedder>{}};
    retriever.add_document({"mx200.md:1", "Contract MX-200: the notice period is three months.", {}});
    retriever.add_document({"ora.md:1", "ORA-01555 snapshot too old: increase the undo retention.", {}});
    const auto hits = retriever.search("MX200 notice", 2);
    std::printf("consumer compiled ok: %zu chunks, %s; retriever %s %.4f\n", engine.size(),
                found.results.at(0).document->id.c_str(), hits.at(0).document->id.c_str(), hits.at(0).score);
    fs::remove_all(dir);
    return 0;
}
