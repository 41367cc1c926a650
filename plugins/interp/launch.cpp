// launch: checks the grid and binds the arguments to the kernel's parameters, then runs the
// whole grid before returning (the event is complete when it is made).
#include "interp_plugin.hpp"
#include "ops.hpp"

#include <algorithm>
#include <cstring>

namespace plx_interp {
namespace {

uint64_t div_up(uint64_t a, uint64_t b) {
    return a / b + (a % b != 0);
}

// The launch's shape, from dims that Host::check_dims accepted.
LaunchShape launch_shape(const plx_launch_dims* dims) {
    LaunchShape shape{};
    shape.dims = dims->dims;
    // Unused dimensions are 1 whatever the struct holds, so a zeroed tail means "unused".
    for (uint32_t d = 0; d < 3; ++d) {
        const bool used = d < dims->dims;
        shape.global_size[d] = used ? dims->global_size[d] : 1;
        shape.local_size[d] = used ? dims->local_size[d] : 1;
        shape.num_groups[d] = div_up(shape.global_size[d], shape.local_size[d]);
    }
    return shape;
}

plx_status bind(const Program& p, const plx_arg* args, uint32_t num_args,
                std::vector<BoundParam>& bound) {
    const std::string kernel = "interp: launch: kernel \"" + p.name + "\": ";
    if (num_args != p.params.size())
        return fail(PLX_ERROR_INVALID_ARGUMENT, kernel + "takes " +
                                                    std::to_string(p.params.size()) +
                                                    " arguments, got " + std::to_string(num_args));
    if (num_args && !args) return fail(PLX_ERROR_INVALID_ARGUMENT, kernel + "args is NULL");
    bound.resize(num_args);
    for (uint32_t i = 0; i < num_args; ++i) {
        const Param& param = p.params[i];
        const plx_arg& a = args[i];
        const std::string which = kernel + "argument " + std::to_string(i) + " (\"" + param.name +
                                  "\", " + (param.buffer ? "buffer of " : "scalar ") +
                                  param.type_name + ")";
        if (a.struct_size < offsetof(plx_arg, size) + sizeof(size_t))
            return fail(PLX_ERROR_INVALID_ARGUMENT,
                        which + ": struct_size " + std::to_string(a.struct_size) + " is too small");
        if (param.buffer) {
            if (a.kind != PLX_ARG_BUFFER)
                return fail(PLX_ERROR_INVALID_ARGUMENT, which + ": expected PLX_ARG_BUFFER");
            if (!live(a.buffer))
                return fail(PLX_ERROR_INVALID_ARGUMENT, which + ": not an interp buffer");
            bound[i].data = a.buffer->data;
            bound[i].bytes = a.buffer->bytes;
        } else {
            if (a.kind != PLX_ARG_SCALAR)
                return fail(PLX_ERROR_INVALID_ARGUMENT, which + ": expected PLX_ARG_SCALAR");
            const size_t size = ty_size(param.type);
            if (a.size != size)
                return fail(PLX_ERROR_INVALID_ARGUMENT,
                            which + ": the value has " + std::to_string(a.size) +
                                " bytes, the parameter's type has " + std::to_string(size));
            if (!a.value) return fail(PLX_ERROR_INVALID_ARGUMENT, which + ": value is NULL");
            // As a register holds it: f16 and bf16 as the f32 of their value.
            bound[i].scalar = read_scalar(static_cast<const std::byte*>(a.value), param.type);
        }
    }
    return PLX_OK;
}

} // namespace

plx_status launch(plx_queue queue, plx_kernel kernel, const plx_launch_dims* dims,
                  const plx_arg* args, uint32_t num_args, plx_event* event) {
    if (plx_status s = Host::check_queue("launch", queue); s != PLX_OK) return s;
    if (!live(kernel))
        return fail(PLX_ERROR_INVALID_ARGUMENT, "interp: launch: not an interp kernel");
    const Program& p = kernel->program;
    if (plx_status s = Host::check_dims("launch", dims); s != PLX_OK) return s;
    const LaunchShape shape = launch_shape(dims);
    const uint32_t dynamic_bytes = plx_support::dynamic_local_bytes(dims);
    const uint64_t items =
        uint64_t(shape.local_size[0]) * shape.local_size[1] * shape.local_size[2];
    const bool required = p.required_local[0] != 0;
    if ((required && !std::equal(shape.local_size, shape.local_size + 3, p.required_local)) ||
        (p.max_local && items > p.max_local))
        return fail(
            PLX_ERROR_INVALID_ARGUMENT,
            "interp: launch: kernel \"" + p.name + "\" declares " +
                (required ? "work-groups of " + std::to_string(p.required_local[0]) + " x " +
                                std::to_string(p.required_local[1]) + " x " +
                                std::to_string(p.required_local[2])
                          : "at most " + std::to_string(p.max_local) + " work-items per group") +
                ", the launch has " + std::to_string(shape.local_size[0]) + " x " +
                std::to_string(shape.local_size[1]) + " x " + std::to_string(shape.local_size[2]));
    if (p.shared_bytes + dynamic_bytes > kLocalMemoryBytes)
        return fail(PLX_ERROR_OUT_OF_RESOURCES,
                    "interp: launch: kernel \"" + p.name + "\" needs " +
                        std::to_string(p.shared_bytes) + " bytes of shared arrays and " +
                        std::to_string(dynamic_bytes) +
                        " of dynamic local memory, above the device limit of " +
                        std::to_string(kLocalMemoryBytes) + " (local_memory_bytes)");
    std::vector<BoundParam> bound;
    if (plx_status s = bind(p, args, num_args, bound); s != PLX_OK) return s;

    const bool profiling = event && plx_support::queue_profiles(queue);
    const uint64_t start = profiling ? plx_support::now_ns() : 0;
    try {
        execute(p, shape, bound);
    } catch (const LaunchError& e) {
        const std::string message = "interp: launch: " + e.message;
        if (event) *event = nullptr;
        return fail(PLX_ERROR_LAUNCH, message);
    }
    const uint64_t end = profiling ? plx_support::now_ns() : 0;
    if (event) return Host::event_create("launch", queue, PLX_OK, start, end, event);
    return PLX_OK;
}

} // namespace plx_interp
