// Collection: documents in, chunks out; deletion and update leave nothing stale;
// failures change nothing; neighbours and sections. Oracles: hand-built documents,
// and an incrementally edited collection against one rebuilt from scratch.
#include <ragpp/index/bm25.hpp>
#include <ragpp/retrieve/collection.hpp>
#include <ragpp/text/analyzer.hpp>

#include "term_overlap_index.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

using ragpp::Collection;
using ragpp::CollectionOptions;
using ragpp::DocId;
using ragpp::Document;
using ragpp::Filter;
using ragpp::Principal;
using ragpp::Retriever;
using ragpp_test::TermOverlapIndex;
using Strings = std::vector<std::string>;

namespace {

/// The oracle index, refusing any text containing "POISON" (to make an add fail midway).
class PickyIndex : public TermOverlapIndex {
public:
    void add_document(DocId id, const Document& doc) {
        if (doc.text.find("POISON") != std::string::npos) throw ragpp::InvalidArgument("PickyIndex: poisoned text");
        TermOverlapIndex::add_document(id, doc);
    }
};

using R = Retriever<TermOverlapIndex, PickyIndex>;
using C = Collection<R>;

C make_collection(std::size_t max_tokens = 400) {
    CollectionOptions o;
    o.chunking.max_tokens = max_tokens;
    o.chunking.overlap = 0;
    return C(R{}, o);
}

Strings keys(const std::vector<ragpp::Result>& rs) {
    Strings out;
    for (const auto& r : rs) out.push_back(r.document->id);
    return out;
}

const Principal everyone = Principal::system();

const std::string contract =
    "---\ntitle: MX-200 contract\ntype: contract\ngroups: [legal]\n---\n"
    "# MX-200\n\n## Notice\n\nThe notice period is two months.\n\n## Rates\n\nThe rate is 4,5 % monthly.\n";
const std::string memo = "# Memo\n\nLunch menu: pasta.\n";

}  // namespace

TEST_CASE("Collection: sources become chunks, search honours access and filters", "[collection]") {
    C c = make_collection();
    const auto ids = c.add(Document{"contracts/mx200.md", contract, {}});
    REQUIRE(ids.size() == 2);
    c.add(Document{"memo.txt", memo, {{"groups", Strings{"staff"}}, {"type", std::string("memo")}}});
    CHECK(c.source_count() == 2);
    CHECK(c.chunk_count() == 3);
    CHECK(c.retriever().document(ids[0])->id == "contracts/mx200.md:8");
    CHECK(c.retriever().document(ids[1])->id == "contracts/mx200.md:12");
    CHECK(c.retriever().document(ids[1])->text == "MX-200 contract > MX-200 > Rates\nThe rate is 4,5 % monthly.");

    // Every match scores 1 in both indexes: ties go to the smaller DocId.
    CHECK(keys(c.search("notice rate lunch", 10, Filter::all(), Principal::with_groups({"legal"}))) ==
          Strings{"contracts/mx200.md:8", "contracts/mx200.md:12"});
    CHECK(keys(c.search("notice rate lunch", 10, Filter::all(), Principal::with_groups({"staff"}))) ==
          Strings{"memo.txt:1"});
    CHECK(c.search("notice rate lunch", 10, Filter::all(), Principal{}).empty());  // deny by default
    CHECK(keys(c.search("notice rate lunch", 10, ragpp::parse_filter("type=memo"), everyone)) == Strings{"memo.txt:1"});
    CHECK(keys(c.search("notice", 10, ragpp::parse_filter("first_line>=10"), everyone)) ==
          Strings{"contracts/mx200.md:8"});
    CHECK(keys(c.search("notice", 10, ragpp::parse_filter("first_line>10"), everyone)).empty());
    CHECK(keys(c.search("rate", 10, ragpp::parse_filter("source=\"contracts/mx200.md\""), everyone)) ==
          Strings{"contracts/mx200.md:12"});
    // A caller's allowed set is intersected with the access set.
    auto opts = ragpp::SearchOptions::only(ragpp::DocSet(10, {ids[0]}));
    CHECK(keys(c.search("notice rate", 10, Filter::all(), everyone, opts)) == Strings{"contracts/mx200.md:8"});
}

