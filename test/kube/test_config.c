/* kubeconfig and in-cluster configuration parsing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "gr_kube_config.h"

static const char *KC = "apiVersion: v1\n"
                        "kind: Config\n"
                        "current-context: dev\n"
                        "clusters:\n"
                        "- name: c1\n"
                        "  cluster:\n"
                        "    server: https://127.0.0.1:6443/\n"
                        "    certificate-authority-data: aGVsbG8=\n"
                        "- name: c2\n"
                        "  cluster:\n"
                        "    server: https://10.0.0.1\n"
                        "    certificate-authority: pki/ca.crt\n"
                        "    insecure-skip-tls-verify: true\n"
                        "    tls-server-name: kubernetes\n"
                        "users:\n"
                        "- name: u1\n"
                        "  user:\n"
                        "    client-certificate-data: Y2VydA==\n"
                        "    client-key-data: a2V5\n"
                        "- name: u2\n"
                        "  user:\n"
                        "    token: abc\n"
                        "    tokenFile: tok\n"
                        "- name: u3\n"
                        "  user:\n"
                        "    exec:\n"
                        "      command: aws\n"
                        "contexts:\n"
                        "- name: dev\n"
                        "  context: {cluster: c1, user: u1, namespace: team-a}\n"
                        "- name: prod\n"
                        "  context: {cluster: c2, user: u2}\n"
                        "- name: cloud\n"
                        "  context: {cluster: c1, user: u3}\n"
                        "- name: ghost\n"
                        "  context: {cluster: nope, user: u1}\n";

static void test_current_context(void **state)
{
    (void)state;
    gr_kube_config c;
    gr_err err;
    assert_int_equal(gr_kube_config_parse(KC, strlen(KC), "kc", "/etc/kube", NULL, &c, &err),
                     GR_OK);
    assert_string_equal(c.server, "https://127.0.0.1:6443"); /* trailing slash dropped */
    assert_int_equal(c.ca_pem_len, 5);
    assert_memory_equal(c.ca_pem, "hello", 5);
    assert_memory_equal(c.cert_pem, "cert", 4);
    assert_memory_equal(c.key_pem, "key", 3);
    assert_string_equal(c.namespace_, "team-a");
    assert_string_equal(c.context, "dev");
    assert_null(c.token);
    assert_int_equal(c.insecure_skip_tls_verify, 0);
    gr_kube_config_free(&c);
}

static void test_explicit_context_paths(void **state)
{
    (void)state;
    gr_kube_config c;
    gr_err err;
    assert_int_equal(gr_kube_config_parse(KC, strlen(KC), "kc", "/etc/kube", "prod", &c, &err),
                     GR_OK);
    assert_string_equal(c.server, "https://10.0.0.1");
    assert_string_equal(c.ca_file, "/etc/kube/pki/ca.crt"); /* relative to the file */
    assert_null(c.ca_pem);
    assert_int_equal(c.insecure_skip_tls_verify, 1);
    assert_string_equal(c.tls_server_name, "kubernetes");
    assert_string_equal(c.token, "abc");
    assert_string_equal(c.token_file, "/etc/kube/tok");
    assert_string_equal(c.namespace_, "default");
    gr_kube_config_free(&c);
}

