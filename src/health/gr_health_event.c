/*
 * gr_health_event.c — health-event enums and protobuf encoding.
 * See gr_health.h.
 */
#include <stdlib.h>
#include <string.h>

#include "gr_health_event.h"
#include "health_event.pb-c.h"

#define NS_PER_S ((int64_t)1000000000)

static const struct {
    gr_health_action value;
    const char *name;
} actions[] = {
    {GR_HEALTH_ACTION_NONE, "NONE"},
    {GR_HEALTH_ACTION_COMPONENT_RESET, "COMPONENT_RESET"},
    {GR_HEALTH_ACTION_CONTACT_SUPPORT, "CONTACT_SUPPORT"},
    {GR_HEALTH_ACTION_RUN_FIELDDIAG, "RUN_FIELDDIAG"},
    {GR_HEALTH_ACTION_RESTART_VM, "RESTART_VM"},
    {GR_HEALTH_ACTION_RESTART_BM, "RESTART_BM"},
    {GR_HEALTH_ACTION_REPLACE_VM, "REPLACE_VM"},
    {GR_HEALTH_ACTION_RUN_DCGMEUD, "RUN_DCGMEUD"},
    {GR_HEALTH_ACTION_CUSTOM, "CUSTOM"},
    {GR_HEALTH_ACTION_UNKNOWN, "UNKNOWN"},
};

static const char *const strategies[] = {"UNSPECIFIED", "EXECUTE_REMEDIATION", "STORE_ONLY",
                                         "STORE_AND_ANALYSE"};

int gr_health_action_parse(const char *name, gr_health_action *out)
{
    for (size_t i = 0; name && i < sizeof actions / sizeof actions[0]; i++) {
        if (strcmp(name, actions[i].name) == 0) {
            *out = actions[i].value;
            return GR_OK;
        }
    }
    return GR_ENOTFOUND;
}

const char *gr_health_action_name(gr_health_action a)
{
    for (size_t i = 0; i < sizeof actions / sizeof actions[0]; i++) {
        if (actions[i].value == a)
            return actions[i].name;
    }
    return NULL;
}

int gr_health_strategy_parse(const char *name, gr_health_strategy *out, gr_err *err)
{
    if (!name || !*name) {
        *out = GR_HEALTH_STRATEGY_EXECUTE_REMEDIATION;
        return GR_OK;
    }
    for (size_t i = 0; i < sizeof strategies / sizeof strategies[0]; i++) {
        if (strcmp(name, strategies[i]) == 0) {
            *out = (gr_health_strategy)i;
            return GR_OK;
        }
    }
    return gr_err_set(err, GR_EINVAL, "Invalid PROCESSING_STRATEGY: %s", name);
}

const char *gr_health_strategy_name(gr_health_strategy s)
{
    if ((unsigned)s >= sizeof strategies / sizeof strategies[0])
        return NULL;
    return strategies[s];
}

void gr_health_event_init(gr_health_event *ev)
{
    memset(ev, 0, sizeof *ev);
}

/* Strict UTF-8 (no overlongs, no surrogates, <= U+10FFFF), as proto3
 * string fields require; Go servers reject anything else. */
static int utf8_valid(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned c = *p;
        int n;
        unsigned min;
        if (c < 0x80) {
            p++;
            continue;
        } else if ((c & 0xe0) == 0xc0) {
            n = 1;
            min = 0x80;
            c &= 0x1f;
        } else if ((c & 0xf0) == 0xe0) {
            n = 2;
            min = 0x800;
            c &= 0x0f;
        } else if ((c & 0xf8) == 0xf0) {
            n = 3;
            min = 0x10000;
            c &= 0x07;
        } else {
            return 0;
        }
        p++;
        for (int i = 0; i < n; i++, p++) {
            if ((*p & 0xc0) != 0x80)
                return 0;
            c = c << 6 | (*p & 0x3f);
        }
        if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
            return 0;
    }
    return 1;
}

static int check_str(const char *s, const char *field, int required, gr_err *err)
{
    if (!s || !*s) {
        if (required)
            return gr_err_set(err, GR_EINVAL, "health event: %s is required", field);
        return GR_OK;
    }
    if (!utf8_valid(s))
        return gr_err_set(err, GR_EINVAL, "health event: %s is not valid UTF-8", field);
    return GR_OK;
}

static char *str_or_empty(const char *s)
{
    /* protobuf-c wants char * but never writes through it when packing. */
    return (char *)(uintptr_t)(s ? s : "");
}

