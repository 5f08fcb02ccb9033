# gr_file against a misbehaving read(2) (label unit): short reads (EOF before
# the size fstat reported), read errors and EINTR, injected through
# -Wl,--wrap=read. The source is not named test_*.c so the glob in
# CMakeLists.txt does not register it a second time without the wrapper.
gr_add_test(base_file_wrap SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/file_wrap.c LIBS gr_base LABELS unit)
target_link_options(base_file_wrap PRIVATE "-Wl,--wrap=read")
