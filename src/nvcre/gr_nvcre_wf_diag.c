/* gr_nvcre_wf_diag.c — diagnose mode state machine; see gr_nvcre_wf_diag.h. */
#include "gr_nvcre_wf_diag.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_json.h"
#include "gr_nvcre_types.h"
#include "gr_nvcre_wf.h"
#include "gr_time.h"

static const char *sget(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

/* Array- and object-valued members of `o`, created empty when missing. */
static json_t *arr(json_t *o, const char *k)
{
    return gr_json_array_child(o, k);
}
static json_t *obj(json_t *o, const char *k)
{
    return gr_json_object_child(o, k);
}

static int has(const json_t *a, const char *s)
{
    size_t i;
    json_t *x;
    json_array_foreach(
        a, i, x) if (!strcmp(json_string_value(x) ? json_string_value(x) : "", s)) return 1;
    return 0;
}
static void add_unique(json_t *a, const char *s)
{
    if (!has(a, s))
        json_array_append_new(a, json_string(s));
}
static void add_all(json_t *a, const json_t *src)
{
    size_t i;
    json_t *x;
    json_array_foreach(src, i, x) if (json_is_string(x)) add_unique(a, json_string_value(x));
}
static void remove_all(json_t *a, const json_t *src)
{
    for (size_t i = json_array_size(a); i-- > 0;)
        if (has(src, json_string_value(json_array_get(a, i))))
            json_array_remove(a, i);
}
static json_t *slice(const json_t *a, size_t from, size_t to)
{
    json_t *o = json_array();
    for (size_t i = from; i < to && i < json_array_size(a); i++)
        json_array_append(o, json_array_get(a, i));
    return o;
}
static int cmp_str(const void *a, const void *b)
{
    return strcmp(json_string_value(*(json_t *const *)a), json_string_value(*(json_t *const *)b));
}
static void sort_strings(json_t *a)
{
    size_t n = json_array_size(a);
    if (n < 2)
        return;
    json_t **v = malloc(n * sizeof *v);
    if (!v)
        return;
    for (size_t i = 0; i < n; i++)
        v[i] = json_incref(json_array_get(a, i));
    qsort(v, n, sizeof *v, cmp_str);
    json_array_clear(a);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, v[i]);
    free(v);
}

int gr_nvcre_wf_diag_enabled(const json_t *spec)
{
    return json_is_object(gr_json_ptr_get(spec, "/orchestration/diagnose"));
}

int gr_nvcre_wf_diag_mnnvl(const json_t *spec)
{
    size_t i;
    json_t *d;
    json_array_foreach(json_object_get(spec, "dependencies"), i,
                       d) if (!strcmp(sget(d, "kind"), "ComputeDomain")) return 1;
    return 0;
}

/* A domain label value as a group-name segment: lowercase alphanumerics,
 * anything else '-', at most 40 characters ("none" when empty). */
static void domain_segment(const char *v, char *out, size_t outsz)
{
    size_t n = 0;
    for (; *v && n + 1 < outsz && n < 40; v++)
        out[n++] = isalnum((unsigned char)*v) ? (char)tolower((unsigned char)*v) : '-';
    out[n] = 0;
    if (!n)
        snprintf(out, outsz, "none");
}

static const json_t *node_by_name(const json_t *nodes, const char *name)
{
    size_t i;
    json_t *n;
    json_array_foreach(nodes, i,
                       n) if (!strcmp(sget(json_object_get(n, "metadata"), "name"), name)) return n;
    return NULL;
}

