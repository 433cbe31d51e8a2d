#include <ragpp/eval/evaluate_retriever.hpp>
#include <ragpp/retrieve/retriever.hpp>

#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

using namespace ragpp;

namespace {

/// FixedIndex's own per-call options: the allowed set and a knob of its own, which it
/// records (as a BM25 index has k1), to check what each level is given.
struct FixedOptions : SearchOptions {
    std::optional<double> knob;
    FixedOptions() = default;
    template <std::same_as<SearchOptions> O>
    FixedOptions(const O& filter) : SearchOptions(filter) {}  // NOLINT(google-explicit-constructor)
};

/// A test index that returns a fixed ranking of document keys (whatever the query),
/// restricted to the documents it holds and the allowed set; scores 10, 9, 8, ...
class FixedIndex {
public:
    using search_options = FixedOptions;
    explicit FixedIndex(std::vector<std::string> order, std::string reject = {})
        : order_(std::move(order)), reject_(std::move(reject)) {}
    /// Records the options of every search in `*log`.
    FixedIndex(std::vector<std::string> order, std::shared_ptr<std::vector<FixedOptions>> log)
        : order_(std::move(order)), log_(std::move(log)) {}
    void add_document(DocId id, const Document& doc) {
        if (!reject_.empty() && doc.text.find(reject_) != std::string::npos)
            throw InvalidArgument("FixedIndex rejects '" + reject_ + "'");
        if (!docs_.emplace(id, doc.id).second) throw DuplicateError("FixedIndex: DocId taken");
    }
    void remove_document(DocId id) {
        if (docs_.erase(id) == 0) throw NotFoundError("FixedIndex: no such DocId");
    }
    [[nodiscard]] std::vector<Hit> search(std::string_view, std::size_t k, const FixedOptions& o = {}) const {
        if (log_) log_->push_back(o);
        std::vector<Hit> out;
        float score = 10;
        for (const auto& key : order_) {
            for (const auto& [id, k2] : docs_)
                if (k2 == key && o.allows(id) && out.size() < k) out.push_back({id, score});
            score -= 1;
        }
        return out;
    }
    [[nodiscard]] std::size_t size() const { return docs_.size(); }
    [[nodiscard]] bool holds(DocId id) const { return docs_.count(id) != 0; }

private:
    std::vector<std::string> order_;
    std::string reject_;
    std::shared_ptr<std::vector<FixedOptions>> log_;
    std::map<DocId, std::string> docs_;
};
static_assert(SearchIndex<FixedIndex>);
static_assert(SearchIndex<Retriever<FixedIndex, FixedIndex>>);
// Each level's options are typed: a Retriever's hold its indexes' own, one per index.
static_assert(std::same_as<Retriever<FixedIndex, Retriever<FixedIndex>>::search_options,
                           RetrieverSearchOptions<FixedOptions, RetrieverSearchOptions<FixedOptions>>>);
static_assert(std::tuple_size_v<decltype(Retriever<FixedIndex, FixedIndex>::search_options::per_index)> == 2);

Document doc(std::string key, std::string text = "") { return Document{std::move(key), std::move(text), {}}; }

template <class R>
void add_all(R& r, const std::vector<std::string>& keys) {
    for (const auto& k : keys) r.add_document(doc(k));
}

std::vector<std::string> keys_of(const std::vector<Result>& results) {
    std::vector<std::string> out;
    for (const auto& r : results) out.push_back(r.document->id);
    return out;
}

}  // namespace

TEST_CASE("Retriever fuses the reference lists through search", "[retriever]") {
    Retriever r(FixedIndex({"C", "A", "F", "E", "G", "B", "H", "I", "D"}),
                FixedIndex({"D", "B", "A", "J", "E", "K", "F", "C"}));
    add_all(r, {"A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K"});
    const auto results = r.search("anything", 6);
    REQUIRE(keys_of(results) == std::vector<std::string>{"A", "B", "C", "E", "D", "F"});
    const std::vector<double> scores{32.00, 31.28, 31.10, 31.01, 30.89, 30.80};
    for (std::size_t i = 0; i < 6; ++i) CHECK(std::round(results[i].score * 100000) / 100 == Approx(scores[i]));
    // The trace: A is #2 by words (score 9) and #3 by meaning (score 8).
    REQUIRE(results[0].trace.size() == 2);
    CHECK(results[0].trace[0].rank == 2u);
    CHECK(results[0].trace[0].score == 9.0);
    CHECK(results[0].trace[1].rank == 3u);
    CHECK(results[0].trace[1].score == 8.0);
    CHECK(results[0].document->id == "A");
    CHECK(r.size() == 11);
}

