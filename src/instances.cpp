// The compiled library (ragpp::compiled): the README's configuration, instantiated once.
// BM25Index<EnglishAnalyzer>, VectorIndex<HashingEmbedder> and the Retriever of the two
// are explicit instantiations here; the headers declare them `extern template` for a
// program compiled with RAGPP_COMPILED (index/bm25.hpp, index/vector.hpp,
// retrieve/retriever.hpp), which then compiles none of their members again
// (docs/getting-started.md, "Build time"). Any other configuration is instantiated in the
// program, header-only, as before.
#include <ragpp/index/bm25.hpp>
#include <ragpp/index/vector.hpp>
#include <ragpp/retrieve/retriever.hpp>
#include <ragpp/text/analyzer.hpp>
#include <ragpp/embed/hashing.hpp>

namespace ragpp {
template class BM25Index<EnglishAnalyzer>;
template class VectorIndex<HashingEmbedder, Flat>;
template class Retriever<BM25Index<EnglishAnalyzer>, VectorIndex<HashingEmbedder, Flat>>;
}  // namespace ragpp
