/* limits.h: default values and enforcement mechanisms of the limits. */
#ifndef VG_LIMITS_H
#define VG_LIMITS_H
#include "policy/policy.h"
#include "tracer/run.h"
/* Copy every limit src sets over dst. */
void vg_limits_merge(struct vg_limits *dst, const struct vg_limits *src);
const char *vg_limit_mechanism(enum vg_limit l);
const char *vg_limit_unit(enum vg_limit l);
#endif
