// ragpp: Engine, a persistent, incremental, access-checked search engine over a corpus
// folder: the engine of the `ragpp` tool, usable from C++ (the tool is its thin client).
//
//   EngineConfig c;                                   // analyzer, embedder, BM25, chunking, fusion
//   auto e = Engine::build("notes", c);               // scan, chunk, index
//   e.save("idx");                                    // a new generation of the folder idx
//   auto e2 = Engine::open("idx");                    // the current generation, checked
//   auto counts = e2.sync("notes");                   // re-reads only what changed
//   EngineQuery q;  q.k = 5;  q.principal = Principal::with_groups({"admins"});
//   auto r = e2.search("how long to reset?", q);      // r.results[i].stale, r.stale_sources
//
// Pieces (each from the layer below):
//  - Collection<Retriever<BM25Index<AnyAnalyzer>, VectorIndex<AnyEmbedder>>>: sources,
//    chunk places and access (AccessPolicy(EngineConfig::unlabeled): a chunk without
//    "groups" is public by default, or private (Principal::system() only); a chunk with
//    groups is visible only to a Principal sharing one; a note whose front matter has a
//    slip in its declarations is locked, visible to Principal::system() only, and listed
//    by locked_sources(); Principal::system() sees everything). The analyzer and the embedder are chosen by
//    name at run time (AnyAnalyzer, AnyEmbedder: type erasure at the edge).
//  - A corpus is a folder of .md/.markdown/.rst/.txt files (io/corpus.hpp: each file one
//    source, chunked by its format; the source id is its path relative to the folder;
//    hidden, ignored, binary and not-UTF-8 files left out, listed by skipped()),
//    or a single-file corpus: a .jsonl file ({"_id"|"id", "title"?, "text", "metadata"?}
//    per line) or a BEIR folder (corpus.jsonl). A single-file corpus is ONE source (the
//    file) whose chunks are its documents, unchunked.
//  - save(dir) writes a generation (io/generations.hpp): parts documents.bin (the
//    DocumentStore's binary file: every chunk with its id, text and metadata, decoded on
//    demand), sources.bin (the SourceManifest: path, size, mtime, content hash of each
//    source), places.bin (each source's chunk DocIds in order, and per DocId its source,
//    position and section: Collection::save_parts), metadata.bin (the MetadataIndex's
//    postings), bm25.idx and vector.idx, every part checksummed by the generation's
//    manifest; its info (version 4) holds the settings the index was built with, the
//    corpus root and the counts (chunks, sources, next DocId).
//    open(dir) maps the parts and uses them in place: nothing is read or checked per
//    chunk (places and metadata index frozen until the first write, which builds them in
//    memory from the same parts); it checks every part's header, sizes and structure,
//    then that they agree: the counts of the info, documents.bin, places.bin,
//    metadata.bin, both indexes and the manifest, and the manifest's sources against
//    places.bin's; FormatError naming the folder and the part otherwise. check(dir)
//    (`ragpp check`) also verifies every checksum, every place and posting, each chunk's
//    DocId in every part, and that every chunk decodes. An index of version 2
//    (documents.jsonl) or 3 (source manifest with every chunk key in the info, places
//    rebuilt by reading every chunk at open) is refused as written by an older ragpp.
//  - sync(corpus) scans the corpus, diffs it against the manifest (io/sources.hpp) and
//    removes deleted sources, re-chunks and re-indexes changed ones, adds new ones;
//    unchanged sources keep their chunks and DocIds. For a single-file corpus it
//    re-reads the whole file when it changed. After a sync, searches equal a fresh
//    build's (same chunks, same scores; DocIds differ, so chunks of equal score may come
//    in another order).
//  - Freshness (EngineQuery::check_sources, on by default): search() checks the source of
//    each result against the manifest (stat; content hash only when size or mtime
//    differ). A deleted source's chunks are never returned: they are excluded and the
//    search runs again, so the next results fill k. A changed source's chunks are
//    returned with Result::stale set (and listed in EngineResults::stale_sources); the
//    evidence block then tells the model the quoted text may be outdated.
//
// Errors: InvalidArgument (a bad setting or reranker name), NotFoundError (no corpus, no
// index), FormatError (an index folder that fails a check), ParseError and IoError from
// the corpus. A failed build, open or sync leaves nothing half done: sync updates a copy
// of the engine in memory that replaces it only when every step succeeded, and the
// folder changes only through save()'s atomic commit.
//
// Threading: const members (search, evaluate) may run concurrently; sync needs exclusive
// access.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
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
#include <ragpp/detail/file_io.hpp>
#include <ragpp/detail/mapped_file.hpp>
#include <ragpp/embed/dispatch.hpp>
#include <ragpp/engine/config.hpp>
#include <ragpp/embed/embedder.hpp>
#include <ragpp/embed/hashing.hpp>
#include <ragpp/engine/detail/engine.hpp>
#include <ragpp/eval/evaluate.hpp>
#include <ragpp/eval/question.hpp>
#include <ragpp/filter/access.hpp>
#include <ragpp/filter/filter.hpp>
#include <ragpp/index/bm25.hpp>
#include <ragpp/index/store.hpp>
#include <ragpp/index/vector.hpp>
#include <ragpp/io/beir.hpp>
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
    explicit AnyAnalyzer(std::string name) : name_(std::move(name)) {
        fns_ = with_analyzer(name_, [](auto a) -> Fns {
            return {[a](std::string_view text, std::vector<std::string>& out) { a.analyze(text, out); },
                    [a](const Document& doc, std::vector<std::string>& out) { ragpp::analyze_document(a, doc, out); },
                    [a](const Document& doc, std::string_view text, std::vector<std::string>& out) {
                        ragpp::analyze_field(a, doc, text, out);
                    },
                    [a](std::string_view query, std::vector<std::string>& out, const Known& known) {
                        ragpp::analyze_query(a, query, out, known);
                    }};
        });
    }
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
[[nodiscard]] inline AnyEmbedder make_any_embedder(const EngineConfig& c) {
    const RolePrefixes prefixes{c.query_prefix, c.passage_prefix};
    if (c.embedder.starts_with("hashing:")) {  // hashing with another dimension
        const std::string dim = c.embedder.substr(8);
        if (dim.empty() || dim.find_first_not_of("0123456789") != std::string::npos || dim.size() > 6 || std::stoul(dim) == 0)
            throw InvalidArgument("embedder hashing:DIM needs a positive dimension, got '" + dim + "'");
        HashingOptions o;
        o.dimension = std::stoul(dim);
        o.prefixes = prefixes;
        return AnyEmbedder(HashingEmbedder(o), c.embedder);
    }
    EmbedderSettings s;
    if (!prefixes.query.empty() || !prefixes.passage.empty()) s.prefixes = prefixes;
    s.threads = c.threads;
    s.int8 = c.quantize == "int8";
    return with_embedder(c.embedder, s, [&](auto embedder) { return AnyEmbedder(std::move(embedder), c.embedder); });
}