static void test_errors(void **state)
{
    (void)state;
    gr_kube_config c;
    gr_err err;
    assert_int_equal(gr_kube_config_parse(KC, strlen(KC), "kc", NULL, "cloud", &c, &err),
                     GR_EUNSUPPORTED);
    assert_non_null(
        strstr(err.msg, "users[2].user.exec: exec credential plugins are not supported"));
    assert_int_equal(gr_kube_config_parse(KC, strlen(KC), "kc", NULL, "ghost", &c, &err),
                     GR_ENOTFOUND);
    assert_string_equal(err.msg, "kc: no cluster named \"nope\" in clusters");
    assert_int_equal(gr_kube_config_parse(KC, strlen(KC), "kc", NULL, "missing", &c, &err),
                     GR_ENOTFOUND);
    const char *bad = "current-context: x\ncontexts: 5\n";
    assert_int_equal(gr_kube_config_parse(bad, strlen(bad), "kc", NULL, NULL, &c, &err), GR_EPARSE);
    assert_string_equal(err.msg, "kc: contexts: expected a list");
    const char *nocur = "clusters: []\n";
    assert_int_equal(gr_kube_config_parse(nocur, strlen(nocur), "kc", NULL, NULL, &c, &err),
                     GR_ENOTFOUND);
    const char *b64 = "current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\n"
                      "clusters: [{name: c, cluster: {server: 'https://x', "
                      "certificate-authority-data: '!!!'}}]\n";
    assert_int_equal(gr_kube_config_parse(b64, strlen(b64), "kc", NULL, NULL, &c, &err), GR_EPARSE);
    assert_string_equal(err.msg,
                        "kc: clusters[0].cluster.certificate-authority-data: not valid base64 "
                        "(invalid character '!' at byte 0)");
    const char *tok = "current-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\n"
                      "clusters: [{name: c, cluster: {server: 'https://x'}}]\n"
                      "users: [{name: u, user: {token: 5}}]\n";
    assert_int_equal(gr_kube_config_parse(tok, strlen(tok), "kc", NULL, NULL, &c, &err), GR_EPARSE);
    assert_string_equal(err.msg, "kc: users[0].user.token: expected a string");
    const char *yaml = "a: [\n";
    assert_int_equal(gr_kube_config_parse(yaml, strlen(yaml), "kc", NULL, NULL, &c, &err),
                     GR_EPARSE);
    const char *noserver = "current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\n"
                           "clusters: [{name: c, cluster: {}}]\n";
    assert_int_equal(gr_kube_config_parse(noserver, strlen(noserver), "kc", NULL, NULL, &c, &err),
                     GR_EPARSE);
    assert_non_null(strstr(err.msg, "clusters[0].cluster.server: required"));
}

static void write_file(const char *path, const char *s)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(s, f);
    fclose(f);
}

static void test_in_cluster_and_token_rotation(void **state)
{
    (void)state;
    char dir[] = "/tmp/gr-kube-sa-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char p[256];
    snprintf(p, sizeof p, "%s/token", dir);
    write_file(p, "tok-1\n");
    snprintf(p, sizeof p, "%s/ca.crt", dir);
    write_file(p, "-----BEGIN CERTIFICATE-----\n");
    snprintf(p, sizeof p, "%s/namespace", dir);
    write_file(p, "gpu-ops\n");
    gr_kube_config c;
    gr_err err;
    assert_int_equal(gr_kube_config_in_cluster_at(dir, NULL, "443", &c, &err), GR_ENOTFOUND);
    assert_int_equal(gr_kube_config_in_cluster_at(dir, "fd00::1", "443", &c, &err), GR_OK);
    assert_string_equal(c.server, "https://[fd00::1]:443");
    assert_string_equal(c.namespace_, "gpu-ops");
    assert_non_null(c.ca_pem);
    char *tok = NULL;
    assert_int_equal(gr_kube_config_bearer(&c, &tok, &err), GR_OK);
    assert_string_equal(tok, "tok-1");
    free(tok);
    /* projected tokens rotate: the next request must see the new one */
    snprintf(p, sizeof p, "%s/token", dir);
    write_file(p, "tok-2");
    assert_int_equal(gr_kube_config_bearer(&c, &tok, &err), GR_OK);
    assert_string_equal(tok, "tok-2");
    free(tok);
    gr_kube_config_free(&c);
    /* load_file resolves and reads relative files */
    snprintf(p, sizeof p, "%s/kubeconfig", dir);
    write_file(p, "current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\n"
                  "clusters: [{name: c, cluster: {server: 'https://x', certificate-authority: "
                  "ca.crt}}]\n");
    assert_int_equal(gr_kube_config_load_file(p, NULL, &c, &err), GR_OK);
    assert_non_null(c.ca_pem);
    assert_int_equal(c.ca_pem_len, strlen("-----BEGIN CERTIFICATE-----\n"));
    gr_kube_config_free(&c);
    assert_int_equal(gr_kube_config_load(p, NULL, &c, &err), GR_OK); /* --kubeconfig wins */
    gr_kube_config_free(&c);
    setenv("KUBECONFIG", "/nonexistent/a:/nonexistent/b", 1);
    unsetenv("KUBERNETES_SERVICE_HOST");
    setenv("HOME", "/nonexistent", 1);
    assert_int_equal(gr_kube_config_load(NULL, NULL, &c, &err), GR_ENOTFOUND);
    assert_non_null(strstr(err.msg, "pass --kubeconfig PATH"));
    char env[600];
    snprintf(env, sizeof env, "/nonexistent/a:%s", p);
    setenv("KUBECONFIG", env, 1);
    assert_int_equal(gr_kube_config_load(NULL, NULL, &c, &err), GR_OK);
    gr_kube_config_free(&c);
    const char *files[] = {"token", "ca.crt", "namespace", "kubeconfig"};
    for (size_t i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        unlink(p);
    }
    rmdir(dir);
}

