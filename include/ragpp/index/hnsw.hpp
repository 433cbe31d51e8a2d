// ragpp: VectorIndex<Embedder, Hnsw>, approximate vector search on an HNSW graph.
//
// The second backend of VectorIndex (index/vector.hpp has the primary template and the
// exact Flat backend, this one's oracle): a Hierarchical Navigable Small World graph
// (Malkov & Yashunin, TPAMI 2018; detail/hnsw_graph.hpp), docs/hnsw.md.
//
//   - adds are incremental; removals are real: the node is unlinked, its in-neighbours'
//     lists are repaired with the insertion heuristic, and its slot is reused by the next
//     add, so memory stays bounded under add/remove churn (slots() <= the largest size()
//     the index ever had);
//   - SearchOptions::allowed is applied during the graph search (a node outside it is
//     visited for navigation, never returned); an allowed set too small for the graph
//     search to pay (allowed^2 < HnswOptions::exact_filter_factor * ef * size()) is
//     scanned exactly instead, and a graph search returning fewer than k results falls
//     back to the exact scan, so k results come back whenever k allowed documents exist;
//   - add_vectors inserts by batches of `insert_batch` nodes, on as many threads as asked
//     (detail/hnsw_graph.hpp: a batch's nodes search the graph in parallel, then are
//     linked); the graph depends on the batches, not on the number of threads;
//   - save/load in a ragpp index file (format "HNSWINDX" version 2); opened with
//     OpenOptions{.mmap = true} the rows and the level-0 graph are used in place from the
//     mapped file, and the first write after that copies them (copy-on-write).
//
// Metrics: cosine (rows and queries L2-normalised), inner_product, l2, with the same
// scores as the Flat backend. Rows are float32, or with VectorIndexOptions::quantization
// int8 the Flat backend's int8 codes and scales (index/detail/int8_codes.hpp) INSTEAD of
// float32 rows (a 384-d row: 384 bytes instead of 1,536): the graph is built and searched
// on int8 scores (integer dot products), and the ef candidates of a search are re-scored
// from the dequantized rows with the float32 query, so a document's score is the one the
// Flat int8 index gives it. float16 and exact_rescore are not offered (UnsupportedError).
//
// Threading: const members (search, save, ...) are safe to call concurrently (each search
// leases its own scratch); writes need exclusive access (add_vectors' own threads are
// internal to the call).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include <ragpp/core/concepts.hpp>
#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>
#include <ragpp/detail/binary_file.hpp>
#include <ragpp/detail/mapped_file.hpp>
#include <ragpp/detail/simd.hpp>
#include <ragpp/detail/topk.hpp>
#include <ragpp/embed/embedder.hpp>
#include <ragpp/index/detail/hnsw_graph.hpp>
#include <ragpp/index/detail/int8_codes.hpp>
#include <ragpp/index/detail/vector_checks.hpp>
#include <ragpp/index/vector.hpp>

namespace ragpp {

/// The approximate backend of VectorIndex: an HNSW graph.
struct Hnsw {};

struct HnswOptions {
    /// Neighbours kept per node on the upper levels; 2M on level 0 (hnswlib's M). >= 2.
    std::size_t M = 16;
    /// The candidate list size of an insertion (and of a removal's repair search).
    std::size_t ef_construction = 200;
    /// The candidate list size of a search (at least k is used); set_ef_search changes it.
    std::size_t ef_search = 64;
    /// Seeds the random levels: the same adds in the same order give the same graph.
    std::uint64_t seed = 42;
    /// A filtered search scans the allowed set exactly when
    /// allowed^2 < exact_filter_factor * ef * size(): the graph search's cost grows as
    /// ef * size() / allowed, the scan's as allowed; on GloVe 100d (bench/bench_hnsw.cpp,
    /// docs/hnsw.md) they cross near a factor of 20. 0 never switches (except when the
    /// graph search finds fewer than k results).
    double exact_filter_factor = 16.0;
};

/// The nodes add_vectors / add_documents insert together (detail/hnsw_graph.hpp): each
/// searches the graph as it was before its batch and takes the earlier nodes of its batch
/// as exact candidates. add_vector is a batch of one.
inline constexpr std::size_t hnsw_insert_batch = 256;

template <Embedder E>
class VectorIndex<E, Hnsw> {
public:
    /// What search takes per call (index/options.hpp): ef_search per query; a plain
    /// SearchOptions converts.
    using search_options = VectorSearchOptions;
    /// The format id and version of its files (detail/binary_file.hpp container).
    static constexpr detail::BinaryFormat file_format{"HNSWINDX", 2, "HNSW vector index", ""};
    static constexpr std::uint32_t file_version = file_format.version;