TEST_CASE("Retriever reproduces P Q R S / R S T P and the k = 1 section example", "[retriever]") {
    Retriever r(FixedIndex({"P", "Q", "R", "S"}), FixedIndex({"R", "S", "T", "P"}));
    add_all(r, {"P", "Q", "R", "S", "T"});
    CHECK(keys_of(r.search("q", 3)) == std::vector<std::string>{"R", "P", "S"});

    Retriever s(RetrieverOptions{1.0, {}, 100}, FixedIndex({"2", "7", "6"}), FixedIndex({"6", "2", "7"}));
    add_all(s, {"2", "6", "7"});
    auto res = s.search("q", 3);
    REQUIRE(keys_of(res) == std::vector<std::string>{"2", "6", "7"});
    CHECK(std::round(res[0].score * 1000) / 1000 == Approx(0.833));
    CHECK(std::round(res[1].score * 1000) / 1000 == Approx(0.75));
    CHECK(std::round(res[2].score * 1000) / 1000 == Approx(0.583));
    decltype(s)::search_options k60;
    k60.rrf_k = 60;
    res = s.search("q", 3, k60);
    CHECK(std::round(res[0].score * 10000) / 10000 == Approx(0.0325));
    CHECK(std::round(res[1].score * 10000) / 10000 == Approx(0.0323));
    CHECK(std::round(res[2].score * 10000) / 10000 == Approx(0.0320));
}

TEST_CASE("Retriever add_document is all or nothing", "[retriever]") {
    Retriever r(FixedIndex({"a", "b", "c"}), FixedIndex({"c", "b", "a"}, "poison"));
    CHECK(r.add_document(doc("a")) == 0u);
    // The second index throws: the first index and the store must not keep it.
    CHECK_THROWS_AS(r.add_document(doc("b", "poison pill")), InvalidArgument);
    CHECK(r.size() == 1);
    CHECK_FALSE(r.index<0>().holds(1));
    CHECK_FALSE(r.store().find("b").has_value());
    // The failed add handed out no id: the next document gets id 1.
    CHECK(r.add_document(doc("b")) == 1u);
    // A duplicate key fails in the store before any index sees it.
    CHECK_THROWS_AS(r.add_document(doc("a")), DuplicateError);
    CHECK(r.size() == 2);
    CHECK(r.index<0>().size() == 2);
    CHECK(r.index<1>().size() == 2);
}

TEST_CASE("Retriever remove_document removes from every index, ids are never reused", "[retriever]") {
    Retriever r(FixedIndex({"a", "b", "c"}), FixedIndex({"c", "b", "a"}));
    add_all(r, {"a", "b", "c"});
    r.remove_document(std::string_view("b"));
    CHECK(r.size() == 2);
    CHECK_FALSE(r.index<0>().holds(1));
    CHECK_FALSE(r.index<1>().holds(1));
    CHECK(keys_of(r.search("q", 10)) == std::vector<std::string>{"a", "c"});
    CHECK_THROWS_AS(r.remove_document(DocId{1}), NotFoundError);
    CHECK_THROWS_WITH(r.remove_document(std::string_view("zz")), Catch::Contains("'zz'"));
    // "b" may come back, under a new id.
    CHECK(r.add_document(doc("b")) == 3u);
}

TEST_CASE("Retriever results keep their document alive after removal", "[retriever]") {
    Retriever r(FixedIndex({"a"}));
    r.add_document(doc("a", "text of a"));
    auto res = r.search("q", 1);
    r.remove_document(DocId{0});
    REQUIRE(res.size() == 1);
    CHECK(res[0].document->text == "text of a");
}

TEST_CASE("Retriever applies the allowed set in every index and the trace never leaks", "[retriever]") {
    Retriever r(FixedIndex({"a", "b", "c", "d"}), FixedIndex({"d", "c", "b", "a"}));
    add_all(r, {"a", "b", "c", "d"});
    const auto opts = SearchOptions::only(DocSet(4, {1, 3}));
    const auto res = r.search("q", 10, opts);
    CHECK(keys_of(res) == std::vector<std::string>{"b", "d"});
    for (const auto& x : res) CHECK(opts.allows(x.id));
}

