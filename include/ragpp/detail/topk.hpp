// ragpp detail: TopK, the bounded selection of the k best hits (higher score first,
// ties by smaller DocId). A heap of at most k hits whose top is the worst kept one;
// a candidate costs one comparison unless it beats that worst hit.
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

#include <ragpp/core/types.hpp>

namespace ragpp::detail {

class TopK {
public:
    explicit TopK(std::size_t k) : k_(k) { heap_.reserve(k); }

    [[nodiscard]] std::size_t capacity() const noexcept { return k_; }

    /// A score below this cannot enter (-infinity until k hits are kept): lets a
    /// scan skip most candidates with one comparison.
    [[nodiscard]] float threshold() const noexcept {
        return heap_.size() < k_ || k_ == 0 ? -std::numeric_limits<float>::infinity() : heap_.front().score;
    }

    /// Offers one hit; kept when it is among the k best seen so far.
    void push(DocId id, float score) {
        if (heap_.size() < k_) {
            heap_.push_back(Hit{id, score});
            std::push_heap(heap_.begin(), heap_.end(), better_hit);
            return;
        }
        if (k_ == 0) return;
        const Hit& worst = heap_.front();
        if (score > worst.score || (score == worst.score && id < worst.id)) {
            std::pop_heap(heap_.begin(), heap_.end(), better_hit);
            heap_.back() = Hit{id, score};
            std::push_heap(heap_.begin(), heap_.end(), better_hit);
        }
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
