# Third-party conformance suites for gr_base (label: conformance).
# JSON Patch (RFC 6902): every non-disabled case of ../shared/conformance/json-patch
# (tests.json + spec_tests.json); prints "json-patch conformance: N passed, ...".
gr_add_test(base_conformance_jsonpatch
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/conformance_jsonpatch.c
  LIBS gr_base
  LABELS conformance)
