// The streaming index-file writer (detail/binary_file.hpp): the same bytes as the
// in-memory writer for every file that uses it, memory bounded by its buffer, and a
// failed save that leaves the old file intact.
// This file replaces the global operator new/delete with malloc/free (to watch the
// largest allocation); GCC then sees every inlined new/delete pair as mismatched.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

#include <catch2/catch.hpp>

#include <ragpp/detail/binary_file.hpp>
#include <ragpp/embed/hashing.hpp>
#include <ragpp/filter/metadata_index.hpp>
#include <ragpp/index/bm25.hpp>
#include <ragpp/index/hnsw.hpp>
#include <ragpp/index/store.hpp>
#include <ragpp/index/vector.hpp>
#include <ragpp/text/whitespace.hpp>

#include "support.hpp"

#include <sys/resource.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <new>
#include <random>

// The largest single allocation while `tracking` is set: a save that assembles its file
// in memory allocates at least the file's size at once.
namespace {
std::atomic<bool> tracking{false};
std::atomic<std::size_t> largest{0};
std::atomic<std::size_t> at_least_32k{0};  // allocations of 32 KiB or more
}  // namespace

void* operator new(std::size_t n) {
    if (tracking.load(std::memory_order_relaxed)) {
        if (n > largest.load(std::memory_order_relaxed)) largest = n;
        if (n >= 32768) ++at_least_32k;
    }
    if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
    throw std::bad_alloc();
}
// Every other non-aligned form too, so that no allocation is made by one allocator and
// freed by another (AddressSanitizer checks it).
void* operator new[](std::size_t n) { return operator new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    try {
        return operator new(n);
    } catch (...) {
        return nullptr;
    }
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace {

namespace fs = std::filesystem;
using ragpp::DocId;
using ragpp_test::read_file;
using ragpp_test::TempDir;

/// Sets binary_write_buffer_bytes for a scope.
struct WriteBuffer {
    std::size_t old = ragpp::detail::binary_write_buffer_bytes;
    explicit WriteBuffer(std::size_t bytes) { ragpp::detail::binary_write_buffer_bytes = bytes; }
    ~WriteBuffer() { ragpp::detail::binary_write_buffer_bytes = old; }
};

/// The file `save(path)` writes with the in-memory writer (the oracle) and streaming
/// through buffers of several sizes: all must be equal, byte for byte.
template <class Save>
std::string same_bytes_every_way(const fs::path& path, Save save) {
    std::string oracle;
    {
        WriteBuffer in_memory(0);
        save(path);
        oracle = read_file(path);
    }
    REQUIRE(oracle.size() > ragpp::detail::binary_header_size);
    for (std::size_t buffer : {std::size_t{1}, std::size_t{7}, std::size_t{4096}, std::size_t{1} << 20}) {
        INFO("buffer " << buffer);
        fs::remove(path);
        WriteBuffer b(buffer);
        save(path);
        REQUIRE(read_file(path) == oracle);
    }
    return oracle;
}

ragpp::HashingEmbedder embedder(std::size_t dim) {
    ragpp::HashingOptions o;
    o.dimension = dim;
    return ragpp::HashingEmbedder(o);
}

std::vector<float> random_vector(std::mt19937& rng, std::size_t dim) {
    std::normal_distribution<float> g;
    std::vector<float> v(dim);
    for (auto& x : v) x = g(rng);
    return v;
}

using Flat = ragpp::VectorIndex<ragpp::HashingEmbedder>;
using Graph = ragpp::VectorIndex<ragpp::HashingEmbedder, ragpp::Hnsw>;

Flat flat_index(ragpp::Quantization q, std::size_t n, std::size_t dim) {
    ragpp::VectorIndexOptions o;
    o.quantization = q;
    Flat idx(embedder(dim), o);
    std::mt19937 rng(7);
    for (std::size_t i = 0; i < n; ++i) idx.add_vector(static_cast<DocId>(3 * i + 1), random_vector(rng, dim));
    for (std::size_t i = 0; i < n; i += 5) idx.remove_document(static_cast<DocId>(3 * i + 1));  // dead rows are skipped
    return idx;
}

Graph graph_index(std::size_t n, std::size_t dim) {
    ragpp::HnswOptions h;
    h.M = 8;
    h.ef_construction = 24;
    Graph idx(embedder(dim), ragpp::VectorIndexOptions{}, h);
    std::mt19937 rng(11);
    for (std::size_t i = 0; i < n; ++i) idx.add_vector(static_cast<DocId>(i), random_vector(rng, dim));
    for (std::size_t i = 0; i < n; i += 9) idx.remove_document(static_cast<DocId>(i));  // free slots are saved too
    return idx;
}

ragpp::DocumentStore store(std::size_t n) {
    ragpp::DocumentStore s;
    for (std::size_t i = 0; i < n; ++i) {
        ragpp::Document d{i % 4 == 3 ? "" : "doc-" + std::to_string(n - i), "text of " + std::to_string(i), {}};
        d.metadata["n"] = static_cast<double>(i);
        (void)s.insert(static_cast<DocId>(i), std::move(d));
    }
    for (std::size_t i = 0; i < n; i += 6) s.erase(static_cast<DocId>(i));
    return s;
}

/// Chunk-like documents: a body, a title, a heading path and a source (so BM25F fields),
/// a line number; every fifth removed.
std::vector<ragpp::Document> chunks(std::size_t n) {
    std::vector<ragpp::Document> out;
    for (std::size_t i = 0; i < n; ++i) {
        ragpp::Document d{"", "shared words of part " + std::to_string(i % 50), {}};
        d.metadata["title"] = std::string("Part");
        d.metadata["heading_path"] = std::vector<std::string>{"Guide", "Part " + std::to_string(i % 7)};
        d.metadata["source"] = std::string("docs/big.md");
        d.metadata["line"] = static_cast<double>(4 * i + 1);
        out.push_back(std::move(d));
    }
    return out;
}

using Bm25 = ragpp::BM25Index<ragpp::WhitespaceAnalyzer>;

Bm25 bm25_index(std::size_t n) {
    Bm25 idx;
    const auto docs = chunks(n);
    for (std::size_t i = 0; i < n; ++i) idx.add_document(static_cast<DocId>(i), docs[i]);
    for (std::size_t i = 0; i < n; i += 5) idx.remove_document(static_cast<DocId>(i));
    return idx;
}

ragpp::MetadataIndex metadata_index(std::size_t n) {
    ragpp::MetadataIndex idx;
    const auto docs = chunks(n);
    for (std::size_t i = 0; i < n; ++i) idx.add_document(static_cast<DocId>(i), docs[i]);
    for (std::size_t i = 0; i < n; i += 5) idx.remove_document(static_cast<DocId>(i));
    return idx;
}

}  // namespace

TEST_CASE("the streaming writer writes the in-memory writer's bytes, whatever the pieces and the buffer",
          "[binary_file]") {
    const ragpp::detail::BinaryFormat format{"TESTFRMT", 3, "test file", ""};
    TempDir dir;
    const auto seed = GENERATE(1u, 2u, 3u, 4u);
    std::mt19937 rng(seed);
    std::vector<std::string> pieces;
    for (int i = 0; i < 60; ++i) {
        const std::size_t n = std::uniform_int_distribution<int>(0, 3)(rng) == 0
                                  ? std::uniform_int_distribution<std::size_t>(5000, 40000)(rng)
                                  : std::uniform_int_distribution<std::size_t>(0, 40)(rng);
        std::string p(n, '\0');
        for (auto& c : p) c = static_cast<char>(rng());
        pieces.push_back(std::move(p));
    }
    auto write = [&](ragpp::detail::BinaryWriter& w) {
        w.u64(pieces.size());
        for (std::size_t i = 0; i < pieces.size(); ++i) {
            if (i % 3 == 0) w.str(pieces[i]);
            else w.bytes(pieces[i].data(), pieces[i].size());
            w.u8(static_cast<std::uint8_t>(i));
            w.f64(0.5 * static_cast<double>(i));
        }
    };
    ragpp::detail::BinaryWriter memory;
    write(memory);
    const std::string oracle = memory.finish(format);
    // The oracle is a valid file: the reader accepts its header and checksum.
    CHECK_NOTHROW(ragpp::detail::BinaryReader(oracle, format, "oracle", true));
    for (std::size_t buffer : {std::size_t{1}, std::size_t{13}, std::size_t{100}, std::size_t{8192}, std::size_t{1} << 20}) {
        INFO("seed " << seed << ", buffer " << buffer);
        WriteBuffer b(buffer);
        const fs::path path = dir.path / "f.bin";
        ragpp::detail::BinaryWriter w(path);
        write(w);
        w.save(path, format);
        REQUIRE(read_file(path) == oracle);
    }
    // A streaming writer completes only its own file.
    ragpp::detail::BinaryWriter w(dir.path / "g.bin");
    CHECK_THROWS_AS(w.save(dir.path / "other.bin", format), ragpp::InvalidArgument);
    CHECK_THROWS_AS((void)w.finish(format), ragpp::InvalidArgument);
}

TEST_CASE("every index file saved streaming equals the one the in-memory writer makes", "[binary_file]") {
    TempDir dir;
    SECTION("flat vectors, float32, float16 and int8") {
        for (auto q : {ragpp::Quantization::none, ragpp::Quantization::float16, ragpp::Quantization::int8}) {
            INFO("quantization " << static_cast<int>(q));
            const auto idx = flat_index(q, 300, 40);
            same_bytes_every_way(dir.path / "v.idx", [&](const fs::path& p) { idx.save(p); });
            const auto back = Flat::load(dir.path / "v.idx", embedder(40));
            CHECK(back.size() == idx.size());
        }
    }
    SECTION("HNSW") {
        const auto idx = graph_index(400, 24);
        same_bytes_every_way(dir.path / "h.idx", [&](const fs::path& p) { idx.save(p); });
        CHECK(Graph::load(dir.path / "h.idx", embedder(24)).size() == idx.size());
    }
    SECTION("the document store") {
        const auto s = store(500);
        same_bytes_every_way(dir.path / "documents.bin", [&](const fs::path& p) { s.save(p); });
        CHECK(ragpp::DocumentStore::open(dir.path / "documents.bin").size() == s.size());
    }
    SECTION("BM25, with fields; the same bytes as to_bytes()") {
        const auto idx = bm25_index(600);
        const auto bytes = same_bytes_every_way(dir.path / "bm25.idx", [&](const fs::path& p) { idx.save(p); });
        CHECK(bytes == idx.to_bytes());
        CHECK(Bm25::load(dir.path / "bm25.idx").size() == idx.size());
    }
    SECTION("the metadata index") {
        const auto idx = metadata_index(600);
        same_bytes_every_way(dir.path / "metadata.bin", [&](const fs::path& p) { idx.save(p); });
        const auto back = ragpp::MetadataIndex::load(dir.path / "metadata.bin");
        CHECK(back.size() == idx.size());
        CHECK(back.posting_entries() == idx.posting_entries());
    }
}

TEST_CASE("saving streams: no allocation near the file's size", "[binary_file]") {
    TempDir dir;
    // Saves to dir/name and checks that the file has more than `at_least` bytes and that
    // no allocation during the save reached a third of it.
    auto streams = [&](const char* name, std::size_t at_least, auto save) {
        const fs::path path = dir.path / name;
        largest = 0;
        tracking = true;
        save(path);
        tracking = false;
        const std::size_t largest_save = largest.load();
        const auto size = fs::file_size(path);
        INFO(name << ": file " << size << " bytes, largest allocation " << largest_save);
        REQUIRE(size > at_least);
        CHECK(largest_save < size / 3);
    };
    SECTION("flat") {
        const auto idx = flat_index(ragpp::Quantization::none, 5000, 256);  // 4,000 live rows of 1 KiB
        streams("v.idx", 4'000'000, [&](const fs::path& p) { idx.save(p); });
    }
    SECTION("HNSW") {
        const auto idx = graph_index(3000, 256);
        streams("h.idx", 3'000'000, [&](const fs::path& p) { idx.save(p); });
    }
    // These three built their whole file in a growing string (or copied every posting)
    // before; now their largest allocation is a table of 4 or 8 bytes a document (their
    // files are smaller than the 1 MiB buffer, so a small one here).
    WriteBuffer small_buffer(4096);
    SECTION("the document store") {
        const auto s = store(20000);
        streams("documents.bin", 600'000, [&](const fs::path& p) { s.save(p); });
    }
    SECTION("BM25") {
        const auto idx = bm25_index(20000);
        streams("bm25.idx", 200'000, [&](const fs::path& p) { idx.save(p); });
    }
    SECTION("the metadata index") {
        const auto idx = metadata_index(20000);
        streams("metadata.bin", 200'000, [&](const fs::path& p) { idx.save(p); });
    }
}

TEST_CASE("a failed streaming save throws IoError and leaves the old file intact", "[binary_file]") {
    TempDir dir;
    const auto small = flat_index(ragpp::Quantization::none, 10, 64);
    const auto large = flat_index(ragpp::Quantization::none, 2000, 64);  // ~400 KiB
    const fs::path path = dir.path / "v.idx";
    small.save(path);
    const std::string old = read_file(path);
    auto only_the_file = [&] {
        std::size_t n = 0;
        for (const auto& e : fs::directory_iterator(dir.path)) n += e.path() == path ? 0 : 1;
        return n == 0;
    };

    SECTION("the file size limit (RLIMIT_FSIZE) is reached mid-file") {
        rlimit saved{};
        REQUIRE(::getrlimit(RLIMIT_FSIZE, &saved) == 0);
        const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // EFBIG instead of the signal
        rlimit lim = saved;
        lim.rlim_cur = 100'000;
        REQUIRE(::setrlimit(RLIMIT_FSIZE, &lim) == 0);
        bool threw = false;
        std::string message;
        try {
            WriteBuffer b(4096);
            large.save(path);
        } catch (const ragpp::IoError& e) {
            threw = true;
            message = e.what();
        }
        ::setrlimit(RLIMIT_FSIZE, &saved);
        std::signal(SIGXFSZ, old_handler);
        INFO(message);
        CHECK(threw);
        CHECK(message.find(path.string() + ".tmp-") != std::string::npos);
        CHECK(read_file(path) == old);
        CHECK(only_the_file());
        CHECK(Flat::load(path, embedder(64)).size() == small.size());
    }
    SECTION("the folder cannot be written") {
        const fs::path inside_a_file = path / "x.idx";  // its "folder" is a regular file
        CHECK_THROWS_AS(large.save(inside_a_file), ragpp::IoError);
        CHECK(read_file(path) == old);
    }
    SECTION("a writer abandoned before save removes its temporary") {
        {
            ragpp::detail::BinaryWriter w(path);
            w.u64(42);
        }
        CHECK(read_file(path) == old);
        CHECK(only_the_file());
    }
}

TEST_CASE("DocumentStore::insert grows its table geometrically (an exact reserve per insert is quadratic)", "[store]") {
    ragpp::DocumentStore s;
    at_least_32k = 0;
    tracking = true;
    for (std::size_t i = 0; i < 8000; ++i) (void)s.insert(static_cast<DocId>(i), ragpp::Document{"", "x", {}});
    tracking = false;
    // 16-byte slots: the table passes 32 KiB at 2,048 documents; growing by half again
    // reallocates it 4 times up to 8,000 (an exact reserve: 5,952 times).
    CHECK(at_least_32k.load() <= 8);
    CHECK(s.size() == 8000);
}
