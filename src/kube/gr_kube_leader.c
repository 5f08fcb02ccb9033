/* gr_kube_leader.c — Lease-based leader election. */
#include "gr_kube_leader.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_log.h"
#include "kube_internal.h"

void gr_kube_lease_observe(gr_kube_lease_view *v, const json_t *spec, int64_t now_ns)
{
    char *rec = spec ? json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    const char *r = rec ? rec : "";
    if (v->observed_ns == 0 || strncmp(v->record, r, sizeof v->record - 1) != 0) {
        snprintf(v->record, sizeof v->record, "%s", r);
        v->observed_ns = now_ns;
        const char *h = json_string_value(json_object_get(spec, "holderIdentity"));
        snprintf(v->holder, sizeof v->holder, "%s", h ? h : "");
        json_t *d = json_object_get(spec, "leaseDurationSeconds");
        v->duration_ns = json_is_integer(d) ? (int64_t)json_integer_value(d) * 1000000000LL : 0;
    }
    free(rec);
}

bool gr_kube_lease_can_acquire(const gr_kube_lease_view *v, const char *identity, int64_t now_ns)
{
    if (v->holder[0] == '\0' || strcmp(v->holder, identity) == 0)
        return true;
    /* a holder that has not changed the record for its lease duration is gone */
    return now_ns > v->observed_ns + v->duration_ns;
}

json_t *gr_kube_lease_spec(const json_t *old_spec, const char *identity, int64_t duration_ns,
                           int64_t now_unix_ns)
{
    char now[32];
    gr_kube_fmt_time(now_unix_ns, true, now);
    const char *old_holder = json_string_value(json_object_get(old_spec, "holderIdentity"));
    json_t *tr = json_object_get(old_spec, "leaseTransitions");
    json_int_t transitions = json_is_integer(tr) ? json_integer_value(tr) : 0;
    json_t *spec = json_object();
    if (!spec)
        return NULL;
    bool same = old_holder && strcmp(old_holder, identity) == 0;
    const char *acq = json_string_value(json_object_get(old_spec, "acquireTime"));
    json_object_set_new(spec, "holderIdentity", json_string(identity));
    json_object_set_new(spec, "leaseDurationSeconds",
                        json_integer((json_int_t)((duration_ns + 999999999LL) / 1000000000LL)));
    json_object_set_new(spec, "acquireTime", json_string(same && acq ? acq : now));
    json_object_set_new(spec, "renewTime", json_string(now));
    /* client-go: any change of holder (a release included) is a transition */
    json_object_set_new(spec, "leaseTransitions",
                        json_integer(!old_spec ? 0
                                     : same    ? transitions
                                               : transitions + 1));
    return spec;
}

/* ---- elector ----------------------------------------------------------- */

struct gr_kube_leader {
    gr_kube_client *c;
    gr_kube_leader_opts o;
    pthread_t thr;
    atomic_int stop;
    pthread_mutex_t mu;
    bool leading;
    gr_kube_lease_view view;
};

