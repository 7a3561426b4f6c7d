/* placeholder until the log command lands */
#include <stdio.h>
#include "cli/cli.h"
int vg_cmd_log(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "vigil: 'log' is not built yet\n");
    return 2;
}
