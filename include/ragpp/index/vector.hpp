// ragpp: VectorIndex<Embedder, Backend = Flat>, exact (flat) vector search.
//
// Vectors are stored as one row-major float32 matrix (a contiguous buffer, viewed as
// an Eigen::Map of RowMatrixXf), one row per document. A search is one pass of dot
// products over the rows (a matrix-vector product computed by a SIMD kernel chosen at
// run time for this CPU, detail/simd.hpp) feeding a bounded selection of the k best
// (detail/topk.hpp); many queries are searched together as one blocked matrix product
// S = Q X^T (a SIMD micro-kernel scoring 4 rows x 4 queries per pass, over blocks of
// rows that stay in cache).
//
// Scores (higher is better, ties by smaller DocId):
//   cosine          s = x.q / (|x| |q|)      vectors are L2-normalised when added and
//                                            the query when searched (zero stays zero)
//   inner_product   s = x.q
//   l2              s = -|x - q|^2 = 2 x.q - |x|^2 - |q|^2   (negated squared distance)
//
// Quantized storage (VectorIndexOptions::quantization) keeps, beside the float32 rows,
// a compact copy scanned first:
//   int8     per vector: scale = max_i |x_i| / 127, c_i = round(x_i / scale); the query
//            is quantized the same way (scale t, d_i) and x.q ~ scale * t * sum c_i d_i
//            (integer dot products);
//   float16  IEEE binary16 copies of x_i, dotted with the float32 query.
// The best max(k * rescore_factor, min_rescore) candidates of the scan are then
// re-scored exactly from the float32 rows, so returned scores are always exact; only
// the candidate set is approximate (recall@10 against exact search is measured by
// bench/bench_vector.cpp). The float32 rows are kept, so quantization buys speed
// (a scan reads 4x or 2x fewer bytes), not memory: it costs 1/4 or 1/2 more.
//
// Removal marks a tombstone (the row is skipped); rows are compacted when tombstones
// exceed `compact_ratio` of the rows, or on compact().
//
// Threading: const members (search, save, ...) are safe to call concurrently; writes
// need exclusive access.
#pragma once

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <new>
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
#include <ragpp/detail/aligned_allocator.hpp>
#include <ragpp/detail/binary_file.hpp>
#include <ragpp/detail/mapped_file.hpp>
#include <ragpp/detail/simd.hpp>
#include <ragpp/detail/topk.hpp>
#include <ragpp/embed/embedder.hpp>

namespace ragpp {

enum class Metric : std::uint32_t { cosine = 0, inner_product = 1, l2 = 2 };
enum class Quantization : std::uint32_t { none = 0, float16 = 1, int8 = 2 };

[[nodiscard]] constexpr std::string_view to_string(Metric m) noexcept {
    return m == Metric::cosine ? "cosine" : m == Metric::inner_product ? "inner_product" : "l2";
}
[[nodiscard]] constexpr std::string_view to_string(Quantization q) noexcept {
    return q == Quantization::none ? "none" : q == Quantization::float16 ? "float16" : "int8";
}

struct VectorIndexOptions {
    Metric metric = Metric::cosine;
    Quantization quantization = Quantization::none;
    /// Quantized search re-scores max(k * rescore_factor, min_rescore) candidates exactly.
    std::size_t rescore_factor = 10;
    std::size_t min_rescore = 100;
    /// Compact when tombstones exceed this fraction of the rows (in (0, 1]).
    double compact_ratio = 0.25;
};

/// The exhaustive backend: every stored vector is scored. It is also the oracle for
/// any approximate backend added later.
struct Flat {};

template <Embedder E, class Backend = Flat>
class VectorIndex {
    static_assert(std::same_as<Backend, Flat>, "VectorIndex: Flat is the only backend so far");

public:
    /// The format id and version of its files in the container of every ragpp index
    /// file (detail/binary_file.hpp); format 1 files (magic "RAGPPVEC") are refused as
    /// written by an older ragpp.
    static constexpr detail::BinaryFormat file_format{"VECINDEX", 2, "vector index", "RAGPPVEC"};
    static constexpr std::uint32_t file_version = file_format.version;

