// ragpp detail: HnswGraph, the graph of VectorIndex<E, Hnsw> (index/hnsw.hpp).
//
// Hierarchical Navigable Small World graphs: Y. A. Malkov, D. A. Yashunin, "Efficient
// and robust approximate nearest neighbor search using Hierarchical Navigable Small
// World graphs", IEEE TPAMI 2018 (arXiv:1603.09320). Insertion is their Algorithm 1,
// the layer search Algorithm 2, the neighbour selection the heuristic of Algorithm 4
// (without extendCandidates / keepPrunedConnections, as hnswlib does by default).
// Deletion is ours: the node's in-neighbours are found by a construction-like search
// for its own vector, and each one's list is rebuilt with the same heuristic over its
// remaining neighbours and the deleted node's neighbours; the slot goes on a free list
// and the next insertion reuses it.
//
// Storage is by slot (a node's fixed place), in fixed-size records so that a saved graph
// can be used in place from a memory-mapped file:
//   rows    float32 graphs: slots x stride floats (stride = dim rounded up to 16, zero
//           padded: an AVX-512 dot product runs whole registers, no tail)
//   codes   int8 graphs (instead of rows): slots x stride int8 codes (stride = dim rounded
//           up to 32, zero padded) and slots floats, the rows' scales
//           (index/detail/int8_codes.hpp: the Flat backend's codes)
//   norms   slots floats, |x|^2 of the float32 row (the l2 metric)
//   links0  slots x (1 + 2M) u32: the level-0 neighbour count, then the neighbours
//   levels  slots bytes: the node's top level, kFree for a free slot (owned)
//   upper   per slot, level x (1 + M) u32 for levels 1..level (owned: about 1/M of the nodes)
// The arrays but levels and upper are owned vectors, or views of a mapped file until the
// first write copies them (copy-on-write).
//
// Scores are similarities, higher is better: x.q for cosine (unit rows) and inner
// product, 2 x.q - |x|^2 - |q|^2 = -|x - q|^2 for l2. An int8 graph computes x.q as
// a t sum c_i d_i (row codes c and scale a, query codes d and scale t: integer dot
// products, detail/simd.hpp dot_i8), for the search and for the construction alike.
//
// Insertion runs by batches (insert_batch): the nodes of a batch search the graph as it
// was before the batch, in parallel (any number of threads), each one also taking every
// earlier node of its batch as a candidate (scored exactly); then each node that a new
// node chose gets its new in-links at once, re-selected by the heuristic when its list
// overflows (in parallel over those nodes); then everything is written. The graph
// depends on the batches, never on the thread count. A batch of one is the paper's
// sequential insertion.
//
// Threading: const members are safe from many threads at once (each search leases its
// own scratch, visited marks included, from a pool guarded by a mutex); writes need
// exclusive access.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <ragpp/core/error.hpp>
#include <ragpp/detail/aligned_allocator.hpp>
#include <ragpp/detail/mapped_file.hpp>
#include <ragpp/detail/parallel.hpp>
#include <ragpp/detail/simd.hpp>
#include <ragpp/index/detail/int8_codes.hpp>

namespace ragpp::detail {

/// A query prepared for the graph's scoring: the float32 values (float32 graphs) or the
/// int8 codes and their scale (int8 graphs), each `stride` long and zero padded, and |q|^2.
struct HnswQuery {
    const float* f = nullptr;
    const std::int8_t* c = nullptr;
    float scale = 1.0F;
    float n2 = 0.0F;
};

/// A node and its score against the current query.
struct HnswCand {
    float score;
    std::uint32_t slot;
};
/// Heap orders: best on top (candidates), worst on top (results).
inline bool hnsw_worse(const HnswCand& a, const HnswCand& b) noexcept { return a.score < b.score; }
inline bool hnsw_better(const HnswCand& a, const HnswCand& b) noexcept { return a.score > b.score; }

/// One search's scratch: epoch-stamped visited marks (a slot is visited when its mark
/// equals the epoch; a new search bumps the epoch instead of clearing) and the heaps.
struct HnswScratch {
    std::vector<std::uint16_t> mark;
    std::uint16_t epoch = 0;
    std::vector<HnswCand> cand, res;

    void begin(std::size_t slots) {
        if (mark.size() < slots) {
            mark.assign(slots + slots / 4 + 64, 0);
            epoch = 0;
        }
        if (++epoch == 0) {
            std::fill(mark.begin(), mark.end(), std::uint16_t{0});
            epoch = 1;
        }
    }
};

/// Scratch objects kept between searches; copying a pool gives an empty one.
class HnswScratchPool {
public:
    HnswScratchPool() = default;
    HnswScratchPool(const HnswScratchPool&) noexcept {}
    HnswScratchPool& operator=(const HnswScratchPool&) noexcept { return *this; }

