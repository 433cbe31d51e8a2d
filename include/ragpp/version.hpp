// ragpp: version.
#pragma once

#define RAGPP_VERSION_MAJOR 0
#define RAGPP_VERSION_MINOR 1
#define RAGPP_VERSION_PATCH 0

namespace ragpp {
inline constexpr const char* version_string = "0.1.0";
}  // namespace ragpp