    VectorIndex()
        requires std::default_initializable<E>
        : VectorIndex(E{}) {}
    /// Throws InvalidArgument on an embedder of dimension 0 or invalid options.
    explicit VectorIndex(E embedder, VectorIndexOptions options = {})
        : embedder_(std::move(embedder)), options_(options), dim_(embedder_.dimension()) {
        if (dim_ == 0) throw InvalidArgument("VectorIndex: the embedder's dimension is 0");
        if (!(options_.compact_ratio > 0.0 && options_.compact_ratio <= 1.0))
            throw InvalidArgument("VectorIndexOptions::compact_ratio must be in (0, 1]");
        if (options_.rescore_factor == 0) throw InvalidArgument("VectorIndexOptions::rescore_factor must be >= 1");
        stride16_ = (dim_ + 15) / 16 * 16;
        stride8_ = (dim_ + 31) / 32 * 32;
    }

    [[nodiscard]] const E& embedder() const noexcept { return embedder_; }
    [[nodiscard]] const VectorIndexOptions& options() const noexcept { return options_; }
    [[nodiscard]] std::size_t dimension() const noexcept { return dim_; }
    /// Live (not removed) vectors.
    [[nodiscard]] std::size_t size() const noexcept { return row_of_.size(); }
    /// Stored rows, tombstones included.
    [[nodiscard]] std::size_t rows() const noexcept { return ids_.size(); }
    [[nodiscard]] bool contains(DocId id) const noexcept { return row_of_.count(id) != 0; }

    // --- writes ---------------------------------------------------------------------

    /// Embeds `doc.text` as a passage and stores it under `id`. Throws DuplicateError
    /// when `id` is present; nothing changes on any exception.
    void add_document(DocId id, const Document& doc) {
        if (contains(id)) throw duplicate(id);
        const Eigen::VectorXf v = embedder_.embed(doc.text, Role::passage);
        add_vector(id, v);
    }
    /// Embeds many documents together (one embed_batch call: a transformer batches and
    /// threads it) and stores doc i under ids[i]. All or nothing, like add_vectors.
    void add_documents(std::span<const DocId> ids, std::span<const Document* const> docs) {
        if (ids.size() != docs.size())
            throw DimensionError("VectorIndex::add_documents: " + std::to_string(ids.size()) + " ids for " +
                                 std::to_string(docs.size()) + " documents");
        for (DocId id : ids)
            if (contains(id)) throw duplicate(id);
        std::vector<std::string> texts;
        texts.reserve(docs.size());
        for (const Document* d : docs) texts.push_back(d->text);
        add_vectors(ids, embedder_.embed_batch(texts, Role::passage));
    }
    /// Standalone use: stores `doc` under the next free id (one past the largest).
    DocId add_document(const Document& doc) {
        const DocId id = next_id_;
        add_document(id, doc);
        return id;
    }

    /// Stores a precomputed embedding. Throws DimensionError when its length is not
    /// dimension(), InvalidArgument when it has a NaN or infinite value,
    /// DuplicateError when `id` is present; nothing is stored then.
    void add_vector(DocId id, std::span<const float> v) {
        if (v.size() != dim_)
            throw DimensionError("VectorIndex::add_vector: vector of DocId " + std::to_string(id) + " has " +
                                 std::to_string(v.size()) + " dimensions, the index has " + std::to_string(dim_));
        if (contains(id)) throw duplicate(id);
        for (float x : v)
            if (!std::isfinite(x))
                throw InvalidArgument("VectorIndex::add_vector: vector of DocId " + std::to_string(id) +
                                      " has a NaN or infinite value");
        // Prepare the row, then make room everywhere (may throw, nothing changed yet),
        // then commit with operations that cannot throw.
        std::vector<float> row(v.begin(), v.end());
        if (options_.metric == Metric::cosine) normalize(row.data());
        const std::size_t n = ids_.size();
        grow(data_, (n + 1) * dim_);
        grow(ids_, n + 1);
        grow(norms2_, n + 1);
        grow(dead_, n + 1);
        if (options_.quantization == Quantization::int8) {
            grow(q8_, (n + 1) * stride8_);
            grow(scale8_, n + 1);
        } else if (options_.quantization == Quantization::float16) {
            grow(f16_, (n + 1) * stride16_);
        }
        row_of_.emplace(id, static_cast<std::uint32_t>(n));  // the last step that may throw
        data_.insert(data_.end(), row.begin(), row.end());
        ids_.push_back(id);
        norms2_.push_back(detail::simd::dot_f32_scalar(row.data(), row.data(), dim_));
        dead_.push_back(0);
        append_quantized(row.data());
        next_id_ = std::max<DocId>(next_id_, id == std::numeric_limits<DocId>::max() ? id : id + 1);
    }
    void add_vector(DocId id, const Eigen::Ref<const Eigen::VectorXf>& v) {
        add_vector(id, std::span<const float>(v.data(), static_cast<std::size_t>(v.size())));
    }

