// ragpp detail: header-only or compiled.
//
// By default ragpp is header-only: every definition is in the headers, `inline`.
// Linking the CMake target ragpp::compiled instead defines RAGPP_COMPILED for its users:
// the headers that have a compiled half (the engine: engine/engine.hpp) then declare
// its non-template functions, and the library (src/*.cpp, built once) defines them.
// The library's own sources define RAGPP_LIBRARY_SOURCE, which makes RAGPP_FUNC empty
// so that each definition is emitted once, in the library.
// The library also holds the README's configuration, instantiated once
// (src/instances.cpp): BM25Index<EnglishAnalyzer>, VectorIndex<HashingEmbedder> and their
// Retriever, declared `extern template` at the end of their headers under RAGPP_COMPILED;
// their long members are defined outside the class, which GCC then does not instantiate
// in the program either. Other configurations are compiled in the program as before.
// A program must not mix both: every translation unit of a program that links
// ragpp::compiled is compiled with RAGPP_COMPILED (CMake sets it for the target's users).
#pragma once

#ifdef RAGPP_LIBRARY_SOURCE
#define RAGPP_FUNC
#else
#define RAGPP_FUNC inline
#endif