    struct Lease {
        HnswScratchPool* pool;
        std::unique_ptr<HnswScratch> s;
        Lease(HnswScratchPool* p, std::unique_ptr<HnswScratch> x) noexcept : pool(p), s(std::move(x)) {}
        Lease(const Lease&) = delete;
        Lease& operator=(const Lease&) = delete;
        ~Lease() {
            if (s) pool->put(std::move(s));
        }
        HnswScratch& operator*() const noexcept { return *s; }
    };
    Lease lease() {
        {
            std::lock_guard lock(m_);
            if (!free_.empty()) {
                auto s = std::move(free_.back());
                free_.pop_back();
                return Lease{this, std::move(s)};
            }
        }
        return Lease{this, std::make_unique<HnswScratch>()};
    }

private:
    void put(std::unique_ptr<HnswScratch> s) noexcept {
        std::lock_guard lock(m_);
        try {
            if (free_.size() < 64) free_.push_back(std::move(s));
        } catch (...) {  // out of memory: the scratch is dropped
        }
    }
    std::mutex m_;
    std::vector<std::unique_ptr<HnswScratch>> free_;
};

/// The arrays that may be views of a mapped file: owned vectors, or views kept alive by
/// `file`; copies and moves re-point the views at their own vectors.
struct HnswArrays {
    AlignedVector<float> rows_own;
    AlignedVector<std::int8_t> codes_own;
    std::vector<float> scales_own;
    std::vector<float> norms_own;
    AlignedVector<std::uint32_t> links0_own;
    std::shared_ptr<const FileBytes> file;
    const float* rows = nullptr;
    const std::int8_t* codes = nullptr;
    const float* scales = nullptr;
    const float* norms = nullptr;
    const std::uint32_t* links0 = nullptr;

    HnswArrays() = default;
    HnswArrays(const HnswArrays& o)
        : rows_own(o.rows_own), codes_own(o.codes_own), scales_own(o.scales_own), norms_own(o.norms_own),
          links0_own(o.links0_own), file(o.file), rows(o.rows), codes(o.codes), scales(o.scales), norms(o.norms),
          links0(o.links0) {
        if (!file) repoint();
    }
    HnswArrays(HnswArrays&& o) noexcept
        : rows_own(std::move(o.rows_own)), codes_own(std::move(o.codes_own)), scales_own(std::move(o.scales_own)),
          norms_own(std::move(o.norms_own)), links0_own(std::move(o.links0_own)), file(std::move(o.file)), rows(o.rows),
          codes(o.codes), scales(o.scales), norms(o.norms), links0(o.links0) {
        if (!file) repoint();
        o.repoint();
    }
    HnswArrays& operator=(HnswArrays o) noexcept {
        std::swap(rows_own, o.rows_own);
        std::swap(codes_own, o.codes_own);
        std::swap(scales_own, o.scales_own);
        std::swap(norms_own, o.norms_own);
        std::swap(links0_own, o.links0_own);
        std::swap(file, o.file);
        std::swap(rows, o.rows);
        std::swap(codes, o.codes);
        std::swap(scales, o.scales);
        std::swap(norms, o.norms);
        std::swap(links0, o.links0);
        if (!file) repoint();
        return *this;
    }
    ~HnswArrays() = default;
    void repoint() noexcept {
        rows = rows_own.data();
        codes = codes_own.data();
        scales = scales_own.data();
        norms = norms_own.data();
        links0 = links0_own.data();
    }
};

class HnswGraph {
public:
    static constexpr std::uint8_t kFree = 0xFF;
    static constexpr int kMaxLevel = 32;
    static constexpr std::uint32_t kNone = 0xFFFFFFFFU;

    HnswGraph() = default;
    /// dim > 0, m >= 2 (checked by the caller); `int8`: int8 codes instead of float32 rows.
    HnswGraph(std::size_t dim, std::size_t m, std::size_t ef_construction, bool l2, std::uint64_t seed, bool int8 = false)
        : dim_(dim), stride_(int8 ? (dim + 31) / 32 * 32 : (dim + 15) / 16 * 16), m_(m), m0_(2 * m),
          efc_(std::max<std::size_t>(ef_construction, 1)), l2_(l2), i8_(int8),
          mult_(1.0 / std::log(static_cast<double>(m))), rng_(seed) {}

    [[nodiscard]] std::size_t dimension() const noexcept { return dim_; }
    /// Values per row (floats, or int8 codes for an int8 graph), padding included.
    [[nodiscard]] std::size_t stride() const noexcept { return stride_; }
    [[nodiscard]] bool int8() const noexcept { return i8_; }
    [[nodiscard]] std::size_t m() const noexcept { return m_; }
    [[nodiscard]] std::size_t ef_construction() const noexcept { return efc_; }
    [[nodiscard]] std::size_t slots() const noexcept { return slots_; }
    [[nodiscard]] std::size_t live() const noexcept { return live_; }
    [[nodiscard]] std::uint32_t entry() const noexcept { return entry_; }
    [[nodiscard]] int top() const noexcept { return top_; }
    [[nodiscard]] bool mapped() const noexcept { return a_.file != nullptr; }
    [[nodiscard]] bool is_live(std::uint32_t s) const noexcept { return s < slots_ && levels_[s] != kFree; }
    [[nodiscard]] int level(std::uint32_t s) const noexcept { return levels_[s]; }
    /// The float32 row of s (float32 graphs only).
    [[nodiscard]] const float* row(std::uint32_t s) const noexcept { return a_.rows + std::size_t{s} * stride_; }
    /// The int8 codes and scale of s (int8 graphs only).
    [[nodiscard]] const std::int8_t* codes(std::uint32_t s) const noexcept { return a_.codes + std::size_t{s} * stride_; }
    [[nodiscard]] float scale(std::uint32_t s) const noexcept { return a_.scales[s]; }
    [[nodiscard]] std::size_t link0_words() const noexcept { return 1 + m0_; }
    [[nodiscard]] std::size_t upper_words() const noexcept { return 1 + m_; }

