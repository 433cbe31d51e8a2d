// ragpp detail: the one check that contexts (io/contexts.hpp) are asked for a folder of
// files, used by the engine's build and sync and by index_folder (which reports it as a
// mistake of the request).
#pragma once

#include <filesystem>
#include <string>

#include <ragpp/core/error.hpp>
#include <ragpp/io/corpus_scan.hpp>

namespace ragpp::detail::contexts {

/// Contexts apply to a folder of files: InvalidArgument naming `corpus` when `options` ask
/// for a contexts file or a context command and `corpus` is not one (`folder` false).
inline void require_folder(bool folder, const std::filesystem::path& corpus, const CorpusOptions& options) {
    if (!folder && (!options.contexts_file.empty() || !options.context_command.empty()))
        throw InvalidArgument("corpus '" + corpus.string() +
                              "' is a single file of documents: contexts (a contexts file, a context command) apply "
                              "to a folder of files");
}

}  // namespace ragpp::detail::contexts