    /// Stores many precomputed embeddings (row i under ids[i]); all or nothing.
    void add_vectors(std::span<const DocId> ids, const Eigen::Ref<const RowMatrixXf>& vectors) {
        if (static_cast<std::size_t>(vectors.rows()) != ids.size())
            throw DimensionError("VectorIndex::add_vectors: " + std::to_string(ids.size()) + " ids for " +
                                 std::to_string(vectors.rows()) + " vectors");
        if (static_cast<std::size_t>(vectors.cols()) != dim_)
            throw DimensionError("VectorIndex::add_vectors: vectors have " + std::to_string(vectors.cols()) +
                                 " dimensions, the index has " + std::to_string(dim_));
        std::unordered_map<DocId, int> seen;
        for (DocId id : ids)
            if (contains(id) || !seen.emplace(id, 0).second) throw duplicate(id);
        const std::size_t before = ids_.size();
        const DocId next_before = next_id_;
        try {
            for (std::size_t i = 0; i < ids.size(); ++i) {
                const auto r = vectors.row(static_cast<Eigen::Index>(i));
                add_vector(ids[i], std::span<const float>(r.data(), dim_));
            }
        } catch (...) {
            truncate_to(before);
            next_id_ = next_before;
            throw;
        }
    }

    /// Removes `id`; throws NotFoundError (and changes nothing) when it is absent.
    void remove_document(DocId id) {
        auto it = row_of_.find(id);
        if (it == row_of_.end())
            throw NotFoundError("VectorIndex::remove_document: no vector with DocId " + std::to_string(id));
        dead_[it->second] = 1;
        ++dead_count_;
        row_of_.erase(it);
        if (static_cast<double>(dead_count_) > options_.compact_ratio * static_cast<double>(ids_.size())) compact();
    }

    /// Drops the tombstones: rows move down, keeping their order. Never throws.
    void compact() noexcept {
        if (dead_count_ == 0) return;
        std::size_t w = 0;
        for (std::size_t r = 0; r < ids_.size(); ++r) {
            if (dead_[r] != 0) continue;
            if (w != r) {
                std::copy_n(data_.begin() + static_cast<std::ptrdiff_t>(r * dim_), dim_,
                            data_.begin() + static_cast<std::ptrdiff_t>(w * dim_));
                ids_[w] = ids_[r];
                norms2_[w] = norms2_[r];
                if (!q8_.empty()) {
                    std::copy_n(q8_.begin() + static_cast<std::ptrdiff_t>(r * stride8_), stride8_,
                                q8_.begin() + static_cast<std::ptrdiff_t>(w * stride8_));
                    scale8_[w] = scale8_[r];
                }
                if (!f16_.empty())
                    std::copy_n(f16_.begin() + static_cast<std::ptrdiff_t>(r * stride16_), stride16_,
                                f16_.begin() + static_cast<std::ptrdiff_t>(w * stride16_));
                row_of_[ids_[w]] = static_cast<std::uint32_t>(w);  // existing key: no allocation
            }
            ++w;
        }
        shrink_storage(w);
        std::fill(dead_.begin(), dead_.end(), std::uint8_t{0});
        dead_count_ = 0;
    }

    // --- reads ----------------------------------------------------------------------

    /// The stored vector of `id` (normalised for cosine); throws NotFoundError.
    [[nodiscard]] Eigen::VectorXf vector(DocId id) const {
        auto it = row_of_.find(id);
        if (it == row_of_.end()) throw NotFoundError("VectorIndex::vector: no vector with DocId " + std::to_string(id));
        return Eigen::Map<const Eigen::VectorXf>(row_ptr(it->second), static_cast<Eigen::Index>(dim_));
    }
    /// The stored float32 rows (tombstones included), row r belonging to ids()[r].
    [[nodiscard]] Eigen::Map<const RowMatrixXf> matrix() const noexcept {
        return {data_.data(), static_cast<Eigen::Index>(ids_.size()), static_cast<Eigen::Index>(dim_)};
    }
    [[nodiscard]] const std::vector<DocId>& ids() const noexcept { return ids_; }