    /// The neighbour record of s at level lc (count, then ids), or null when s has no
    /// such level (a free slot, or a stale link to a slot reused at a lower level).
    [[nodiscard]] const std::uint32_t* list(std::uint32_t s, int lc) const noexcept {
        const int lv = levels_[s];
        if (lv == kFree || lv < lc) return nullptr;
        if (lc == 0) return a_.links0 + std::size_t{s} * link0_words();
        return upper_[s].data() + static_cast<std::size_t>(lc - 1) * upper_words();
    }
    [[nodiscard]] std::size_t max_links(int lc) const noexcept { return lc == 0 ? m0_ : m_; }

    /// The similarity of slot s to the prepared query.
    [[nodiscard]] float score(const HnswQuery& q, std::uint32_t s) const noexcept {
        const float d = i8_ ? static_cast<float>(dot8_(codes(s), q.c, stride_)) * a_.scales[s] * q.scale
                            : dot_(row(s), q.f, stride_);
        return l2_ ? 2.0F * d - a_.norms[s] - q.n2 : d;
    }
    [[nodiscard]] float norm2(std::uint32_t s) const noexcept { return a_.norms[s]; }
    /// Slot s's own vector as a query (its neighbours' scores from its point of view).
    [[nodiscard]] HnswQuery node_query(std::uint32_t s) const noexcept {
        HnswQuery q;
        if (i8_) {
            q.c = codes(s);
            q.scale = a_.scales[s];
        } else {
            q.f = row(s);
        }
        q.n2 = a_.norms[s];
        return q;
    }

    // --- search ---------------------------------------------------------------------

    /// The ef best accepted nodes (unordered) of a search for q; `accept(slot)` says
    /// which may be returned (all are visited for navigation).
    template <class Accept>
    [[nodiscard]] std::vector<HnswCand> search(const HnswQuery& q, std::size_t ef, Accept&& accept) const {
        if (entry_ == kNone) return {};
        auto lease = pool_.lease();
        HnswScratch& sc = *lease;
        HnswCand ep{score(q, entry_), entry_};
        ep = greedy(q, ep, 0);
        sc.begin(slots_);
        search_layer(q, ep, ef, 0, sc, accept, [](std::uint32_t, const std::uint32_t*) {});
        return sc.res;
    }

    /// Every live slot, in slot order.
    template <class F>
    void for_each_live(F&& f) const {
        for (std::uint32_t s = 0; s < slots_; ++s)
            if (levels_[s] != kFree) f(s);
    }

    // --- writes, in two phases: plan (may throw, changes nothing visible), commit (noexcept) ---

    struct ListUpdate {
        std::uint32_t slot;
        int level;
        std::vector<std::uint32_t> ids;
    };
    struct BatchPlan {
        std::vector<std::uint32_t> slots;  // node i's slot: free slots first (the free list's end), then new ones
        std::vector<int> levels;
        std::size_t reused = 0, added = 0;
        std::vector<std::vector<std::vector<std::uint32_t>>> own;  // own[i][lc]: node i's neighbours at lc
        std::vector<std::vector<std::uint32_t>> upper;             // node i's upper records, ready to store
        std::vector<ListUpdate> updates;                           // lists that gain in-links, rewritten whole
    };

    /// Plans the insertion of n rows (row i at x + i * xstride, dim floats, already
    /// normalised for cosine) as one batch, on up to `threads` threads. The rows are
    /// written to their slots' storage (free or past the end: invisible until commit);
    /// on an exception everything is as before. Then either commit(plan) or abandon(plan),
    /// with no other write in between.
    [[nodiscard]] BatchPlan plan_batch(const float* x, std::size_t n, std::size_t xstride, unsigned threads) {
        BatchPlan p;
        if (n == 0) return p;
        own_storage();
        p.reused = std::min(n, free_.size());
        p.added = n - p.reused;
        if (p.added > 0 && slots_ + p.added >= kNone) throw InvalidArgument("VectorIndex<Hnsw>: more than 2^32 - 2 nodes");
        p.slots.resize(n);
        p.levels.resize(n);
        p.own.resize(n);
        p.upper.resize(n);
        std::uniform_real_distribution<double> u(0.0, 1.0);
        for (std::size_t i = 0; i < n; ++i) {
            p.slots[i] = i < p.reused ? free_[free_.size() - 1 - i] : static_cast<std::uint32_t>(slots_ + i - p.reused);
            const double r = 1.0 - u(rng_);  // (0, 1]
            p.levels[i] = std::min(static_cast<int>(-std::log(r) * mult_), kMaxLevel);
        }
        reserve_slots(slots_ + p.added);
        try {
            grow_rows(slots_ + p.added);
            for (std::size_t i = 0; i < n; ++i) write_row(p.slots[i], x + i * xstride);
            plan_links(p, threads);
        } catch (...) {
            abandon(p);
            throw;
        }
        return p;
    }

