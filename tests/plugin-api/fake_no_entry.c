/* A valid shared library that is not a plugin: no plx_plugin_init. */
#include "plexus/plugin.h"

PLX_EXPORT int fake_something_else(void);
PLX_EXPORT int fake_something_else(void) {
    return 42;
}
