# libFuzzer targets for the YAML loader and JSON Patch (label: fuzz-smoke).
# With -DGR_FUZZ=ON (clang-14) they are libFuzzer binaries; run one longer with
#   build/asan/test/base/fuzz_yaml -max_total_time=60 test/base/corpus/yaml
#   build/asan/test/base/fuzz_jsonpatch -max_total_time=60 test/base/corpus/jsonpatch
# Without GR_FUZZ the same entry points replay the seed corpus.
gr_add_fuzzer(fuzz_yaml SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_yaml.c
  LIBS gr_base CORPUS corpus/yaml)
gr_add_fuzzer(fuzz_jsonpatch SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_jsonpatch.c
  LIBS gr_base CORPUS corpus/jsonpatch)
