// rank_candidates on backends built from plain data: priorities, config overrides, prefer
// lists, disabled backends, device selectors, and every capability filter.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <memory>

#include "plexus/backend.hpp"
#include "plexus/router.hpp"

using namespace plexus;

namespace {

DeviceInfo device(const std::string& name, DeviceType type, uint32_t cu,
                  const std::string& platform = "") {
    DeviceInfo d;
    d.name = name;
    d.platform = platform;
    d.type = type;
    d.compute_units = cu;
    d.max_work_group_size = 1024;
    d.local_memory_bytes = 48 * 1024;
    d.fp64 = true;
    return d;
}

std::unique_ptr<Backend> backend(const std::string& name, ExecModel model, int priority,
                                 std::vector<DeviceInfo> devices,
                                 std::vector<std::string> intrinsics = {"global_id_x", "barrier"}) {
    BackendDesc d;
    d.name = name;
    d.exec_model = model;
    d.plugin_priority = priority;
    d.priority = priority;
    d.devices = std::move(devices);
    d.intrinsics = std::move(intrinsics);
    if (model == ExecModel::JIT) d.languages = {PLX_LANG_OPENCL_C};
    if (model == ExecModel::Custom) d.languages = {PLX_LANG_PLEXUS_IR_JSON};
    return std::make_unique<Backend>(std::move(d));
}

// The usual machine: a CUDA GPU, an OpenCL platform with a GPU and a CPU, native, interp.
struct Machine {
    std::unique_ptr<Backend> cuda =
        backend("cuda", ExecModel::JIT, 100, {device("H100", DeviceType::GPU, 132, "CUDA")});
    std::unique_ptr<Backend> opencl =
        backend("opencl", ExecModel::JIT, 90,
                {device("Radeon", DeviceType::GPU, 60, "AMD APP"),
                 device("pthread-cpu", DeviceType::CPU, 16, "Portable Computing Language")});
    std::unique_ptr<Backend> native =
        backend("native", ExecModel::Direct, 50, {device("EPYC", DeviceType::CPU, 16)});
    std::unique_ptr<Backend> interp =
        backend("interp", ExecModel::Custom, 5, {device("interpreter", DeviceType::CPU, 1)});
    std::vector<const Backend*> all() const {
        return {interp.get(), native.get(), opencl.get(), cuda.get()};
    }
};

std::vector<std::string> order(const std::vector<Candidate>& cs, bool kept = true) {
    std::vector<std::string> out;
    for (const auto& c : cs)
        if (c.kept == kept) out.push_back(c.backend + ":" + std::to_string(c.device_index));
    return out;
}

const Candidate& find(const std::vector<Candidate>& cs, const std::string& backend,
                      uint32_t dev = 0) {
    for (const auto& c : cs)
        if (c.backend == backend && c.device_index == dev) return c;
    FAIL("no candidate " << backend << ":" << dev);
    throw std::logic_error("unreachable");
}

using V = std::vector<std::string>;

} // namespace

TEST_CASE("default ranking: GPUs by priority, then native, then an OpenCL CPU, then interp") {
    Machine m;
    auto cs = rank_candidates(m.all(), KernelNeeds{}, Config{});
    CHECK(order(cs) == V{"cuda:0", "opencl:0", "native:0", "opencl:1", "interp:0"});
    CHECK(order(cs, false).empty());
    CHECK(find(cs, "cuda").reason == "priority 100 (plugin default), gpu, 132 compute units");
    CHECK(find(cs, "opencl", 1).priority == 90 - kDriverCpuPenalty);
    CHECK(find(cs, "opencl", 1).reason.find("CPU behind a jit driver") != std::string::npos);
    CHECK(find(cs, "native").priority == 50);
    CHECK(find(cs, "cuda").backend_ptr == m.cuda.get());
    CHECK(find(cs, "opencl", 1).device_name == "pthread-cpu");
    // Candidates of one backend come in the order of their devices' scores.
    CHECK(device_score(m.opencl->devices()[0]) > device_score(m.opencl->devices()[1]));
}

