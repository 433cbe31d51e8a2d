// ragpp detail: the per-thread stage timers behind engine/engine.hpp.
#pragma once

#include <chrono>

namespace ragpp {

namespace detail::engine {
// Time spent analysing and embedding by the current thread, read by Engine::evaluate to
// split each index's time into its stages.
inline thread_local double analysis_seconds = 0;
inline thread_local double embedding_seconds = 0;
using Clock = std::chrono::steady_clock;
}  // namespace detail::engine

}  // namespace ragpp