int gr_nvcre_wf_diag_start(const json_t *spec, const json_t *nodes, const json_t *names,
                           json_t **state, json_t **groups, gr_err *err)
{
    *state = NULL;
    *groups = NULL;
    if (!json_is_array(names) || json_array_size(names) == 0)
        return gr_err_set(err, GR_EINVAL, "diagnose: no nodes discovered to diagnose");
    if (json_array_size(names) > GR_NVCRE_WF_DIAG_MAX_NODES)
        return gr_err_set(err, GR_ETOOBIG,
                          "diagnose: %zu nodes, at most %d per Workflow: narrow "
                          "orchestration.target",
                          json_array_size(names), GR_NVCRE_WF_DIAG_MAX_NODES);
    const char *key =
        json_string_value(gr_json_ptr_get(spec, "/orchestration/diagnose/topologyKey"));
    if (!key || !*key)
        key = json_string_value(gr_json_ptr_get(spec, "/orchestration/topology/topologyKey"));
    json_t *st = json_object(), *doms = json_object();
    size_t i;
    json_t *x;
    json_array_foreach(names, i, x)
    {
        const char *name = json_string_value(x);
        if (!name)
            continue;
        char seg[48];
        if (key && *key) {
            const json_t *n = node_by_name(nodes, name);
            domain_segment(sget(gr_json_ptr_get(n, "/metadata/labels"), key), seg, sizeof seg);
        } else {
            snprintf(seg, sizeof seg, "%s", GR_NVCRE_WF_DIAG_DEFAULT_DOMAIN);
        }
        add_unique(arr(doms, seg), name);
    }
    json_t *gs = json_array();
    /* Domains in name order: deterministic groups. */
    json_t *dn = json_array();
    const char *k;
    json_object_foreach(doms, k, x)
    {
        sort_strings(x);
        json_array_append_new(dn, json_string(k));
    }
    sort_strings(dn);
    json_array_foreach(dn, i, x)
    {
        char gname[64];
        snprintf(gname, sizeof gname, "intra-%s", json_string_value(x));
        json_array_append_new(gs, json_pack("{s:s,s:O,s:[s]}", "name", gname, "nodes",
                                            json_object_get(doms, json_string_value(x)), "domains",
                                            json_string_value(x)));
    }
    json_decref(dn);
    json_object_set_new(st, "stage", json_string(GR_NVCRE_WF_DIAG_STAGE_INTRA));
    json_object_set_new(st, "round", json_integer(1));
    json_object_set_new(st, "domains", doms);
    json_object_set_new(st, "healthyNodes", json_array());
    json_object_set_new(st, "suspectNodes", json_array());
    *state = st;
    *groups = gs;
    return GR_OK;
}

static int passed(const json_t *g)
{
    return !strcmp(sget(g, "phase"), GR_NVCRE_PHASE_SUCCEEDED);
}

/* The domain of group `g` named "<prefix><domain>". */
static const char *group_domain(const json_t *g, const char *prefix)
{
    const char *n = sget(g, "name");
    return strncmp(n, prefix, strlen(prefix)) ? NULL : n + strlen(prefix);
}

static json_t *group(const char *name, json_t *nodes /* stolen */)
{
    json_t *g = json_pack("{s:s,s:o}", "name", name, "nodes", nodes);
    return g;
}

/* Next stage after the screenings: inter-screening when two or more
 * domains have a healthy node, else bisection. */
static json_t *plan_inter(json_t *st)
{
    json_t *doms = json_object_get(st, "domains"), *healthy = arr(st, "healthyNodes");
    json_t *reps = json_array(), *dn = json_array();
    const char *k;
    json_t *v;
    json_object_foreach(doms, k, v) json_array_append_new(dn, json_string(k));
    sort_strings(dn);
    size_t i;
    json_t *d;
    json_array_foreach(dn, i, d)
    {
        size_t j;
        json_t *n;
        json_array_foreach(json_object_get(doms, json_string_value(d)), j,
                           n) if (has(healthy, json_string_value(n)))
        {
            json_array_append(reps, n);
            break;
        }
    }
    json_decref(dn);
    if (json_array_size(reps) < 2) {
        json_decref(reps);
        return NULL;
    }
    json_object_set(st, "representativeNodes", reps);
    json_t *gs = json_array();
    json_array_append_new(gs, group(GR_NVCRE_WF_DIAG_GROUP_INTER, reps));
    json_object_set_new(st, "stage", json_string(GR_NVCRE_WF_DIAG_STAGE_INTER));
    return gs;
}

