// ragpp: bringing an index folder up to date with a corpus, the decision `ragpp index`
// makes (docs/engine.md, "Indexing a folder"): build a first generation, update the
// current one (only new, changed and deleted sources re-read), or rebuild it when it
// cannot be updated (damaged, or written by an older ragpp) or was built with other
// index settings than the ones asked for.
//
//   IndexFolderOptions o;
//   o.settings.embedder = "model2vec:models/potion";  // unset: the saved index's (or the default)
//   auto r = index_folder("notes", "notes.idx", o);
//   // r.action: built, updated, rebuilt_unreadable or rebuilt_settings; r.reason says why
//   // r.counts: 3 added, 1 changed, 2 removed, 410 unchanged; r.generation: the one committed
//
// A light header: with the compiled library it declares only; header-only, it includes
// engine/engine.hpp and the definitions (engine/detail/index_folder.ipp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ragpp/core/error.hpp>
#include <ragpp/detail/compiled.hpp>
#include <ragpp/engine/config.hpp>
#include <ragpp/io/corpus_scan.hpp>

namespace ragpp {

/// A mistake in what index_folder was asked (not in the corpus or the folder): an index
/// folder inside the corpus, an unknown analyzer, BM25 variant or embedder kind, an
/// overlap not smaller than the chunk size. Thrown before anything is read or written.
/// The tool reports it as a usage error (exit 2).
class IndexRequestError : public InvalidArgument {
public:
    using InvalidArgument::InvalidArgument;
};

/// The index settings asked for (EngineConfig's first group: what a generation is built
/// with). An unset field keeps the existing index's value when the folder is updated, and
/// takes EngineConfig's default when a new index is built; a set field that differs from
/// the index's asks for a rebuild. Setting max_tokens without overlap resets the overlap
/// to its default (15% of max_tokens).
struct IndexSettings {
    std::optional<std::string> analyzer, embedder, query_prefix, passage_prefix;
    std::optional<TransformerQuantization> quantize;
    std::optional<BM25Variant> variant;
    std::optional<double> delta;
    std::optional<std::size_t> max_tokens, overlap;
    std::optional<Unlabeled> unlabeled;

    /// `base` with the set fields over it.
    [[nodiscard]] EngineConfig over(EngineConfig base) const;
};

struct IndexFolderReport;
class Engine;

struct IndexFolderOptions {
    IndexSettings settings;
    /// The corpus walk (hidden files, symbolic links, ignore files, extensions...; its
    /// context fields aside, which the three below replace). Unset: the walk the index was
    /// built with, recorded with each generation (CorpusOptions's defaults for a new index,
    /// or with `rebuild`), so an update walks the corpus as the first build did.
    std::optional<CorpusOptions> corpus;
    /// Build a new generation even when the current one could be updated.
    bool rebuild = false;
    /// Contexts (io/contexts.hpp; CorpusOptions's fields of the same names, which these
    /// replace): a contexts file read besides the corpus root's .ragpp-contexts ("":
    /// none), a command asked for a line of context per chunk ("": none), its time limit
    /// per chunk. Unset: the index's (recorded with each generation), else none. A
    /// relative file is recorded absolute, so a later update from elsewhere reads it.
    std::optional<std::string> contexts_file, context_command;
    std::optional<double> context_timeout;
    /// Threads of a transformer embedder (0: every core); not an index setting.
    std::size_t threads = 0;
    /// Called with (stage, done, total) during the build or the update.
    EngineProgress progress;
    /// Called once the decision is made, before the build or the update, with the
    /// report's action and reason set (a tool says "rebuilding it" then).
    std::function<void(const IndexFolderReport&)> decided;
};

/// What index_folder did.
enum class IndexAction {
    built,               // no index in the folder (or rebuild asked): a first generation
    updated,             // the current generation brought up to date
    rebuilt_unreadable,  // the current generation could not be opened: reason says why
    rebuilt_settings     // it was built with other index settings than the ones asked for
};
[[nodiscard]] std::string_view index_action_name(IndexAction a) noexcept;

struct IndexFolderReport {
    IndexAction action = IndexAction::built;
    /// Why a rebuild (the open error, or the settings that differ); empty otherwise.
    std::string reason;
    /// What the update did; a build counts every source as added.
    SyncCounts counts;
    /// The generation committed.
    std::uint64_t generation = 0;
    /// The settings the index was built with (and search defaults, as saved).
    EngineConfig config;
    /// Whether the corpus is a folder of files (else one .jsonl or BEIR corpus of documents).
    bool files = false;
    /// What the corpus walk said: its notes, what it skipped, and the sources only
    /// Principal::system() may read, with the reason (Engine::notes, skipped, locked_sources).
    std::vector<std::string> notes;
    std::vector<SkippedPath> skipped;
    std::vector<std::pair<std::string, std::string>> locked;
    /// The context rules in force, and those that apply to no file of the corpus
    /// (a misspelt path, most likely), as "origin: pattern".
    std::size_t context_rules = 0;
    std::vector<std::string> unused_context_rules;
};

/// The settings in which `a` and `b` differ, named as the tool's options ("embedder",
/// "max-tokens", ...), comma-separated; "" when same_index_settings(a, b).
[[nodiscard]] std::string index_settings_difference(const EngineConfig& a, const EngineConfig& b);

/// Throws IndexRequestError when the index folder `out` is the corpus folder or inside it
/// (its files would be walked as part of the corpus). A .jsonl corpus is not walked.
void check_index_folder_location(const std::filesystem::path& corpus, const std::filesystem::path& out);

/// Throws IndexRequestError for an unknown analyzer or BM25 variant, an embedder spec that
/// is none of hashing[:DIM], model2vec:DIR, vectors:FILE, transformer:DIR, quantization
/// other than none or int8, or an overlap not smaller than max_tokens.
void check_index_settings(const EngineConfig& c);

/// Brings the index folder `out` up to date with `corpus` and commits a new generation:
/// removes what a killed run left (remove_partial_generations), opens the current
/// generation verified (every checksum: its chunks are carried over) and syncs it, or
/// builds a new one when there is none, options.rebuild, it cannot be opened (a
/// FormatError: damaged, or an older format; the old files stay until the switch) or the
/// settings differ. Throws IndexRequestError (before any work) for a mistake of the
/// request, and what Engine::build, sync and save throw; the folder then keeps its
/// current generation.
[[nodiscard]] IndexFolderReport index_folder(const std::filesystem::path& corpus, const std::filesystem::path& out,
                                             const IndexFolderOptions& options = {});

/// One step of keeping an index folder up to date with its corpus (ragpp serve --watch):
/// when `current`, an engine opened from `out`, is behind its corpus (Engine::pending
/// with its own walk options and contexts: a source added, re-read or removed; a file
/// only touched is no reason), index_folder(current.corpus_root(), out) with the index's own settings,
/// walk options and contexts, and its report; else nothing is done (nullopt). A folder of
/// files only (InvalidArgument otherwise). Throws what index_folder throws (another
/// writer holding the folder's lock: an IoError; the caller retries later).
[[nodiscard]] std::optional<IndexFolderReport> update_if_pending(const Engine& current, const std::filesystem::path& out,
                                                                 std::size_t threads = 1);

}  // namespace ragpp

#ifndef RAGPP_COMPILED
#include <ragpp/engine/engine.hpp>
#include <ragpp/engine/detail/index_folder.ipp>
#endif