TEST_CASE("Collection: removing a source leaves nothing stale, ids are never reused", "[collection]") {
    C c = make_collection();
    const auto old_ids = c.add(Document{"a.md", contract, {}});
    c.add(Document{"memo.md", memo, {{"groups", Strings{"staff"}}}});
    const std::size_t entries_before = c.metadata().posting_entries();
    c.remove("a.md");
    CHECK_FALSE(c.contains("a.md"));
    CHECK(c.chunk_count() == 1);
    CHECK(c.retriever().size() == 1);
    CHECK(c.retriever().index<0>().size() == 1);
    CHECK(c.retriever().index<1>().size() == 1);
    CHECK(c.metadata().size() == 1);
    CHECK(c.metadata().posting_entries() < entries_before);
    for (DocId id : old_ids) {
        CHECK_FALSE(c.retriever().store().contains(id));
        CHECK_FALSE(c.retriever().index<0>().contains(id));
        CHECK_FALSE(c.retriever().index<1>().contains(id));
        CHECK_FALSE(c.metadata().contains(id));
        CHECK(!c.place(id));
        CHECK_THROWS_AS(c.neighbours(id), ragpp::NotFoundError);
    }
    CHECK(c.search("notice rate", 10, Filter::all(), everyone).empty());
    CHECK(c.metadata().compile(ragpp::parse_filter("source=\"a.md\"")).empty());
    CHECK_THROWS_AS(c.remove("a.md"), ragpp::NotFoundError);
    // Re-adding gives new DocIds.
    const auto new_ids = c.add(Document{"a.md", contract, {}});
    for (DocId id : new_ids) CHECK(std::find(old_ids.begin(), old_ids.end(), id) == old_ids.end());
    CHECK(keys(c.search("notice", 10, Filter::all(), everyone)) == Strings{"a.md:8"});
}

TEST_CASE("Collection: update replaces a source's chunks", "[collection]") {
    C c = make_collection();
    c.add(Document{"a.md", "# A\n\nold words here\n\n## B\n\nmore old\n", {{"groups", Strings{"g"}}}});
    const auto ids = c.update(Document{"a.md", "# A\n\nnew words\n", {{"groups", Strings{"g"}}}});
    REQUIRE(ids.size() == 1);
    CHECK(c.chunk_count() == 1);
    CHECK(c.search("old", 10, Filter::all(), everyone).empty());
    CHECK(keys(c.search("new", 10, Filter::all(), Principal::with_groups({"g"}))) == Strings{"a.md:1"});
    // update of an absent source adds it.
    c.update(Document{"b.md", "# B\nbee\n", {}});
    CHECK(c.contains("b.md"));
}