    VectorIndex()
        requires std::default_initializable<E>
        : VectorIndex(E{}) {}
    /// Throws InvalidArgument on an embedder of dimension 0 or invalid options,
    /// UnsupportedError on Quantization::float16 or on exact_rescore with int8.
    explicit VectorIndex(E embedder, VectorIndexOptions options = {}, HnswOptions hnsw = {})
        : embedder_(std::move(embedder)), options_(options), hnsw_(hnsw), dim_(embedder_.dimension()) {
        if (dim_ == 0) throw InvalidArgument("VectorIndex<Hnsw>: the embedder's dimension is 0");
        if (options_.quantization == Quantization::float16)
            throw UnsupportedError("VectorIndex<Hnsw>: VectorIndexOptions::quantization float16 (none or int8)");
        if (options_.quantization == Quantization::none) options_.exact_rescore = false;
        if (options_.exact_rescore)
            throw UnsupportedError("VectorIndex<Hnsw>: VectorIndexOptions::exact_rescore (int8 candidates are re-scored "
                                   "from the dequantized rows; the Flat backend offers exact re-scoring)");
        if (hnsw_.M < 2 || hnsw_.M > 1024) throw InvalidArgument("HnswOptions::M must be in [2, 1024]");
        if (hnsw_.ef_construction == 0) throw InvalidArgument("HnswOptions::ef_construction must be >= 1");
        if (hnsw_.ef_search == 0) throw InvalidArgument("HnswOptions::ef_search must be >= 1");
        if (!(hnsw_.exact_filter_factor >= 0.0)) throw InvalidArgument("HnswOptions::exact_filter_factor must be >= 0");
        graph_ = detail::HnswGraph(dim_, hnsw_.M, hnsw_.ef_construction, options_.metric == Metric::l2, hnsw_.seed,
                                   options_.quantization == Quantization::int8);
    }

    [[nodiscard]] const E& embedder() const noexcept { return embedder_; }
    [[nodiscard]] const VectorIndexOptions& options() const noexcept { return options_; }
    [[nodiscard]] const HnswOptions& hnsw_options() const noexcept { return hnsw_; }
    [[nodiscard]] std::size_t dimension() const noexcept { return dim_; }
    /// Live vectors.
    [[nodiscard]] std::size_t size() const noexcept { return slot_of_.size(); }
    /// Node slots, live or free for reuse (the storage's size).
    [[nodiscard]] std::size_t slots() const noexcept { return graph_.slots(); }
    [[nodiscard]] bool contains(DocId id) const noexcept { return slot_of_.count(id) != 0; }
    /// Whether the rows and level-0 graph are still views of a mapped file.
    [[nodiscard]] bool mapped() const noexcept { return graph_.mapped(); }
    /// The graph (for tests and tools: levels, neighbour lists).
    [[nodiscard]] const detail::HnswGraph& graph() const noexcept { return graph_; }

    /// The search's candidate list size (a write: not concurrently with searches).
    void set_ef_search(std::size_t ef) {
        if (ef == 0) throw InvalidArgument("VectorIndex<Hnsw>::set_ef_search: ef must be >= 1");
        hnsw_.ef_search = ef;
    }

    /// When a filtered search switches to the exact scan (HnswOptions::exact_filter_factor).
    void set_exact_filter_factor(double f) {
        if (!(f >= 0.0)) throw InvalidArgument("VectorIndex<Hnsw>::set_exact_filter_factor: must be >= 0");
        hnsw_.exact_filter_factor = f;
    }

    // --- writes ---------------------------------------------------------------------

    /// Embeds `doc.text` as a passage and stores it under `id`. Throws DuplicateError
    /// when `id` is present; nothing changes on any exception.
    void add_document(DocId id, const Document& doc) {
        if (contains(id)) throw duplicate(id);
        const Eigen::VectorXf v = embedder_.embed(doc.text, Role::passage);
        add_vector(id, v);
    }
    /// Standalone use: stores `doc` under the next free id (one past the largest).
    DocId add_document(const Document& doc) {
        const DocId id = next_id_;
        add_document(id, doc);
        return id;
    }
    /// Embeds many documents together and stores doc i under ids[i]; all or nothing.
    /// The graph is built on `threads` threads (add_vectors).
    void add_documents(std::span<const DocId> ids, std::span<const Document* const> docs, unsigned threads = 1) {
        if (ids.size() != docs.size())
            throw DimensionError("VectorIndex<Hnsw>::add_documents: " + std::to_string(ids.size()) + " ids for " +
                                 std::to_string(docs.size()) + " documents");
        for (DocId id : ids)
            if (contains(id)) throw duplicate(id);
        std::vector<std::string> texts;
        texts.reserve(docs.size());
        for (const Document* d : docs) texts.push_back(d->text);
        add_vectors(ids, embedder_.embed_batch(texts, Role::passage), threads);
    }

