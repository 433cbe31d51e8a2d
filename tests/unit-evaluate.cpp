#include <ragpp/eval/containment.hpp>
#include <ragpp/eval/evaluate.hpp>
#include <ragpp/eval/report.hpp>
#include <ragpp/eval/run.hpp>
#include <ragpp/eval/significance.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <filesystem>
#include <sstream>

using namespace ragpp;

namespace {

/// A pipeline returning a fixed candidate list per question text.
PipelineFn fixed(std::map<std::string, std::vector<Retrieved>> lists) {
    return [lists = std::move(lists)](std::string_view q, StageTimes& t) {
        t.emplace_back("lookup", 0.001);
        auto it = lists.find(std::string(q));
        return it == lists.end() ? std::vector<Retrieved>{} : it->second;
    };
}

/// A random question set with candidate lists: `n` questions ("q 0", ...: ids with a
/// space, escaped in TREC files), 1 to `max_labels` graded labels among `docs` documents
/// "doc N<suffix>" (the last question unanswerable), and for each a candidate list with
/// many tied scores; with `parts`, a third of the candidates are further parts ("#2")
/// of their section.
struct RandomSet {
    QuestionSet questions;
    std::map<std::string, std::vector<Retrieved>> lists;
};
RandomSet random_set(std::mt19937& rng, int n, int max_labels, int docs, const std::string& suffix, bool parts) {
    RandomSet set;
    for (int i = 0; i < n; ++i) {
        Question q;
        q.id = "q " + std::to_string(i);
        q.text = "text" + std::to_string(i);
        for (int d = 0; d < 1 + static_cast<int>(rng() % static_cast<unsigned>(max_labels)); ++d)
            q.relevant["doc " + std::to_string(rng() % static_cast<unsigned>(docs)) + suffix] = 1 + static_cast<double>(rng() % 3);
        if (i == n - 1) q.relevant.clear();
        std::vector<Retrieved> cands;
        for (int d = 0; d < docs; ++d)
            if (rng() % 2)
                cands.push_back({"doc " + std::to_string(d) + suffix + (parts && rng() % 3 == 0 ? "#2" : ""),
                                 static_cast<double>(rng() % 4)});
        std::stable_sort(cands.begin(), cands.end(), [](const auto& a, const auto& b) { return a.score > b.score; });
        set.lists[q.text] = cands;
        set.questions.push_back(q);
    }
    return set;
}

// --- an independent reading of TREC files, computing measures as trec_eval defines them
// (sort by score descending, then document id descending; ndcg_cut with gain = grade and
// discount log2(rank + 1); recall_k; recip_rank uncut), used as the oracle.
struct OracleRun {
    std::map<std::string, std::vector<std::pair<double, std::string>>> by_query;
};
OracleRun parse_run(const std::string& text) {
    OracleRun r;
    std::istringstream in(text);
    std::string q, q0, doc, name;
    long rank = 0;
    double score = 0;
    while (in >> q >> q0 >> doc >> rank >> score >> name) r.by_query[q].push_back({score, doc});
    for (auto& [qid, v] : r.by_query)
        std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
            return a.first != b.first ? a.first > b.first : a.second > b.second;
        });
    return r;
}
std::map<std::string, std::map<std::string, int>> parse_qrels(const std::string& text) {
    std::map<std::string, std::map<std::string, int>> q;
    std::istringstream in(text);
    std::string qid, zero, doc;
    int rel = 0;
    while (in >> qid >> zero >> doc >> rel) q[qid][doc] = rel;
    return q;
}
double oracle_ndcg(const std::vector<std::pair<double, std::string>>& run, const std::map<std::string, int>& rel, std::size_t k) {
    double dcg = 0;
    for (std::size_t i = 0; i < std::min(k, run.size()); ++i) {
        auto it = rel.find(run[i].second);
        if (it != rel.end() && it->second > 0) dcg += it->second / std::log2(static_cast<double>(i) + 2);
    }
    std::vector<int> g;
    for (const auto& [d, r] : rel)
        if (r > 0) g.push_back(r);
    std::sort(g.rbegin(), g.rend());
    double idcg = 0;
    for (std::size_t i = 0; i < std::min(k, g.size()); ++i) idcg += g[i] / std::log2(static_cast<double>(i) + 2);
    return idcg > 0 ? dcg / idcg : 0;
}

}  // namespace