TEST_CASE("Collection: failed adds and updates change nothing", "[collection]") {
    C c = make_collection();
    c.add(Document{"a.md", contract, {}});
    const auto before_ids = c.chunks_of("a.md");
    auto state = [&] {
        return std::make_tuple(c.chunk_count(), c.source_count(), c.retriever().size(), c.metadata().size(),
                               c.metadata().posting_entries(), c.retriever().index<0>().size());
    };
    const auto before = state();
    CHECK_THROWS_AS(c.add(Document{"a.md", memo, {}}), ragpp::DuplicateError);
    CHECK_THROWS_AS(c.add(Document{"", memo, {}}), ragpp::InvalidArgument);
    CHECK_THROWS_AS(c.update(Document{"", memo, {}}), ragpp::InvalidArgument);
    CHECK_THROWS_AS(c.add(Document{"bad.md", "# x\n\xFF\n", {}}), ragpp::ParseError);
    CHECK_THROWS_AS(c.add(Document{"nan.md", "# x\ny\n", {{"score", std::nan("")}}}), ragpp::InvalidArgument);
    // The third chunk is refused by the second index: the first two are rolled back.
    CHECK_THROWS_AS(c.add(Document{"p.md", "# 1\none\n# 2\ntwo\n# 3\nPOISON\n", {}}), ragpp::InvalidArgument);
    CHECK(state() == before);
    CHECK_FALSE(c.contains("p.md"));
    CHECK(c.search("one poison", 10, Filter::all(), everyone).empty());
    // A failed update keeps the old text searchable.
    CHECK_THROWS_AS(c.update(Document{"a.md", "# bad\n\xC3\n", {}}), ragpp::ParseError);
    CHECK(c.chunks_of("a.md") == before_ids);
    CHECK_THROWS_AS(c.update(Document{"a.md", "# A\nfresh\n# B\nPOISON\n", {}}), ragpp::InvalidArgument);
    CHECK(state() == before);
    CHECK(keys(c.search("notice", 10, Filter::all(), everyone)) == Strings{"a.md:8"});
    CHECK(c.search("fresh", 10, Filter::all(), everyone).empty());
    CHECK(c.place(c.chunks_of("a.md")[0])->section == "a.md:8");
}

TEST_CASE("Collection: neighbours and the chunks of a section, capped", "[collection]") {
    C c = make_collection(3);
    // Section "d.md:1" has 9 words: parts of 3 (positions 0..2); then "d.md:5" (3..4).
    const auto ids = c.add(Document{"d.md", "# S\na b c\nd e f\ng h i\n# T\nj k l\nm n\n", {}});
    REQUIRE(ids.size() == 5);
    CHECK(c.retriever().document(ids[2])->id == "d.md:1#3");
    CHECK(c.retriever().document(ids[3])->id == "d.md:5");
    CHECK(c.neighbours(ids[0]) == std::vector<DocId>{ids[0], ids[1]});
    CHECK(c.neighbours(ids[2]) == std::vector<DocId>{ids[1], ids[2], ids[3]});
    CHECK(c.neighbours(ids[2], 0) == std::vector<DocId>{ids[2]});
    CHECK(c.neighbours(ids[4], 10) == ids);
    CHECK(c.section_of(ids[1]) == std::vector<DocId>{ids[0], ids[1], ids[2]});
    CHECK(c.section_of(ids[4]) == std::vector<DocId>{ids[3], ids[4]});
    CHECK(c.section_of(ids[0], 2) == std::vector<DocId>{ids[0], ids[1]});
    CHECK(c.section_of(ids[2], 2) == std::vector<DocId>{ids[1], ids[2]});
    CHECK(c.section_of(ids[1], 1) == std::vector<DocId>{ids[1]});
    CHECK_THROWS_AS(c.section_of(ids[1], 0), ragpp::InvalidArgument);
    CHECK(c.place(ids[4])->position == 4);
    CHECK(c.place(ids[4])->section == "d.md:5");
}

