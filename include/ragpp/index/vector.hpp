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
// Quantized storage (VectorIndexOptions::quantization) keeps a compact copy of each
// vector INSTEAD of its float32 row (4x or 2x less memory, and a scan reads 4x or 2x
// fewer bytes):
//   int8     per vector: c_i = round(127 x_i / max_i |x_i|), kept with the least-squares
//            scale a = x.c / c.c (x ~ a c); the query is quantized the same way (scale t,
//            d_i) and the scan scores x.q ~ a * t * sum c_i d_i (integer dot products);
//   float16  IEEE binary16 copies of x_i, dotted with the float32 query.
// |x|^2 of the float32 row is kept (for l2). The best max(k * rescore_factor, min_rescore)
// candidates of the scan are then re-scored:
//   - by default from the dequantized rows with the float32 query (int8: scale * sum c_i
//     q_i; float16: the scan's score): the scores are close to, not equal to, float32's;
//   - with VectorIndexOptions::exact_rescore, exactly, from float32 rows kept in a file
//     on disk (index/detail/vector_exact.hpp, read with pread, never resident in the
//     index): the scores are float32 scores, only the candidate set is approximate.
// recall@10 against exact float32 search is tested (tests/unit-vector.cpp) and measured
// on GloVe (bench/bench_vector_store.cpp). A quantized index has no float32 matrix():
// vector(id) returns the exact row from the file with exact_rescore, else the
// dequantized one.
//
// Saved files (format 3, see save()) lay the arrays out on 64-byte boundaries, so
// load(..., OpenOptions{.mmap = true}) uses the ids, norms, scales and rows in place in
// the mapped file (nothing decoded or copied; a DocId -> row lookup array sorted by id is
// in the file too). Such a "frozen" index is read-only in place: the first write
// (add or remove) copies it into memory first (copy-on-write, the cost of a read load).
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
#include <memory>
#include <new>
#include <optional>
#include <random>
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
#include <ragpp/index/detail/int8_codes.hpp>
#include <ragpp/index/options.hpp>
#include <ragpp/index/detail/vector_checks.hpp>
#include <ragpp/index/detail/vector_exact.hpp>

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
    /// Quantized indexes only: re-score the candidates exactly from float32 rows kept in
    /// a file on disk (not in RAM). Building, the rows are appended to `exact_rows`
    /// (required then); save(path) writes the live ones to "<path>.f32"; load(path) with
    /// this set reads them from "<path>.f32" (FormatError when it is missing or of
    /// another save). Ignored by Quantization::none (its float32 rows are in RAM).
    bool exact_rescore = false;
    /// The working file of float32 rows of a quantized index being built with
    /// exact_rescore (created or truncated on the first add). After load(), adds copy
    /// the loaded "<path>.f32" here first; without it they throw UnsupportedError.
    std::filesystem::path exact_rows;
};

/// The exhaustive backend: every stored vector is scored. It is also the oracle for
/// any approximate backend added later.
struct Flat {};