TEST_CASE("evaluate collapses chunks to labels and classifies misses", "[evaluate]") {
    const QuestionSet qs{
        {"q1", "one", {{"a.md:1", 1}}, {}, {}},
        {"q2", "two", {{"b.md:5", 1}}, {}, {}},
        {"q3", "three", {{"z.md:1", 1}}, {}, {}},
        {"q4", "four", {}, {}, {}},
    };
    auto p = fixed({{"one", {{"a.md:1#2", 0.9}, {"a.md:1", 0.8}, {"c.md:3", 0.7}}},
                    {"two", {{"c.md:3", 0.9}, {"c.md:3#2", 0.85}, {"d.md:1", 0.8}, {"e.md:1", 0.7}, {"b.md:5#4", 0.6}}},
                    {"three", {{"c.md:3", 0.5}}},
                    {"four", {{"c.md:3", 0.5}}}});
    const auto r = evaluate("fixed", qs, p);
    // q1: the two chunks of a.md:1 count once, as the label, at rank 1.
    CHECK(r.outcomes()[0].ranking == std::vector<std::string>{"a.md:1", "c.md:3"});
    CHECK(r.outcomes()[0].keys[0] == "a.md:1#2");
    CHECK(r.miss(0, 1) == MissStage::none);
    // q2: c.md:3 and its part #2 collapse: ranking c.md:3, d.md:1, e.md:1, b.md:5 -> relevant at 4.
    CHECK(r.outcomes()[1].first_relevant == 4);
    CHECK(r.miss(1, 3) == MissStage::ranking);
    CHECK(r.miss(1, 5) == MissStage::none);
    CHECK(r.miss(2, 5) == MissStage::retrieval);
    CHECK(r.miss(3, 5) == MissStage::none);
    const auto hit3 = r.summary(Measure::hit_rate, 3);
    CHECK(hit3.mean == Approx(1.0 / 3));
    CHECK(hit3.questions == 3);
    CHECK(hit3.without_relevant == 1);
    CHECK(r.summary(Measure::mrr, no_cutoff).mean == Approx((1.0 + 0.25 + 0) / 3));
    CHECK(r.stage_latencies().front().first == "lookup");
    const std::string table = format_questions(r, 3);
    CHECK_THAT(table, Catch::Contains("ranking: first relevant at rank 4"));
    CHECK_THAT(table, Catch::Contains("retrieval: no relevant passage among the candidates"));
    CHECK_THAT(table, Catch::Contains("1 ok, 1 missed by ranking, 1 missed by retrieval, 1 without a relevant passage"));
}