TEST_CASE("Retriever weights: zero silences an index, and options are validated", "[retriever]") {
    Retriever r(FixedIndex({"a", "b"}), FixedIndex({"b", "a"}));
    add_all(r, {"a", "b"});
    decltype(r)::search_options o;
    o.weights = {0.0, 1.0};
    auto res = r.search("q", 2, o);
    CHECK(keys_of(res) == std::vector<std::string>{"b", "a"});
    CHECK_FALSE(res[0].trace[0].rank.has_value());  // index 0 was not queried
    o.weights = {1.0};
    CHECK_THROWS_WITH(r.search("q", 2, o), Catch::Contains("1 weights for 2 indexes"));
    o.weights = {1.0, -1.0};
    CHECK_THROWS_AS(r.search("q", 2, o), InvalidArgument);
    CHECK_THROWS_AS(r.set_options(RetrieverOptions{-1, {}, 10}), InvalidArgument);
    CHECK(r.options().rrf_k == 60);  // unchanged after the failed call
}

TEST_CASE("Retriever candidates bound what each index contributes", "[retriever]") {
    Retriever r(FixedIndex({"a", "b", "c"}), FixedIndex({"c", "b", "a"}));
    add_all(r, {"a", "b", "c"});
    decltype(r)::search_options o;
    o.candidates = 1;
    // Each index contributes max(candidates, k) = 1 result at k = 1: a and c tie, a first (smaller id).
    auto res = r.search("q", 1, o);
    REQUIRE(res.size() == 1);
    CHECK(res[0].document->id == "a");
    CHECK_FALSE(res[0].trace[1].rank.has_value());
}

TEST_CASE("Retrievers nest: an inner Retriever is an index of an outer one", "[retriever]") {
    using Inner = Retriever<FixedIndex, FixedIndex>;
    Retriever outer(Inner(FixedIndex({"a", "b", "c"}), FixedIndex({"b", "c", "a"})), FixedIndex({"c", "a", "b"}));
    add_all(outer, {"a", "b", "c"});
    CHECK(outer.index<0>().size() == 3);
    const auto res = outer.search("q", 3);
    // Inner: a = 1/61 + 1/63, b = 1/62 + 1/61, c = 1/63 + 1/62 -> b, a, c.
    // Outer (inner list b, a, c; third list c, a, b): a = 1/62 + 1/62, b = 1/61 + 1/63, c = 1/63 + 1/61.
    std::map<std::string, double> expect{{"a", 1.0 / 62 + 1.0 / 62}, {"b", 1.0 / 61 + 1.0 / 63}, {"c", 1.0 / 63 + 1.0 / 61}};
    REQUIRE(res.size() == 3);
    for (const auto& x : res) CHECK(x.score == Approx(expect[x.document->id]));
    // b and c tie exactly (same two ranks, 1 and 3) and both have best rank 1: smaller id (b) first.
    CHECK(res[0].document->id == "b");
    CHECK(res[1].document->id == "c");
    CHECK(res[0].score == res[1].score);
    CHECK(res[2].document->id == "a");
    outer.remove_document(std::string_view("a"));
    CHECK(outer.index<0>().size() == 2);
}

TEST_CASE("Retriever property: random adds, removals and filters", "[retriever][property]") {
    const auto seed = GENERATE(take(50, random(0u, 1000000u)));
    std::mt19937 rng(seed);
    std::vector<std::string> universe;
    for (int i = 0; i < 30; ++i) universe.push_back("d" + std::to_string(i));
    auto shuffled = [&] {
        auto v = universe;
        std::shuffle(v.begin(), v.end(), rng);
        return v;
    };
    Retriever r{FixedIndex{shuffled()}, FixedIndex{shuffled()}, FixedIndex{shuffled()}};
    std::set<std::string> live;
    for (int step = 0; step < 60; ++step) {
        const auto& key = universe[rng() % universe.size()];
        if (live.count(key)) {
            r.remove_document(std::string_view(key));
            live.erase(key);
        } else {
            r.add_document(doc(key));
            live.insert(key);
        }
    }
    REQUIRE(r.size() == live.size());
    DocSet allowed(r.store().capacity());
    for (DocId id = 0; id < r.store().capacity(); ++id)
        if (rng() % 2) allowed.set(id);
    const auto opts = SearchOptions::only(allowed);
    const std::size_t k = 1 + rng() % 20;
    const auto res = r.search("q", k, opts);
    std::set<DocId> seen;
    std::size_t expected = 0;
    for (DocId id = 0; id < r.store().capacity(); ++id) expected += (r.store().contains(id) && allowed.test(id)) ? 1 : 0;
    CHECK(res.size() == std::min(k, expected));
    for (std::size_t i = 0; i < res.size(); ++i) {
        CHECK(seen.insert(res[i].id).second);
        CHECK(allowed.test(res[i].id));
        CHECK(live.count(res[i].document->id) == 1);
        if (i) CHECK(res[i - 1].score >= res[i].score);
    }
}

