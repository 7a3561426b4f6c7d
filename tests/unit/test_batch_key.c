/* test_batch_key.c: batch/key.c, a task's key.  Two tasks get one key
 * exactly when nothing that decides their runs differs: each row is a pair
 * of task lines (ids aside) and whether their keys must be equal.  The
 * files they name are made in a directory of the test's own, the batch's
 * cwd, as `vigil batch` would see them. */
#include <sys/stat.h>

#include "batch/batch.h"
#include "launcher/scratch.h"
#include "tests/unit/check.h"

static char dir[] = "/tmp/vigil-test-batch-key-XXXXXX";

struct row {
    const char *a, *b; /* the rest of a task object, after its id */
    bool same;
};

#define PY "\"language\": \"python\", \"policy\": \"p1.policy\""

static const struct row rows[] = {
    {"\"argv\": [\"true\"]", "\"argv\": [\"true\"]", true},
    {"\"argv\": [\"true\"]", "\"argv\": [\"false\"]", false},
    {"\"argv\": [\"true\"]", "\"argv\": [\"true\"], \"dry_run\": true", false},
    {"\"argv\": [\"true\"]", "\"argv\": [\"true\"], \"dry_run\": false", true},
    {"\"code\": \"1\", " PY, "\"code\": \"2\", " PY, false},
    {"\"code\": \"1\", " PY, "\"code\": \"1\", \"language\": \"shell\", \"policy\": \"p1.policy\"",
     false},
    /* an input is its name in the work dir and its bytes, not its host path */
    {"\"argv\": [\"cat\", \"x.txt\"], \"inputs\": [\"x.txt\"]",
     "\"argv\": [\"cat\", \"x.txt\"], \"inputs\": [\"same/x.txt\"]", true},
    {"\"argv\": [\"cat\", \"x.txt\"], \"inputs\": [\"x.txt\"]",
     "\"argv\": [\"cat\", \"x.txt\"], \"inputs\": [\"other/x.txt\"]", false},
    {"\"argv\": [\"cat\"], \"inputs\": [\"x.txt\"]", "\"argv\": [\"cat\"]", false},
    /* stdin is its bytes, inline or from a file */
    {"\"argv\": [\"cat\"], \"stdin\": \"1\"",
     "\"argv\": [\"cat\"], \"stdin\": {\"file\": \"x.txt\"}", true},
    {"\"argv\": [\"cat\"], \"stdin\": \"1\"", "\"argv\": [\"cat\"], \"stdin\": \"2\"", false},
    {"\"argv\": [\"cat\"], \"stdin\": \"\"", "\"argv\": [\"cat\"]", false},
    /* the policy is its text, includes expanded */
    {"\"argv\": [\"true\"], \"policy\": \"p1.policy\"",
     "\"argv\": [\"true\"], \"policy\": \"p2.policy\"", false},
    {"\"argv\": [\"true\"], \"policy\": \"p1.policy\"", "\"argv\": [\"true\"]", false},
    {"\"argv\": [\"true\"], \"policy\": \"p1.policy\"",
     "\"argv\": [\"true\"], \"policy\": \"./p1.policy\"", true},
    {"\"argv\": [\"true\"], \"limits\": {\"timeout\": \"1s\"}",
     "\"argv\": [\"true\"], \"limits\": {\"timeout\": \"2s\"}", false},
    {"\"argv\": [\"true\"], \"limits\": {\"timeout\": \"1s\"}",
     "\"argv\": [\"true\"], \"limits\": {\"time\": \"1s\"}", true},
    {"\"argv\": [\"true\"], \"env\": {\"A\": \"1\"}",
     "\"argv\": [\"true\"], \"env\": {\"A\": \"2\"}", false},
    {"\"argv\": [\"true\"], \"env\": {\"A\": \"1\"}", "\"argv\": [\"true\"]", false},
};

static void put(const char *name, const char *text)
{
    char *path = vg_xasprintf("%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0);
    free(path);
}

static void make_files(void)
{
    CHECK(mkdtemp(dir) != NULL);
    CHECK(chdir(dir) == 0);
    CHECK(mkdir("same", 0755) == 0 && mkdir("other", 0755) == 0);
    put("x.txt", "1");
    put("same/x.txt", "1");
    put("other/x.txt", "2");
    put("p1.policy", "version 1\ninclude <default>\n");
    put("p2.policy", "version 1\ndeny read /etc/hostname\ninclude <default>\n");
}

/* Loads the two tasks of a row and checks their keys. */
static void check_row(const struct row *r)
{
    char *text = vg_xasprintf("{\"id\": \"a\", %s}\n{\"id\": \"b\", %s}\n", r->a, r->b);
    put("tasks.jsonl", text);
    free(text);
    struct vg_batch_opts o = {.tasks_path = "tasks.jsonl", .nshards = 1};
    struct vg_batch_tasks ts;
    struct vg_err err;
    bool ok = CHECK(vg_batch_load("tasks.jsonl", &ts, &err) == 0);
    if (ok && !CHECK(vg_batch_check(&o, &ts, &err) == 0))
        fprintf(stderr, "  %s\n", err.msg);
    if (ok) {
        bool same = !strcmp(ts.t[0].key, ts.t[1].key);
        if (!CHECK(strlen(ts.t[0].key) == 64 && same == r->same))
            fprintf(stderr, "  %s\n  %s\n  should have %s keys\n", r->a, r->b,
                    r->same ? "one" : "two");
        vg_batch_free(&ts);
    }
}

int main(void)
{
    make_files();
    for (size_t i = 0; i < VG_ARRAY_LEN(rows); i++)
        check_row(&rows[i]);
    CHECK(chdir("/") == 0 && vg_scratch_remove(dir) == 0);
    return check_done();
}