    /// Inserts a precomputed embedding into the graph. Throws DimensionError on a wrong
    /// length, InvalidArgument on a NaN or infinite value, DuplicateError when `id` is
    /// present; nothing changes then. After a mapped open, the first write copies the
    /// mapped arrays into memory.
    void add_vector(DocId id, std::span<const float> v) {
        if (v.size() != dim_)
            throw DimensionError("VectorIndex<Hnsw>::add_vector: vector of DocId " + std::to_string(id) + " has " +
                                 std::to_string(v.size()) + " dimensions, the index has " + std::to_string(dim_));
        if (contains(id)) throw duplicate(id);
        for (float x : v)
            if (!std::isfinite(x))
                throw InvalidArgument("VectorIndex<Hnsw>::add_vector: vector of DocId " + std::to_string(id) +
                                      " has a NaN or infinite value");
        insert(std::span<const DocId>(&id, 1), v.data(), dim_, 1);
    }
    void add_vector(DocId id, const Eigen::Ref<const Eigen::VectorXf>& v) {
        add_vector(id, std::span<const float>(v.data(), static_cast<std::size_t>(v.size())));
    }
    /// Stores many precomputed embeddings (row i under ids[i]); all or nothing. The graph
    /// is built by batches of hnsw_insert_batch nodes, each batch's searches on up to
    /// `threads` threads (the same graph whatever `threads` is).
    void add_vectors(std::span<const DocId> ids, const Eigen::Ref<const RowMatrixXf>& vectors, unsigned threads = 1) {
        detail::check_vector_batch("VectorIndex<Hnsw>::add_vectors", ids, static_cast<std::size_t>(vectors.rows()),
                                   static_cast<std::size_t>(vectors.cols()), dim_,
                                   [this](DocId id) { return contains(id); }, &duplicate);
        for (Eigen::Index i = 0; i < vectors.rows(); ++i)
            for (Eigen::Index j = 0; j < vectors.cols(); ++j)
                if (!std::isfinite(vectors(i, j)))
                    throw InvalidArgument("VectorIndex<Hnsw>::add_vectors: vector of DocId " +
                                          std::to_string(ids[static_cast<std::size_t>(i)]) + " has a NaN or infinite value");
        if (ids.empty()) return;
        insert(ids, vectors.data(), static_cast<std::size_t>(vectors.outerStride()), threads);
    }

    /// Removes `id`: unlinks its node, repairs its in-neighbours' lists and frees its slot
    /// for the next add. Throws NotFoundError (and changes nothing) when it is absent.
    void remove_document(DocId id) {
        auto it = slot_of_.find(id);
        if (it == slot_of_.end())
            throw NotFoundError("VectorIndex<Hnsw>::remove_document: no vector with DocId " + std::to_string(id));
        auto plan = graph_.plan_remove(it->second);
        graph_.commit(plan);
        slot_of_.erase(it);
    }

    // --- reads ----------------------------------------------------------------------

    /// The stored vector of `id` (normalised for cosine; int8: the dequantized row, as the
    /// Flat int8 index gives it); throws NotFoundError.
    [[nodiscard]] Eigen::VectorXf vector(DocId id) const {
        auto it = slot_of_.find(id);
        if (it == slot_of_.end())
            throw NotFoundError("VectorIndex<Hnsw>::vector: no vector with DocId " + std::to_string(id));
        if (!graph_.int8()) return Eigen::Map<const Eigen::VectorXf>(graph_.row(it->second), static_cast<Eigen::Index>(dim_));
        Eigen::VectorXf v(static_cast<Eigen::Index>(dim_));
        const std::int8_t* c = graph_.codes(it->second);
        for (std::size_t j = 0; j < dim_; ++j) v[static_cast<Eigen::Index>(j)] = graph_.scale(it->second) * c[j];
        return v;
    }

