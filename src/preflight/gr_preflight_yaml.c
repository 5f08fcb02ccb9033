/*
 * gr_preflight_yaml.c — JSON → block-style YAML for human output (the
 * offline `inject` command). Strings that a YAML 1.2 core-schema reader
 * would not read back as the same string are written JSON-quoted (valid
 * YAML), so the output round-trips through gr_yaml.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gr_preflight.h"
#include "gr_preflight_internal.h"

static bool plain_ok(const char *s)
{
    if (!*s)
        return false;
    static const char *const reserved[] = {"null", "~",   "true", "false", "yes", "no",
                                           "on",   "off", "y",    "n",     NULL};
    for (size_t i = 0; reserved[i]; i++)
        if (strcasecmp(s, reserved[i]) == 0)
            return false;
    /* must not start like a number, indicator or space */
    unsigned char c0 = (unsigned char)s[0];
    if (!(isalpha(c0) || c0 == '_' || c0 == '/'))
        return false;
    for (const char *p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (!(isalnum(c) || c == '_' || c == '-' || c == '.' || c == '/' || c == ':' || c == '='))
            return false;
        if (c == ':' && (p[1] == 0 || p[1] == ' '))
            return false;
    }
    /* .inf/.nan-like and 0x…/0o… never start with a letter except these */
    return true;
}

static int scalar(gr_buf *out, const json_t *v)
{
    if (json_is_string(v)) {
        if (plain_ok(json_string_value(v)))
            return gr_buf_puts(out, json_string_value(v));
        char *q = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        if (!q)
            return GR_ENOMEM;
        int rc = gr_buf_puts(out, q);
        free(q);
        return rc;
    }
    char *q = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    if (!q)
        return GR_ENOMEM;
    int rc = gr_buf_puts(out, q);
    free(q);
    return rc;
}

static int indent(gr_buf *out, int n)
{
    for (int i = 0; i < n; i++)
        if (gr_buf_putc(out, ' ') != GR_OK)
            return GR_ENOMEM;
    return GR_OK;
}

static bool is_coll(const json_t *v)
{
    return (json_is_object(v) && json_object_size(v) > 0) ||
           (json_is_array(v) && json_array_size(v) > 0);
}

static int node(gr_buf *out, const json_t *v, int ind, bool inline_first);

static int key(gr_buf *out, const char *k)
{
    if (plain_ok(k))
        return gr_buf_puts(out, k);
    json_t *s = json_string(k);
    int rc = s ? scalar(out, s) : GR_ENOMEM;
    json_decref(s);
    return rc;
}

/* Write a collection at indentation `ind`. When inline_first, the first
 * line continues the current line (after "- "). */
static int node(gr_buf *out, const json_t *v, int ind, bool inline_first)
{
    int rc = GR_OK;
    bool first = true;
    if (json_is_object(v)) {
        const char *k;
        json_t *c;
        json_object_foreach(gr_pf_mut(v), k, c)
        {
            if (!(first && inline_first))
                rc |= indent(out, ind);
            first = false;
            rc |= key(out, k);
            rc |= gr_buf_putc(out, ':');
            if (is_coll(c)) {
                rc |= gr_buf_putc(out, '\n');
                rc |= node(out, c, json_is_array(c) ? ind : ind + 2, false);
            } else {
                rc |= gr_buf_putc(out, ' ');
                rc |= scalar(out, c);
                rc |= gr_buf_putc(out, '\n');
            }
        }
    } else {
        size_t i;
        json_t *c;
        json_array_foreach(v, i, c)
        {
            if (!(first && inline_first))
                rc |= indent(out, ind);
            first = false;
            rc |= gr_buf_puts(out, "- ");
            if (is_coll(c)) {
                if (json_is_array(c)) {
                    rc |= gr_buf_putc(out, '\n');
                    rc |= node(out, c, ind + 2, false);
                } else {
                    rc |= node(out, c, ind + 2, true);
                }
            } else {
                rc |= scalar(out, c);
                rc |= gr_buf_putc(out, '\n');
            }
        }
    }
    return rc ? GR_ENOMEM : GR_OK;
}

int gr_preflight_yaml_emit(const json_t *v, gr_buf *out)
{
    if (!is_coll(v)) {
        int rc = scalar(out, v);
        return rc ? rc : gr_buf_putc(out, '\n');
    }
    return node(out, v, 0, false);
}