/* ---- $KUBECONFIG merging (client-go clientcmd loading rules) ---------- */

static const char *KA = "current-context: a-ctx\n"
                        "contexts:\n"
                        "- {name: a-ctx, context: {cluster: shared, user: ua, namespace: from-a}}\n"
                        "clusters:\n"
                        "- {name: shared, cluster: {server: 'https://a', certificate-authority: "
                        "ca.crt}}\n";
static const char *KB = "current-context: b-ctx\n"
                        "contexts:\n"
                        "- {name: b-ctx, context: {cluster: onlyb, user: ub}}\n"
                        "- {name: a-ctx, context: {cluster: onlyb, user: ub}}\n"
                        "clusters:\n"
                        "- {name: shared, cluster: {server: 'https://b', insecure-skip-tls-verify: "
                        "true, tls-server-name: b}}\n"
                        "- {name: onlyb, cluster: {server: 'https://onlyb', certificate-authority: "
                        "pki/b.crt}}\n"
                        "users:\n"
                        "- {name: ua, user: {token: from-b}}\n"
                        "- {name: ub, user: {tokenFile: tok, client-certificate: c.crt, "
                        "client-key: /abs/c.key}}\n";

static int merge2(const char *t1, const char *t2, const char *context, gr_kube_config *c,
                  gr_err *err)
{
    gr_kube_config_src s[2] = {{t1, strlen(t1), "a.yaml", "/dirA"},
                               {t2, strlen(t2), "b.yaml", "/dirB"}};
    return gr_kube_config_parse_merged(s, 2, context, c, err);
}

static void test_merge_first_wins(void **state)
{
    (void)state;
    gr_kube_config c;
    gr_err err;
    /* current-context from the first file that sets it; context, cluster
     * from the first file defining the name; a user only the second file
     * defines is found (references cross files) */
    assert_int_equal(merge2(KA, KB, NULL, &c, &err), GR_OK);
    assert_string_equal(c.context, "a-ctx");
    assert_string_equal(c.namespace_, "from-a");
    assert_string_equal(c.server, "https://a");
    /* the whole entry wins: b.yaml's fields of "shared" are not mixed in */
    assert_int_equal(c.insecure_skip_tls_verify, 0);
    assert_null(c.tls_server_name);
    assert_string_equal(c.ca_file, "/dirA/ca.crt"); /* relative to a.yaml's dir */
    assert_string_equal(c.token, "from-b");
    gr_kube_config_free(&c);
    /* the other order: b.yaml's current-context and its a-ctx */
    assert_int_equal(merge2(KB, KA, NULL, &c, &err), GR_OK);
    assert_string_equal(c.context, "b-ctx");
    assert_string_equal(c.server, "https://onlyb");
    gr_kube_config_free(&c);
    assert_int_equal(merge2(KB, KA, "a-ctx", &c, &err), GR_OK);
    assert_string_equal(c.server, "https://onlyb"); /* b.yaml's a-ctx wins */
    assert_string_equal(c.namespace_, "default");
    gr_kube_config_free(&c);
}

