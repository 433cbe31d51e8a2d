// ragpp: the umbrella header, every public header of the library (optional
// integrations under ragpp/ext/ are included separately). Needs Eigen and
// nlohmann_json (target ragpp::ragpp); ragpp/ragpp_core.hpp is the part that needs
// only the standard library (target ragpp::core).
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

#include <ragpp/embed/dispatch.hpp>
#include <ragpp/embed/embedder.hpp>
#include <ragpp/embed/hashing.hpp>
#include <ragpp/embed/model2vec.hpp>
#include <ragpp/embed/safetensors.hpp>
#include <ragpp/embed/tokenizer_json.hpp>
#include <ragpp/embed/word_vectors.hpp>

#include <ragpp/index/bm25.hpp>
#include <ragpp/index/hnsw.hpp>
#include <ragpp/index/store.hpp>
#include <ragpp/index/vector.hpp>

#include <ragpp/retrieve/collection.hpp>
#include <ragpp/retrieve/fusion.hpp>
#include <ragpp/retrieve/retriever.hpp>

#include <ragpp/rerank/proximity.hpp>
#include <ragpp/rerank/reranker.hpp>
#include <ragpp/rerank/soft_match.hpp>

#include <ragpp/answer/abstain.hpp>
#include <ragpp/answer/evidence.hpp>
#include <ragpp/answer/neutralize.hpp>

#include <ragpp/eval/containment.hpp>
#include <ragpp/eval/evaluate.hpp>
#include <ragpp/eval/evaluate_retriever.hpp>
#include <ragpp/eval/metrics.hpp>
#include <ragpp/eval/question.hpp>
#include <ragpp/eval/questions.hpp>
#include <ragpp/eval/report.hpp>
#include <ragpp/eval/run.hpp>
#include <ragpp/eval/significance.hpp>

#include <ragpp/io/beir.hpp>
#include <ragpp/io/contexts.hpp>
#include <ragpp/io/corpus.hpp>
#include <ragpp/io/generations.hpp>
#include <ragpp/io/ignore.hpp>
#include <ragpp/io/metadata_json.hpp>
#include <ragpp/io/sources.hpp>
#include <ragpp/io/trec.hpp>
