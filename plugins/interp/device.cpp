// The interpreter's one device: a single-threaded reference implementation on the host CPU.
// The device entries are plugins/common/host_device.hpp's, instantiated here.
#include "interp_plugin.hpp"

namespace plx_interp {

void device_setup() {
    // Groups run one after another on the calling thread. Work-items of a group run in
    // lockstep; subgroups are runs of kSubgroupWidth of them, and every subgroup operation is
    // checked (subgroup.cpp). Every fragment type, with plain f32 arithmetic per subgroup
    // (matrix.cpp): correct and checked, not fast.
    Host::setup({.name = "plexus reference interpreter",
                 .vendor = "plexus",
                 .arch = "plexus-ir",
                 .compute_units = 1,
                 .max_work_group_size = kMaxWorkGroupSize,
                 .max_work_group_dims = kMaxWorkGroupDims,
                 .subgroup_size = kSubgroupWidth,
                 .local_memory_bytes = kLocalMemoryBytes});
}

} // namespace plx_interp

template struct plx_support::HostDevice<plx_interp::Plugin>;