/// The cross-encoder `spec` (cross-encoder:DIR) names, with the threads and quantization of `c`.
[[nodiscard]] inline std::shared_ptr<const CrossEncoderReranker> make_cross_encoder(const EngineConfig& c,
                                                                                   std::string_view spec) {
    check_reranker_name(spec);
    if (!spec.starts_with("cross-encoder:")) throw InvalidArgument("'" + std::string(spec) + "' is not cross-encoder:DIR");
    CrossEncoderOptions o;
    o.threads = c.threads;
    o.quantize = c.quantize == "int8" ? TransformerQuantization::int8 : TransformerQuantization::none;
    return std::make_shared<const CrossEncoderReranker>(std::string(spec.substr(14)), o);
}

class Engine {
public:
    using Bm25 = BM25Index<AnyAnalyzer>;
    using Vectors = VectorIndex<AnyEmbedder>;
    using Hybrid = Retriever<Bm25, Vectors>;
    using Documents = Collection<Hybrid>;

    /// Builds an engine over `corpus` (see the header comment for what a corpus is).
    /// Throws NotFoundError when it is not a corpus or holds no file.
    [[nodiscard]] static Engine build(const std::filesystem::path& corpus, EngineConfig config,
                                      const CorpusOptions& corpus_options = {}, const EngineProgress& progress = {}) {
        Engine e(std::move(config));
        e.impl_->scan_options = corpus_options;
        e.impl_->load(corpus, progress, nullptr);
        return e;
    }

    /// How open() reads an index folder by default: parts mapped, sizes and structure
    /// checked, not every byte's checksum (check() does that).
    static constexpr OpenOptions default_open = OpenOptions{.mmap = true, .verify = false};

    /// Opens the current generation of the index folder `dir` (written by save()).
    /// `threads`: threads of a transformer embedder and of cross-encoders (0: every core).
    /// `options`: by default the parts are mapped (memory follows what queries touch) and
    /// checked for size, structure and agreement of their counts, but their checksums are
    /// not computed (that reads every byte) and no chunk is read: opening costs O(sources
    /// + fields), not O(chunks) (BM25's and the vectors' own loads aside).
    /// OpenOptions{.verify = true}, or check(), checks those too, every place and posting,
    /// and each chunk's DocId in every part. A part changed in place while mapped is
    /// undefined behaviour; ragpp never does that (docs/persistence.md).
    [[nodiscard]] static Engine open(const std::filesystem::path& dir, std::size_t threads = 0,
                                     OpenOptions options = default_open) {
        // Two commits by other processes between open_generation() and the opening of the
        // parts remove the generation found: then open the new current one.
        for (int attempt = 0;; ++attempt) {
            const OpenedGeneration g = open_generation(dir, options.verify);
            try {
                return open_parts(dir, g, threads, options);
            } catch (const FormatError&) {
                std::error_code ec;
                if (attempt >= 8 || std::filesystem::exists(g.dir, ec)) throw;
            }
        }
    }

    /// Checks every byte of the current generation of `dir`: each part's checksum (in the
    /// generation's manifest), the structure and agreement of
    /// the parts, the source manifest against the stored chunks, and that every stored
    /// chunk decodes. Returns the engine so opened; throws what open() throws, a
    /// FormatError naming the folder and the damaged part. `ragpp check DIR`.
    [[nodiscard]] static Engine check(const std::filesystem::path& dir, std::size_t threads = 0) {
        auto e = open(dir, threads, OpenOptions{.mmap = true, .verify = true});
        const std::string where = "index folder '" + dir.string() + "': documents.bin: ";
        const auto& store = e.documents().retriever().store();
        for (DocId id = 0; id < store.capacity(); ++id) {
            try {
                (void)store.get(id);
            } catch (const FormatError& x) {
                throw FormatError(where + x.what());
            }
        }
        return e;
    }

    /// Writes the engine as a new generation of the index folder `dir` (created if needed)
    /// and makes it current atomically; returns the generation number.
    std::uint64_t save(const std::filesystem::path& dir) const {
        const auto& im = *impl_;
        const auto& r = im.docs->retriever();
        GenerationWriter w(dir);
        r.store().save(w.path("documents.bin"));
        write_sources(w.path("sources.bin"), im.manifest);
        im.docs->save_parts(w.path("places.bin"), w.path("metadata.bin"));
        r.index<0>().save(w.path("bm25.idx"));
        r.index<1>().save(w.path("vector.idx"));
        const nlohmann::json info{{"format", "ragpp-index"},
                                  {"version", 4},
                                  {"settings", config_to_json(im.config)},
                                  {"corpus", {{"root", im.root.string()}, {"kind", im.kind}}},
                                  {"counts",
                                   {{"chunks", r.size()}, {"sources", im.docs->source_count()}, {"next_docid", r.store().capacity()}}}};
        return w.commit(info);
    }

    /// Brings the engine up to date with `corpus` (see the header comment). The corpus
    /// must be of the kind the engine was built from. All or nothing: the update is made
    /// on a copy of the engine in memory, which replaces it only once every step
    /// succeeded; on any exception (a source unreadable, an embedder or `progress`
    /// throwing) the engine is as before the call, DocIds included. The copy costs a pass
    /// over the in-memory state (the mapped parts of an opened engine are shared, not
    /// copied, until the update writes them) and, during the sync, that state twice.
    SyncCounts sync(const std::filesystem::path& corpus, const CorpusOptions& corpus_options = {},
                    const EngineProgress& progress = {}) {
        // First the diff, on this engine (read only): when no source was added, changed or
        // removed, nothing is copied (the copy costs about 1 s a million chunks); only the
        // records of touched files (same content, new mtime) and the scan notes change.
        Impl::Plan plan = impl_->plan(corpus, corpus_options);
        if (plan.nothing_to_index()) {
            auto manifest = impl_->manifest;  // refreshed on a copy: all or nothing
            for (const auto& f : plan.diff.touched) manifest.refresh(f);
            impl_->manifest = std::move(manifest);
            if (plan.kind == "folder") {
                impl_->notes = std::move(plan.scan.notes);
                impl_->skipped = std::move(plan.scan.skipped);
            }
            impl_->root = plan.root;
            impl_->scan_options = corpus_options;
            SyncCounts counts;
            counts.unchanged = plan.kind == "folder" ? plan.diff.unchanged.size() : 1;
            counts.chunks = impl_->docs->retriever().size();
            counts.sources = impl_->docs->source_count();
            return counts;
        }
        auto next = impl_->clone();
        next->scan_options = corpus_options;
        SyncCounts counts;
        next->load(corpus, progress, &counts, &plan);
        impl_ = std::move(next);
        return counts;
    }

    /// What `q.filter` and `q.filters` accept: their conjunction, each text parsed on its
    /// own (parse_filters); Filter::all() when there is none.
    [[nodiscard]] static Filter query_filter(const EngineQuery& q) {
        if (q.filter.empty()) return parse_filters(q.filters);
        Filter f = parse_filter(q.filter);
        return q.filters.empty() ? f : std::move(f) && parse_filters(q.filters);
    }

