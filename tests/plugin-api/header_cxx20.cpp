// plugin.h must compile as C++20 with every warning an error, and be usable with designated
// initializers as the plugin guide shows.
#include <cstddef>
#include <type_traits>

#include "plexus/plugin.h"

static_assert(offsetof(plx_plugin, struct_size) == 0);
static_assert(std::is_trivially_copyable_v<plx_plugin>);
static_assert(std::is_standard_layout_v<plx_device_info>);
static_assert(PLX_VERSION_MINOR(PLX_MAKE_VERSION(1, 7)) == 7);

int main() {
    plx_launch_dims dims{.struct_size = sizeof(plx_launch_dims),
                         .dims = 1,
                         .global_size = {1, 1, 1},
                         .local_size = {1, 1, 1},
                         .dynamic_local_bytes = 0};
    return dims.dims == 1 ? 0 : 1;
}
