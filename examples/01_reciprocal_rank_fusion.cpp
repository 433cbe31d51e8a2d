// 01: reciprocal rank fusion of two ranked lists, with the trace of every result.
// Reproduces the reference examples; the output is compared with
// 01_reciprocal_rank_fusion.expected by ctest.
#include <ragpp/retrieve/fusion.hpp>

#include <cstdio>
#include <string>
#include <vector>

template <class Fused>
void print(const char* title, const std::vector<Fused>& fused, double scale, int decimals, std::size_t n) {
    std::printf("%s\n", title);
    for (std::size_t i = 0; i < fused.size() && i < n; ++i) {
        std::printf("  %zu. %-2s %.*f  (", i + 1, fused[i].id.c_str(), decimals, fused[i].score * scale);
        for (std::size_t l = 0; l < fused[i].ranks.size(); ++l) {
            if (l) std::printf(", ");
            if (fused[i].ranks[l]) std::printf("list %zu: #%zu", l + 1, *fused[i].ranks[l]);
            else std::printf("list %zu: absent", l + 1);
        }
        std::printf(")\n");
    }
}

int main() {
    using Lists = std::vector<std::vector<std::string>>;

    const Lists words_meaning{{"C", "A", "F", "E", "G", "B", "H", "I", "D"},
                              {"D", "B", "A", "J", "E", "K", "F", "C"}};
    print("by words C A F E G B H I D, by meaning D B A J E K F C (k = 60, x1000):",
          ragpp::reciprocal_rank_fusion(words_meaning), 1000, 2, 6);

    print("\nby words P Q R S, by meaning R S T P (k = 60):",
          ragpp::reciprocal_rank_fusion(Lists{{"P", "Q", "R", "S"}, {"R", "S", "T", "P"}}), 1, 4, 3);

    const Lists sections{{"2", "7", "6"}, {"6", "2", "7"}};
    print("\nvector 2 7 6, BM25 6 2 7, k = 1:", ragpp::reciprocal_rank_fusion(sections, {1.0, {}}), 1, 3, 3);
    print("\nvector 2 7 6, BM25 6 2 7, k = 60:", ragpp::reciprocal_rank_fusion(sections), 1, 4, 3);
}
