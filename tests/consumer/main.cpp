// A program outside ragpp's tree that uses the package: fuses two ranked lists.
#include <ragpp/ragpp.hpp>

#include <cstdio>
#include <string>
#include <vector>

int main() {
    const std::vector<std::vector<std::string>> lists{{"C", "A", "F", "E", "G", "B", "H", "I", "D"},
                                                      {"D", "B", "A", "J", "E", "K", "F", "C"}};
    const auto fused = ragpp::reciprocal_rank_fusion(lists);
    std::printf("consumer ok: %s %.2f\n", fused.front().id.c_str(), fused.front().score * 1000);
    return fused.front().id == "A" ? 0 : 1;
}
