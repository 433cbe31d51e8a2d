// ragpp: the element types of safetensors tensors (Dtype) and their sizes; the reader is embed/safetensors.hpp.
#pragma once

#include <cstddef>

namespace ragpp {

enum class Dtype { BOOL, U8, I8, I16, U16, F16, BF16, I32, U32, F32, I64, U64, F64 };

[[nodiscard]] constexpr std::size_t dtype_size(Dtype d) noexcept {
    switch (d) {
        case Dtype::BOOL: case Dtype::U8: case Dtype::I8: return 1;
        case Dtype::I16: case Dtype::U16: case Dtype::F16: case Dtype::BF16: return 2;
        case Dtype::I32: case Dtype::U32: case Dtype::F32: return 4;
        default: return 8;
    }
}

}  // namespace ragpp
