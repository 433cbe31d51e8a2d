// The compiled library (ragpp::compiled): the Engine's configuration, opening, checking, saving and syncing, and
// index_folder (engine/index_folder.hpp), compiled once
// (detail/compiled.hpp says how the headers and the library share the definitions).
#define RAGPP_LIBRARY_SOURCE 1
#include <ragpp/engine/engine.hpp>
#include <ragpp/engine/detail/engine_impl.ipp>
#include <ragpp/engine/detail/engine_index.ipp>
#include <ragpp/engine/index_folder.hpp>
#include <ragpp/engine/detail/index_folder.ipp>
