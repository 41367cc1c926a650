// The plugin guide's example backend really works: loaded by a Runtime, driven through its
// descriptor like the core does, results checked element by element against the host.
#include <doctest/doctest.h>

#include <cstring>
#include <random>

#include "abi_fixture.hpp"
#include "plexus/runtime.hpp"

using namespace plexus;

namespace {

struct Example {
    abi::TempDir t;
    std::unique_ptr<Runtime> rt;
    const Backend* b = nullptr;
    plx_queue q = nullptr;
    Example() {
        t.add("p", "example");
        Config c = Config::parse(R"({"plugin_dirs": ["p"]})", (t.path / "config.json").string());
        c.use_env_plugin_path = false;
        c.use_install_dir = false;
        rt = std::make_unique<Runtime>(c);
        REQUIRE(rt->backends().size() == 1);
        b = rt->backends()[0];
        REQUIRE(b->name() == "example");
        b->check(b->api().queue_create(b->device(0), 0, &q), "queue_create");
    }
    ~Example() { b->api().queue_destroy(q); }
    plx_buffer alloc(size_t bytes) const {
        plx_buffer buf = nullptr;
        b->check(b->api().buffer_alloc(b->device(0), bytes, &buf), "buffer_alloc");
        return buf;
    }
};

struct VaddArgs {
    const float* a;
    const float* b;
    float* c;
    uint64_t n;
};

// What the core's host code generator produces for c[i] = a[i] + b[i]: one call per group
// that loops over its work-items and guards the bound.
void vadd_group(const plx_workgroup_ctx* ctx, void* user) {
    auto* args = static_cast<VaddArgs*>(user);
    for (uint32_t l = 0; l < ctx->local_size[0]; ++l) {
        uint64_t i = ctx->group_id[0] * ctx->local_size[0] + l;
        if (i < args->n) args->c[i] = args->a[i] + args->b[i];
    }
}

struct GridArgs {
    uint32_t* out;
    uint64_t width, height;
};

// Writes each work-item's global (x, y) and group-sum of x through local memory.
void grid_group(const plx_workgroup_ctx* ctx, void* user) {
    auto* args = static_cast<GridArgs*>(user);
    auto* local = static_cast<uint32_t*>(ctx->local_mem);
    uint32_t items = ctx->local_size[0] * ctx->local_size[1];
    for (uint32_t k = 0; k < items; ++k)
        local[k] = 1;
    uint32_t group_total = 0;
    for (uint32_t k = 0; k < items; ++k)
        group_total += local[k];
    for (uint32_t ly = 0; ly < ctx->local_size[1]; ++ly)
        for (uint32_t lx = 0; lx < ctx->local_size[0]; ++lx) {
            uint64_t x = ctx->group_id[0] * ctx->local_size[0] + lx;
            uint64_t y = ctx->group_id[1] * ctx->local_size[1] + ly;
            if (x < args->width && y < args->height)
                args->out[y * args->width + x] =
                    static_cast<uint32_t>(x * 1000 + y) + group_total * 1000000u;
        }
}

} // namespace