    /// Forgets a plan that will not be committed (the rows past the end are dropped).
    void abandon(BatchPlan& p) noexcept {
        if (p.added > 0) grow_rows(slots_);
        p = BatchPlan{};
    }

    /// Applies a plan made on this graph with no write in between. Never throws.
    void commit(BatchPlan& p) noexcept {
        const std::size_t n = p.slots.size();
        if (n == 0) return;
        if (p.added > 0) {  // capacity reserved by the plan: no reallocation
            a_.links0_own.resize(a_.links0_own.size() + p.added * link0_words());
            levels_.resize(levels_.size() + p.added, kFree);
            upper_.resize(upper_.size() + p.added);
            slots_ += p.added;
            point_at_owned();
        }
        free_.resize(free_.size() - p.reused);
        for (std::size_t i = 0; i < n; ++i) {
            const std::uint32_t s = p.slots[i];
            levels_[s] = static_cast<std::uint8_t>(p.levels[i]);
            upper_[s] = std::move(p.upper[i]);
            write_list(s, 0, p.own[i][0]);
        }
        for (const auto& up : p.updates) write_list(up.slot, up.level, up.ids);
        for (std::size_t i = 0; i < n; ++i)
            if (entry_ == kNone || p.levels[i] > top_) {
                entry_ = p.slots[i];
                top_ = p.levels[i];
            }
        live_ += n;
    }

    struct RemovePlan {
        std::uint32_t slot = 0;
        std::vector<ListUpdate> updates;
        std::uint32_t entry = kNone;
        int top = -1;
    };

    /// Plans the removal of live slot s: its in-neighbours at each level are found (its
    /// out-neighbours that link back, and every node a construction-like search for its
    /// vector expands that links to it) and each one's list is re-selected, by the
    /// insertion heuristic, from its other neighbours and those of s.
    [[nodiscard]] RemovePlan plan_remove(std::uint32_t s) {
        RemovePlan p;
        p.slot = s;
        own_storage();
        free_.reserve(free_.size() + 1);
        const int ls = levels_[s];
        const HnswQuery q = node_query(s);
        auto lease = pool_.lease();
        HnswScratch& sc = *lease;
        HnswCand ep{score(q, entry_), entry_};
        ep = greedy(q, ep, ls);
        std::vector<std::uint32_t> in;
        for (int lc = std::min(ls, top_); lc >= 0; --lc) {
            in.clear();
            const std::uint32_t* ls_list = list(s, lc);
            const auto links_to_s = [&](const std::uint32_t* l) {
                for (std::uint32_t j = 0; j < l[0]; ++j)
                    if (l[1 + j] == s) return true;
                return false;
            };
            // Its neighbours and their neighbours (two hops), then the search's expansions.
            for (std::uint32_t j = 0; j < ls_list[0]; ++j) {
                const std::uint32_t u = ls_list[1 + j];
                const std::uint32_t* l = list(u, lc);
                if (u == s || l == nullptr) continue;
                if (links_to_s(l)) in.push_back(u);
                for (std::uint32_t i = 0; i < l[0]; ++i) {
                    const std::uint32_t v = l[1 + i];
                    const std::uint32_t* lv = v < slots_ && v != s ? list(v, lc) : nullptr;
                    if (lv != nullptr && links_to_s(lv)) in.push_back(v);
                }
            }
            sc.begin(slots_);
            search_layer(q, ep, efc_, lc, sc, [](std::uint32_t) { return true; },
                         [&](std::uint32_t u, const std::uint32_t* l) {
                             if (u != s && links_to_s(l)) in.push_back(u);
                         });
            if (!sc.res.empty()) {
                ep = *std::max_element(sc.res.begin(), sc.res.end(), hnsw_worse);
                if (ep.slot == s) {  // continue from the best other node, if any
                    HnswCand best{-std::numeric_limits<float>::infinity(), kNone};
                    for (const auto& c : sc.res)
                        if (c.slot != s && c.score > best.score) best = c;
                    if (best.slot != kNone) ep = best;
                }
            }
            std::sort(in.begin(), in.end());
            in.erase(std::unique(in.begin(), in.end()), in.end());
            for (std::uint32_t u : in) {
                const std::uint32_t* lu = list(u, lc);
                std::vector<std::uint32_t> pool_ids;
                for (std::uint32_t j = 0; j < lu[0]; ++j)
                    if (lu[1 + j] != s) pool_ids.push_back(lu[1 + j]);
                for (std::uint32_t j = 0; j < ls_list[0]; ++j)
                    if (ls_list[1 + j] != u) pool_ids.push_back(ls_list[1 + j]);
                std::sort(pool_ids.begin(), pool_ids.end());
                pool_ids.erase(std::unique(pool_ids.begin(), pool_ids.end()), pool_ids.end());
                std::vector<HnswCand> c;
                const HnswQuery qu = node_query(u);
                for (std::uint32_t o : pool_ids)
                    if (o != s && o != u && list(o, lc) != nullptr) c.push_back({score(qu, o), o});
                p.updates.push_back({u, lc, select(c, max_links(lc), true)});
            }
        }
        p.entry = entry_;
        p.top = top_;
        if (s == entry_) {
            p.entry = kNone;
            p.top = -1;
            // Prefer a neighbour on the same top level; else the highest other node.
            const std::uint32_t* l = list(s, top_);
            for (std::uint32_t j = 0; l != nullptr && j < l[0]; ++j)
                if (l[1 + j] != s && is_live(l[1 + j]) && levels_[l[1 + j]] == top_) {
                    p.entry = l[1 + j];
                    p.top = top_;
                    break;
                }
            if (p.entry == kNone)
                for (std::uint32_t x = 0; x < slots_; ++x)
                    if (x != s && levels_[x] != kFree && static_cast<int>(levels_[x]) > p.top) {
                        p.entry = x;
                        p.top = levels_[x];
                    }
        }
        return p;
    }

