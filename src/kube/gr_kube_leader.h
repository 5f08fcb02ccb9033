/*
 * gr_kube_leader.h — leader election on a coordination.k8s.io/v1 Lease, with
 * client-go's algorithm and default timings:
 *   leaseDuration 15 s  (how long a non-leader waits after the last change it
 *                        observed in the lease before taking it over)
 *   renewDeadline 10 s  (a leader that cannot renew for this long steps down)
 *   retryPeriod    2 s  (time between attempts, with 1.2 jitter)
 * Expiry is judged on the local monotonic clock from the moment this process
 * last saw the lease record change (never by comparing our clock with the
 * holder's renewTime), so clock skew between nodes does not matter.
 * On stop, a leader releases the lease (holderIdentity "", leaseDuration 1s)
 * so a successor takes over at once.
 *
 * Callbacks run on the elector's thread; on_started_leading should start work
 * on other threads and return. After losing the lease (renew failed past the
 * deadline) on_stopped_leading runs and the elector goes back to being a
 * candidate. Strings in the options are borrowed for the elector's life.
 */
#ifndef GR_KUBE_LEADER_H
#define GR_KUBE_LEADER_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "gr_err.h"
#include "gr_kube_rest.h"

#define GR_KUBE_LEASE_DURATION_NS (15LL * 1000000000LL)
#define GR_KUBE_RENEW_DEADLINE_NS (10LL * 1000000000LL)
#define GR_KUBE_RETRY_PERIOD_NS   (2LL * 1000000000LL)

typedef struct gr_kube_leader_opts {
    const char *ns;            /* Lease namespace (required) */
    const char *name;          /* Lease name (required) */
    const char *identity;      /* unique per candidate, e.g. hostname_pid (required) */
    int64_t lease_duration_ns; /* 0 = 15 s */
    int64_t renew_deadline_ns; /* 0 = 10 s */
    int64_t retry_period_ns;   /* 0 = 2 s */
    bool no_release_on_stop;   /* default: release on stop */
    void (*on_started_leading)(void *ctx);
    void (*on_stopped_leading)(void *ctx);
    void (*on_new_leader)(void *ctx, const char *identity); /* any change of holder */
    void *ctx;
} gr_kube_leader_opts;

/* ---- pure decision ----------------------------------------------------- */

/* What a candidate has seen of the lease. */
typedef struct gr_kube_lease_view {
    char holder[256];
    char record[1024];   /* the last spec seen (compact JSON), for change detection */
    int64_t observed_ns; /* monotonic time when `record` last changed */
    int64_t duration_ns; /* spec.leaseDurationSeconds of that record */
} gr_kube_lease_view;

/* Record that `spec` (a Lease spec, borrowed) was read at now_ns. */
void gr_kube_lease_observe(gr_kube_lease_view *v, const json_t *spec, int64_t now_ns);
/* May `identity` take or renew the lease at now_ns? */
bool gr_kube_lease_can_acquire(const gr_kube_lease_view *v, const char *identity, int64_t now_ns);
/* The spec to write when `identity` takes/renews the lease (new reference).
 * old_spec may be NULL (creation). now_unix_ns stamps acquire/renewTime. */
json_t *gr_kube_lease_spec(const json_t *old_spec, const char *identity, int64_t duration_ns,
                           int64_t now_unix_ns);

/* ---- elector ----------------------------------------------------------- */

typedef struct gr_kube_leader gr_kube_leader;

/* The client is borrowed. Starts the elector thread. */
int gr_kube_leader_start(gr_kube_client *c, const gr_kube_leader_opts *o, gr_kube_leader **out,
                         gr_err *err);
bool gr_kube_leader_is_leader(gr_kube_leader *l);
/* Current holder as last observed (copied into buf; "" when none). */
void gr_kube_leader_holder(gr_kube_leader *l, char *buf, size_t bufsz);
/* Stop: release the lease when leading (unless no_release_on_stop), call
 * on_stopped_leading if leading, join, free. */
void gr_kube_leader_stop(gr_kube_leader *l);

#endif