/* Bisection sets: each suspect domain's suspects, one set per domain. */
static void seed_sets(json_t *st)
{
    json_t *sets = json_array(), *sus = arr(st, "suspectNodes");
    json_t *doms = json_object_get(st, "domains");
    json_t *dn = json_array();
    const char *k;
    json_t *v;
    json_object_foreach(doms, k, v) json_array_append_new(dn, json_string(k));
    sort_strings(dn);
    size_t i;
    json_t *d;
    json_array_foreach(dn, i, d)
    {
        json_t *s = json_array();
        size_t j;
        json_t *n;
        json_array_foreach(json_object_get(doms, json_string_value(d)), j,
                           n) if (has(sus, json_string_value(n))) json_array_append(s, n);
        if (json_array_size(s))
            json_array_append_new(
                sets, json_pack("{s:o,s:s,s:i}", "nodes", s, "mode", "bisect", "probes", 0));
        else
            json_decref(s);
    }
    json_decref(dn);
    json_object_set_new(st, "bisectSets", sets);
    json_object_set_new(st, "confirmNodes", json_array());
}

/* A set split in two for the next round: a copy of `s` recording the halves
 * under k0/k1 goes to `keep`, and one group per half, "<prefix>-<idx>-<k>",
 * to `gs`. Takes the references to h0 and h1. */
static void keep_split(json_t *keep, json_t *gs, const json_t *s, const char *prefix, int idx,
                       const char *k0, json_t *h0, const char *k1, json_t *h1)
{
    char name[64];
    json_t *ns = json_deep_copy(s);
    json_object_set(ns, k0, h0);
    json_object_set(ns, k1, h1);
    json_array_append_new(keep, ns);
    snprintf(name, sizeof name, "%s-%d-%s", prefix, idx, k0);
    json_array_append_new(gs, group(name, h0));
    snprintf(name, sizeof name, "%s-%d-%s", prefix, idx, k1);
    json_array_append_new(gs, group(name, h1));
}

/* Groups of the next bisection/cross-boundary round; sets too small to
 * split go to confirmNodes. NULL when no set is left. */
static json_t *plan_bisect(json_t *st, int min_group)
{
    json_t *sets = arr(st, "bisectSets"), *confirm = arr(st, "confirmNodes");
    json_t *gs = json_array(), *keep = json_array();
    json_t *cross = json_object();
    int ncross = 0, nbisect = 0;
    size_t i;
    json_t *s;
    json_array_foreach(sets, i, s)
    {
        json_t *nodes = json_object_get(s, "nodes");
        size_t n = json_array_size(nodes);
        const char *mode = sget(s, "mode");
        int idx = (int)json_array_size(keep);
        char name[64];
        if (!strcmp(mode, "cross")) {
            json_t *a = json_object_get(s, "a"), *b = json_object_get(s, "b");
            size_t ha = json_array_size(a) / 2, hb = json_array_size(b) / 2;
            if (json_integer_value(json_object_get(s, "probes")) >= GR_NVCRE_WF_DIAG_MAX_PROBES ||
                ha == 0 || hb == 0) {
                add_all(confirm, nodes);
                continue;
            }
            json_t *m0 = slice(a, 0, ha), *m1 = slice(a, ha, json_array_size(a));
            json_t *b0 = slice(b, 0, hb), *b1 = slice(b, hb, json_array_size(b));
            add_all(m0, b0);
            add_all(m1, b1);
            json_decref(b0);
            json_decref(b1);
            keep_split(keep, gs, s, "cross", idx, "mix0", m0, "mix1", m1);
            /* crossBoundaryState["cross-<set>"]: the probe round and halves. */
            snprintf(name, sizeof name, "cross-%d", idx);
            json_object_set_new(cross, name,
                                json_pack("{s:I,s:O,s:O}", "probe",
                                          json_integer_value(json_object_get(s, "probes")) + 1, "a",
                                          a, "b", b));
            ncross++;
            continue;
        }
        if (n < 2 * (size_t)min_group) {
            add_all(confirm, nodes);
            continue;
        }
        json_t *h0 = slice(nodes, 0, n / 2), *h1 = slice(nodes, n / 2, n);
        keep_split(keep, gs, s, "bisect", idx, "h0", h0, "h1", h1);
        nbisect++;
    }
    json_object_set_new(st, "bisectSets", keep);
    if (ncross)
        json_object_set_new(st, "crossBoundaryState", cross);
    else {
        json_decref(cross);
        json_object_del(st, "crossBoundaryState");
    }
    if (!json_array_size(gs)) {
        json_decref(gs);
        return NULL;
    }
    json_object_set_new(
        st, "stage",
        json_string(nbisect ? GR_NVCRE_WF_DIAG_STAGE_BISECTION : GR_NVCRE_WF_DIAG_STAGE_CROSS));
    return gs;
}

