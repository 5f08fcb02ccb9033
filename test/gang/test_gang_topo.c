/*
 * test_gang_topo.c — the bundled NCCL topology files and the topology
 * ConfigMap (PF-156, PF-157; facts §2.13, §4.1).
 *
 * The XML is checked by a small reader written for this test with the rules
 * of NCCL's own reader (src/graph/xml.cc: only spaces and newlines between
 * elements, no <?xml?> declaration, attributes as key="value", comments
 * allowed) plus XML well-formedness (balanced, properly nested tags; no "--"
 * inside comments), and then for the shape the file describes: NUMA nodes
 * with disjoint CPU masks covering the VM's 96 vCPUs, 8 GPUs of the right
 * model, 8 InfiniBand NICs of the right speed, GPU n sharing its bridge with
 * NIC mlx5_ib<n>, unique bus IDs, PCIe link speeds NCCL knows.
 */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gr_gang.h"
#include "gr_preflight.h"

/* ------------------------------------------------------- tiny XML reader */

#define MAX_NODES 256
#define MAX_ATTRS 12

typedef struct xattr {
    char key[32];
    char val[64];
} xattr;

typedef struct xnode {
    char name[16];
    int parent; /* -1 for the root */
    xattr attrs[MAX_ATTRS];
    int n_attrs;
} xnode;

typedef struct xdoc {
    xnode n[MAX_NODES];
    int count;
    char why[160];
} xdoc;

static int xfail(xdoc *d, const char *p, const char *base, const char *what)
{
    snprintf(d->why, sizeof d->why, "offset %td: %s", p - base, what);
    return -1;
}

/* Parse text into d; 0 or -1 with d->why. */
static int xparse(const char *text, xdoc *d)
{
    memset(d, 0, sizeof *d);
    int stack[64];
    int depth = 0, roots = 0;
    const char *p = text;
    for (;;) {
        while (*p == ' ' || *p == '\n' || *p == '\r')
            p++;
        if (!*p)
            break;
        if (*p != '<')
            return xfail(d, p, text, "expected '<' (NCCL skips only spaces and newlines)");
        p++;
        if (strncmp(p, "!--", 3) == 0) {
            const char *end = strstr(p + 3, "--");
            if (!end || end[2] != '>')
                return xfail(d, p, text, "\"--\" inside a comment or unterminated comment");
            p = end + 3;
            continue;
        }
        if (*p == '?' || *p == '!')
            return xfail(d, p, text, "declarations are not read by NCCL");
        if (*p == '/') {
            p++;
            const char *s = p;
            while (isalnum((unsigned char)*p))
                p++;
            if (!depth || (size_t)(p - s) != strlen(d->n[stack[depth - 1]].name) ||
                strncmp(s, d->n[stack[depth - 1]].name, (size_t)(p - s)) != 0 || *p != '>')
                return xfail(d, s, text, "mismatched closing tag");
            p++;
            depth--;
            continue;
        }
        if (d->count == MAX_NODES)
            return xfail(d, p, text, "too many elements");
        xnode *n = &d->n[d->count];
        const char *s = p;
        while (isalnum((unsigned char)*p))
            p++;
        if (p == s || (size_t)(p - s) >= sizeof n->name)
            return xfail(d, s, text, "bad element name");
        memcpy(n->name, s, (size_t)(p - s));
        n->parent = depth ? stack[depth - 1] : -1;
        if (!depth && roots++)
            return xfail(d, s, text, "more than one root element");
        for (;;) {
            if (*p == '/' && p[1] == '>') {
                p += 2;
                d->count++;
                break;
            }
            if (*p == '>') {
                p++;
                if (depth == 64)
                    return xfail(d, p, text, "too deep");
                stack[depth++] = d->count++;
                break;
            }
            if (*p != ' ')
                return xfail(d, p, text, "expected a space, '>' or '/>'");
            while (*p == ' ')
                p++;
            if (*p == '>' || *p == '/')
                continue;
            if (n->n_attrs == MAX_ATTRS)
                return xfail(d, p, text, "too many attributes");
            xattr *a = &n->attrs[n->n_attrs];
            s = p;
            while (isalnum((unsigned char)*p) || *p == '_')
                p++;
            if (p == s || (size_t)(p - s) >= sizeof a->key || p[0] != '=' || p[1] != '"')
                return xfail(d, s, text, "expected key=\"value\"");
            memcpy(a->key, s, (size_t)(p - s));
            for (int i = 0; i < n->n_attrs; i++)
                if (strcmp(n->attrs[i].key, a->key) == 0)
                    return xfail(d, s, text, "duplicate attribute");
            p += 2;
            s = p;
            while (*p && *p != '"' && *p != '<' && *p != '&' && *p != '\n')
                p++;
            if (*p != '"' || (size_t)(p - s) >= sizeof a->val)
                return xfail(d, s, text, "bad attribute value");
            memcpy(a->val, s, (size_t)(p - s));
            p++;
            n->n_attrs++;
        }
    }
    if (depth)
        return xfail(d, p, text, "unclosed element");
    if (!roots)
        return xfail(d, p, text, "no root element");
    return 0;
}

