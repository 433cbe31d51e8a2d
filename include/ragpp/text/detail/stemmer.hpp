// ragpp detail: the InPlaceStemmer and ReturningStemmer concepts behind text/stemmer.hpp.
#pragma once

#include <concepts>
#include <string>
#include <type_traits>

namespace ragpp::text {

namespace detail {
template <class S>
concept InPlaceStemmer =
    std::invocable<const S&, std::string&> && std::is_void_v<std::invoke_result_t<const S&, std::string&>>;
template <class S>
concept ReturningStemmer = requires(const S& s, const std::string& w) {
    { s(w) } -> std::convertible_to<std::string>;
};
}  // namespace detail

}  // namespace ragpp::text
