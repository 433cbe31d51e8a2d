// ragpp detail: the Engine's queries (search, answer, evaluate, hints and accessors;
// engine/engine.hpp declares them): inline in a header-only build, compiled once in
// src/engine_query.cpp with the compiled library (detail/compiled.hpp).
// Not a header to include on its own (hence .ipp): engine/engine.hpp includes it after
// the declarations, in order impl, index, query; so do src/engine_*.cpp.
#pragma once

namespace ragpp {

RAGPP_FUNC Filter Engine::query_filter(const EngineQuery& q) {
    if (q.filter.empty()) return parse_filters(q.filters);
    Filter f = parse_filter(q.filter);
    return q.filters.empty() ? f : std::move(f) && parse_filters(q.filters);
}

RAGPP_FUNC EngineResults Engine::search(std::string_view query, const EngineQuery& q) const {
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
    const SearchSettings& settings = im.settings(q.search);
    for (;;) {
        auto o = im.options(q.mode, settings);
        o.allowed = allowed;
        o.index<0>().statistics = statistics;
        auto results = im.run(query, q.k, o, settings, q.reranker);
        const auto engine_results = [&results] {
            std::vector<EngineResult> r;
            r.reserve(results.size());
            for (auto& res : results) static_cast<Result&>(r.emplace_back()) = std::move(res);
            return r;
        };
        if (!q.check_sources) {
            out.results = engine_results();
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
        out.results = engine_results();
        for (auto& res : out.results)
            if (const std::string* source = im.docs->source_of(res.id)) res.stale = checked[*source] == Freshness::changed;
        break;
    }
    for (const auto& [source, f] : checked) {
        if (f == Freshness::deleted) out.deleted_sources.push_back(source);
        if (f == Freshness::changed) out.stale_sources.push_back(source);
    }
    return out;
}

RAGPP_FUNC EngineAnswer Engine::answer(std::string_view question, const EngineQuery& q,
                                  AnswerOptions options) const {
    options.passages = q.k;
    options.validate();
    auto found = search(question, q);
    std::vector<Result> ranked;
    std::set<DocId> stale;
    ranked.reserve(found.results.size());
    for (auto& r : found.results) {
        if (r.stale) stale.insert(r.id);
        ranked.push_back(std::move(static_cast<Result&>(r)));
    }
    EngineAnswer out;
    static_cast<Answer&>(out) =
        ragpp::answer(question, std::move(ranked), impl_->docs->retriever().index<0>().analyzer(),
                      term_statistics(q.principal), options, q.reranker.starts_with("cross-encoder:"), neighbours(),
                      [&stale](const Result& r) { return stale.contains(r.id); });
    out.stale_sources = std::move(found.stale_sources);
    out.deleted_sources = std::move(found.deleted_sources);
    return out;
}

RAGPP_FUNC PipelineReport Engine::evaluate(const QuestionSet& questions, const EvaluationOptions& options) const {
    const auto& im = *impl_;
    check_reranker_name(options.reranker);
    options.answer.validate();
    const SearchSettings& settings = im.settings(options.search);
    auto o = im.options(options.mode, settings);
    if (options.mode == SearchMode::hybrid && !options.weights.empty()) o.weights = options.weights;
    o.allowed = std::make_shared<const DocSet>(im.docs->allowed(Filter::all(), options.principal));
    o.index<0>().statistics = im.reader_statistics(options.principal);
    const std::size_t depth = std::max(options.depth ? options.depth : settings.candidates, options.answer.passages);
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
            auto results = im.run(q, depth, o, settings, options.reranker, &t, &rerank);
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

namespace detail::reopen {

/// "path", "path:L", "path:L#N" or "path:A-B" split into the path and the lines (0: none).
struct Spec {
    std::string path;
    std::size_t first = 0, last = 0;
    bool range = false;
};

inline std::optional<std::size_t> line_number(std::string_view s) {
    if (s.empty() || s.size() > 9) return std::nullopt;
    std::size_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + static_cast<std::size_t>(c - '0');
    }
    return v;
}

inline Spec parse_spec(std::string_view spec) {
    if (spec.empty()) throw InvalidArgument("reopen: the source is empty (expected path, path:line or path:first-last)");
    const auto colon = spec.rfind(':');
    if (colon != std::string_view::npos && colon > 0) {
        std::string_view lines = spec.substr(colon + 1);
        if (const auto hash = lines.find('#'); hash != std::string_view::npos && line_number(lines.substr(hash + 1)))
            lines = lines.substr(0, hash);  // a chunk id: its section
        const auto dash = lines.find('-');
        const auto a = line_number(dash == std::string_view::npos ? lines : lines.substr(0, dash));
        const auto b = dash == std::string_view::npos ? a : line_number(lines.substr(dash + 1));
        if (a && b) {
            if (*a == 0 || *b < *a)
                throw InvalidArgument("reopen: lines '" + std::string(lines) + "' of '" + std::string(spec.substr(0, colon)) +
                                      "': lines are numbered from 1, the first no greater than the last");
            return {std::string(spec.substr(0, colon)), *a, *b, dash != std::string_view::npos};
        }
    }
    return {std::string(spec), 0, 0, false};
}

inline const std::string* text_field(const Document& d, const char* key) {
    const auto it = d.metadata.find(key);
    return it == d.metadata.end() ? nullptr : std::get_if<std::string>(&it->second);
}

inline std::size_t number_field(const Document& d, const char* key) {
    const auto it = d.metadata.find(key);
    const double* v = it == d.metadata.end() ? nullptr : std::get_if<double>(&it->second);
    return v && *v >= 0 ? static_cast<std::size_t>(*v) : 0;
}

/// "path:first-last", "path:first" or "path".
inline std::string citation(const std::string& path, std::size_t first, std::size_t last) {
    if (first == 0) return path;
    return path + ":" + std::to_string(first) + (last > first ? "-" + std::to_string(last) : std::string());
}

}  // namespace detail::reopen

RAGPP_FUNC SourceText Engine::reopen(std::string_view spec, const Principal& reader) const {
    namespace ro = detail::reopen;
    const auto& im = *impl_;
    const ro::Spec s = ro::parse_spec(spec);
    if (im.kind != "folder")
        throw InvalidArgument("reopen: the index's corpus is a single " + im.kind +
                              " file: its documents have no lines to reopen (search returns their text)");
    // One answer for a path that is not a source and one the reader may not read in full.
    const NotFoundError unknown("reopen: no source '" + s.path + "' that this reader may read in the index");
    const SourceRecord* record = im.manifest.find(s.path);
    const auto chunks = im.docs->sources().find(s.path);
    if (record == nullptr || chunks == im.docs->sources().end() || chunks->second.empty()) throw unknown;
    const auto allowed = im.docs->allowed(Filter::all(), reader);
    for (DocId id : chunks->second)
        if (!allowed.test(id)) throw unknown;

    SourceText out;
    out.source = s.path;
    std::size_t first = s.first, last = s.last;
    if (first != 0 && !s.range) {
        // The section: the one whose heading is on that line, else the one holding it.
        const std::string wanted = s.path + ":" + std::to_string(first);
        const auto& r = im.docs->retriever();
        struct Part {
            std::string section;
            std::size_t first, last;
        };
        std::vector<Part> parts;
        for (DocId id : chunks->second)
            if (auto d = r.document(id)) {
                const std::string* section = ro::text_field(*d, "section");
                parts.push_back({section ? *section : d->id, ro::number_field(*d, "first_line"),
                                 ro::number_field(*d, "last_line")});
            }
        // A section spans from its heading's line (its id's) to its last chunk's last line.
        auto heading_line = [](const std::string& section) {
            const auto n = ro::line_number(std::string_view(section).substr(section.rfind(':') + 1));
            return n ? *n : std::size_t{0};
        };
        std::string section;
        for (const auto& p : parts)
            if (p.section == wanted) section = wanted;
        if (section.empty()) {
            std::map<std::string, std::pair<std::size_t, std::size_t>> spans;
            for (const auto& p : parts) {
                auto [it, added] = spans.try_emplace(p.section, std::min(heading_line(p.section), p.first), p.last);
                if (!added) {
                    it->second.first = std::min(it->second.first, p.first);
                    it->second.second = std::max(it->second.second, p.last);
                }
            }
            for (const auto& [name, span] : spans)
                if (span.first != 0 && span.first <= first && first <= span.second) section = name;
        }
        if (section.empty())
            throw InvalidArgument("reopen: line " + std::to_string(first) + " of '" + s.path +
                                  "' is in no indexed section (ask for lines with path:first-last)");
        out.section = section;
        first = heading_line(section);
        if (first == 0) first = std::numeric_limits<std::size_t>::max();
        last = 0;
        for (const auto& p : parts)
            if (p.section == section) {
                first = std::min(first, p.first);
                last = std::max(last, p.last);
            }
    }
    const Freshness state = check_source(im.root, *record);
    out.deleted = state == Freshness::deleted;
    out.changed = state != Freshness::fresh;
    out.citation = ro::citation(s.path, first, last);
    if (out.deleted) return out;

    const std::string text = normalize_source(s.path, detail::read_regular_file(im.root / s.path));
    std::vector<std::string_view> lines;
    for (std::size_t b = 0; b <= text.size();) {
        const auto e = text.find('\n', b);
        if (e == std::string::npos) {
            if (b < text.size()) lines.emplace_back(text.data() + b, text.size() - b);
            break;
        }
        lines.emplace_back(text.data() + b, e - b);
        b = e + 1;
    }
    out.line_count = lines.size();
    if (first == 0) {
        first = lines.empty() ? 0 : 1;
        last = lines.size();
    } else if (first > lines.size()) {
        if (!out.changed)
            throw InvalidArgument("reopen: line " + std::to_string(first) + " of '" + s.path + "' is past its end (" +
                                  std::to_string(lines.size()) + " lines)");
        first = last = 0;  // the file shrank: nothing left at those lines
    } else {
        last = std::min(last, lines.size());
    }
    out.first_line = first;
    out.last_line = last;
    for (std::size_t i = first; i != 0 && i <= last; ++i) {
        if (i > first) out.text += '\n';
        out.text += lines[i - 1];
    }
    return out;
}

RAGPP_FUNC IndexStatus Engine::status(const Principal& reader) const {
    const auto& im = *impl_;
    IndexStatus out;
    out.generation = im.generation;
    out.corpus_root = im.root.string();
    const auto allowed = im.docs->allowed(Filter::all(), reader);
    for (const auto& [source, ids] : im.docs->sources()) {
        std::size_t readable = 0;
        for (DocId id : ids) readable += allowed.test(id) ? 1 : 0;
        if (readable == 0) continue;
        out.chunks += readable;
        ++out.sources;
        if (const SourceRecord* rec = im.manifest.find(source)) {
            const Freshness f = check_source(im.root, *rec);
            if (f == Freshness::changed) out.changed_sources.push_back(source);
            if (f == Freshness::deleted) out.deleted_sources.push_back(source);
        }
    }
    return out;
}

RAGPP_FUNC std::vector<std::string> Engine::readable_chunk_ids(const Principal& reader) const {
    const auto allowed = impl_->docs->allowed(Filter::all(), reader);
    const auto& r = impl_->docs->retriever();
    std::vector<std::string> out;
    for (DocId id = 0; id < r.store().capacity(); ++id)
        if (allowed.test(id))
            if (auto d = r.document(id)) out.push_back(d->id);
    return out;
}

RAGPP_FUNC std::string Engine::filter_hint(const std::string& filter, const Principal& reader) const {
    if (filter.empty()) return {};
    return filter_hint(std::vector<std::string>{filter}, reader);
}

RAGPP_FUNC std::string Engine::filter_hint(const std::vector<std::string>& filters, const Principal& reader) const {
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

RAGPP_FUNC TermStatistics Engine::term_statistics(const Principal& reader) const {
    return impl_->term_statistics(reader);
}

RAGPP_FUNC ProximityBreakdown Engine::explain(std::string_view question, const Document& doc) const {
    return impl_->proximity->explain(question, doc.text);
}

RAGPP_FUNC NeighbourFn Engine::neighbours() const { return collection_neighbours(*impl_->docs); }

RAGPP_FUNC LabelCheck Engine::resolve_labels(QuestionSet& questions, const std::vector<std::string>& prefixes) const {
    std::vector<std::string> ids;
    for_each_chunk([&](const Document& d) { ids.push_back(d.id); });
    return ragpp::resolve_labels(questions, std::move(ids), prefixes);
}

RAGPP_FUNC const EngineConfig& Engine::config() const noexcept { return impl_->config; }

RAGPP_FUNC void Engine::set_search_defaults(SearchSettings settings) {
    settings.validate();
    impl_->config.search = std::move(settings);
}

RAGPP_FUNC std::size_t Engine::size() const noexcept { return impl_->docs->retriever().size(); }
RAGPP_FUNC std::size_t Engine::source_count() const noexcept { return impl_->docs->source_count(); }

RAGPP_FUNC const Engine::Documents& Engine::documents() const noexcept { return *impl_->docs; }

RAGPP_FUNC void Engine::for_each_chunk(const std::function<void(const Document&)>& f) const {
    const auto& r = documents().retriever();
    for (DocId id = 0; id < r.store().capacity(); ++id)
        if (auto d = r.document(id)) f(*d);
}

RAGPP_FUNC const SourceManifest& Engine::manifest() const noexcept { return impl_->manifest; }

RAGPP_FUNC const std::filesystem::path& Engine::corpus_root() const noexcept { return impl_->root; }
RAGPP_FUNC const std::string& Engine::corpus_kind() const noexcept { return impl_->kind; }

RAGPP_FUNC const std::vector<std::string>& Engine::notes() const noexcept { return impl_->notes; }

RAGPP_FUNC const std::vector<SkippedPath>& Engine::skipped() const noexcept { return impl_->skipped; }

RAGPP_FUNC std::vector<std::pair<std::string, std::string>> Engine::locked_sources() const {
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

RAGPP_FUNC std::uint64_t Engine::generation() const noexcept { return impl_->generation; }
}  // namespace ragpp
