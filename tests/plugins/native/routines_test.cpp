// Native plugin library routines (ABI 1.4): gemm_f32, gemm_tf32 and gemm_bf16 through the CBLAS
// library the plugin opens, every element against a double-precision host reference; what it
// refuses (other languages, unknown routines, gemm_f16, wrong arguments); events and profiling.
#include "plugin_fixture.hpp"
#include "plugins/common/plx_args.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

using native_test::contains;
using native_test::Plugin;

namespace {

// What this run expects of the CBLAS library; meson sets it for the runs that force one with
// PLEXUS_CBLAS_LIBRARY. "": whatever the machine has (no library skips the checks that need
// one); "none": no library may be found; "bf16": the library must have cblas_sbgemm.
std::string expected() {
    const char* e = std::getenv("NATIVE_ROUTINES_EXPECT");
    return e ? e : "";
}

using plexus::test::buffer_arg;
const auto int_arg = plexus::test::scalar_arg<int32_t>;

// The plugin, its device and a queue, and the calls a routine test makes through the ABI.
struct Routines {
    Plugin p;
    plx_device device = nullptr;
    plx_queue queue = nullptr;
    std::vector<plx_buffer> buffers;

    explicit Routines(uint32_t queue_flags = 0) {
        REQUIRE_MESSAGE(p.status == PLX_OK, p.error);
        device = p.device();
        queue = p.queue(queue_flags);
    }
    ~Routines() {
        for (plx_buffer b : buffers)
            p.desc.buffer_free(b);
        p.desc.queue_destroy(queue);
    }

    plx_status load(std::string_view name, plx_module& module) {
        module = nullptr;
        return p.desc.module_load(device, PLX_LANG_ROUTINE, name.data(), name.size(), "", &module);
    }

    // A buffer of `bytes` (at least 4: 0 is no buffer) holding `data` when given.
    plx_buffer buffer(size_t bytes, const void* data = nullptr) {
        plx_buffer b = nullptr;
        REQUIRE(p.desc.buffer_alloc(device, std::max<size_t>(bytes, 4), &b) == PLX_OK);
        buffers.push_back(b);
        if (data && bytes) REQUIRE(p.desc.buffer_write(queue, b, 0, data, bytes) == PLX_OK);
        return b;
    }

    std::vector<float> read(plx_buffer b, size_t count) {
        std::vector<float> out(count);
        if (count)
            REQUIRE(p.desc.buffer_read(queue, b, 0, out.data(), count * sizeof(float)) == PLX_OK);
        return out;
    }

    plx_status launch(plx_kernel kernel, const std::vector<plx_arg>& args,
                      plx_event* event = nullptr) {
        plx_launch_dims dims{};
        dims.struct_size = sizeof dims;
        dims.dims = 1;
        dims.global_size[0] = dims.local_size[0] = 1;
        return p.desc.launch(queue, kernel, &dims, args.data(), static_cast<uint32_t>(args.size()),
                             event);
    }

