// ragpp: the umbrella header, every public header of the library.
#pragma once

#include <ragpp/version.hpp>

#include <ragpp/core/bitset.hpp>
#include <ragpp/core/concepts.hpp>
#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>

#include <ragpp/text/whitespace.hpp>

#include <ragpp/index/store.hpp>

#include <ragpp/retrieve/fusion.hpp>
#include <ragpp/retrieve/retriever.hpp>

#include <ragpp/eval/evaluate.hpp>
#include <ragpp/eval/metrics.hpp>
#include <ragpp/eval/question.hpp>
#include <ragpp/eval/questions.hpp>
#include <ragpp/eval/report.hpp>
#include <ragpp/eval/significance.hpp>

#include <ragpp/io/beir.hpp>
