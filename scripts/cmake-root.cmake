message("${CMAKE_ROOT}")
