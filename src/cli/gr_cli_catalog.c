/* `gpuready catalog list|show` and the YAML printer (gr_cli.h). */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_cli.h"
#include "gr_nvcre_catalog.h"

static bool plain_ok(const char *s)
{
    static const char *reserved[] = {"true", "false", "null",  "yes",  "no",   "on",  "off",
                                     "~",    "True",  "False", "Null", "NULL", "Yes", "No",
                                     "On",   "Off",   "y",     "n",    "Y",    "N"};
    if (!*s)
        return false;
    for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
        if (!strcmp(s, reserved[i]))
            return false;
    if (isdigit((unsigned char)s[0]) || strchr("-.+", s[0]))
        return false;
    for (const char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("._/-", *p))
            return false;
    return true;
}

static void put_scalar(FILE *f, const json_t *v)
{
    if (json_is_string(v) && plain_ok(json_string_value(v))) {
        fputs(json_string_value(v), f);
        return;
    }
    char *d = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    fputs(d ? d : "null", f);
    free(d);
}

static bool is_block(const json_t *v)
{
    return (json_is_object(v) && json_object_size(v)) || (json_is_array(v) && json_array_size(v));
}

static void put_key(FILE *f, const char *k)
{
    json_t *s = json_string(k);
    put_scalar(f, s);
    json_decref(s);
}

static void put(FILE *f, const json_t *v, int ind)
{
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        bool first = true;
        json_object_foreach((json_t *)(uintptr_t)v, k, x)
        {
            if (!first || ind >= 0)
                fprintf(f, "%*s", ind < 0 ? 0 : ind, "");
            first = false;
            put_key(f, k);
            if (is_block(x)) {
                fputs(":\n", f);
                put(f, x, (ind < 0 ? 0 : ind) + 2);
            } else {
                fputs(": ", f);
                put_scalar(f, x);
                fputc('\n', f);
            }
        }
        return;
    }
    size_t i;
    json_t *x;
    json_array_foreach(v, i, x)
    {
        fprintf(f, "%*s- ", ind < 0 ? 0 : ind, "");
        if (json_is_object(x) && json_object_size(x)) {
            /* first key on the dash line, the rest indented under it */
            const char *k;
            json_t *y;
            bool first = true;
            json_object_foreach(x, k, y)
            {
                if (!first)
                    fprintf(f, "%*s", (ind < 0 ? 0 : ind) + 2, "");
                first = false;
                put_key(f, k);
                if (is_block(y)) {
                    fputs(":\n", f);
                    put(f, y, (ind < 0 ? 0 : ind) + 4);
                } else {
                    fputs(": ", f);
                    put_scalar(f, y);
                    fputc('\n', f);
                }
            }
        } else if (is_block(x)) {
            fputs("\n", f);
            put(f, x, (ind < 0 ? 0 : ind) + 2);
        } else {
            put_scalar(f, x);
            fputc('\n', f);
        }
    }
}

void gr_cli_put_yaml(FILE *f, const json_t *v)
{
    if (is_block(v))
        put(f, v, 0);
    else {
        put_scalar(f, v);
        fputc('\n', f);
    }
}

static int usage(FILE *errf)
{
    fputs("usage: gpuready catalog list\n"
          "       gpuready catalog show DOMAIN/VARIANT [--platform P] [--gpu ARCH] "
          "[--source] [-o yaml|json]\n",
          errf);
    return 2;
}

int gr_cli_catalog(int argc, char **argv, FILE *out, FILE *errf)
{
    if (argc < 2)
        return usage(errf);
    gr_nvcre_catalog *cat;
    gr_err err;
    if (gr_nvcre_catalog_load(&cat, &err) != GR_OK) {
        fprintf(errf, "gpuready catalog: %s\n", err.msg);
        return 1;
    }
    int rc = 0;
    if (!strcmp(argv[1], "list")) {
        fprintf(out, "%-40s %s\n", "CATEGORY", "DESCRIPTION");
        for (size_t i = 0; i < gr_nvcre_catalog_count(cat); i++) {
            const char *d, *v, *desc;
            gr_nvcre_catalog_entry(cat, i, &d, &v, &desc);
            char name[128];
            snprintf(name, sizeof name, "%s/%s", d, v);
            fprintf(out, "%-40s %s\n", name, desc);
        }
    } else if (!strcmp(argv[1], "show") && argc >= 3) {
        const char *platform = "onprem", *gpu = "h100", *fmt = "yaml";
        bool source = false;
        for (int i = 3; i < argc; i++) {
            if (!strcmp(argv[i], "--platform") && i + 1 < argc)
                platform = argv[++i];
            else if (!strcmp(argv[i], "--gpu") && i + 1 < argc)
                gpu = argv[++i];
            else if (!strcmp(argv[i], "-o") && i + 1 < argc)
                fmt = argv[++i];
            else if (!strcmp(argv[i], "--source"))
                source = true;
            else {
                fprintf(errf, "gpuready catalog show: unknown argument %s\n", argv[i]);
                gr_nvcre_catalog_free(cat);
                return usage(errf);
            }
        }
        char dv[256];
        snprintf(dv, sizeof dv, "%s", argv[2]);
        char *slash = strchr(dv, '/');
        if (!slash) {
            fprintf(errf, "gpuready catalog show: want DOMAIN/VARIANT, got %s\n", argv[2]);
            gr_nvcre_catalog_free(cat);
            return 2;
        }
        *slash = '\0';
        if (source) {
            const char *src = gr_nvcre_catalog_source(cat, dv, slash + 1);
            if (src)
                fputs(src, out);
            else {
                fprintf(errf, "gpuready catalog show: Unknown certification category: %s\n",
                        argv[2]);
                rc = 1;
            }
            gr_nvcre_catalog_free(cat);
            return rc;
        }
        if (strcmp(fmt, "yaml") && strcmp(fmt, "json")) {
            fprintf(errf, "gpuready catalog show: -o %s: want yaml or json\n", fmt);
            gr_nvcre_catalog_free(cat);
            return 2;
        }
        gr_nvcre_catalog_req req = {dv, slash + 1, platform, gpu, NULL, NULL, NULL};
        json_t *spec = NULL;
        if (gr_nvcre_catalog_render(cat, &req, &spec, NULL, &err) != GR_OK) {
            fprintf(errf, "gpuready catalog show: %s\n", err.msg);
            rc = 1;
        } else if (!strcmp(fmt, "json")) {
            char *s = json_dumps(spec, JSON_INDENT(2) | JSON_SORT_KEYS);
            fprintf(out, "%s\n", s ? s : "");
            free(s);
        } else {
            fprintf(out, "# %s on %s %s (WorkflowSpec)\n", argv[2], platform, gpu);
            gr_cli_put_yaml(out, spec);
        }
        json_decref(spec);
    } else {
        rc = usage(errf);
    }
    gr_nvcre_catalog_free(cat);
    return rc;
}
