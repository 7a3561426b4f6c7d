/* placeholder until run lands */
#include <stdio.h>
#include "cli/cli.h"
int vg_cmd_run(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "vigil: 'run' is not built yet\n");
    return 125;
}
