// ragpp detail: index_folder (engine/index_folder.hpp declares it): inline in a
// header-only build, compiled once in src/engine_index.cpp with the compiled library
// (detail/compiled.hpp).
// Not a header to include on its own (hence .ipp): engine/index_folder.hpp includes it
// after engine/engine.hpp; so does src/engine_index.cpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <sstream>
#include <system_error>

#include <ragpp/io/generations.hpp>

namespace ragpp {

RAGPP_FUNC EngineConfig IndexSettings::over(EngineConfig base) const {
    if (analyzer) base.analyzer = *analyzer;
    if (embedder) base.embedder = *embedder;
    if (query_prefix) base.query_prefix = *query_prefix;
    if (passage_prefix) base.passage_prefix = *passage_prefix;
    if (quantize) base.quantize = *quantize;
    if (variant) base.variant = *variant;
    if (delta) base.delta = *delta;
    if (max_tokens) base.max_tokens = *max_tokens, base.overlap = overlap;  // its own overlap, or the default
    if (overlap) base.overlap = overlap;
    if (unlabeled) base.unlabeled = *unlabeled;
    return base;
}

RAGPP_FUNC std::string_view index_action_name(IndexAction a) noexcept {
    switch (a) {
        case IndexAction::built: return "built";
        case IndexAction::updated: return "updated";
        case IndexAction::rebuilt_unreadable: return "rebuilt_unreadable";
        case IndexAction::rebuilt_settings: return "rebuilt_settings";
    }
    return "?";
}

RAGPP_FUNC std::string index_settings_difference(const EngineConfig& a, const EngineConfig& b) {
    std::ostringstream out;
    auto quoted = [](const std::string& s) { return "'" + s + "'"; };
    auto item = [&](const char* name, const std::string& x, const std::string& y) {
        if (x == y) return;
        if (out.tellp() > 0) out << ", ";
        out << "--" << name << " " << x << " -> " << y;
    };
    auto number = [](double v) {
        std::ostringstream s;
        s << v;
        return s.str();
    };
    auto overlap = [](const EngineConfig& c) {
        return c.overlap ? std::to_string(*c.overlap) : "default(" + std::to_string(c.max_tokens * 15 / 100) + ")";
    };
    auto unlabelled = [](Unlabeled u) { return std::string(u == Unlabeled::allow ? "public" : "private"); };
    item("analyzer", a.analyzer, b.analyzer);
    item("embedder", a.embedder, b.embedder);
    item("query-prefix", quoted(a.query_prefix), quoted(b.query_prefix));
    item("passage-prefix", quoted(a.passage_prefix), quoted(b.passage_prefix));
    item("quantize", std::string(to_string(a.quantize)), std::string(to_string(b.quantize)));
    item("variant", std::string(to_string(a.variant)), std::string(to_string(b.variant)));
    if (a.delta != b.delta) item("delta", number(a.delta), number(b.delta));
    item("max-tokens", std::to_string(a.max_tokens), std::to_string(b.max_tokens));
    if (a.overlap != b.overlap) item("overlap", overlap(a), overlap(b));
    item("unlabelled", unlabelled(a.unlabeled), unlabelled(b.unlabeled));
    return out.str();
}

namespace detail::index_folder {

/// `p` absolute, resolved through the links of its existing part, without a trailing '/'.
inline std::filesystem::path resolved(const std::filesystem::path& p, std::error_code& ec) {
    std::filesystem::path r = std::filesystem::weakly_canonical(std::filesystem::absolute(p, ec), ec);
    if (!ec && r.filename().empty()) r = r.parent_path();  // "corpus/" -> "corpus"
    return r;
}

/// `f()`, an InvalidArgument it throws made an IndexRequestError with the same message.
template <class F>
void as_request(F&& f) {
    try {
        f();
    } catch (const IndexRequestError&) {
        throw;
    } catch (const InvalidArgument& e) {
        std::string m = e.what();  // "[ragpp.invalid_argument] ...": the category is said again
        if (const auto end = m.find("] "); m.starts_with("[ragpp.") && end != std::string::npos) m.erase(0, end + 2);
        throw IndexRequestError(m);
    }
}

/// The checks of `c` that do not depend on an existing index: names and kinds.
inline void check_names(const EngineConfig& c) {
    as_request([&] {
        with_analyzer(c.analyzer, [](auto) { return 0; });
        check_embedder_spec(c.embedder);
    });
    if (!(c.delta >= 0) || !std::isfinite(c.delta)) throw IndexRequestError("BM25 delta must be a finite number >= 0");
}

/// The chunking of `c`: max_tokens >= 1, overlap < max_tokens.
inline void check_chunking(const EngineConfig& c) {
    ChunkOptions o;
    o.max_tokens = c.max_tokens;
    o.overlap = c.overlap;
    as_request([&] { o.validate("chunking"); });
}

/// Whether `corpus` is a folder of files (not a .jsonl file, nor a BEIR folder).
inline bool is_file_corpus(const std::filesystem::path& corpus) {
    std::error_code ec;
    return std::filesystem::is_directory(corpus, ec) && !std::filesystem::exists(corpus / "corpus.jsonl", ec);
}

}  // namespace detail::index_folder

RAGPP_FUNC void check_index_folder_location(const std::filesystem::path& corpus, const std::filesystem::path& out) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(corpus, ec)) return;  // a .jsonl file: nothing is walked
    const fs::path root = detail::index_folder::resolved(corpus, ec), dir = detail::index_folder::resolved(out, ec);
    if (ec) return;  // the build says what is wrong
    const auto [r, d] = std::mismatch(root.begin(), root.end(), dir.begin(), dir.end());
    if (r != root.end()) return;  // not inside
    throw IndexRequestError("index folder '" + out.string() + "' is " +
                            (d == dir.end() ? std::string("the corpus folder")
                                            : "inside the corpus folder '" + corpus.string() + "'") +
                            ": the index would be part of the corpus it indexes; write it elsewhere");
}

