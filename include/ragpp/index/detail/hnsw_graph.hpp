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
//   rows    slots x stride floats (stride = dim rounded up to 16, zero padded: an
//           AVX-512 dot product runs whole registers, no tail)
//   norms   slots floats, |x|^2 (the l2 metric)
//   links0  slots x (1 + 2M) u32: the level-0 neighbour count, then the neighbours
//   levels  slots bytes: the node's top level, kFree for a free slot (owned)
//   upper   per slot, level x (1 + M) u32 for levels 1..level (owned: about 1/M of the nodes)
// The three first arrays are owned vectors, or views of a mapped file until the first
// write copies them (copy-on-write).
//
// Scores are similarities, higher is better: x.q for cosine (unit rows) and inner
// product, 2 x.q - |x|^2 - |q|^2 = -|x - q|^2 for l2.
//
// Threading: const members are safe from many threads at once (each search leases its
// own scratch, visited marks included, from a pool guarded by a mutex); writes need
// exclusive access.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <ragpp/core/error.hpp>
#include <ragpp/detail/aligned_allocator.hpp>
#include <ragpp/detail/mapped_file.hpp>
#include <ragpp/detail/simd.hpp>

namespace ragpp::detail {

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
    std::vector<float> norms_own;
    std::vector<std::uint32_t> links0_own;
    std::shared_ptr<const FileBytes> file;
    const float* rows = nullptr;
    const float* norms = nullptr;
    const std::uint32_t* links0 = nullptr;

