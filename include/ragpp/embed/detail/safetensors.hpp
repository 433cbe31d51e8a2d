// ragpp detail: dtype names and the path probes of the model loaders, behind embed/safetensors.hpp.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include <ragpp/embed/dtype.hpp>

namespace ragpp {

namespace detail {
inline constexpr std::pair<std::string_view, Dtype> dtype_names[] = {
    {"BOOL", Dtype::BOOL}, {"U8", Dtype::U8},   {"I8", Dtype::I8},   {"I16", Dtype::I16},   {"U16", Dtype::U16},
    {"F16", Dtype::F16},   {"BF16", Dtype::BF16}, {"I32", Dtype::I32}, {"U32", Dtype::U32}, {"F32", Dtype::F32},
    {"I64", Dtype::I64},   {"U64", Dtype::U64}, {"F64", Dtype::F64}};

/// std::filesystem::exists without its exception: a path that cannot be examined
/// (permissions, a name too long) counts as absent, and opening it then names it in an
/// IoError. The model loaders use it to probe folder layouts.
[[nodiscard]] inline bool path_exists(const std::filesystem::path& p) noexcept {
    std::error_code ec;
    return std::filesystem::exists(p, ec);
}
/// The name of folder `dir` once made absolute ("." -> its real name), for embedder names.
[[nodiscard]] inline std::string folder_name(const std::filesystem::path& dir) {
    std::error_code ec;
    const auto c = std::filesystem::weakly_canonical(dir, ec);
    return (ec ? dir : c).filename().string();
}

}  // namespace detail

}  // namespace ragpp
