/* plugin.h must compile as strict C99 with every warning an error (the build fails if not),
 * and its structs must start with struct_size as the ABI promises. */
#include <stddef.h>

#include "plexus/plugin.h"

/* Each struct that crosses the boundary opens with struct_size. */
typedef char check_plugin[offsetof(plx_plugin, struct_size) == 0 ? 1 : -1];
typedef char check_info[offsetof(plx_device_info, struct_size) == 0 ? 1 : -1];
typedef char check_dims[offsetof(plx_launch_dims, struct_size) == 0 ? 1 : -1];
typedef char check_arg[offsetof(plx_arg, struct_size) == 0 ? 1 : -1];
typedef char check_ctx[offsetof(plx_workgroup_ctx, struct_size) == 0 ? 1 : -1];
typedef char check_host[offsetof(plx_host_api, struct_size) == 0 ? 1 : -1];
typedef char check_version[PLX_VERSION_MAJOR(PLX_ABI_VERSION) == PLX_ABI_VERSION_MAJOR ? 1 : -1];

int main(void) {
    plx_plugin p = {0};
    p.struct_size = (uint32_t)sizeof p;
    (void)sizeof(check_plugin);
    (void)sizeof(check_info);
    (void)sizeof(check_dims);
    (void)sizeof(check_arg);
    (void)sizeof(check_ctx);
    (void)sizeof(check_host);
    (void)sizeof(check_version);
    return p.execution_model == PLX_EXEC_UNSET ? 0 : 1; /* a zeroed struct means "unset" */
}