// Long members are defined after the class (see index/bm25.hpp).
template <Embedder E, class Backend = Flat>
class VectorIndex {
    static_assert(std::same_as<Backend, Flat>, "VectorIndex: Flat is the only backend so far");

public:
    /// What search takes per call (index/options.hpp); a plain SearchOptions converts.
    using search_options = VectorSearchOptions;
    /// The format id and version of its files in the container of every ragpp index
    /// file (detail/binary_file.hpp); files of format 1 (magic "RAGPPVEC") and format 2
    /// (float32 rows only, unaligned) are refused as written by an older ragpp.
    static constexpr detail::BinaryFormat file_format{"VECINDEX", 3, "vector index", "RAGPPVEC"};
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
        if (options_.quantization == Quantization::none) options_.exact_rescore = false;
        if (options_.exact_rescore && options_.exact_rows.empty())
            throw InvalidArgument("VectorIndexOptions::exact_rescore needs exact_rows, the file where the float32 rows "
                                  "of added vectors are kept");
        stride16_ = (dim_ + 15) / 16 * 16;
        stride8_ = (dim_ + 31) / 32 * 32;
    }

    [[nodiscard]] const E& embedder() const noexcept { return embedder_; }
    [[nodiscard]] const VectorIndexOptions& options() const noexcept { return options_; }
    [[nodiscard]] std::size_t dimension() const noexcept { return dim_; }
    /// Live (not removed) vectors.
    [[nodiscard]] std::size_t size() const noexcept { return file_ ? fz_.n : row_of_.size(); }
    /// Stored rows, tombstones included.
    [[nodiscard]] std::size_t rows() const noexcept { return file_ ? fz_.n : ids_.size(); }
    [[nodiscard]] bool contains(DocId id) const noexcept { return find_row(id).has_value(); }
    /// Whether the index uses the arrays of a loaded file in place (read-only until the
    /// first write copies them, see load()).
    [[nodiscard]] bool frozen() const noexcept { return file_ != nullptr; }
    /// Whether the rows live in a memory-mapped file (load with OpenOptions::mmap).
    [[nodiscard]] bool mapped() const noexcept { return file_ && file_->mapped(); }

    /// Bytes of RAM the index holds: its arrays (rows, ids, norms, scales, tombstones),
    /// the id map (an estimate of the hash table's nodes and buckets), or the whole file
    /// when it was read (not mapped) and is used in place. A mapped file's pages and the
    /// float32 rows of exact_rescore (on disk) are not counted: mapped_bytes() and the
    /// file's size say what they are.
    [[nodiscard]] std::size_t memory_bytes() const noexcept {
        std::size_t b = sizeof(*this) + dead_.capacity() + rec_.capacity() * sizeof(std::uint32_t);
        if (file_) return b + (file_->mapped() ? 0 : file_->size());
        b += data_.capacity() * sizeof(float) + ids_.capacity() * sizeof(DocId) + norms2_.capacity() * sizeof(float) +
             q8_.capacity() + scale8_.capacity() * sizeof(float) + f16_.capacity() * sizeof(std::uint16_t);
        // std::unordered_map: a bucket pointer each, a node (next pointer, key, value, hash) per entry.
        b += row_of_.bucket_count() * sizeof(void*) + row_of_.size() * (sizeof(void*) + 2 * sizeof(std::uint64_t));
        return b;
    }
    /// Bytes of the mapped file the index reads in place (0 unless mapped()).
    [[nodiscard]] std::size_t mapped_bytes() const noexcept { return mapped() ? file_->size() : 0; }

    // --- writes ---------------------------------------------------------------------

    /// Embeds `doc.text` as a passage and stores it under `id`. Throws DuplicateError
    /// when `id` is present; nothing changes on any exception.
    void add_document(DocId id, const Document& doc);
    /// Documents embedded per embed_batch call by add_documents.
    static constexpr std::size_t embed_slice = 4096;

    /// Embeds many documents together (embed_batch calls of up to embed_slice texts: a
    /// transformer batches and threads each) and stores doc i under ids[i]. The rows are
    /// reserved for the whole batch first; each slice's texts and vectors are freed once
    /// stored, so a large batch never holds all its vectors twice (1 KiB a document at
    /// 256 float32 dimensions). All or nothing, like add_vectors.
    void add_documents(std::span<const DocId> ids, std::span<const Document* const> docs);
    /// Standalone use: stores `doc` under the next free id (one past the largest).
    DocId add_document(const Document& doc) {
        const DocId id = next_id_;
        add_document(id, doc);
        return id;
    }

    /// Stores a precomputed embedding. Throws DimensionError when its length is not
    /// dimension(), InvalidArgument when it has a NaN or infinite value,
    /// DuplicateError when `id` is present; nothing is stored then.
    void add_vector(DocId id, std::span<const float> v);
    void add_vector(DocId id, const Eigen::Ref<const Eigen::VectorXf>& v) {
        add_vector(id, std::span<const float>(v.data(), static_cast<std::size_t>(v.size())));
    }

    /// Stores many precomputed embeddings (row i under ids[i]); all or nothing.
    void add_vectors(std::span<const DocId> ids, const Eigen::Ref<const RowMatrixXf>& vectors);

    /// Capacity for `rows` rows in all (stored rows included) in every array and the id
    /// map, exactly: a build by batches whose total is known then never reallocates (nor
    /// holds an old and a new copy of its rows at once: at 10M x 384 int8 by batches, the
    /// growth and the final shrink_to_fit peak at about 2.4 times the rows' bytes).
    /// Does nothing when the capacity is already there or the index is frozen.
    void reserve(std::size_t rows);

    /// Gives back the spare capacity of every array: a build by batches grows them by half
    /// again when full (see reserve_rows), so up to a third of the row memory can be spare
    /// after the last batch (627 against 429 bytes a vector at 1M x 384 int8 by batches of
    /// 65,536). Copies each array once; a frozen (loaded) index holds no arrays and is left
    /// as it is. References to rows are not kept across calls, so nothing is invalidated.
    void shrink_to_fit();

    /// Removes `id`; throws NotFoundError (and changes nothing) when it is absent.
    void remove_document(DocId id);

    /// Drops the tombstones: rows move down, keeping their order. Never throws.
    void compact() noexcept;

    // --- reads ----------------------------------------------------------------------

    /// The stored vector of `id` (normalised for cosine); throws NotFoundError. For a
    /// quantized index: the float32 row from disk with exact_rescore, else the
    /// dequantized row (int8: scale * c_i; float16: the binary16 values), not exact.
    [[nodiscard]] Eigen::VectorXf vector(DocId id) const;
    /// The stored float32 rows (tombstones included), row r belonging to ids()[r].
    /// Throws UnsupportedError for a quantized index (it keeps no float32 rows in RAM).
    [[nodiscard]] Eigen::Map<const RowMatrixXf> matrix() const {
        if (options_.quantization != Quantization::none)
            throw UnsupportedError("VectorIndex::matrix: a " + std::string(to_string(options_.quantization)) +
                                   " index keeps no float32 rows in memory (use vector(id))");
        return {row_ptr(0), static_cast<Eigen::Index>(rows()), static_cast<Eigen::Index>(dim_)};
    }
    /// Row r's DocId (tombstones included).
    [[nodiscard]] std::span<const DocId> ids() const noexcept { return {id_data(), rows()}; }

    /// The k best documents for `query`, embedded as a query.
    [[nodiscard]] std::vector<Hit> search(std::string_view query, std::size_t k,
                                          const VectorSearchOptions& options = {}) const;

    /// The k best documents for a query vector. Throws DimensionError on a wrong
    /// length, InvalidArgument on a NaN or infinite value.
    [[nodiscard]] std::vector<Hit> search_vector(std::span<const float> query, std::size_t k,
                                                 const VectorSearchOptions& options = {}) const {
        std::vector<float> q = prepare_query(query, "search_vector");
        if (k == 0 || size() == 0) return {};
        if (options_.quantization != Quantization::none) return search_quantized(q, k, options);
        return search_exact(q, k, options);
    }
    [[nodiscard]] std::vector<Hit> search_vector(const Eigen::Ref<const Eigen::VectorXf>& query, std::size_t k,
                                                 const VectorSearchOptions& options = {}) const {
        return search_vector(std::span<const float>(query.data(), static_cast<std::size_t>(query.size())), k, options);
    }

    /// Exhaustive search with the best scores the index has: float32 rows (in RAM, or on
    /// disk with exact_rescore: every live row is read back), else, for a quantized
    /// index without them, the re-scoring scores of every row (not exact). The oracle of
    /// the quantized path's candidate selection.
    [[nodiscard]] std::vector<Hit> search_exact_vector(std::span<const float> query, std::size_t k,
                                                       const VectorSearchOptions& options = {}) const;

    /// Many query vectors (one per row) at once: one blocked matrix product scores
    /// every query against every row, each row read from memory once for all queries.
    /// Result i answers query row i. A quantized index answers each query with
    /// search_vector (its scan and re-scoring).
    [[nodiscard]] std::vector<std::vector<Hit>> search_batch(const Eigen::Ref<const RowMatrixXf>& queries, std::size_t k,
                                                             const VectorSearchOptions& options = {}) const;
    /// Many text queries: embedded together (embed_batch), then search_batch.
    [[nodiscard]] std::vector<std::vector<Hit>> search_batch(std::span<const std::string> queries, std::size_t k,
                                                             const VectorSearchOptions& options = {}) const;

    // --- persistence ------------------------------------------------------------------
    //
    // A ragpp index file (detail/binary_file.hpp: magic "RAGPPIDX", format id "VECINDEX",
    // version 3, payload size, FNV-1a-64 of the payload), payload (little-endian):
    //   u32 metric | u32 quantization | u64 dimension | str embedder name (u32 byte
    //   count + bytes) | u64 row bytes | u8 exact rows ("<path>.f32" written) | u64 token
    //   (the side file's) | u64 n
    //   then, each array starting at a multiple of 64 bytes from the start of the file
    //   (zero padding before it), so that a mapped file is used in place:
    //   n x u32 DocId | n x u32 row numbers in increasing DocId order (the id lookup) |
    //   n x f32 |x|^2 | int8 only: n x f32 scales | n x row bytes rows (float32: dimension
    //   floats; float16: binary16 values padded with zeros to a multiple of 16; int8:
    //   int8 values padded with zeros to a multiple of 32)
    // Only live rows are written.

    /// Writes the index to `path` atomically (temporary file + rename), and with
    /// exact_rescore its float32 rows to "<path>.f32" (first, also atomically). Throws
    /// IoError.
    void save(const std::filesystem::path& path) const;

    /// Reads an index saved by save(). The metric and quantization come from the file;
    /// the other options from `options`. The file's arrays are used in place (a read
    /// file's bytes, or with `open.mmap` the mapped pages: opening costs a check of the
    /// id lookup, norms and scales, 12-16 bytes a vector, and memory follows what
    /// queries touch); the first add or remove copies them into memory. Throws IoError
    /// when the file cannot be read, FormatError (naming the file) when it is truncated,
    /// corrupted or of another version, InvalidArgument when `embedder` is not the one
    /// the index was built with. With `open.verify` false the payload checksum and the
    /// check that every row is finite are skipped (a damaged row then gives wrong
    /// scores, never a crash: non-finite scores are dropped).
    /// With options.exact_rescore, a quantized index reads its float32 rows from
    /// "<path>.f32" (FormatError when the index was saved without them, or the side file
    /// is of another save).
    [[nodiscard]] static VectorIndex load(const std::filesystem::path& path, E embedder,
                                          VectorIndexOptions options = {}, OpenOptions open = {});

    /// The side file of float32 rows that save() writes beside `path` with exact_rescore.
    [[nodiscard]] static std::filesystem::path exact_path(const std::filesystem::path& path) {
        auto p = path;
        p += ".f32";
        return p;
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

    /// Checks a batch of `rows` x `cols` for `ids` (check_vector_batch), reserves its rows,
    /// then runs add(); on any exception every row add() stored is taken back.
    template <class Add>
    void add_batch(std::string_view where, std::span<const DocId> ids, std::size_t rows, std::size_t cols, Add add) {
        detail::check_vector_batch(where, ids, rows, cols, dim_, [this](DocId id) { return contains(id); }, &duplicate);
        thaw();
        reserve_rows(ids_.size() + ids.size());
        const std::size_t before = ids_.size();
        const DocId next_before = next_id_;
        try {
            add();
        } catch (...) {
            truncate_to(before);
            next_id_ = next_before;
            throw;
        }
    }
    /// Capacity for `rows` rows in every array. The first batch into an empty index gets
    /// exactly what it needs (one large batch does not double its memory); later batches
    /// grow each array by at least half of what it holds, so a build by many batches copies
    /// every row O(1) times instead of once per batch (an exact reserve made a 10M-row build
    /// by batches of 100k quadratic: 384 s against 6.8 s at 1M).
    void reserve_rows(std::size_t rows);

    // The arrays, from memory or from the loaded file (frozen): pointers valid until the
    // next write.
    [[nodiscard]] const DocId* id_data() const noexcept { return file_ ? fz_.ids : ids_.data(); }
    [[nodiscard]] const float* norm_data() const noexcept { return file_ ? fz_.norms2 : norms2_.data(); }
    [[nodiscard]] const float* scale_data() const noexcept { return file_ ? fz_.scales : scale8_.data(); }
    [[nodiscard]] const float* f32_data() const noexcept {
        return file_ ? reinterpret_cast<const float*>(fz_.rows) : data_.data();
    }
    [[nodiscard]] const std::int8_t* q8_data() const noexcept {
        return file_ ? reinterpret_cast<const std::int8_t*>(fz_.rows) : q8_.data();
    }
    [[nodiscard]] const std::uint16_t* f16_data() const noexcept {
        return file_ ? reinterpret_cast<const std::uint16_t*>(fz_.rows) : f16_.data();
    }
    [[nodiscard]] const float* row_ptr(std::size_t r) const noexcept { return f32_data() + r * dim_; }
    [[nodiscard]] bool is_dead(std::size_t r) const noexcept { return !file_ && dead_[r] != 0; }
    [[nodiscard]] std::size_t rec_of(std::size_t r) const noexcept { return rec_.empty() ? r : rec_[r]; }
    /// Bytes of one stored row (in memory and in the file).
    [[nodiscard]] std::size_t row_bytes() const noexcept {
        return options_.quantization == Quantization::none      ? dim_ * sizeof(float)
               : options_.quantization == Quantization::float16 ? stride16_ * sizeof(std::uint16_t)
                                                                : stride8_;
    }
    [[nodiscard]] const void* row_bytes_at(std::size_t r) const noexcept {
        return options_.quantization == Quantization::none      ? static_cast<const void*>(row_ptr(r))
               : options_.quantization == Quantization::float16 ? static_cast<const void*>(f16_data() + r * stride16_)
                                                                : static_cast<const void*>(q8_data() + r * stride8_);
    }

    /// The row of `id`: the hash map in memory, a binary search of the file's id lookup
    /// when frozen.
    [[nodiscard]] std::optional<std::size_t> find_row(DocId id) const noexcept {
        if (file_) {
            std::size_t lo = 0, hi = fz_.n;
            while (lo < hi) {
                const std::size_t mid = lo + (hi - lo) / 2;
                if (fz_.ids[fz_.by_id[mid]] < id) lo = mid + 1;
                else hi = mid;
            }
            if (lo < fz_.n && fz_.ids[fz_.by_id[lo]] == id) return fz_.by_id[lo];
            return std::nullopt;
        }
        auto it = row_of_.find(id);
        if (it == row_of_.end()) return std::nullopt;
        return it->second;
    }

    /// Copy-on-write: a frozen index copies the file's arrays into memory before its
    /// first write (all or nothing: the copies are built, then swapped in).
    void thaw();

    /// The float32 rows file appends go to: created at exact_rows on the first add, or a
    /// copy of a loaded side file there. Throws InvalidArgument / UnsupportedError /
    /// IoError before anything changes.
    detail::ExactRows& writable_exact() {
        if (exact_ && exact_->writable()) return *exact_;
        if (options_.exact_rows.empty())
            throw exact_ ? UnsupportedError("VectorIndex: the float32 rows of '" + exact_->path().string() +
                                            "' are read-only; set VectorIndexOptions::exact_rows at load to add vectors")
                         : UnsupportedError("VectorIndexOptions::exact_rescore needs exact_rows, the file where the "
                                            "float32 rows of added vectors are kept");
        exact_ = exact_ ? exact_->copy_to(options_.exact_rows) : detail::ExactRows::create(options_.exact_rows, dim_);
        return *exact_;
    }

    void normalize(float* x) const noexcept {
        const float n2 = detail::simd::dot_f32_scalar(x, x, dim_);
        if (n2 > 0.0F) {
            const float inv = 1.0F / std::sqrt(n2);
            for (std::size_t j = 0; j < dim_; ++j) x[j] *= inv;
        }
    }

    /// Appends the quantized copy of a row (capacity already reserved: cannot throw).
    void append_quantized(const float* x);

    /// Forgets the rows from n on (they were just added, all live): the rollback of add_vectors.
    void truncate_to(std::size_t n) noexcept {
        for (std::size_t r = n; r < ids_.size(); ++r)
            if (dead_[r] == 0) row_of_.erase(ids_[r]);
        shrink_storage(n);
    }
    /// Keeps the first n rows of every array (the id map is the caller's business).
    void shrink_storage(std::size_t n) noexcept;

    std::vector<float> prepare_query(std::span<const float> query, const char* where) const;

    /// The final score of row r from its dot product with the query.
    [[nodiscard]] float finish(float dot, std::size_t r, float q_norm2) const noexcept {
        return options_.metric == Metric::l2 ? 2.0F * dot - norm_data()[r] - q_norm2 : dot;
    }
    /// Pushes unless the score is NaN (a damaged row of a file opened without
    /// verification must not break the heap's ordering).
    static void push_finite(detail::TopK& top, DocId id, float score) {
        if (!std::isnan(score)) top.push(id, score);
    }

    /// The re-scoring score of row r: float32 (in RAM or read from disk with
    /// exact_rescore), else the dequantized row with the float32 query. `buf` holds dim floats.
    [[nodiscard]] float rescore(std::size_t r, const float* q, float qn2, float* buf) const;

    /// Whether the allowed set is small enough to score its members one by one.
    [[nodiscard]] bool sparse_allowed(const SearchOptions& options) const {
        return options.allowed && options.allowed->count() * 8 < size();
    }

    std::vector<Hit> search_exact(const std::vector<float>& q, std::size_t k, const SearchOptions& options) const;

    /// The query in the quantized copies' form.
    struct QuantizedQuery {
        std::vector<float> f;          // float16 path: the query padded to stride16
        std::vector<std::int16_t> i;   // int8 path: quantized query padded to stride8
        float scale = 1.0F;
    };
    QuantizedQuery quantize_query(const std::vector<float>& q) const;
    std::vector<Hit> search_quantized(const std::vector<float>& q, std::size_t k, const SearchOptions& options) const;

    /// The arrays of a loaded file used in place (frozen; file_ holds the bytes).
    struct Frozen {
        std::size_t n = 0;
        const DocId* ids = nullptr;
        const std::uint32_t* by_id = nullptr;  // rows in increasing DocId order
        const float* norms2 = nullptr;
        const float* scales = nullptr;
        const char* rows = nullptr;
    };

    E embedder_;
    VectorIndexOptions options_;
    std::size_t dim_;
    std::size_t stride16_ = 0;
    std::size_t stride8_ = 0;
    detail::AlignedVector<float> data_;  // rows x dim_, row-major (Quantization::none only)
    std::vector<DocId> ids_;             // row -> DocId
    std::vector<float> norms2_;          // row -> |x|^2 of the float32 row (for l2)
    std::vector<std::uint8_t> dead_;     // row -> tombstone
    detail::AlignedVector<std::int8_t> q8_;      // rows x stride8_
    std::vector<float> scale8_;          // row -> int8 scale
    detail::AlignedVector<std::uint16_t> f16_;   // rows x stride16_
    std::unordered_map<DocId, std::uint32_t> row_of_;
    std::size_t dead_count_ = 0;
    DocId next_id_ = 0;
    std::shared_ptr<const detail::FileBytes> file_;  // set while frozen
    Frozen fz_;
    std::shared_ptr<detail::ExactRows> exact_;  // float32 rows on disk (exact_rescore); shared by copies
    std::vector<std::uint32_t> rec_;            // row -> record of exact_ (empty: the row number)
};

