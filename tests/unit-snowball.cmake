# unit-snowball needs the optional ragpp::snowball target (libstemmer).
if(TARGET ragpp::snowball)
  target_link_libraries(${RAGPP_TEST_TARGET} PRIVATE ragpp::snowball)
else()
  message(STATUS "ragpp: unit-snowball skipped (libstemmer not found)")
  set_target_properties(${RAGPP_TEST_TARGET} PROPERTIES EXCLUDE_FROM_ALL ON)
  set(RAGPP_TEST_SKIP ON)
endif()
