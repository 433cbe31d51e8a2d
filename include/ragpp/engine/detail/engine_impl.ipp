// ragpp detail: Engine::Impl, the state behind an Engine (engine/engine.hpp): the
// collection, the source manifest, the rerankers and the per-reader statistics, and the
// steps of a build or sync. Included by engine/engine.hpp in a header-only build, and by
// the compiled library's sources (src/engine_*.cpp).
// Not a header to include on its own (hence .ipp): engine/engine.hpp includes it after
// the declarations, in order impl, index, query; so do src/engine_*.cpp.
#pragma once

#include <ragpp/engine/documents.hpp>

namespace ragpp {

struct Engine::Impl {
    EngineConfig config;
    std::optional<Documents> docs;
    SourceManifest manifest;
    std::filesystem::path root;
    std::string kind = "folder";  // folder | jsonl | beir
    CorpusOptions scan_options;
    std::vector<std::string> notes;
    std::vector<SkippedPath> skipped;
    std::uint64_t generation = 0;
    // Contexts (io/contexts.hpp): the rules the chunks were given, and per source the
    // context command's answers for its chunks (key, answer), in chunk order.
    FolderContexts contexts;
    std::map<std::string, std::vector<std::pair<std::uint64_t, std::string>>> answers;
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
        c->contexts = contexts;
        c->answers = answers;
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

    /// The settings of a query: its own, or the engine's defaults (validated when set).
    [[nodiscard]] const SearchSettings& settings(const std::optional<SearchSettings>& own) const {
        if (!own) return config.search;
        own->validate();
        return *own;
    }

    /// The options of the hybrid retriever's search: the fusion knobs at its level, the
    /// BM25 knobs given to the BM25 index (index 0).
    [[nodiscard]] static EngineHybrid::search_options options(SearchMode mode, const SearchSettings& s) {
        EngineHybrid::search_options o;
        auto& bm25 = o.index<0>();
        bm25.k1 = s.k1;
        bm25.b = s.b;
        bm25.field_weights = s.field_weights;
        o.rrf_k = s.rrf_k;
        o.candidates = s.candidates;
        o.weights = mode == SearchMode::bm25     ? std::vector<double>{1.0, 0.0}
                    : mode == SearchMode::vector ? std::vector<double>{0.0, 1.0}
                                                 : s.weights;
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
                                             std::vector<Result> fused, std::size_t keep, const SearchSettings& s,
                                             const std::shared_ptr<const ReaderStatistics>& reader = nullptr) const {
        RerankOptions o{s.rerank_candidates, std::max<std::size_t>(keep, 1), s.rerank_weight};
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
    /// depths up to s.candidates, a shorter ranking is the start of a longer one
    /// (the retriever fuses lists of s.candidates whatever the depth, the cap
    /// runs over the whole fused list, the reranker re-scores the same first
    /// rerank_candidates), so ask's passages are the first entries of eval's ranking.
    [[nodiscard]] std::vector<Result> run(std::string_view query, std::size_t depth,
                                          const EngineHybrid::search_options& o,
                                          const SearchSettings& s, const std::string& reranker,
                                          SearchTimings* timings = nullptr, StageTimes* stages = nullptr) const {
        using detail::engine::Clock;
        const std::size_t want = reranker == "none" ? depth : std::max(depth, s.rerank_candidates);
        const auto& r = docs->retriever();
        SearchTimings local;
        SearchTimings& t = timings ? *timings : local;
        std::vector<Result> results;
        if (s.per_source == 0) {
            results = r.search(query, want, o, t);
        } else {  // source diversity: chunks over the cap move down the whole fused list
            results = r.search(query, std::max(want, s.candidates), o, t);
            const auto tc = Clock::now();
            const std::size_t listed = results.size();
            results = cap_per_source(std::move(results), s.per_source, listed);
            t.fusion_seconds += std::chrono::duration<double>(Clock::now() - tc).count();
        }
        if (results.size() > want) results.resize(want);
        if (reranker == "none") {
            if (results.size() > depth) results.resize(depth);
            return results;
        }
        const auto t0 = Clock::now();
        results = rerank(reranker, query, std::move(results), depth, s, o.index<0>().statistics);
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
                               "memory or split the file (about 3.3 KB of memory per section, see "
                               "docs/persistence.md)");
    }

