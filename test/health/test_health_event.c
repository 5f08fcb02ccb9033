/*
 * test_health_event.c — HealthEvents encoding: exact wire bytes for the
 * fact sheet's field numbers and enum values (an independent check of our
 * .proto), a round trip through the generated decoder, and validation.
 * Checklist: PF-256 (checks report health events), PF-194 (same events on
 * both paths: one encoder).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "gr_health.h"
#include "health_event.pb-c.h"

static void small_event(gr_health_event *ev, const char **codes, gr_health_entity *ent)
{
    gr_health_event_init(ev);
    ev->agent = "a";
    ev->component_class = "G";
    ev->check_name = "c";
    ev->is_fatal = 1;
    ev->is_healthy = 0;
    ev->message = "m";
    ev->recommended_action = GR_HEALTH_ACTION_CONTACT_SUPPORT;
    codes[0] = "E";
    ev->error_codes = codes;
    ev->n_error_codes = 1;
    ent->type = "T";
    ent->value = "V";
    ev->entities = ent;
    ev->n_entities = 1;
    ev->generated_ns = 1 * GR_HEALTH_NS_PER_S + 2;
    ev->node_name = "n";
    ev->processing_strategy = GR_HEALTH_STRATEGY_STORE_ONLY;
}

/* Hand-assembled from the fact sheet (§7.1): tag = field << 3 | wire type. */
static void test_wire_bytes(void **state)
{
    (void)state;
    const char *codes[1];
    gr_health_entity ent;
    gr_health_event ev;
    small_event(&ev, codes, &ent);
    static const uint8_t want[] = {
        0x08, 0x01,                                    /* HealthEvents.version = 1 */
        0x12, 0x29,                                    /* events[0], 41 bytes */
        0x08, 0x01,                                    /* 1 version = 1 */
        0x12, 0x01, 'a',                               /* 2 agent */
        0x1a, 0x01, 'G',                               /* 3 componentClass */
        0x22, 0x01, 'c',                               /* 4 checkName */
        0x28, 0x01,                                    /* 5 isFatal */
        0x3a, 0x01, 'm',                               /* 7 message (6 isHealthy=false omitted) */
        0x40, 0x05,                                    /* 8 recommendedAction CONTACT_SUPPORT=5 */
        0x4a, 0x01, 'E',                               /* 9 errorCode */
        0x52, 0x06, 0x0a, 0x01, 'T',  0x12, 0x01, 'V', /* 10 entitiesImpacted */
        0x62, 0x04, 0x08, 0x01, 0x10, 0x02,            /* 12 generatedTimestamp {1, 2} */
        0x6a, 0x01, 'n',                               /* 13 nodeName */
        0x80, 0x01, 0x02,                              /* 16 processingStrategy STORE_ONLY=2 */
    };
    gr_buf out = GR_BUF_INIT(4096);
    assert_int_equal(gr_health_event_encode(&ev, 0, &out, NULL), GR_OK);
    assert_int_equal(out.len, sizeof want);
    assert_memory_equal(out.data, want, sizeof want);

    /* customRecommendedAction is field 18 (tag 0x92 0x01), CUSTOM = 27. */
    gr_buf_reset(&out);
    ev.recommended_action = GR_HEALTH_ACTION_CUSTOM;
    ev.custom_recommended_action = "x";
    assert_int_equal(gr_health_event_encode(&ev, 0, &out, NULL), GR_OK);
    const uint8_t custom[] = {0x92, 0x01, 0x01, 'x'};
    const uint8_t action[] = {0x40, 27};
    assert_memory_equal(out.data + out.len - 4, custom, 4);
    assert_non_null(memmem(out.data, out.len, action, 2));
    gr_buf_free(&out);
}