    /// The k best documents for `query`, embedded as a query.
    [[nodiscard]] std::vector<Hit> search(std::string_view query, std::size_t k,
                                          const SearchOptions& options = {}) const {
        if (k == 0 || size() == 0) return {};
        const Eigen::VectorXf q = embedder_.embed(query, Role::query);
        return search_vector(q, k, options);
    }

    /// The k best documents for a query vector. Throws DimensionError on a wrong
    /// length, InvalidArgument on a NaN or infinite value.
    [[nodiscard]] std::vector<Hit> search_vector(std::span<const float> query, std::size_t k,
                                                 const SearchOptions& options = {}) const {
        std::vector<float> q = prepare_query(query, "search_vector");
        if (k == 0 || size() == 0) return {};
        if (options_.quantization != Quantization::none) return search_quantized(q, k, options);
        return search_exact(q, k, options);
    }
    [[nodiscard]] std::vector<Hit> search_vector(const Eigen::Ref<const Eigen::VectorXf>& query, std::size_t k,
                                                 const SearchOptions& options = {}) const {
        return search_vector(std::span<const float>(query.data(), static_cast<std::size_t>(query.size())), k, options);
    }

    /// Exact float32 search, whatever the quantization: the oracle of the quantized path.
    [[nodiscard]] std::vector<Hit> search_exact_vector(std::span<const float> query, std::size_t k,
                                                       const SearchOptions& options = {}) const {
        std::vector<float> q = prepare_query(query, "search_exact_vector");
        if (k == 0 || size() == 0) return {};
        return search_exact(q, k, options);
    }

    /// Many query vectors (one per row) at once: one blocked matrix product scores
    /// every query against every row, each row read from memory once for all queries.
    /// Exact float32 scores whatever the quantization. Result i answers query row i.
    [[nodiscard]] std::vector<std::vector<Hit>> search_batch(const Eigen::Ref<const RowMatrixXf>& queries, std::size_t k,
                                                             const SearchOptions& options = {}) const {
        if (static_cast<std::size_t>(queries.cols()) != dim_)
            throw DimensionError("VectorIndex::search_batch: queries have " + std::to_string(queries.cols()) +
                                 " dimensions, the index has " + std::to_string(dim_));
        const auto m = static_cast<std::size_t>(queries.rows());
        RowMatrixXf Q(queries);
        if (!Q.allFinite()) throw InvalidArgument("VectorIndex::search_batch: a query has a NaN or infinite value");
        Eigen::VectorXf qn2(static_cast<Eigen::Index>(m));
        for (std::size_t i = 0; i < m; ++i) {
            auto row = Q.row(static_cast<Eigen::Index>(i));
            if (options_.metric == Metric::cosine) {
                const float n = row.norm();
                if (n > 0.0F) row /= n;
            }
            qn2[static_cast<Eigen::Index>(i)] = row.squaredNorm();
        }
        std::vector<detail::TopK> tops;
        tops.reserve(m);
        for (std::size_t i = 0; i < m; ++i) tops.emplace_back(k, ids_.size());
        if (k > 0 && size() > 0) {
            // S = Q X^T by blocks of rows that stay in cache while every group of four
            // queries is scored against them (detail::simd rows4q_f32 micro-kernel).
            const auto& kern = detail::simd::kernels();
            const std::size_t n = ids_.size();
            constexpr std::size_t sub = 256;
            std::vector<float> S(4 * sub);
            for (std::size_t b = 0; b < n; b += sub) {
                const std::size_t len = std::min(sub, n - b);
                for (std::size_t g = 0; g < m; g += 4) {
                    const std::size_t cnt = std::min<std::size_t>(4, m - g);
                    const float* qg = Q.data() + g * dim_;
                    if (cnt == 4) kern.rows4q_f32(row_ptr(b), len, dim_, dim_, qg, dim_, S.data(), sub);
                    else
                        for (std::size_t t = 0; t < cnt; ++t) kern.rows_f32(row_ptr(b), len, dim_, dim_, qg + t * dim_, S.data() + t * sub);
                    for (std::size_t j = 0; j < len; ++j) {
                        const std::size_t r = b + j;
                        if (dead_[r] != 0 || !options.allows(ids_[r])) continue;
                        for (std::size_t t = 0; t < cnt; ++t)
                            tops[g + t].push(ids_[r], finish(S[t * sub + j], r, qn2[static_cast<Eigen::Index>(g + t)]));
                    }
                }
            }
        }
        std::vector<std::vector<Hit>> out;
        out.reserve(m);
        for (auto& t : tops) out.push_back(t.take_sorted());
        return out;
    }
    /// Many text queries: embedded together (embed_batch), then search_batch.
    [[nodiscard]] std::vector<std::vector<Hit>> search_batch(std::span<const std::string> queries, std::size_t k,
                                                             const SearchOptions& options = {}) const {
        return search_batch(embedder_.embed_batch(queries, Role::query), k, options);
    }