static const char *attr(const xdoc *d, int i, const char *key)
{
    for (int k = 0; k < d->n[i].n_attrs; k++)
        if (strcmp(d->n[i].attrs[k].key, key) == 0)
            return d->n[i].attrs[k].val;
    return NULL;
}

static int child(const xdoc *d, int parent, const char *name)
{
    for (int i = 0; i < d->count; i++)
        if (d->n[i].parent == parent && strcmp(d->n[i].name, name) == 0)
            return i;
    return -1;
}

static int count_children(const xdoc *d, int parent)
{
    int c = 0;
    for (int i = 0; i < d->count; i++)
        c += d->n[i].parent == parent;
    return c;
}

static bool under(const xdoc *d, int i, const char *name)
{
    for (int p = d->n[i].parent; p >= 0; p = d->n[p].parent)
        if (strcmp(d->n[p].name, name) == 0)
            return true;
    return false;
}

/* The reader itself must refuse what NCCL refuses (a test that can fail). */
static void test_reader_refuses(void **state)
{
    (void)state;
    static xdoc d;
    assert_int_equal(xparse("<system version=\"1\"><cpu/></system>", &d), 0);
    assert_int_equal(d.count, 2);
    assert_int_equal(xparse("<system version=\"1\">\t<cpu/></system>", &d), -1);
    assert_int_equal(xparse("<?xml version=\"1.0\"?><system/>", &d), -1);
    assert_int_equal(xparse("<system><cpu></system>", &d), -1);
    assert_int_equal(xparse("<system></cpu>", &d), -1);
    assert_int_equal(xparse("<system a=1/>", &d), -1);
    assert_int_equal(xparse("<system a=\"1\" a=\"2\"/>", &d), -1);
    assert_int_equal(xparse("<!-- a -- b --><system/>", &d), -1);
    assert_int_equal(xparse("<system/><system/>", &d), -1);
    assert_int_equal(xparse("<!-- note --><system/>", &d), 0);
}

/* ----------------------------------------------------- the shape checks */

typedef struct shape {
    const char *name;
    int numa;
    const char *cpu_vendor;
    const char *gpu_device; /* PCI device ID */
    const char *sm;
    const char *nic_device;
    const char *speed; /* Mb/s */
    const char *link;  /* PCIe link speed as NCCL spells it */
} shape;

static const shape NDV4 = {"ndv4", 4,        "AuthenticAMD", "0x20b0",
                           "80",   "0x101c", "200000",       "16.0 GT/s PCIe"};
static const shape NDV5 = {"ndv5", 2,        "GenuineIntel", "0x2330",
                           "90",   "0x101e", "400000",       "32.0 GT/s PCIe"};

/* Parse "xxxxxxxx,xxxxxxxx,xxxxxxxx" (most significant word first) into 3
 * 32-bit words, least significant first. */
