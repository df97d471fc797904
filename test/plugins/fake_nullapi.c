/* fake_nullapi.c - the entry symbol returns NULL. */
#include "xrt.h"

const xrt_plugin_api *xrt_plugin_get_api(void) { return NULL; }