    /// The k best documents for `query`, embedded as a query (approximate; options.ef_search
    /// sets this query's candidate list, see search_vector).
    [[nodiscard]] std::vector<Hit> search(std::string_view query, std::size_t k, const VectorSearchOptions& options = {}) const {
        if (options.ef_search && *options.ef_search == 0)
            throw InvalidArgument("VectorIndex<Hnsw>::search: VectorSearchOptions::ef_search must be >= 1");
        if (k == 0 || size() == 0) return {};
        const Eigen::VectorXf q = embedder_.embed(query, Role::query);
        return search_vector(std::span<const float>(q.data(), dim_), k, options);
    }
    /// The k best documents for a query vector, searched with options.ef_search, or the
    /// index's ef_search when it is unset. Throws DimensionError on a wrong length,
    /// InvalidArgument on a NaN or infinite value or on options.ef_search 0.
    [[nodiscard]] std::vector<Hit> search_vector(std::span<const float> query, std::size_t k,
                                                 const VectorSearchOptions& options = {}) const {
        if (options.ef_search && *options.ef_search == 0)
            throw InvalidArgument("VectorIndex<Hnsw>::search: VectorSearchOptions::ef_search must be >= 1");
        return search_vector(query, k, options, options.ef_search.value_or(hnsw_.ef_search));
    }
    /// The same with the candidate list size `ef` of this call (max(ef, k) is used).
    [[nodiscard]] std::vector<Hit> search_vector(std::span<const float> query, std::size_t k,
                                                 const SearchOptions& options, std::size_t ef) const {
        const std::vector<float> q = prepare_query(query, "search_vector");
        if (k == 0 || size() == 0) return {};
        const std::size_t n = size();
        const std::size_t e = std::max({ef, k < n ? k : n, std::size_t{1}});
        std::vector<std::int8_t> codes;
        const detail::HnswQuery gq = graph_query(q, codes);
        if (options.allowed) {
            const double a = static_cast<double>(options.allowed->count());
            if (a * a < hnsw_.exact_filter_factor * static_cast<double>(e) * static_cast<double>(n))
                return exact(q, gq, k, options);
        }
        const DocSet* allowed = options.allowed.get();
        auto cands = allowed == nullptr ? graph_.search(gq, e, [](std::uint32_t) { return true; })
                                        : graph_.search(gq, e, [&](std::uint32_t s) { return allowed->test(ids_[s]); });
        if (cands.size() < k && cands.size() < n) {
            // A graph search that found fewer than k: the exact scan tells whether k exist.
            auto all = exact(q, gq, k, options);
            if (all.size() > cands.size()) return all;
        }
        detail::TopK top(k, cands.size());
        if (graph_.int8()) {
            for (const auto& c : cands) top.push(ids_[c.slot], final_score(q, gq, c.slot));
        } else {
            // Only the candidates scoring at least the k-th best can enter: their ids are
            // looked up, not the ef others' (ties with the k-th all go in, for the id order).
            float kth = -std::numeric_limits<float>::infinity();
            if (cands.size() > k) {
                std::nth_element(cands.begin(), cands.begin() + static_cast<std::ptrdiff_t>(k - 1), cands.end(),
                                 detail::hnsw_better);
                kth = cands[k - 1].score;
            }
            for (const auto& c : cands)
                if (c.score >= kth) top.push(ids_[c.slot], c.score);
        }
        return top.take_sorted();
    }
    [[nodiscard]] std::vector<Hit> search_vector(const Eigen::Ref<const Eigen::VectorXf>& query, std::size_t k,
                                                 const VectorSearchOptions& options = {}) const {
        return search_vector(std::span<const float>(query.data(), static_cast<std::size_t>(query.size())), k, options);
    }
    /// Exact search over the stored rows (every live node scored, int8: from the
    /// dequantized rows): the graph's oracle.
    [[nodiscard]] std::vector<Hit> search_exact_vector(std::span<const float> query, std::size_t k,
                                                       const VectorSearchOptions& options = {}) const {
        const std::vector<float> q = prepare_query(query, "search_exact_vector");
        if (k == 0 || size() == 0) return {};
        std::vector<std::int8_t> codes;
        return exact(q, graph_query(q, codes), k, options);
    }

