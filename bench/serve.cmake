# bench_serve: ragpp serve under 8 and 32 concurrent clients on loopback while a writer
# commits a generation every second, beside the same searches in-process (cpp-httplib's
# client, Debian's libcpp-httplib-dev; built when it is installed).
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(RAGPP_BENCH_HTTPLIB QUIET IMPORTED_TARGET cpp-httplib)
endif()
if(RAGPP_BENCH_HTTPLIB_FOUND)
  add_executable(bench_serve ${CMAKE_CURRENT_SOURCE_DIR}/bench_serve.cpp)
  target_link_libraries(bench_serve PRIVATE ragpp::compiled PkgConfig::RAGPP_BENCH_HTTPLIB)
  ragpp_target_options(bench_serve)
endif()