    // --- persistence ------------------------------------------------------------------
    //
    // A ragpp index file (detail/binary_file.hpp: magic "RAGPPIDX", format id "VECINDEX",
    // version 2, payload size, FNV-1a-64 of the payload), payload (little-endian):
    //   u32 metric | u32 quantization | u64 dimension | str embedder name (u32 byte
    //   count + bytes) | u64 n | n x u32 DocId | n x dimension x f32 rows
    // Only live rows are written.

    /// Writes the index to `path` atomically (temporary file + rename). Throws IoError.
    void save(const std::filesystem::path& path) const {
        detail::BinaryWriter w;
        w.u32(static_cast<std::uint32_t>(options_.metric));
        w.u32(static_cast<std::uint32_t>(options_.quantization));
        w.u64(static_cast<std::uint64_t>(dim_));
        w.str(embedder_.name());
        w.u64(static_cast<std::uint64_t>(size()));
        for (std::size_t r = 0; r < ids_.size(); ++r)
            if (dead_[r] == 0) w.put(ids_[r]);
        for (std::size_t r = 0; r < ids_.size(); ++r)
            if (dead_[r] == 0) w.array(row_ptr(r), dim_);
        w.save(path, file_format);
    }

    /// Reads an index saved by save(). The metric and quantization come from the file;
    /// the other options from `options`. Throws IoError when the file cannot be read,
    /// FormatError (naming the file) when it is truncated, corrupted or of another
    /// version, InvalidArgument when `embedder` is not the one the index was built with.
    [[nodiscard]] static VectorIndex load(const std::filesystem::path& path, E embedder,
                                          VectorIndexOptions options = {}, OpenOptions open = {}) {
        const detail::FileBytes bytes(path, open.mmap);
        detail::BinaryReader in(bytes.view(), file_format, path.string(), open.verify);
        const auto metric = in.u32("metric");
        const auto quant = in.u32("quantization");
        if (metric > 2) in.fail("unknown metric " + std::to_string(metric));
        if (quant > 2) in.fail("unknown quantization " + std::to_string(quant));
        const auto dim = in.u64("dimension");
        const std::string name(in.str("embedder name"));
        if (dim != embedder.dimension() || name != std::string(embedder.name()))
            throw InvalidArgument("VectorIndex::load: " + in.name() + " was built with embedder '" + name + "' (" +
                                  std::to_string(dim) + " dimensions), not '" + std::string(embedder.name()) + "' (" +
                                  std::to_string(embedder.dimension()) + ")");
        // Each row: a DocId and dim floats; the count is checked before anything is allocated.
        if (dim > in.remaining() / sizeof(float)) in.fail("dimension " + std::to_string(dim) + " does not fit in the file");
        const std::size_t n = in.count("row count", sizeof(DocId) + static_cast<std::size_t>(dim) * sizeof(float));
        std::vector<DocId> ids;
        in.array(ids, n, "ids");
        std::vector<float> data;
        in.array(data, n * static_cast<std::size_t>(dim), "vectors");
        in.expect_end();
        options.metric = static_cast<Metric>(metric);
        options.quantization = static_cast<Quantization>(quant);
        VectorIndex index(std::move(embedder), options);
        for (std::size_t i = 0; i < ids.size(); ++i) {
            const std::span<const float> row(data.data() + i * dim, static_cast<std::size_t>(dim));
            for (float x : row)
                if (!std::isfinite(x)) in.fail("vector of DocId " + std::to_string(ids[i]) + " has a non-finite value");
            if (index.contains(ids[i])) in.fail("DocId " + std::to_string(ids[i]) + " appears twice");
            index.add_vector(ids[i], row);
        }
        return index;
    }

private:
    static constexpr std::size_t block_rows = 4096;

    static DuplicateError duplicate(DocId id) {
        return DuplicateError("VectorIndex: DocId " + std::to_string(id) + " is already indexed");
    }
    template <class V>
    static void grow(V& v, std::size_t needed) {
        if (v.capacity() < needed) v.reserve(std::max(needed, v.capacity() * 2));
    }