TEST_CASE("answer containment: normalised answers in the top k passages", "[evaluate][containment]") {
    // Normalisation: case, accents, full-width forms, punctuation and spacing folded;
    // whole words only.
    CHECK(answer_match_form("  Préavis : DEUX-mois. ") == " preavis deux mois ");
    CHECK(contains_answer("Le préavis est de DEUX   mois, par lettre.", "deux mois"));
    CHECK(contains_answer("Ｍｘ－２００ est couvert", "MX 200"));
    CHECK(contains_answer("l'été 2025", "Ete"));
    CHECK_FALSE(contains_answer("la moisson", "mois"));
    CHECK_FALSE(contains_answer("deux grands mois", "deux mois"));
    CHECK_FALSE(contains_answer("anything", " ?! "));  // an answer without words is never found
    // Four questions with answers (one answer found nowhere, one at rank 3), one without.
    const std::map<std::string, std::string> texts{
        {"a.md:1", "The notice period is two months."}, {"b.md:1", "Backups are kept for 30 days."},
        {"c.md:1", "Ports: 8080."},                     {"d.md:1", "Lima is the capital of Peru."}};
    QuestionSet qs{{"q1", "one", {{"a.md:1", 1}}, std::string("Two Months"), {}},
                   {"q2", "two", {{"b.md:1", 1}}, std::string("30 days"), {}},
                   {"q3", "three", {{"c.md:1", 1}}, std::string("Lima"), {}},
                   {"q4", "four", {{"c.md:1", 1}}, std::string("Oslo"), {}},
                   {"q5", "five", {{"c.md:1", 1}}, std::nullopt, {}}};
    auto p = fixed({{"one", {{"a.md:1", 0.9}, {"b.md:1", 0.8}}},
                    {"two", {{"a.md:1", 0.9}, {"c.md:1", 0.8}, {"b.md:1#2", 0.7}}},
                    {"three", {{"d.md:1", 0.9}}},
                    {"four", {{"a.md:1", 0.9}, {"d.md:1", 0.8}}},
                    {"five", {{"a.md:1", 0.9}}}});
    auto r = evaluate("fixed", qs, p);
    CHECK_FALSE(r.answer_containment(1).has_value());  // not looked for yet
    find_answers(
        r,
        [&](std::string_view id) {
            const auto it = texts.find(std::string(section_of(id)));
            return it == texts.end() ? std::string() : it->second;
        },
        10);
    CHECK(r.outcomes()[0].answer_rank == 1);
    CHECK(r.outcomes()[1].answer_rank == 3);  // b.md:1#2, the third entry
    CHECK(r.outcomes()[2].answer_rank == 1);
    CHECK(r.outcomes()[3].answer_rank == 0);
    CHECK(r.questions_with_answer() == 4);
    // k = 1: q1, q3 -> 2/4; k = 2: the same; k = 3: q2 too -> 3/4.
    CHECK(*r.answer_containment(1) == Approx(0.5));
    CHECK(*r.answer_containment(2) == Approx(0.5));
    CHECK(*r.answer_containment(3) == Approx(0.75));
    CHECK(*r.answer_containment(10) == Approx(0.75));
    const std::vector<std::size_t> ks{1, 3};
    const auto table = format_answer_containment({r}, ks);
    CHECK_THAT(table, Catch::Contains("share of the 4 questions with a reference answer"));
    CHECK_THAT(table, Catch::Contains("fixed     0.5000  0.7500"));
    const auto j = report_json({r}, ks, 1);
    CHECK(j["pipelines"][0]["metrics"]["answer_containment"]["3"].get<double>() == Approx(0.75));
    CHECK(j["pipelines"][0]["questions"][1]["answer_rank"].get<std::size_t>() == 3);
    // max_rank bounds the search.
    auto r2 = evaluate("fixed", qs, p);
    find_answers(r2, [&](std::string_view id) { return texts.at(std::string(section_of(id))); }, 2);
    CHECK(r2.outcomes()[1].answer_rank == 0);

    // The ceiling: which answers occur anywhere in the corpus (one pass, any rank).
    // "Two Months", "30 days", "Lima" occur; "Oslo" nowhere; q5 has no answer; "mois"
    // is not in "moisson", and a multi-word answer must be a contiguous run of words.
    AnswerFinder finder({"Two Months", "30 days", "Lima", "Oslo", "", "mois", "capital Peru", "capital of peru"});
    for (const auto& [id, text] : texts) finder.scan(text);
    finder.scan("la moisson");
    CHECK(finder.found() == std::vector<bool>{true, true, true, false, false, false, false, true});
    CHECK(finder.found_count() == 4);
    // Against the exhaustive check: contains_answer over every passage.
    const std::vector<std::string> answers{"Two Months", "30 days", "Lima", "Oslo", "", "mois", "capital Peru",
                                           "capital of peru"};
    for (std::size_t i = 0; i < answers.size(); ++i) {
        bool any = contains_answer("la moisson", answers[i]);
        for (const auto& [id, text] : texts) any = any || contains_answer(text, answers[i]);
        CHECK(finder.found()[i] == any);
    }
}