static void parse_mask(const char *s, uint32_t w[3])
{
    unsigned a, b, c;
    assert_int_equal(sscanf(s, "%8x,%8x,%8x", &a, &b, &c), 3);
    w[0] = c;
    w[1] = b;
    w[2] = a;
}

static void check_shape(const shape *sh)
{
    const char *xml = gr_gang_topo_builtin(sh->name);
    assert_non_null(xml);
    static xdoc d;
    if (xparse(xml, &d) != 0)
        fail_msg("%s.xml: %s", sh->name, d.why);
    assert_string_equal(d.n[0].name, "system");
    assert_string_equal(attr(&d, 0, "version"), "1");

    /* NUMA nodes: disjoint masks covering vCPUs 0..95 */
    uint32_t all[3] = {0, 0, 0};
    int cpus = 0;
    for (int i = 0; i < d.count; i++) {
        if (strcmp(d.n[i].name, "cpu") != 0)
            continue;
        assert_int_equal(d.n[i].parent, 0);
        char want[16];
        snprintf(want, sizeof want, "%d", cpus);
        assert_string_equal(attr(&d, i, "numaid"), want);
        assert_string_equal(attr(&d, i, "arch"), "x86_64");
        assert_string_equal(attr(&d, i, "vendor"), sh->cpu_vendor);
        uint32_t w[3];
        parse_mask(attr(&d, i, "affinity"), w);
        for (int k = 0; k < 3; k++) {
            assert_int_equal(all[k] & w[k], 0);
            all[k] |= w[k];
        }
        assert_int_equal(__builtin_popcount(w[0]) + __builtin_popcount(w[1]) +
                             __builtin_popcount(w[2]),
                         96 / sh->numa);
        cpus++;
    }
    assert_int_equal(cpus, sh->numa);
    assert_true(all[0] == 0xffffffffu && all[1] == 0xffffffffu && all[2] == 0xffffffffu);

    int gpus = 0, nics = 0;
    for (int i = 0; i < d.count; i++) {
        if (strcmp(d.n[i].name, "pci") != 0)
            continue;
        const char *busid = attr(&d, i, "busid");
        const char *cls = attr(&d, i, "class");
        assert_non_null(busid);
        assert_non_null(cls);
        unsigned dom, bus, dev, fn;
        char tail;
        assert_int_equal(sscanf(busid, "%4x:%2x:%2x.%1x%c", &dom, &bus, &dev, &fn, &tail), 4);
        assert_int_equal(strlen(busid), 12);
        for (int j = i + 1; j < d.count; j++) /* unique bus IDs */
            if (strcmp(d.n[j].name, "pci") == 0)
                assert_string_not_equal(busid, attr(&d, j, "busid"));
        assert_true(under(&d, i, "cpu"));
        assert_string_equal(attr(&d, i, "link_speed"), sh->link);
        assert_string_equal(attr(&d, i, "link_width"), "16");
        if (strcmp(cls, "0x060400") == 0) { /* bridge / switch */
            assert_true(count_children(&d, i) > 0);
            continue;
        }
        if (strcmp(cls, "0x030200") == 0) { /* 3D controller: GPU */
            assert_string_equal(attr(&d, i, "vendor"), "0x10de");
            assert_string_equal(attr(&d, i, "device"), sh->gpu_device);
            int g = child(&d, i, "gpu");
            assert_true(g >= 0);
            assert_int_equal(count_children(&d, i), 1);
            assert_string_equal(attr(&d, g, "sm"), sh->sm);
            /* per-process values are NCCL's to fill */
            assert_null(attr(&d, g, "dev"));
            assert_null(attr(&d, g, "rank"));
            assert_null(attr(&d, g, "gdr"));
            /* GPU n at <n+1>:00:00.0 shares its bridge with NIC n */
            int n = (int)dom - 1;
            assert_true(n >= 0 && n < 8);
            assert_int_equal(bus, 0);
            char nicbus[24], netname[24];
            snprintf(nicbus, sizeof nicbus, "%04x:00:00.0", 0x101 + n);
            snprintf(netname, sizeof netname, "mlx5_ib%d", n);
            int sib = -1;
            for (int j = 0; j < d.count; j++)
                if (d.n[j].parent == d.n[i].parent && strcmp(d.n[j].name, "pci") == 0 &&
                    strcmp(attr(&d, j, "busid"), nicbus) == 0)
                    sib = j;
            if (sib < 0)
                fail_msg("%s: GPU %s has no NIC %s beside it", sh->name, busid, nicbus);
            int nic = child(&d, sib, "nic");
            assert_true(nic >= 0);
            int net = child(&d, nic, "net");
            assert_true(net >= 0);
            assert_string_equal(attr(&d, net, "name"), netname);
            gpus++;
            continue;
        }
        if (strcmp(cls, "0x020700") == 0) { /* InfiniBand controller */
            assert_string_equal(attr(&d, i, "vendor"), "0x15b3");
            assert_string_equal(attr(&d, i, "device"), sh->nic_device);
            int nic = child(&d, i, "nic");
            assert_true(nic >= 0);
            assert_int_equal(count_children(&d, nic), 1);
            int net = child(&d, nic, "net");
            assert_string_equal(attr(&d, net, "speed"), sh->speed);
            assert_string_equal(attr(&d, net, "port"), "1");
            assert_null(attr(&d, net, "dev"));
            assert_null(attr(&d, net, "gdr"));
            nics++;
            continue;
        }
        fail_msg("%s: pci %s has unexpected class %s", sh->name, busid, cls);
    }
    assert_int_equal(gpus, 8);
    assert_int_equal(nics, 8);
    /* every GPU and NIC is on a NUMA node with others of its kind spread
     * evenly: 8 / numa GPUs per cpu */
    for (int i = 0; i < d.count; i++) {
        if (strcmp(d.n[i].name, "cpu") != 0)
            continue;
        int g = 0;
        for (int j = 0; j < d.count; j++) {
            if (strcmp(d.n[j].name, "gpu") != 0)
                continue;
            for (int p = d.n[j].parent; p >= 0; p = d.n[p].parent)
                if (p == i)
                    g++;
        }
        assert_int_equal(g, 8 / sh->numa);
    }
}

