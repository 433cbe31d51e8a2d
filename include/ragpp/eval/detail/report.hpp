// ragpp detail: the number formatting of the reports behind eval/report.hpp.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

namespace ragpp {

namespace detail {
inline std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}
inline std::string pad(std::string s, std::size_t w) {
    if (s.size() < w) s.append(w - s.size(), ' ');
    return s;
}
inline std::string lpad(std::string s, std::size_t w) {
    if (s.size() < w) s.insert(0, w - s.size(), ' ');
    return s;
}
}  // namespace detail

}  // namespace ragpp