    // --- persistence ------------------------------------------------------------------
    //
    // A ragpp index file (detail/binary_file.hpp: magic "RAGPPIDX", format id "HNSWINDX",
    // version 2; version 1, float32 only, is refused as older), payload (little-endian):
    //   u32 metric | u32 quantization (0 none, 2 int8) | u64 dimension | str embedder name |
    //   u64 M | u64 ef_construction | u64 ef_search | u64 seed | f64 exact_filter_factor |
    //   u64 stride | u64 slots | u32 entry slot (0xFFFFFFFF: empty) | u32 top level + 1 |
    //   u32 pad | pad zero bytes (so the rows start at a file offset that is a multiple of 64) |
    //   none: slots x stride f32 rows (zero padded); int8: slots x stride i8 codes (zero
    //   padded) then slots x f32 scales | slots x f32 |x|^2 |
    //   slots x (1 + 2M) u32 level-0 lists (count, ids) | slots x u32 DocId |
    //   slots x u8 level (255: free slot) | for each live slot of level L > 0, in slot
    //   order: L x (1 + M) u32 upper lists.
    // Free slots are saved as they are, so a loaded index reuses them like the saved one.

    /// Writes the index to `path` atomically (temporary file + rename). Throws IoError.
    void save(const std::filesystem::path& path) const {
        detail::BinaryWriter w(path);
        std::size_t pos = detail::binary_header_size;
        const auto u32 = [&](std::uint32_t v) { w.u32(v); pos += 4; };
        const auto u64 = [&](std::uint64_t v) { w.u64(v); pos += 8; };
        const std::size_t slots = graph_.slots();
        u32(static_cast<std::uint32_t>(options_.metric));
        u32(static_cast<std::uint32_t>(options_.quantization));
        u64(dim_);
        w.str(embedder_.name());
        pos += 4 + std::string_view(embedder_.name()).size();
        u64(hnsw_.M);
        u64(hnsw_.ef_construction);
        u64(hnsw_.ef_search);
        u64(hnsw_.seed);
        w.f64(hnsw_.exact_filter_factor);
        pos += 8;
        u64(graph_.stride());
        u64(slots);
        u32(graph_.entry());
        u32(static_cast<std::uint32_t>(graph_.top() + 1));
        const std::uint32_t pad = static_cast<std::uint32_t>((64 - (pos + 4) % 64) % 64);
        u32(pad);
        const char zeros[64] = {};
        w.bytes(zeros, pad);
        if (graph_.int8()) {
            w.array(graph_.codes_data(), slots * graph_.stride());
            w.array(graph_.scales_data(), slots);
        } else {
            w.array(graph_.rows_data(), slots * graph_.stride());
        }
        w.array(graph_.norms_data(), slots);
        w.array(graph_.links0_data(), slots * graph_.link0_words());
        w.array(ids_.data(), slots);
        w.array(graph_.levels().data(), slots);
        for (std::uint32_t s = 0; s < slots; ++s)
            if (graph_.is_live(s) && graph_.level(s) > 0) w.array(graph_.upper(s).data(), graph_.upper(s).size());
        w.save(path, file_format);
    }

