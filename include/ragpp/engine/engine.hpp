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
//    returned with EngineResult::stale set (and listed in EngineResults::stale_sources); the
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

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include <ragpp/answer/answer.hpp>
#include <ragpp/core/types.hpp>
#include <ragpp/detail/compiled.hpp>
#include <ragpp/engine/config.hpp>
#include <ragpp/eval/evaluate.hpp>
#include <ragpp/eval/question.hpp>
#include <ragpp/filter/access.hpp>
#include <ragpp/filter/filter.hpp>
#include <ragpp/io/contexts.hpp>
#include <ragpp/io/corpus_scan.hpp>

namespace ragpp {

// Declared here, defined in engine/documents.hpp (the collection, the type-erased analyzer
// and embedder) and in the headers of the layers below.
class EngineDocuments;
class SourceManifest;
class FolderContexts;
struct TermStatistics;
struct ProximityBreakdown;
struct OpenedGeneration;
struct BM25Params;
struct CollectionOptions;

class Engine {
public:
    /// The collection an engine holds (engine/documents.hpp defines it):
    /// Collection<Retriever<BM25Index<AnyAnalyzer>, VectorIndex<AnyEmbedder>>>.
    using Documents = EngineDocuments;

    Engine(Engine&&) noexcept;
    Engine& operator=(Engine&&) noexcept;
    ~Engine();

    /// Builds an engine over `corpus` (see the header comment for what a corpus is).
    /// Throws NotFoundError when it is not a corpus or holds no file.
    [[nodiscard]] static Engine build(const std::filesystem::path& corpus, EngineConfig config,
                                      const CorpusOptions& corpus_options = {}, const EngineProgress& progress = {});

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
                                     OpenOptions options = default_open);

    /// Checks every byte of the current generation of `dir`: each part's checksum (in the
    /// generation's manifest), the structure and agreement of
    /// the parts, the source manifest against the stored chunks, and that every stored
    /// chunk decodes. Returns the engine so opened; throws what open() throws, a
    /// FormatError naming the folder and the damaged part. `ragpp check DIR`.
    [[nodiscard]] static Engine check(const std::filesystem::path& dir, std::size_t threads = 0);

    /// Writes the engine as a new generation of the index folder `dir` (created if needed)
    /// and makes it current atomically; returns the generation number.
    std::uint64_t save(const std::filesystem::path& dir) const;

    /// Brings the engine up to date with `corpus` (see the header comment). The corpus
    /// must be of the kind the engine was built from. All or nothing: the update is made
    /// on a copy of the engine in memory, which replaces it only once every step
    /// succeeded; on any exception (a source unreadable, an embedder or `progress`
    /// throwing) the engine is as before the call, DocIds included. The copy costs a pass
    /// over the in-memory state (the mapped parts of an opened engine are shared, not
    /// copied, until the update writes them) and, during the sync, that state twice.
    SyncCounts sync(const std::filesystem::path& corpus, const CorpusOptions& corpus_options = {},
                    const EngineProgress& progress = {});
    /// What sync(corpus, corpus_options) would do, without doing it: the sources it would
    /// add, re-read (content or contexts changed) and remove, and the touched ones whose
    /// record it would refresh; chunks and sources as they are now. Reads the corpus's
    /// names and sizes, and the content of files whose size is the same but mtime not.
    /// InvalidArgument for a corpus of another kind than the engine's.
    [[nodiscard]] SyncCounts pending(const std::filesystem::path& corpus, const CorpusOptions& corpus_options = {}) const;

    /// What `q.filter` and `q.filters` accept: their conjunction, each text parsed on its
    /// own (parse_filters); Filter::all() when there is none.
    [[nodiscard]] static Filter query_filter(const EngineQuery& q);

    /// The k best chunks for `query` that `q.principal` may read and `q.filter` and `q.filters` accept,
    /// through mode, per-source cap and reranker; sources checked when q.check_sources.
    [[nodiscard]] EngineResults search(std::string_view query, const EngineQuery& q) const;

