/* fuzz_policy.c: libFuzzer target for the policy parser and compiler: any
 * bytes must give either a policy or a one-line error, never a crash, a
 * leak or a hang; a policy that parses must compile, decide and plan. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct vg_places places = {"/home/u", "/work", "/tmp"};
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    struct vg_err err;
    /* a name without a directory: includes resolve against the cwd, where
     * the corpus files are not, so they fail cleanly */
    struct vg_policy *p = vg_policy_parse("fuzz.policy", text, &err);
    if (p && vg_policy_compile(p, &places, &err) == 0) {
        const char *const paths[] = {"/", "/work/a/b.py", "/home/u/.ssh/id_rsa",
                                     "/usr/lib/python3.11/os.py", "/tmp//x/", text};
        for (int c = 0; c < VG_CLASS_NCLASSES; c++)
            for (size_t i = 0; i < sizeof paths / sizeof *paths; i++)
                (void)vg_policy_decide_path(p, (enum vg_class)c, paths[i]);
        struct vg_landlock_plan plan;
        vg_policy_landlock_plan(p, 7, &plan);
        vg_landlock_plan_free(&plan);
    }
    vg_policy_free(p);
    free(text);
    return 0;
}