template <Embedder E, class Backend>
void VectorIndex<E, Backend>::add_document(DocId id, const Document& doc) {
    if (contains(id)) throw duplicate(id);
    const Eigen::VectorXf v = embedder_.embed(doc.text, Role::passage);
    add_vector(id, v);
}

template <Embedder E, class Backend>
void VectorIndex<E, Backend>::add_documents(std::span<const DocId> ids, std::span<const Document* const> docs) {
    if (ids.size() != docs.size())
        throw DimensionError("VectorIndex::add_documents: " + std::to_string(ids.size()) + " ids for " +
                             std::to_string(docs.size()) + " documents");
    add_batch("VectorIndex::add_documents", ids, ids.size(), dim_, [&] {
        std::vector<std::string> texts;
        for (std::size_t at = 0; at < ids.size(); at += embed_slice) {
            const std::size_t n = std::min(embed_slice, ids.size() - at);
            texts.clear();
            texts.reserve(n);
            for (std::size_t i = at; i < at + n; ++i) texts.push_back(docs[i]->text);
            add_vectors(ids.subspan(at, n), embedder_.embed_batch(texts, Role::passage));
        }
    });
}

template <Embedder E, class Backend>
void VectorIndex<E, Backend>::add_vector(DocId id, std::span<const float> v) {
    if (v.size() != dim_)
        throw DimensionError("VectorIndex::add_vector: vector of DocId " + std::to_string(id) + " has " +
                             std::to_string(v.size()) + " dimensions, the index has " + std::to_string(dim_));
    if (contains(id)) throw duplicate(id);
    for (float x : v)
        if (!std::isfinite(x))
            throw InvalidArgument("VectorIndex::add_vector: vector of DocId " + std::to_string(id) +
                                  " has a NaN or infinite value");
    thaw();
    // Prepare the row, then make room everywhere (may throw, nothing changed yet),
    // then commit with operations that cannot throw.
    std::vector<float> row(v.begin(), v.end());
    if (options_.metric == Metric::cosine) normalize(row.data());
    const std::size_t n = ids_.size();
    const bool quantized = options_.quantization != Quantization::none;
    if (!quantized) grow(data_, (n + 1) * dim_);
    grow(ids_, n + 1);
    grow(norms2_, n + 1);
    grow(dead_, n + 1);
    if (options_.quantization == Quantization::int8) {
        grow(q8_, (n + 1) * stride8_);
        grow(scale8_, n + 1);
    } else if (options_.quantization == Quantization::float16) {
        grow(f16_, (n + 1) * stride16_);
    }
    std::size_t rec = 0;
    if (options_.exact_rescore) {
        grow(rec_, n + 1);
        rec = writable_exact().append(row.data());  // an unreferenced record if a later step throws
    }
    row_of_.emplace(id, static_cast<std::uint32_t>(n));  // the last step that may throw
    if (!quantized) data_.insert(data_.end(), row.begin(), row.end());
    ids_.push_back(id);
    norms2_.push_back(detail::simd::dot_f32_scalar(row.data(), row.data(), dim_));
    dead_.push_back(0);
    if (options_.exact_rescore) rec_.push_back(static_cast<std::uint32_t>(rec));
    append_quantized(row.data());
    next_id_ = std::max<DocId>(next_id_, id == std::numeric_limits<DocId>::max() ? id : id + 1);
}

