// ragpp: significance of a difference between two pipelines evaluated on the same
// questions: the paired randomization (permutation) test.
//
// Under the null hypothesis the two systems are exchangeable on each question, so the
// sign of each per-question difference is random. The test flips each sign with
// probability 1/2, `trials` times, and counts how often the absolute mean difference
// is at least the observed one. p = (count + 1) / (trials + 1) (never 0). Source:
// M. D. Smucker, J. Allan, B. Carterette, "A Comparison of Statistical Significance
// Tests for Information Retrieval Evaluation", CIKM 2007, which recommends this test.
// The random generator is seeded, so the p-value of a run is reproducible.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <ragpp/core/error.hpp>

namespace ragpp {

struct PairedTest {
    /// mean(b) - mean(a)
    double difference = 0.0;
    /// Two-sided p-value.
    double p_value = 1.0;
    std::size_t questions = 0;
};

[[nodiscard]] inline PairedTest paired_randomization_test(const std::vector<double>& a, const std::vector<double>& b,
                                                          std::size_t trials = 10000, std::uint64_t seed = 20261129) {
    if (a.size() != b.size())
        throw InvalidArgument("paired_randomization_test: " + std::to_string(a.size()) + " and " +
                              std::to_string(b.size()) + " values (the same questions are needed)");
    if (trials == 0) throw InvalidArgument("paired_randomization_test: trials must be >= 1");
    PairedTest t;
    t.questions = a.size();
    if (a.empty()) return t;
    std::vector<double> d(a.size());
    double sum = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        d[i] = b[i] - a[i];
        sum += d[i];
    }
    const double n = static_cast<double>(d.size());
    t.difference = sum / n;
    const double observed = std::fabs(sum) - 1e-12 * (1.0 + std::fabs(sum));  // tolerate rounding
    std::mt19937_64 rng(seed);
    std::size_t at_least = 0;
    for (std::size_t trial = 0; trial < trials; ++trial) {
        double s = 0;
        std::uint64_t bits = 0;
        for (std::size_t i = 0; i < d.size(); ++i) {
            if (i % 64 == 0) bits = rng();
            s += (bits & 1U) ? d[i] : -d[i];
            bits >>= 1U;
        }
        if (std::fabs(s) >= observed) ++at_least;
    }
    t.p_value = static_cast<double>(at_least + 1) / static_cast<double>(trials + 1);
    return t;
}

}  // namespace ragpp
