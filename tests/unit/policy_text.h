/* policy_text.h: a policy for a unit test, from its text: parsed and
 * compiled against fixed places, or the test binary stops loudly. */
#ifndef VG_TEST_POLICY_TEXT_H
#define VG_TEST_POLICY_TEXT_H
#include <stdio.h>
#include <stdlib.h>

#include "policy/policy.h"

static const struct vg_places places = {"/home/u", "/work/cand", "/tmp"};

static inline struct vg_policy *pol(const char *text)
{
    struct vg_err err = {{0}};
    struct vg_policy *p = vg_policy_parse("t.policy", text, &err);
    if (!p || vg_policy_compile(p, &places, &err)) {
        fprintf(stderr, "policy did not parse: %s\n--\n%s--\n", err.msg, text);
        exit(1);
    }
    return p;
}
#endif