/* PF-157: ndv4 = 8x A100 + 8 HDR NICs; ndv5 = 8x H100 + 8 NDR NICs. */
static void test_bundled_ndv4(void **state)
{
    (void)state;
    check_shape(&NDV4);
}

static void test_bundled_ndv5(void **state)
{
    (void)state;
    check_shape(&NDV5);
}

static void test_builtin_lookup(void **state)
{
    (void)state;
    assert_null(gr_gang_topo_builtin(NULL));
    assert_null(gr_gang_topo_builtin(""));
    assert_null(gr_gang_topo_builtin("ndv6"));
    assert_null(gr_gang_topo_builtin("NDV4"));
    assert_ptr_not_equal(gr_gang_topo_builtin("ndv4"), gr_gang_topo_builtin("ndv5"));
    assert_non_null(strstr(gr_gang_topo_builtin("ndv4"), "ND96asr_v4"));
    assert_non_null(strstr(gr_gang_topo_builtin("ndv5"), "ND96isr_H100_v5"));
}

static gr_preflight_config *cfg_of(const char *gang_yaml)
{
    char yaml[1024];
    snprintf(yaml, sizeof yaml,
             "gangCoordination:\n  enabled: true\n%s"
             "initContainers:\n  - name: preflight-nccl-allreduce\n    image: busybox\n",
             gang_yaml);
    gr_preflight_config *cfg = NULL;
    gr_err err;
    if (gr_preflight_config_parse(yaml, strlen(yaml), "test", NULL, NULL, &cfg, &err) != GR_OK)
        fail_msg("config: %s", err.msg);
    return cfg;
}