    [[nodiscard]] const float* row_ptr(std::size_t r) const noexcept { return data_.data() + r * dim_; }

    void normalize(float* x) const noexcept {
        const float n2 = detail::simd::dot_f32_scalar(x, x, dim_);
        if (n2 > 0.0F) {
            const float inv = 1.0F / std::sqrt(n2);
            for (std::size_t j = 0; j < dim_; ++j) x[j] *= inv;
        }
    }

    /// Appends the quantized copy of a row (capacity already reserved: cannot throw).
    void append_quantized(const float* x) {
        if (options_.quantization == Quantization::int8) {
            float amax = 0.0F;
            for (std::size_t j = 0; j < dim_; ++j) amax = std::max(amax, std::fabs(x[j]));
            const float scale = amax > 0.0F ? amax / 127.0F : 1.0F;
            const std::size_t base = q8_.size();
            q8_.resize(base + stride8_, 0);
            for (std::size_t j = 0; j < dim_; ++j)
                q8_[base + j] = static_cast<std::int8_t>(std::clamp(std::nearbyint(x[j] / scale), -127.0F, 127.0F));
            scale8_.push_back(scale);
        } else if (options_.quantization == Quantization::float16) {
            const std::size_t base = f16_.size();
            f16_.resize(base + stride16_, 0);
            for (std::size_t j = 0; j < dim_; ++j) f16_[base + j] = detail::simd::f32_to_f16(x[j]);
        }
    }

    /// Forgets the rows from n on (they were just added, all live): the rollback of add_vectors.
    void truncate_to(std::size_t n) noexcept {
        for (std::size_t r = n; r < ids_.size(); ++r)
            if (dead_[r] == 0) row_of_.erase(ids_[r]);
        shrink_storage(n);
    }
    /// Keeps the first n rows of every array (the id map is the caller's business).
    void shrink_storage(std::size_t n) noexcept {
        data_.resize(n * dim_);
        ids_.resize(n);
        norms2_.resize(n);
        dead_.resize(n);
        if (!scale8_.empty() || !q8_.empty()) {
            q8_.resize(n * stride8_);
            scale8_.resize(n);
        }
        if (!f16_.empty()) f16_.resize(n * stride16_);
    }

    std::vector<float> prepare_query(std::span<const float> query, const char* where) const {
        if (query.size() != dim_)
            throw DimensionError(std::string("VectorIndex::") + where + ": query has " + std::to_string(query.size()) +
                                 " dimensions, the index has " + std::to_string(dim_));
        std::vector<float> q(query.begin(), query.end());
        for (float x : q)
            if (!std::isfinite(x)) throw InvalidArgument(std::string("VectorIndex::") + where + ": query has a NaN or infinite value");
        if (options_.metric == Metric::cosine) normalize(q.data());
        return q;
    }

    /// The final score of row r from its dot product with the query.
    [[nodiscard]] float finish(float dot, std::size_t r, float q_norm2) const noexcept {
        return options_.metric == Metric::l2 ? 2.0F * dot - norms2_[r] - q_norm2 : dot;
    }

    /// Whether the allowed set is small enough to score its members one by one.
    [[nodiscard]] bool sparse_allowed(const SearchOptions& options) const {
        return options.allowed && options.allowed->count() * 8 < size();
    }

    std::vector<Hit> search_exact(const std::vector<float>& q, std::size_t k, const SearchOptions& options) const {
        const auto& kern = detail::simd::kernels();
        const float qn2 = detail::simd::dot_f32_scalar(q.data(), q.data(), dim_);
        detail::TopK top(k, ids_.size());
        if (sparse_allowed(options)) {
            options.allowed->for_each([&](DocId id) {
                auto it = row_of_.find(id);
                if (it == row_of_.end()) return;
                const std::size_t r = it->second;
                top.push(id, finish(kern.dot_f32(row_ptr(r), q.data(), dim_), r, qn2));
            });
            return top.take_sorted();
        }
        std::vector<float> scores(std::min(block_rows, ids_.size()));
        const std::size_t n = ids_.size();
        for (std::size_t b = 0; b < n; b += block_rows) {
            const std::size_t len = std::min(block_rows, n - b);
            kern.rows_f32(row_ptr(b), len, dim_, dim_, q.data(), scores.data());
            for (std::size_t j = 0; j < len; ++j) {
                const std::size_t r = b + j;
                if (dead_[r] != 0 || !options.allows(ids_[r])) continue;
                top.push(ids_[r], finish(scores[j], r, qn2));
            }
        }
        return top.take_sorted();
    }

