// A program outside ragpp's tree that links the compiled library (ragpp::compiled): the
// engine over a folder of two notes, built, saved, reopened and searched.
#include <ragpp/engine/engine.hpp>

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
    std::printf("consumer compiled ok: %zu chunks, %s\n", engine.size(), found.results.at(0).document->id.c_str());
    fs::remove_all(dir);
    return 0;
}