    /// The k best chunks for `query` that `q.principal` may read and `q.filter` and `q.filters` accept,
    /// through mode, per-source cap and reranker; sources checked when q.check_sources.
    [[nodiscard]] EngineResults search(std::string_view query, const EngineQuery& q) const {
        const auto& im = *impl_;
        check_reranker_name(q.reranker);
        // A query without any term (empty, or only punctuation or stop words) would give
        // BM25 nothing and vector search the neighbours of an empty text: refuse it.
        std::vector<std::string> terms;
        const auto& bm25 = im.docs->retriever().index<0>();
        const auto statistics = im.reader_statistics(q.principal);  // what the words mean: the reader's vocabulary
        ragpp::analyze_query(bm25.analyzer(), query, terms, [&](std::string_view t) {
            return (statistics ? bm25.document_frequency(t, *statistics) : bm25.document_frequency(t)) > 0;
        });
        if (terms.empty() && (q.mode != SearchMode::vector || query.find_first_not_of(" \t\r\n") == std::string::npos))
            throw InvalidArgument("the query \"" + std::string(query) +
                                  "\" has no searchable term (it is empty, or only punctuation or stop words)");
        auto allowed = std::make_shared<DocSet>(im.docs->allowed(query_filter(q), q.principal));
        // A corpus folder that moved or was deleted makes every source look deleted:
        // say so instead of answering nothing.
        if (q.check_sources) {
            std::error_code ec;
            if (!std::filesystem::is_directory(im.root, ec))
                throw NotFoundError("corpus root '" + im.root.string() +
                                    "' not found: every source looks deleted; re-index (ragpp index) or pass "
                                    "--check-sources off (EngineQuery::check_sources = false)");
        }
        EngineResults out;
        std::map<std::string, Freshness> checked;
        for (;;) {
            auto o = im.options(q.mode);
            o.allowed = allowed;
            o.statistics = statistics;
            auto results = im.run(query, q.k, o, q.reranker);
            if (!q.check_sources) {
                out.results = std::move(results);
                return out;
            }
            bool excluded = false;
            for (const auto& res : results) {
                const std::string* source = im.docs->source_of(res.id);
                if (!source) continue;
                auto [it, fresh] = checked.emplace(*source, Freshness::fresh);
                if (fresh)
                    if (const SourceRecord* rec = im.manifest.find(*source)) it->second = check_source(im.root, *rec);
                if (it->second == Freshness::deleted && fresh) {
                    for (DocId id : im.docs->sources().find(*source)->second) allowed->reset(id);
                    excluded = true;
                }
            }
            if (excluded) continue;  // the next results fill k
            for (auto& res : results)
                if (const std::string* source = im.docs->source_of(res.id)) res.stale = checked[*source] == Freshness::changed;
            out.results = std::move(results);
            break;
        }
        for (const auto& [source, f] : checked) {
            if (f == Freshness::deleted) out.deleted_sources.push_back(source);
            if (f == Freshness::changed) out.stale_sources.push_back(source);
        }
        return out;
    }

    /// The answer stage on this engine (answer/answer.hpp): search(question, q) ranks
    /// q.k passages (the mode, filter, principal, reranker and source checks of q), then
    /// `options` decides: the passages after the floor, the confidence (query coverage
    /// with the statistics of what q.principal may read, and a cross-encoder's calibrated score when
    /// q.reranker is one), then the evidence block or the reasons to refuse. What
    /// `ragpp ask` prints. options.passages is replaced by q.k.
    [[nodiscard]] EngineAnswer answer(std::string_view question, const EngineQuery& q,
                                      AnswerOptions options = {}) const {
        options.passages = q.k;
        options.validate();
        auto found = search(question, q);
        EngineAnswer out;
        static_cast<Answer&>(out) =
            ragpp::answer(question, std::move(found.results), impl_->docs->retriever().index<0>().analyzer(),
                          term_statistics(q.principal), options, q.reranker.starts_with("cross-encoder:"), neighbours());
        out.stale_sources = std::move(found.stale_sources);
        out.deleted_sources = std::move(found.deleted_sources);
        return out;
    }

    /// Every question through one pipeline, as options.principal sees the collection:
    /// the ranking of search and answer (options.depth entries), with stages analysis,
    /// bm25, embedding, vector, fusion (and rerank); each question's outcome carries the
    /// confidence Engine::answer computes for it (the same passages, floor and
    /// function: the threshold eval suggests is ask's). Sources are not checked (an
    /// evaluation measures the index as built).
    [[nodiscard]] PipelineReport evaluate(const QuestionSet& questions, const EvaluationOptions& options) const {
        const auto& im = *impl_;
        check_reranker_name(options.reranker);
        options.answer.validate();
        auto o = im.options(options.mode);
        if (options.mode == SearchMode::hybrid && !options.weights.empty()) o.weights = options.weights;
        o.allowed = std::make_shared<const DocSet>(im.docs->allowed(Filter::all(), options.principal));
        o.statistics = im.reader_statistics(options.principal);
        const std::size_t depth = std::max(options.depth ? options.depth : im.config.candidates, options.answer.passages);
        const auto stats = im.term_statistics(options.principal);
        const auto& analyzer = im.docs->retriever().index<0>().analyzer();
        const bool cross = options.reranker.starts_with("cross-encoder:");
        std::vector<double> confidences;
        confidences.reserve(questions.size());
        auto report = ragpp::evaluate(
            options.name.empty() ? search_mode_name(options.mode) : options.name, questions,
            [&](std::string_view q, StageTimes& times) {
                detail::engine::analysis_seconds = 0;
                detail::engine::embedding_seconds = 0;
                SearchTimings t;
                StageTimes rerank;
                auto results = im.run(q, depth, o, options.reranker, &t, &rerank);
                if (options.mode != SearchMode::vector) {
                    times.emplace_back("analysis", detail::engine::analysis_seconds);
                    times.emplace_back("bm25", t.index_seconds[0] - detail::engine::analysis_seconds);
                }
                if (options.mode != SearchMode::bm25) {
                    times.emplace_back("embedding", detail::engine::embedding_seconds);
                    times.emplace_back("vector", t.index_seconds[1] - detail::engine::embedding_seconds);
                }
                times.emplace_back("fusion", t.fusion_seconds);
                for (auto& st : rerank) times.push_back(std::move(st));
                const auto passages = answer_passages(
                    std::vector<Result>(results.begin(),
                                        results.begin() + static_cast<std::ptrdiff_t>(
                                                              std::min(results.size(), options.answer.passages))),
                    options.answer.passages, options.answer.relative_floor);
                confidences.push_back(
                    confidence(answer_signals(analyzer, q, passages, stats, options.answer.coverage, cross).first,
                               options.answer.confidence));
                std::vector<Retrieved> out;
                out.reserve(results.size());
                for (const auto& r : results) out.push_back({r.document->id, r.score});
                return out;
            },
            [&](std::size_t, std::size_t) {
                if (options.tick) options.tick();
            });
        report.set_confidences(confidences);
        return report;
    }

    /// The ids of the chunks `reader` may read, in DocId order.
    [[nodiscard]] std::vector<std::string> readable_chunk_ids(const Principal& reader) const {
        const auto allowed = impl_->docs->allowed(Filter::all(), reader);
        const auto& r = impl_->docs->retriever();
        std::vector<std::string> out;
        for (DocId id = 0; id < r.store().capacity(); ++id)
            if (allowed.test(id))
                if (auto d = r.document(id)) out.push_back(d->id);
        return out;
    }