TEST_CASE("TREC run and qrels files reproduce our figures under trec_eval's rules", "[evaluate][trec]") {
    // Random graded judgments and candidate lists with many tied scores: trec_eval would
    // order ties by decreasing document id, we order them by increasing id; the written
    // rank scores must make trec_eval see our order.
    const auto seed = GENERATE(take(20, random(0u, 100000u)));
    std::mt19937 rng(seed);
    const auto [qs, lists] = random_set(rng, 15, 5, 30, ":1", false);
    const auto r = evaluate("run", qs, fixed(lists));
    std::ostringstream run, qrels;
    write_trec_run(run, r);
    write_trec_qrels(qrels, qs);
    const auto parsed = parse_run(run.str());
    const auto judged = parse_qrels(qrels.str());
    CHECK(judged.size() == 14);  // the unanswerable question is left out
    for (std::size_t k : {1, 3, 5, 10, 20}) {
        double sum_ndcg = 0, sum_recall = 0;
        for (const auto& [qid, rel] : judged) {
            const auto it = parsed.by_query.find(qid);
            const std::vector<std::pair<double, std::string>> empty;
            const auto& list = it == parsed.by_query.end() ? empty : it->second;
            sum_ndcg += oracle_ndcg(list, rel, k);
            std::size_t found = 0, n_rel = 0;
            for (const auto& [d, g] : rel) n_rel += g > 0 ? 1 : 0;
            for (std::size_t x = 0; x < std::min(k, list.size()); ++x) found += rel.count(list[x].second) ? 1 : 0;
            sum_recall += static_cast<double>(found) / static_cast<double>(n_rel);
        }
        CHECK(r.summary(Measure::ndcg, k).mean == Approx(sum_ndcg / 14).margin(1e-12));
        CHECK(r.summary(Measure::recall, k).mean == Approx(sum_recall / 14).margin(1e-12));
    }
}

namespace {
ragpp::TrecRun run_of(const std::string& text, const std::string& source = "r.run") {
    std::istringstream in(text);
    return parse_trec_run(in, source);
}
std::string parse_error_of(const std::string& text) {
    try {
        (void)run_of(text, "bad.run");
    } catch (const ParseError& e) {
        const std::string what = e.what();
        const std::string prefix = "[ragpp.parse_error] ";
        return what.starts_with(prefix) ? what.substr(prefix.size()) : "unexpected message: " + what;
    }
    return "no error";
}
}  // namespace

