/* libFuzzer target: the in-memory API server's request handling (path and
 * query parsing, label/field selectors, JSON bodies, patches) through the
 * real client. Input: "<METHOD> <path-with-query>\n<content-type>\n<body>".
 * A seeded ConfigMap and a Widget (with status) give the writes something
 * to touch. Invariants: no crash, no leak, every answer is GR_OK or a
 * mapped GR_E* code, and the fake still answers a plain GET afterwards. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gr_kube_fake.h"
#include "gr_kube_rest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const gr_kube_gvr WIDGETS = {"example.com", "v1", "widgets"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64 * 1024)
        return 0;
    char *in = malloc(size + 1);
    if (!in)
        return 0;
    memcpy(in, data, size);
    in[size] = '\0';
    char *nl = strchr(in, '\n');
    char *line = in, *ctype = NULL, *body = NULL;
    if (nl) {
        *nl = '\0';
        ctype = nl + 1;
        char *nl2 = strchr(ctype, '\n');
        if (nl2) {
            *nl2 = '\0';
            body = nl2 + 1;
        }
    }
    char *sp = strchr(line, ' ');
    if (!sp || line[0] == '\0' || sp[1] != '/') {
        free(in);
        return 0;
    }
    *sp = '\0';
    const char *method = line, *path = sp + 1;

    gr_kube_fake *f = NULL;
    gr_kube_client *c = NULL;
    if (gr_kube_fake_new(&f, NULL) != GR_OK) {
        free(in);
        return 0;
    }
    if (gr_kube_fake_add_resource(f, &WIDGETS, "Widget", true, true, NULL) != GR_OK ||
        gr_kube_fake_seed_yaml(f,
                               "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: "
                               "ns, labels: {app: x}, finalizers: [f/x]}\ndata: {k: v}\n---\n"
                               "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, "
                               "namespace: ns}\nspec: {v: 1}\nstatus: {p: a}\n",
                               NULL) != GR_OK ||
        gr_kube_fake_client(f, &c, NULL) != GR_OK) {
        gr_kube_fake_free(f);
        free(in);
        return 0;
    }
    gr_buf resp = GR_BUF_INIT(1 << 20);
    long http = 0;
    gr_kube_status st;
    int rc = gr_kube_request(c, method, path, ctype && *ctype ? ctype : NULL, body,
                             body ? strlen(body) : 0, NULL, &resp, &http, &st, NULL);
    if (rc > 0)
        abort();
    if (rc == GR_OK && (http < 200 || http >= 300))
        abort();
    json_t *o = NULL;
    if (gr_kube_get(c, &GR_KUBE_NAMESPACES, NULL, "nope", NULL, &o, &st, NULL) != GR_ENOTFOUND)
        abort();
    gr_buf_free(&resp);
    gr_kube_client_free(c);
    gr_kube_fake_free(f);
    free(in);
    return 0;
}