    /// Reads an index saved by save(). The metric, the quantization and the graph's
    /// options come from the file. With `open.mmap` the rows and
    /// level-0 lists are used in place from the mapped file (a level-0 neighbour is then
    /// checked when a search reads it: a corrupted one throws FormatError naming the
    /// file); the DocIds, levels and upper lists are read and checked at open. Throws
    /// IoError when the file cannot be read, FormatError (naming the file) when it is
    /// truncated, corrupted or of another version, InvalidArgument when `embedder` is not
    /// the one the index was built with.
    [[nodiscard]] static VectorIndex load(const std::filesystem::path& path, E embedder, VectorIndexOptions options = {},
                                          OpenOptions open = {}) {
        auto bytes = std::make_shared<const detail::FileBytes>(path, open.mmap);
        detail::BinaryReader in(bytes->view(), file_format, path.string(), open.verify);
        const auto metric = in.u32("metric");
        if (metric > 2) in.fail("unknown metric " + std::to_string(metric));
        const auto quant = in.u32("quantization");
        if (quant != static_cast<std::uint32_t>(Quantization::none) && quant != static_cast<std::uint32_t>(Quantization::int8))
            in.fail("unknown quantization " + std::to_string(quant));
        const bool int8 = quant == static_cast<std::uint32_t>(Quantization::int8);
        const auto dim = in.u64("dimension");
        const std::string name(in.str("embedder name"));
        if (dim != embedder.dimension() || name != std::string(embedder.name()))
            throw InvalidArgument("VectorIndex<Hnsw>::load: " + in.name() + " was built with embedder '" + name + "' (" +
                                  std::to_string(dim) + " dimensions), not '" + std::string(embedder.name()) + "' (" +
                                  std::to_string(embedder.dimension()) + ")");
        HnswOptions h;
        h.M = static_cast<std::size_t>(in.u64("M"));
        h.ef_construction = static_cast<std::size_t>(in.u64("ef_construction"));
        h.ef_search = static_cast<std::size_t>(in.u64("ef_search"));
        h.seed = in.u64("seed");
        h.exact_filter_factor = in.f64("exact_filter_factor");
        if (h.M < 2 || h.M > 1024) in.fail("M " + std::to_string(h.M) + " is not in [2, 1024]");
        if (h.ef_construction == 0 || h.ef_search == 0 || !(h.exact_filter_factor >= 0.0))
            in.fail("invalid ef_construction, ef_search or exact_filter_factor");
        const auto stride = in.u64("stride");
        if (stride != (int8 ? (dim + 31) / 32 * 32 : (dim + 15) / 16 * 16))
            in.fail("row stride " + std::to_string(stride) + " for dimension " + std::to_string(dim));
        const std::size_t l0 = 1 + 2 * h.M;
        const std::size_t value = int8 ? 1 : 4;  // bytes of a row's value
        const std::size_t per_slot = static_cast<std::size_t>(stride) * value + (int8 ? 4 : 0) + 4 + l0 * 4 + 4 + 1;
        const std::size_t slots = in.count("slot count", per_slot);
        if (slots >= detail::HnswGraph::kNone) in.fail("slot count " + std::to_string(slots));
        const std::uint32_t entry = in.u32("entry slot");
        const std::uint32_t top1 = in.u32("top level");
        const std::uint32_t pad = in.u32("pad");
        if (pad >= 64 || (in.offset() + pad) % 64 != 0) in.fail("bad padding before the rows");
        (void)in.raw(pad, "pad");
        const auto take = [&](std::size_t n, std::size_t size, const char* field) {
            if (n > in.remaining() / size) in.fail(std::string("truncated while reading ") + field);
            return in.raw(n * size, field).data();
        };
        const char* rows = take(slots * stride, value, "rows");
        const char* scales = int8 ? take(slots, 4, "scales") : nullptr;
        const char* norms = take(slots, 4, "norms");
        const char* links0 = take(slots * l0, 4, "level-0 lists");
        std::vector<DocId> ids;
        in.array(ids, slots, "DocIds");
        std::vector<std::uint8_t> levels;
        in.array(levels, slots, "levels");
        std::vector<std::vector<std::uint32_t>> upper(slots);
        std::unordered_map<DocId, std::uint32_t> slot_of;
        slot_of.reserve(slots);
        int top = -1;
        for (std::uint32_t s = 0; s < slots; ++s) {
            if (levels[s] == detail::HnswGraph::kFree) continue;
            if (levels[s] > detail::HnswGraph::kMaxLevel) in.fail("node " + std::to_string(s) + " has level " + std::to_string(levels[s]));
            if (!slot_of.emplace(ids[s], s).second) in.fail("DocId " + std::to_string(ids[s]) + " appears twice");
            top = std::max<int>(top, levels[s]);
            if (levels[s] > 0) {
                const std::size_t words = levels[s] * (1 + h.M);
                in.array(upper[s], words, "upper lists");
                for (std::size_t lc = 0; lc < levels[s]; ++lc) {
                    const std::uint32_t* rec = upper[s].data() + lc * (1 + h.M);
                    if (rec[0] > h.M) in.fail("node " + std::to_string(s) + ": an upper list of " + std::to_string(rec[0]) + " neighbours");
                    for (std::uint32_t j = 0; j < rec[0]; ++j)
                        if (rec[1 + j] >= slots) in.fail("node " + std::to_string(s) + ": neighbour " + std::to_string(rec[1 + j]) + " out of range");
                }
            }
        }
        in.expect_end();
        if (slot_of.empty() ? entry != detail::HnswGraph::kNone || top1 != 0
                            : entry >= slots || levels[entry] == detail::HnswGraph::kFree || levels[entry] != top ||
                                  static_cast<int>(top1) != top + 1)
            in.fail("inconsistent entry point " + std::to_string(entry));
        // A mapped file keeps its pages (aligned: the payload offset of the rows is a
        // multiple of 64, the mapping page-aligned); a read file is copied (and checked).
        const bool in_place = bytes->mapped() && reinterpret_cast<std::uintptr_t>(rows) % 64 == 0;
        for (std::size_t s = 0; int8 && s < slots; ++s) {  // a bad scale would give NaN scores
            float a = 0;
            std::memcpy(&a, scales + s * 4, 4);
            if (!std::isfinite(a)) in.fail("node " + std::to_string(s) + " has a bad int8 scale");
        }
        if (!in_place) {
            const auto* l = reinterpret_cast<const unsigned char*>(links0);
            for (std::size_t s = 0; s < slots; ++s) {
                std::uint32_t cnt = 0;
                std::memcpy(&cnt, l + s * l0 * 4, 4);
                if (cnt > 2 * h.M) in.fail("node " + std::to_string(s) + ": a level-0 list of " + std::to_string(cnt) + " neighbours");
                for (std::uint32_t j = 0; j < cnt; ++j) {
                    std::uint32_t nb = 0;
                    std::memcpy(&nb, l + (s * l0 + 1 + j) * 4, 4);
                    if (nb >= slots) in.fail("node " + std::to_string(s) + ": neighbour " + std::to_string(nb) + " out of range");
                }
            }
        }
        options.metric = static_cast<Metric>(metric);
        options.quantization = static_cast<Quantization>(quant);
        options.exact_rescore = false;
        VectorIndex index(std::move(embedder), options, h);
        if (in_place) {
            detail::HnswGraph::Loaded a;
            if (int8) a.codes = reinterpret_cast<const std::int8_t*>(rows);
            else a.rows = reinterpret_cast<const float*>(rows);
            a.scales = reinterpret_cast<const float*>(scales);
            a.norms = reinterpret_cast<const float*>(norms);
            a.links0 = reinterpret_cast<const std::uint32_t*>(links0);
            index.graph_.install(slots, a, std::move(levels), std::move(upper), entry, top, bytes, path.string());
            bytes->advise_random();
        } else {
            // One copy from the file's bytes into the graph's own arrays (moved in).
            detail::HnswGraph::Owned o;
            if (int8) copy_out(o.codes, rows, slots * stride);
            else copy_out(o.rows, rows, slots * stride);
            if (int8) copy_out(o.scales, scales, slots);
            copy_out(o.norms, norms, slots);
            copy_out(o.links0, links0, slots * l0);
            index.graph_.install(slots, std::move(o), std::move(levels), std::move(upper), entry, top, path.string());
        }
        index.ids_ = std::move(ids);
        index.slot_of_ = std::move(slot_of);
        for (const auto& [id, s] : index.slot_of_)
            index.next_id_ = std::max<DocId>(index.next_id_, id == std::numeric_limits<DocId>::max() ? id : id + 1);
        return index;
    }

private:
    /// n values of v's type from the bytes at p (little-endian, as stored): a copy when p
    /// is aligned for the type (a read file's buffer is), else zeroed and memcpy'd.
    template <class V>
    static void copy_out(V& v, const char* p, std::size_t n) {
        using T = typename V::value_type;
        if (reinterpret_cast<std::uintptr_t>(p) % alignof(T) == 0) {
            const T* t = reinterpret_cast<const T*>(p);
            v.assign(t, t + n);
        } else {
            v.resize(n);
            if (n > 0) std::memcpy(v.data(), p, n * sizeof(T));
        }
    }
    static DuplicateError duplicate(DocId id) {
        return DuplicateError("VectorIndex<Hnsw>: DocId " + std::to_string(id) + " is already indexed");
    }
    void normalize(float* x) const noexcept {
        const float n2 = detail::simd::dot_f32_scalar(x, x, dim_);
        if (n2 > 0.0F) {
            const float inv = 1.0F / std::sqrt(n2);
            for (std::size_t j = 0; j < dim_; ++j) x[j] *= inv;
        }
    }
    /// The query, normalised for cosine and zero padded to a float32 row's stride.
    std::vector<float> prepare_query(std::span<const float> query, const char* where) const {
        if (query.size() != dim_)
            throw DimensionError(std::string("VectorIndex<Hnsw>::") + where + ": query has " +
                                 std::to_string(query.size()) + " dimensions, the index has " + std::to_string(dim_));
        std::vector<float> q(query.begin(), query.end());
        for (float x : q)
            if (!std::isfinite(x))
                throw InvalidArgument(std::string("VectorIndex<Hnsw>::") + where + ": query has a NaN or infinite value");
        if (options_.metric == Metric::cosine) normalize(q.data());
        q.resize(std::max(graph_.int8() ? dim_ : graph_.stride(), dim_), 0.0F);
        return q;
    }
    /// The prepared query in the graph's form (int8: its codes, kept in `codes`).
    detail::HnswQuery graph_query(const std::vector<float>& q, std::vector<std::int8_t>& codes) const {
        detail::HnswQuery gq;
        gq.n2 = detail::simd::dot_f32_scalar(q.data(), q.data(), dim_);
        if (graph_.int8()) {
            codes.assign(graph_.stride(), 0);
            gq.scale = detail::int8_encode_query(q.data(), dim_, codes.data());
            gq.c = codes.data();
        } else {
            gq.f = q.data();
        }
        return gq;
    }
    /// The score a result carries: the graph's (float32), or the dequantized row's with
    /// the float32 query (int8: the Flat int8 index's re-scoring score).
    float final_score(const std::vector<float>& q, const detail::HnswQuery& gq, std::uint32_t s) const noexcept {
        if (!graph_.int8()) return graph_.score(gq, s);
        const float d = detail::int8_rescore(graph_.codes(s), graph_.scale(s), q.data(), dim_);
        return options_.metric == Metric::l2 ? 2.0F * d - graph_.norm2(s) - gq.n2 : d;
    }
    /// Every allowed live node scored: the small-filter path and the fallback.
    std::vector<Hit> exact(const std::vector<float>& q, const detail::HnswQuery& gq, std::size_t k,
                           const SearchOptions& options) const {
        detail::TopK top(k, size());
        if (options.allowed && options.allowed->count() * 8 < size()) {
            options.allowed->for_each([&](DocId id) {
                auto it = slot_of_.find(id);
                if (it != slot_of_.end()) top.push(id, final_score(q, gq, it->second));
            });
        } else {
            graph_.for_each_live([&](std::uint32_t s) {
                if (options.allows(ids_[s])) top.push(ids_[s], final_score(q, gq, s));
            });
        }
        return top.take_sorted();
    }

