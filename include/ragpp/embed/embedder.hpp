// ragpp: the Embedder concept, role prefixes, and SharedEmbedder (one expensive
// embedder shared by explicit ownership).
//
// An embedder maps a text to a dense float vector of a fixed dimension. The text is
// embedded with a Role: some models were trained with a different prefix on queries
// and on passages (E5: "query: " and "passage: "), and omitting the prefixes degrades
// their results silently. RolePrefixes makes that choice explicit and visible.
#pragma once

#include <concepts>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include <Eigen/Core>

#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>

namespace ragpp {

/// A row-major float32 matrix: one embedding per row.
using RowMatrixXf = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// The concept every embedder models.
/// - `dimension()`: the length of every vector it returns (fixed for its lifetime);
/// - `embed(text, role)`: the vector of one text (an Eigen::VectorXf of `dimension()`
///   floats; the role selects the prefix, see RolePrefixes);
/// - `embed_batch(texts, role)`: one row per text, the same values as `embed` row by
///   row (a model may compute them faster together);
/// - `name()`: identifies the model and its settings; saved with an index and checked
///   when the index is loaded, so vectors of two different models are never compared.
/// All three are const and safe to call from many threads at once.
template <class E>
concept Embedder = requires(const E& e, std::string_view text, Role role, std::span<const std::string> texts) {
    { e.dimension() } -> std::convertible_to<std::size_t>;
    { e.embed(text, role) } -> std::convertible_to<Eigen::VectorXf>;
    { e.embed_batch(texts, role) } -> std::convertible_to<RowMatrixXf>;
    { e.name() } -> std::convertible_to<std::string>;
};

/// The text prepended to a query and to a passage before embedding.
/// Empty by default. E5 models (intfloat/e5-*, multilingual-e5-*) need `e5()`:
/// "query: " and "passage: "; without them their retrieval quality drops silently.
struct RolePrefixes {
    std::string query;
    std::string passage;

    [[nodiscard]] static RolePrefixes none() { return {}; }
    [[nodiscard]] static RolePrefixes e5() { return {"query: ", "passage: "}; }

    [[nodiscard]] const std::string& of(Role role) const noexcept { return role == Role::query ? query : passage; }
    /// `text` with the prefix of `role` in front.
    [[nodiscard]] std::string apply(Role role, std::string_view text) const {
        std::string out = of(role);
        out.append(text);
        return out;
    }
    /// A suffix for name(): "" when there are no prefixes.
    [[nodiscard]] std::string describe() const {
        if (query.empty() && passage.empty()) return {};
        return ";prefixes='" + query + "','" + passage + "'";
    }
};

/// embed_batch from embed, row by row: for embedders that have nothing faster.
template <class E>
[[nodiscard]] RowMatrixXf embed_rows(const E& e, std::span<const std::string> texts, Role role) {
    RowMatrixXf out(static_cast<Eigen::Index>(texts.size()), static_cast<Eigen::Index>(e.dimension()));
    for (std::size_t i = 0; i < texts.size(); ++i) out.row(static_cast<Eigen::Index>(i)) = e.embed(texts[i], role).transpose();
    return out;
}

/// Shares one (possibly expensive) embedder between several indexes by explicit
/// shared ownership: the embedder lives as long as any SharedEmbedder refers to it.
/// It models Embedder itself by forwarding, so `VectorIndex<SharedEmbedder<M>>`.
template <Embedder E>
class SharedEmbedder {
public:
    /// Throws InvalidArgument on a null pointer.
    explicit SharedEmbedder(std::shared_ptr<const E> embedder) : ptr_(std::move(embedder)) {
        if (!ptr_) throw InvalidArgument("SharedEmbedder: null embedder");
    }
    [[nodiscard]] std::size_t dimension() const { return ptr_->dimension(); }
    [[nodiscard]] Eigen::VectorXf embed(std::string_view text, Role role) const { return ptr_->embed(text, role); }
    [[nodiscard]] RowMatrixXf embed_batch(std::span<const std::string> texts, Role role) const {
        return ptr_->embed_batch(texts, role);
    }
    [[nodiscard]] std::string name() const { return std::string(ptr_->name()); }
    [[nodiscard]] const E& get() const noexcept { return *ptr_; }
    [[nodiscard]] const std::shared_ptr<const E>& pointer() const noexcept { return ptr_; }
    [[nodiscard]] long use_count() const noexcept { return ptr_.use_count(); }

private:
    std::shared_ptr<const E> ptr_;
};

/// Builds E in place and wraps it: `auto m = make_shared_embedder<StaticEmbedder>(dir);`
template <Embedder E, class... Args>
[[nodiscard]] SharedEmbedder<E> make_shared_embedder(Args&&... args) {
    return SharedEmbedder<E>(std::make_shared<const E>(std::forward<Args>(args)...));
}

}  // namespace ragpp