TEST_CASE("config priority overrides the plugin's") {
    Machine m;
    Config c;
    c.backends["native"].priority = 200;
    c.backends["opencl"].priority = 95;
    auto cs = rank_candidates(m.all(), KernelNeeds{}, c);
    // An explicit priority applies to every device of the backend, the CPU one included.
    CHECK(order(cs) == V{"native:0", "cuda:0", "opencl:0", "opencl:1", "interp:0"});
    CHECK(find(cs, "native").reason == "priority 200 (config), cpu, 16 compute units");
}

TEST_CASE("the kernel's prefer list comes first, in its order") {
    Machine m;
    Config c;
    c.kernels["matmul"].prefer = {"interp", "native", "absent"};
    KernelNeeds k;
    k.kernel = "matmul";
    auto cs = rank_candidates(m.all(), k, c);
    CHECK(order(cs) == V{"interp:0", "native:0", "cuda:0", "opencl:0", "opencl:1"});
    CHECK(find(cs, "interp").reason.rfind("preferred #1 for kernel matmul", 0) == 0);
    // Another kernel is unaffected.
    k.kernel = "vadd";
    CHECK(order(rank_candidates(m.all(), k, c)).front() == "cuda:0");
}

TEST_CASE("disabled backends are dropped with a reason") {
    Machine m;
    Config c;
    c.backends["cuda"].enabled = false;
    auto cs = rank_candidates(m.all(), KernelNeeds{}, c);
    CHECK(order(cs) == V{"opencl:0", "native:0", "opencl:1", "interp:0"});
    CHECK(order(cs, false) == V{"cuda:0"});
    CHECK(cs.back().reason == "disabled by backends.cuda.enabled");
    CHECK_FALSE(cs.back().kept);
}

TEST_CASE("device selectors") {
    Machine m;
    Config c;
    SUBCASE("gpu") {
        c.backends["opencl"].devices = "gpu";
        auto cs = rank_candidates(m.all(), KernelNeeds{}, c);
        CHECK(order(cs, false) == V{"opencl:1"});
        CHECK(
            find(cs, "opencl", 1).reason.find("not selected by backends.opencl.devices \"gpu\"") !=
            std::string::npos);
    }
    SUBCASE("cpu") {
        c.backends["opencl"].devices = "cpu";
        CHECK(order(rank_candidates(m.all(), KernelNeeds{}, c), false) == V{"opencl:0"});
    }
    SUBCASE("accelerator matches neither") {
        c.backends["opencl"].devices = "accelerator";
        CHECK(order(rank_candidates(m.all(), KernelNeeds{}, c), false) ==
              V{"opencl:0", "opencl:1"});
    }
    SUBCASE("a platform substring, case-insensitive") {
        c.backends["opencl"].devices = "portable computing";
        CHECK(order(rank_candidates(m.all(), KernelNeeds{}, c), false) == V{"opencl:0"});
    }
    SUBCASE("a device name substring") {
        c.backends["opencl"].devices = "RADEON";
        CHECK(order(rank_candidates(m.all(), KernelNeeds{}, c), false) == V{"opencl:1"});
    }
    SUBCASE("all") {
        c.backends["opencl"].devices = "all";
        CHECK(order(rank_candidates(m.all(), KernelNeeds{}, c), false).empty());
    }
}

TEST_CASE("a missing intrinsic drops the backend and names the intrinsic") {
    Machine m;
    auto atomics = backend("atomics", ExecModel::JIT, 10, {device("X", DeviceType::GPU, 4)},
                           {"global_id_x", "atomic_add_f32_global"});
    auto all = m.all();
    all.push_back(atomics.get());
    KernelNeeds k;
    k.intrinsics = {"global_id_x", "atomic_add_f32_global"};
    auto cs = rank_candidates(all, k, Config{});
    CHECK(order(cs) == V{"atomics:0"});
    CHECK(find(cs, "cuda").reason == "lacks intrinsic atomic_add_f32_global");
    CHECK(m.cuda->has_intrinsic("barrier"));
    CHECK_FALSE(m.cuda->has_intrinsic("atomic_add_f32_global"));
    REQUIRE(atomics->intrinsic("atomic_add_f32_global") != nullptr);
    CHECK(std::string(atomics->intrinsic("atomic_add_f32_global")->name) ==
          "atomic_add_f32_global");
    CHECK(atomics->intrinsic("atomic_add_f32_global")->spelling == nullptr);
    CHECK(atomics->intrinsic("sqrt_f32") == nullptr);
}