TEST_CASE("evaluate(Retriever) runs a question set over the fused candidates", "[retriever][evaluate]") {
    Retriever r(FixedIndex({"C", "A", "F", "E", "G", "B", "H", "I", "D"}),
                FixedIndex({"D", "B", "A", "J", "E", "K", "F", "C"}));
    add_all(r, {"A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K"});
    const QuestionSet qs{{"q1", "x", {{"A", 1}}, {}, {}}, {"q2", "y", {{"D", 1}}, {}, {}}, {"q3", "z", {}, {}, {}}};
    const auto report = evaluate(r, qs, {}, "hybrid", {"words", "meaning"});
    // Fused order: A B C E D F ... -> A at 1, D at 5.
    CHECK(report.outcomes()[0].first_relevant == 1);
    CHECK(report.outcomes()[1].first_relevant == 5);
    CHECK(report.summary(Measure::hit_rate, 3).mean == 0.5);
    CHECK(report.summary(Measure::hit_rate, 5).mean == 1.0);
    CHECK(report.summary(Measure::hit_rate, 5).without_relevant == 1);
    CHECK(report.miss(1, 3) == MissStage::ranking);
    const auto stages = report.stage_latencies();
    REQUIRE(stages.size() == 3);
    CHECK(stages[0].first == "words");
    CHECK(stages[2].first == "fusion");
    CHECK_THROWS_AS(evaluate(r, qs, {}, "x", {"only one"}), InvalidArgument);
}

TEST_CASE("Retriever add_documents: same ids as one by one, and all or nothing", "[retriever]") {
    Retriever one(FixedIndex({"a", "b", "c"}), FixedIndex({"c", "b", "a"}, "poison"));
    Retriever many(FixedIndex({"a", "b", "c"}), FixedIndex({"c", "b", "a"}, "poison"));
    add_all(one, {"a", "b", "c"});
    CHECK(many.add_documents({doc("a"), doc("b"), doc("c")}) == std::vector<DocId>{0, 1, 2});
    CHECK(keys_of(many.search("q", 10)) == keys_of(one.search("q", 10)));

    // The second index rejects the last document of a batch: nothing of the batch stays.
    CHECK_THROWS_AS(many.add_documents({doc("d"), doc("e", "poison pill")}), InvalidArgument);
    CHECK(many.size() == 3);
    CHECK(many.index<0>().size() == 3);
    CHECK(many.index<1>().size() == 3);
    CHECK_FALSE(many.store().find("d").has_value());
    // A key repeated inside the batch fails in the store; the ids are given back.
    CHECK_THROWS_AS(many.add_documents({doc("f"), doc("f")}), DuplicateError);
    CHECK(many.size() == 3);
    CHECK_FALSE(many.store().find("f").has_value());
    CHECK(many.add_document(doc("d")) == 3u);
}

namespace {

// The hand-fused oracle of the nested tests: leaf lists taken from the orders, fused by
// the RRF formula written out here (higher score, then better best rank, then smaller id).
using Ranked = std::vector<std::pair<std::string, double>>;

std::vector<std::string> leaf_list(const std::vector<std::string>& order, const std::set<std::string>& visible,
                                   std::size_t n) {
    std::vector<std::string> out;
    for (const auto& key : order)
        if (visible.count(key) && out.size() < n) out.push_back(key);
    return out;
}

Ranked hand_fuse(const std::vector<std::vector<std::string>>& lists, const std::vector<double>& weights, double k,
                 std::size_t n) {
    std::map<std::string, double> score;
    std::map<std::string, std::size_t> best;
    for (std::size_t i = 0; i < lists.size(); ++i)
        for (std::size_t r = 0; r < lists[i].size(); ++r) {
            score[lists[i][r]] += (weights.empty() ? 1.0 : weights[i]) / (k + static_cast<double>(r + 1));
            auto [it, fresh] = best.emplace(lists[i][r], r + 1);
            if (!fresh) it->second = std::min(it->second, r + 1);
        }
    Ranked out(score.begin(), score.end());
    // Keys are "d00".."d11", added in that order, so key order is DocId order.
    std::sort(out.begin(), out.end(), [&](const auto& a, const auto& b) {
        if (a.second != b.second) return a.second > b.second;
        if (best[a.first] != best[b.first]) return best[a.first] < best[b.first];
        return a.first < b.first;
    });
    if (out.size() > n) out.resize(n);
    return out;
}

std::vector<std::string> keys_only(const Ranked& r) {
    std::vector<std::string> out;
    for (const auto& [key, score] : r) out.push_back(key);
    return out;
}

std::set<std::string> keys_in(const std::vector<std::string>& keys, const DocSet& set) {
    std::set<std::string> out;
    for (DocId id = 0; id < keys.size(); ++id)
        if (set.test(id)) out.insert(keys[id]);
    return out;
}

}  // namespace