    void commit(RemovePlan& p) noexcept {
        for (const auto& up : p.updates) write_list(up.slot, up.level, up.ids);
        const std::uint32_t s = p.slot;
        a_.links0_own[std::size_t{s} * link0_words()] = 0;
        upper_[s].clear();
        upper_[s].shrink_to_fit();
        levels_[s] = kFree;
        free_.push_back(s);  // capacity reserved by the plan
        entry_ = p.entry;
        top_ = p.top;
        --live_;
    }

    /// Makes the storage owned (a copy of the mapped arrays): before a write.
    void own_storage() {
        if (a_.file == nullptr) return;
        AlignedVector<float> r;
        AlignedVector<std::int8_t> c;
        std::vector<float> sc;
        if (i8_) {
            c.assign(a_.codes, a_.codes + slots_ * stride_);
            sc.assign(a_.scales, a_.scales + slots_);
        } else {
            r.assign(a_.rows, a_.rows + slots_ * stride_);
        }
        std::vector<float> n(a_.norms, a_.norms + slots_);
        AlignedVector<std::uint32_t> l(a_.links0, a_.links0 + slots_ * link0_words());
        a_.rows_own = std::move(r);
        a_.codes_own = std::move(c);
        a_.scales_own = std::move(sc);
        a_.norms_own = std::move(n);
        a_.links0_own = std::move(l);
        a_.file.reset();
        point_at_owned();
    }

    // --- persistence (the arrays, for index/hnsw.hpp) --------------------------------

    [[nodiscard]] const float* rows_data() const noexcept { return a_.rows; }
    [[nodiscard]] const std::int8_t* codes_data() const noexcept { return a_.codes; }
    [[nodiscard]] const float* scales_data() const noexcept { return a_.scales; }
    [[nodiscard]] const float* norms_data() const noexcept { return a_.norms; }
    [[nodiscard]] const std::uint32_t* links0_data() const noexcept { return a_.links0; }
    [[nodiscard]] const std::vector<std::uint8_t>& levels() const noexcept { return levels_; }
    [[nodiscard]] const std::vector<std::uint32_t>& upper(std::uint32_t s) const noexcept { return upper_[s]; }

    /// The loaded arrays: float32 rows, or int8 codes and scales (the other null).
    struct Loaded {
        const float* rows = nullptr;
        const std::int8_t* codes = nullptr;
        const float* scales = nullptr;
        const float* norms = nullptr;
        const std::uint32_t* links0 = nullptr;
    };
    /// Installs loaded arrays (validated by the caller, links0 at use when mapped).
    /// `file` keeps mapped views alive (null for owned arrays).
    void install(std::size_t slots, const Loaded& in, std::vector<std::uint8_t> levels,
                 std::vector<std::vector<std::uint32_t>> upper, std::uint32_t entry, int top,
                 std::shared_ptr<const FileBytes> file, std::string source) {
        install_nodes(slots, std::move(levels), std::move(upper), entry, top, std::move(source));
        if (file) {
            a_.file = std::move(file);
            a_.rows = in.rows;
            a_.codes = in.codes;
            a_.scales = in.scales;
            a_.norms = in.norms;
            a_.links0 = in.links0;
        } else {
            if (i8_) {
                a_.codes_own.assign(in.codes, in.codes + slots * stride_);
                a_.scales_own.assign(in.scales, in.scales + slots);
            } else {
                a_.rows_own.assign(in.rows, in.rows + slots * stride_);
            }
            a_.norms_own.assign(in.norms, in.norms + slots);
            a_.links0_own.assign(in.links0, in.links0 + slots * link0_words());
            point_at_owned();
        }
    }