    /// The context rules of a corpus rooted at `root`: its .ragpp-contexts file's, then
    /// options.contexts_file's. NotFoundError for a contexts file named but absent,
    /// InvalidArgument naming file:line for a line that is not a rule.
    [[nodiscard]] static FolderContexts read_contexts(const std::filesystem::path& root, const CorpusOptions& options) {
        namespace fs = std::filesystem;
        FolderContexts rules;
        std::error_code ec;
        const fs::path own = root / std::string(contexts_file_name);
        if (fs::is_regular_file(own, ec)) rules.append(FolderContexts::parse(detail::read_small_file(own), std::string(contexts_file_name)));
        if (!options.contexts_file.empty()) {
            if (!fs::is_regular_file(options.contexts_file, ec))
                throw NotFoundError("contexts file '" + options.contexts_file + "' not found");
            rules.append(FolderContexts::parse(detail::read_small_file(options.contexts_file), options.contexts_file));
        }
        return rules;
    }

    /// The key of a context command's answer: the command, the document's content hash,
    /// the chunk's first line and its text (a chunk of a changed document is asked again:
    /// its context may have changed with the document).
    [[nodiscard]] static std::uint64_t context_key(const std::string& command, std::uint64_t document_hash,
                                                   const Chunk& c) noexcept {
        std::uint64_t h = detail::fnv1a64(command);
        h = detail::fnv1a64(std::string_view("\0", 1), h);
        h = detail::fnv1a64(&document_hash, sizeof document_hash, h);
        const std::uint64_t line = c.first_line;
        h = detail::fnv1a64(&line, sizeof line, h);
        return detail::fnv1a64(c.raw, h);
    }

    /// The context command's answer for chunk `c` of `source`: its first non-empty line
    /// of output, trimmed, control characters made spaces, cut at max_context_bytes (on a
    /// character boundary). IoError naming the chunk when it fails, times out or writes
    /// text that is not UTF-8.
    [[nodiscard]] std::string ask_context_command(const Chunk& c, const Document& source) const {
        const std::string& command = scan_options.context_command;
        const nlohmann::json input{{"source", source.id},      {"document", source.text},
                                   {"chunk", c.raw},           {"heading_path", c.heading_path},
                                   {"first_line", c.first_line}, {"last_line", c.last_line}};
        const double seconds = scan_options.context_timeout;
        const auto out = detail::subprocess::run_shell(
            command, input.dump() + "\n",
            std::chrono::milliseconds(static_cast<long long>(std::max(0.001, seconds) * 1000)), 64 * 1024);
        const std::string where = "context command '" + command + "' for '" + c.id + "'";
        if (out.timed_out)
        {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%g", seconds);
            throw IoError(where + " did not answer within " + buf + " s (CorpusOptions::context_timeout, --context-timeout)");
        }
        if (out.status != 0) {
            std::string err = out.err.substr(0, out.err.find('\n'));
            throw IoError(where + " failed (exit status " + std::to_string(out.status) + ")" +
                          (err.empty() ? std::string() : ": " + err));
        }
        std::string line;
        for (std::size_t b = 0; b < out.out.size() && line.empty();) {
            std::size_t e = out.out.find('\n', b);
            if (e == std::string::npos) e = out.out.size();
            line = out.out.substr(b, e - b);
            for (char& ch : line)
                if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = ' ';
            const auto first = line.find_first_not_of(' ');
            line = first == std::string::npos ? std::string() : line.substr(first, line.find_last_not_of(' ') - first + 1);
            b = e + 1;
        }
        if (!text::is_valid_utf8(line)) throw IoError(where + " wrote text that is not valid UTF-8");
        if (line.size() > max_context_bytes) {
            std::size_t cut = max_context_bytes;
            while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;
            line.resize(cut);
        }
        return line;
    }