TEST_CASE("Nested retrievers take their own options at every level (hand-fused oracle)", "[retriever][nested]") {
    std::vector<std::string> keys;
    for (int i = 0; i < 12; ++i) keys.push_back((i < 10 ? "d0" : "d") + std::to_string(i));
    const auto seed = GENERATE(take(20, random(0u, 1000000u)));
    std::mt19937 rng(seed);
    auto shuffled = [&] {
        auto v = keys;
        std::shuffle(v.begin(), v.end(), rng);
        return v;
    };
    const std::vector<std::vector<std::string>> order{shuffled(), shuffled(), shuffled(), shuffled()};
    auto log = std::make_shared<std::vector<FixedOptions>>();
    using Inner = Retriever<FixedIndex, FixedIndex, FixedIndex>;
    Retriever outer(Inner(RetrieverOptions{60.0, {}, 100}, FixedIndex(order[0], log), FixedIndex(order[1], log),
                          FixedIndex(order[2], log)),
                    FixedIndex(order[3], log));
    add_all(outer, keys);
    const std::set<std::string> all(keys.begin(), keys.end());

    SECTION("the issue's case: outer weights {1, .5}, the inner one on its defaults") {
        decltype(outer)::search_options o;
        o.weights = {1.0, 0.5};
        const std::size_t k = 4;
        const auto res = outer.search("q", k, o);
        // Inner: its candidates are max(100, 100) = 100, rrf_k 60, weights 1, cut to the outer's 100.
        std::vector<std::vector<std::string>> inner_lists;
        for (int i = 0; i < 3; ++i) inner_lists.push_back(leaf_list(order[i], all, 100));
        const auto inner = keys_only(hand_fuse(inner_lists, {}, 60.0, 100));
        const auto expect = hand_fuse({inner, leaf_list(order[3], all, 100)}, {1.0, 0.5}, 60.0, k);
        REQUIRE(keys_of(res) == keys_only(expect));
        for (std::size_t i = 0; i < k; ++i) CHECK(res[i].score == Approx(expect[i].second).epsilon(1e-12));
        // Every leaf got its own options, at their defaults: no knob, no allowed set.
        REQUIRE(log->size() == 4);
        for (const auto& seen : *log) {
            CHECK_FALSE(seen.knob.has_value());
            CHECK(seen.allowed == nullptr);
        }
    }

    SECTION("different weights, rrf_k, candidates and allowed sets per level") {
        DocSet outer_allowed(keys.size()), inner_allowed(keys.size());
        for (DocId id = 0; id < keys.size(); ++id) {
            if (rng() % 4 != 0) outer_allowed.set(id);
            if (rng() % 4 != 0) inner_allowed.set(id);
        }
        decltype(outer)::search_options o;
        o.allowed = std::make_shared<const DocSet>(outer_allowed);
        o.weights = {1.0, 0.5};
        o.rrf_k = 10.0;
        o.candidates = 5;
        auto& in = o.index<0>();  // the inner retriever's options
        in.weights = {0.2, 1.0, 3.0};
        in.rrf_k = 2.0;
        in.candidates = 7;
        in.allowed = std::make_shared<const DocSet>(inner_allowed);
        in.index<0>().knob = 0.3;
        in.index<1>().knob = 0.4;
        in.index<2>().knob = 0.5;
        o.index<1>().knob = 1.7;
        const std::size_t k = 3;
        const auto res = outer.search("q", k, o);

        const auto outer_visible = keys_in(keys, outer_allowed);
        std::set<std::string> inner_visible;
        for (const auto& key : keys_in(keys, inner_allowed))
            if (outer_visible.count(key)) inner_visible.insert(key);
        // The inner retriever is asked for the outer's 5 candidates, asks each of its
        // indexes for max(7, 5) = 7, fuses with its own weights and k = 2, keeps 5.
        std::vector<std::vector<std::string>> inner_lists;
        for (int i = 0; i < 3; ++i) inner_lists.push_back(leaf_list(order[i], inner_visible, 7));
        const auto inner = keys_only(hand_fuse(inner_lists, {0.2, 1.0, 3.0}, 2.0, 5));
        const auto expect = hand_fuse({inner, leaf_list(order[3], outer_visible, 5)}, {1.0, 0.5}, 10.0, k);
        REQUIRE(keys_of(res) == keys_only(expect));
        for (std::size_t i = 0; i < res.size(); ++i) {
            CHECK(res[i].score == Approx(expect[i].second).epsilon(1e-12));
            CHECK(outer_visible.count(res[i].document->id) == 1);
        }
        // The leaves: each inner one got its own knob and the two levels' sets intersected;
        // the outer leaf got per_index[1]'s knob.
        REQUIRE(log->size() == 4);
        DocSet both = inner_allowed;
        both &= outer_allowed;
        for (std::size_t i = 0; i < 3; ++i) {
            CHECK((*log)[i].knob == Approx(0.3 + 0.1 * static_cast<double>(i)));
            REQUIRE((*log)[i].allowed);
            CHECK(*(*log)[i].allowed == both);
        }
        CHECK((*log)[3].knob == 1.7);
        CHECK((*log)[3].allowed == o.allowed);  // no set of its own: the caller's, shared
    }
}