TEST_CASE("a device without a subgroup family: the reason says whether the plugin was silent") {
    DeviceInfo lacking = device("lacking", DeviceType::GPU, 4);
    lacking.subgroup_ops = PLX_SUBGROUP_BASIC; // states its operations, and has no shuffle
    DeviceInfo silent = device("silent", DeviceType::GPU, 4);
    silent.subgroup_ops = 0; // a 1.2 plugin that left the field without PLX_SUBGROUP_KNOWN
    silent.subgroup_ops_unstated = true;
    silent.matrix_ops = 0;
    silent.matrix_ops_unstated = true;
    const std::vector<std::string> table = {"global_id_x", "subgroup_shuffle_f32",
                                            "matrix_a_m16n16k16_f16"};
    auto a = backend("a", ExecModel::JIT, 10, {lacking}, table);
    auto b = backend("b", ExecModel::JIT, 10, {silent}, table);
    KernelNeeds k;
    k.intrinsics = {"global_id_x", "subgroup_shuffle_f32"};
    auto cs = rank_candidates({a.get(), b.get()}, k, Config{});
    CHECK(find(cs, "a").reason.rfind("the device lacks ", 0) == 0);
    CHECK(find(cs, "b").reason == "the plugin states no subgroup operations for the device (its "
                                  "subgroup_ops lacks PLX_SUBGROUP_KNOWN), and "
                                  "subgroup_shuffle_f32 is one");
    k.intrinsics = {"global_id_x", "matrix_a_m16n16k16_f16"};
    cs = rank_candidates({a.get(), b.get()}, k, Config{});
    CHECK(find(cs, "b").reason ==
          "the plugin states no matrix operations for the device (its "
          "matrix_ops lacks PLX_MATRIX_KNOWN), and matrix_a_m16n16k16_f16 is "
          "one");
}

TEST_CASE("fp64, local memory and work-group size limits") {
    Machine m;
    DeviceInfo small = device("small", DeviceType::GPU, 8);
    small.fp64 = false;
    small.local_memory_bytes = 16 * 1024;
    small.max_work_group_size = 256;
    auto s = backend("small", ExecModel::JIT, 95, {small});
    auto all = m.all();
    all.push_back(s.get());

    KernelNeeds k;
    CHECK(order(rank_candidates(all, k, Config{})).front() == "cuda:0");
    CHECK(find(rank_candidates(all, k, Config{}), "small").kept);

    k.fp64 = true;
    CHECK(find(rank_candidates(all, k, Config{}), "small").reason ==
          "the device has no fp64 support");
    k.fp64 = false;

    k.local_memory_bytes = 16 * 1024; // exactly the limit fits
    CHECK(find(rank_candidates(all, k, Config{}), "small").kept);
    k.local_memory_bytes = 16 * 1024 + 1;
    auto cs = rank_candidates(all, k, Config{});
    CHECK(find(cs, "small").reason ==
          "the device lacks the local memory: the kernel needs 16385 bytes, the device has 16384");
    CHECK(find(cs, "cuda").kept);
    k.local_memory_bytes = 0;

    k.work_group_size = 256;
    CHECK(find(rank_candidates(all, k, Config{}), "small").kept);
    k.work_group_size = 512;
    cs = rank_candidates(all, k, Config{});
    CHECK(find(cs, "small").reason == "work-group size 512 exceeds the device's maximum 256");
    CHECK(find(cs, "cuda").kept);
    k.work_group_size = 2048;
    CHECK(order(rank_candidates(all, k, Config{})).empty());
}

TEST_CASE("native blocks") {
    Machine m;
    KernelNeeds k;
    k.has_native_blocks = true;
    k.native_backends = {"cuda"};
    auto cs = rank_candidates(m.all(), k, Config{});
    CHECK(order(cs) == V{"cuda:0"});
    CHECK(
        find(cs, "native").reason ==
        "the kernel's native blocks have no entry for native (only cuda) and no portable fallback");
    k.native_fallback = true;
    CHECK(order(rank_candidates(m.all(), k, Config{})).size() == 5);
}

TEST_CASE("languages the core cannot generate drop JIT and Custom backends, not Direct") {
    Machine m;
    KernelNeeds k;
    k.languages_available = {PLX_LANG_PTX};
    auto cs = rank_candidates(m.all(), k, Config{});
    CHECK(order(cs) == V{"native:0"});
    CHECK(find(cs, "opencl").reason == "no code generator for its languages (opencl_c)");
}