    // The library the plugin logged it opened, or "".
    std::string library() {
        std::lock_guard lock(p.host().mutex);
        for (const auto& [level, text] : p.host().messages)
            if (contains(text, "library routines use")) return text;
        return "";
    }
};

// The routine's kernel, or nullptr when it is not offered here: then a MESSAGE says why and
// the checks that need it are skipped, unless this run expects it (a failure).
plx_kernel routine_or_skip(Routines& r, const std::string& name) {
    plx_module module = nullptr;
    const plx_status s = r.load(name, module);
    if (s == PLX_ERROR_NOT_FOUND) {
        const std::string why = r.p.last_error();
        const bool no_library = contains(why, "no CBLAS library was found");
        if (expected() == "none" || (no_library && expected().empty()) ||
            (!no_library && name == "gemm_bf16" && expected() != "bf16")) {
            MESSAGE("skipped: ", name, " is not offered here: ", why);
            return nullptr;
        }
        FAIL(name, ": ", why);
    }
    REQUIRE_MESSAGE(s == PLX_OK, r.p.last_error());
    CHECK(expected() != "none");
    plx_kernel kernel = nullptr;
    REQUIRE(r.p.desc.kernel_get(module, name.c_str(), &kernel) == PLX_OK);
    return kernel;
}

// Round to nearest even; the inputs are finite.
uint16_t to_bf16(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return static_cast<uint16_t>(u >> 16);
}

float from_bf16(uint16_t h) {
    const uint32_t u = uint32_t{h} << 16;
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

// One GEMM of random inputs in [-1, 1] on the routine, every element of c checked against a
// double-precision reference within (k + 16) 2^-23 sum_p |a b| + 1e-6: f32 sums of k products
// in any order (bf16 products are exact in f32, so the same bound holds); the reference sees
// a and b as the routine does (bf16-rounded for gemm_bf16).
void check_gemm(Routines& r, plx_kernel kernel, bool bf16, int32_t m, int32_t n, int32_t k,
                int32_t trans_a, int32_t trans_b, std::mt19937& rng) {
    CAPTURE(m);
    CAPTURE(n);
    CAPTURE(k);
    CAPTURE(trans_a);
    CAPTURE(trans_b);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    const size_t na = size_t(m) * k, nb = size_t(k) * n, nc = size_t(m) * n;
    std::vector<float> a(na), b(nb); // the values the routine sees, as stored
    std::vector<uint16_t> a16(na), b16(nb);
    for (size_t i = 0; i < na; ++i) {
        a[i] = dist(rng);
        if (bf16) a[i] = from_bf16(a16[i] = to_bf16(a[i]));
    }
    for (size_t i = 0; i < nb; ++i) {
        b[i] = dist(rng);
        if (bf16) b[i] = from_bf16(b16[i] = to_bf16(b[i]));
    }
    const size_t in_size = bf16 ? 2 : 4;
    plx_buffer ba = r.buffer(na * in_size, bf16 ? static_cast<const void*>(a16.data()) : a.data());
    plx_buffer bb = r.buffer(nb * in_size, bf16 ? static_cast<const void*>(b16.data()) : b.data());
    // c starts as NaN: the routine must write every element and never read c (beta is 0).
    const std::vector<float> nan(nc, std::numeric_limits<float>::quiet_NaN());
    plx_buffer bc = r.buffer(nc * 4, nan.data());
    REQUIRE_MESSAGE(
        r.launch(kernel, {buffer_arg(ba), buffer_arg(bb), buffer_arg(bc), int_arg(m), int_arg(n),
                          int_arg(k), int_arg(trans_a), int_arg(trans_b)}) == PLX_OK,
        r.p.last_error());
    const std::vector<float> c = r.read(bc, nc);

    // op(a) is m x k: a stored m x k, or k x m when transposed; op(b) k x n likewise.
    auto op_a = [&](int i, int p) { return trans_a ? a[size_t(p) * m + i] : a[size_t(i) * k + p]; };
    auto op_b = [&](int p, int j) { return trans_b ? b[size_t(j) * k + p] : b[size_t(p) * n + j]; };
    size_t bad = 0;
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            double want = 0, magnitude = 0;
            for (int p = 0; p < k; ++p) {
                const double prod = double(op_a(i, p)) * double(op_b(p, j));
                want += prod;
                magnitude += std::fabs(prod);
            }
            const double tol = (k + 16) * std::ldexp(1.0, -23) * magnitude + 1e-6;
            const double got = c[size_t(i) * n + j];
            if (!(std::fabs(got - want) <= tol)) {
                if (++bad <= 5)
                    MESSAGE("c[", i, "][", j, "] = ", got, ", want ", want, " within ", tol);
            }
        }
    CHECK_MESSAGE(bad == 0, bad, " of ", nc, " elements outside the tolerance");
}

void check_routine(const std::string& name, bool bf16) {
    Routines r;
    plx_kernel kernel = routine_or_skip(r, name);
    if (!kernel) return;
    // The plugin logs the library when it opens it, which an earlier test case may have done.
    if (const std::string library = r.library(); !library.empty()) MESSAGE(name, ": ", library);
    std::mt19937 rng(20240614);
    for (auto [m, n, k] : {std::tuple{67, 45, 33}, std::tuple{128, 96, 200}})
        for (int32_t ta : {0, 1})
            for (int32_t tb : {0, 1})
                check_gemm(r, kernel, bf16, m, n, k, ta, tb, rng);
}

} // namespace