TEST_CASE("Nested retriever options that are wrong name their level", "[retriever][nested]") {
    using Inner = Retriever<FixedIndex, FixedIndex, FixedIndex>;
    Retriever outer(Inner(FixedIndex({"a", "b"}), FixedIndex({"b", "a"}), FixedIndex({"a"})), FixedIndex({"b"}));
    add_all(outer, {"a", "b"});
    decltype(outer)::search_options o;
    o.weights = {1.0, 0.5, 2.0};
    CHECK_THROWS_WITH(outer.search("q", 2, o), Catch::Contains("options: 3 weights for 2 indexes"));
    o.weights = {1.0, 0.5};
    // per_index holds one options object per index, by type: no wrong count to refuse.
    o.index<0>().weights = {1.0, 0.5};
    CHECK_THROWS_AS(outer.search("q", 2, o), InvalidArgument);
    CHECK_THROWS_WITH(outer.search("q", 2, o), Catch::Contains("options.per_index[0]: 2 weights for 3 indexes"));
    o.index<0>().weights = {1.0, 0.5, 1.0};
    o.index<0>().rrf_k = -1.0;
    CHECK_THROWS_WITH(outer.search("q", 2, o), Catch::Contains("options.per_index[0]: rrf_k is -1"));
    o.index<0>().rrf_k.reset();
    CHECK(outer.search("q", 2, o).size() == 2);
    // The issue's failing call: weights for the outer level only.
    decltype(outer)::search_options issue;
    issue.weights = {1.0, 0.5};
    CHECK(outer.search("q", 2, issue).size() == 2);
}

TEST_CASE("Nested retrievers store each document once", "[retriever][nested]") {
    using Inner = Retriever<FixedIndex, FixedIndex>;
    Retriever outer(Inner(FixedIndex({"a", "b", "c"}), FixedIndex({"c", "b", "a"})), FixedIndex({"b"}));
    const DocId a = outer.add_document(doc("a", "the text of a"));
    const auto batch = outer.add_documents({doc("b", "the text of b"), doc("c", "the text of c")});
    for (DocId id : {a, batch[0], batch[1]}) {
        const auto mine = outer.document(id);
        const auto inner = outer.index<0>().document(id);
        REQUIRE(mine);
        CHECK(mine.get() == inner.get());  // the same Document object, not a copy
        CHECK(mine.use_count() == 4);      // the outer store, the inner store, `mine` and `inner`
    }
    // Removal releases both references; a failed add leaves neither.
    outer.remove_document(a);
    CHECK_FALSE(outer.index<0>().document(a));
    CHECK_THROWS_AS(outer.add_document(doc("b")), DuplicateError);
    CHECK(outer.index<0>().size() == 2);
    // A null document is refused by the nested form.
    CHECK_THROWS_AS(outer.add_document(DocId{9}, std::shared_ptr<const Document>{}), InvalidArgument);
    CHECK(outer.size() == 2);
}