TEST_CASE("example plugin: vector add over random inputs, with a ragged last group") {
    Example ex;
    const plx_plugin& api = ex.b->api();
    CHECK(ex.b->exec_model() == ExecModel::Direct);
    CHECK(ex.b->has_intrinsic("atomic_add_f32_global"));
    REQUIRE(ex.b->intrinsic("barrier") != nullptr);
    CHECK(ex.b->intrinsic("barrier")->flags == PLX_INTRINSIC_INLINE);

    const uint64_t n = 10007; // prime: the last group is partial
    std::mt19937 rng(1234);
    std::uniform_real_distribution<float> dist(-100.f, 100.f);
    std::vector<float> a(n), b(n), c(n, -1.f);
    for (uint64_t i = 0; i < n; ++i)
        a[i] = dist(rng), b[i] = dist(rng);

    plx_buffer ba = ex.alloc(n * 4), bb = ex.alloc(n * 4), bc = ex.alloc(n * 4);
    ex.b->check(api.buffer_write(ex.q, ba, 0, a.data(), n * 4), "buffer_write");
    ex.b->check(api.buffer_write(ex.q, bb, 0, b.data(), n * 4), "buffer_write");
    const float nan_pattern = -7.f;
    ex.b->check(api.buffer_fill(ex.q, bc, 0, &nan_pattern, 4, n * 4), "buffer_fill");

    VaddArgs args{static_cast<const float*>(api.buffer_host_ptr(ba)),
                  static_cast<const float*>(api.buffer_host_ptr(bb)),
                  static_cast<float*>(api.buffer_host_ptr(bc)), n};
    plx_launch_dims dims{};
    dims.struct_size = sizeof dims;
    dims.dims = 1;
    dims.global_size[0] = n;
    dims.global_size[1] = dims.global_size[2] = 1;
    dims.local_size[0] = 64;
    dims.local_size[1] = dims.local_size[2] = 1;
    plx_event ev = nullptr;
    ex.b->check(api.launch_host(ex.q, vadd_group, &args, &dims, &ev), "launch_host");
    ex.b->check(api.event_wait(ev), "event_wait");
    api.event_release(ev);
    ex.b->check(api.queue_sync(ex.q), "queue_sync");
    ex.b->check(api.buffer_read(ex.q, bc, 0, c.data(), n * 4), "buffer_read");
    // Float addition is exact to the same rounding on host and plugin: tolerance 0.
    size_t wrong = 0;
    for (uint64_t i = 0; i < n; ++i)
        wrong += c[i] != a[i] + b[i];
    CHECK(wrong == 0);

    // buffer_copy moves a sub-range; the rest stays.
    ex.b->check(api.buffer_copy(ex.q, bc, 4 * 10, ba, 4 * 100, 4 * 50), "buffer_copy");
    ex.b->check(api.buffer_read(ex.q, bc, 0, c.data(), n * 4), "buffer_read");
    for (uint64_t i = 0; i < n; ++i) {
        float expected = (i >= 10 && i < 60) ? a[i + 90] : a[i] + b[i];
        if (c[i] != expected) {
            FAIL("element " << i << ": " << c[i] << " != " << expected);
        }
    }
    api.buffer_free(ba);
    api.buffer_free(bb);
    api.buffer_free(bc);
}

TEST_CASE("example plugin: a 2D launch with dynamic local memory covers every element once") {
    Example ex;
    const plx_plugin& api = ex.b->api();
    const uint64_t w = 37, h = 23;
    plx_buffer out = ex.alloc(w * h * 4);
    const uint32_t zero = 0;
    ex.b->check(api.buffer_fill(ex.q, out, 0, &zero, 4, w * h * 4), "buffer_fill");
    GridArgs args{static_cast<uint32_t*>(api.buffer_host_ptr(out)), w, h};
    plx_launch_dims dims{};
    dims.struct_size = sizeof dims;
    dims.dims = 2;
    dims.global_size[0] = w;
    dims.global_size[1] = h;
    dims.global_size[2] = 1;
    dims.local_size[0] = 8;
    dims.local_size[1] = 4;
    dims.local_size[2] = 1;
    dims.dynamic_local_bytes = 8 * 4 * 4;
    ex.b->check(api.launch_host(ex.q, grid_group, &args, &dims, nullptr), "launch_host");
    std::vector<uint32_t> got(w * h);
    ex.b->check(api.buffer_read(ex.q, out, 0, got.data(), got.size() * 4), "buffer_read");
    for (uint64_t y = 0; y < h; ++y)
        for (uint64_t x = 0; x < w; ++x)
            if (got[y * w + x] != x * 1000 + y + 32u * 1000000u)
                FAIL("element (" << x << ", " << y << ") = " << got[y * w + x]);
    api.buffer_free(out);
}

TEST_CASE("example plugin: bad requests are refused with the plugin's words") {
    Example ex;
    const plx_plugin& api = ex.b->api();
    plx_buffer buf = ex.alloc(16);
    char bytes[32] = {};
    try {
        ex.b->check(api.buffer_read(ex.q, buf, 8, bytes, 16), "buffer_read", "cpu0");
        FAIL("no error");
    } catch (const Error& e) {
        CHECK(e.code() == ErrorCode::InvalidArgument);
        CHECK(e.context().plugin == "example");
        CHECK(e.context().device == "cpu0");
        CHECK(e.message().find("buffer_read: range outside the buffer") != std::string::npos);
    }
    plx_launch_dims dims{};
    dims.struct_size = sizeof dims;
    dims.dims = 1;
    dims.global_size[0] = 4096;
    dims.global_size[1] = dims.global_size[2] = 1;
    dims.local_size[0] = 2048;
    dims.local_size[1] = dims.local_size[2] = 1;
    CHECK_THROWS_WITH_AS(
        ex.b->check(api.launch_host(ex.q, vadd_group, nullptr, &dims, nullptr), "launch_host"),
        doctest::Contains("more than 1024 work-items"), Error);
    plx_buffer none = nullptr;
    CHECK(api.buffer_alloc(ex.b->device(0), 0, &none) == PLX_ERROR_INVALID_ARGUMENT);
    CHECK_THROWS_AS(ex.b->device(1), Error);
    api.buffer_free(buf);
}
