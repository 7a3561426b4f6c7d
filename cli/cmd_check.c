/* placeholder until the check command lands */
#include <stdio.h>
#include "cli/cli.h"
int vg_cmd_check(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "vigil: 'check' is not built yet\n");
    return 2;
}
