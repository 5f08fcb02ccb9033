/*
 * oom_inject.h — failure-injection allocator for tests that make allocation
 * fail (nghttp2 style). Test-only; link oom_inject.c into a test binary with
 *
 *   -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=strndup
 *
 * (see test/base/oom.cmake). --wrap redirects only the calls made from
 * objects linked into the binary (our static libraries and the test), not
 * calls made inside shared libraries; jansson is covered separately through
 * json_set_alloc_funcs() (gr_oom_install_jansson()). Allocations made inside
 * libfyaml, PCRE2 and libc (vasprintf, stdio) are not counted.
 *
 * Usage: for N = 1, 2, 3, … arm the allocator to fail the Nth counted
 * allocation, run the operation, disarm; when gr_oom_disarm() reports that no
 * failure was injected the operation ran to completion and the loop ends.
 *
 * Not thread-safe: for single-threaded tests only.
 */
#ifndef GR_TEST_OOM_INJECT_H
#define GR_TEST_OOM_INJECT_H

#include <stdbool.h>

/* Route jansson's allocations through the injector. Call once, first thing in
 * main(), before any jansson value exists. */
void gr_oom_install_jansson(void);

/* Fail the nth (1-based) counted allocation from now on. sticky: also fail
 * every allocation after it (memory stays exhausted); otherwise only the nth
 * fails and later ones succeed again (exercises recovery paths). */
void gr_oom_arm(long nth, bool sticky);

/* Stop injecting. Returns true when at least one allocation was failed since
 * gr_oom_arm(). */
bool gr_oom_disarm(void);

/* Allocations counted since the last gr_oom_arm(). */
long gr_oom_count(void);

#endif