    /// The answer stage on this engine (answer/answer.hpp): search(question, q) ranks
    /// q.k passages (the mode, filter, principal, reranker and source checks of q), then
    /// `options` decides: the passages after the floor, the confidence (query coverage
    /// with the statistics of what q.principal may read, and a cross-encoder's calibrated score when
    /// q.reranker is one), then the evidence block or the reasons to refuse. What
    /// `ragpp ask` prints. options.passages is replaced by q.k.
    [[nodiscard]] EngineAnswer answer(std::string_view question, const EngineQuery& q,
                                      AnswerOptions options = {}) const;

    /// Every question through one pipeline, as options.principal sees the collection:
    /// the ranking of search and answer (options.depth entries), with stages analysis,
    /// bm25, embedding, vector, fusion (and rerank); each question's outcome carries the
    /// confidence Engine::answer computes for it (the same passages, floor and
    /// function: the threshold eval suggests is ask's). Sources are not checked (an
    /// evaluation measures the index as built).
    [[nodiscard]] PipelineReport evaluate(const QuestionSet& questions, const EvaluationOptions& options) const;

    /// A source as its file holds it now (`ragpp get`): `spec` is "path" (the whole file),
    /// "path:line" (the section whose heading is on that line, or that holds it; a chunk id
    /// "path:line#N" names its section) or "path:first-last" (those lines). `path` is a
    /// source of the index that `reader` may read in full (every chunk); any other path,
    /// and one the reader may not read, is the same NotFoundError, so the answer does not
    /// tell whether it exists. Throws InvalidArgument for a malformed spec, a line in no
    /// section, lines past the end of an unchanged file, or a single-file corpus (.jsonl,
    /// BEIR: its documents have no lines); IoError or ParseError reading the file. A
    /// deleted file is no error: SourceText::deleted.
    [[nodiscard]] SourceText reopen(std::string_view spec, const Principal& reader) const;

    /// The chunks and sources `reader` may read, and which of those sources changed or were
    /// deleted since indexing (each checked as search checks a result's source).
    [[nodiscard]] IndexStatus status(const Principal& reader) const;

    /// The ids of the chunks `reader` may read, in DocId order.
    [[nodiscard]] std::vector<std::string> readable_chunk_ids(const Principal& reader) const;

    /// Why `filter` (parse_filter's syntax) may match nothing for `reader`, or "" when it
    /// matches some chunk the reader may read: the fields it names that no chunk has, and
    /// the fields chunks have.
    [[nodiscard]] std::string filter_hint(const std::string& filter, const Principal& reader) const;
    /// filter_hint for the conjunction of `filters` (EngineQuery::filters), each quoted as written.
    [[nodiscard]] std::string filter_hint(const std::vector<std::string>& filters, const Principal& reader) const;

    /// The corpus statistics the confidence reads (answer/abstain.hpp's TermStatistics):
    /// those of the chunks `reader` may read (a filter does not change them), so that
    /// the confidence and the words a refusal calls unknown do not depend on documents
    /// the reader cannot read.
    [[nodiscard]] TermStatistics term_statistics(const Principal& reader = Principal::system()) const;

    /// Which words of `question` occur in `doc` (the proximity reranker's breakdown).
    [[nodiscard]] ProximityBreakdown explain(std::string_view question, const Document& doc) const;
    /// The chunks around a chunk, for evidence neighbour expansion.
    [[nodiscard]] NeighbourFn neighbours() const;

    /// Calls f(document) for every live chunk, in DocId order.
    void for_each_chunk(const std::function<void(const Document&)>& f) const;

    /// How the relevance labels of `questions` match the chunks (eval/question.hpp's
    /// resolve_labels: labels written with one of `prefixes`, e.g. relative to the corpus
    /// folder's parent, are rewritten in `questions`; the rest that match nothing are listed).
    [[nodiscard]] LabelCheck resolve_labels(QuestionSet& questions, const std::vector<std::string>& prefixes = {}) const;

