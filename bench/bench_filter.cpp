// bench_filter [DOCS] [RUNS]: builds a MetadataIndex over DOCS synthetic documents
// (default 1,000,000; fixed seed) and prints one JSON line with the median time, in
// microseconds over RUNS runs (default 51), to compile each filter to a DocSet, the
// number of documents it selects, the build time, the resident memory added, and the
// median time of a brute-force scan (Filter::matches on every document, 5 runs).
//
// Documents: type = one of 10 strings (t0 is 10% of documents, t9 is 0.1%),
// year = 2000..2024 (uniform), date = a day of 2020..2024, groups = 1..3 of 50 groups
// (5% of documents have no groups field).
#include <ragpp/filter/access.hpp>
#include <ragpp/filter/filter.hpp>
#include <ragpp/filter/metadata_index.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

double resident_mb() {
    std::ifstream in("/proc/self/statm");
    long pages = 0, resident = 0;
    in >> pages >> resident;
    return static_cast<double>(resident) * static_cast<double>(::sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

/// prefix followed by i ("t3", "g17"). (Not `"t" + std::to_string(i)`: GCC 12 warns
/// falsely on it at -O3, -Werror=restrict.)
std::string label(char prefix, int i) {
    std::string s(1, prefix);
    s += std::to_string(i);
    return s;
}

template <class F>
double median_us(int runs, F&& f) {
    std::vector<double> t;
    for (int r = 0; r < runs; ++r) {
        const auto a = std::chrono::steady_clock::now();
        f();
        const auto b = std::chrono::steady_clock::now();
        t.push_back(std::chrono::duration<double, std::micro>(b - a).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
    const int runs = argc > 2 ? std::atoi(argv[2]) : 51;
    std::mt19937_64 rng(42);
    // type: t_i with weight proportional to 100, 60, ...; t0 = 10%, t9 = 0.1%.
    const std::vector<double> weights{10.0, 20.0, 20.0, 15.0, 15.0, 10.0, 5.0, 3.0, 1.9, 0.1};
    std::discrete_distribution<int> type_dist(weights.begin(), weights.end());
    std::uniform_int_distribution<int> year_dist(2000, 2024), day_dist(0, 5 * 365), group_dist(0, 49), ngroups(1, 3),
        pct(0, 99);
    const ragpp::Date base = ragpp::Date::parse("2020-01-01");

    std::vector<ragpp::Metadata> docs(n);
    for (auto& m : docs) {
        m["type"] = label('t', type_dist(rng));
        m["year"] = static_cast<double>(year_dist(rng));
        m["date"] = ragpp::Date{base.days + day_dist(rng)};
        if (pct(rng) >= 5) {
            std::vector<std::string> g;
            for (int k = ngroups(rng); k > 0; --k) g.push_back(label('g', group_dist(rng)));
            m["groups"] = std::move(g);
        }
    }
    const double mb0 = resident_mb();
    const auto t0 = std::chrono::steady_clock::now();
    ragpp::MetadataIndex index;
    for (std::size_t i = 0; i < n; ++i) index.add_document(static_cast<ragpp::DocId>(i), docs[i]);
    const double build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double index_mb = resident_mb() - mb0;

    const ragpp::AccessPolicy policy;  // deny unlabeled
    const auto who = ragpp::Principal::with_groups({"g1", "g2"});
    struct Case {
        const char* name;
        ragpp::Filter filter;
    };
    const std::vector<Case> cases{
        {"eq_common", ragpp::Filter::eq("type", std::string("t0"))},
        {"eq_rare", ragpp::Filter::eq("type", std::string("t9"))},
        {"eq_number", ragpp::Filter::eq("year", 2010.0)},
        {"range_years", ragpp::Filter::range("year", 2010.0, 2014.0)},
        {"range_dates", ragpp::Filter::range("date", ragpp::Date::parse("2023-01-01"), std::nullopt)},
        {"access_2_groups", policy.filter_for(who)},
        {"access_and_eq", policy.filter_for(who) && ragpp::Filter::eq("type", std::string("t0"))},
    };
    std::printf("{\"bench\":\"filter\",\"docs\":%zu,\"runs\":%d,\"build_s\":%.3f,\"index_mb\":%.1f", n, runs, build_s,
                index_mb);
    std::size_t sink = 0;
    for (const auto& c : cases) {
        std::size_t selected = 0;
        const double us = median_us(runs, [&] {
            const ragpp::DocSet s = index.compile(c.filter);
            selected = s.count();
        });
        sink += selected;
        std::printf(",\"%s_us\":%.1f,\"%s_docs\":%zu", c.name, us, c.name, selected);
    }
    // The brute-force baseline for the common equality: every document's metadata read.
    const double scan_us = median_us(5, [&] {
        ragpp::DocSet s(n);
        for (std::size_t i = 0; i < n; ++i)
            if (cases[0].filter.matches(docs[i])) s.set(static_cast<ragpp::DocId>(i));
        sink += s.count();
    });
    std::printf(",\"scan_eq_common_us\":%.1f,\"check\":%zu}\n", scan_us, sink);
    return 0;
}
