# Allocation-failure test of gr_cel (label unit), with the failure-injection
# allocator of test/base/oom_inject.c. Needs `include(oom.cmake)` in
# test/cel/CMakeLists.txt.
gr_add_test(cel_oom
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_cel_oom.c ${PROJECT_SOURCE_DIR}/test/base/oom_inject.c
  LIBS gr_cel
  LABELS unit)
target_include_directories(cel_oom PRIVATE ${PROJECT_SOURCE_DIR}/test/base)
target_link_options(cel_oom PRIVATE
  "-Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=strndup")