template <Embedder E, class Backend>
void VectorIndex<E, Backend>::add_vectors(std::span<const DocId> ids, const Eigen::Ref<const RowMatrixXf>& vectors) {
    add_batch("VectorIndex::add_vectors", ids, static_cast<std::size_t>(vectors.rows()),
              static_cast<std::size_t>(vectors.cols()), [&] {
                  for (std::size_t i = 0; i < ids.size(); ++i) {
                      const auto r = vectors.row(static_cast<Eigen::Index>(i));
                      add_vector(ids[i], std::span<const float>(r.data(), dim_));
                  }
              });
}

template <Embedder E, class Backend>
void VectorIndex<E, Backend>::reserve(std::size_t rows) {
    if (file_ || rows <= ids_.capacity()) return;
    if (options_.quantization == Quantization::none) data_.reserve(rows * dim_);
    ids_.reserve(rows);
    norms2_.reserve(rows);
    dead_.reserve(rows);
    if (options_.exact_rescore) rec_.reserve(rows);
    if (options_.quantization == Quantization::int8) {
        q8_.reserve(rows * stride8_);
        scale8_.reserve(rows);
    } else if (options_.quantization == Quantization::float16) {
        f16_.reserve(rows * stride16_);
    }
    row_of_.reserve(rows);
}

