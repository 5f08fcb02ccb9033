# Fuzz targets for the small parsers of gr_base (durations, quantities,
# RFC 3339 times, glob patterns). Included by test/base/CMakeLists.txt.
gr_add_fuzzer(fuzz_quantity SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_quantity.c
              LIBS gr_base CORPUS corpus/quantity)
gr_add_fuzzer(fuzz_duration SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_duration.c
              LIBS gr_base CORPUS corpus/duration)
gr_add_fuzzer(fuzz_glob SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_glob.c
              LIBS gr_base CORPUS corpus/glob)
gr_add_fuzzer(fuzz_time SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_time.c
              LIBS gr_base CORPUS corpus/time)
gr_add_fuzzer(fuzz_base64 SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_base64.c
              LIBS gr_base CORPUS corpus/base64)