    /// The owned arrays of a read (not mapped) file, each sized for `slots` (validated by
    /// the caller): moved in, not copied.
    struct Owned {
        AlignedVector<float> rows;
        AlignedVector<std::int8_t> codes;
        std::vector<float> scales, norms;
        AlignedVector<std::uint32_t> links0;
    };
    void install(std::size_t slots, Owned in, std::vector<std::uint8_t> levels,
                 std::vector<std::vector<std::uint32_t>> upper, std::uint32_t entry, int top, std::string source) {
        install_nodes(slots, std::move(levels), std::move(upper), entry, top, std::move(source));
        a_.file.reset();
        a_.rows_own = std::move(in.rows);
        a_.codes_own = std::move(in.codes);
        a_.scales_own = std::move(in.scales);
        a_.norms_own = std::move(in.norms);
        a_.links0_own = std::move(in.links0);
        point_at_owned();
    }

private:
    void install_nodes(std::size_t slots, std::vector<std::uint8_t> levels, std::vector<std::vector<std::uint32_t>> upper,
                       std::uint32_t entry, int top, std::string source) {
        slots_ = slots;
        levels_ = std::move(levels);
        upper_ = std::move(upper);
        entry_ = entry;
        top_ = top;
        source_ = std::move(source);
        live_ = 0;
        free_.clear();
        for (std::uint32_t s = 0; s < slots_; ++s) {
            if (levels_[s] == kFree) free_.push_back(s);
            else ++live_;
        }
        std::reverse(free_.begin(), free_.end());  // lowest slot reused first
    }
    void reserve_slots(std::size_t n) {
        const auto grow = [](auto& v, std::size_t need) {
            if (v.capacity() < need) v.reserve(std::max(need, v.capacity() * 2));
        };
        own_storage();
        if (i8_) {
            grow(a_.codes_own, n * stride_);
            grow(a_.scales_own, n);
        } else {
            grow(a_.rows_own, n * stride_);
        }
        grow(a_.norms_own, n);
        grow(a_.links0_own, n * link0_words());
        grow(levels_, n);
        grow(upper_, n);
        point_at_owned();
    }
    /// Sizes the row arrays (rows or codes and scales, norms) to n slots (capacity reserved).
    void grow_rows(std::size_t n) noexcept {
        if (i8_) {
            a_.codes_own.resize(n * stride_, 0);
            a_.scales_own.resize(n, 0.0F);
        } else {
            a_.rows_own.resize(n * stride_, 0.0F);
        }
        a_.norms_own.resize(n, 0.0F);
        point_at_owned();
    }
    /// Stores x (dim floats) as slot s's row: float32 padded with zeros, or int8 codes.
    void write_row(std::uint32_t s, const float* x) noexcept {
        const std::size_t at = std::size_t{s} * stride_;
        if (i8_) {
            std::int8_t* c = a_.codes_own.data() + at;
            std::fill(c, c + stride_, std::int8_t{0});
            a_.scales_own[s] = int8_encode_row(x, dim_, c);
        } else {
            float* r = a_.rows_own.data() + at;
            std::copy(x, x + dim_, r);
            std::fill(r + dim_, r + stride_, 0.0F);
        }
        a_.norms_own[s] = simd::dot_f32_scalar(x, x, dim_);
    }
    void point_at_owned() noexcept { a_.repoint(); }

