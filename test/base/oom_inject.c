/*
 * oom_inject.c — see oom_inject.h. The __wrap_* functions replace malloc,
 * calloc, realloc, strdup and strndup for every object linked with
 * -Wl,--wrap=…; __real_* reach the real allocator (ASan's when sanitized).
 */
#include "oom_inject.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

static bool armed;
static bool sticky_mode;
static bool injected;
static long fail_at;
static long counted;

void gr_oom_arm(long nth, bool sticky)
{
    fail_at = nth;
    sticky_mode = sticky;
    counted = 0;
    injected = false;
    armed = true;
}

bool gr_oom_disarm(void)
{
    armed = false;
    return injected;
}

long gr_oom_count(void)
{
    return counted;
}

/* One allocation is about to happen: true when it must fail. */
static bool should_fail(void)
{
    if (!armed)
        return false;
    counted++;
    if (counted == fail_at || (sticky_mode && counted > fail_at)) {
        injected = true;
        return true;
    }
    return false;
}

void *__wrap_malloc(size_t n)
{
    return should_fail() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
    return should_fail() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
    /* realloc(p, 0) frees; it is not an allocation that can fail. */
    if (n != 0 && should_fail())
        return NULL;
    return __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
    return should_fail() ? NULL : __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
    return should_fail() ? NULL : __real_strndup(s, n);
}

static void *json_alloc(size_t n)
{
    return should_fail() ? NULL : __real_malloc(n);
}

void gr_oom_install_jansson(void)
{
    json_set_alloc_funcs(json_alloc, free);
}
