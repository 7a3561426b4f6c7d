/* commands.c: the table of subcommands, in the order the help lists them:
 * main.c dispatches through it, completion.c completes from it. */
#include "cli/cli.h"
#include "cli/options.h"
#include "util/util.h"

const struct vg_command vg_commands[] = {
    {"run", vg_cmd_run, "run a command in a fresh sandbox under a policy", &vg_run_optcmd},
    {"check", vg_cmd_check, "validate policies and print their rules", &vg_check_optcmd},
    {"log", vg_cmd_log, "print a run log as text or JSON Lines", &vg_log_optcmd},
    {"view", vg_cmd_view, "replay a run log in the terminal", &vg_view_optcmd},
    {"batch", vg_cmd_batch, "run many candidates, each in its own sandbox", &vg_batch_optcmd},
    {"learn", vg_cmd_learn, "write the policy a run needed, from its log", &vg_learn_optcmd},
    {"recheck", vg_cmd_recheck, "decide a run's recorded calls again under another policy",
     &vg_recheck_optcmd},
    {"verify", vg_cmd_verify, "check that a run log is intact and sealed (its chain, its seal)",
     &vg_verify_optcmd},
    {"report", vg_cmd_report, "the fleet view of a batch: text, JSON or an HTML page",
     &vg_report_optcmd},
    {"serve", vg_cmd_serve, "run many users' candidates behind an HTTP API, with quotas",
     &vg_serve_optcmd},
    {"submit", vg_cmd_submit, "submit a run to vigil serve and print its output", &vg_submit_optcmd},
    {"image", vg_cmd_image, "import, build, list, remove and verify pinned root file systems",
     &vg_image_optcmd},
    {"completion", vg_cmd_completion, "print the bash completion script (vigil completion bash)",
     NULL},
};
const size_t vg_ncommands = VG_ARRAY_LEN(vg_commands);