    /// The lists of a planned batch (the rows are stored): each node's own neighbours
    /// (a search of the graph as it is, plus the earlier nodes of the batch), then the new
    /// in-links of every node they chose.
    void plan_links(BatchPlan& p, unsigned threads) const {
        const std::size_t n = p.slots.size();
        parallel_for(n, std::max(threads, 1U), [&](std::size_t i) {
            const std::uint32_t s = p.slots[i];
            const int L = p.levels[i];
            const HnswQuery q = node_query(s);
            auto& own = p.own[i];
            own.assign(static_cast<std::size_t>(L) + 1, {});
            std::vector<HnswCand> cands;
            HnswCand ep{0.0F, kNone};
            if (entry_ != kNone) ep = greedy(q, {score(q, entry_), entry_}, L);
            auto lease = pool_.lease();
            HnswScratch& sc = *lease;
            for (int lc = L; lc >= 0; --lc) {
                cands.clear();
                if (ep.slot != kNone && lc <= top_) {
                    sc.begin(slots_);
                    search_layer(q, ep, efc_, lc, sc, [](std::uint32_t) { return true; },
                                 [](std::uint32_t, const std::uint32_t*) {});
                    cands = sc.res;
                    // the next level starts from the best found here
                    ep = *std::max_element(cands.begin(), cands.end(), hnsw_worse);
                }
                // Earlier nodes of the batch, when among the ef_construction best (as if the
                // search had reached them).
                const bool full = cands.size() >= efc_;
                float worst = std::numeric_limits<float>::infinity();
                for (const HnswCand& c : cands) worst = std::min(worst, c.score);
                for (std::size_t j = 0; j < i; ++j)
                    if (p.levels[j] >= lc) {
                        const float sj = score(q, p.slots[j]);
                        if (!full || sj > worst) cands.push_back({sj, p.slots[j]});
                    }
                own[static_cast<std::size_t>(lc)] = select(std::move(cands), m_);  // M on every level, as the paper's M
                cands = {};
            }
            auto& rec = p.upper[i];
            rec.assign(static_cast<std::size_t>(L) * upper_words(), 0);
            for (int lc = 1; lc <= L; ++lc) {
                std::uint32_t* r = rec.data() + static_cast<std::size_t>(lc - 1) * upper_words();
                const auto& mine = own[static_cast<std::size_t>(lc)];
                r[0] = static_cast<std::uint32_t>(mine.size());
                std::copy(mine.begin(), mine.end(), r + 1);
            }
        });
        // Every chosen neighbour links back: requests grouped by (neighbour, level), in
        // batch order.
        struct Request {
            std::uint32_t target;
            int level;
            std::uint32_t from;
        };
        std::vector<Request> req;
        std::unordered_map<std::uint32_t, std::size_t> in_batch;
        for (std::size_t i = 0; i < n; ++i) {
            in_batch.emplace(p.slots[i], i);
            for (std::size_t lc = 0; lc < p.own[i].size(); ++lc)
                for (std::uint32_t nb : p.own[i][lc]) req.push_back({nb, static_cast<int>(lc), p.slots[i]});
        }
        std::stable_sort(req.begin(), req.end(), [](const Request& a, const Request& b) {
            return a.target < b.target || (a.target == b.target && a.level < b.level);
        });
        std::vector<std::size_t> group;  // the first request of each (target, level)
        for (std::size_t r = 0; r < req.size(); ++r)
            if (r == 0 || req[r].target != req[r - 1].target || req[r].level != req[r - 1].level) group.push_back(r);
        group.push_back(req.size());
        p.updates.resize(group.size() - 1);
        parallel_for(group.size() - 1, std::max(threads, 1U), [&](std::size_t g) {
            const std::size_t b = group[g], e = group[g + 1];
            const std::uint32_t t = req[b].target;
            const int lc = req[b].level;
            const std::size_t maxl = max_links(lc);
            std::vector<std::uint32_t> ids;
            const auto from_new = [&](std::uint32_t o) {
                for (std::size_t r = b; r < e; ++r)
                    if (req[r].from == o) return true;
                return false;
            };
            if (auto it = in_batch.find(t); it != in_batch.end()) {
                for (std::uint32_t o : p.own[it->second][static_cast<std::size_t>(lc)])
                    if (!from_new(o)) ids.push_back(o);
            } else {
                const std::uint32_t* l = list(t, lc);
                if (l == nullptr || l[0] > maxl) bad_link(t);
                for (std::uint32_t j = 0; j < l[0]; ++j) {
                    const std::uint32_t o = l[1 + j];
                    if (o >= slots_) bad_link(t);
                    if (!from_new(o)) ids.push_back(o);  // a stale link to a reused slot goes
                }
            }
            if (ids.size() + (e - b) <= maxl) {
                for (std::size_t r = b; r < e; ++r) ids.push_back(req[r].from);
            } else {  // overfull: re-selected by the heuristic
                const HnswQuery qt = node_query(t);
                std::vector<HnswCand> c;
                c.reserve(ids.size() + (e - b));
                for (std::uint32_t o : ids) c.push_back({score(qt, o), o});
                for (std::size_t r = b; r < e; ++r) c.push_back({score(qt, req[r].from), req[r].from});
                ids = select(std::move(c), maxl);
            }
            p.updates[g] = ListUpdate{t, lc, std::move(ids)};
        });
    }

    void write_list(std::uint32_t s, int lc, const std::vector<std::uint32_t>& ids) noexcept {
        std::uint32_t* rec = lc == 0 ? a_.links0_own.data() + std::size_t{s} * link0_words()
                                     : upper_[s].data() + static_cast<std::size_t>(lc - 1) * upper_words();
        rec[0] = static_cast<std::uint32_t>(ids.size());
        std::copy(ids.begin(), ids.end(), rec + 1);
    }

    /// The paper's heuristic (Algorithm 4): candidates best first; one is kept when it is
    /// closer to the base than to every one kept before it, up to m.
    [[nodiscard]] std::vector<std::uint32_t> select(std::vector<HnswCand> c, std::size_t m, bool fill = false) const {
        std::sort(c.begin(), c.end(), [](const HnswCand& a, const HnswCand& b) {
            return a.score > b.score || (a.score == b.score && a.slot < b.slot);
        });
        std::vector<std::uint32_t> out;
        out.reserve(m);
        for (const HnswCand& e : c) {
            if (out.size() >= m) break;
            bool keep = true;
            const HnswQuery qe = node_query(e.slot);
            for (std::uint32_t r : out)
                if (score(qe, r) > e.score) {
                    keep = false;
                    break;
                }
            if (keep) out.push_back(e.slot);
        }
        // keepPrunedConnections: the best pruned candidates fill the list up to m.
        if (fill)
            for (const HnswCand& e : c) {
                if (out.size() >= m) break;
                if (std::find(out.begin(), out.end(), e.slot) == out.end()) out.push_back(e.slot);
            }
        return out;
    }

