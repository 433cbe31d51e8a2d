# ragpp_target_options(target): warnings as errors, sanitizers and optional
# -march=native, applied to ragpp's own targets only.
set(RAGPP_SHARED_DATA_DIR "${PROJECT_SOURCE_DIR}/../shared" CACHE PATH
    "The shared data and fixtures folder (tests that need it skip when it is missing)")

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
  if(RAGPP_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer
      -fno-sanitize-recover=all)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
  if(RAGPP_NATIVE)
    target_compile_options(${target} PRIVATE -march=native)
  endif()
endfunction()
