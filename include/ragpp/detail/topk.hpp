// ragpp detail: TopK, the bounded selection of the k best hits (higher score first,
// ties by smaller DocId), shared by every index (BM25's top-k algorithms, the vector
// scans). A heap of at most k hits whose top is the worst kept one; a candidate costs
// one comparison unless it beats that worst hit.
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

#include <ragpp/core/types.hpp>

namespace ragpp::detail {

class TopK {
public:
    /// Keeps the k best of at most `candidates` pushes. Only min(k, candidates) slots
    /// are reserved, so any k (SIZE_MAX included) costs no more than the candidates.
    TopK(std::size_t k, std::size_t candidates) : k_(k) { heap_.reserve(std::min(k, candidates)); }

    [[nodiscard]] std::size_t capacity() const noexcept { return k_; }
    /// Whether k hits are kept (a new one must then beat the worst of them).
    [[nodiscard]] bool full() const noexcept { return heap_.size() >= k_; }

    /// A score below this cannot enter (-infinity until k hits are kept): lets a
    /// scan skip most candidates with one comparison. Once full(), the score of the
    /// worst kept hit (one scoring exactly this enters only with a smaller id).
    [[nodiscard]] float threshold() const noexcept {
        return heap_.size() < k_ || k_ == 0 ? -std::numeric_limits<float>::infinity() : heap_.front().score;
    }

    /// Offers one hit; kept (true) when it is among the k best seen so far.
    bool push(DocId id, float score) {
        if (k_ == 0) return false;
        if (heap_.size() < k_) {
            heap_.push_back(Hit{id, score});
            std::push_heap(heap_.begin(), heap_.end(), better_hit);
            return true;
        }
        const Hit& worst = heap_.front();
        if (!(score > worst.score || (score == worst.score && id < worst.id))) return false;
        std::pop_heap(heap_.begin(), heap_.end(), better_hit);
        heap_.back() = Hit{id, score};
        std::push_heap(heap_.begin(), heap_.end(), better_hit);
        return true;
    }

    /// The kept hits, best first; the TopK is left empty.
    [[nodiscard]] std::vector<Hit> take_sorted() {
        std::sort_heap(heap_.begin(), heap_.end(), better_hit);
        return std::move(heap_);
    }

private:
    std::size_t k_;
    std::vector<Hit> heap_;
};

}  // namespace ragpp::detail