/* One attempt; GR_OK when we hold the lease afterwards. */
static int try_acquire_or_renew(gr_kube_leader *l, gr_err *err)
{
    gr_kube_status st;
    json_t *lease = NULL;
    gr_kube_opts ro = {0};
    ro.cancel = &l->stop;
    ro.timeout_ms = l->o.renew_deadline_ns / 1000000LL;
    int rc = gr_kube_get(l->c, &GR_KUBE_LEASES, l->o.ns, l->o.name, &ro, &lease, &st, err);
    int64_t now = gr_kube_mono_ns();
    if (rc == GR_ENOTFOUND && st.reason == GR_KUBE_REASON_NOT_FOUND) {
        json_t *spec =
            gr_kube_lease_spec(NULL, l->o.identity, l->o.lease_duration_ns, gr_kube_real_ns());
        json_t *obj =
            json_pack("{s:s,s:s,s:{s:s,s:s},s:o}", "apiVersion", "coordination.k8s.io/v1", "kind",
                      "Lease", "metadata", "name", l->o.name, "namespace", l->o.ns, "spec", spec);
        rc = gr_kube_create(l->c, &GR_KUBE_LEASES, l->o.ns, obj, &ro, NULL, &st, err);
        if (rc == GR_OK) {
            pthread_mutex_lock(&l->mu);
            gr_kube_lease_observe(&l->view, json_object_get(obj, "spec"), now);
            pthread_mutex_unlock(&l->mu);
        }
        json_decref(obj);
        return rc;
    }
    if (rc != GR_OK)
        return rc;
    json_t *spec = json_object_get(lease, "spec");
    pthread_mutex_lock(&l->mu);
    char before[256];
    snprintf(before, sizeof before, "%s", l->view.holder);
    gr_kube_lease_observe(&l->view, spec, now);
    bool changed_holder = strcmp(before, l->view.holder) != 0;
    bool ok = gr_kube_lease_can_acquire(&l->view, l->o.identity, now);
    char holder[256];
    snprintf(holder, sizeof holder, "%s", l->view.holder);
    pthread_mutex_unlock(&l->mu);
    if (changed_holder && holder[0] && l->o.on_new_leader)
        l->o.on_new_leader(l->o.ctx, holder);
    if (!ok) {
        json_decref(lease);
        return gr_err_set(err, GR_ECONFLICT, "lease %s/%s is held by %s", l->o.ns, l->o.name,
                          holder);
    }
    json_t *nspec =
        gr_kube_lease_spec(spec, l->o.identity, l->o.lease_duration_ns, gr_kube_real_ns());
    json_object_set_new(lease, "spec", nspec);
    rc = gr_kube_update(l->c, &GR_KUBE_LEASES, l->o.ns, lease, &ro, NULL, &st, err);
    if (rc == GR_OK) {
        pthread_mutex_lock(&l->mu);
        gr_kube_lease_observe(&l->view, nspec, gr_kube_mono_ns());
        pthread_mutex_unlock(&l->mu);
    }
    json_decref(lease);
    return rc;
}

static void release(gr_kube_leader *l)
{
    gr_kube_status st;
    gr_err err;
    json_t *lease = NULL;
    gr_kube_opts ro = {0};
    ro.timeout_ms = 5000;
    if (gr_kube_get(l->c, &GR_KUBE_LEASES, l->o.ns, l->o.name, &ro, &lease, &st, &err) != GR_OK)
        return;
    json_t *spec = json_object_get(lease, "spec");
    const char *h = json_string_value(json_object_get(spec, "holderIdentity"));
    if (h && strcmp(h, l->o.identity) == 0) {
        char now[32];
        gr_kube_fmt_time(gr_kube_real_ns(), true, now);
        json_object_set_new(spec, "holderIdentity", json_string(""));
        json_object_set_new(spec, "leaseDurationSeconds", json_integer(1));
        json_object_set_new(spec, "renewTime", json_string(now));
        json_object_set_new(spec, "acquireTime", json_string(now));
        if (gr_kube_update(l->c, &GR_KUBE_LEASES, l->o.ns, lease, &ro, NULL, &st, &err) != GR_OK)
            gr_log(GR_LOG_WARN, "kube", "could not release the lease", GR_KV_STR("error", err.msg),
                   GR_KV_END);
    }
    json_decref(lease);
}

static int64_t jittered(int64_t d, unsigned *seed)
{
    return d + (int64_t)((double)d * 1.2 * ((double)(rand_r(seed) % 1000) / 1000.0));
}