    /// The query in the quantized copies' form.
    struct QuantizedQuery {
        std::vector<float> f;          // float16 path: the query padded to stride16
        std::vector<std::int16_t> i;   // int8 path: quantized query padded to stride8
        float scale = 1.0F;
    };
    QuantizedQuery quantize_query(const std::vector<float>& q) const {
        QuantizedQuery qq;
        if (options_.quantization == Quantization::float16) {
            qq.f.assign(stride16_, 0.0F);
            std::copy(q.begin(), q.end(), qq.f.begin());
        } else {
            float amax = 0.0F;
            for (float x : q) amax = std::max(amax, std::fabs(x));
            qq.scale = amax > 0.0F ? amax / 127.0F : 1.0F;
            qq.i.assign(stride8_, 0);
            for (std::size_t j = 0; j < dim_; ++j)
                qq.i[j] = static_cast<std::int16_t>(std::clamp(std::nearbyint(q[j] / qq.scale), -127.0F, 127.0F));
        }
        return qq;
    }
    std::vector<Hit> search_quantized(const std::vector<float>& q, std::size_t k, const SearchOptions& options) const {
        if (sparse_allowed(options)) return search_exact(q, k, options);  // few rows: exact is cheaper
        const auto& kern = detail::simd::kernels();
        const float qn2 = detail::simd::dot_f32_scalar(q.data(), q.data(), dim_);
        // max(k * rescore_factor, min_rescore), saturated (k may be SIZE_MAX).
        const std::size_t f = options_.rescore_factor;
        const std::size_t candidates =
            std::max(k > std::numeric_limits<std::size_t>::max() / f ? std::numeric_limits<std::size_t>::max() : k * f,
                     options_.min_rescore);
        const QuantizedQuery qq = quantize_query(q);
        const bool int8 = options_.quantization == Quantization::int8;
        const bool l2 = options_.metric == Metric::l2;
        const std::size_t n = ids_.size();
        detail::TopK approx(candidates, n);
        std::vector<float> scores(std::min(block_rows, n));
        std::vector<std::int32_t> iscores(int8 ? scores.size() : 0);
        for (std::size_t b = 0; b < n; b += block_rows) {
            const std::size_t len = std::min(block_rows, n - b);
            if (int8) kern.rows_i8(q8_.data() + b * stride8_, len, stride8_, qq.i.data(), iscores.data());
            else kern.rows_f16(f16_.data() + b * stride16_, len, stride16_, qq.f.data(), scores.data());
            for (std::size_t j = 0; j < len; ++j) {
                const std::size_t r = b + j;
                float s = int8 ? static_cast<float>(iscores[j]) * scale8_[r] * qq.scale : scores[j];
                if (l2) s = 2.0F * s - norms2_[r] - qn2;
                if (s < approx.threshold()) continue;  // most rows stop here
                if (dead_[r] != 0 || !options.allows(ids_[r])) continue;
                approx.push(static_cast<DocId>(r), s);  // the row number as id, for now
            }
        }
        detail::TopK top(k, n);
        for (const Hit& h : approx.take_sorted()) {
            const std::size_t r = h.id;
            top.push(ids_[r], finish(kern.dot_f32(row_ptr(r), q.data(), dim_), r, qn2));
        }
        return top.take_sorted();
    }

    E embedder_;
    VectorIndexOptions options_;
    std::size_t dim_;
    std::size_t stride16_ = 0;
    std::size_t stride8_ = 0;
    detail::AlignedVector<float> data_;  // rows x dim_, row-major
    std::vector<DocId> ids_;             // row -> DocId
    std::vector<float> norms2_;          // row -> |x|^2 (for l2)
    std::vector<std::uint8_t> dead_;     // row -> tombstone
    detail::AlignedVector<std::int8_t> q8_;      // rows x stride8_
    std::vector<float> scale8_;          // row -> int8 scale
    detail::AlignedVector<std::uint16_t> f16_;   // rows x stride16_
    std::unordered_map<DocId, std::uint32_t> row_of_;
    std::size_t dead_count_ = 0;
    DocId next_id_ = 0;
};


}  // namespace ragpp