template <Embedder E, class Backend>
void VectorIndex<E, Backend>::shrink_to_fit() {
    if (file_) return;
    data_.shrink_to_fit();
    ids_.shrink_to_fit();
    norms2_.shrink_to_fit();
    dead_.shrink_to_fit();
    rec_.shrink_to_fit();
    q8_.shrink_to_fit();
    scale8_.shrink_to_fit();
    f16_.shrink_to_fit();
    row_of_.rehash(0);  // the fewest buckets for the current load factor
}

template <Embedder E, class Backend>
void VectorIndex<E, Backend>::remove_document(DocId id) {
    if (!contains(id)) throw NotFoundError("VectorIndex::remove_document: no vector with DocId " + std::to_string(id));
    thaw();
    auto it = row_of_.find(id);
    if (it == row_of_.end())
        throw NotFoundError("VectorIndex::remove_document: no vector with DocId " + std::to_string(id));
    dead_[it->second] = 1;
    ++dead_count_;
    row_of_.erase(it);
    if (static_cast<double>(dead_count_) > options_.compact_ratio * static_cast<double>(ids_.size())) compact();
}

template <Embedder E, class Backend>
void VectorIndex<E, Backend>::compact() noexcept {
    if (dead_count_ == 0) return;
    std::size_t w = 0;
    for (std::size_t r = 0; r < ids_.size(); ++r) {
        if (dead_[r] != 0) continue;
        if (w != r) {
            if (!data_.empty())
                std::copy_n(data_.begin() + static_cast<std::ptrdiff_t>(r * dim_), dim_,
                            data_.begin() + static_cast<std::ptrdiff_t>(w * dim_));
            ids_[w] = ids_[r];
            norms2_[w] = norms2_[r];
            if (!rec_.empty()) rec_[w] = rec_[r];
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

template <Embedder E, class Backend>
Eigen::VectorXf VectorIndex<E, Backend>::vector(DocId id) const {
    const auto r = find_row(id);
    if (!r) throw NotFoundError("VectorIndex::vector: no vector with DocId " + std::to_string(id));
    Eigen::VectorXf v(static_cast<Eigen::Index>(dim_));
    if (options_.quantization == Quantization::none) std::copy_n(row_ptr(*r), dim_, v.data());
    else if (exact_) exact_->read(rec_of(*r), v.data());
    else if (options_.quantization == Quantization::int8)
        for (std::size_t j = 0; j < dim_; ++j) v[static_cast<Eigen::Index>(j)] = scale_data()[*r] * q8_data()[*r * stride8_ + j];
    else
        for (std::size_t j = 0; j < dim_; ++j)
            v[static_cast<Eigen::Index>(j)] = detail::simd::f16_to_f32(f16_data()[*r * stride16_ + j]);
    return v;
}

template <Embedder E, class Backend>
std::vector<Hit> VectorIndex<E, Backend>::search(std::string_view query, std::size_t k,
                                                 const VectorSearchOptions& options) const {
    if (k == 0 || size() == 0) return {};
    const Eigen::VectorXf q = embedder_.embed(query, Role::query);
    return search_vector(q, k, options);
}

template <Embedder E, class Backend>
std::vector<Hit> VectorIndex<E, Backend>::search_exact_vector(std::span<const float> query, std::size_t k,
                                                              const VectorSearchOptions& options) const {
    std::vector<float> q = prepare_query(query, "search_exact_vector");
    if (k == 0 || size() == 0) return {};
    if (options_.quantization == Quantization::none) return search_exact(q, k, options);
    const float qn2 = detail::simd::dot_f32_scalar(q.data(), q.data(), dim_);
    detail::TopK top(k, rows());
    std::vector<float> buf(dim_);
    for (std::size_t r = 0; r < rows(); ++r)
        if (!is_dead(r) && options.allows(id_data()[r])) push_finite(top, id_data()[r], rescore(r, q.data(), qn2, buf.data()));
    return top.take_sorted();
}

template <Embedder E, class Backend>
std::vector<std::vector<Hit>> VectorIndex<E, Backend>::search_batch(const Eigen::Ref<const RowMatrixXf>& queries, std::size_t k,
                                                                    const VectorSearchOptions& options) const {
    if (static_cast<std::size_t>(queries.cols()) != dim_)
        throw DimensionError("VectorIndex::search_batch: queries have " + std::to_string(queries.cols()) +
                             " dimensions, the index has " + std::to_string(dim_));
    const auto m = static_cast<std::size_t>(queries.rows());
    RowMatrixXf Q(queries);
    if (!Q.allFinite()) throw InvalidArgument("VectorIndex::search_batch: a query has a NaN or infinite value");
    if (options_.quantization != Quantization::none) {
        std::vector<std::vector<Hit>> out;
        out.reserve(m);
        for (std::size_t i = 0; i < m; ++i)
            out.push_back(search_vector(std::span<const float>(Q.data() + i * dim_, dim_), k, options));
        return out;
    }
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
    for (std::size_t i = 0; i < m; ++i) tops.emplace_back(k, rows());
    if (k > 0 && size() > 0) {
        // S = Q X^T by blocks of rows that stay in cache while every group of four
        // queries is scored against them (detail::simd rows4q_f32 micro-kernel).
        const auto& kern = detail::simd::kernels();
        const std::size_t n = rows();
        const DocId* ids = id_data();
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
                    if (is_dead(r) || !options.allows(ids[r])) continue;
                    for (std::size_t t = 0; t < cnt; ++t)
                        push_finite(tops[g + t], ids[r], finish(S[t * sub + j], r, qn2[static_cast<Eigen::Index>(g + t)]));
                }
            }
        }
    }
    std::vector<std::vector<Hit>> out;
    out.reserve(m);
    for (auto& t : tops) out.push_back(t.take_sorted());
    return out;
}