    /// Inserts checked rows (row i at rows + i * row_stride, under ids[i], absent and
    /// distinct) by batches of hnsw_insert_batch; all or nothing.
    void insert(std::span<const DocId> ids, const float* rows, std::size_t row_stride, unsigned threads) {
        std::vector<float> unit;  // the batch's rows, normalised (cosine)
        std::size_t done = 0;
        const DocId next_before = next_id_;
        try {
            while (done < ids.size()) {
                const std::size_t n = std::min(hnsw_insert_batch, ids.size() - done);
                const float* x = rows + done * row_stride;
                std::size_t xs = row_stride;
                if (options_.metric == Metric::cosine) {
                    unit.resize(n * dim_);
                    for (std::size_t i = 0; i < n; ++i) {
                        std::copy_n(x + i * row_stride, dim_, unit.data() + i * dim_);
                        normalize(unit.data() + i * dim_);
                    }
                    x = unit.data();
                    xs = dim_;
                }
                auto plan = graph_.plan_batch(x, n, xs, threads);
                std::size_t mapped = 0;
                try {
                    if (ids_.capacity() < ids_.size() + plan.added)
                        ids_.reserve(std::max(ids_.size() + plan.added, ids_.size() * 2 + 16));
                    for (; mapped < n; ++mapped) slot_of_.emplace(ids[done + mapped], plan.slots[mapped]);
                } catch (...) {
                    for (std::size_t i = 0; i < mapped; ++i) slot_of_.erase(ids[done + i]);
                    graph_.abandon(plan);
                    throw;
                }
                for (std::size_t i = 0; i < n; ++i) {
                    const DocId id = ids[done + i];
                    if (i < plan.reused) ids_[plan.slots[i]] = id;
                    else ids_.push_back(id);  // capacity reserved
                    next_id_ = std::max<DocId>(next_id_, id == std::numeric_limits<DocId>::max() ? id : id + 1);
                }
                graph_.commit(plan);
                done += n;
            }
        } catch (...) {  // out of memory: take back the batches added (each removal plans first)
            for (std::size_t i = done; i-- > 0;)
                if (contains(ids[i])) remove_document(ids[i]);
            next_id_ = next_before;
            throw;
        }
    }

    E embedder_;
    VectorIndexOptions options_;
    HnswOptions hnsw_;
    std::size_t dim_;
    detail::HnswGraph graph_;
    std::vector<DocId> ids_;  // slot -> DocId (a free slot keeps its last one)
    std::unordered_map<DocId, std::uint32_t> slot_of_;
    DocId next_id_ = 0;
};

}  // namespace ragpp
