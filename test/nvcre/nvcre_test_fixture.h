/*
 * nvcre_test_fixture.h — the fixture the Certification-level unit tests
 * share (test_nvcre_cert.c, test_nvcre_detect.c, test_nvcre_wlrun.c): the
 * built-in catalog, loaded by the group setup into `cat` and freed by its
 * teardown, and yaml(), which reads a YAML literal or fails the test.
 * Include once per test program, after <cmocka.h>. yaml(): the caller owns
 * the returned value.
 */
#ifndef NVCRE_TEST_FIXTURE_H
#define NVCRE_TEST_FIXTURE_H

#include <string.h>

#include <jansson.h>

#include "gr_nvcre_catalog.h"
#include "gr_yaml.h"

#define NOW (1767225600LL * 1000000000LL) /* 2026-01-01T00:00:00Z */

static gr_nvcre_catalog *cat;

static int setup(void **state)
{
    (void)state;
    return gr_nvcre_catalog_load(&cat, NULL) == GR_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    gr_nvcre_catalog_free(cat);
    return 0;
}

static json_t *yaml(const char *s)
{
    json_t *v = NULL;
    gr_err err;
    if (gr_yaml_load_one(s, strlen(s), "test", &v, &err) != GR_OK)
        fail_msg("yaml: %s", err.msg);
    return v;
}

#endif