static void test_round_trip(void **state)
{
    (void)state;
    const char *codes[] = {"DCGM_FR_PCIE_REPLAY_RATE"};
    gr_health_entity ents[] = {{"GPU_UUID", "GPU-3c9a1f0e-0000-1111-2222-333344445555"},
                               {"PCI", "0000:3b:00.0"}};
    gr_health_event ev;
    gr_health_event_init(&ev);
    ev.agent = "preflight-dcgm-diag";
    ev.component_class = "GPU";
    ev.check_name = "DcgmDiagnosticPcieTest";
    ev.is_fatal = 1;
    ev.message = "PCIe replay rate \xc3\xbc high";
    ev.recommended_action = GR_HEALTH_ACTION_RESTART_VM;
    ev.error_codes = codes;
    ev.n_error_codes = 1;
    ev.entities = ents;
    ev.n_entities = 2;
    ev.node_name = "gpu-node-7";
    ev.processing_strategy = GR_HEALTH_STRATEGY_EXECUTE_REMEDIATION;
    gr_buf out = GR_BUF_INIT(4096);
    /* generated_ns == 0: the publish-time wall clock is used. */
    assert_int_equal(
        gr_health_event_encode(&ev, 1700000000LL * GR_HEALTH_NS_PER_S + 999, &out, NULL), GR_OK);
    Datamodels__HealthEvents *hes =
        datamodels__health_events__unpack(NULL, out.len, (const uint8_t *)out.data);
    assert_non_null(hes);
    assert_int_equal(hes->version, 1);
    assert_int_equal(hes->n_events, 1);
    Datamodels__HealthEvent *he = hes->events[0];
    assert_int_equal(he->version, 1);
    assert_string_equal(he->agent, "preflight-dcgm-diag");
    assert_string_equal(he->componentclass, "GPU");
    assert_string_equal(he->checkname, "DcgmDiagnosticPcieTest");
    assert_true(he->isfatal);
    assert_false(he->ishealthy);
    assert_string_equal(he->message, "PCIe replay rate \xc3\xbc high");
    assert_int_equal(he->recommendedaction, DATAMODELS__RECOMMENDED_ACTION__RESTART_VM);
    assert_int_equal(he->n_errorcode, 1);
    assert_string_equal(he->errorcode[0], "DCGM_FR_PCIE_REPLAY_RATE");
    assert_int_equal(he->n_entitiesimpacted, 2);
    assert_string_equal(he->entitiesimpacted[0]->entitytype, "GPU_UUID");
    assert_string_equal(he->entitiesimpacted[1]->entityvalue, "0000:3b:00.0");
    assert_non_null(he->generatedtimestamp);
    assert_int_equal(he->generatedtimestamp->seconds, 1700000000);
    assert_int_equal(he->generatedtimestamp->nanos, 999);
    assert_string_equal(he->nodename, "gpu-node-7");
    assert_int_equal(he->processingstrategy, DATAMODELS__PROCESSING_STRATEGY__EXECUTE_REMEDIATION);
    /* Not set by preflight (fact sheet §7.2). */
    assert_int_equal(he->n_metadata, 0);
    assert_null(he->quarantineoverrides);
    assert_null(he->drainoverrides);
    assert_string_equal(he->id, "");
    assert_string_equal(he->customrecommendedaction, "");
    datamodels__health_events__free_unpacked(hes, NULL);
    gr_buf_free(&out);
}

static void test_validation(void **state)
{
    (void)state;
    const char *codes[1];
    gr_health_entity ent;
    gr_health_event ev;
    gr_buf out = GR_BUF_INIT(4096);
    gr_err err;

    small_event(&ev, codes, &ent);
    ev.node_name = "";
    assert_int_equal(gr_health_event_encode(&ev, 0, &out, &err), GR_EINVAL);
    assert_string_equal(err.msg, "health event: nodeName is required");

    small_event(&ev, codes, &ent);
    ev.agent = NULL;
    assert_int_equal(gr_health_event_encode(&ev, 0, &out, &err), GR_EINVAL);
    assert_non_null(strstr(err.msg, "agent"));

    small_event(&ev, codes, &ent);
    ev.message = "bad \xc3\x28 utf8";
    assert_int_equal(gr_health_event_encode(&ev, 0, &out, &err), GR_EINVAL);
    assert_string_equal(err.msg, "health event: message is not valid UTF-8");
    ev.message = "surrogate \xed\xa0\x80";
    assert_int_equal(gr_health_event_encode(&ev, 0, &out, &err), GR_EINVAL);
    ev.message = "overlong \xc0\xaf";
    assert_int_equal(gr_health_event_encode(&ev, 0, &out, &err), GR_EINVAL);

    small_event(&ev, codes, &ent);
    ev.recommended_action = GR_HEALTH_ACTION_CUSTOM;
    assert_int_equal(gr_health_event_encode(&ev, 0, &out, &err), GR_EINVAL);
    assert_non_null(strstr(err.msg, "customRecommendedAction"));
    ev.recommended_action = (gr_health_action)7;
    assert_int_equal(gr_health_event_encode(&ev, 0, &out, &err), GR_EINVAL);

    small_event(&ev, codes, &ent);
    ev.processing_strategy = (gr_health_strategy)9;
    assert_int_equal(gr_health_event_encode(&ev, 0, &out, &err), GR_EINVAL);

    small_event(&ev, codes, &ent);
    codes[0] = NULL;
    assert_int_equal(gr_health_event_encode(&ev, 0, &out, &err), GR_EINVAL);
    assert_non_null(strstr(err.msg, "errorCode[0]"));

    small_event(&ev, codes, &ent);
    ent.type = "";
    assert_int_equal(gr_health_event_encode(&ev, 0, &out, &err), GR_EINVAL);
    assert_non_null(strstr(err.msg, "entity 0"));

    /* A buffer cap is honoured. */
    small_event(&ev, codes, &ent);
    gr_buf tiny = GR_BUF_INIT(10);
    assert_int_equal(gr_health_event_encode(&ev, 0, &tiny, &err), GR_ETOOBIG);
    gr_buf_free(&tiny);
    assert_int_equal(out.len, 0);
    gr_buf_free(&out);

    /* Negative wall-clock time still gives a valid Timestamp. */
    small_event(&ev, codes, &ent);
    ev.generated_ns = -1;
    gr_buf b = GR_BUF_INIT(4096);
    assert_int_equal(gr_health_event_encode(&ev, 0, &b, NULL), GR_OK);
    Datamodels__HealthEvents *hes =
        datamodels__health_events__unpack(NULL, b.len, (const uint8_t *)b.data);
    assert_non_null(hes);
    assert_int_equal(hes->events[0]->generatedtimestamp->seconds, -1);
    assert_int_equal(hes->events[0]->generatedtimestamp->nanos, 999999999);
    datamodels__health_events__free_unpacked(hes, NULL);
    gr_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wire_bytes),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_validation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