RAGPP_FUNC void check_index_settings(const EngineConfig& c) {
    detail::index_folder::check_names(c);
    detail::index_folder::check_chunking(c);
}

RAGPP_FUNC IndexFolderReport index_folder(const std::filesystem::path& corpus, const std::filesystem::path& out,
                                          const IndexFolderOptions& options) {
    // Every mistake of the request before anything is read or written. The chunking is
    // checked against the index's own max_tokens when there is one (below).
    check_index_folder_location(corpus, out);
    detail::index_folder::check_names(options.settings.over(EngineConfig{}));
    if (!options.settings.overlap || options.settings.max_tokens)
        detail::index_folder::check_chunking(options.settings.over(EngineConfig{}));
    remove_partial_generations(out);  // what a killed run left (docs/persistence.md)

    IndexFolderReport report;
    std::optional<Engine> engine;
    if (!options.rebuild) {
        try {
            // Verified: the chunks carried over into the new generation must be intact.
            engine.emplace(Engine::open(out, options.threads, OpenOptions{.mmap = true, .verify = true}));
        } catch (const NotFoundError&) {  // no index there yet
        } catch (const FormatError& e) {
            // An index of an older ragpp, or a damaged one: a new generation is built
            // beside it (the old files stay until the switch).
            report.action = IndexAction::rebuilt_unreadable;
            report.reason = e.what();
        }
    }
    EngineConfig config = options.settings.over(engine ? engine->config() : EngineConfig{});
    config.threads = options.threads;
    detail::index_folder::check_chunking(config);  // an overlap given against the index's max_tokens
    if (engine && !same_index_settings(engine->config(), config)) {
        report.action = IndexAction::rebuilt_settings;
        report.reason = index_settings_difference(engine->config(), config);
    }
    // The walk: as asked, else the index's. The contexts: as asked, else the index's.
    const CorpusOptions saved = engine ? engine->corpus_options() : CorpusOptions{};
    CorpusOptions scan = options.corpus.value_or(saved);
    if (options.contexts_file) {
        scan.contexts_file.clear();
        if (!options.contexts_file->empty()) {
            std::error_code ec;
            const auto abs = std::filesystem::absolute(*options.contexts_file, ec).lexically_normal();
            if (!std::filesystem::is_regular_file(abs, ec))
                throw IndexRequestError("contexts file '" + *options.contexts_file + "' not found");
            scan.contexts_file = abs.string();
        }
    } else {
        scan.contexts_file = saved.contexts_file;
        std::error_code ec;
        if (!scan.contexts_file.empty() && !std::filesystem::is_regular_file(scan.contexts_file, ec))
            throw IndexRequestError("the contexts file '" + scan.contexts_file +
                                    "' the index was built with is gone: name one with --contexts FILE, or stop "
                                    "using one with --contexts none");
    }
    scan.context_command = options.context_command.value_or(saved.context_command);
    scan.context_timeout = options.context_timeout.value_or(saved.context_timeout);
    if (!(scan.context_timeout > 0) || !std::isfinite(scan.context_timeout))
        throw IndexRequestError("the context command's timeout must be a number of seconds > 0");
    detail::index_folder::as_request(
        [&] { detail::contexts::require_folder(detail::index_folder::is_file_corpus(corpus), corpus, scan); });
    if (engine && !scan.context_command.empty())  // a rebuild asks only about chunks not seen
        scan.known_contexts = std::make_shared<const ContextAnswers>(engine->context_answers());
    if (engine && report.action == IndexAction::rebuilt_settings) engine.reset();

    if (engine) report.action = IndexAction::updated;
    if (options.decided) options.decided(report);
    if (engine) {
        report.counts = engine->sync(corpus, scan, options.progress);
    } else {
        engine.emplace(Engine::build(corpus, config, scan, options.progress));
        report.counts.added = engine->documents().source_count();
        report.counts.chunks = engine->size();
        report.counts.sources = engine->documents().source_count();
    }
    report.generation = engine->save(out);
    report.config = engine->config();
    report.files = detail::index_folder::is_file_corpus(corpus);
    report.notes = engine->notes();
    report.skipped = engine->skipped();
    report.locked = engine->locked_sources();
    report.context_rules = engine->contexts().rules().size();
    for (const auto& rule : engine->contexts().rules()) {
        bool used = false;
        for (const SourceRecord* rec : engine->manifest().records())
            if ((used = FolderContexts::applies(rule, rec->path))) break;
        if (!used) report.unused_context_rules.push_back(rule.origin + ": " + (rule.pattern.empty() ? "/" : rule.pattern) +
                                                         (rule.folders_only && !rule.pattern.empty() ? "/" : ""));
    }
    return report;
}

RAGPP_FUNC std::optional<IndexFolderReport> update_if_pending(const Engine& current, const std::filesystem::path& out,
                                                              std::size_t threads) {
    if (current.corpus_kind() != "folder")
        throw InvalidArgument("the index in '" + out.string() + "' is of a single-file corpus: watching re-indexes a folder of files");
    const SyncCounts p = current.pending(current.corpus_root(), current.corpus_options());
    // Touched files alone (same content, another mtime) commit nothing: a file edited in the
    // last 2 s stays "racily clean" (io/sources.hpp) after a refresh, so each look would
    // commit again; they are re-hashed at each look until a real change records them.
    if (p.added + p.changed + p.removed == 0) return std::nullopt;
    IndexFolderOptions o;
    o.corpus = current.corpus_options();  // the walk options; the contexts and settings: the index's
    o.threads = threads;
    return index_folder(current.corpus_root(), out, o);
}

}  // namespace ragpp
