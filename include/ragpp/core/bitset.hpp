// ragpp: DocSet, a dynamic bitset over DocId. It is the one representation of
// "which documents may this query see": filters compile to it, and every index
// tests it inside its scoring loop (never after).
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace ragpp {

using DocId = std::uint32_t;

class DocSet {
public:
    DocSet() = default;
    /// An empty set over the universe [0, universe).
    explicit DocSet(std::size_t universe) : universe_(universe), words_((universe + 63) / 64, 0) {}
    DocSet(std::size_t universe, std::initializer_list<DocId> ids) : DocSet(universe) {
        for (DocId id : ids) set(id);
    }

    /// Every id of [0, universe).
    static DocSet all(std::size_t universe) {
        DocSet s(universe);
        std::fill(s.words_.begin(), s.words_.end(), ~std::uint64_t{0});
        s.trim();
        return s;
    }

    [[nodiscard]] std::size_t universe() const noexcept { return universe_; }

    /// Grows the universe (new ids are absent); never shrinks.
    void resize(std::size_t universe) {
        if (universe <= universe_) return;
        universe_ = universe;
        words_.resize((universe + 63) / 64, 0);
    }

    /// Adds id, growing the universe when id is beyond it.
    void set(DocId id) {
        if (id >= universe_) resize(std::size_t{id} + 1);
        words_[id >> 6] |= std::uint64_t{1} << (id & 63);
    }
    void reset(DocId id) noexcept {
        if (id < universe_) words_[id >> 6] &= ~(std::uint64_t{1} << (id & 63));
    }
    /// False for any id beyond the universe.
    [[nodiscard]] bool test(DocId id) const noexcept {
        return id < universe_ && ((words_[id >> 6] >> (id & 63)) & 1U) != 0;
    }
    [[nodiscard]] bool contains(DocId id) const noexcept { return test(id); }

    [[nodiscard]] std::size_t count() const noexcept {
        std::size_t n = 0;
        for (auto w : words_) n += static_cast<std::size_t>(std::popcount(w));
        return n;
    }
    [[nodiscard]] bool empty() const noexcept { return count() == 0; }

    DocSet& operator|=(const DocSet& o) {
        resize(o.universe_);
        for (std::size_t i = 0; i < o.words_.size(); ++i) words_[i] |= o.words_[i];
        return *this;
    }
    DocSet& operator&=(const DocSet& o) {
        for (std::size_t i = 0; i < words_.size(); ++i) words_[i] &= i < o.words_.size() ? o.words_[i] : 0;
        return *this;
    }
    /// Set difference.
    DocSet& operator-=(const DocSet& o) {
        for (std::size_t i = 0; i < std::min(words_.size(), o.words_.size()); ++i) words_[i] &= ~o.words_[i];
        return *this;
    }
    /// Complement within the universe.
    [[nodiscard]] DocSet complement() const {
        DocSet s(*this);
        for (auto& w : s.words_) w = ~w;
        s.trim();
        return s;
    }
    friend DocSet operator|(DocSet a, const DocSet& b) { return a |= b; }
    friend DocSet operator&(DocSet a, const DocSet& b) { return a &= b; }
    friend DocSet operator-(DocSet a, const DocSet& b) { return a -= b; }
    /// Equal members (the universes may differ).
    friend bool operator==(const DocSet& a, const DocSet& b) noexcept {
        const std::size_t n = std::max(a.words_.size(), b.words_.size());
        for (std::size_t i = 0; i < n; ++i) {
            const std::uint64_t x = i < a.words_.size() ? a.words_[i] : 0;
            const std::uint64_t y = i < b.words_.size() ? b.words_[i] : 0;
            if (x != y) return false;
        }
        return true;
    }

    /// Calls f(DocId) for each member, in increasing order.
    template <class F>
    void for_each(F&& f) const {
        for (std::size_t i = 0; i < words_.size(); ++i) {
            std::uint64_t w = words_[i];
            while (w != 0) {
                const int bit = std::countr_zero(w);
                f(static_cast<DocId>(i * 64 + static_cast<std::size_t>(bit)));
                w &= w - 1;
            }
        }
    }
    [[nodiscard]] std::vector<DocId> ids() const {
        std::vector<DocId> out;
        out.reserve(count());
        for_each([&](DocId id) { out.push_back(id); });
        return out;
    }
    /// The raw 64-bit words (bit i of word w is id 64*w + i), for fast kernels.
    [[nodiscard]] const std::vector<std::uint64_t>& words() const noexcept { return words_; }

private:
    void trim() noexcept {
        if (universe_ % 64 != 0 && !words_.empty()) words_.back() &= (std::uint64_t{1} << (universe_ % 64)) - 1;
    }
    std::size_t universe_ = 0;
    std::vector<std::uint64_t> words_;
};

}  // namespace ragpp