    /// Chunks one file of a folder corpus into the engine; records it in the manifest.
    /// A file not UTF-8 past the walk's first 8 KiB is left out (and its old chunks
    /// removed) as the walk leaves such a file out: false. `known`: context command
    /// answers by key (null when there is no command).
    bool index_file(const SourceFile& f, const ContextAnswers* known = nullptr) {
        Document source{f.path, detail::read_small_file(f.absolute), {}};
        if (const auto bad = text::find_invalid_utf8(source.text); bad != source.text.size()) {
            skipped.push_back({f.path, SkipReason::not_utf8, false, detail::corpus::utf8_place(source.text, bad)});
            if (manifest.find(f.path)) {
                docs->remove(f.path);
                manifest.erase(f.path);
                answers.erase(f.path);
            }
            return false;
        }
        const std::uint64_t hash = source_hash(source.text);
        ChunkOptions chunking = docs->options().chunking;
        const std::string folder = contexts.text_for(f.path);
        const std::string& command = scan_options.context_command;
        std::vector<std::string> chunk_contexts;  // per chunk, in order: what was added
        std::vector<std::pair<std::uint64_t, std::string>> asked;
        if (!folder.empty() || !command.empty())
            chunking.context_hook = [&](const Chunk& c, const Document& src) {
                std::string text = folder;
                if (!command.empty()) {
                    const std::uint64_t key = context_key(command, hash, c);
                    const auto it = known ? known->find(key) : ContextAnswers::const_iterator{};
                    std::string a = known && it != known->end() ? it->second : ask_context_command(c, src);
                    asked.emplace_back(key, a);
                    if (!a.empty()) text += (text.empty() ? "" : "\n") + a;
                }
                chunk_contexts.push_back(text);
                return text;
            };
        std::vector<Document> chunks;
        const auto pieces = chunk_document(source, chunking);
        for (std::size_t i = 0; i < pieces.size(); ++i) {
            Document d = document_with_raw_offset(pieces[i]);  // the evidence quotes the raw span
            if (i < chunk_contexts.size() && !chunk_contexts[i].empty() && !d.metadata.contains("context"))
                d.metadata["context"] = chunk_contexts[i];
            chunks.push_back(std::move(d));
        }
        (void)docs->update_chunks(f.path, std::move(chunks));
        manifest.replace(make_source_record(f, hash, {}));
        if (asked.empty()) answers.erase(f.path);
        else answers[f.path] = std::move(asked);
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
        FolderContexts contexts;          // folder: the rules read now
        std::size_t context_changed = 0;  // folder: files in diff.changed only for their contexts
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
            p.contexts = read_contexts(p.root, options);
            // Files whose contexts changed (the rules that apply to them, or the command)
            // are re-indexed though their content is the same.
            const bool command_changed = options.context_command != scan_options.context_command;
            if (command_changed || !(p.contexts == contexts)) {
                std::vector<std::string> still;
                for (const auto& path : p.diff.unchanged) {
                    if (!command_changed && contexts.text_for(path) == p.contexts.text_for(path)) {
                        still.push_back(path);
                        continue;
                    }
                    const auto it = std::lower_bound(p.scan.files.begin(), p.scan.files.end(), path,
                                                     [](const SourceFile& f, const std::string& x) { return f.path < x; });
                    p.diff.changed.push_back(*it);
                    ++p.context_changed;
                    std::erase_if(p.diff.touched, [&](const SourceFile& f) { return f.path == path; });
                }
                if (p.context_changed) {
                    p.diff.unchanged = std::move(still);
                    std::sort(p.diff.changed.begin(), p.diff.changed.end(),
                              [](const SourceFile& a, const SourceFile& b) { return a.path < b.path; });
                }
            }
        } else {
            detail::contexts::require_folder(false, corpus, options);
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
            docs.emplace(EngineHybrid(retriever_options(config), EngineBm25(AnyAnalyzer(config.analyzer), bm25_params(config)),
                                EngineVectors(make_any_embedder(config))),
                         collection_options(config));
            make_rerankers();
        }
        kind = new_kind;
        root = new_root;
        SyncCounts local;
        SyncCounts& c = counts ? *counts : local;
        if (kind != "folder") {
            detail::contexts::require_folder(false, corpus, scan_options);
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
            contexts = pl.planned ? pl.contexts : read_contexts(root, scan_options);
            const SourceDiff diff = pl.planned ? pl.diff : diff_sources(manifest, scan);
            for (const auto& path : diff.removed) {
                docs->remove(path);
                manifest.erase(path);
                answers.erase(path);
            }
            // The context command's answers known: an earlier generation's (a rebuild's
            // seed) and this one's, so only chunks not seen before are asked about.
            ContextAnswers known;
            if (!scan_options.context_command.empty()) {
                if (scan_options.known_contexts) known = *scan_options.known_contexts;
                for (const auto& [path, list] : answers)
                    for (const auto& [key, a] : list) known.emplace(key, a);
            }
            std::size_t done = 0, left_added = 0, left_changed = 0;  // left out: not UTF-8
            const std::size_t todo = diff.added.size() + diff.changed.size();
            for (const auto* list : {&diff.changed, &diff.added})
                for (const auto& f : *list) {
                    bool indexed = false;
                    try {
                        indexed = index_file(f, scan_options.context_command.empty() ? nullptr : &known);
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
            c.contexts = pl.planned ? pl.context_changed : 0;
            c.touched = diff.touched.size();
        }
        c.chunks = docs->retriever().size();
        c.sources = docs->source_count();
        scan_options.known_contexts.reset();  // a rebuild's seed, used: not kept
    }
};

}  // namespace ragpp