TEST_CASE("TREC run files are read with trec_eval's rules", "[evaluate][trec]") {
    // Ranks are ignored, scores descending, ties by docno in decreasing byte order
    // ('b' > 'a' > 'B'); comments, blank lines and CR are skipped; "+2" and "1e-3" are numbers.
    const auto run = run_of("# a comment\n"
                            "q1 Q0 a 1 1.5 mine\r\n"
                            "\n"
                            "q1 Q0 b 2 1.5 other\n"
                            "q1\tQ0   B 3 +1.5 x\n"
                            "q1 Q0 z 4 2 x\n"
                            "q2 Q0 y 9 1e-3 x\n"
                            "q1 Q0 c 0 -1 x\n");
    CHECK(run.tag == "mine");
    CHECK(run.lines == 6);
    REQUIRE(run.queries.size() == 2);
    std::vector<std::string> order;
    for (const auto& e : run.queries.at("q1")) order.push_back(e.docno);
    CHECK(order == std::vector<std::string>{"z", "b", "a", "B", "c"});
    CHECK(run.queries.at("q2").front().score == 1e-3);

    CHECK(parse_error_of("q1 Q0 a 1 1 x\nq1 Q0 b 2 1\n") ==
          "bad.run:2: expected 6 columns (qid Q0 docno rank score tag), found 5");
    CHECK(parse_error_of("q1 Q0 a 1 1 x extra\n").find("bad.run:1: expected 6 columns") != std::string::npos);
    CHECK(parse_error_of("q1 Q0 a 1 high x\n") == "bad.run:1: score 'high' is not a finite number");
    CHECK(parse_error_of("\nq1 Q0 a 1 nan x\n") == "bad.run:2: score 'nan' is not a finite number");
    CHECK(parse_error_of("q1 Q0 a 1 1e999 x\n").find("bad.run:1: score '1e999'") != std::string::npos);
    CHECK(parse_error_of("q1 Q0 a 1 1.5x x\n").find("bad.run:1: score '1.5x'") != std::string::npos);
    CHECK(parse_error_of("q1 Q0 a 1 1 x\nq2 Q0 a 1 1 x\nq1 Q0 a 2 0.5 x\n") ==
          "bad.run:3: docno 'a' appears twice for query 'q1' (first at line 1)");
    CHECK(parse_error_of("").find("bad.run: no run line") == 0);
    CHECK(parse_error_of("# only a comment\n\n").find("bad.run: no run line") == 0);
    CHECK_THROWS_AS(read_trec_run("no-such-dir/no.run"), IoError);
    CHECK_THROWS_AS(read_trec_run(std::filesystem::temp_directory_path()), IoError);
}

TEST_CASE("a run written from a report and read back gives the report's figures", "[evaluate][trec]") {
    // The oracle is ragpp's own evaluation of the same candidates: every measure, every k,
    // every question, through ids with spaces (written with '_') and chunk ids that are
    // further parts ("#2") of a labelled section.
    const auto seed = GENERATE(take(20, random(0u, 100000u)));
    std::mt19937 rng(seed);
    const auto [qs, lists] = random_set(rng, 12, 4, 20, ".md:1", true);
    const auto r = evaluate("bm25", qs, fixed(lists));
    for (const auto docnos : {RunDocnos::chunks, RunDocnos::labels}) {
        std::ostringstream out;
        write_trec_run(out, r, no_cutoff, docnos);
        if (out.str().empty()) continue;  // no candidate at all for any question
        const auto ev = evaluate_run("run:bm25", qs, run_of(out.str()));
        const auto& back = ev.report;
        CHECK(ev.unknown_queries.empty());
        // Labels come back as written; other entries (sections) as TREC tokens.
        auto tokens = [](std::vector<std::string> ids) {
            for (auto& id : ids) id = trec_id(id);
            return ids;
        };
        for (std::size_t i = 0; i < qs.size(); ++i) {
            CHECK(tokens(back.outcomes()[i].ranking) == tokens(r.outcomes()[i].ranking));
            const auto& want = r.outcomes()[i].ranking;
            for (std::size_t x = 0; x < std::min(want.size(), back.outcomes()[i].ranking.size()); ++x)
                if (qs[i].relevant.contains(want[x])) CHECK(back.outcomes()[i].ranking[x] == want[x]);
            CHECK(back.outcomes()[i].first_relevant == r.outcomes()[i].first_relevant);
            for (Measure m : all_measures)
                for (std::size_t k : {std::size_t{1}, std::size_t{3}, std::size_t{10}, no_cutoff})
                    CHECK(back.value(i, m, k) == r.value(i, m, k));
        }
        if (docnos == RunDocnos::chunks)
            for (std::size_t i = 0; i < qs.size(); ++i) CHECK(back.outcomes()[i].keys == tokens(r.outcomes()[i].keys));
    }
}