    /// The settings the index was built with, its threads and its search defaults. Read
    /// only: the index settings are fixed once the engine exists (a change is a rebuild),
    /// so nothing changed here can make a folder that does not open.
    [[nodiscard]] const EngineConfig& config() const noexcept;
    /// Replaces the search defaults (saved by the next save()); a query may also bring its
    /// own (EngineQuery::search, EvaluationOptions::search). Throws InvalidArgument for a
    /// value out of its domain (SearchSettings::validate), the engine unchanged.
    void set_search_defaults(SearchSettings settings);
    /// Live chunks, and the sources they come from.
    [[nodiscard]] std::size_t size() const noexcept;
    [[nodiscard]] std::size_t source_count() const noexcept;
    [[nodiscard]] const Documents& documents() const noexcept;
    [[nodiscard]] const SourceManifest& manifest() const noexcept;
    /// The folder the sources are read from (for a single-file corpus: the file's folder).
    [[nodiscard]] const std::filesystem::path& corpus_root() const noexcept;
    /// "folder" (a folder of files: sources reopen() reads), "jsonl" or "beir".
    [[nodiscard]] const std::string& corpus_kind() const noexcept;
    /// Notes of the last corpus scan (skipped aliases, links, unreadable entries).
    [[nodiscard]] const std::vector<std::string>& notes() const noexcept;
    /// What the last build or sync left out of a folder corpus (CorpusScan::skipped),
    /// and the files found not UTF-8 past the walk's first 8 KiB when read.
    [[nodiscard]] const std::vector<SkippedPath>& skipped() const noexcept;
    /// The sources locked by a slip in their front matter's access declarations
    /// (chunk/front_matter.hpp): (path, the reason naming the file and key), by path.
    [[nodiscard]] std::vector<std::pair<std::string, std::string>> locked_sources() const;
    /// The generation open() read (0 for an engine built in memory).
    [[nodiscard]] std::uint64_t generation() const noexcept;
    /// The walk options and context settings of the last build or sync (saved with the
    /// generation; known_contexts is null): what an update without other instructions
    /// re-uses (index_folder, ragpp serve --watch).
    [[nodiscard]] const CorpusOptions& corpus_options() const noexcept;
    /// The folder-context rules the chunks were given (the root's .ragpp-contexts file's,
    /// then CorpusOptions::contexts_file's; io/contexts.hpp).
    [[nodiscard]] const FolderContexts& contexts() const noexcept;
    /// What the context command answered for the chunks of this generation, by key.
    [[nodiscard]] ContextAnswers context_answers() const;

    // --- settings <-> JSON (the info of a saved generation) ---
    [[nodiscard]] static nlohmann::json config_to_json(const EngineConfig& c);
    [[nodiscard]] static EngineConfig config_from_json(const nlohmann::json& j);

private:
    /// Opens generation `g` of `dir` (see open()). Nothing is read per chunk: the parts are
    /// mapped, their counts compared (with options.verify, also every chunk's DocId in
    /// every part).
    [[nodiscard]] static Engine open_parts(const std::filesystem::path& dir, const OpenedGeneration& g, std::size_t threads,
                                           OpenOptions options);

    // sources.bin (format "SRCCHUNK" version 2 in detail/binary_file.hpp's container): the
    // source manifest: u64 count, then per source (sorted by path): str path, u64 size,
    // i64 mtime_ns, i64 scanned_ns, u64 content hash. Each source's chunks are in places.bin.
    static void write_sources(const std::filesystem::path& path, const SourceManifest& manifest);
    static SourceManifest read_sources(const std::filesystem::path& path, OpenOptions options);
    // corpus.json (optional; absent in generations written before it: default walk, no
    // contexts): {"format": "ragpp-corpus", "version": 1, "walk": {...}, "contexts":
    // {"file", "command", "timeout", "rules": [{pattern, folders_only, text, origin}],
    // "answers": {source: [[key hex, answer], ...]}}}.
    void write_corpus_part(const std::filesystem::path& path) const;
    void read_corpus_part(const std::filesystem::path& path);

    static RetrieverOptions retriever_options(const EngineConfig& c);
    static BM25Params bm25_params(const EngineConfig& c);
    static CollectionOptions collection_options(const EngineConfig& c);

    struct Impl;

    explicit Engine(EngineConfig config);

    std::unique_ptr<Impl> impl_;
};

}  // namespace ragpp

// The definitions: in a header-only build here; with the compiled library
// (RAGPP_COMPILED, set by linking ragpp::compiled) compiled once in src/engine_*.cpp.
#ifndef RAGPP_COMPILED
#include <ragpp/engine/documents.hpp>
#include <ragpp/engine/detail/engine_impl.ipp>
#include <ragpp/engine/detail/engine_index.ipp>
#include <ragpp/engine/detail/engine_query.ipp>
#endif
