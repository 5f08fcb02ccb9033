# Allocation-failure tests (label unit): malloc, calloc, realloc, strdup and
# strndup of our static libraries are wrapped by a failure-injection
# allocator (oom_inject.c; jansson through json_set_alloc_funcs). Leaks are
# judged by LeakSanitizer in the ASan build (-DGR_SANITIZE=ON).
# The sources are not named test_*.c so the glob above does not register
# them a second time without the wrapper.
set(GR_OOM_WRAP "-Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=strndup")
gr_add_test(base_oom
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/oom_base.c ${CMAKE_CURRENT_SOURCE_DIR}/oom_inject.c
  LIBS gr_base
  LABELS unit)
target_link_options(base_oom PRIVATE ${GR_OOM_WRAP})
