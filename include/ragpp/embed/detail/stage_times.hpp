// ragpp detail: the per-stage CPU times of TransformerModel::forward, for
// bench_transformer. Defining RAGPP_TRANSFORMER_STAGE_TIMES before including
// ragpp/embed/transformer.hpp makes the forward pass add this thread's CPU time (POSIX
// CLOCK_THREAD_CPUTIME_ID) in each stage of the layers to transformer_stage_seconds:
// QKV product, attention, output product, add & LayerNorm, intermediate product with
// GELU, FFN output product, add & LayerNorm. Otherwise the marks compile to nothing.
// transformer.hpp undefines the two macros at its end.
#pragma once

#ifdef RAGPP_TRANSFORMER_STAGE_TIMES
#include <ctime>
namespace ragpp::detail {
inline thread_local double transformer_stage_seconds[7] = {};
inline double transformer_stage_clock() noexcept {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
}  // namespace ragpp::detail
#define RAGPP_STAGE_START() double ragpp_stage_t = ::ragpp::detail::transformer_stage_clock()
#define RAGPP_STAGE_MARK(i)                                                                   \
    do {                                                                                      \
        const double ragpp_stage_now = ::ragpp::detail::transformer_stage_clock();            \
        ::ragpp::detail::transformer_stage_seconds[i] += ragpp_stage_now - ragpp_stage_t;     \
        ragpp_stage_t = ragpp_stage_now;                                                      \
    } while (false)
#else
#define RAGPP_STAGE_START() static_cast<void>(0)
#define RAGPP_STAGE_MARK(i) static_cast<void>(0)
#endif