TEST_CASE("a run with tied scores is measured as trec_eval measures it", "[evaluate][trec]") {
    // An independent oracle (parse_run and oracle_ndcg above: sort by score, then docno
    // descending) on runs with many ties and queries missing from the run (zero-scored).
    const auto seed = GENERATE(take(20, random(0u, 100000u)));
    std::mt19937 rng(seed);
    QuestionSet qs;
    std::ostringstream text, qrels;
    for (int i = 0; i < 10; ++i) {
        Question q;
        q.id = "q" + std::to_string(i);
        for (int d = 0; d < 1 + static_cast<int>(rng() % 4); ++d)
            q.relevant["d" + std::to_string(rng() % 15)] = 1 + static_cast<double>(rng() % 3);
        qs.push_back(q);
        if (i == 0 || rng() % 5 == 0) continue;  // not in the run
        for (int d = 0; d < 15; ++d)
            if (rng() % 2) text << q.id << " Q0 d" << d << " " << rng() % 100 << " " << rng() % 3 << " other\n";
    }
    text << "q1 Q0 zz 1 0 other\n";  // at least one line
    write_trec_qrels(qrels, qs);
    const auto ev = evaluate_run("run:other", qs, run_of(text.str()));
    const auto parsed = parse_run(text.str());
    const auto judged = parse_qrels(qrels.str());
    CHECK(ev.questions_missing == qs.size() - parsed.by_query.size());
    CHECK(ev.questions_missing >= 1);
    for (std::size_t k : {1, 3, 5, 10}) {
        double sum = 0;
        for (const auto& [qid, rel] : judged) {
            const auto it = parsed.by_query.find(qid);
            if (it != parsed.by_query.end()) sum += oracle_ndcg(it->second, rel, k);
        }
        CHECK(ev.report.summary(Measure::ndcg, k).mean == Approx(sum / static_cast<double>(qs.size())).margin(1e-12));
    }
}

TEST_CASE("a run's docnos meet chunk labels at chunk or document level", "[evaluate][trec]") {
    CHECK(document_of("a.md:12#2") == "a.md");
    CHECK(document_of("a.md:12") == "a.md");
    CHECK(document_of("doc7#3") == "doc7");
    CHECK(document_of("a.md") == "a.md");
    CHECK(document_of("c:d.md") == "c:d.md");
    Question q;
    q.id = "q";
    q.relevant = {{"a.md:3", 1}, {"a.md:9", 1}, {"b.md:1", 1}};
    const QuestionSet qs{q};
    const auto run = run_of("q Q0 a.md 1 3 x\nq Q0 c.md 2 2 x\nq Q0 b.md:1#2 3 1 x\nextra Q0 a.md 1 1 x\n");
    // Chunk level: the document a.md is no passage; b.md:1#2 is a part of b.md:1.
    const auto chunk = evaluate_run("run", qs, run);
    CHECK(chunk.report.outcomes()[0].ranking == std::vector<std::string>{"a.md", "c.md", "b.md:1"});
    CHECK(chunk.report.outcomes()[0].first_relevant == 3);
    CHECK(chunk.report.value(0, Measure::recall, 3) == Approx(1.0 / 3));
    CHECK(chunk.unknown_queries == std::vector<std::string>{"extra"});
    CHECK(chunk.questions_missing == 0);
    // Document level: a.md counts as its smallest label a.md:3 (one label per document).
    const auto doc = evaluate_run("run", qs, run, RunMatch::document);
    CHECK(doc.report.outcomes()[0].ranking == std::vector<std::string>{"a.md:3", "c.md", "b.md:1"});
    CHECK(doc.report.outcomes()[0].keys == std::vector<std::string>{"a.md", "c.md", "b.md:1#2"});
    CHECK(doc.report.outcomes()[0].first_relevant == 1);
    CHECK(doc.report.value(0, Measure::recall, 3) == Approx(2.0 / 3));
    // A question absent from the run: zero, not skipped.
    Question other;
    other.id = "absent";
    other.relevant = {{"a.md:3", 1}};
    Question unanswerable;  // absent too, but out of every average: not counted missing
    unanswerable.id = "none";
    const auto two = evaluate_run("run", QuestionSet{q, other, unanswerable}, run);
    CHECK(two.questions_missing == 1);
    CHECK(two.report.summary(Measure::recall, 3).without_relevant == 1);
    CHECK(two.report.value(1, Measure::ndcg, 10) == 0.0);
    CHECK(two.report.summary(Measure::recall, 3).mean == Approx(1.0 / 6));
}

