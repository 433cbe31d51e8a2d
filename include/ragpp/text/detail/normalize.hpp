// ragpp detail: the code point helpers of the normalizer behind text/normalize.hpp.
#pragma once

#include <cstddef>
#include <string>

namespace ragpp::text {

namespace detail {
/// The last code point of out[from, end) and its byte offset (out is valid UTF-8).
inline std::size_t last_code_point_start(const std::string& out, std::size_t from) noexcept {
    std::size_t p = out.size();
    while (p > from) {
        --p;
        if ((static_cast<unsigned char>(out[p]) & 0xC0) != 0x80) return p;
    }
    return out.size();
}
}  // namespace detail

}  // namespace ragpp::text