static void *run(void *arg)
{
    gr_kube_leader *l = arg;
    unsigned seed = (unsigned)gr_kube_mono_ns();
    while (!atomic_load(&l->stop)) {
        gr_err err;
        /* candidate: try every retryPeriod (jittered) */
        if (try_acquire_or_renew(l, &err) != GR_OK) {
            gr_kube_sleep_ns(jittered(l->o.retry_period_ns, &seed), &l->stop);
            continue;
        }
        pthread_mutex_lock(&l->mu);
        l->leading = true;
        pthread_mutex_unlock(&l->mu);
        gr_log(GR_LOG_INFO, "kube", "became leader", GR_KV_STR("lease", l->o.name),
               GR_KV_STR("identity", l->o.identity), GR_KV_END);
        if (l->o.on_new_leader)
            l->o.on_new_leader(l->o.ctx, l->o.identity);
        if (l->o.on_started_leading)
            l->o.on_started_leading(l->o.ctx);
        /* leader: renew every retryPeriod; give up after renewDeadline */
        int64_t last_ok = gr_kube_mono_ns();
        while (!atomic_load(&l->stop)) {
            if (gr_kube_sleep_ns(l->o.retry_period_ns, &l->stop) != GR_OK)
                break;
            if (try_acquire_or_renew(l, &err) == GR_OK) {
                last_ok = gr_kube_mono_ns();
                continue;
            }
            if (gr_kube_mono_ns() - last_ok >= l->o.renew_deadline_ns) {
                gr_log(GR_LOG_WARN, "kube", "lost leadership: could not renew the lease",
                       GR_KV_STR("lease", l->o.name), GR_KV_STR("error", err.msg), GR_KV_END);
                break;
            }
        }
        pthread_mutex_lock(&l->mu);
        l->leading = false;
        pthread_mutex_unlock(&l->mu);
        if (atomic_load(&l->stop) && !l->o.no_release_on_stop)
            release(l);
        if (l->o.on_stopped_leading)
            l->o.on_stopped_leading(l->o.ctx);
    }
    return NULL;
}

int gr_kube_leader_start(gr_kube_client *c, const gr_kube_leader_opts *o, gr_kube_leader **out,
                         gr_err *err)
{
    *out = NULL;
    if (!o || !o->ns || !*o->ns || !o->name || !*o->name || !o->identity || !*o->identity)
        return gr_err_set(err, GR_EINVAL,
                          "leader election: ns, name and identity are all required");
    gr_kube_leader *l = calloc(1, sizeof *l);
    if (!l)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    l->c = c;
    l->o = *o;
    if (l->o.lease_duration_ns <= 0)
        l->o.lease_duration_ns = GR_KUBE_LEASE_DURATION_NS;
    if (l->o.renew_deadline_ns <= 0)
        l->o.renew_deadline_ns = GR_KUBE_RENEW_DEADLINE_NS;
    if (l->o.retry_period_ns <= 0)
        l->o.retry_period_ns = GR_KUBE_RETRY_PERIOD_NS;
    if (l->o.lease_duration_ns <= l->o.renew_deadline_ns ||
        (double)l->o.renew_deadline_ns <= 1.2 * (double)l->o.retry_period_ns) {
        free(l);
        return gr_err_set(err, GR_EINVAL,
                          "leader election: need leaseDuration > renewDeadline > 1.2 × "
                          "retryPeriod (client-go's rule)");
    }
    pthread_mutex_init(&l->mu, NULL);
    if (pthread_create(&l->thr, NULL, run, l) != 0) {
        pthread_mutex_destroy(&l->mu);
        free(l);
        return gr_err_set(err, GR_EIO, "leader election: cannot start thread");
    }
    *out = l;
    return GR_OK;
}

bool gr_kube_leader_is_leader(gr_kube_leader *l)
{
    pthread_mutex_lock(&l->mu);
    bool b = l->leading;
    pthread_mutex_unlock(&l->mu);
    return b;
}

void gr_kube_leader_holder(gr_kube_leader *l, char *buf, size_t bufsz)
{
    pthread_mutex_lock(&l->mu);
    snprintf(buf, bufsz, "%s", l->view.holder);
    pthread_mutex_unlock(&l->mu);
}

void gr_kube_leader_stop(gr_kube_leader *l)
{
    if (!l)
        return;
    atomic_store(&l->stop, 1);
    pthread_join(l->thr, NULL);
    pthread_mutex_destroy(&l->mu);
    free(l);
}