/* A finished round of bisection/cross-boundary groups updates the sets. */
static void take_bisect(json_t *st, const json_t *done)
{
    json_t *sets = arr(st, "bisectSets"), *healthy = arr(st, "healthyNodes");
    json_t *sus = arr(st, "suspectNodes");
    json_t *next = json_array();
    size_t i;
    json_t *s;
    json_array_foreach(sets, i, s)
    {
        int cross = !strcmp(sget(s, "mode"), "cross");
        const char *k0 = cross ? "mix0" : "h0", *k1 = cross ? "mix1" : "h1";
        char n0[64], n1[64];
        snprintf(n0, sizeof n0, "%s-%zu-%s", cross ? "cross" : "bisect", i, k0);
        snprintf(n1, sizeof n1, "%s-%zu-%s", cross ? "cross" : "bisect", i, k1);
        int p0 = -1, p1 = -1;
        size_t j;
        json_t *g;
        json_array_foreach(done, j, g)
        {
            if (!strcmp(sget(g, "name"), n0))
                p0 = passed(g);
            if (!strcmp(sget(g, "name"), n1))
                p1 = passed(g);
        }
        json_t *a = json_object_get(s, k0), *b = json_object_get(s, k1);
        json_int_t probes = json_integer_value(json_object_get(s, "probes"));
        if (p0 < 0 || p1 < 0) { /* not run: keep as is */
            json_array_append(next, s);
            continue;
        }
        if (!cross) {
            if (p0 && p1) {
                /* Both halves pass: the fault needs nodes of both halves. */
                json_array_append_new(next, json_pack("{s:O,s:s,s:I,s:O,s:O}", "nodes",
                                                      json_object_get(s, "nodes"), "mode", "cross",
                                                      "probes", probes, "a", a, "b", b));
                continue;
            }
            if (p0) {
                add_all(healthy, a);
                remove_all(sus, a);
            }
            if (p1) {
                add_all(healthy, b);
                remove_all(sus, b);
            }
            if (!p0)
                json_array_append_new(next, json_pack("{s:O,s:s,s:I}", "nodes", a, "mode", "bisect",
                                                      "probes", probes));
            if (!p1)
                json_array_append_new(next, json_pack("{s:O,s:s,s:I}", "nodes", b, "mode", "bisect",
                                                      "probes", probes));
            continue;
        }
        /* Cross-boundary probe: exactly one mix fails → the fault is in it. */
        if (p0 != p1) {
            json_t *bad = p0 ? b : a;
            json_t *good = p0 ? a : b;
            add_all(healthy, good);
            remove_all(sus, good);
            size_t h = json_array_size(bad) / 2;
            json_t *ba = slice(bad, 0, h), *bb = slice(bad, h, json_array_size(bad));
            json_array_append_new(next, json_pack("{s:O,s:s,s:I,s:o,s:o}", "nodes", bad, "mode",
                                                  "cross", "probes", probes + 1, "a", ba, "b", bb));
        } else {
            /* Both pass or both fail: the probes cannot narrow it further. */
            json_array_append_new(next, json_pack("{s:O,s:s,s:I,s:O,s:O}", "nodes",
                                                  json_object_get(s, "nodes"), "mode", "cross",
                                                  "probes", (json_int_t)GR_NVCRE_WF_DIAG_MAX_PROBES,
                                                  "a", a, "b", b));
        }
    }
    json_object_set_new(st, "bisectSets", next);
}

/* Confirmation groups: each suspect with min_group-1 healthy references. */
static json_t *plan_confirm(json_t *st, int min_group)
{
    json_t *confirm = arr(st, "confirmNodes"), *healthy = arr(st, "healthyNodes");
    if (!json_array_size(confirm) || !json_array_size(healthy))
        return NULL;
    json_t *gs = json_array();
    size_t i;
    json_t *n;
    size_t refs = min_group > 1 ? (size_t)min_group - 1 : 1;
    if (refs > json_array_size(healthy))
        refs = json_array_size(healthy);
    json_array_foreach(confirm, i, n)
    {
        json_t *nodes = json_array();
        json_array_append(nodes, n);
        for (size_t r = 0; r < refs; r++)
            json_array_append(nodes, json_array_get(healthy, r));
        char name[64];
        snprintf(name, sizeof name, "confirm-%zu", i);
        json_array_append_new(gs, group(name, nodes));
    }
    json_object_set_new(st, "stage", json_string(GR_NVCRE_WF_DIAG_STAGE_CONFIRMATION));
    return gs;
}

