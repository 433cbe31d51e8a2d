// 02: hit rate at k ("rappel à k"): the share of questions with at least one expected
// passage among the first k results. Output compared with 02_hit_rate.expected.
#include <ragpp/eval/metrics.hpp>

#include <cstdio>
#include <string>
#include <vector>

int main() {
    using Question = ragpp::RankedQuestion<std::string>;
    const std::vector<Question> questions{
        {{"C", "A", "F"}, {{"A", 1}}},  // q1 expects A: found at rank 2
        {{"B", "D", "E"}, {{"E", 1}}},  // q2 expects E: found at rank 3
        {{"F", "C", "B"}, {{"D", 1}}},  // q3 expects D: not found
    };
    for (std::size_t k : {1, 2, 3}) {
        const auto hit = ragpp::hit_rate_at_k(questions, k);
        const auto mrr = ragpp::mrr(questions, k);
        std::printf("k = %zu: hit rate %.2f, MRR@k %.3f over %zu questions\n", k, hit.mean, mrr.mean, hit.questions);
    }
}
