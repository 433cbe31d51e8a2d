// ragpp detail: with ragpp::compiled (RAGPP_COMPILED), the README's Retriever (BM25 with the
// English analyzer, flat vectors of the hashing embedder) comes compiled from the library
// (src/instances.cpp). Its `extern template` needs the three class templates, so it is
// declared by whichever of index/bm25.hpp, index/vector.hpp and retrieve/retriever.hpp a
// program includes last, each of which includes this file at its end: a program that
// includes retriever.hpp alone (engine/config.hpp does) no longer parses both indexes.
// No #pragma once: each inclusion checks again; the guard below declares it once.
#if defined(RAGPP_COMPILED) && defined(RAGPP_DETAIL_HAS_BM25_INDEX) && defined(RAGPP_DETAIL_HAS_VECTOR_INDEX) && \
    defined(RAGPP_DETAIL_HAS_RETRIEVER) && !defined(RAGPP_DETAIL_README_RETRIEVER_DECLARED)
#define RAGPP_DETAIL_README_RETRIEVER_DECLARED 1
namespace ragpp {
extern template class Retriever<BM25Index<EnglishAnalyzer>, VectorIndex<HashingEmbedder, Flat>>;
}  // namespace ragpp
#endif
