/* viewer.h: `vigil view`: the terminal viewer over an opened model. */
#ifndef VW_VIEWER_H
#define VW_VIEWER_H

#include <stdbool.h>

#include "viewer/model.h"

/* Run the interactive viewer until the user quits.  The terminal must be
 * a tty; returns the exit status (0). */
int vw_ui_run(struct vw_model *m, bool follow);

#endif