static void finish(json_t *st, const char **type, const char **reason, char *msg, size_t msgsz)
{
    json_t *faulty = arr(st, "faultyNodes");
    sort_strings(faulty);
    json_object_set_new(st, "stage", json_string(GR_NVCRE_WF_DIAG_STAGE_COMPLETE));
    json_object_del(st, "bisectSets");
    json_object_del(st, "confirmNodes");
    json_object_del(st, "crossBoundaryState");
    if (json_array_size(faulty) || json_array_size(json_object_get(st, "infrastructureFaults"))) {
        *type = GR_NVCRE_COND_FAILED;
        *reason = GR_NVCRE_REASON_ITERATIONS_FAILED;
        snprintf(msg, msgsz, GR_NVCRE_WF_DIAG_MSG_FAULTY_FMT, (int)json_array_size(faulty));
    } else {
        *type = GR_NVCRE_COND_SUCCEEDED;
        *reason = GR_NVCRE_REASON_JOB_COMPLETED;
        snprintf(msg, msgsz, "%s", GR_NVCRE_WF_DIAG_MSG_HEALTHY);
    }
}

/* After the screenings: bisection, then confirmation, then the verdict. */
static json_t *after_inter(json_t *st, int min_group, const char **type, const char **reason,
                           char *msg, size_t msgsz)
{
    seed_sets(st);
    json_t *gs = plan_bisect(st, min_group);
    if (gs)
        return gs;
    json_t *confirm = arr(st, "confirmNodes");
    if (json_array_size(confirm) && !json_array_size(arr(st, "healthyNodes"))) {
        json_t *faulty = arr(st, "faultyNodes");
        add_all(faulty, confirm);
        finish(st, type, reason, msg, msgsz);
        *type = GR_NVCRE_COND_FAILED;
        *reason = GR_NVCRE_REASON_ITERATIONS_FAILED;
        snprintf(msg, msgsz, GR_NVCRE_WF_DIAG_MSG_NO_HEALTHY_FMT, (int)json_array_size(faulty));
        return NULL;
    }
    gs = plan_confirm(st, min_group);
    if (gs)
        return gs;
    finish(st, type, reason, msg, msgsz);
    return NULL;
}

/* JSON values in v (stops counting past `max`, and below depth 32). */
static size_t weight(const json_t *v, size_t max, int depth)
{
    size_t n = 1;
    if (depth > 32)
        return max + 1;
    size_t i;
    const char *k;
    json_t *x;
    if (json_is_array(v)) {
        json_array_foreach(v, i, x)
        {
            n += weight(x, max, depth + 1);
            if (n > max)
                return n;
        }
    } else if (json_is_object(v)) {
        /* jansson iterates objects through a non-const pointer only; it
         * reads them. */
        union {
            const json_t *c;
            json_t *m;
        } u = {v};
        json_object_foreach(u.m, k, x)
        {
            n += weight(x, max, depth + 1);
            if (n > max)
                return n;
        }
    }
    return n;
}