    /// Why `filter` (parse_filter's syntax) may match nothing for `reader`, or "" when it
    /// matches some chunk the reader may read: the fields it names that no chunk has, and
    /// the fields chunks have.
    [[nodiscard]] std::string filter_hint(const std::string& filter, const Principal& reader) const {
        if (filter.empty()) return {};
        return filter_hint(std::vector<std::string>{filter}, reader);
    }
    /// filter_hint for the conjunction of `filters` (EngineQuery::filters), each quoted as written.
    [[nodiscard]] std::string filter_hint(const std::vector<std::string>& filters, const Principal& reader) const {
        if (filters.empty()) return {};
        const Filter f = parse_filters(filters);
        if (impl_->docs->allowed(f, reader).count() > 0) return {};
        const auto fields = impl_->docs->metadata().field_names();
        std::vector<std::string> unknown;
        std::set<std::string_view> seen;  // a set: a filter of 10,000 unknown fields stays linear
        std::function<void(const Filter&)> walk = [&](const Filter& x) {
            if (!x.field().empty() && !std::binary_search(fields.begin(), fields.end(), x.field()) &&
                seen.insert(x.field()).second)
                unknown.push_back(x.field());
            for (const auto& c : x.children()) walk(c);
        };
        walk(f);
        std::string out = "no chunk the reader may read matches the filter";
        if (filters.size() > 1) out += "s";
        for (std::size_t i = 0; i < filters.size(); ++i) out += (i ? " and '" : " '") + filters[i] + "'";
        for (std::size_t i = 0; i < unknown.size(); ++i)
            out += (i ? ", '" : ": no chunk has the field '") + unknown[i] + "'";
        if (unknown.empty()) out += ": no chunk has the value asked";
        out += "; the fields chunks have:";
        for (const auto& name : fields) out += " " + name;
        return out;
    }

    /// The corpus statistics the confidence reads (answer/abstain.hpp's TermStatistics):
    /// those of the chunks `reader` may read (a filter does not change them), so that
    /// the confidence and the words a refusal calls unknown do not depend on documents
    /// the reader cannot read.
    [[nodiscard]] TermStatistics term_statistics(const Principal& reader = Principal::system()) const {
        return impl_->term_statistics(reader);
    }

    /// Which words of `question` occur in `doc` (the proximity reranker's breakdown).
    [[nodiscard]] ProximityBreakdown explain(std::string_view question, const Document& doc) const {
        return impl_->proximity->explain(question, doc.text);
    }
    /// The chunks around a chunk, for evidence neighbour expansion.
    [[nodiscard]] NeighbourFn neighbours() const { return collection_neighbours(*impl_->docs); }

    /// Calls f(document) for every live chunk, in DocId order.
    template <class F>
    void for_each_chunk(F&& f) const {
        const auto& r = impl_->docs->retriever();
        for (DocId id = 0; id < r.store().capacity(); ++id)
            if (auto d = r.document(id)) f(*d);
    }

    /// How the relevance labels of `questions` match the chunks (eval/question.hpp's
    /// resolve_labels: labels written with one of `prefixes`, e.g. relative to the corpus
    /// folder's parent, are rewritten in `questions`; the rest that match nothing are listed).
    [[nodiscard]] LabelCheck resolve_labels(QuestionSet& questions, const std::vector<std::string>& prefixes = {}) const {
        std::vector<std::string> ids;
        for_each_chunk([&](const Document& d) { ids.push_back(d.id); });
        return ragpp::resolve_labels(questions, std::move(ids), prefixes);
    }

    [[nodiscard]] const EngineConfig& config() const noexcept { return impl_->config; }
    /// The search-time knobs may change (k1, b, fusion, candidates, per-source, field
    /// weights, rerank); the index-shaping ones are read at build time only.
    [[nodiscard]] EngineConfig& config() noexcept { return impl_->config; }
    /// Live chunks.
    [[nodiscard]] std::size_t size() const noexcept { return impl_->docs->retriever().size(); }
    [[nodiscard]] const Documents& documents() const noexcept { return *impl_->docs; }
    [[nodiscard]] const SourceManifest& manifest() const noexcept { return impl_->manifest; }
    /// The folder the sources are read from (for a single-file corpus: the file's folder).
    [[nodiscard]] const std::filesystem::path& corpus_root() const noexcept { return impl_->root; }
    /// Notes of the last corpus scan (skipped aliases, links, unreadable entries).
    [[nodiscard]] const std::vector<std::string>& notes() const noexcept { return impl_->notes; }
    /// What the last build or sync left out of a folder corpus (CorpusScan::skipped),
    /// and the files found not UTF-8 past the walk's first 8 KiB when read.
    [[nodiscard]] const std::vector<SkippedPath>& skipped() const noexcept { return impl_->skipped; }
    /// The sources locked by a slip in their front matter's access declarations
    /// (chunk/front_matter.hpp): (path, the reason naming the file and key), by path.
    [[nodiscard]] std::vector<std::pair<std::string, std::string>> locked_sources() const {
        std::map<std::string, std::string> out;
        const auto& docs = *impl_->docs;
        docs.allowed(Filter::exists(std::string(access_error_field)), Principal::system()).for_each([&](DocId id) {
            const std::string* source = docs.source_of(id);
            if (!source || out.count(*source) != 0) return;
            const auto doc = docs.retriever().document(id);
            if (!doc) return;
            const auto it = doc->metadata.find(std::string(access_error_field));
            if (it != doc->metadata.end())
                if (const auto* reason = std::get_if<std::string>(&it->second)) out.emplace(*source, *reason);
        });
        return {out.begin(), out.end()};
    }
    /// The generation open() read (0 for an engine built in memory).
    [[nodiscard]] std::uint64_t generation() const noexcept { return impl_->generation; }