    HnswArrays() = default;
    HnswArrays(const HnswArrays& o)
        : rows_own(o.rows_own), norms_own(o.norms_own), links0_own(o.links0_own), file(o.file), rows(o.rows),
          norms(o.norms), links0(o.links0) {
        if (!file) repoint();
    }
    HnswArrays(HnswArrays&& o) noexcept
        : rows_own(std::move(o.rows_own)), norms_own(std::move(o.norms_own)), links0_own(std::move(o.links0_own)),
          file(std::move(o.file)), rows(o.rows), norms(o.norms), links0(o.links0) {
        if (!file) repoint();
        o.repoint();
    }
    HnswArrays& operator=(HnswArrays o) noexcept {
        std::swap(rows_own, o.rows_own);
        std::swap(norms_own, o.norms_own);
        std::swap(links0_own, o.links0_own);
        std::swap(file, o.file);
        std::swap(rows, o.rows);
        std::swap(norms, o.norms);
        std::swap(links0, o.links0);
        if (!file) repoint();
        return *this;
    }
    ~HnswArrays() = default;
    void repoint() noexcept {
        rows = rows_own.data();
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
    /// dim > 0, m >= 2 (checked by the caller).
    HnswGraph(std::size_t dim, std::size_t m, std::size_t ef_construction, bool l2, std::uint64_t seed)
        : dim_(dim), stride_((dim + 15) / 16 * 16), m_(m), m0_(2 * m), efc_(std::max<std::size_t>(ef_construction, 1)),
          l2_(l2), mult_(1.0 / std::log(static_cast<double>(m))), rng_(seed) {}

    [[nodiscard]] std::size_t dimension() const noexcept { return dim_; }
    [[nodiscard]] std::size_t stride() const noexcept { return stride_; }
    [[nodiscard]] std::size_t m() const noexcept { return m_; }
    [[nodiscard]] std::size_t ef_construction() const noexcept { return efc_; }
    [[nodiscard]] std::size_t slots() const noexcept { return slots_; }
    [[nodiscard]] std::size_t live() const noexcept { return live_; }
    [[nodiscard]] std::uint32_t entry() const noexcept { return entry_; }
    [[nodiscard]] int top() const noexcept { return top_; }
    [[nodiscard]] bool mapped() const noexcept { return a_.file != nullptr; }
    [[nodiscard]] bool is_live(std::uint32_t s) const noexcept { return s < slots_ && levels_[s] != kFree; }
    [[nodiscard]] int level(std::uint32_t s) const noexcept { return levels_[s]; }
    [[nodiscard]] const float* row(std::uint32_t s) const noexcept { return a_.rows + std::size_t{s} * stride_; }
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

    /// The similarity of slot s to the prepared query q (stride floats, zero padded).
    [[nodiscard]] float score(const float* q, float qn2, std::uint32_t s) const noexcept {
        const float d = dot_(row(s), q, stride_);
        return l2_ ? 2.0F * d - a_.norms[s] - qn2 : d;
    }
    [[nodiscard]] float norm2(std::uint32_t s) const noexcept { return a_.norms[s]; }

    // --- search ---------------------------------------------------------------------

    /// The ef best accepted nodes (unordered) of a search for q; `accept(slot)` says
    /// which may be returned (all are visited for navigation).
    template <class Accept>
    [[nodiscard]] std::vector<HnswCand> search(const float* q, float qn2, std::size_t ef, Accept&& accept) const {
        if (entry_ == kNone) return {};
        auto lease = pool_.lease();
        HnswScratch& sc = *lease;
        HnswCand ep{score(q, qn2, entry_), entry_};
        ep = greedy(q, qn2, ep, 0);
        sc.begin(slots_);
        search_layer(q, qn2, ep, ef, 0, sc, accept, [](std::uint32_t, const std::uint32_t*) {});
        return sc.res;
    }

    /// Every live slot, in slot order.
    template <class F>
    void for_each_live(F&& f) const {
        for (std::uint32_t s = 0; s < slots_; ++s)
            if (levels_[s] != kFree) f(s);
    }

    // --- writes, in two phases: plan (may throw, changes nothing), commit (noexcept) ---

    struct ListUpdate {
        std::uint32_t slot;
        int level;
        std::vector<std::uint32_t> ids;
    };
    struct InsertPlan {
        std::uint32_t slot = 0;
        bool new_slot = false;
        int level = 0;
        std::vector<float> row;                       // stride floats
        float norm2 = 0;
        std::vector<std::vector<std::uint32_t>> own;  // own[lc]: the node's neighbours at lc
        std::vector<std::uint32_t> upper;             // its upper records, ready to store
        std::vector<ListUpdate> updates;              // neighbours' new lists
    };

    /// Plans the insertion of `x` (dim floats, already normalised for cosine).
    [[nodiscard]] InsertPlan plan_insert(const float* x) {
        InsertPlan p;
        p.new_slot = free_.empty();
        p.slot = p.new_slot ? static_cast<std::uint32_t>(slots_) : free_.back();
        if (p.new_slot && slots_ >= kNone - 1) throw InvalidArgument("VectorIndex<Hnsw>: more than 2^32 - 2 nodes");
        p.row.assign(stride_, 0.0F);
        std::copy(x, x + dim_, p.row.begin());
        p.norm2 = dot_(p.row.data(), p.row.data(), stride_);
        std::uniform_real_distribution<double> u(0.0, 1.0);
        const double r = 1.0 - u(rng_);  // (0, 1]
        p.level = std::min(static_cast<int>(-std::log(r) * mult_), kMaxLevel);
        p.own.resize(static_cast<std::size_t>(p.level) + 1);
        p.upper.assign(static_cast<std::size_t>(p.level) * upper_words(), 0);
        own_storage();
        if (p.new_slot) reserve_slots(slots_ + 1);
        if (entry_ == kNone) return p;

        const float* q = p.row.data();
        const float qn2 = p.norm2;
        const auto rowof = [&](std::uint32_t s) { return s == p.slot ? q : row(s); };
        const auto nof = [&](std::uint32_t s) { return s == p.slot ? qn2 : a_.norms[s]; };
        auto lease = pool_.lease();
        HnswScratch& sc = *lease;
        HnswCand ep{score(q, qn2, entry_), entry_};
        ep = greedy(q, qn2, ep, p.level);
        std::vector<HnswCand> cands;
        for (int lc = std::min(p.level, top_); lc >= 0; --lc) {
            sc.begin(slots_);
            search_layer(q, qn2, ep, efc_, lc, sc, [](std::uint32_t) { return true; },
                         [](std::uint32_t, const std::uint32_t*) {});
            cands = sc.res;
            // the next level starts from the best found here
            ep = *std::max_element(cands.begin(), cands.end(), hnsw_worse);
            auto& mine = p.own[static_cast<std::size_t>(lc)];
            mine = select(cands, m_, rowof, nof);  // M on every level, as the paper's M
            // Each new neighbour links back; an overfull list is re-selected.
            for (std::uint32_t nb : mine) {
                const std::uint32_t* l = list(nb, lc);
                ListUpdate up{nb, lc, {}};
                for (std::uint32_t j = 0; j < l[0]; ++j)  // a stale link to the reused slot goes
                    if (l[1 + j] != p.slot) up.ids.push_back(l[1 + j]);
                const std::size_t cnt = up.ids.size();
                if (cnt < max_links(lc)) {
                    up.ids.push_back(p.slot);
                } else {
                    std::vector<HnswCand> c;
                    c.reserve(cnt + 1);
                    for (std::uint32_t o : up.ids) c.push_back({pair_score(nb, o, rowof, nof), o});
                    c.push_back({pair_score(nb, p.slot, rowof, nof), p.slot});
                    up.ids = select(c, max_links(lc), rowof, nof);
                }
                p.updates.push_back(std::move(up));
            }
        }
        for (int lc = 1; lc <= p.level; ++lc) {
            std::uint32_t* rec = p.upper.data() + static_cast<std::size_t>(lc - 1) * upper_words();
            const auto& mine = p.own[static_cast<std::size_t>(lc)];
            rec[0] = static_cast<std::uint32_t>(mine.size());
            std::copy(mine.begin(), mine.end(), rec + 1);
        }
        return p;
    }

    /// Applies a plan made on this graph with no write in between. Never throws.
    void commit(InsertPlan& p) noexcept {
        if (p.new_slot) {
            a_.rows_own.resize(a_.rows_own.size() + stride_);  // capacity reserved: no reallocation
            a_.norms_own.push_back(0.0F);
            a_.links0_own.resize(a_.links0_own.size() + link0_words());
            levels_.push_back(kFree);
            upper_.emplace_back();
            ++slots_;
            point_at_owned();
        } else {
            free_.pop_back();
        }
        const std::uint32_t s = p.slot;
        std::copy(p.row.begin(), p.row.end(), a_.rows_own.begin() + static_cast<std::ptrdiff_t>(std::size_t{s} * stride_));
        a_.norms_own[s] = p.norm2;
        levels_[s] = static_cast<std::uint8_t>(p.level);
        upper_[s] = std::move(p.upper);
        write_list(s, 0, p.own[0]);
        for (const auto& up : p.updates) write_list(up.slot, up.level, up.ids);
        if (entry_ == kNone || p.level > top_) {
            entry_ = s;
            top_ = p.level;
        }
        ++live_;
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
        const float* q = row(s);
        const float qn2 = a_.norms[s];
        const auto rowof = [&](std::uint32_t x) { return row(x); };
        const auto nof = [&](std::uint32_t x) { return a_.norms[x]; };
        auto lease = pool_.lease();
        HnswScratch& sc = *lease;
        HnswCand ep{score(q, qn2, entry_), entry_};
        ep = greedy(q, qn2, ep, ls);
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
            search_layer(q, qn2, ep, efc_, lc, sc, [](std::uint32_t) { return true; },
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
                for (std::uint32_t o : pool_ids)
                    if (o != s && o != u && list(o, lc) != nullptr) c.push_back({pair_score(u, o, rowof, nof), o});
                p.updates.push_back({u, lc, select(c, max_links(lc), rowof, nof, true)});
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
        AlignedVector<float> r(a_.rows, a_.rows + slots_ * stride_);
        std::vector<float> n(a_.norms, a_.norms + slots_);
        std::vector<std::uint32_t> l(a_.links0, a_.links0 + slots_ * link0_words());
        a_.rows_own = std::move(r);
        a_.norms_own = std::move(n);
        a_.links0_own = std::move(l);
        a_.file.reset();
        point_at_owned();
    }

    // --- persistence (the arrays, for index/hnsw.hpp) --------------------------------

    [[nodiscard]] const float* rows_data() const noexcept { return a_.rows; }
    [[nodiscard]] const float* norms_data() const noexcept { return a_.norms; }
    [[nodiscard]] const std::uint32_t* links0_data() const noexcept { return a_.links0; }
    [[nodiscard]] const std::vector<std::uint8_t>& levels() const noexcept { return levels_; }
    [[nodiscard]] const std::vector<std::uint32_t>& upper(std::uint32_t s) const noexcept { return upper_[s]; }

    /// Installs loaded arrays (validated by the caller, links0 at use when mapped).
    /// `file` keeps mapped views alive (null for owned arrays).
    void install(std::size_t slots, const float* rows, const float* norms, const std::uint32_t* links0,
                 std::vector<std::uint8_t> levels, std::vector<std::vector<std::uint32_t>> upper, std::uint32_t entry,
                 int top, std::shared_ptr<const FileBytes> file, std::string source) {
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
        if (file) {
            a_.file = std::move(file);
            a_.rows = rows;
            a_.norms = norms;
            a_.links0 = links0;
        } else {
            a_.rows_own.assign(rows, rows + slots * stride_);
            a_.norms_own.assign(norms, norms + slots);
            a_.links0_own.assign(links0, links0 + slots * link0_words());
            point_at_owned();
        }
    }

private:
    void reserve_slots(std::size_t n) {
        const auto grow = [](auto& v, std::size_t need) {
            if (v.capacity() < need) v.reserve(std::max(need, v.capacity() * 2));
        };
        own_storage();
        grow(a_.rows_own, n * stride_);
        grow(a_.norms_own, n);
        grow(a_.links0_own, n * link0_words());
        grow(levels_, n);
        grow(upper_, n);
        point_at_owned();
    }
    void point_at_owned() noexcept { a_.repoint(); }

    void write_list(std::uint32_t s, int lc, const std::vector<std::uint32_t>& ids) noexcept {
        std::uint32_t* rec = lc == 0 ? a_.links0_own.data() + std::size_t{s} * link0_words()
                                     : upper_[s].data() + static_cast<std::size_t>(lc - 1) * upper_words();
        rec[0] = static_cast<std::uint32_t>(ids.size());
        std::copy(ids.begin(), ids.end(), rec + 1);
    }

    template <class RowOf, class NormOf>
    [[nodiscard]] float pair_score(std::uint32_t a, std::uint32_t b, RowOf& rowof, NormOf& nof) const noexcept {
        const float d = dot_(rowof(a), rowof(b), stride_);
        return l2_ ? 2.0F * d - nof(a) - nof(b) : d;
    }

    /// The paper's heuristic (Algorithm 4): candidates best first; one is kept when it is
    /// closer to the base than to every one kept before it, up to m.
    template <class RowOf, class NormOf>
    [[nodiscard]] std::vector<std::uint32_t> select(std::vector<HnswCand> c, std::size_t m, RowOf& rowof,
                                                    NormOf& nof, bool fill = false) const {
        std::sort(c.begin(), c.end(), [](const HnswCand& a, const HnswCand& b) {
            return a.score > b.score || (a.score == b.score && a.slot < b.slot);
        });
        std::vector<std::uint32_t> out;
        out.reserve(m);
        for (const HnswCand& e : c) {
            if (out.size() >= m) break;
            bool keep = true;
            for (std::uint32_t r : out)
                if (pair_score(e.slot, r, rowof, nof) > e.score) {
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
    [[nodiscard]] HnswCand greedy(const float* q, float qn2, HnswCand cur, int to) const {
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
                    const float sc = score(q, qn2, nb);
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
    void search_layer(const float* q, float qn2, HnswCand ep, std::size_t ef, int lc, HnswScratch& sc, Accept&& accept,
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
                if (j + 1 < cnt && l[2 + j] < slots_) __builtin_prefetch(row(l[2 + j]));
                const int lv = levels_[nb];
                if (lv == kFree || lv < lc) continue;
                const float s = score(q, qn2, nb);
                if (W.size() < ef || s > W.front().score) {
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
        }
    }

    std::size_t dim_ = 0, stride_ = 16, m_ = 16, m0_ = 32, efc_ = 200;
    bool l2_ = false;
    double mult_ = 1.0;
    std::mt19937_64 rng_;
    float (*dot_)(const float*, const float*, std::size_t) noexcept = simd::kernels().dot_f32;

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