int gr_nvcre_wf_diag_advance(json_t *state, const json_t *done, int mnnvl, int min_group,
                             json_t **next, const char **final_type, const char **reason, char *msg,
                             size_t msgsz, gr_err *err)
{
    *next = NULL;
    *final_type = NULL;
    *reason = NULL;
    if (msgsz)
        msg[0] = 0;
    if (!json_is_object(state) || !json_is_array(done))
        return gr_err_set(err, GR_EINVAL, "status.orchestration.diagnose: not an object");
    const size_t cap = 16 * (size_t)GR_NVCRE_WF_DIAG_MAX_NODES;
    if (weight(state, cap, 0) > cap || weight(done, cap, 0) > cap)
        return gr_err_set(err, GR_EINVAL,
                          "status.orchestration.diagnose: larger than a diagnosis of %d nodes "
                          "can be; delete and recreate the Workflow",
                          GR_NVCRE_WF_DIAG_MAX_NODES);
    if (min_group < 1)
        min_group = GR_NVCRE_WF_DIAG_MIN_GROUP_SIZE;
    const char *stage = sget(state, "stage");
    json_t *healthy = arr(state, "healthyNodes"), *sus = arr(state, "suspectNodes");
    json_t *gs = NULL;
    size_t i;
    json_t *g;
    if (!strcmp(stage, GR_NVCRE_WF_DIAG_STAGE_INTRA)) {
        json_t *res = obj(state, "screeningResults"), *again = json_array();
        json_array_foreach(done, i, g)
        {
            const char *d = group_domain(g, "intra-");
            if (!d)
                continue;
            int ok = passed(g);
            json_object_set_new(res, d, json_string(ok ? "Passed" : "Failed"));
            add_all(ok ? healthy : sus, json_object_get(g, "nodes"));
            if (!ok && mnnvl) {
                char name[64];
                snprintf(name, sizeof name, "screen-no-nvl-%s", d);
                json_t *ng = group(name, json_deep_copy(json_object_get(g, "nodes")));
                json_object_set_new(ng, "noNVL", json_true());
                json_array_append_new(again, ng);
            }
        }
        if (json_array_size(again)) {
            json_object_set_new(state, "stage", json_string(GR_NVCRE_WF_DIAG_STAGE_INTRA_NO_NVL));
            gs = again;
        } else {
            json_decref(again);
            gs = plan_inter(state);
            if (!gs)
                gs = after_inter(state, min_group, final_type, reason, msg, msgsz);
        }
    } else if (!strcmp(stage, GR_NVCRE_WF_DIAG_STAGE_INTRA_NO_NVL)) {
        json_t *res = obj(state, "noNVLScreeningResults");
        json_t *nonvl = arr(state, "noNVLSuspectNodes"),
               *infra = arr(state, "infrastructureFaults");
        json_array_foreach(done, i, g)
        {
            const char *d = group_domain(g, "screen-no-nvl-");
            if (!d)
                continue;
            int ok = passed(g);
            json_object_set_new(res, d, json_string(ok ? "Passed" : "Failed"));
            if (ok) {
                /* Healthy without NVLink: the domain's NVLink fabric is at
                 * fault, not a node's compute; not bisected further. */
                char f[96];
                snprintf(f, sizeof f, "mnnvl:%s", d);
                add_unique(infra, f);
                add_all(nonvl, json_object_get(g, "nodes"));
                remove_all(sus, json_object_get(g, "nodes"));
            }
        }
        gs = plan_inter(state);
        if (!gs)
            gs = after_inter(state, min_group, final_type, reason, msg, msgsz);
    } else if (!strcmp(stage, GR_NVCRE_WF_DIAG_STAGE_INTER)) {
        json_array_foreach(done, i, g) if (!strcmp(sget(g, "name"), GR_NVCRE_WF_DIAG_GROUP_INTER) &&
                                           !passed(g))
            add_unique(arr(state, "infrastructureFaults"), GR_NVCRE_WF_DIAG_GROUP_INTER);
        gs = after_inter(state, min_group, final_type, reason, msg, msgsz);
    } else if (!strcmp(stage, GR_NVCRE_WF_DIAG_STAGE_BISECTION) ||
               !strcmp(stage, GR_NVCRE_WF_DIAG_STAGE_CROSS)) {
        take_bisect(state, done);
        gs = plan_bisect(state, min_group);
        if (!gs) {
            json_t *confirm = arr(state, "confirmNodes");
            if (json_array_size(confirm) && !json_array_size(healthy)) {
                json_t *faulty = arr(state, "faultyNodes");
                add_all(faulty, confirm);
                finish(state, final_type, reason, msg, msgsz);
                snprintf(msg, msgsz, GR_NVCRE_WF_DIAG_MSG_NO_HEALTHY_FMT,
                         (int)json_array_size(faulty));
            } else {
                gs = plan_confirm(state, min_group);
                if (!gs)
                    finish(state, final_type, reason, msg, msgsz);
            }
        }
    } else if (!strcmp(stage, GR_NVCRE_WF_DIAG_STAGE_CONFIRMATION)) {
        json_t *confirm = arr(state, "confirmNodes"), *faulty = arr(state, "faultyNodes");
        json_array_foreach(done, i, g)
        {
            const char *n = json_string_value(json_array_get(json_object_get(g, "nodes"), 0));
            if (!n || strncmp(sget(g, "name"), "confirm-", 8))
                continue;
            json_t *one = json_pack("[s]", n);
            if (passed(g))
                add_all(healthy, one);
            else
                add_all(faulty, one);
            remove_all(sus, one);
            json_decref(one);
        }
        (void)confirm;
        finish(state, final_type, reason, msg, msgsz);
    } else if (!strcmp(stage, GR_NVCRE_WF_DIAG_STAGE_COMPLETE)) {
        finish(state, final_type, reason, msg, msgsz);
    } else {
        return gr_err_set(err, GR_EINVAL,
                          "status.orchestration.diagnose.stage: unknown stage \"%s\"", stage);
    }
    sort_strings(healthy);
    sort_strings(sus);
    if (gs) {
        json_object_set_new(state, "round",
                            json_integer(json_integer_value(json_object_get(state, "round")) + 1));
        *next = gs;
    }
    return GR_OK;
}