    // --- settings <-> JSON (the info of a saved generation) ---
    [[nodiscard]] static nlohmann::json config_to_json(const EngineConfig& c) {
        nlohmann::json j{{"analyzer", c.analyzer},     {"embedder", c.embedder}, {"query_prefix", c.query_prefix},
                         {"passage_prefix", c.passage_prefix}, {"quantize", c.quantize}, {"variant", c.variant},
                         {"delta", c.delta},           {"max_tokens", c.max_tokens},
                         {"unlabeled", c.unlabeled == Unlabeled::allow ? "public" : "private"},
                         {"overlap", c.overlap ? nlohmann::json(*c.overlap) : nlohmann::json(nullptr)},
                         {"k1", c.k1},                 {"b", c.b},               {"rrf_k", c.rrf_k},
                         {"weights", c.weights},       {"candidates", c.candidates}, {"per_source", c.per_source},
                         {"rerank_candidates", c.rerank_candidates}, {"rerank_weight", c.rerank_weight}};
        j["field_weights"] = c.field_weights ? nlohmann::json{c.field_weights->title, c.field_weights->headings,
                                                              c.field_weights->path}
                                             : nlohmann::json(nullptr);
        return j;
    }
    [[nodiscard]] static EngineConfig config_from_json(const nlohmann::json& j) {
        EngineConfig c;
        c.analyzer = j.at("analyzer").get<std::string>();
        c.embedder = j.at("embedder").get<std::string>();
        c.query_prefix = j.at("query_prefix").get<std::string>();
        c.passage_prefix = j.at("passage_prefix").get<std::string>();
        c.quantize = j.at("quantize").get<std::string>();
        c.variant = j.at("variant").get<std::string>();
        c.delta = j.at("delta").get<double>();
        c.max_tokens = j.at("max_tokens").get<std::size_t>();
        if (!j.at("overlap").is_null()) c.overlap = j["overlap"].get<std::size_t>();
        const std::string unlabeled = j.value("unlabeled", std::string("public"));  // absent: written before the setting
        if (unlabeled != "public" && unlabeled != "private")
            throw FormatError("settings: unlabeled must be public or private, not '" + unlabeled + "'");
        c.unlabeled = unlabeled == "public" ? Unlabeled::allow : Unlabeled::deny;
        c.k1 = j.at("k1").get<double>();
        c.b = j.at("b").get<double>();
        c.rrf_k = j.at("rrf_k").get<double>();
        c.weights = j.at("weights").get<std::vector<double>>();
        c.candidates = j.at("candidates").get<std::size_t>();
        c.per_source = j.at("per_source").get<std::size_t>();
        c.rerank_candidates = j.at("rerank_candidates").get<std::size_t>();
        c.rerank_weight = j.at("rerank_weight").get<double>();
        if (const auto& f = j.at("field_weights"); !f.is_null()) {
            const auto w = f.get<std::vector<double>>();
            if (w.size() != 3) throw FormatError("settings: field_weights needs 3 numbers");
            c.field_weights = FieldWeights{w[0], w[1], w[2]};
        }
        return c;
    }

private:
    /// Opens generation `g` of `dir` (see open()). Nothing is read per chunk: the parts are
    /// mapped, their counts compared (with options.verify, also every chunk's DocId in
    /// every part).
    [[nodiscard]] static Engine open_parts(const std::filesystem::path& dir, const OpenedGeneration& g, std::size_t threads,
                                           OpenOptions options) {
        const std::string where = "index folder '" + dir.string() + "'";
        const auto& info = g.info;
        const int version = info.is_object() && info.value("format", "") == "ragpp-index" ? info.value("version", 0) : 0;
        if (version == 2 || version == 3)
            throw FormatError(where + " was written by an older ragpp (index version " + std::to_string(version) +
                              "; this build reads version 4, whose chunk places and metadata index are opened in place): "
                              "rebuild it with ragpp index");
        if (version != 4) throw FormatError(where + " is not a version 4 ragpp index (its manifest's info says otherwise)");
        EngineConfig c;
        std::filesystem::path root;
        std::string kind;
        std::size_t chunks = 0, next = 0, source_count = 0;
        try {
            c = config_from_json(info.at("settings"));
            root = info.at("corpus").at("root").get<std::string>();
            kind = info.at("corpus").at("kind").get<std::string>();
            chunks = info.at("counts").at("chunks").get<std::size_t>();
            next = info.at("counts").at("next_docid").get<std::size_t>();
            source_count = info.at("counts").at("sources").get<std::size_t>();
        } catch (const nlohmann::json::exception& e) {
            throw FormatError(where + ": info: " + e.what());
        }
        if (kind != "folder" && kind != "jsonl" && kind != "beir") throw FormatError(where + ": unknown corpus kind '" + kind + "'");
        c.threads = threads;

        auto read_part = [&](const char* name, auto&& read) {
            try {
                return read(g.dir / name);
            } catch (const FormatError& e) {
                throw FormatError(where + ": " + e.what());
            } catch (const IoError& e) {
                throw FormatError(where + ": part '" + name + "' cannot be read: " + e.what());
            }
        };
        // With options.verify, open_generation() has checked every part's checksum: the
        // parts' own payload checksums would read every byte a second time.
        const OpenOptions parts{.mmap = options.mmap, .verify = false};
        // The structural checks of the in-place parts (orders, offsets, every place) run with verify.
        const OpenOptions structure{.mmap = options.mmap, .verify = options.verify};
        DocumentStore store = read_part("documents.bin", [&](const std::filesystem::path& p) { return DocumentStore::open(p, parts); });
        SourceManifest manifest = read_part("sources.bin", [&](const std::filesystem::path& p) { return read_sources(p, parts); });
        if (store.size() != chunks)
            throw FormatError(where + ": documents.bin holds " + std::to_string(store.size()) + " chunks, the info says " +
                              std::to_string(chunks));
        if (next != store.capacity())
            throw FormatError(where + ": documents.bin ends at DocId " + std::to_string(store.capacity()) +
                              ", the info's next_docid is " + std::to_string(next));
        if (manifest.size() != source_count)
            throw FormatError(where + ": sources.bin lists " + std::to_string(manifest.size()) + " sources, the info says " +
                              std::to_string(source_count));
        auto bm25 = Bm25::load(g.dir / "bm25.idx", AnyAnalyzer(c.analyzer), parts);
        auto vectors = Vectors::load(g.dir / "vector.idx", make_any_embedder(c), VectorIndexOptions{}, parts);
        // Every part must hold the same chunks under the same DocIds: the counts always,
        // each DocId with verify.
        auto disagree = [&](const std::string& part, std::size_t n) {
            return FormatError(where + ": " + part + " holds " + std::to_string(n) + " documents but documents.bin " +
                               std::to_string(store.size()) + " (or other DocIds): the parts do not belong together");
        };
        if (bm25.size() != store.size()) throw disagree("bm25.idx", bm25.size());
        if (vectors.size() != store.size()) throw disagree("vector.idx", vectors.size());
        Engine e(c);
        auto& im = *e.impl_;
        Hybrid hybrid(std::move(store), retriever_options(c), std::move(bm25), std::move(vectors));
        im.docs.emplace(read_part("places.bin", [&](const std::filesystem::path& p) {
            return Documents::load(std::move(hybrid), collection_options(c), p, g.dir / "metadata.bin", structure);
        }));
        const auto& docs = *im.docs;
        const auto& r = docs.retriever();
        if (docs.chunk_count() != r.size()) throw disagree("places.bin", docs.chunk_count());
        // The manifest names exactly the sources of places.bin (both sorted by id).
        const auto records = manifest.records();
        if (records.size() != docs.source_count() ||
            !std::equal(records.begin(), records.end(), docs.sources().begin(),
                        [](const SourceRecord* rec, const auto& src) { return rec->path == src.first; }))
            throw FormatError(where + ": the source manifest (sources.bin) and places.bin name different sources");
        if (options.verify)
            for (const auto& [source, ids] : docs.sources())
                for (DocId id : ids) {
                    if (!r.store().contains(id)) throw disagree("places.bin", docs.chunk_count());
                    if (!r.index<0>().contains(id)) throw disagree("bm25.idx", r.index<0>().size());
                    if (!r.index<1>().contains(id)) throw disagree("vector.idx", r.index<1>().size());
                }
        im.manifest = std::move(manifest);
        im.root = std::move(root);
        im.kind = std::move(kind);
        im.generation = g.generation;
        im.make_rerankers();
        return e;
    }