TEST_CASE("Collection: an edited collection answers like one rebuilt from scratch", "[collection][property]") {
    const auto seed = static_cast<unsigned>(GENERATE(range(1, 21)));
    std::mt19937 rng(seed);
    auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
    const Strings vocab{"alpha", "beta", "gamma", "delta", "omega", "sigma", "tau", "rho"};
    auto random_source = [&](int i) {
        std::string text;
        for (int s = pick(4); s >= 0; --s) {
            text += "## Section " + std::to_string(s) + "\n\n";
            for (int w = 1 + pick(15); w > 0; --w) text += vocab[static_cast<std::size_t>(pick(8))] + (pick(5) == 0 ? ".\n" : " ");
            text += "\n\n";
        }
        ragpp::Metadata m;
        if (pick(3) != 0) m["groups"] = Strings{pick(2) == 0 ? "x" : "y"};
        return Document{"doc" + std::to_string(i) + ".md", text, m};
    };
    C edited = make_collection(6);
    std::map<std::string, Document> truth;
    for (int step = 0; step < 60; ++step) {
        const int i = pick(8);
        const std::string path = "doc" + std::to_string(i) + ".md";
        const int op = pick(3);
        if (op == 0 && truth.count(path) != 0) {
            edited.remove(path);
            truth.erase(path);
        } else {
            Document d = random_source(i);
            if (op == 1 && truth.count(path) == 0) edited.add(d);
            else edited.update(d);
            truth.insert_or_assign(path, d);
        }
    }
    C rebuilt = make_collection(6);
    for (const auto& [path, d] : truth) rebuilt.add(d);
    REQUIRE(edited.chunk_count() == rebuilt.chunk_count());
    REQUIRE(edited.retriever().size() == rebuilt.retriever().size());
    REQUIRE(edited.metadata().posting_entries() == rebuilt.metadata().posting_entries());
    for (const auto& who : {everyone, Principal::with_groups({"x"}), Principal{}}) {
        for (const auto& q : vocab) {
            auto as_set = [&](const C& c) {
                // Keys with their first index's score (fused scores depend on DocId ties).
                std::set<std::pair<std::string, double>> s;
                for (const auto& r : c.search(q, 1000, Filter::all(), who)) s.emplace(r.document->id, *r.trace[0].score);
                return s;
            };
            CHECK(as_set(edited) == as_set(rebuilt));
        }
    }
}

TEST_CASE("Collection with BM25: a failed add of a large source, its removal and a re-index take every posting back "
          "(in one pass per list)",
          "[collection]") {
    using BR = Retriever<ragpp::BM25Index<ragpp::WhitespaceAnalyzer>, PickyIndex>;
    CollectionOptions o;
    o.chunking.max_tokens = 400;
    o.chunking.overlap = 0;
    Collection<BR> c(BR{}, o), fresh(BR{}, o);
    c.add(Document{"memo.md", memo, {}});
    fresh.add(Document{"memo.md", memo, {}});
    auto big = [](bool poison) {
        std::string text = "---\ntype: log\n---\n";
        for (int i = 0; i < 3000; ++i) text += "# Part " + std::to_string(i) + "\n\nshared words lunch s" + std::to_string(i) + "\n\n";
        if (poison) text += "# Last\n\nPOISON\n";
        return text;
    };
    const auto postings_before = c.metadata().posting_entries();
    // Added to BM25, refused by the second index at the last chunk: BM25 takes back 3,000 documents.
    CHECK_THROWS_AS(c.add(Document{"big.md", big(true), {}}), ragpp::InvalidArgument);
    CHECK(c.retriever().index<0>().size() == 1);
    CHECK(c.metadata().posting_entries() == postings_before);
    const auto& bm25 = c.retriever().index<0>();
    CHECK(bm25.posting_count() == fresh.retriever().index<0>().posting_count());
    CHECK(bm25.total_length() == fresh.retriever().index<0>().total_length());
    CHECK(bm25.fielded_size() == fresh.retriever().index<0>().fielded_size());
    // Added, then removed at once: as before.
    c.add(Document{"big.md", big(false), {}});
    CHECK(c.retriever().index<0>().size() == 3001);
    c.remove("big.md");
    CHECK(c.chunk_count() == 1);
    CHECK(c.metadata().posting_entries() == postings_before);
    CHECK(c.retriever().index<0>().posting_count() == fresh.retriever().index<0>().posting_count());
    for (const char* q : {"lunch", "shared words", "pasta", "part"})
        CHECK(keys(c.search(q, 10, Filter::all(), everyone)) == keys(fresh.search(q, 10, Filter::all(), everyone)));
    CHECK(c.search("s17", 10, Filter::all(), everyone).empty());
    CHECK(c.search("lunch", 10, Filter::eq("type", std::string("log")), everyone).empty());
}
