// ragpp: the Engine's insides that C++ code may reach: AnyAnalyzer and AnyEmbedder (an
// analyzer and an embedder chosen by name at run time), and EngineDocuments, the
// Collection<Retriever<BM25Index<AnyAnalyzer>, VectorIndex<AnyEmbedder>>> an Engine holds
// (Engine::documents()). engine/engine.hpp declares the Engine without these, so that a
// program linking ragpp::compiled parses the Engine's interface only (about half the
// lines); include this header to call documents(), or to build the pieces yourself.
// A header-only build includes it through engine/engine.hpp.
#pragma once
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include <ragpp/answer/abstain.hpp>
#include <ragpp/answer/answer.hpp>
#include <ragpp/answer/evidence.hpp>
#include <ragpp/chunk/chunker.hpp>
#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>
#include <ragpp/detail/binary_file.hpp>
#include <ragpp/detail/file.hpp>
#include <ragpp/detail/file_io.hpp>
#include <ragpp/detail/mapped_file.hpp>
#include <ragpp/embed/dispatch.hpp>
#include <ragpp/engine/config.hpp>
#include <ragpp/embed/embedder.hpp>
#include <ragpp/embed/hashing.hpp>
#include <ragpp/detail/compiled.hpp>
#include <ragpp/engine/detail/engine.hpp>
#include <ragpp/eval/evaluate.hpp>
#include <ragpp/eval/question.hpp>
#include <ragpp/filter/access.hpp>
#include <ragpp/filter/filter.hpp>
#include <ragpp/index/bm25.hpp>
#include <ragpp/index/store.hpp>
#include <ragpp/index/vector.hpp>
#include <ragpp/io/beir.hpp>
#include <ragpp/io/contexts.hpp>
#include <ragpp/io/detail/contexts.hpp>
#include <ragpp/io/detail/subprocess.hpp>
#include <ragpp/io/corpus.hpp>
#include <ragpp/io/generations.hpp>
#include <ragpp/io/metadata_json.hpp>
#include <ragpp/io/sources.hpp>
#include <ragpp/rerank/cross_encoder.hpp>
#include <ragpp/rerank/proximity.hpp>
#include <ragpp/rerank/reranker.hpp>
#include <ragpp/rerank/soft_match.hpp>
#include <ragpp/retrieve/collection.hpp>
#include <ragpp/retrieve/diversify.hpp>
#include <ragpp/retrieve/retriever.hpp>
#include <ragpp/text/analyzer.hpp>
#include <ragpp/text/utf8.hpp>
namespace ragpp {

/// An analyzer chosen by name (text/analyzer.hpp's with_analyzer), type-erased; a
/// DocumentAnalyzer, passing analyze_document, analyze_field and analyze_query on.
class AnyAnalyzer {
public:
    using Known = std::function<bool(std::string_view)>;
    explicit AnyAnalyzer(std::string name);
    void analyze(std::string_view text, std::vector<std::string>& out) const { timed([&] { fns_.text(text, out); }); }
    void analyze_document(const Document& doc, std::vector<std::string>& out) const {
        timed([&] { fns_.document(doc, out); });
    }
    void analyze_field(const Document& doc, std::string_view text, std::vector<std::string>& out) const {
        timed([&] { fns_.field(doc, text, out); });
    }
    void analyze_query(std::string_view query, std::vector<std::string>& out, const Known& known) const {
        timed([&] { fns_.query(query, out, known); });
    }
    [[nodiscard]] std::string_view name() const noexcept { return name_; }

private:
    struct Fns {
        std::function<void(std::string_view, std::vector<std::string>&)> text;
        std::function<void(const Document&, std::vector<std::string>&)> document;
        std::function<void(const Document&, std::string_view, std::vector<std::string>&)> field;
        std::function<void(std::string_view, std::vector<std::string>&, const Known&)> query;
    };
    template <class F>
    static void timed(F&& f) {
        const auto t0 = detail::engine::Clock::now();
        f();
        detail::engine::analysis_seconds += std::chrono::duration<double>(detail::engine::Clock::now() - t0).count();
    }
    std::string name_;
    Fns fns_;
};
static_assert(DocumentAnalyzer<AnyAnalyzer>);

/// An embedder chosen by spec at run time, type-erased and shared (copies share the model).
class AnyEmbedder {
public:
    template <Embedder E>
    explicit AnyEmbedder(E embedder, std::string spec)
        : impl_(std::make_shared<const Model<E>>(std::move(embedder))), spec_(std::move(spec)) {}