static void test_merge_current_context_and_empty(void **state)
{
    (void)state;
    gr_kube_config c;
    gr_err err;
    /* a first file that defines contexts but no current-context: the
     * current-context comes from the second, its definition from the first */
    const char *nocur = "contexts: [{name: b-ctx, context: {cluster: shared}}]\n"
                        "clusters: [{name: shared, cluster: {server: 'https://first'}}]\n";
    assert_int_equal(merge2(nocur, KB, NULL, &c, &err), GR_OK);
    assert_string_equal(c.context, "b-ctx");
    assert_string_equal(c.server, "https://first");
    assert_null(c.token_file); /* no user in the winning context */
    gr_kube_config_free(&c);
    /* an empty current-context does not count as set */
    const char *emptycur = "current-context: ''\n";
    assert_int_equal(merge2(emptycur, KB, NULL, &c, &err), GR_OK);
    assert_string_equal(c.context, "b-ctx");
    gr_kube_config_free(&c);
    /* an empty file is an empty config (client-go), not an error */
    assert_int_equal(merge2("", KB, NULL, &c, &err), GR_OK);
    assert_string_equal(c.context, "b-ctx");
    gr_kube_config_free(&c);
    assert_int_equal(merge2("", "", NULL, &c, &err), GR_ENOTFOUND);
    assert_non_null(strstr(err.msg, "a.yaml, b.yaml: current-context is not set"));
}

static void test_merge_paths_per_file(void **state)
{
    (void)state;
    gr_kube_config c;
    gr_err err;
    /* context from a.yaml, cluster and user from b.yaml: b.yaml's paths
     * resolve against b.yaml's directory; absolute paths stay */
    const char *a = "current-context: x\ncontexts: [{name: x, context: {cluster: onlyb, user: "
                    "ub}}]\n";
    assert_int_equal(merge2(a, KB, NULL, &c, &err), GR_OK);
    assert_string_equal(c.ca_file, "/dirB/pki/b.crt");
    assert_string_equal(c.token_file, "/dirB/tok");
    assert_string_equal(c.cert_file, "/dirB/c.crt");
    assert_string_equal(c.key_file, "/abs/c.key");
    gr_kube_config_free(&c);
    /* cluster from a.yaml, user from b.yaml in one context */
    const char *mix = "current-context: m\ncontexts: [{name: m, context: {cluster: shared, user: "
                      "ub}}]\n";
    gr_kube_config_src s[3] = {{mix, strlen(mix), "m.yaml", "/dirM"},
                               {KA, strlen(KA), "a.yaml", "/dirA"},
                               {KB, strlen(KB), "b.yaml", "/dirB"}};
    assert_int_equal(gr_kube_config_parse_merged(s, 3, NULL, &c, &err), GR_OK);
    assert_string_equal(c.ca_file, "/dirA/ca.crt");
    assert_string_equal(c.token_file, "/dirB/tok");
    gr_kube_config_free(&c);
}

