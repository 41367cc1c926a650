// Internal declarations shared by the interpreter plugin's files (device, memory, queue, module,
// launch, plugin). Nothing here crosses the ABI except through the opaque handle structs, which
// are those of plugins/common for a plugin that runs on the host CPU, synchronously, and the
// interpreter's module and kernel.
#pragma once

#include "program.hpp"

#include "common/host_plugin.hpp"

#include <plexus/plugin.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace plx_interp {

// Work-group local memory per group. The interpreter keeps shared arrays in a host block per
// launch; 64 KiB is the smallest limit of the GPU backends (48 KiB static on CUDA plus
// headroom, 64 KiB on most OpenCL devices), so a kernel that runs here fits there as well.
constexpr uint64_t kLocalMemoryBytes = 64 * 1024;
constexpr uint32_t kMaxWorkGroupSize = 1024;
// The subgroup width: a group's work-items, in linear order, split into subgroups of 8 (the
// last one partial when the group size is not a multiple), narrower than any GPU's warp so
// that a kernel relying on a width of 32 shows it here.
constexpr uint32_t kSubgroupWidth = 8;
constexpr uint32_t kMaxWorkGroupDims[3] = {1024, 1024, 64};

using plx_support::fail;
using plx_support::live;
using plx_support::log;
using plx_support::track;
using plx_support::untrack;

// catalog.cpp: the intrinsic table of the descriptor, and a check at init that every catalog
// entry has an implementation here.
const plx_intrinsic* intrinsic_table(uint32_t* count) noexcept;
bool catalog_setup(std::string& error);

// What plugins/common's templates need of this plugin: messages start "interp: <function>: ".
struct Plugin {
    static constexpr plx_support::Names names{"interp", "an interp"};
    // memory.cpp: host_alloc's message for a block that does not fit, and a transfer's for a
    // range outside its buffer.
    static std::string no_room(size_t bytes, uint64_t limit);
    static std::string out_of_range(size_t offset, size_t bytes, size_t size);
};

// What the plugin takes from plugins/common (host_plugin.hpp): the device entries
// (host_device.hpp), most memory entries (host_memory.hpp), every queue and event entry
// (sync_queue.hpp). A command that failed while running (not one refused up front) is
// reported by the call that ran it.
using Host = plx_support::HostPlugin<Plugin>;

// device.cpp: the one device.
void device_setup();

// memory.cpp: the memory entries of PLX_HOST_BUFFER_ENTRIES; the others are
// plugins/common/host_memory.hpp's. 1.1: every command completes before its call returns, so
// the asynchronous forms are the blocking ones under their own names.
PLX_HOST_BUFFER_ENTRIES(PLX_DECLARE_ENTRY)

// module.cpp: module_load has the loader (loader.hpp) parse and check the IR JSON into a
// Program; the loader throws CompileError.
struct CompileError {
    std::string message; // "<json path>: <what>"
};
plx_status module_load(plx_device device, plx_language language, const char* source,
                       size_t source_bytes, const char* options, plx_module* module);
void module_unload(plx_module module);
plx_status kernel_get(plx_module module, const char* name, plx_kernel* kernel);

// exec.cpp (machine.hpp): runs every work-group of a launch, one after another, its
// work-items in lockstep.
struct LaunchShape {
    uint32_t dims;
    uint64_t global_size[3];
    uint32_t local_size[3];
    uint64_t num_groups[3];
};
struct BoundParam {
    std::byte* data = nullptr; // buffers
    uint64_t bytes = 0;
    uint64_t scalar = 0; // scalars, as a register holds them (ops.hpp)
};
// What stopped a launch: "kernel \"k\": <what> at <statement path>, work-item ...".
struct LaunchError {
    std::string message;
};
void execute(const Program& program, const LaunchShape& shape,
             const std::vector<BoundParam>& params);

// launch.cpp
plx_status launch(plx_queue queue, plx_kernel kernel, const plx_launch_dims* dims,
                  const plx_arg* args, uint32_t num_args, plx_event* event);

} // namespace plx_interp

// Each role's share of plugins/common is instantiated once, in its file.
extern template struct plx_support::HostDevice<plx_interp::Plugin>;
extern template class plx_support::HostMemory<plx_interp::Plugin>;
extern template struct plx_support::SyncQueue<plx_interp::Plugin>;

// The interpreter's own handles; device, buffer, queue and event are plugins/common's. A
// handle is checked against the registry of live handles (plx_support::live), by its address
// and its kind, kMagic, so that a wrong or freed handle is refused without being read.
// A module holds the one kernel of its IR document; the kernel handle points into it.
struct plx_kernel_s {
    static constexpr uint32_t kMagic = 0x494b524e; // "IKRN"
    plx_interp::Program program;
};

struct plx_module_s final : plx_support::Tracked {
    static constexpr uint32_t kMagic = 0x494d4f44; // "IMOD"
    plx_kernel_s kernel;
};
