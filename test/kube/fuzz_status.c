/* libFuzzer target: the API server's error body (metav1.Status) parser.
 * Input: "<http code>\n<body>" (the code may be absent: 0, as watch ERROR
 * events). The body goes through gr_kube_status_from_response() and, when
 * it is JSON, gr_kube_status_from_json() too. Invariants: no crash, no leak;
 * the return code is the reason's mapping; the cause count stays capped;
 * every string field is NUL-terminated inside its array and free of control
 * characters. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gr_kube_rest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_str(const char *s, size_t cap)
{
    size_t n = strnlen(s, cap);
    if (n == cap)
        abort(); /* not terminated */
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7F)
            abort();
}

static void check(long http, int rc, const gr_kube_status *st)
{
    if (st->ncauses > GR_KUBE_CAUSES_MAX)
        abort();
    check_str(st->reason_str, sizeof st->reason_str);
    check_str(st->message, sizeof st->message);
    check_str(st->kind, sizeof st->kind);
    check_str(st->name, sizeof st->name);
    for (size_t i = 0; i < st->ncauses; i++) {
        check_str(st->causes[i].type, sizeof st->causes[i].type);
        check_str(st->causes[i].field, sizeof st->causes[i].field);
        check_str(st->causes[i].message, sizeof st->causes[i].message);
    }
    if (st->retry_after_s < 0 || st->retry_after_s > GR_KUBE_RETRY_AFTER_MAX_S)
        abort();
    if (http >= 200 && http < 300)
        return;
    if (rc != gr_kube_reason_code(st->reason) || rc == GR_OK || st->reason == GR_KUBE_REASON_NONE ||
        !st->reason_str[0])
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    long http = 0;
    size_t i = 0;
    while (i < size && i < 4 && data[i] >= '0' && data[i] <= '9')
        http = http * 10 + (data[i++] - '0');
    if (i < size && data[i] == '\n')
        i++;
    const char *body = (const char *)data + i;
    size_t len = size - i;

    gr_kube_status st;
    int rc = gr_kube_status_from_response(http, body, len, &st);
    check(st.http_code, rc, &st);

    json_t *doc = json_loadb(body, len, 0, NULL);
    if (doc) {
        rc = gr_kube_status_from_json(0, doc, &st);
        check(st.http_code, rc, &st);
        json_decref(doc);
    }
    return 0;
}
