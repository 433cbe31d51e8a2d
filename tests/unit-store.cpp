// DocumentStore saved to its binary file and opened read or mapped: the opened store
// (documents decoded on demand) against the resident store it was saved from, before and
// after further inserts and erasures; truncated and corrupted files.
#include <catch2/catch.hpp>

#include <ragpp/filter/filter.hpp>
#include <ragpp/index/store.hpp>
#include <ragpp/retrieve/collection.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "support.hpp"
#include "term_overlap_index.hpp"

using namespace ragpp;

namespace {

std::filesystem::path temp_file(const std::string& name) {
    const auto dir = std::filesystem::temp_directory_path() / ("ragpp-unit-store-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    return dir / name;
}

void write_bytes(const std::filesystem::path& p, const std::string& bytes) {
    std::ofstream(p, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string random_text(std::mt19937& rng, std::size_t max_len) {
    static const std::string alphabet = "abcdefgh ijk\n\"\\\x01\xc3\xa9";
    std::string s(std::uniform_int_distribution<std::size_t>(0, max_len)(rng), ' ');
    for (auto& c : s) c = alphabet[std::uniform_int_distribution<std::size_t>(0, alphabet.size() - 1)(rng)];
    return s;
}

Document random_document(std::mt19937& rng, std::size_t i) {
    Document d;
    // Every seventh document has no key; the others a unique one (random prefix, so the
    // key order differs from the DocId order).
    if (i % 7 != 3) d.id = random_text(rng, 6) + "#" + std::to_string(i);
    d.text = random_text(rng, 80);
    const int fields = std::uniform_int_distribution<int>(0, 4)(rng);
    for (int f = 0; f < fields; ++f) {
        const std::string name = "f" + std::to_string(std::uniform_int_distribution<int>(0, 5)(rng));
        switch (std::uniform_int_distribution<int>(0, 3)(rng)) {
            case 0: d.metadata[name] = random_text(rng, 10); break;
            case 1: d.metadata[name] = std::uniform_real_distribution<double>(-1e6, 1e6)(rng); break;
            case 2: d.metadata[name] = Date{std::uniform_int_distribution<std::int32_t>(-30000, 30000)(rng)}; break;
            default: {
                std::vector<std::string> list(std::uniform_int_distribution<std::size_t>(0, 3)(rng));
                for (auto& e : list) e = random_text(rng, 5);
                d.metadata[name] = list;
            }
        }
    }
    return d;
}

bool same(const Document& a, const Document& b) { return a.id == b.id && a.text == b.text && a.metadata == b.metadata; }

/// Every observable of `s` equals the oracle's: ids, documents, keys (and absent keys).
void require_equal(const DocumentStore& s, const DocumentStore& oracle, const std::vector<std::string>& keys) {
    REQUIRE(s.size() == oracle.size());
    REQUIRE(s.capacity() == oracle.capacity());
    REQUIRE(s.next_id() == oracle.next_id());
    REQUIRE(s.live() == oracle.live());
    for (DocId id = 0; id < oracle.capacity() + 2; ++id) {
        REQUIRE(s.contains(id) == oracle.contains(id));
        const auto a = s.get(id), b = oracle.get(id);
        REQUIRE((a == nullptr) == (b == nullptr));
        if (a) REQUIRE(same(*a, *b));
    }
    for (const auto& k : keys) REQUIRE(s.find(k) == oracle.find(k));
    CHECK_FALSE(s.find("no such key"));
    CHECK_FALSE(s.find(""));
}

}  // namespace

TEST_CASE("DocumentStore opened from its file (read or mapped) equals the resident store", "[store]") {
    const bool mmap = GENERATE(false, true);
    const bool verify = GENERATE(false, true);
    std::mt19937 rng(17 + mmap * 2 + verify);
    DocumentStore oracle;
    std::vector<std::string> keys;
    for (std::size_t i = 0; i < 300; ++i) {
        auto d = random_document(rng, i);
        if (!d.id.empty()) keys.push_back(d.id);
        oracle.insert(static_cast<DocId>(i), std::move(d));
    }
    for (DocId id : {0U, 5U, 77U, 150U, 299U}) oracle.erase(id);  // removed ids stay used
    const auto path = temp_file("store-" + std::to_string(mmap) + std::to_string(verify) + ".bin");
    oracle.save(path);

    auto s = DocumentStore::open(path, OpenOptions{mmap, verify});
    CHECK(s.from_file());
    require_equal(s, oracle, keys);

    // Adds after the open are resident; erasures of the file's documents are marks.
    for (auto* store : {&s, &oracle}) {
        auto& st = *store;
        CHECK_THROWS_AS(st.insert(10, Document{"x", "", {}}), DuplicateError);           // id of the file
        CHECK_THROWS_AS(st.insert(st.next_id(), Document{keys[9], "", {}}), DuplicateError);  // key of the file
        st.erase(*st.find(keys[20]));
        CHECK_THROWS_AS(st.erase(5), NotFoundError);
        st.insert(st.next_id(), Document{keys[20], "back under a new id", {{"n", 1.0}}});  // a removed key is free
        st.insert(st.next_id(), Document{"", "no key", {}});
        st.insert(st.next_id(), Document{"new", "new text", {{"groups", std::vector<std::string>{"a", "b"}}}});
        st.undo_insert(static_cast<DocId>(st.next_id() - 1));
        st.insert(st.next_id(), Document{"new", "new text again", {}});
    }
    keys.push_back("new");
    require_equal(s, oracle, keys);
    CHECK(s.get(*s.find(keys[20]))->text == "back under a new id");

    // Saved again (documents from the file and resident ones), opened again: still equal.
    const auto again = temp_file("again-" + std::to_string(mmap) + std::to_string(verify) + ".bin");
    s.save(again);
    require_equal(DocumentStore::open(again, OpenOptions{!mmap, verify}), oracle, keys);
    // The same bytes as the resident store's file (the save sizes the file's documents
    // from their records, the resident ones from their encoding).
    const auto resident = temp_file("resident-" + std::to_string(mmap) + std::to_string(verify) + ".bin");
    oracle.save(resident);
    CHECK(ragpp_test::read_file(again) == ragpp_test::read_file(resident));

    // A copy shares the file; its changes are its own.
    DocumentStore copy = s;
    copy.erase(1);
    CHECK(s.contains(1));
    CHECK_FALSE(copy.contains(1));
    std::filesystem::remove_all(path.parent_path());
}

TEST_CASE("DocumentStore: a truncated or corrupted file is a FormatError naming it, never a crash", "[store]") {
    std::mt19937 rng(5);
    DocumentStore oracle;
    for (std::size_t i = 0; i < 6; ++i) oracle.insert(static_cast<DocId>(i), random_document(rng, i));
    oracle.erase(2);
    const auto path = temp_file("good.bin");
    oracle.save(path);
    const std::string good = ragpp_test::read_file(path);
    const auto bad = temp_file("bad.bin");

    for (const bool mmap : {false, true}) {
        // Truncated anywhere: refused at open.
        for (std::size_t n : {std::size_t{0}, std::size_t{20}, std::size_t{36}, std::size_t{60}, good.size() - 1}) {
            write_bytes(bad, good.substr(0, n));
            CHECK_THROWS_AS(DocumentStore::open(bad, OpenOptions{mmap, false}), FormatError);
            CHECK_THROWS_WITH(DocumentStore::open(bad, OpenOptions{mmap, false}), Catch::Contains(bad.string()));
        }
        // Any one byte changed: with verify, refused at open (header or checksum); without,
        // refused at open (tables) or when the document is decoded, or a document whose
        // content changed (text bytes): never anything but a FormatError.
        std::size_t refused_at_open = 0, refused_at_get = 0;
        for (std::size_t i = 0; i < good.size(); ++i) {
            std::string b = good;
            b[i] = static_cast<char>(b[i] ^ 0x5a);
            write_bytes(bad, b);
            CHECK_THROWS_AS(DocumentStore::open(bad, OpenOptions{mmap, true}), FormatError);
            try {
                const auto s = DocumentStore::open(bad, OpenOptions{mmap, false});
                for (DocId id = 0; id < s.capacity(); ++id) {
                    try {
                        (void)s.get(id);
                        (void)s.find(oracle.get(0)->id);
                    } catch (const FormatError& e) {
                        CHECK_THAT(e.what(), Catch::Contains(bad.string()));
                        ++refused_at_get;
                    }
                }
            } catch (const FormatError& e) {
                CHECK_THAT(e.what(), Catch::Contains(bad.string()));
                ++refused_at_open;
            }
        }
        CHECK(refused_at_open > 36);  // the whole header, the counts, the offsets
        CHECK(refused_at_get > 0);    // a length inside a document
    }
    // Not a document store at all.
    write_bytes(bad, "RAGPPIDXBM25INDX" + std::string(40, '\0'));
    CHECK_THROWS_WITH(DocumentStore::open(bad), Catch::Contains("not a ragpp document store file"));
    CHECK_THROWS_AS(DocumentStore::open(temp_file("missing.bin")), IoError);
    std::filesystem::remove_all(path.parent_path());
}

/// `bytes` (a document store file) with its header's checksum recomputed, as a damaged
/// file that was saved that way would have it.
std::string with_checksum(std::string bytes) {
    const std::uint64_t sum = detail::fnv1a64(bytes.data() + detail::binary_header_size,
                                              bytes.size() - detail::binary_header_size);
    std::memcpy(bytes.data() + 28, &sum, 8);
    return bytes;
}

TEST_CASE("DocumentStore: two documents with the same key in a damaged file are a FormatError naming the key",
          "[store]") {
    DocumentStore oracle;
    oracle.insert(0, Document{"key-c", "third by key", {}});
    oracle.insert(1, Document{"", "no key", {}});
    oracle.insert(2, Document{"key-a", "first by key", {}});
    oracle.insert(3, Document{"key-b", "second by key", {}});
    const auto path = temp_file("keys.bin");
    oracle.save(path);
    const std::string good = ragpp_test::read_file(path);
    REQUIRE_NOTHROW(DocumentStore::open(path, OpenOptions{false, true}));
    const auto bad = temp_file("keys-bad.bin");
    // The key table: after the header, capacity, live and the 5 offsets, its count, then
    // the DocIds in key order: 2 (key-a), 3 (key-b), 0 (key-c).
    const std::size_t table = detail::binary_header_size + 8 + 8 + 8 * 5 + 8;
    std::uint32_t entry[3];
    std::memcpy(entry, good.data() + table, 12);
    REQUIRE(entry[0] == 2);
    REQUIRE(entry[1] == 3);
    REQUIRE(entry[2] == 0);

    for (const bool mmap : {false, true}) {
        INFO("mmap " << mmap);
        SECTION("a document's key rewritten to its neighbour's") {
            std::string b = good;
            const auto at = b.find("key-c");
            REQUIRE(at != std::string::npos);
            b[at + 4] = 'b';  // DocId 0 now has key-b, as DocId 3
            write_bytes(bad, with_checksum(b));
            CHECK_THROWS_AS(DocumentStore::open(bad, OpenOptions{mmap, true}), FormatError);
            CHECK_THROWS_WITH(DocumentStore::open(bad, OpenOptions{mmap, true}),
                              Catch::Contains(bad.string()) && Catch::Contains("two documents have the key 'key-b'") &&
                                  Catch::Contains("DocIds 3 and 0"));
            // Without verify the open does not read the keys; finding the key refuses it.
            const auto s = DocumentStore::open(bad, OpenOptions{mmap, false});
            CHECK_THROWS_WITH(s.find("key-b"), Catch::Contains(bad.string()) && Catch::Contains("'key-b'"));
            CHECK(s.find("key-a") == DocId{2});
            // A new document with that key is refused too (not stored twice).
            auto copy = DocumentStore::open(bad, OpenOptions{mmap, false});
            CHECK_THROWS_AS(copy.insert(4, Document{"key-b", "new", {}}), FormatError);
            CHECK(copy.size() == 4);
            CHECK_FALSE(copy.contains(4));
        }
        SECTION("the same DocId listed twice in the key table") {
            std::string b = good;
            std::memcpy(b.data() + table + 8, &entry[1], 4);  // 2, 3, 3
            write_bytes(bad, with_checksum(b));
            CHECK_THROWS_WITH(DocumentStore::open(bad, OpenOptions{mmap, true}),
                              Catch::Contains(bad.string()) && Catch::Contains("two documents have the key 'key-b'"));
            CHECK_THROWS_WITH(DocumentStore::open(bad, OpenOptions{mmap, false}).find("key-b"),
                              Catch::Contains("'key-b'"));
        }
        SECTION("a key table out of order, or missing a keyed document") {
            std::string b = good;
            std::memcpy(b.data() + table, &entry[1], 4);  // 3, 2, 0
            std::memcpy(b.data() + table + 4, &entry[0], 4);
            write_bytes(bad, with_checksum(b));
            CHECK_THROWS_WITH(DocumentStore::open(bad, OpenOptions{mmap, true}), Catch::Contains("not sorted"));
            b = good;
            const std::uint64_t two = 2;  // the count says 2 entries, the third key is unlisted
            std::memcpy(b.data() + table - 8, &two, 8);
            b.erase(table + 8, 4);
            const std::uint64_t payload = b.size() - detail::binary_header_size;
            std::memcpy(b.data() + 20, &payload, 8);
            const auto blob_at = table + 8;
            std::uint64_t blob = 0;
            std::memcpy(&blob, b.data() + blob_at, 8);
            REQUIRE(blob == b.size() - blob_at - 8);  // the edit kept the file well formed
            write_bytes(bad, with_checksum(b));
            CHECK_THROWS_WITH(DocumentStore::open(bad, OpenOptions{mmap, true}),
                              Catch::Contains("3 documents have a key, the key table lists 2"));
        }
    }
    std::filesystem::remove_all(path.parent_path());
}

TEST_CASE("Collection::adopt over a store opened from its file: all or nothing", "[store][collection]") {
    // Six chunks; chunk 5 has a NaN number, which a MetadataIndex refuses.
    DocumentStore saved;
    const char* types[] = {"guide", "ticket", "guide", "wiki", "guide", "ticket"};
    for (DocId id = 0; id < 6; ++id) {
        Metadata m{{"type", std::string(types[id])}};
        if (id == 5) m["n"] = std::nan("");
        saved.insert(id, Document{"c" + std::to_string(id), "text of chunk " + std::to_string(id), m});
    }
    const auto path = temp_file("adopt.bin");
    saved.save(path);
    auto store = DocumentStore::open(path, OpenOptions{.mmap = true, .verify = false});
    ragpp_test::TermOverlapIndex index;
    for (DocId id = 0; id < 6; ++id) index.add_document(id, *store.get(id));
    using R = Retriever<ragpp_test::TermOverlapIndex>;
    Collection<R> c(R(std::move(store), RetrieverOptions{}, std::move(index)));
    const auto guides = [&] { return c.allowed(Filter::eq("type", std::string("guide")), Principal::system()).ids(); };

    c.adopt("a.md", {0, 1, 2});
    CHECK(guides() == std::vector<DocId>{0, 2});
    // A repeated chunk, a chunk of another source, a missing one, a NaN: refused, nothing changes.
    CHECK_THROWS_AS(c.adopt("b.md", {3, 4, 3}), DuplicateError);
    CHECK_THROWS_AS(c.adopt("b.md", {3, 1}), DuplicateError);
    CHECK_THROWS_AS(c.adopt("b.md", {3, 9}), NotFoundError);
    CHECK_THROWS_AS(c.adopt("b.md", {3, 4, 5}), InvalidArgument);
    CHECK(c.source_count() == 1);
    CHECK(c.place(3) == std::nullopt);
    CHECK(c.place(4) == std::nullopt);
    CHECK(guides() == std::vector<DocId>{0, 2});
    c.adopt("b.md", {3, 4});
    CHECK(guides() == std::vector<DocId>{0, 2, 4});
    REQUIRE(c.place(4).has_value());
    CHECK(c.place(4)->source == "b.md");
    CHECK(c.place(4)->position == 1);
    CHECK(c.chunks_of("b.md") == std::vector<DocId>{3, 4});
    std::filesystem::remove_all(path.parent_path());
}