int gr_nvcre_wf_diag_bw_verdict(const json_t *bm, double threshold_gbps, int64_t completed_ns,
                                int64_t timeout_ns, int64_t now_ns, double *max_busbw)
{
    double best = (double)NAN;
    size_t i;
    json_t *r;
    json_array_foreach(gr_json_ptr_get(bm, "/status/results"), i, r)
    {
        const json_t *v = json_object_get(r, "busBW");
        double d = (double)NAN;
        if (json_is_number(v))
            d = json_number_value(v);
        else if (json_is_string(v)) {
            char *end = NULL;
            d = strtod(json_string_value(v), &end);
            if (!end || *end || end == json_string_value(v))
                d = (double)NAN;
        }
        if (isfinite(d) && (isnan(best) || d > best))
            best = d;
    }
    if (max_busbw)
        *max_busbw = best;
    int complete = 0;
    json_array_foreach(gr_json_ptr_get(bm, "/status/conditions"), i, r) complete |=
        !strcmp(sget(r, "type"), "Complete") && !strcmp(sget(r, "status"), "True");
    if (!complete && gr_ns_sub_sat(now_ns, completed_ns) < timeout_ns)
        return GR_NVCRE_WF_DIAG_BW_PENDING;
    if (isnan(best))
        return GR_NVCRE_WF_DIAG_BW_NODATA;
    return best >= threshold_gbps ? GR_NVCRE_WF_DIAG_BW_PASS : GR_NVCRE_WF_DIAG_BW_FAIL;
}

int gr_nvcre_wf_diag_threshold(const json_t *spec, double *out, gr_err *err)
{
    *out = 0;
    const json_t *v = gr_json_ptr_get(spec, "/validation/performance/thresholds/busBandwidthGBps");
    if (!v) /* the nested form thresholds.thresholds is accepted too */
        v = gr_json_ptr_get(spec, "/validation/performance/thresholds/thresholds/busBandwidthGBps");
    if (!v)
        return GR_OK;
    double d = (double)NAN;
    if (json_is_number(v))
        d = json_number_value(v);
    else if (json_is_string(v)) {
        /* A threshold expression ">= 400" / "> 400" / "400": its bound. */
        const char *p = json_string_value(v), *ge = strchr(p, '>');
        if (ge) /* "value >= 400" */
            p = ge;
        while (*p == '>' || *p == '=' || *p == ' ')
            p++;
        char *end = NULL;
        d = strtod(p, &end);
        while (end && *end == ' ')
            end++;
        if (!end || *end || end == p)
            d = (double)NAN;
    }
    if (!isfinite(d) || d <= 0)
        return gr_err_set(err, GR_EINVAL,
                          "spec.validation.performance.thresholds.busBandwidthGBps: want a "
                          "positive number of GB/s or \"value >= <GB/s>\" (e.g. \"value >= 400\")");
    *out = d;
    return GR_OK;
}
