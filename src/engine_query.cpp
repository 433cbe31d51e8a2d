// The compiled library (ragpp::compiled): the Engine's queries: search, answer, evaluate, hints and accessors, and the
// evaluation run (engine/evaluation_run.hpp), compiled once (detail/compiled.hpp says how the headers and the library
// share the definitions).
#define RAGPP_LIBRARY_SOURCE 1
#include <ragpp/engine/engine.hpp>
#include <ragpp/engine/evaluation_run.hpp>
#include <ragpp/engine/detail/engine_impl.ipp>
#include <ragpp/engine/detail/engine_query.ipp>
#include <ragpp/engine/detail/evaluation_run.ipp>
