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
                        "kc: clusters[0].cluster.certificate-authority-data: not valid base64");
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_current_context),
        cmocka_unit_test(test_explicit_context_paths),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_in_cluster_and_token_rotation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
