// A real full disk under io/generations.hpp: 200 commits of three parts of random sizes
// (0-300 KB) and a padded manifest into a folder on a 1 MiB tmpfs, so that the disk fills
// during a part, the manifest or the pointer; after each attempt the folder must open as
// exactly one whole generation (every part byte for byte). Run by
// scripts/check_generations_enospc.sh (it needs root to mount the tmpfs).
#include <ragpp/io/generations.hpp>
#include <cstdio>
#include <random>
#include <map>
#include <fstream>
namespace fs = std::filesystem;
static std::string content(std::uint64_t g, int i, std::size_t n) {
    std::string s(n, 'a');
    for (std::size_t k = 0; k < n; ++k) s[k] = static_cast<char>('a' + (g * 31 + static_cast<std::uint64_t>(i) * 7 + k) % 26);
    return s;
}
int main(int argc, char** argv) {
    if (argc != 2) return 2;
    const fs::path dir = argv[1];
    std::mt19937 rng(7);
    std::map<std::string, int> failures;
    int ok = 0, bad = 0;
    for (int round = 0; round < 200; ++round) {
        std::vector<std::size_t> sizes;
        for (int i = 0; i < 3; ++i) sizes.push_back(rng() % 300000);
        try {
            ragpp::GenerationWriter w(dir);
            const auto g = w.generation();
            for (int i = 0; i < 3; ++i) w.write("p" + std::to_string(i), content(g, i, sizes[i]));
            nlohmann::json info{{"sizes", sizes}, {"pad", std::string(rng() % 200000, 'x')}};
            w.commit(info);
            ++ok;
        } catch (const ragpp::IoError& e) {
            std::string m = e.what();
            const auto a = m.find("'"), b = m.find("'", a + 1);
            std::string file = fs::path(m.substr(a + 1, b - a - 1)).filename().string();
            if (file.rfind("CURRENT.tmp", 0) == 0) file = "CURRENT.tmp";
            if (file.rfind("gen-", 0) == 0) file = "gen folder";
            ++failures[file + (m.find("No space") != std::string::npos ? " (ENOSPC)" : " (other)")];
        }
        try {
            const auto o = ragpp::open_generation(dir);
            if (o.generation == 0 && o.parts.empty()) continue;
            const auto sizes2 = o.info.at("sizes").get<std::vector<std::size_t>>();
            for (int i = 0; i < 3; ++i) {
                std::ifstream in(o.dir / ("p" + std::to_string(i)), std::ios::binary);
                std::string got((std::istreambuf_iterator<char>(in)), {});
                if (got != content(o.generation, i, sizes2[static_cast<std::size_t>(i)])) { ++bad; break; }
            }
        } catch (const ragpp::NotFoundError&) {
        } catch (const std::exception& e) { std::printf("open failed: %s\n", e.what()); ++bad; }
    }
    for (auto& [k, v] : failures) std::printf("  failed writing %s: %d\n", k.c_str(), v);
    std::printf("200 attempts on a 1 MiB tmpfs: %d committed, %d opens not exactly one whole generation\n", ok, bad);
    return bad == 0 ? 0 : 1;
}