TEST_CASE("ties break by backend name, then device index") {
    auto b = backend("bbb", ExecModel::JIT, 70,
                     {device("g", DeviceType::GPU, 10), device("g", DeviceType::GPU, 10)});
    auto a = backend("aaa", ExecModel::JIT, 70, {device("g", DeviceType::GPU, 10)});
    auto c = backend("ccc", ExecModel::JIT, 70, {device("g", DeviceType::GPU, 11)});
    auto cs = rank_candidates({b.get(), c.get(), a.get()}, KernelNeeds{}, Config{});
    // ccc has more compute units; the rest tie and go by name and index.
    CHECK(order(cs) == V{"ccc:0", "aaa:0", "bbb:0", "bbb:1"});
    // Input order never matters.
    CHECK(order(rank_candidates({a.get(), b.get(), c.get()}, KernelNeeds{}, Config{})) ==
          order(cs));
}

TEST_CASE("device score: GPU > accelerator > CPU > other, then compute units") {
    CHECK(device_score(device("a", DeviceType::GPU, 1)) >
          device_score(device("b", DeviceType::Accelerator, 500)));
    CHECK(device_score(device("a", DeviceType::Accelerator, 1)) >
          device_score(device("b", DeviceType::CPU, 500)));
    CHECK(device_score(device("a", DeviceType::CPU, 1)) >
          device_score(device("b", DeviceType::Other, 500)));
    CHECK(device_score(device("a", DeviceType::GPU, 80)) >
          device_score(device("b", DeviceType::GPU, 79)));
}

TEST_CASE("a backend without a plugin refuses plugin calls with a clear error") {
    auto b = backend("plain", ExecModel::Direct, 1, {device("cpu", DeviceType::CPU, 1)});
    CHECK_FALSE(b->has_plugin());
    CHECK_THROWS_AS(b->api(), Error);
    CHECK_THROWS_AS(b->device(0), Error);
    CHECK(b->last_error().empty());
    CHECK_NOTHROW(b->check(PLX_OK, "nothing"));
    try {
        b->check(PLX_ERROR_OUT_OF_MEMORY, "buffer_alloc", "cpu");
        FAIL("no throw");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::OutOfMemory);
        CHECK(e.context().plugin == "plain");
        CHECK(e.context().device == "cpu");
        CHECK(e.message().find("PLX_ERROR_OUT_OF_MEMORY") != std::string::npos);
    }
    const std::pair<plx_status, ErrorCode> map[] = {
        {PLX_ERROR_COMPILE, ErrorCode::Compile},
        {PLX_ERROR_OUT_OF_RESOURCES, ErrorCode::OutOfResources},
        {PLX_ERROR_LAUNCH, ErrorCode::Launch},
        {PLX_ERROR_UNSUPPORTED, ErrorCode::Unsupported},
        {PLX_ERROR_INVALID_ARGUMENT, ErrorCode::InvalidArgument},
        {PLX_ERROR_DEVICE, ErrorCode::Device},
        {PLX_ERROR_INTERNAL, ErrorCode::Device},
    };
    for (auto [status, code] : map) {
        try {
            b->check(status, "call");
            FAIL("no throw");
        } catch (const Error& e) {
            CHECK(e.code() == code);
        }
    }
}

TEST_CASE(
    "a Custom backend that reads only plexus-ir/1 is dropped for a kernel that needs plexus-ir/2") {
    Machine m;
    KernelNeeds needs;
    needs.ir_v2 = true;
    auto cs = rank_candidates(m.all(), needs, Config{});
    CHECK_FALSE(find(cs, "interp").kept);
    CHECK(find(cs, "interp").reason.find("needs schema plexus-ir/2") != std::string::npos);
    CHECK(find(cs, "native").kept);
    BackendDesc d;
    d.name = "interp2";
    d.exec_model = ExecModel::Custom;
    d.languages = {PLX_LANG_PLEXUS_IR2_JSON};
    d.devices = {device("interpreter", DeviceType::CPU, 1)};
    Backend v2(d);
    CHECK(rank_candidates({&v2}, needs, Config{})[0].kept);
}