    [[noreturn]] void bad_link(std::uint32_t s) const {
        throw FormatError("'" + source_ + "': corrupted HNSW graph: a neighbour list of node " + std::to_string(s) +
                          " holds an out-of-range count or id");
    }

    /// Greedy descent from the top level down to level `to` + 1 (ef = 1).
    [[nodiscard]] HnswCand greedy(const HnswQuery& q, HnswCand cur, int to) const {
        for (int lc = top_; lc > to; --lc) {
            bool changed = true;
            while (changed) {
                changed = false;
                const std::uint32_t* l = list(cur.slot, lc);
                if (l == nullptr) break;
                if (l[0] > m_) bad_link(cur.slot);
                for (std::uint32_t j = 0; j < l[0]; ++j) {
                    const std::uint32_t nb = l[1 + j];
                    if (nb >= slots_) bad_link(cur.slot);
                    if (levels_[nb] == kFree || levels_[nb] < lc) continue;
                    const float sc = score(q, nb);
                    if (sc > cur.score) {
                        cur = {sc, nb};
                        changed = true;
                    }
                }
            }
        }
        return cur;
    }

    /// Algorithm 2 with a filter: every reached node is a candidate for navigation, only
    /// accepted ones enter the results; stops when the best candidate left is worse
    /// than the worst of ef results. `expand(slot, list)` sees each expanded node.
    template <class Accept, class Expand>
    void search_layer(const HnswQuery& q, HnswCand ep, std::size_t ef, int lc, HnswScratch& sc, Accept&& accept,
                      Expand&& expand) const {
        auto& C = sc.cand;
        auto& W = sc.res;
        C.clear();
        W.clear();
        const std::uint16_t epoch = sc.epoch;
        std::uint16_t* mark = sc.mark.data();
        mark[ep.slot] = epoch;
        C.push_back(ep);
        if (accept(ep.slot)) W.push_back(ep);
        const std::size_t maxl = max_links(lc);
        while (!C.empty()) {
            const HnswCand c = C.front();
            if (W.size() >= ef && c.score < W.front().score) break;
            std::pop_heap(C.begin(), C.end(), hnsw_worse);
            C.pop_back();
            const std::uint32_t* l = list(c.slot, lc);
            if (l == nullptr) continue;
            const std::uint32_t cnt = l[0];
            if (cnt > maxl) bad_link(c.slot);
            expand(c.slot, l);
            for (std::uint32_t j = 0; j < cnt; ++j)
                if (l[1 + j] < slots_) __builtin_prefetch(mark + l[1 + j]);
            for (std::uint32_t j = 0; j < cnt; ++j) {
                const std::uint32_t nb = l[1 + j];
                if (nb >= slots_) bad_link(c.slot);
                if (mark[nb] == epoch) continue;
                mark[nb] = epoch;
                if (j + 1 < cnt && l[2 + j] < slots_) prefetch_row(l[2 + j]);
                // Above level 0 a node below lc is skipped before scoring; at level 0 the
                // level byte (free slots) is read only for the few that would enter.
                if (lc > 0) {
                    const int lv = levels_[nb];
                    if (lv == kFree || lv < lc) continue;
                }
                const float s = score(q, nb);
                if (W.size() < ef || s > W.front().score) {
                    if (lc == 0 && levels_[nb] == kFree) continue;
                    C.push_back({s, nb});
                    std::push_heap(C.begin(), C.end(), hnsw_worse);
                    if (accept(nb)) {
                        W.push_back({s, nb});
                        std::push_heap(W.begin(), W.end(), hnsw_better);
                        if (W.size() > ef) {
                            std::pop_heap(W.begin(), W.end(), hnsw_better);
                            W.pop_back();
                        }
                    }
                }
            }
            // The next node to expand: its list is on its way while this one finishes.
            if (lc == 0 && !C.empty()) __builtin_prefetch(a_.links0 + std::size_t{C.front().slot} * link0_words());
        }
    }
    void prefetch_row(std::uint32_t s) const noexcept {
        if (i8_) {  // the whole row: a 384-d one is 6 cache lines
            const std::int8_t* c = codes(s);
            for (std::size_t b = 0; b < stride_; b += 64) __builtin_prefetch(c + b);
        } else {
            __builtin_prefetch(row(s));
        }
    }

    std::size_t dim_ = 0, stride_ = 16, m_ = 16, m0_ = 32, efc_ = 200;
    bool l2_ = false, i8_ = false;
    double mult_ = 1.0;
    std::mt19937_64 rng_;
    float (*dot_)(const float*, const float*, std::size_t) noexcept = simd::kernels().dot_f32;
    std::int32_t (*dot8_)(const std::int8_t*, const std::int8_t*, std::size_t) noexcept = simd::kernels().dot_i8;

    std::size_t slots_ = 0, live_ = 0;
    std::uint32_t entry_ = kNone;
    int top_ = -1;
    HnswArrays a_;
    std::vector<std::uint8_t> levels_;
    std::vector<std::vector<std::uint32_t>> upper_;
    std::vector<std::uint32_t> free_;
    std::string source_ = "<memory>";
    mutable HnswScratchPool pool_;
};

}  // namespace ragpp::detail