static void test_merge_errors(void **state)
{
    (void)state;
    gr_kube_config c;
    gr_err err;
    assert_int_equal(merge2(KA, KB, "zz", &c, &err), GR_ENOTFOUND);
    assert_string_equal(err.msg, "a.yaml, b.yaml: no context named \"zz\" in contexts");
    assert_null(c.server);
    /* a malformed later file fails the load and is named */
    assert_int_equal(merge2(KA, "a: [\n", NULL, &c, &err), GR_EPARSE);
    assert_non_null(strstr(err.msg, "b.yaml"));
    assert_int_equal(merge2(KA, "- 1\n", NULL, &c, &err), GR_EPARSE);
    assert_string_equal(err.msg, "b.yaml: expected a kubeconfig mapping at the top level");
    /* a wrong type is reported against the file its entry came from */
    const char *badu = "users: [{name: ua, user: {token: 5}}]\n";
    assert_int_equal(merge2(KA, badu, NULL, &c, &err), GR_EPARSE);
    assert_string_equal(err.msg, "b.yaml: users[0].user.token: expected a string");
    assert_int_equal(merge2("contexts: {}\n", KB, NULL, &c, &err), GR_EPARSE);
    assert_string_equal(err.msg, "a.yaml: contexts: expected a list");
    assert_int_equal(gr_kube_config_parse_merged(NULL, 0, NULL, &c, &err), GR_ENOTFOUND);
    gr_kube_config_src many[GR_KUBE_CONFIG_MAX_FILES + 1];
    for (size_t i = 0; i < GR_KUBE_CONFIG_MAX_FILES + 1; i++)
        many[i] = (gr_kube_config_src){KC, strlen(KC), "x", NULL};
    assert_int_equal(gr_kube_config_parse_merged(many, GR_KUBE_CONFIG_MAX_FILES, NULL, &c, &err),
                     GR_OK);
    gr_kube_config_free(&c);
    assert_int_equal(
        gr_kube_config_parse_merged(many, GR_KUBE_CONFIG_MAX_FILES + 1, NULL, &c, &err),
        GR_ETOOBIG);
}