template <Embedder E, class Backend>
std::vector<std::vector<Hit>> VectorIndex<E, Backend>::search_batch(std::span<const std::string> queries, std::size_t k,
                                                                    const VectorSearchOptions& options) const {
    return search_batch(embedder_.embed_batch(queries, Role::query), k, options);
}

template <Embedder E, class Backend>
void VectorIndex<E, Backend>::save(const std::filesystem::path& path) const {
    const std::size_t n = size(), rb = row_bytes();
    std::vector<std::uint32_t> live;  // live row numbers, in row order
    live.reserve(n);
    for (std::size_t r = 0; r < rows(); ++r)
        if (!is_dead(r)) live.push_back(static_cast<std::uint32_t>(r));
    std::uint64_t token = 0;
    if (exact_) {
        token = std::random_device{}() | (std::uint64_t{std::random_device{}()} << 32) | 1U;
        std::vector<std::uint32_t> recs(n);
        for (std::size_t i = 0; i < n; ++i) recs[i] = static_cast<std::uint32_t>(rec_of(live[i]));
        exact_->write_file(exact_path(path), recs, token);
    }
    const DocId* ids = id_data();
    std::vector<std::uint32_t> by_id(n);
    for (std::size_t i = 0; i < n; ++i) by_id[i] = static_cast<std::uint32_t>(i);
    std::sort(by_id.begin(), by_id.end(), [&](std::uint32_t x, std::uint32_t y) { return ids[live[x]] < ids[live[y]]; });

    detail::BinaryWriter w(path);
    std::size_t at = detail::binary_header_size;  // the file offset of the next byte
    auto put = [&](const void* p, std::size_t bytes) {
        w.bytes(p, bytes);
        at += bytes;
    };
    auto align = [&] {
        static constexpr char zeros[64] = {};
        put(zeros, (64 - at % 64) % 64);
    };
    auto u32 = [&](std::uint32_t v) { put(&v, 4); };
    auto u64 = [&](std::uint64_t v) { put(&v, 8); };
    u32(static_cast<std::uint32_t>(options_.metric));
    u32(static_cast<std::uint32_t>(options_.quantization));
    u64(static_cast<std::uint64_t>(dim_));
    const std::string name(embedder_.name());
    u32(static_cast<std::uint32_t>(name.size()));
    put(name.data(), name.size());
    u64(rb);
    const std::uint8_t exact = exact_ ? 1 : 0;
    put(&exact, 1);
    u64(token);
    u64(n);
    align();
    for (std::uint32_t r : live) put(&ids[r], sizeof(DocId));
    align();
    put(by_id.data(), n * sizeof(std::uint32_t));
    align();
    for (std::uint32_t r : live) put(&norm_data()[r], sizeof(float));
    if (options_.quantization == Quantization::int8) {
        align();
        for (std::uint32_t r : live) put(&scale_data()[r], sizeof(float));
    }
    align();
    for (std::uint32_t r : live) put(row_bytes_at(r), rb);
    w.save(path, file_format);
}