    // sources.bin (format "SRCCHUNK" version 2 in detail/binary_file.hpp's container): the
    // source manifest: u64 count, then per source (sorted by path): str path, u64 size,
    // i64 mtime_ns, i64 scanned_ns, u64 content hash. Each source's chunks are in places.bin.
    static constexpr detail::BinaryFormat sources_format{"SRCCHUNK", 2, "source manifest", ""};
    static void write_sources(const std::filesystem::path& path, const SourceManifest& manifest) {
        detail::BinaryWriter w(path);
        w.u64(manifest.size());
        for (const SourceRecord* r : manifest.records()) {
            w.str(r->path);
            w.u64(r->size);
            w.put(r->mtime_ns);
            w.put(r->scanned_ns);
            w.u64(r->hash);
        }
        w.save(path, sources_format);
    }
    static SourceManifest read_sources(const std::filesystem::path& path, OpenOptions options) {
        const detail::FileBytes bytes(path, false);  // small: one record a source
        detail::BinaryReader in(bytes.view(), sources_format, path.string(), options.verify);
        SourceManifest m;
        const std::size_t n = in.count("source count", 36);
        for (std::size_t i = 0; i < n; ++i) {
            SourceRecord r;
            r.path = std::string(in.str("source path"));
            if (r.path.empty()) in.fail("source " + std::to_string(i) + " has an empty path");
            r.size = in.u64("size");
            r.mtime_ns = in.get<std::int64_t>("mtime_ns");
            r.scanned_ns = in.get<std::int64_t>("scanned_ns");
            r.hash = in.u64("hash");
            if (m.find(r.path)) in.fail("source '" + r.path + "' is listed twice");
            m.add(std::move(r));
        }
        in.expect_end();
        return m;
    }

    static RetrieverOptions retriever_options(const EngineConfig& c) { return {c.rrf_k, c.weights, c.candidates}; }
    static BM25Params bm25_params(const EngineConfig& c) {
        BM25Params p;
        p.variant = parse_bm25_variant(c.variant);
        p.k1 = c.k1;
        p.b = c.b;
        p.delta = c.delta;
        return p;
    }
    static CollectionOptions collection_options(const EngineConfig& c) {
        CollectionOptions o;
        o.chunking.max_tokens = c.max_tokens;
        o.chunking.overlap = c.overlap;
        o.access = AccessPolicy(c.unlabeled);
        return o;
    }

    struct Impl {
        EngineConfig config;
        std::optional<Documents> docs;
        SourceManifest manifest;
        std::filesystem::path root;
        std::string kind = "folder";  // folder | jsonl | beir
        CorpusOptions scan_options;
        std::vector<std::string> notes;
        std::vector<SkippedPath> skipped;
        std::uint64_t generation = 0;
        // Rerankers; their term weights read the BM25 index of this Impl (heap-allocated, never moves).
        std::optional<ProximityReranker<AnyAnalyzer>> proximity;
        std::optional<SoftMatchReranker<AnyEmbedder, AnyAnalyzer>> soft;
        // Statistics per reader (reader_statistics), made on first use.
        mutable std::mutex statistics_mutex;
        mutable std::map<std::string, std::shared_ptr<const ReaderStatistics>> statistics_cache;
        // Cross-encoders, loaded on first use (one per folder).
        mutable std::mutex cross_mutex;
        mutable std::map<std::string, std::shared_ptr<const CrossEncoderReranker>> cross;

        /// A copy whose rerankers read its own indexes (cross-encoders are shared).
        [[nodiscard]] std::unique_ptr<Impl> clone() const {
            auto c = std::make_unique<Impl>();
            c->config = config;
            c->docs = docs;
            c->manifest = manifest;
            c->root = root;
            c->kind = kind;
            c->scan_options = scan_options;
            c->notes = notes;
            c->skipped = skipped;
            c->generation = generation;
            {
                std::lock_guard lock(cross_mutex);
                c->cross = cross;
            }
            if (c->docs) c->make_rerankers();
            return c;
        }

        void make_rerankers() {
            // The BM25 index's own idf (its variant), so there is one formula.
            make_rerankers([this](std::string_view term) { return docs->retriever().index<0>().idf(term); }, proximity,
                           soft);
        }
        /// The lexical rerankers weighing words by `idf` (an index term's).
        void make_rerankers(const TermWeightFn& idf, std::optional<ProximityReranker<AnyAnalyzer>>& prox,
                            std::optional<SoftMatchReranker<AnyEmbedder, AnyAnalyzer>>& sm) const {
            prox.emplace(AnyAnalyzer(config.analyzer), ProximityOptions{}, idf);
            // Hashing vectors compare word forms, so the BM25 analyzer's terms suit them; word
            // vectors and Model2Vec know surface words: the standard analyzer.
            const bool surface = config.embedder.rfind("hashing", 0) != 0;
            sm.emplace(docs->retriever().index<1>().embedder(), AnyAnalyzer(surface ? "standard" : config.analyzer),
                       SoftMatchOptions{}, [this, idf](std::string_view term) {
                           std::vector<std::string> terms;
                           docs->retriever().index<0>().analyzer().analyze(term, terms);
                           double w = 0;
                           for (const auto& t : terms) w = std::max(w, idf(t));
                           return w;
                       });
        }

        [[nodiscard]] SearchOptions options(SearchMode mode) const {
            SearchOptions o;
            o.k1 = config.k1;
            o.b = config.b;
            o.rrf_k = config.rrf_k;
            o.candidates = config.candidates;
            o.field_weights = config.field_weights;
            o.weights = mode == SearchMode::bm25     ? std::vector<double>{1.0, 0.0}
                        : mode == SearchMode::vector ? std::vector<double>{0.0, 1.0}
                                                     : config.weights;
            return o;
        }

        std::shared_ptr<const CrossEncoderReranker> cross_encoder(const std::string& spec) const {
            std::lock_guard lock(cross_mutex);
            auto& slot = cross[spec];
            if (!slot) slot = make_cross_encoder(config, spec);
            return slot;
        }

        /// `reader`: the statistics of a reader who may not read every chunk (null: every
        /// chunk); the lexical rerankers then weigh words by that reader's idf.
        [[nodiscard]] std::vector<Result> rerank(const std::string& reranker, std::string_view query,
                                                 std::vector<Result> fused, std::size_t keep,
                                                 const std::shared_ptr<const ReaderStatistics>& reader = nullptr) const {
            RerankOptions o{config.rerank_candidates, std::max<std::size_t>(keep, 1), config.rerank_weight};
            // The lexical rerankers reorder what retrieval found instead of replacing it: each
            // index list's own score joins theirs (RerankFusion::lists), weighted by
            // rerank_weight, or by lexical_fused_weight when it is 0 (docs/reranking.md).
            if (reranker == "proximity" || reranker == "softmatch") {
                o.fusion = RerankFusion::lists;
                if (o.fused_weight == 0) o.fused_weight = lexical_fused_weight;
            }
            if (reader && (reranker == "proximity" || reranker == "softmatch")) {
                std::optional<ProximityReranker<AnyAnalyzer>> prox;
                std::optional<SoftMatchReranker<AnyEmbedder, AnyAnalyzer>> sm;
                const auto* bm25 = &docs->retriever().index<0>();
                make_rerankers([bm25, reader](std::string_view term) { return bm25->idf(term, *reader); }, prox, sm);
                if (reranker == "proximity") return ragpp::rerank(query, std::move(fused), *prox, o);
                return ragpp::rerank(query, std::move(fused), *sm, o);
            }
            if (reranker == "proximity") return ragpp::rerank(query, std::move(fused), *proximity, o);
            if (reranker == "softmatch") return ragpp::rerank(query, std::move(fused), *soft, o);
            if (reranker.starts_with("cross-encoder:")) return ragpp::rerank(query, std::move(fused), *cross_encoder(reranker), o);
            if (fused.size() > keep) fused.resize(keep);
            return fused;
        }

