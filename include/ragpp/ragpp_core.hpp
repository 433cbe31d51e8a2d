// ragpp: the standard-library-only core, every public header that needs neither Eigen
// nor nlohmann_json (target ragpp::core, `find_package(ragpp COMPONENTS core)`):
// text analysis, chunking, filters and access, BM25, the document store, fusion and the
// Retriever, the Collection, the lexical rerankers, abstention and evidence, and the
// evaluation metrics. Vector search and embedders (Eigen), question-set files, JSON
// reports and BEIR readers (nlohmann_json) are in ragpp/ragpp.hpp (target
// ragpp::ragpp). The ctest layers.includes proves that nothing reached from here
// includes Eigen or nlohmann_json; the consumer tests build against it without them.
#pragma once

#include <ragpp/version.hpp>

#include <ragpp/core/bitset.hpp>
#include <ragpp/core/concurrent.hpp>
#include <ragpp/core/concepts.hpp>
#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>

#include <ragpp/text/analyzer.hpp>
#include <ragpp/text/normalize.hpp>
#include <ragpp/text/porter.hpp>
#include <ragpp/text/stemmer.hpp>
#include <ragpp/text/stopwords.hpp>
#include <ragpp/text/tokenizer.hpp>
#include <ragpp/text/unicode.hpp>
#include <ragpp/text/utf8.hpp>
#include <ragpp/text/whitespace.hpp>

#include <ragpp/chunk/chunk.hpp>
#include <ragpp/chunk/chunker.hpp>
#include <ragpp/chunk/front_matter.hpp>
#include <ragpp/chunk/markdown.hpp>
#include <ragpp/chunk/rst.hpp>
#include <ragpp/chunk/text.hpp>

#include <ragpp/filter/access.hpp>
#include <ragpp/filter/filter.hpp>
#include <ragpp/filter/metadata_index.hpp>

#include <ragpp/index/bm25.hpp>
#include <ragpp/index/store.hpp>

#include <ragpp/retrieve/collection.hpp>
#include <ragpp/retrieve/diversify.hpp>
#include <ragpp/retrieve/fusion.hpp>
#include <ragpp/retrieve/retriever.hpp>

#include <ragpp/rerank/proximity.hpp>
#include <ragpp/rerank/reranker.hpp>

#include <ragpp/answer/abstain.hpp>
#include <ragpp/answer/evidence.hpp>
#include <ragpp/answer/neutralize.hpp>

#include <ragpp/eval/evaluate.hpp>
#include <ragpp/eval/evaluate_retriever.hpp>
#include <ragpp/eval/metrics.hpp>
#include <ragpp/eval/question.hpp>
#include <ragpp/eval/significance.hpp>
