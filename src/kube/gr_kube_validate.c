/*
 * gr_kube_validate.c — the API server's name/label grammar and messages.
 * The strings below reproduce k8s.io/apimachinery v0.36
 * (pkg/api/validate/content) byte for byte; keep them in this one place.
 */
#include "gr_kube_validate.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gr_buf.h"

/* ---- the API server's strings ---------------------------------------- */

#define DNS1123_LABEL_FMT "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
#define DNS1123_LABEL_ERR                                                                        \
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and " \
    "must start and end with an alphanumeric character"
#define DNS1123_SUBDOMAIN_FMT DNS1123_LABEL_FMT "(\\." DNS1123_LABEL_FMT ")*"
#define DNS1123_SUBDOMAIN_ERR                                                                    \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or " \
    "'.', and must start and end with an alphanumeric character"
#define LABEL_KEY_FMT "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
#define LABEL_KEY_ERR                                                                           \
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an " \
    "alphanumeric character"
#define LABEL_VALUE_FMT "(" LABEL_KEY_FMT ")?"
#define LABEL_VALUE_ERR                                                                         \
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or " \
    "'.', and must start and end with an alphanumeric character"
#define EMPTY_ERR "must be non-empty"
/* RegexError(msg, fmt, examples...): "msg (e.g. 'a',  or 'b', regex used for
 * validation is 'fmt')" — note the double space the upstream loop produces. */
#define RX_DNS1123_LABEL \
    DNS1123_LABEL_ERR    \
    " (e.g. 'my-name',  or '123-abc', regex used for validation is '" DNS1123_LABEL_FMT "')"
#define RX_DNS1123_SUBDOMAIN \
    DNS1123_SUBDOMAIN_ERR    \
    " (e.g. 'example.com', regex used for validation is '" DNS1123_SUBDOMAIN_FMT "')"
#define RX_LABEL_KEY                                                                             \
    LABEL_KEY_ERR " (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is " \
                  "'" LABEL_KEY_FMT "')"
#define RX_LABEL_VALUE                                                                          \
    LABEL_VALUE_ERR " (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation " \
                    "is '" LABEL_VALUE_FMT "')"
#define BAD_LABEL_KEY                 \
    "a valid label key " RX_LABEL_KEY \
    " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"

/* ---- matching --------------------------------------------------------- */

static void add(gr_kube_msgs *out, size_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void add(gr_kube_msgs *out, size_t *n, const char *fmt, ...)
{
    if (out && out->n < GR_KUBE_MSGS_MAX) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(out->msg[out->n], GR_KUBE_MSG_LEN, fmt, ap);
        va_end(ap);
        out->n++;
    }
    (*n)++;
}

