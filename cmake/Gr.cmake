# Build helpers shared by every module. See HACKING.md for how to use them.

set(GR_WARNINGS
  -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes
  -Wold-style-definition -Wformat=2 -Wundef -Wwrite-strings -Wpointer-arith
  -Wcast-qual -Wvla -Wimplicit-fallthrough -Wmissing-declarations
  -Wnull-dereference -Wdouble-promotion)
if(GR_WERROR)
  list(APPEND GR_WARNINGS -Werror)
endif()

add_compile_definitions(_GNU_SOURCE GR_VERSION="${PROJECT_VERSION}")
add_compile_options(-fno-strict-aliasing)
if(GR_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
if(GR_COVERAGE)
  add_compile_options(--coverage -O0)
  add_link_options(--coverage)
endif()
if(GR_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "GR_FUZZ needs clang (CC=clang-14)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

# Cluster directory used by integration tests (fixture gr_cluster, see test/harness).
set(GR_CLUSTER_DIR "${CMAKE_BINARY_DIR}/cluster" CACHE PATH "Local control plane state for integration tests")

# gr_add_subdirs(<dir>): add every <dir>/<child> that has a CMakeLists.txt.
function(gr_add_subdirs dir)
  file(GLOB children LIST_DIRECTORIES true "${CMAKE_CURRENT_SOURCE_DIR}/${dir}/*")
  list(SORT children)
  foreach(child IN LISTS children)
    if(IS_DIRECTORY "${child}" AND EXISTS "${child}/CMakeLists.txt")
      add_subdirectory("${child}")
    endif()
  endforeach()
endfunction()

# gr_add_library(<name> SOURCES ... [DEPS ...] [PUBLIC_DEPS ...])
# A static library whose public headers live in its own directory.
function(gr_add_library name)
  cmake_parse_arguments(A "" "" "SOURCES;DEPS;PUBLIC_DEPS" ${ARGN})
  add_library(${name} STATIC ${A_SOURCES})
  target_include_directories(${name} PUBLIC "${CMAKE_CURRENT_SOURCE_DIR}" "${CMAKE_CURRENT_BINARY_DIR}")
  target_compile_options(${name} PRIVATE ${GR_WARNINGS})
  target_link_libraries(${name} PUBLIC ${A_PUBLIC_DEPS} PRIVATE ${A_DEPS})
endfunction()

# gr_add_executable(<name> SOURCES ... [LIBS ...]): a product binary, installed.
function(gr_add_executable name)
  cmake_parse_arguments(A "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${A_SOURCES})
  target_compile_options(${name} PRIVATE ${GR_WARNINGS})
  target_link_libraries(${name} PRIVATE ${A_LIBS})
  install(TARGETS ${name} RUNTIME DESTINATION bin)
endfunction()

# gr_add_test(<name> SOURCES ... [LIBS ...] LABELS <unit|integration|conformance>
#             [ARGS ...] [ENV k=v ...] [TIMEOUT s] [WORKING_DIRECTORY d])
# A cmocka test binary registered with CTest. Tests labelled `integration`
# require the gr_cluster fixture and see GR_CLUSTER_DIR. A test that exits 77
# is reported as skipped (it must print why).
function(gr_add_test name)
  cmake_parse_arguments(A "" "TIMEOUT;WORKING_DIRECTORY" "SOURCES;LIBS;LABELS;ARGS;ENV" ${ARGN})
  if(NOT A_LABELS)
    message(FATAL_ERROR "gr_add_test(${name}): LABELS is required (unit, integration, conformance)")
  endif()
  add_executable(${name} ${A_SOURCES})
  target_compile_options(${name} PRIVATE ${GR_WARNINGS})
  target_link_libraries(${name} PRIVATE ${A_LIBS} PkgConfig::CMOCKA)
  if(NOT A_WORKING_DIRECTORY)
    set(A_WORKING_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}")
  endif()
  add_test(NAME ${name} COMMAND ${name} ${A_ARGS} WORKING_DIRECTORY "${A_WORKING_DIRECTORY}")
  gr_test_properties(${name} LABELS ${A_LABELS} ENV ${A_ENV} TIMEOUT ${A_TIMEOUT})
endfunction()

# gr_add_script_test(<name> COMMAND ... LABELS ...): a test that is a script.
function(gr_add_script_test name)
  cmake_parse_arguments(A "" "TIMEOUT;WORKING_DIRECTORY" "COMMAND;LABELS;ENV" ${ARGN})
  if(NOT A_WORKING_DIRECTORY)
    set(A_WORKING_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}")
  endif()
  add_test(NAME ${name} COMMAND ${A_COMMAND} WORKING_DIRECTORY "${A_WORKING_DIRECTORY}")
  gr_test_properties(${name} LABELS ${A_LABELS} ENV ${A_ENV} TIMEOUT ${A_TIMEOUT})
endfunction()

# Integration tests wait for the control plane; on a loaded machine that takes
# longer. GR_TEST_TIMEOUT_SCALE (an integer >= 1) multiplies their CTest
# TIMEOUT and reaches them as the environment variable of the same name, which
# scales every wait inside (test/harness/gr_test_scale.h; the load average
# scales them further). Left at 1, a GR_TEST_TIMEOUT_SCALE in ctest's own
# environment still reaches the tests.
set(GR_TEST_TIMEOUT_SCALE 1 CACHE STRING
    "Multiplier (integer >= 1) for integration-test waits and CTest timeouts")
if(NOT GR_TEST_TIMEOUT_SCALE MATCHES "^[1-9][0-9]*$")
  message(FATAL_ERROR "GR_TEST_TIMEOUT_SCALE: \"${GR_TEST_TIMEOUT_SCALE}\" is not an integer >= 1")
endif()

function(gr_test_properties name)
  cmake_parse_arguments(A "" "TIMEOUT" "LABELS;ENV" ${ARGN})
  set(env ${A_ENV} "GR_SOURCE_DIR=${PROJECT_SOURCE_DIR}" "GR_BINARY_DIR=${PROJECT_BINARY_DIR}"
      "ASAN_OPTIONS=detect_leaks=1:abort_on_error=0"
      "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
  if(NOT A_TIMEOUT)
    set(A_TIMEOUT 300)
  endif()
  if("integration" IN_LIST A_LABELS)
    list(APPEND env "GR_CLUSTER_DIR=${GR_CLUSTER_DIR}")
    set_tests_properties(${name} PROPERTIES FIXTURES_REQUIRED gr_cluster)
    if(NOT GR_TEST_TIMEOUT_SCALE EQUAL 1)
      list(APPEND env "GR_TEST_TIMEOUT_SCALE=${GR_TEST_TIMEOUT_SCALE}")
      math(EXPR A_TIMEOUT "${A_TIMEOUT} * ${GR_TEST_TIMEOUT_SCALE}")
    endif()
  endif()
  set_tests_properties(${name} PROPERTIES LABELS "${A_LABELS}" ENVIRONMENT "${env}"
                       TIMEOUT ${A_TIMEOUT} SKIP_RETURN_CODE 77)
endfunction()

# gr_add_fuzzer(<name> SOURCES ... [LIBS ...] CORPUS <dir> [DICT file])
# With GR_FUZZ=ON: a libFuzzer binary plus a `fuzz-smoke` test running it for
# GR_FUZZ_SECONDS on a copy of the corpus (a crash, leak or timeout exits 1,
# never libFuzzer's default 77, which CTest would read as "skipped"). Without: the same entry point linked
# to test/fuzz_replay.c and a `fuzz-smoke` test replaying every corpus file.
set(GR_FUZZ_SECONDS 5 CACHE STRING "Seconds per fuzzer in the fuzz-smoke label")
function(gr_add_fuzzer name)
  cmake_parse_arguments(A "" "CORPUS;DICT" "SOURCES;LIBS" ${ARGN})
  if(GR_FUZZ)
    add_executable(${name} ${A_SOURCES})
    target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  else()
    add_executable(${name} ${A_SOURCES} "${PROJECT_SOURCE_DIR}/test/fuzz_replay.c")
  endif()
  target_compile_options(${name} PRIVATE ${GR_WARNINGS})
  target_link_libraries(${name} PRIVATE ${A_LIBS})
  set(corpus "${CMAKE_CURRENT_SOURCE_DIR}/${A_CORPUS}")
  if(GR_FUZZ)
    set(work "${CMAKE_CURRENT_BINARY_DIR}/${name}-corpus")
    set(dictarg "")
    if(A_DICT)
      set(dictarg "-dict=${CMAKE_CURRENT_SOURCE_DIR}/${A_DICT}")
    endif()
    add_test(NAME ${name}
             COMMAND sh -c "rm -rf '${work}' && mkdir -p '${work}' && cp -r '${corpus}'/. '${work}'/ && exec \"$0\" -max_total_time=${GR_FUZZ_SECONDS} -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -error_exitcode=1 -timeout_exitcode=1 ${dictarg} '${work}'" $<TARGET_FILE:${name}>)
  else()
    add_test(NAME ${name} COMMAND ${name} "${corpus}")
  endif()
  gr_test_properties(${name} LABELS fuzz-smoke TIMEOUT 120)
endfunction()