template <Embedder E, class Backend>
VectorIndex<E, Backend> VectorIndex<E, Backend>::load(const std::filesystem::path& path, E embedder,
                                                      VectorIndexOptions options, OpenOptions open) {
    auto bytes = std::make_shared<const detail::FileBytes>(path, open.mmap);
    detail::BinaryReader in(bytes->view(), file_format, path.string(), open.verify);
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
    options.metric = static_cast<Metric>(metric);
    options.quantization = static_cast<Quantization>(quant);
    const bool exact_wanted = options.exact_rescore && options.quantization != Quantization::none;
    options.exact_rescore = false;  // the side file is attached below
    VectorIndex index(std::move(embedder), options);
    const std::size_t rb = index.row_bytes();
    if (in.u64("row bytes") != rb) in.fail("row bytes do not match the dimension and quantization");
    const std::uint8_t has_exact = in.u8("exact rows");
    const std::uint64_t token = in.u64("token");
    const bool int8 = options.quantization == Quantization::int8;
    const std::size_t n = in.count("row count", 3 * sizeof(std::uint32_t) + (int8 ? 4 : 0) + rb);
    auto align = [&] { (void)in.raw((64 - in.offset() % 64) % 64, "padding"); };
    Frozen& fz = index.fz_;
    fz.n = n;
    align();
    fz.ids = reinterpret_cast<const DocId*>(in.raw(n * sizeof(DocId), "ids").data());
    align();
    fz.by_id = reinterpret_cast<const std::uint32_t*>(in.raw(n * sizeof(std::uint32_t), "id lookup").data());
    align();
    fz.norms2 = reinterpret_cast<const float*>(in.raw(n * sizeof(float), "norms").data());
    if (int8) {
        align();
        fz.scales = reinterpret_cast<const float*>(in.raw(n * sizeof(float), "scales").data());
    }
    align();
    fz.rows = in.raw(n * rb, "rows").data();
    in.expect_end();
    // The id lookup must be a permutation with strictly increasing DocIds (so lookups
    // stay in bounds and ids are unique); norms and scales finite.
    for (std::size_t i = 0; i < n; ++i) {
        if (fz.by_id[i] >= n) in.fail("id lookup entry " + std::to_string(i) + " is not a row");
        if (i > 0 && fz.ids[fz.by_id[i]] <= fz.ids[fz.by_id[i - 1]])
            in.fail("DocId " + std::to_string(fz.ids[fz.by_id[i]]) + " appears twice or out of order");
        if (!std::isfinite(fz.norms2[i]) || fz.norms2[i] < 0.0F) in.fail("row " + std::to_string(i) + " has a bad norm");
        if (int8 && !(std::isfinite(fz.scales[i]) && fz.scales[i] > 0.0F))
            in.fail("row " + std::to_string(i) + " has a bad int8 scale");
    }
    if (open.verify && options.quantization != Quantization::int8) {
        const bool f16 = options.quantization == Quantization::float16;
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < (f16 ? index.stride16_ : dim); ++j) {
                const bool ok = f16 ? (reinterpret_cast<const std::uint16_t*>(fz.rows + i * rb)[j] & 0x7C00U) != 0x7C00U
                                    : std::isfinite(reinterpret_cast<const float*>(fz.rows + i * rb)[j]);
                if (!ok) in.fail("vector of DocId " + std::to_string(fz.ids[i]) + " has a non-finite value");
            }
    }
    index.next_id_ = n == 0 ? 0 : fz.ids[fz.by_id[n - 1]] == std::numeric_limits<DocId>::max() ? fz.ids[fz.by_id[n - 1]]
                                                                                                   : fz.ids[fz.by_id[n - 1]] + 1;
    if (exact_wanted) {
        if (has_exact == 0)
            in.fail("saved without float32 rows (\"" + exact_path(path).filename().string() +
                    "\"), needed by VectorIndexOptions::exact_rescore; build with exact_rescore and save again");
        index.exact_ = detail::ExactRows::open(exact_path(path), dim, token, n);
        index.options_.exact_rescore = true;
    }
    index.file_ = std::move(bytes);
    return index;
}

template <Embedder E, class Backend>
void VectorIndex<E, Backend>::thaw() {
    if (!file_) return;
    const std::size_t n = fz_.n, rb = row_bytes();
    std::vector<DocId> ids(fz_.ids, fz_.ids + n);
    std::vector<float> norms(fz_.norms2, fz_.norms2 + n);
    std::vector<float> scales;
    if (options_.quantization == Quantization::int8) scales.assign(fz_.scales, fz_.scales + n);
    detail::AlignedVector<float> data;
    detail::AlignedVector<std::int8_t> q8;
    detail::AlignedVector<std::uint16_t> f16;
    if (options_.quantization == Quantization::none) data.assign(f32_data(), f32_data() + n * dim_);
    else if (options_.quantization == Quantization::int8) q8.assign(q8_data(), q8_data() + n * rb);
    else f16.assign(f16_data(), f16_data() + n * stride16_);
    std::vector<std::uint8_t> dead(n, 0);
    std::vector<std::uint32_t> rec;
    if (exact_) {
        rec.resize(n);
        for (std::size_t r = 0; r < n; ++r) rec[r] = static_cast<std::uint32_t>(r);
    }
    std::unordered_map<DocId, std::uint32_t> row_of;
    row_of.reserve(n);
    for (std::size_t r = 0; r < n; ++r) row_of.emplace(ids[r], static_cast<std::uint32_t>(r));
    ids_ = std::move(ids);
    norms2_ = std::move(norms);
    scale8_ = std::move(scales);
    data_ = std::move(data);
    q8_ = std::move(q8);
    f16_ = std::move(f16);
    dead_ = std::move(dead);
    rec_ = std::move(rec);
    row_of_ = std::move(row_of);
    dead_count_ = 0;
    fz_ = {};
    file_.reset();
}

template <Embedder E, class Backend>
void VectorIndex<E, Backend>::append_quantized(const float* x) {
    if (options_.quantization == Quantization::int8) {
        const std::size_t base = q8_.size();
        q8_.resize(base + stride8_, 0);
        scale8_.push_back(detail::int8_encode_row(x, dim_, q8_.data() + base));
    } else if (options_.quantization == Quantization::float16) {
        const std::size_t base = f16_.size();
        f16_.resize(base + stride16_, 0);
        for (std::size_t j = 0; j < dim_; ++j) f16_[base + j] = detail::simd::f32_to_f16(x[j]);
    }
}

template <Embedder E, class Backend>
void VectorIndex<E, Backend>::shrink_storage(std::size_t n) noexcept {
    if (options_.quantization == Quantization::none) data_.resize(n * dim_);
    ids_.resize(n);
    norms2_.resize(n);
    dead_.resize(n);
    if (!rec_.empty()) rec_.resize(n);
    if (!scale8_.empty() || !q8_.empty()) {
        q8_.resize(n * stride8_);
        scale8_.resize(n);
    }
    if (!f16_.empty()) f16_.resize(n * stride16_);
}

template <Embedder E, class Backend>
float VectorIndex<E, Backend>::rescore(std::size_t r, const float* q, float qn2, float* buf) const {
    const auto& kern = detail::simd::kernels();
    if (options_.quantization == Quantization::none) return finish(kern.dot_f32(row_ptr(r), q, dim_), r, qn2);
    if (exact_) {
        exact_->read(rec_of(r), buf);
        return finish(kern.dot_f32(buf, q, dim_), r, qn2);
    }
    float dot = 0.0F;
    if (options_.quantization == Quantization::int8) {
        dot = detail::int8_rescore(q8_data() + r * stride8_, scale_data()[r], q, dim_);
    } else {
        const std::uint16_t* h = f16_data() + r * stride16_;
        for (std::size_t j = 0; j < dim_; ++j) dot += detail::simd::f16_to_f32(h[j]) * q[j];
    }
    return finish(dot, r, qn2);
}

