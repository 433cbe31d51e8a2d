# ragpp::snowball: the Snowball stemmers of libstemmer (Debian: libstemmer-dev) as a
# ragpp stemmer hook (include/ragpp/ext/snowball.hpp). Defined only when libstemmer is
# found; the core target never depends on it.
find_path(RAGPP_LIBSTEMMER_INCLUDE_DIR libstemmer.h)
find_library(RAGPP_LIBSTEMMER_LIBRARY stemmer)
if(RAGPP_LIBSTEMMER_INCLUDE_DIR AND RAGPP_LIBSTEMMER_LIBRARY AND TARGET ragpp)
  add_library(ragpp_snowball INTERFACE)
  add_library(ragpp::snowball ALIAS ragpp_snowball)
  set_target_properties(ragpp_snowball PROPERTIES EXPORT_NAME snowball)
  target_link_libraries(ragpp_snowball INTERFACE ragpp
    $<BUILD_INTERFACE:${RAGPP_LIBSTEMMER_LIBRARY}> $<INSTALL_INTERFACE:stemmer>)
  target_include_directories(ragpp_snowball SYSTEM INTERFACE $<BUILD_INTERFACE:${RAGPP_LIBSTEMMER_INCLUDE_DIR}>)
  if(RAGPP_INSTALL)
    # Installed consumers link -lstemmer from their system's default paths.
    install(TARGETS ragpp_snowball EXPORT ragppTargets)
  endif()
  message(VERBOSE "ragpp: ragpp::snowball enabled (${RAGPP_LIBSTEMMER_LIBRARY})")
else()
  message(VERBOSE "ragpp: libstemmer not found, ragpp::snowball not defined")
endif()