/* PF-156, PF-157: which XML (if any) the controller puts in which ConfigMap. */
static void test_topo_selection(void **state)
{
    (void)state;
    assert_null(gr_gang_topo_xml(NULL));
    /* defaults: nothing */
    gr_preflight_config *cfg = cfg_of("");
    assert_string_equal(cfg->gang.nccl_topo_configmap, ""); /* PF-156 */
    assert_string_equal(cfg->gang.nccl_topo_shape, "");     /* PF-157 */
    assert_null(gr_gang_topo_xml(cfg));
    gr_preflight_config_free(cfg);
    /* shape only: the default ConfigMap name and the bundled file */
    cfg = cfg_of("  ncclTopoShape: ndv5\n");
    assert_string_equal(cfg->gang.nccl_topo_configmap, "preflight-nccl-topo");
    assert_ptr_equal(gr_gang_topo_xml(cfg), gr_gang_topo_builtin("ndv5"));
    gr_preflight_config_free(cfg);
    cfg = cfg_of("  ncclTopoShape: ndv4\n  ncclTopoConfigMap: my-topo\n");
    assert_string_equal(cfg->gang.nccl_topo_configmap, "my-topo");
    assert_ptr_equal(gr_gang_topo_xml(cfg), gr_gang_topo_builtin("ndv4"));
    gr_preflight_config_free(cfg);
    /* ncclTopoData (the Helm chart inlines its file) wins over the shape */
    cfg = cfg_of("  ncclTopoShape: ndv4\n  ncclTopoData: \"<system version=\\\"1\\\"/>\"\n");
    assert_string_equal(gr_gang_topo_xml(cfg), "<system version=\"1\"/>");
    gr_preflight_config_free(cfg);
    /* a pre-existing ConfigMap alone is the user's: nothing to create */
    cfg = cfg_of("  ncclTopoConfigMap: azure-topo\n");
    assert_null(gr_gang_topo_xml(cfg));
    gr_preflight_config_free(cfg);
}

/* Facts §4.1: data topo.xml, labels component nccl-topo / name nvsentinel. */
static void test_topo_configmap(void **state)
{
    (void)state;
    const char *xml = gr_gang_topo_builtin("ndv4");
    json_t *cm = gr_gang_topo_configmap("preflight-nccl-topo", "team-a", xml, "ndv4");
    assert_non_null(cm);
    assert_string_equal(json_string_value(json_object_get(cm, "kind")), "ConfigMap");
    const json_t *md = json_object_get(cm, "metadata");
    assert_string_equal(json_string_value(json_object_get(md, "name")), "preflight-nccl-topo");
    assert_string_equal(json_string_value(json_object_get(md, "namespace")), "team-a");
    const json_t *l = json_object_get(md, "labels");
    assert_string_equal(json_string_value(json_object_get(l, "app.kubernetes.io/component")),
                        "nccl-topo");
    assert_string_equal(json_string_value(json_object_get(l, "app.kubernetes.io/name")),
                        "nvsentinel");
    assert_string_equal(json_string_value(json_object_get(l, GR_GANG_TOPO_LABEL_SHAPE)), "ndv4");
    const json_t *data = json_object_get(cm, "data");
    assert_int_equal(json_object_size(data), 1);
    assert_string_equal(json_string_value(json_object_get(data, "topo.xml")), xml);
    json_decref(cm);
    /* no shape (ncclTopoData): no shape label */
    cm = gr_gang_topo_configmap("t", "ns", "<system version=\"1\"/>", "");
    l = json_object_get(json_object_get(cm, "metadata"), "labels");
    assert_null(json_object_get(l, GR_GANG_TOPO_LABEL_SHAPE));
    assert_int_equal(json_object_size(l), 2);
    json_decref(cm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reader_refuses), cmocka_unit_test(test_bundled_ndv4),
        cmocka_unit_test(test_bundled_ndv5),   cmocka_unit_test(test_builtin_lookup),
        cmocka_unit_test(test_topo_selection), cmocka_unit_test(test_topo_configmap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