        /// The ranking of search, answer and evaluate, `depth` long: search with `o` (its
        /// allowed set included), per-source cap, then the reranker. Prefix-stable: for
        /// depths up to config.candidates, a shorter ranking is the start of a longer one
        /// (the retriever fuses lists of config.candidates whatever the depth, the cap
        /// runs over the whole fused list, the reranker re-scores the same first
        /// rerank_candidates), so ask's passages are the first entries of eval's ranking.
        [[nodiscard]] std::vector<Result> run(std::string_view query, std::size_t depth, const SearchOptions& o,
                                              const std::string& reranker, SearchTimings* timings = nullptr,
                                              StageTimes* stages = nullptr) const {
            using detail::engine::Clock;
            const std::size_t want = reranker == "none" ? depth : std::max(depth, config.rerank_candidates);
            const auto& r = docs->retriever();
            SearchTimings local;
            SearchTimings& t = timings ? *timings : local;
            std::vector<Result> results;
            if (config.per_source == 0) {
                results = r.search(query, want, o, t);
            } else {  // source diversity: chunks over the cap move down the whole fused list
                results = r.search(query, std::max(want, config.candidates), o, t);
                const auto tc = Clock::now();
                const std::size_t listed = results.size();
                results = cap_per_source(std::move(results), config.per_source, listed);
                t.fusion_seconds += std::chrono::duration<double>(Clock::now() - tc).count();
            }
            if (results.size() > want) results.resize(want);
            if (reranker == "none") {
                if (results.size() > depth) results.resize(depth);
                return results;
            }
            const auto t0 = Clock::now();
            results = rerank(reranker, query, std::move(results), depth, o.statistics);
            if (stages) stages->emplace_back("rerank", std::chrono::duration<double>(Clock::now() - t0).count());
            return results;
        }

        /// The statistics of the chunks `reader` may read (core/types.hpp's
        /// ReaderStatistics), or null when it may read every chunk (the index's own then
        /// are the reader's). Made once per reader and kept: an engine's chunks change
        /// only through sync, which makes a new Impl.
        [[nodiscard]] std::shared_ptr<const ReaderStatistics> reader_statistics(const Principal& reader) const {
            if (reader.unrestricted) return nullptr;
            std::vector<std::string> groups = reader.groups;
            std::sort(groups.begin(), groups.end());
            groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
            std::string key;
            for (const auto& g : groups) key += g + '\n';
            std::lock_guard lock(statistics_mutex);
            if (auto it = statistics_cache.find(key); it != statistics_cache.end()) return it->second;
            const auto& bm25 = docs->retriever().index<0>();
            auto readable = std::make_shared<const DocSet>(docs->allowed(Filter::all(), reader));
            std::shared_ptr<const ReaderStatistics> stats;
            if (readable->count() != bm25.size())
                stats = std::make_shared<const ReaderStatistics>(bm25.reader_statistics(std::move(readable)));
            statistics_cache.emplace(std::move(key), stats);
            return stats;
        }

        /// The statistics query coverage reads (answer/abstain.hpp): those of the chunks
        /// `reader` may read, exactly (the same as BM25's).
        [[nodiscard]] TermStatistics term_statistics(const Principal& reader) const {
            const auto* bm25 = &docs->retriever().index<0>();
            auto stats = reader_statistics(reader);
            if (!stats) return {bm25->size(), [bm25](std::string_view term) { return bm25->document_frequency(term); }};
            const auto n = static_cast<std::size_t>(stats->count);
            return {n, [bm25, stats = std::move(stats)](std::string_view term) {
                        return bm25->document_frequency(term, *stats);
                    }};
        }

        /// Memory ran out while `what` (a file of `size` bytes) was read or indexed; its
        /// chunks were taken back (each index undoes a failed batch in one pass) and the
        /// run stops: nothing of it is committed.
        [[noreturn]] static void out_of_memory(const std::string& what, std::uint64_t size) {
            throw OutOfMemoryError("out of memory while indexing '" + what + "'" +
                                   (size ? " (" + std::to_string(size) + " bytes)" : std::string()) +
                                   ": the run stopped and nothing of it was committed; give the process more "
                                   "memory or split the file (about 6 KB of memory per section, see "
                                   "docs/persistence.md)");
        }

        /// Chunks one file of a folder corpus into the engine; records it in the manifest.
        /// A file not UTF-8 past the walk's first 8 KiB is left out (and its old chunks
        /// removed) as the walk leaves such a file out: false.
        bool index_file(const SourceFile& f) {
            Document source{f.path, detail::read_small_file(f.absolute), {}};
            if (const auto bad = text::find_invalid_utf8(source.text); bad != source.text.size()) {
                skipped.push_back({f.path, SkipReason::not_utf8, false, detail::corpus::utf8_place(source.text, bad)});
                if (manifest.find(f.path)) {
                    docs->remove(f.path);
                    manifest.erase(f.path);
                }
                return false;
            }
            const std::uint64_t hash = source_hash(source.text);
            std::vector<Document> chunks;
            for (const auto& chunk : chunk_document(source, docs->options().chunking))
                chunks.push_back(document_with_raw_offset(chunk));  // the evidence quotes the raw span
            (void)docs->update_chunks(f.path, std::move(chunks));
            manifest.replace(make_source_record(f, hash, {}));
            return true;
        }

        /// The documents of a single-file corpus (.jsonl, or BEIR's corpus.jsonl).
        [[nodiscard]] static std::vector<Document> read_jsonl(const std::filesystem::path& file, bool beir,
                                                              std::string_view access_field) {
            std::vector<Document> docs;
            auto beir_doc = [](BeirDocument d) {
                Document doc{std::move(d.id), d.title.empty() ? std::move(d.text) : d.title + "\n" + d.text, {}};
                if (!d.title.empty()) doc.metadata["title"] = std::move(d.title);
                return doc;
            };
            if (beir) {
                // A BEIR corpus carries no access: a declaration in it is refused, never ignored.
                for (auto& d : read_beir_corpus(file, access_field)) docs.push_back(beir_doc(std::move(d)));
                return docs;
            }
            std::set<std::string> seen;
            detail::for_each_jsonl(file, [&](const nlohmann::json& j, std::size_t line) {
                const std::string where = file.string() + ":" + std::to_string(line);
                check_json_access(j, where, access_field);  // a slip is an error, never public
                const char* id_field = j.contains("_id") ? "_id" : "id";
                BeirDocument d{detail::json_string_field(j, id_field, file, line, true),
                               detail::json_string_field(j, "title", file, line, false),
                               detail::json_string_field(j, "text", file, line, true)};
                if (!seen.insert(d.id).second) throw DuplicateError(where + ": duplicate id '" + d.id + "'");
                auto doc = beir_doc(std::move(d));
                if (auto it = j.find("metadata"); it != j.end())
                    for (auto& [k, v] : metadata_from_json(*it, where)) doc.metadata[k] = std::move(v);
                docs.push_back(std::move(doc));
            });
            return docs;
        }

