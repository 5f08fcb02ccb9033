/* libFuzzer target for gr_glob: input is "pattern\nname". Checks memory
 * safety, that a malformed pattern never matches, and that the Go-style
 * result agrees with gr_glob_match(). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gr_glob.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    char *nl = strchr(s, '\n');
    const char *name = "";
    if (nl) {
        *nl = '\0';
        name = nl + 1;
    }
    bool m = gr_glob_match(s, name);
    bool gm = false;
    gr_err err;
    int rc = gr_glob_match_go(s, name, &gm, &err);
    int vrc = gr_glob_validate(s, NULL);
    if (vrc != GR_OK && (m || rc == GR_OK))
        abort();
    if (vrc == GR_OK && (rc != GR_OK || gm != m))
        abort();
    /* a pattern without metacharacters matches exactly itself */
    if (vrc == GR_OK && strpbrk(s, "*?[\\") == NULL && m != (strcmp(s, name) == 0))
        abort();
    free(s);
    return 0;
}