TEST_SUITE("native routines") {

    // First in the file, so that with a fresh plugin several threads race to open the library.
    TEST_CASE("the library is opened once when several threads load a routine at once") {
        Routines r;
        constexpr int kThreads = 4;
        plx_status status[kThreads];
        plx_module modules[kThreads] = {};
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t)
            threads.emplace_back([&, t] { status[t] = r.load("gemm_f32", modules[t]); });
        for (auto& t : threads)
            t.join();
        for (int t = 1; t < kThreads; ++t)
            CHECK(status[t] == status[0]);
        CHECK((status[0] == PLX_OK || status[0] == PLX_ERROR_NOT_FOUND));
        int opened = 0;
        {
            std::lock_guard lock(r.p.host().mutex);
            for (const auto& [level, text] : r.p.host().messages)
                opened += contains(text, "library routines use");
        }
        // At most one: none when the library was opened before (the plugin's image outlived an
        // earlier test case) or is missing.
        CHECK(opened <= 1);
        for (plx_module m : modules)
            r.p.desc.module_unload(m);
    }

    TEST_CASE("the descriptor lists PLX_LANG_ROUTINE and the routine entries") {
        Routines r;
        const plx_plugin& d = r.p.desc;
        REQUIRE(d.num_languages == 1);
        REQUIRE(d.languages != nullptr);
        CHECK(d.languages[0] == PLX_LANG_ROUTINE);
        CHECK(d.execution_model == PLX_EXEC_DIRECT);
        CHECK_MESSAGE((d.module_load != nullptr), "module_load");
        CHECK_MESSAGE((d.module_unload != nullptr), "module_unload");
        CHECK_MESSAGE((d.kernel_get != nullptr), "kernel_get");
        CHECK_MESSAGE((d.launch != nullptr), "launch");
        CHECK_MESSAGE((d.launch_host != nullptr), "launch_host");
    }

    TEST_CASE("gemm_f32: every transpose, two shapes, against a double reference") {
        check_routine("gemm_f32", false);
    }

    TEST_CASE("gemm_tf32: every transpose, two shapes, against a double reference") {
        check_routine("gemm_tf32", false);
    }

    TEST_CASE("gemm_bf16: every transpose, two shapes, where the library has cblas_sbgemm") {
        check_routine("gemm_bf16", true);
    }

    TEST_CASE("module_load of another language is PLX_ERROR_UNSUPPORTED") {
        Routines r;
        for (plx_language l : {PLX_LANG_PTX, PLX_LANG_OPENCL_C, PLX_LANG_PLEXUS_IR_JSON}) {
            CAPTURE(l);
            plx_module m = nullptr;
            CHECK(r.p.desc.module_load(r.device, l, "gemm_f32", 8, "", &m) ==
                  PLX_ERROR_UNSUPPORTED);
            CHECK(m == nullptr);
            CHECK(contains(r.p.last_error(), "PLX_LANG_ROUTINE"));
        }
    }

    TEST_CASE("unknown routines and gemm_f16 are PLX_ERROR_NOT_FOUND, saying why") {
        Routines r;
        plx_module m = nullptr;
        for (std::string name : {"gemm_f64", "", "GEMM_F32", "gemm_f32 "}) {
            CAPTURE(name);
            CHECK(r.load(name, m) == PLX_ERROR_NOT_FOUND);
            CHECK(m == nullptr);
            const std::string why = r.p.last_error();
            CHECK(contains(why, "no such routine"));
            CHECK(contains(why, "gemm_f32"));
            CHECK(contains(why, "gemm_tf32"));
            CHECK(contains(why, "gemm_bf16"));
        }
        CHECK(r.load("gemm_f16", m) == PLX_ERROR_NOT_FOUND);
        CHECK(contains(r.p.last_error(), "binary16"));
    }

    TEST_CASE("without a CBLAS library every gemm is PLX_ERROR_NOT_FOUND naming what was tried") {
        Routines r;
        plx_module m = nullptr;
        const plx_status s = r.load("gemm_f32", m);
        if (s == PLX_OK) {
            CHECK(expected() != "none");
            MESSAGE("skipped: a CBLAS library is present");
            r.p.desc.module_unload(m);
            return;
        }
        REQUIRE(s == PLX_ERROR_NOT_FOUND);
        const std::string why = r.p.last_error();
        CHECK(contains(why, "no CBLAS library was found (tried "));
        if (const char* forced = std::getenv("PLEXUS_CBLAS_LIBRARY"); forced && forced[0])
            CHECK(contains(why, forced));
        else
            for (const char* name :
                 {"libopenblas.so.0", "libopenblas.so", "libcblas.so.3", "libblas.so.3"})
                CHECK(contains(why, name));
        for (std::string name : {"gemm_tf32", "gemm_bf16"}) {
            CAPTURE(name);
            CHECK(r.load(name, m) == PLX_ERROR_NOT_FOUND);
            CHECK(contains(r.p.last_error(), "no CBLAS library was found"));
        }
    }

    TEST_CASE("kernel_get takes any name; a name counted with its NUL is the same routine") {
        Routines r;
        if (!routine_or_skip(r, "gemm_f32")) return;
        plx_module m = nullptr;
        REQUIRE(r.p.desc.module_load(r.device, PLX_LANG_ROUTINE, "gemm_f32", 9, "", &m) == PLX_OK);
        plx_kernel k1 = nullptr, k2 = nullptr;
        CHECK(r.p.desc.kernel_get(m, "gemm_f32", &k1) == PLX_OK);
        CHECK(r.p.desc.kernel_get(m, "main", &k2) == PLX_OK);
        CHECK(k1 == k2);
        r.p.desc.module_unload(m);
        // The kernel went with its module.
        CHECK(r.launch(k1, {}) == PLX_ERROR_INVALID_ARGUMENT);
        CHECK(contains(r.p.last_error(), "not a native kernel"));
    }

    TEST_CASE("launch refuses arguments that are not the routine's, naming the argument") {
        Routines r;
        plx_kernel kernel = routine_or_skip(r, "gemm_f32");
        if (!kernel) return;
        const int32_t m = 4, n = 3, k = 2, zero = 0, negative = -1;
        const int64_t wide = 3;
        plx_buffer a = r.buffer(m * k * 4), b = r.buffer(k * n * 4), c = r.buffer(m * n * 4);
        plx_buffer small = r.buffer(m * k * 4 - 4), big = r.buffer(m * n * 4);
        const std::vector<plx_arg> good = {buffer_arg(a), buffer_arg(b), buffer_arg(c),
                                           int_arg(m),    int_arg(n),    int_arg(k),
                                           int_arg(zero), int_arg(zero)};
        REQUIRE_MESSAGE(r.launch(kernel, good) == PLX_OK, r.p.last_error());

        auto refused = [&](std::vector<plx_arg> args, const std::string& says) {
            CAPTURE(says);
            CHECK(r.launch(kernel, args) == PLX_ERROR_INVALID_ARGUMENT);
            const std::string why = r.p.last_error();
            CAPTURE(why);
            CHECK(contains(why, "gemm_f32"));
            CHECK(contains(why, says));
        };
        auto with = [&](size_t i, plx_arg arg) {
            std::vector<plx_arg> args = good;
            args[i] = arg;
            return args;
        };
        refused({good.begin(), good.end() - 1}, "takes 8 arguments");
        std::vector<plx_arg> nine = good;
        nine.push_back(int_arg(zero));
        refused(nine, "takes 8 arguments");
        refused(with(3, buffer_arg(a)), "argument 3 (m) must be a scalar");
        refused(with(1, int_arg(zero)), "argument 1 (b) must be a buffer");
        plx_arg eight_bytes = int_arg(k);
        eight_bytes.value = &wide;
        eight_bytes.size = sizeof wide;
        refused(with(5, eight_bytes), "argument 5 (k) must be a 4-byte int32");
        plx_arg no_value = int_arg(zero);
        no_value.value = nullptr;
        refused(with(6, no_value), "argument 6 (trans_a)");
        refused(with(4, int_arg(negative)), "argument 4 (n) is -1");
        refused(with(0, buffer_arg(small)), "argument 0 (a) has 28 bytes");
        std::vector<plx_arg> aliased = with(0, buffer_arg(big));
        aliased[2] = buffer_arg(big);
        refused(aliased, "argument 2 (c) overlaps");
        plx_arg stranger = buffer_arg(reinterpret_cast<plx_buffer>(r.queue));
        refused(with(1, stranger), "argument 1 (b) is not a native buffer");
        plx_arg old = buffer_arg(a);
        old.struct_size = 8;
        refused(with(0, old), "argument 0 (a) has struct_size 8");
        CHECK(r.p.desc.launch(r.queue, kernel, nullptr, nullptr, 8, nullptr) ==
              PLX_ERROR_INVALID_ARGUMENT);
        CHECK(r.launch(reinterpret_cast<plx_kernel>(a), good) == PLX_ERROR_INVALID_ARGUMENT);
        CHECK(contains(r.p.last_error(), "not a native kernel"));
    }

    TEST_CASE("k = 0 writes zeros; m = 0 or n = 0 is a launch that does nothing") {
        Routines r;
        for (std::string name : {"gemm_f32", "gemm_bf16"}) {
            CAPTURE(name);
            plx_kernel kernel = routine_or_skip(r, name);
            if (!kernel) continue;
            const int32_t m = 5, n = 7, zero = 0, one = 1, three = 3;
            const std::vector<float> nan(m * n, std::numeric_limits<float>::quiet_NaN());
            // Room for m x 3 and 3 x n inputs, for the launches with m or n 0 and k 3.
            plx_buffer a = r.buffer(m * 3 * 4), b = r.buffer(3 * n * 4),
                       c = r.buffer(nan.size() * 4, nan.data());
            for (int32_t t : {zero, one}) {
                REQUIRE(r.p.desc.buffer_write(r.queue, c, 0, nan.data(), nan.size() * 4) == PLX_OK);
                REQUIRE_MESSAGE(
                    r.launch(kernel, {buffer_arg(a), buffer_arg(b), buffer_arg(c), int_arg(m),
                                      int_arg(n), int_arg(zero), int_arg(t), int_arg(t)}) == PLX_OK,
                    r.p.last_error());
                for (float v : r.read(c, nan.size()))
                    REQUIRE(v == 0.0f);
            }
            // Nothing to write: c keeps what it held.
            REQUIRE(r.p.desc.buffer_write(r.queue, c, 0, nan.data(), nan.size() * 4) == PLX_OK);
            for (auto [mm, nn] : {std::pair{zero, n}, std::pair{m, zero}, std::pair{zero, zero}})
                CHECK(r.launch(kernel, {buffer_arg(a), buffer_arg(b), buffer_arg(c), int_arg(mm),
                                        int_arg(nn), int_arg(three), int_arg(zero),
                                        int_arg(zero)}) == PLX_OK);
            for (float v : r.read(c, nan.size()))
                REQUIRE(std::isnan(v));
        }
    }

    TEST_CASE("a routine is ordered on its queue and gives an event, profiled where asked") {
        for (uint32_t flags : {0u, uint32_t{PLX_QUEUE_PROFILING}}) {
            CAPTURE(flags);
            Routines r(flags);
            plx_kernel kernel = routine_or_skip(r, "gemm_f32");
            if (!kernel) return;
            // c = a b with a = 2 I (2 x 2) and b = [1 2; 3 4]; then a is overwritten by 3 I on
            // the same queue and the routine runs again into d.
            const float two_i[] = {2, 0, 0, 2}, three_i[] = {3, 0, 0, 3}, bv[] = {1, 2, 3, 4};
            const int32_t two = 2, zero = 0;
            plx_buffer a = r.buffer(16, two_i), b = r.buffer(16, bv), c = r.buffer(16),
                       d = r.buffer(16);
            auto args = [&](plx_buffer out) {
                return std::vector<plx_arg>{buffer_arg(a), buffer_arg(b), buffer_arg(out),
                                            int_arg(two),  int_arg(two),  int_arg(two),
                                            int_arg(zero), int_arg(zero)};
            };
            plx_event e1 = nullptr, e2 = nullptr;
            REQUIRE(r.launch(kernel, args(c), &e1) == PLX_OK);
            REQUIRE(r.p.desc.buffer_write(r.queue, a, 0, three_i, 16) == PLX_OK);
            REQUIRE(r.launch(kernel, args(d), &e2) == PLX_OK);
            REQUIRE(e1 != nullptr);
            REQUIRE(e2 != nullptr);
            CHECK(r.p.desc.event_wait(e2) == PLX_OK);
            CHECK(r.p.desc.event_wait(e1) == PLX_OK);
            CHECK(r.p.desc.queue_sync(r.queue) == PLX_OK);
            CHECK(r.read(c, 4) == std::vector<float>{2, 4, 6, 8});
            CHECK(r.read(d, 4) == std::vector<float>{3, 6, 9, 12});
            uint64_t s1 = 0, t1 = 0, s2 = 0, t2 = 0;
            if (flags & PLX_QUEUE_PROFILING) {
                REQUIRE(r.p.desc.event_profile(e1, &s1, &t1) == PLX_OK);
                REQUIRE(r.p.desc.event_profile(e2, &s2, &t2) == PLX_OK);
                CHECK(s1 != 0);
                CHECK(s1 <= t1);
                CHECK(t1 <= s2);
                CHECK(s2 <= t2);
            } else {
                CHECK(r.p.desc.event_profile(e1, &s1, &t1) == PLX_ERROR_UNSUPPORTED);
            }
            r.p.desc.event_release(e1);
            r.p.desc.event_release(e2);
            // A refused launch gives no event.
            plx_event e3 = reinterpret_cast<plx_event>(&flags);
            CHECK(r.launch(kernel, {}, &e3) == PLX_ERROR_INVALID_ARGUMENT);
            CHECK(e3 == nullptr);
        }
    }
}