int gr_health_event_encode(const gr_health_event *ev, int64_t now_wall_ns, gr_buf *out, gr_err *err)
{
    int rc;
    if ((rc = check_str(ev->agent, "agent", 1, err)) != GR_OK ||
        (rc = check_str(ev->component_class, "componentClass", 1, err)) != GR_OK ||
        (rc = check_str(ev->check_name, "checkName", 1, err)) != GR_OK ||
        (rc = check_str(ev->node_name, "nodeName", 1, err)) != GR_OK ||
        (rc = check_str(ev->message, "message", 0, err)) != GR_OK ||
        (rc = check_str(ev->custom_recommended_action, "customRecommendedAction", 0, err)) != GR_OK)
        return rc;
    if (!gr_health_action_name(ev->recommended_action))
        return gr_err_set(err, GR_EINVAL, "health event: recommendedAction %d is not defined",
                          (int)ev->recommended_action);
    if (ev->recommended_action == GR_HEALTH_ACTION_CUSTOM &&
        !(ev->custom_recommended_action && *ev->custom_recommended_action))
        return gr_err_set(err, GR_EINVAL,
                          "health event: recommendedAction CUSTOM needs customRecommendedAction");
    if (!gr_health_strategy_name(ev->processing_strategy))
        return gr_err_set(err, GR_EINVAL, "health event: processingStrategy %d is not defined",
                          (int)ev->processing_strategy);
    if (ev->n_error_codes && !ev->error_codes)
        return gr_err_set(err, GR_EINVAL, "health event: errorCode list is NULL");
    if (ev->n_entities && !ev->entities)
        return gr_err_set(err, GR_EINVAL, "health event: entitiesImpacted list is NULL");
    for (size_t i = 0; i < ev->n_error_codes; i++) {
        if (!ev->error_codes[i] || !utf8_valid(ev->error_codes[i]))
            return gr_err_set(err, GR_EINVAL, "health event: errorCode[%zu] is NULL or not UTF-8",
                              i);
    }
    for (size_t i = 0; i < ev->n_entities; i++) {
        if ((rc = check_str(ev->entities[i].type, "entitiesImpacted[].entityType", 1, err)) !=
                GR_OK ||
            (rc = check_str(ev->entities[i].value, "entitiesImpacted[].entityValue", 0, err)) !=
                GR_OK)
            return gr_err_prefix(err, "entity %zu: ", i);
    }

    int64_t ts = ev->generated_ns ? ev->generated_ns : now_wall_ns;
    Google__Protobuf__Timestamp stamp;
    google__protobuf__timestamp__init(&stamp);
    stamp.seconds = ts / NS_PER_S;
    stamp.nanos = (int32_t)(ts % NS_PER_S);
    if (stamp.nanos < 0) { /* Timestamp nanos are always 0..999999999 */
        stamp.nanos += (int32_t)NS_PER_S;
        stamp.seconds -= 1;
    }

    /* The generated *_INIT macros cast away const; the init functions don't. */
    Datamodels__HealthEvent he;
    datamodels__health_event__init(&he);
    he.version = 1;
    he.agent = str_or_empty(ev->agent);
    he.componentclass = str_or_empty(ev->component_class);
    he.checkname = str_or_empty(ev->check_name);
    he.isfatal = ev->is_fatal ? 1 : 0;
    he.ishealthy = ev->is_healthy ? 1 : 0;
    he.message = str_or_empty(ev->message);
    he.recommendedaction = (Datamodels__RecommendedAction)ev->recommended_action;
    he.customrecommendedaction = str_or_empty(ev->custom_recommended_action);
    he.generatedtimestamp = &stamp;
    he.nodename = str_or_empty(ev->node_name);
    he.processingstrategy = (Datamodels__ProcessingStrategy)ev->processing_strategy;

    Datamodels__Entity *ents = NULL, **entp = NULL;
    char **codes = NULL;
    if (ev->n_entities) {
        ents = calloc(ev->n_entities, sizeof *ents);
        entp = calloc(ev->n_entities, sizeof *entp);
    }
    if (ev->n_error_codes)
        codes = calloc(ev->n_error_codes, sizeof *codes);
    if ((ev->n_entities && (!ents || !entp)) || (ev->n_error_codes && !codes)) {
        rc = gr_err_set(err, GR_ENOMEM, "health event: out of memory");
        goto out;
    }
    for (size_t i = 0; i < ev->n_entities; i++) {
        datamodels__entity__init(&ents[i]);
        ents[i].entitytype = str_or_empty(ev->entities[i].type);
        ents[i].entityvalue = str_or_empty(ev->entities[i].value);
        entp[i] = &ents[i];
    }
    for (size_t i = 0; i < ev->n_error_codes; i++)
        codes[i] = str_or_empty(ev->error_codes[i]);
    he.n_entitiesimpacted = ev->n_entities;
    he.entitiesimpacted = entp;
    he.n_errorcode = ev->n_error_codes;
    he.errorcode = codes;

    Datamodels__HealthEvents hes;
    datamodels__health_events__init(&hes);
    Datamodels__HealthEvent *one[1] = {&he};
    hes.version = 1;
    hes.n_events = 1;
    hes.events = one;

    size_t need = datamodels__health_events__get_packed_size(&hes);
    rc = gr_buf_reserve(out, need);
    if (rc != GR_OK) {
        gr_err_set(err, rc, "health event: %zu encoded bytes %s", need,
                   rc == GR_ETOOBIG ? "exceed the buffer cap" : "(out of memory)");
        goto out;
    }
    datamodels__health_events__pack(&hes, (uint8_t *)out->data + out->len);
    out->len += need;
    out->data[out->len] = '\0';
out:
    free(ents);
    free(entp);
    free(codes);
    return rc;
}