static bool lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool alnum(char c)
{
    return lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

/* [a-z0-9]([-a-z0-9]*[a-z0-9])? over s[0..n) */
static bool match_label(const char *s, size_t n)
{
    if (n == 0 || !lower_alnum(s[0]) || !lower_alnum(s[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!lower_alnum(s[i]) && s[i] != '-')
            return false;
    return true;
}

static bool match_subdomain(const char *s, size_t n)
{
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || s[i] == '.') {
            if (!match_label(s + start, i - start))
                return false;
            start = i + 1;
        }
    }
    return true;
}

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] */
static bool match_key_name(const char *s, size_t n)
{
    if (n == 0 || !alnum(s[0]) || !alnum(s[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return false;
    return true;
}

static size_t msgs_start(gr_kube_msgs *out)
{
    if (out)
        out->n = 0;
    return 0;
}

size_t gr_kube_is_dns1123_label(const char *value, gr_kube_msgs *out)
{
    size_t n = msgs_start(out), len = strlen(value);
    if (len > GR_KUBE_DNS1123_LABEL_MAX)
        add(out, &n, "must be no more than %d bytes", GR_KUBE_DNS1123_LABEL_MAX);
    if (!match_label(value, len)) {
        if (match_subdomain(value, len))
            add(out, &n, "must not contain dots");
        else
            add(out, &n, "%s", RX_DNS1123_LABEL);
    }
    return n;
}

static size_t subdomain_into(const char *value, size_t len, const char *prefix, gr_kube_msgs *out,
                             size_t n)
{
    if (len > GR_KUBE_DNS1123_SUBDOMAIN_MAX)
        add(out, &n, "%smust be no more than %d bytes", prefix, GR_KUBE_DNS1123_SUBDOMAIN_MAX);
    if (!match_subdomain(value, len))
        add(out, &n, "%s%s", prefix, RX_DNS1123_SUBDOMAIN);
    return n;
}

size_t gr_kube_is_dns1123_subdomain(const char *value, gr_kube_msgs *out)
{
    size_t n = msgs_start(out);
    return subdomain_into(value, strlen(value), "", out, n);
}

size_t gr_kube_is_qualified_name(const char *value, gr_kube_msgs *out)
{
    size_t n = msgs_start(out);
    const char *slash = strchr(value, '/');
    const char *name = value;
    if (slash) {
        if (strchr(slash + 1, '/')) {
            add(out, &n, "%s", BAD_LABEL_KEY);
            return n;
        }
        size_t plen = (size_t)(slash - value);
        if (plen == 0)
            add(out, &n, "prefix part " EMPTY_ERR);
        else
            n = subdomain_into(value, plen, "prefix part ", out, n);
        name = slash + 1;
    }
    size_t nlen = strlen(name);
    if (nlen == 0)
        add(out, &n, "name part " EMPTY_ERR);
    else if (nlen > GR_KUBE_QUALIFIED_NAME_MAX)
        add(out, &n, "name part must be no more than %d bytes", GR_KUBE_QUALIFIED_NAME_MAX);
    if (!match_key_name(name, nlen))
        add(out, &n, "name part %s", RX_LABEL_KEY);
    return n;
}

size_t gr_kube_is_label_value(const char *value, gr_kube_msgs *out)
{
    size_t n = msgs_start(out), len = strlen(value);
    if (len > GR_KUBE_LABEL_VALUE_MAX)
        add(out, &n, "must be no more than %d bytes", GR_KUBE_LABEL_VALUE_MAX);
    if (len > 0 && !match_key_name(value, len))
        add(out, &n, "%s", RX_LABEL_VALUE);
    return n;
}

/* ---- field errors ----------------------------------------------------- */

/* Go's %q for a string: printable ASCII as is, \" \\ and escapes for the
 * rest (\n \t \r, \xNN for other control bytes; other UTF-8 bytes are kept,
 * which is what %q does for valid UTF-8). */
static void go_quote(gr_buf *b, const char *s)
{
    gr_buf_putc(b, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"':
            gr_buf_puts(b, "\\\"");
            break;
        case '\\':
            gr_buf_puts(b, "\\\\");
            break;
        case '\n':
            gr_buf_puts(b, "\\n");
            break;
        case '\t':
            gr_buf_puts(b, "\\t");
            break;
        case '\r':
            gr_buf_puts(b, "\\r");
            break;
        default:
            if (*p < 0x20 || *p == 0x7f)
                gr_buf_printf(b, "\\x%02x", *p);
            else
                gr_buf_putc(b, (char)*p);
        }
    }
    gr_buf_putc(b, '"');
}

static int field_invalid(gr_err *err, const char *field, const char *value, const char *msg)
{
    gr_buf b = GR_BUF_INIT(GR_ERR_MSG_MAX * 2);
    go_quote(&b, value);
    gr_err_set(err, GR_EINVAL, "%s: Invalid value: %s: %s", field, gr_buf_cstr(&b), msg);
    gr_buf_free(&b);
    return GR_EINVAL;
}

int gr_kube_validate_name(const char *name, gr_kube_name_rule rule, const char *field, gr_err *err)
{
    if (!field)
        field = "metadata.name";
    if (!name || !*name)
        return gr_err_set(err, GR_EINVAL, "%s: Required value: name or generateName is required",
                          field);
    gr_kube_msgs m;
    size_t n = rule == GR_KUBE_NAME_LABEL ? gr_kube_is_dns1123_label(name, &m)
                                          : gr_kube_is_dns1123_subdomain(name, &m);
    if (n)
        return field_invalid(err, field, name, m.msg[0]);
    return GR_OK;
}

int gr_kube_validate_labels(const json_t *labels, const char *field, gr_err *err)
{
    if (!field)
        field = "metadata.labels";
    if (!labels || json_is_null(labels))
        return GR_OK;
    if (!json_is_object(labels))
        return gr_err_set(err, GR_EINVAL, "%s: must be an object of string values", field);
    const char *k;
    json_t *v;
    gr_kube_msgs m;
    json_object_foreach((json_t *)(uintptr_t)labels, k, v)
    {
        if (gr_kube_is_qualified_name(k, &m))
            return field_invalid(err, field, k, m.msg[0]);
        if (!json_is_string(v))
            return gr_err_set(err, GR_EINVAL, "%s[%s]: must be a string", field, k);
        if (gr_kube_is_label_value(json_string_value(v), &m))
            return field_invalid(err, field, json_string_value(v), m.msg[0]);
    }
    return GR_OK;
}

int gr_kube_validate_annotations(const json_t *annotations, const char *field, gr_err *err)
{
    if (!field)
        field = "metadata.annotations";
    if (!annotations || json_is_null(annotations))
        return GR_OK;
    if (!json_is_object(annotations))
        return gr_err_set(err, GR_EINVAL, "%s: must be an object of string values", field);
    const char *k;
    json_t *v;
    gr_kube_msgs m;
    size_t total = 0;
    char lower[512];
    json_object_foreach((json_t *)(uintptr_t)annotations, k, v)
    {
        size_t kl = strlen(k);
        if (kl < sizeof lower) {
            for (size_t i = 0; i <= kl; i++)
                lower[i] = (k[i] >= 'A' && k[i] <= 'Z') ? (char)(k[i] - 'A' + 'a') : k[i];
            if (gr_kube_is_qualified_name(lower, &m))
                return field_invalid(err, field, k, m.msg[0]);
        } else if (gr_kube_is_qualified_name(k, &m)) { /* too long either way */
            return field_invalid(err, field, k, m.msg[0]);
        }
        if (!json_is_string(v))
            return gr_err_set(err, GR_EINVAL, "%s[%s]: must be a string", field, k);
        total += kl + json_string_length(v);
    }
    if (total > GR_KUBE_ANNOTATIONS_MAX_BYTES)
        return gr_err_set(err, GR_EINVAL, "%s: Too long: may not be more than %d bytes", field,
                          GR_KUBE_ANNOTATIONS_MAX_BYTES);
    return GR_OK;
}
