// ragpp detail: the per-thread stage timers behind engine/engine.hpp, and the format of sources.bin.
#pragma once

#include <chrono>

#include <ragpp/detail/binary_file.hpp>

namespace ragpp {

namespace detail::engine {
// Time spent analysing and embedding by the current thread, read by Engine::evaluate to
// split each index's time into its stages.
inline thread_local double analysis_seconds = 0;
inline thread_local double embedding_seconds = 0;
using Clock = std::chrono::steady_clock;

// sources.bin (format "SRCCHUNK" version 2 in detail/binary_file.hpp's container): the
// source manifest (Engine::write_sources, Engine::read_sources).
inline constexpr BinaryFormat sources_format{"SRCCHUNK", 2, "source manifest", ""};
}  // namespace detail::engine

}  // namespace ragpp
