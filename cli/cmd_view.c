/* placeholder until the view command lands */
#include <stdio.h>
#include "cli/cli.h"
int vg_cmd_view(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "vigil: 'view' is not built yet\n");
    return 2;
}
