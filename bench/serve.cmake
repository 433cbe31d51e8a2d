# bench_serve: ragpp serve under 1, 8 and 32 concurrent clients on loopback while a writer
# commits a generation every second, beside the same searches in-process (its clients speak
# HTTP/1.1 over plain sockets; it runs the tool's binary, built with its serve command when
# Boost.Beast is installed). Linux only: per-thread niceness and CPU time, /proc.
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  add_executable(bench_serve ${CMAKE_CURRENT_SOURCE_DIR}/bench_serve.cpp)
  target_link_libraries(bench_serve PRIVATE ragpp::compiled)
  ragpp_target_options(bench_serve)
endif()
