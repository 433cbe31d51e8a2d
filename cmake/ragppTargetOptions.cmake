# ragpp_target_options(target): warnings as errors, sanitizers and optional
# -march=native, applied to ragpp's own targets only.
set(RAGPP_SHARED_DATA_DIR "${PROJECT_SOURCE_DIR}/../shared" CACHE PATH
    "The shared data and fixtures folder (tests that need it skip when it is missing, fail if CI=true)")

# ThreadSanitizer needs its fixed memory layout: on kernels whose address-space
# randomisation (vm.mmap_rnd_bits) goes beyond it, a TSan program aborts at start with
# "FATAL: ThreadSanitizer: unexpected memory mapping". A probe program tells; when only
# `setarch -R` (randomisation off for one process) makes it start, the tests and their
# discovery run through it (the targets' CROSSCOMPILING_EMULATOR, which add_test and
# catch_discover_tests prepend). Set RAGPP_TSAN_LAUNCHER yourself to skip the probe.
if(RAGPP_SANITIZE STREQUAL "thread" AND NOT DEFINED RAGPP_TSAN_LAUNCHER)
  set(_dir ${CMAKE_BINARY_DIR}/ragpp-tsan-probe)
  file(WRITE ${_dir}/probe.cpp "#include <thread>\nint main() { std::thread([] {}).join(); }\n")
  try_compile(_ragpp_tsan_ok ${_dir}/build ${_dir}/probe.cpp CMAKE_FLAGS -DCMAKE_CXX_STANDARD=20
    COMPILE_DEFINITIONS -fsanitize=thread LINK_OPTIONS -fsanitize=thread COPY_FILE ${_dir}/probe
    OUTPUT_VARIABLE _out)
  if(NOT _ragpp_tsan_ok)
    message(FATAL_ERROR "ragpp: RAGPP_SANITIZE=thread, but this compiler cannot build with -fsanitize=thread:\n${_out}")
  endif()
  set(_launcher "")
  execute_process(COMMAND ${_dir}/probe RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0)
    find_program(RAGPP_SETARCH setarch)
    if(RAGPP_SETARCH)
      execute_process(COMMAND ${RAGPP_SETARCH} ${CMAKE_HOST_SYSTEM_PROCESSOR} -R ${_dir}/probe
                      RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET)
    endif()
    if(RAGPP_SETARCH AND _rc EQUAL 0)
      set(_launcher ${RAGPP_SETARCH} ${CMAKE_HOST_SYSTEM_PROCESSOR} -R)
      message(STATUS "ragpp: ThreadSanitizer programs start only without address-space randomisation here: "
                     "the tests run under '${RAGPP_SETARCH} ${CMAKE_HOST_SYSTEM_PROCESSOR} -R'")
    else()
      message(WARNING "ragpp: ThreadSanitizer programs do not start on this machine, even under setarch -R "
                      "(try sysctl vm.mmap_rnd_bits=28):\n${_err}")
    endif()
  endif()
  set(RAGPP_TSAN_LAUNCHER "${_launcher}" CACHE STRING
      "Command that runs the ThreadSanitizer tests (set by a probe; empty: run directly)")
endif()

function(ragpp_target_options target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
    -Wno-sign-conversion -Werror)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    # GCC 12 reports false -Wrestrict errors inside libstdc++'s std::string operator+
    # at -O2/-O3 (GCC bug 105329); the warning stays on for other compilers.
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
  target_compile_definitions(${target} PRIVATE
    RAGPP_SHARED_DIR="${RAGPP_SHARED_DATA_DIR}"
    RAGPP_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  if(RAGPP_SANITIZE AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # Sanitizer builds keep -g's line tables and inlined frames (every report names the
    # right function, file and line) but not GCC's variable-location tracking, a third
    # of their compile time (docs/getting-started.md, "CI time"). -g1 instead of -g saves
    # 2% more (measured there), so the presets keep -g.
    target_compile_options(${target} PRIVATE -fno-var-tracking -fno-var-tracking-assignments)
  endif()
  if(RAGPP_SANITIZE STREQUAL "thread")
    target_compile_options(${target} PRIVATE -fsanitize=thread -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=thread)
    if(RAGPP_TSAN_LAUNCHER)
      set_target_properties(${target} PROPERTIES CROSSCOMPILING_EMULATOR "${RAGPP_TSAN_LAUNCHER}")
    endif()
  elseif(RAGPP_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer
      -fno-sanitize-recover=all)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
  if(RAGPP_NATIVE)
    target_compile_options(${target} PRIVATE -march=native)
  endif()
endfunction()

# ragpp_test_optimisation(target): tests and examples in a Release build compile at -O2,
# not CMake's -O3: the same results (neither level reorders floating point), a quarter
# less compile time (unit-engine: 47 s at -O3, 35 s at -O2), and the tests' run time
# barely changes. The library, the tool and the benchmarks keep the build type's flags.
set(RAGPP_TEST_OPTIMISATION "-O2" CACHE STRING
    "Optimisation flag of the tests and examples in a Release build (empty: the build type's)")
function(ragpp_test_optimisation target)
  if(RAGPP_TEST_OPTIMISATION)
    target_compile_options(${target} PRIVATE $<$<CONFIG:Release>:${RAGPP_TEST_OPTIMISATION}>)
  endif()
endfunction()