    [[nodiscard]] std::size_t dimension() const { return impl_->dimension(); }
    [[nodiscard]] Eigen::VectorXf embed(std::string_view text, Role role) const {
        const auto t0 = detail::engine::Clock::now();
        Eigen::VectorXf v = impl_->embed(text, role);
        detail::engine::embedding_seconds += std::chrono::duration<double>(detail::engine::Clock::now() - t0).count();
        return v;
    }
    [[nodiscard]] RowMatrixXf embed_batch(std::span<const std::string> texts, Role role) const {
        const auto t0 = detail::engine::Clock::now();
        RowMatrixXf m = impl_->embed_batch(texts, role);
        detail::engine::embedding_seconds += std::chrono::duration<double>(detail::engine::Clock::now() - t0).count();
        return m;
    }
    [[nodiscard]] std::string name() const { return impl_->name(); }
    [[nodiscard]] const std::string& spec() const noexcept { return spec_; }

private:
    struct Concept {
        virtual ~Concept() = default;
        virtual std::size_t dimension() const = 0;
        virtual Eigen::VectorXf embed(std::string_view, Role) const = 0;
        virtual RowMatrixXf embed_batch(std::span<const std::string>, Role) const = 0;
        virtual std::string name() const = 0;
    };
    template <class E>
    struct Model final : Concept {
        explicit Model(E e) : embedder(std::move(e)) {}
        std::size_t dimension() const override { return embedder.dimension(); }
        Eigen::VectorXf embed(std::string_view t, Role r) const override { return embedder.embed(t, r); }
        RowMatrixXf embed_batch(std::span<const std::string> t, Role r) const override { return embedder.embed_batch(t, r); }
        std::string name() const override { return std::string(embedder.name()); }
        E embedder;
    };
    std::shared_ptr<const Concept> impl_;
    std::string spec_;
};
static_assert(Embedder<AnyEmbedder>);

/// The embedder `c.embedder` names, with its prefixes, threads and quantization.
/// Throws InvalidArgument for a malformed hashing:DIM, and whatever the embedder throws.
[[nodiscard]] AnyEmbedder make_any_embedder(const EngineConfig& c);

/// The cross-encoder `spec` (cross-encoder:DIR) names, with the threads and quantization of `c`.
[[nodiscard]] std::shared_ptr<const CrossEncoderReranker> make_cross_encoder(const EngineConfig& c,
                                                                            std::string_view spec);

/// The pieces of an Engine's collection (bench_open builds one from an index folder's parts).
using EngineBm25 = BM25Index<AnyAnalyzer>;
using EngineVectors = VectorIndex<AnyEmbedder>;
using EngineHybrid = Retriever<EngineBm25, EngineVectors>;

/// The collection an Engine holds: Collection<EngineHybrid> under a name that
/// engine/engine.hpp can declare without these headers. It adds nothing to its base.
class EngineDocuments final : public Collection<EngineHybrid> {
public:
    using Base = Collection<EngineHybrid>;
    using Base::Base;
    EngineDocuments(Base base) : Base(std::move(base)) {}  // NOLINT: Base's factories (load...) return a Base
};

}  // namespace ragpp

// The Engine itself, whose Documents this header defines (after it: header-only, the
// Engine's definitions, included by engine.hpp, need EngineDocuments complete).
#include <ragpp/engine/engine.hpp>
