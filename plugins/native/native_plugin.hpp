// Internal declarations shared by the native CPU plugin's files (device, memory, queue, module,
// launch, routines, plugin). Nothing here crosses the ABI except through the opaque handle
// structs: those of plugins/common for a plugin that runs on the host CPU, synchronously, and
// the module and kernel of a library routine (below).
#pragma once

#include "common/host_plugin.hpp"

#include <plexus/plugin.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace plx_native {

// What plugins/common's templates need of this plugin: messages start "native: <function>: ".
struct Plugin {
    static constexpr plx_support::Names names{"native", "a native"};
    // memory.cpp: host_alloc's message for a block that does not fit, and a transfer's for a
    // range outside its buffer.
    static std::string no_room(size_t bytes, uint64_t limit);
    static std::string out_of_range(size_t offset, size_t bytes, size_t size);
};

using plx_support::fail;
using plx_support::live;
using plx_support::log;

// Work-group local memory per group. A CPU has no scratchpad: local memory is a per-worker
// host block reused by every group that worker runs. 256 KiB is L2-sized on current cores,
// large enough for the usual tiles (a 64x64 f64 tile is 32 KiB) and small enough to
// preallocate for every worker so that a launch never allocates.
constexpr uint64_t kLocalMemoryBytes = 256 * 1024;
constexpr uint32_t kMaxWorkGroupSize = 4096;
constexpr uint32_t kMaxWorkGroupDims[3] = {4096, 4096, 64};
// Buffers and local memory start on a cache line, which also covers every vector width up
// to AVX-512.
constexpr size_t kAlignment = plx_support::kHostAlignment;
// More threads than this is certainly a typo in the configuration.
constexpr uint32_t kMaxThreads = 4096;

// What the plugin takes from plugins/common (host_plugin.hpp): the device entries
// (host_device.hpp), most memory entries (host_memory.hpp), every queue and event entry
// (sync_queue.hpp). A command that failed while running (not one refused up front) is
// reported by the call that ran it.
using Host = plx_support::HostPlugin<Plugin>;

// device.cpp: the one CPU device.
bool device_setup(uint32_t threads);

// memory.cpp: the memory entries of PLX_HOST_BUFFER_ENTRIES, and buffer_host_ptr; the others
// are plugins/common/host_memory.hpp's. 1.1: every command completes before its call returns,
// so the asynchronous forms are the blocking ones under their own names.
PLX_HOST_BUFFER_ENTRIES(PLX_DECLARE_ENTRY)
void* buffer_host_ptr(plx_buffer buffer);

// launch.cpp
bool pool_start(uint32_t threads);
void pool_stop() noexcept;
uint32_t pool_threads() noexcept;
plx_status launch_host(plx_queue queue, plx_workgroup_fn fn, void* user,
                       const plx_launch_dims* dims, plx_event* event);
// 1.4: runs a library routine (a kernel of module_load(PLX_LANG_ROUTINE)) on the calling thread.
plx_status launch(plx_queue queue, plx_kernel kernel, const plx_launch_dims* dims,
                  const plx_arg* args, uint32_t num_args, plx_event* event);

// module.cpp: a module is one library routine, found by routine_find.
plx_status module_load(plx_device device, plx_language language, const char* source,
                       size_t source_bytes, const char* options, plx_module* module);
void module_unload(plx_module module);
plx_status kernel_get(plx_module module, const char* name, plx_kernel* kernel);

// routines.cpp: the library routines (plugin.h, "Library routines"), run by a CBLAS library
// that is opened at the first module_load of a routine and stays open for the process.
enum class Routine { GemmF32, GemmTf32, GemmBf16 };
const char* routine_name(Routine routine) noexcept;
// The routine called `name`, when the CBLAS library found has what it needs. Otherwise
// PLX_ERROR_NOT_FOUND, with last_error "native: module_load: ..." saying why (an unknown name,
// gemm_f16, no CBLAS library: the ones tried, no cblas_sbgemm in it).
plx_status routine_find(std::string_view name, Routine& routine);
// Checks the routine's arguments (PLX_ERROR_INVALID_ARGUMENT naming the first wrong one) and
// runs it to completion on the calling thread; messages start "native: launch: ".
plx_status routine_run(Routine routine, const plx_arg* args, uint32_t num_args);

} // namespace plx_native

// The handles of a library routine. A module holds one routine; its kernel handle points into
// it. Both are checked against the registry of live handles (plugins/common/handles.hpp).
struct plx_kernel_s {
    static constexpr uint32_t kMagic = 0x4e52544e; // "NRTN"
    plx_native::Routine routine = plx_native::Routine::GemmF32;
};

struct plx_module_s final : plx_support::Tracked {
    static constexpr uint32_t kMagic = 0x4e4d4f44; // "NMOD"
    plx_kernel_s kernel;
};

// Each role's share of plugins/common is instantiated once, in its file.
extern template struct plx_support::HostDevice<plx_native::Plugin>;
extern template class plx_support::HostMemory<plx_native::Plugin>;
extern template struct plx_support::SyncQueue<plx_native::Plugin>;