template <Embedder E, class Backend>
std::vector<Hit> VectorIndex<E, Backend>::search_exact(const std::vector<float>& q, std::size_t k, const SearchOptions& options) const {
    const auto& kern = detail::simd::kernels();
    const float qn2 = detail::simd::dot_f32_scalar(q.data(), q.data(), dim_);
    const std::size_t n = rows();
    const DocId* ids = id_data();
    detail::TopK top(k, n);
    if (sparse_allowed(options)) {
        options.allowed->for_each([&](DocId id) {
            const auto r = find_row(id);
            if (r) push_finite(top, id, finish(kern.dot_f32(row_ptr(*r), q.data(), dim_), *r, qn2));
        });
        return top.take_sorted();
    }
    std::vector<float> scores(std::min(block_rows, n));
    for (std::size_t b = 0; b < n; b += block_rows) {
        const std::size_t len = std::min(block_rows, n - b);
        kern.rows_f32(row_ptr(b), len, dim_, dim_, q.data(), scores.data());
        for (std::size_t j = 0; j < len; ++j) {
            const std::size_t r = b + j;
            if (is_dead(r) || !options.allows(ids[r])) continue;
            push_finite(top, ids[r], finish(scores[j], r, qn2));
        }
    }
    return top.take_sorted();
}

template <Embedder E, class Backend>
typename VectorIndex<E, Backend>::QuantizedQuery VectorIndex<E, Backend>::quantize_query(const std::vector<float>& q) const {
    QuantizedQuery qq;
    if (options_.quantization == Quantization::float16) {
        qq.f.assign(stride16_, 0.0F);
        std::copy(q.begin(), q.end(), qq.f.begin());
    } else {
        qq.i.assign(stride8_, 0);
        qq.scale = detail::int8_encode_query(q.data(), dim_, qq.i.data());
    }
    return qq;
}

template <Embedder E, class Backend>
std::vector<Hit> VectorIndex<E, Backend>::search_quantized(const std::vector<float>& q, std::size_t k, const SearchOptions& options) const {
    const float qn2 = detail::simd::dot_f32_scalar(q.data(), q.data(), dim_);
    const std::size_t n = rows();
    const DocId* ids = id_data();
    std::vector<float> buf(dim_);
    if (sparse_allowed(options)) {  // few rows: re-score each of them
        detail::TopK top(k, n);
        options.allowed->for_each([&](DocId id) {
            const auto r = find_row(id);
            if (r) push_finite(top, id, rescore(*r, q.data(), qn2, buf.data()));
        });
        return top.take_sorted();
    }
    const auto& kern = detail::simd::kernels();
    // max(k * rescore_factor, min_rescore), saturated (k may be SIZE_MAX).
    const std::size_t f = options_.rescore_factor;
    const std::size_t candidates =
        std::max(k > std::numeric_limits<std::size_t>::max() / f ? std::numeric_limits<std::size_t>::max() : k * f,
                 options_.min_rescore);
    const QuantizedQuery qq = quantize_query(q);
    const bool int8 = options_.quantization == Quantization::int8;
    const bool l2 = options_.metric == Metric::l2;
    const float* norms = norm_data();
    const float* scales = scale_data();
    const std::int8_t* q8 = q8_data();
    const std::uint16_t* f16 = f16_data();
    detail::TopK approx(candidates, n);
    std::vector<float> scores(std::min(block_rows, n));
    std::vector<std::int32_t> iscores(int8 ? scores.size() : 0);
    for (std::size_t b = 0; b < n; b += block_rows) {
        const std::size_t len = std::min(block_rows, n - b);
        if (int8) kern.rows_i8(q8 + b * stride8_, len, stride8_, qq.i.data(), iscores.data());
        else kern.rows_f16(f16 + b * stride16_, len, stride16_, qq.f.data(), scores.data());
        for (std::size_t j = 0; j < len; ++j) {
            const std::size_t r = b + j;
            float s = int8 ? static_cast<float>(iscores[j]) * scales[r] * qq.scale : scores[j];
            if (l2) s = 2.0F * s - norms[r] - qn2;
            if (!(s >= approx.threshold())) continue;  // most rows stop here (and NaN)
            if (is_dead(r) || !options.allows(ids[r])) continue;
            approx.push(static_cast<DocId>(r), s);  // the row number as id, for now
        }
    }
    detail::TopK top(k, n);
    for (const Hit& h : approx.take_sorted()) {
        const std::size_t r = h.id;
        // float16 without float32 rows: the scan's score is already the dequantized one.
        const float s = !int8 && !exact_ ? h.score : rescore(r, q.data(), qn2, buf.data());
        push_finite(top, ids[r], s);
    }
    return top.take_sorted();
}

template <Embedder E, class Backend>
std::vector<float> VectorIndex<E, Backend>::prepare_query(std::span<const float> query, const char* where) const {
    if (query.size() != dim_)
        throw DimensionError(std::string("VectorIndex::") + where + ": query has " + std::to_string(query.size()) +
                             " dimensions, the index has " + std::to_string(dim_));
    std::vector<float> q(query.begin(), query.end());
    for (float x : q)
        if (!std::isfinite(x)) throw InvalidArgument(std::string("VectorIndex::") + where + ": query has a NaN or infinite value");
    if (options_.metric == Metric::cosine) normalize(q.data());
    return q;
}

template <Embedder E, class Backend>
void VectorIndex<E, Backend>::reserve_rows(std::size_t rows) {
    auto grow_to = [](auto& v, std::size_t n) {
        if (v.capacity() < n) v.reserve(std::max(n, v.capacity() + v.capacity() / 2));
    };
    if (options_.quantization == Quantization::none) grow_to(data_, rows * dim_);
    grow_to(ids_, rows);
    grow_to(norms2_, rows);
    grow_to(dead_, rows);
    if (options_.exact_rescore) grow_to(rec_, rows);
    if (options_.quantization == Quantization::int8) {
        grow_to(q8_, rows * stride8_);
        grow_to(scale8_, rows);
    } else if (options_.quantization == Quantization::float16) {
        grow_to(f16_, rows * stride16_);
    }
    // The id map rehashes on the same schedule (reserve(n) alone rehashes whenever n
    // passes the bucket count, i.e. at nearly every batch).
    if (static_cast<double>(row_of_.bucket_count()) * row_of_.max_load_factor() < static_cast<double>(rows))
        row_of_.reserve(std::max(rows, row_of_.size() + row_of_.size() / 2));
}

}  // namespace ragpp

// With ragpp::compiled (RAGPP_COMPILED), VectorIndex<HashingEmbedder> comes compiled from
// the library (src/instances.cpp), as BM25Index<EnglishAnalyzer> does (index/bm25.hpp).
#ifdef RAGPP_COMPILED
#include <ragpp/embed/hashing.hpp>
namespace ragpp {
extern template class VectorIndex<HashingEmbedder, Flat>;
}  // namespace ragpp
#endif
#define RAGPP_DETAIL_HAS_VECTOR_INDEX 1
#include <ragpp/detail/readme_instances.hpp>
