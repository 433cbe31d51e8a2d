# The concurrency test is the ThreadSanitizer build's (preset tsan); the plain build runs
# it too (cheap), the ASan build does not compile it (about a minute of CI time for
# code its other tests already run under ASan). Build the target by name to run it there.
if(RAGPP_SANITIZE AND NOT RAGPP_SANITIZE STREQUAL "thread")
  set_target_properties(${RAGPP_TEST_TARGET} PROPERTIES EXCLUDE_FROM_ALL ON)
  set(RAGPP_TEST_SKIP ON)
endif()
