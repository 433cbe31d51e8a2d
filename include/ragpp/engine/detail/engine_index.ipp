// ragpp detail: the Engine's configuration, opening, checking, saving and syncing
// (engine/engine.hpp declares them): inline in a header-only build, compiled once in
// src/engine_index.cpp with the compiled library (detail/compiled.hpp).
// Not a header to include on its own (hence .ipp): engine/engine.hpp includes it after
// the declarations, in order impl, index, query; so do src/engine_*.cpp.
#pragma once

namespace ragpp {

RAGPP_FUNC AnyAnalyzer::AnyAnalyzer(std::string name) : name_(std::move(name)) {
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

RAGPP_FUNC AnyEmbedder make_any_embedder(const EngineConfig& c) {
    const RolePrefixes prefixes{c.query_prefix, c.passage_prefix};
    if (c.embedder.starts_with("hashing:")) {  // hashing with another dimension
        check_embedder_spec(c.embedder);
        HashingOptions o;
        o.dimension = std::stoul(c.embedder.substr(8));
        o.prefixes = prefixes;
        return AnyEmbedder(HashingEmbedder(o), c.embedder);
    }
    EmbedderSettings s;
    if (!prefixes.query.empty() || !prefixes.passage.empty()) s.prefixes = prefixes;
    s.threads = c.threads;
    s.int8 = c.quantize == TransformerQuantization::int8;
    return with_embedder(c.embedder, s, [&](auto embedder) { return AnyEmbedder(std::move(embedder), c.embedder); });
}

RAGPP_FUNC std::shared_ptr<const CrossEncoderReranker> make_cross_encoder(const EngineConfig& c,
                                                                           std::string_view spec) {
    check_reranker_name(spec);
    if (!spec.starts_with("cross-encoder:")) throw InvalidArgument("'" + std::string(spec) + "' is not cross-encoder:DIR");
    CrossEncoderOptions o;
    o.threads = c.threads;
    o.quantize = c.quantize;
    return std::make_shared<const CrossEncoderReranker>(std::string(spec.substr(14)), o);
}

RAGPP_FUNC Engine Engine::build(const std::filesystem::path& corpus, EngineConfig config,
                                  const CorpusOptions& corpus_options, const EngineProgress& progress) {
    Engine e(std::move(config));
    e.impl_->scan_options = corpus_options;
    e.impl_->load(corpus, progress, nullptr);
    return e;
}

RAGPP_FUNC Engine Engine::open(const std::filesystem::path& dir, std::size_t threads,
                                 OpenOptions options) {
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

RAGPP_FUNC Engine Engine::check(const std::filesystem::path& dir, std::size_t threads) {
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

RAGPP_FUNC std::uint64_t Engine::save(const std::filesystem::path& dir) const {
    const auto& im = *impl_;
    const auto& r = im.docs->retriever();
    GenerationWriter w(dir);
    r.store().save(w.path("documents.bin"));
    write_sources(w.path("sources.bin"), im.manifest);
    im.docs->save_parts(w.path("places.bin"), w.path("metadata.bin"));
    write_corpus_part(w.path("corpus.json"));
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

RAGPP_FUNC SyncCounts Engine::sync(const std::filesystem::path& corpus, const CorpusOptions& corpus_options,
                const EngineProgress& progress) {
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
            impl_->contexts = std::move(plan.contexts);  // rules that changed no file's contexts
        }
        impl_->root = plan.root;
        impl_->scan_options = corpus_options;
        impl_->scan_options.known_contexts.reset();
        SyncCounts counts;
        counts.unchanged = plan.kind == "folder" ? plan.diff.unchanged.size() : 1;
        counts.touched = plan.diff.touched.size();
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

RAGPP_FUNC SyncCounts Engine::pending(const std::filesystem::path& corpus, const CorpusOptions& corpus_options) const {
    const Impl::Plan plan = impl_->plan(corpus, corpus_options);
    if (plan.kind != impl_->kind)
        throw InvalidArgument("corpus '" + corpus.string() + "' is a " + plan.kind + " corpus, the index was built from a " +
                              impl_->kind + " corpus");
    SyncCounts c;
    if (plan.kind == "folder") {
        c.added = plan.diff.added.size();
        c.changed = plan.diff.changed.size();
        c.removed = plan.diff.removed.size();
        c.unchanged = plan.diff.unchanged.size();
        c.contexts = plan.context_changed;
        c.touched = plan.diff.touched.size();
    } else {
        (plan.single_fresh ? c.unchanged : c.changed) = 1;
    }
    c.chunks = impl_->docs->retriever().size();
    c.sources = impl_->docs->source_count();
    return c;
}

RAGPP_FUNC nlohmann::json Engine::config_to_json(const EngineConfig& c) {
    nlohmann::json j{{"analyzer", c.analyzer},     {"embedder", c.embedder}, {"query_prefix", c.query_prefix},
                     {"passage_prefix", c.passage_prefix}, {"quantize", std::string(to_string(c.quantize))}, {"variant", std::string(to_string(c.variant))},
                     {"delta", c.delta},           {"max_tokens", c.max_tokens},
                     {"unlabeled", c.unlabeled == Unlabeled::allow ? "public" : "private"},
                     {"overlap", c.overlap ? nlohmann::json(*c.overlap) : nlohmann::json(nullptr)},
                     {"k1", c.search.k1},                 {"b", c.search.b},               {"rrf_k", c.search.rrf_k},
                     {"weights", c.search.weights},       {"candidates", c.search.candidates}, {"per_source", c.search.per_source},
                     {"rerank_candidates", c.search.rerank_candidates}, {"rerank_weight", c.search.rerank_weight}};
    j["field_weights"] = c.search.field_weights ? nlohmann::json{c.search.field_weights->title, c.search.field_weights->headings,
                                                          c.search.field_weights->path}
                                         : nlohmann::json(nullptr);
    return j;
}

RAGPP_FUNC EngineConfig Engine::config_from_json(const nlohmann::json& j) {
    EngineConfig c;
    c.analyzer = j.at("analyzer").get<std::string>();
    c.embedder = j.at("embedder").get<std::string>();
    c.query_prefix = j.at("query_prefix").get<std::string>();
    c.passage_prefix = j.at("passage_prefix").get<std::string>();
    try {  // names written by an index's config.json, typed here
        c.quantize = parse_transformer_quantization(j.at("quantize").get<std::string>());
        c.variant = parse_bm25_variant(j.at("variant").get<std::string>());
    } catch (const InvalidArgument& e) {
        throw FormatError(std::string("settings: ") + e.what());
    }
    c.delta = j.at("delta").get<double>();
    c.max_tokens = j.at("max_tokens").get<std::size_t>();
    if (!j.at("overlap").is_null()) c.overlap = j["overlap"].get<std::size_t>();
    const std::string unlabeled = j.value("unlabeled", std::string("public"));  // absent: written before the setting
    if (unlabeled != "public" && unlabeled != "private")
        throw FormatError("settings: unlabeled must be public or private, not '" + unlabeled + "'");
    c.unlabeled = unlabeled == "public" ? Unlabeled::allow : Unlabeled::deny;
    c.search.k1 = j.at("k1").get<double>();
    c.search.b = j.at("b").get<double>();
    c.search.rrf_k = j.at("rrf_k").get<double>();
    c.search.weights = j.at("weights").get<std::vector<double>>();
    c.search.candidates = j.at("candidates").get<std::size_t>();
    c.search.per_source = j.at("per_source").get<std::size_t>();
    c.search.rerank_candidates = j.at("rerank_candidates").get<std::size_t>();
    c.search.rerank_weight = j.at("rerank_weight").get<double>();
    if (const auto& f = j.at("field_weights"); !f.is_null()) {
        const auto w = f.get<std::vector<double>>();
        if (w.size() != 3) throw FormatError("settings: field_weights needs 3 numbers");
        c.search.field_weights = FieldWeights{w[0], w[1], w[2]};
    }
    try {
        c.search.validate();
    } catch (const InvalidArgument& e) {
        throw FormatError(std::string("settings: ") + e.what());
    }
    return c;
}

RAGPP_FUNC Engine Engine::open_parts(const std::filesystem::path& dir, const OpenedGeneration& g, std::size_t threads,
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
    auto bm25 = EngineBm25::load(g.dir / "bm25.idx", AnyAnalyzer(c.analyzer), parts);
    auto vectors = EngineVectors::load(g.dir / "vector.idx", make_any_embedder(c), VectorIndexOptions{}, parts);
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
    EngineHybrid hybrid(std::move(store), retriever_options(c), std::move(bm25), std::move(vectors));
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
    {
        std::error_code ec;
        if (std::filesystem::exists(g.dir / "corpus.json", ec))
            read_part("corpus.json", [&](const std::filesystem::path& p) {
                e.read_corpus_part(p);
                return 0;
            });
    }
    im.manifest = std::move(manifest);
    im.root = std::move(root);
    im.kind = std::move(kind);
    im.generation = g.generation;
    im.make_rerankers();
    return e;
}

RAGPP_FUNC void Engine::write_corpus_part(const std::filesystem::path& path) const {
    const auto& im = *impl_;
    const CorpusOptions& o = im.scan_options;
    nlohmann::json rules = nlohmann::json::array();
    for (const auto& r : im.contexts.rules())
        rules.push_back({{"pattern", r.pattern}, {"folders_only", r.folders_only}, {"text", r.text}, {"origin", r.origin}});
    nlohmann::json answers = nlohmann::json::object();
    for (const auto& [source, list] : im.answers) {
        auto& a = answers[source] = nlohmann::json::array();
        for (const auto& [key, text] : list) a.push_back({detail::hex64(key), text});
    }
    const nlohmann::json j{{"format", "ragpp-corpus"},
                           {"version", 1},
                           {"walk",
                            {{"extensions", o.extensions},
                             {"follow_symlinks_outside", o.follow_symlinks_outside},
                             {"skip_unreadable", o.skip_unreadable},
                             {"hidden", o.hidden},
                             {"ignore_files", o.ignore_files}}},
                           {"contexts",
                            {{"file", o.contexts_file},
                             {"command", o.context_command},
                             {"timeout", o.context_timeout},
                             {"rules", rules},
                             {"answers", answers}}}};
    detail::write_whole_file(path, j.dump() + "\n", false);  // commit() syncs every part
}

RAGPP_FUNC void Engine::read_corpus_part(const std::filesystem::path& path) {
    auto& im = *impl_;
    const std::string text = detail::read_small_file(path);
    try {
        const auto j = nlohmann::json::parse(text);
        if (j.at("format") != "ragpp-corpus" || j.at("version") != 1)
            throw FormatError("corpus.json: not a version 1 ragpp-corpus part");
        CorpusOptions o;
        const auto& w = j.at("walk");
        o.extensions = w.at("extensions").get<std::vector<std::string>>();
        o.follow_symlinks_outside = w.at("follow_symlinks_outside").get<bool>();
        o.skip_unreadable = w.at("skip_unreadable").get<bool>();
        o.hidden = w.at("hidden").get<bool>();
        o.ignore_files = w.at("ignore_files").get<bool>();
        const auto& c = j.at("contexts");
        o.contexts_file = c.at("file").get<std::string>();
        o.context_command = c.at("command").get<std::string>();
        o.context_timeout = c.at("timeout").get<double>();
        FolderContexts rules;
        for (const auto& r : c.at("rules"))
            rules.add({r.at("pattern").get<std::string>(), r.at("folders_only").get<bool>(), r.at("text").get<std::string>(),
                       r.at("origin").get<std::string>()});
        decltype(im.answers) answers;
        for (const auto& [source, list] : c.at("answers").items()) {
            auto& out = answers[source];
            for (const auto& a : list) {
                const auto hex = a.at(0).get<std::string>();
                const auto key = detail::parse_hex64(hex);
                if (!key) throw FormatError("corpus.json: answer key '" + hex + "' is not 16 hex digits");
                out.emplace_back(*key, a.at(1).get<std::string>());
            }
        }
        im.scan_options = std::move(o);
        im.contexts = std::move(rules);
        im.answers = std::move(answers);
    } catch (const nlohmann::json::exception& e) {
        throw FormatError(std::string("corpus.json: ") + e.what());
    }
}

RAGPP_FUNC const CorpusOptions& Engine::corpus_options() const noexcept { return impl_->scan_options; }
RAGPP_FUNC const FolderContexts& Engine::contexts() const noexcept { return impl_->contexts; }
RAGPP_FUNC ContextAnswers Engine::context_answers() const {
    ContextAnswers out;
    for (const auto& [source, list] : impl_->answers)
        for (const auto& [key, a] : list) out.emplace(key, a);
    return out;
}

RAGPP_FUNC void Engine::write_sources(const std::filesystem::path& path, const SourceManifest& manifest) {
    detail::BinaryWriter w(path);
    w.u64(manifest.size());
    for (const SourceRecord* r : manifest.records()) {
        w.str(r->path);
        w.u64(r->size);
        w.put(r->mtime_ns);
        w.put(r->scanned_ns);
        w.u64(r->hash);
    }
    w.save(path, detail::engine::sources_format);
}

RAGPP_FUNC SourceManifest Engine::read_sources(const std::filesystem::path& path, OpenOptions options) {
    const detail::FileBytes bytes(path, false);  // small: one record a source
    detail::BinaryReader in(bytes.view(), detail::engine::sources_format, path.string(), options.verify);
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

RAGPP_FUNC RetrieverOptions Engine::retriever_options(const EngineConfig& c) { return {c.search.rrf_k, c.search.weights, c.search.candidates}; }

RAGPP_FUNC BM25Params Engine::bm25_params(const EngineConfig& c) {
    BM25Params p;
    p.variant = c.variant;
    p.k1 = c.search.k1;
    p.b = c.search.b;
    p.delta = c.delta;
    return p;
}

RAGPP_FUNC CollectionOptions Engine::collection_options(const EngineConfig& c) {
    CollectionOptions o;
    o.chunking.max_tokens = c.max_tokens;
    o.chunking.overlap = c.overlap;
    o.access = AccessPolicy(c.unlabeled);
    return o;
}

RAGPP_FUNC Engine::Engine(EngineConfig config) : impl_(std::make_unique<Impl>()) {
    with_analyzer(config.analyzer, [](auto) { return 0; });
    collection_options(config).chunking.validate("EngineConfig");
    config.search.validate();
    impl_->config = std::move(config);
}
RAGPP_FUNC Engine::Engine(Engine&&) noexcept = default;
RAGPP_FUNC Engine& Engine::operator=(Engine&&) noexcept = default;
RAGPP_FUNC Engine::~Engine() = default;

}  // namespace ragpp