        /// What a corpus is (kind, root, the single file of a jsonl or BEIR corpus) and, for
        /// a sync, what changed in it against this Impl's manifest (folder: the scan and its
        /// diff; single file: whether the one source is fresh).
        struct Plan {
            std::string kind;
            std::filesystem::path root, file;
            bool planned = false;      // scan/diff or freshness computed (sync of a known kind)
            bool single_fresh = false;  // single-file corpus: its source is unchanged
            CorpusScan scan;
            SourceDiff diff;
            [[nodiscard]] bool nothing_to_index() const noexcept {
                if (!planned) return false;
                if (kind != "folder") return single_fresh;
                return !scan.files.empty() && diff.added.empty() && diff.changed.empty() && diff.removed.empty();
            }
        };
        [[nodiscard]] static Plan locate(const std::filesystem::path& corpus) {
            namespace fs = std::filesystem;
            std::error_code ec;
            const bool is_dir = fs::is_directory(corpus, ec);
            Plan p;
            if (is_dir && fs::exists(corpus / "corpus.jsonl", ec)) {
                p.kind = "beir", p.root = corpus, p.file = "corpus.jsonl";
            } else if (is_dir) {
                p.kind = "folder", p.root = corpus;
            } else if (corpus.extension() == ".jsonl" && fs::is_regular_file(corpus, ec)) {
                p.kind = "jsonl", p.root = corpus.parent_path().empty() ? fs::path(".") : corpus.parent_path(),
                p.file = corpus.filename();
            } else {
                throw NotFoundError("corpus '" + corpus.string() +
                                    "' is neither a folder (of .md/.rst/.txt files, or BEIR) nor a .jsonl file");
            }
            p.root = fs::absolute(p.root, ec).lexically_normal();
            // The info records the root as JSON text: a path that is not UTF-8 is refused
            // before any work, naming it (a name inside the corpus is skipped by the walk).
            if (const std::string r = p.root.string(); !text::is_valid_utf8(r))
                throw InvalidArgument("corpus '" + corpus.string() + "': its path '" + r +
                                      "' is not valid UTF-8, which an index cannot record: rename it");
            return p;
        }
        /// The sync plan of `corpus` against this Impl (read only). A corpus of another
        /// kind is left unplanned: load() then throws the rebuild message.
        [[nodiscard]] Plan plan(const std::filesystem::path& corpus, const CorpusOptions& options) const {
            Plan p = locate(corpus);
            if (p.kind != kind) return p;
            if (p.kind == "folder") {
                p.scan = scan_corpus(p.root, options);
                p.diff = diff_sources(manifest, p.scan);
            } else {
                const SourceRecord* old = manifest.find(p.file.generic_string());
                p.single_fresh = old && check_source(p.root, *old) == Freshness::fresh;
            }
            p.planned = true;
            return p;
        }

        /// Builds (counts == null) or syncs the engine from `corpus`. A build fills a fresh
        /// Impl, a sync a clone() (Engine::sync): a throw may leave this Impl partly
        /// updated, and the caller then drops it. `planned`: the sync plan (plan()) made
        /// against this manifest, used instead of scanning again.
        void load(const std::filesystem::path& corpus, const EngineProgress& progress, SyncCounts* counts,
                  const Plan* planned = nullptr) {
            namespace fs = std::filesystem;
            const Plan located = planned ? Plan{} : locate(corpus);
            const Plan& pl = planned ? *planned : located;
            const std::string new_kind = pl.kind;
            const fs::path new_root = pl.root, file = pl.file;
            if (counts && new_kind != kind)
                throw InvalidArgument("corpus '" + corpus.string() + "' is a " + new_kind + " corpus, the index was built from a " +
                                      kind + " corpus: rebuild it");
            if (!counts) {
                docs.emplace(Hybrid(retriever_options(config), Bm25(AnyAnalyzer(config.analyzer), bm25_params(config)),
                                    Vectors(make_any_embedder(config))),
                             collection_options(config));
                make_rerankers();
            }
            kind = new_kind;
            root = new_root;
            SyncCounts local;
            SyncCounts& c = counts ? *counts : local;
            if (kind != "folder") {
                // A single-file corpus is one source: re-read whole when it changed.
                const fs::path abs = root / file;
                const std::int64_t scanned = detail::corpus::file_clock_now();
                struct stat st {};
                if (::stat(abs.c_str(), &st) != 0) throw IoError("cannot read '" + abs.string() + "'");
                const SourceFile f{file.generic_string(), abs, static_cast<std::uint64_t>(st.st_size),
                                   detail::corpus::ns_of(st.st_mtim), scanned};
                const SourceRecord* old = manifest.find(f.path);
                if (old && (pl.planned ? pl.single_fresh : check_source(root, *old) == Freshness::fresh)) {
                    c.unchanged = 1;
                } else {
                    const std::uint64_t hash = hash_file(abs);
                    std::vector<DocId> ids;
                    try {
                        auto documents = read_jsonl(abs, kind == "beir", docs->options().access.field());
                        if (progress) progress("indexing", 0, documents.size());
                        ids = docs->update_chunks(f.path, std::move(documents));
                    } catch (const std::bad_alloc&) {
                        std::error_code ec;
                        const auto size = std::filesystem::file_size(abs, ec);
                        out_of_memory(abs.string(), ec ? 0 : size);
                    }
                    manifest.replace(make_source_record(f, hash, {}));
                    (old ? c.changed : c.added) = 1;
                    if (progress) progress("indexing", ids.size(), ids.size());
                }
            } else {
                // The plan's scan and diff were made against this manifest (a clone's: the same).
                const CorpusScan scan = pl.planned ? pl.scan : scan_corpus(root, scan_options);
                notes = scan.notes;
                skipped = scan.skipped;
                if (scan.files.empty())
                    throw NotFoundError("no .md, .rst or .txt file under '" + corpus.string() + "'");
                const SourceDiff diff = pl.planned ? pl.diff : diff_sources(manifest, scan);
                for (const auto& path : diff.removed) {
                    docs->remove(path);
                    manifest.erase(path);
                }
                std::size_t done = 0, left_added = 0, left_changed = 0;  // left out: not UTF-8
                const std::size_t todo = diff.added.size() + diff.changed.size();
                for (const auto* list : {&diff.changed, &diff.added})
                    for (const auto& f : *list) {
                        bool indexed = false;
                        try {
                            indexed = index_file(f);
                        } catch (const std::bad_alloc&) {  // the file's chunks were taken back
                            out_of_memory(f.path, f.size);
                        }
                        if (!indexed) ++(list == &diff.added ? left_added : left_changed);
                        if (progress) progress("indexing", ++done, todo);
                    }
                // Unchanged but touched files: record the new size and mtime (no re-hash next time).
                for (const auto& f : diff.touched) manifest.refresh(f);
                c.added = diff.added.size() - left_added;
                c.changed = diff.changed.size() - left_changed;
                c.removed = diff.removed.size() + left_changed;
                c.unchanged = diff.unchanged.size();
            }
            c.chunks = docs->retriever().size();
            c.sources = docs->source_count();
        }
    };

    explicit Engine(EngineConfig config) : impl_(std::make_unique<Impl>()) {
        (void)parse_bm25_variant(config.variant);  // validates the name
        with_analyzer(config.analyzer, [](auto) { return 0; });
        if (config.quantize != "none" && config.quantize != "int8")
            throw InvalidArgument("quantize must be none or int8, not '" + config.quantize + "'");
        collection_options(config).chunking.validate("EngineConfig");
        impl_->config = std::move(config);
    }

    std::unique_ptr<Impl> impl_;
};

}  // namespace ragpp
