// ragpp detail: the score accumulator of rank fusion behind retrieve/fusion.hpp.
#pragma once

#include <cstddef>

namespace ragpp {

namespace detail {
struct FusionAcc {
    double score = 0.0;
    std::size_t best_rank = 0;
};
}  // namespace detail

}  // namespace ragpp