TEST_CASE("paired randomization test", "[evaluate][significance]") {
    const std::vector<double> a{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};
    // Identical systems: difference 0, p = 1.
    const auto same = paired_randomization_test(a, a, 2000);
    CHECK(same.difference == 0.0);
    CHECK(same.p_value == 1.0);
    // b better on every one of 10 questions by the same amount: only the all-plus and
    // all-minus sign patterns reach the observed |sum|, so p is about 2 / 2^10.
    std::vector<double> b = a;
    for (auto& x : b) x += 0.1;
    const auto t = paired_randomization_test(a, b, 100000);
    CHECK(t.difference == Approx(0.1));
    CHECK(t.p_value == Approx(2.0 / 1024).margin(0.001));
    // Exhaustive oracle on 6 questions with mixed signs.
    const std::vector<double> x{0.3, 0.1, 0.5, 0.2, 0.9, 0.4}, y{0.5, 0.1, 0.4, 0.6, 0.9, 0.8};
    double observed = 0;
    for (std::size_t i = 0; i < x.size(); ++i) observed += y[i] - x[i];
    int count = 0;
    for (int mask = 0; mask < 64; ++mask) {
        double s = 0;
        for (std::size_t i = 0; i < x.size(); ++i) s += ((mask >> i) & 1) ? (y[i] - x[i]) : -(y[i] - x[i]);
        count += std::fabs(s) >= std::fabs(observed) - 1e-12 ? 1 : 0;
    }
    CHECK(paired_randomization_test(x, y, 200000).p_value == Approx(count / 64.0).margin(0.01));
    CHECK_THROWS_AS(paired_randomization_test(a, {1.0}), InvalidArgument);
}

TEST_CASE("reports: table, JSON and SVG carry the figures", "[evaluate][report]") {
    const QuestionSet qs{{"q1", "one", {{"a:1", 1}}, {}, {}}, {"q2", "two", {{"b:1", 1}}, {}, {}}};
    std::vector<PipelineReport> reports;
    reports.push_back(evaluate("bm25", qs, fixed({{"one", {{"a:1", 1}}}, {"two", {{"c:1", 1}, {"b:1", 0.5}}}})));
    reports.push_back(evaluate("hybrid", qs, fixed({{"one", {{"a:1", 1}}}, {"two", {{"b:1", 1}}}})));
    const std::vector<std::size_t> ks{1, 2};
    const auto table = format_metrics_table(reports, ks);
    CHECK_THAT(table, Catch::Contains("bm25        1    0.5000  0.5000"));
    CHECK_THAT(table, Catch::Contains("hybrid      1    1.0000  1.0000"));
    CHECK_THAT(format_comparisons(reports, ks, 1000), Catch::Contains("@1 +0.5000"));
    const auto j = report_json(reports, ks, 1);
    CHECK(j["pipelines"][0]["metrics"]["recall"]["2"] == 1.0);
    CHECK(j["pipelines"][0]["questions"][1]["status"] == "ranking");
    CHECK(j["comparisons"].size() == 2);
    const auto svg = recall_chart_svg(reports, ks);
    CHECK_THAT(svg, Catch::StartsWith("<svg"));
    CHECK_THAT(svg, Catch::Contains("hybrid recall@1 = 1.000"));
    CHECK_THAT(svg, Catch::Contains("bm25 recall@1 = 0.500"));
}
