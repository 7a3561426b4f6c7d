/* routes.c: THE table of the API's routes (docs/SERVE.md, and
 * docs/serve-openapi.yaml, which tests/test_serve_openapi.py checks
 * against these rows). */
#include <stdlib.h>
#include <string.h>

#include "serve/api.h"

const struct vg_route vg_routes[] = {
    {"GET", "/v1/version", vg_api_version, false},
    {"POST", "/v1/runs", vg_api_submit, false},
    {"GET", "/v1/runs", vg_api_list, true},
    {"GET", "/v1/runs/{id}", vg_api_get, true},
    {"DELETE", "/v1/runs/{id}", vg_api_delete, true},
    {"GET", "/v1/runs/{id}/result", vg_api_result, true},
    {"GET", "/v1/runs/{id}/log", vg_api_log, true},
    {"GET", "/v1/runs/{id}/stdout", vg_api_stdout, true},
    {"GET", "/v1/runs/{id}/stderr", vg_api_stderr, true},
    {"GET", "/v1/runs/{id}/files/{path}", vg_api_file, true},
    {"POST", "/v1/runs/{id}/cancel", vg_api_cancel, true},
    {"GET", "/v1/quota", vg_api_quota, true},
};
const size_t vg_nroutes = sizeof vg_routes / sizeof vg_routes[0];

/* Matches path against pattern, component by component. */
static bool match(const char *pattern, const char *path, char **id, char **rest)
{
    const char *p = pattern, *s = path;
    *id = *rest = NULL;
    while (*p && *s) {
        const char *pe = strchr(p, '/') ? strchr(p, '/') : p + strlen(p);
        const char *se = strchr(s, '/') ? strchr(s, '/') : s + strlen(s);
        size_t pn = (size_t)(pe - p), sn = (size_t)(se - s);
        if (pn == strlen("{path}") && !strncmp(p, "{path}", pn)) {
            if (!*s)
                break;
            *rest = strdup(s);
            return *rest != NULL;
        }
        if (pn == strlen("{id}") && !strncmp(p, "{id}", pn)) {
            if (sn == 0)
                break;
            free(*id);
            *id = strndup(s, sn);
        } else if (pn != sn || strncmp(p, s, pn)) {
            break;
        }
        p = *pe ? pe + 1 : pe;
        s = *se ? se + 1 : se;
        if (!*p && !*s)
            return true;
        if (!*p || !*s)
            break;
    }
    free(*id);
    *id = NULL;
    return false;
}

const struct vg_route *vg_route_find(const char *method, const char *path, char **id,
                                     char **rest, bool *path_known)
{
    *path_known = false;
    if (*path != '/')
        return NULL;
    for (size_t i = 0; i < vg_nroutes; i++) {
        if (!match(vg_routes[i].pattern + 1, path + 1, id, rest))
            continue;
        if (!strcmp(vg_routes[i].method, method))
            return &vg_routes[i];
        *path_known = true;
        free(*id);
        free(*rest);
        *id = *rest = NULL;
    }
    return NULL;
}