static void test_merge_kubeconfig_env(void **state)
{
    (void)state;
    char dir[] = "/tmp/gr-kube-merge-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char da[300], db[300], fa[320], fb[320], p[400], home[320];
    snprintf(da, sizeof da, "%s/a", dir);
    snprintf(db, sizeof db, "%s/b", dir);
    snprintf(home, sizeof home, "%s/home", dir);
    assert_int_equal(mkdir(da, 0700), 0);
    assert_int_equal(mkdir(db, 0700), 0);
    assert_int_equal(mkdir(home, 0700), 0);
    snprintf(p, sizeof p, "%s/.kube", home);
    assert_int_equal(mkdir(p, 0700), 0);
    snprintf(p, sizeof p, "%s/.kube/config", home);
    write_file(p, "current-context: h\ncontexts: [{name: h, context: {cluster: h}}]\n"
                  "clusters: [{name: h, cluster: {server: 'https://home'}}]\n");
    snprintf(fa, sizeof fa, "%s/config", da);
    snprintf(fb, sizeof fb, "%s/config", db);
    /* each file's relative certificate-authority resolves in its own dir */
    write_file(fa, "current-context: x\n"
                   "contexts: [{name: x, context: {cluster: cb, user: ua}}]\n"
                   "clusters: [{name: ca, cluster: {server: 'https://a', certificate-authority: "
                   "ca.crt}}]\n"
                   "users: [{name: ua, user: {token: tok-a}}]\n");
    write_file(fb, "current-context: y\n"
                   "contexts: [{name: y, context: {cluster: ca}}]\n"
                   "clusters: [{name: cb, cluster: {server: 'https://b', certificate-authority: "
                   "ca.crt}}]\n");
    snprintf(p, sizeof p, "%s/ca.crt", da);
    write_file(p, "CA-A\n");
    snprintf(p, sizeof p, "%s/ca.crt", db);
    write_file(p, "CA-B\n");
    unsetenv("KUBERNETES_SERVICE_HOST");
    setenv("HOME", home, 1);
    gr_kube_config c;
    gr_err err;
    /* missing and empty entries are skipped, duplicates loaded once */
    char env[1400];
    snprintf(env, sizeof env, "%s/missing::%s:%s:%s", dir, fa, fb, fa);
    setenv("KUBECONFIG", env, 1);
    assert_int_equal(gr_kube_config_load(NULL, NULL, &c, &err), GR_OK);
    assert_string_equal(c.context, "x");
    assert_string_equal(c.server, "https://b");
    assert_string_equal(c.token, "tok-a");
    assert_int_equal(c.ca_pem_len, 5);
    assert_memory_equal(c.ca_pem, "CA-B\n", 5); /* read from b's dir */
    gr_kube_config_free(&c);
    assert_int_equal(gr_kube_config_load(NULL, "y", &c, &err), GR_OK);
    assert_memory_equal(c.ca_pem, "CA-A\n", 5);
    gr_kube_config_free(&c);
    /* the list API does the same */
    const char *list[] = {fb, "", fa};
    assert_int_equal(gr_kube_config_load_list(list, 3, NULL, &c, &err), GR_OK);
    assert_string_equal(c.context, "y");
    gr_kube_config_free(&c);
    /* --kubeconfig is one file, never merged: cluster cb is not in a */
    assert_int_equal(gr_kube_config_load(fa, NULL, &c, &err), GR_ENOTFOUND);
    assert_non_null(strstr(err.msg, "no cluster named \"cb\""));
    /* an explicit path must exist */
    snprintf(p, sizeof p, "%s/missing", dir);
    assert_int_equal(gr_kube_config_load(p, NULL, &c, &err), GR_EIO);
    /* all missing: the usual error, listing them; ~/.kube/config is not
     * read while $KUBECONFIG is set */
    snprintf(env, sizeof env, "%s/m1:%s/m2", dir, dir);
    setenv("KUBECONFIG", env, 1);
    assert_int_equal(gr_kube_config_load(NULL, NULL, &c, &err), GR_ENOTFOUND);
    assert_non_null(strstr(err.msg, "no Kubernetes configuration found"));
    assert_non_null(strstr(err.msg, "/m1, "));
    assert_non_null(strstr(err.msg, "pass --kubeconfig PATH"));
    assert_int_equal(gr_kube_config_load_list(list, 0, NULL, &c, &err), GR_ENOTFOUND);
    /* unset: ~/.kube/config */
    unsetenv("KUBECONFIG");
    assert_int_equal(gr_kube_config_load(NULL, NULL, &c, &err), GR_OK);
    assert_string_equal(c.server, "https://home");
    gr_kube_config_free(&c);
    /* a file that exists but is broken fails the merge, naming it */
    write_file(fb, "clusters: 7\n");
    snprintf(env, sizeof env, "%s:%s", fa, fb);
    setenv("KUBECONFIG", env, 1);
    assert_int_equal(gr_kube_config_load(NULL, NULL, &c, &err), GR_EPARSE);
    assert_non_null(strstr(err.msg, "b/config: clusters: expected a list"));
    assert_non_null(strstr(err.msg, "$KUBECONFIG: "));
    unsetenv("KUBECONFIG");
    const char *rm[] = {"a/config", "a/ca.crt", "b/config", "b/ca.crt", "home/.kube/config"};
    for (size_t i = 0; i < 5; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, rm[i]);
        unlink(p);
    }
    snprintf(p, sizeof p, "%s/.kube", home);
    rmdir(p);
    rmdir(home);
    rmdir(da);
    rmdir(db);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_current_context),
        cmocka_unit_test(test_explicit_context_paths),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_in_cluster_and_token_rotation),
        cmocka_unit_test(test_merge_first_wins),
        cmocka_unit_test(test_merge_current_context_and_empty),
        cmocka_unit_test(test_merge_paths_per_file),
        cmocka_unit_test(test_merge_errors),
        cmocka_unit_test(test_merge_kubeconfig_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
