// The native plugin's library routines (ABI 1.4, plugin.h "Library routines"): the GEMMs of a
// CBLAS library (OpenBLAS, or any libblas.so.3 with the CBLAS interface) that the plugin opens
// itself at run time, once, and never links.
#include "native_plugin.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace plx_native {
namespace {

// The CBLAS enums, with cblas.h's values: the plugin builds without that header.
enum CblasOrder : int { CblasRowMajor = 101 };
enum CblasTranspose : int { CblasNoTrans = 111, CblasTrans = 112 };
using bfloat16 = uint16_t; // OpenBLAS's name for the bits of a bfloat16

// The LP64 interface (blasint is int): the libraries below export it under these names; an
// ILP64 build (libopenblas64) names its library and symbols otherwise and is not opened.
using Sgemm = void (*)(CblasOrder order, CblasTranspose trans_a, CblasTranspose trans_b, int m,
                       int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
                       float beta, float* c, int ldc);
// OpenBLAS built with BUILD_BFLOAT16=1.
using Sbgemm = void (*)(CblasOrder order, CblasTranspose trans_a, CblasTranspose trans_b, int m,
                        int n, int k, float alpha, const bfloat16* a, int lda, const bfloat16* b,
                        int ldb, float beta, float* c, int ldc);
using OpenblasGetConfig = char* (*)();

// The library in use: what the first module_load of a routine found.
struct Cblas {
    Sgemm sgemm = nullptr;
    Sbgemm sbgemm = nullptr;
    std::string what;    // "/usr/lib/.../libopenblas.so.0 (OpenBLAS 0.3.21 ...)", for messages
    std::string missing; // when none was found: every name tried, and why each failed
};

Cblas g_cblas;
std::once_flag g_cblas_once;

std::string library_path(void* handle, const std::string& fallback) {
    link_map* map = nullptr;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && map->l_name[0])
        return map->l_name;
    return fallback;
}

void open_cblas() {
    // PLEXUS_CBLAS_LIBRARY names the one library to open instead of the usual search; tests use
    // it to pick a library or to force a missing one. secure_getenv ignores it in setuid
    // programs.
    std::vector<std::string> names;
    if (const char* forced = secure_getenv("PLEXUS_CBLAS_LIBRARY"); forced && forced[0])
        names.emplace_back(forced);
    else
        // OpenBLAS first (fast, and cblas_sbgemm where it was built with bfloat16), then a
        // CBLAS of its own, then whatever Debian's alternatives made libblas.so.3: OpenBLAS,
        // BLIS or the reference BLAS, each of which has the CBLAS interface there.
        names = {"libopenblas.so.0", "libopenblas.so", "libcblas.so.3", "libblas.so.3"};
    std::string tried;
    for (const std::string& name : names) {
        if (!tried.empty()) tried += "; ";
        // RTLD_LOCAL keeps the library's symbols away from other plugins and the application.
        void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            const char* why = dlerror();
            tried += name + ": " + (why ? why : "cannot be opened");
            continue;
        }
        auto sgemm = reinterpret_cast<Sgemm>(dlsym(handle, "cblas_sgemm"));
        if (!sgemm) {
            tried += library_path(handle, name) + ": has no cblas_sgemm";
            dlclose(handle);
            continue;
        }
        g_cblas.sgemm = sgemm;
        g_cblas.sbgemm = reinterpret_cast<Sbgemm>(dlsym(handle, "cblas_sbgemm"));
        g_cblas.what = library_path(handle, name);
        if (auto config = reinterpret_cast<OpenblasGetConfig>(dlsym(handle, "openblas_get_config")))
            if (const char* text = config(); text && text[0]) {
                std::string c = text;
                while (!c.empty() && c.back() == ' ')
                    c.pop_back();
                g_cblas.what += " (" + c + ")";
            }
        // Open for the life of the process: OpenBLAS starts threads that unloading would strand.
        log(PLX_LOG_DEBUG, "native: library routines use " + g_cblas.what +
                               (g_cblas.sbgemm ? ", with" : ", without") + " cblas_sbgemm");
        return;
    }
    g_cblas.missing = "no CBLAS library was found (tried " + tried +
                      "): install OpenBLAS (Debian: libopenblas0) or another BLAS with the CBLAS "
                      "interface";
}

plx_status not_found(std::string_view name, const std::string& why) {
    return fail(PLX_ERROR_NOT_FOUND,
                "native: module_load: routine \"" + std::string(name) + "\": " + why);
}

// ---- launch's arguments -------------------------------------------------------------------

constexpr uint32_t kGemmArgs = 8;
constexpr const char* kGemmArgNames[kGemmArgs] = {"a", "b", "c",       "m",
                                                  "n", "k", "trans_a", "trans_b"};

// A GEMM's arguments as read from launch's, checked.
struct Gemm {
    const void* a = nullptr;
    const void* b = nullptr;
    float* c = nullptr;
    int32_t m = 0, n = 0, k = 0;
    bool trans_a = false, trans_b = false;
};

// Reads launch's arguments; a wrong one is named in last_error: "native: launch: routine
// "gemm_f32": argument 3 (m) must be a scalar int32 (PLX_ARG_SCALAR), got kind 1".
class ArgReader {
public:
    ArgReader(Routine routine, const plx_arg* args) : routine_(routine), args_(args) {}

    plx_status invalid(uint32_t i, const std::string& what) const {
        return fail(PLX_ERROR_INVALID_ARGUMENT, prefix() + "argument " + std::to_string(i) + " (" +
                                                    kGemmArgNames[i] + ") " + what);
    }
    std::string prefix() const {
        return std::string("native: launch: routine \"") + routine_name(routine_) + "\": ";
    }

    plx_status header(uint32_t i) const {
        const plx_arg& a = args_[i];
        if (a.struct_size < offsetof(plx_arg, size) + sizeof a.size)
            return invalid(i, "has struct_size " + std::to_string(a.struct_size) +
                                  ", too small to hold its fields");
        return PLX_OK;
    }

    plx_status buffer(uint32_t i, plx_buffer& out) const {
        if (plx_status s = header(i); s != PLX_OK) return s;
        const plx_arg& a = args_[i];
        if (a.kind != PLX_ARG_BUFFER)
            return invalid(i, "must be a buffer (PLX_ARG_BUFFER), got kind " +
                                  std::to_string(static_cast<uint32_t>(a.kind)));
        if (!live(a.buffer)) return invalid(i, "is not a native buffer");
        out = a.buffer;
        return PLX_OK;
    }

    plx_status int32(uint32_t i, int32_t& out) const {
        if (plx_status s = header(i); s != PLX_OK) return s;
        const plx_arg& a = args_[i];
        if (a.kind != PLX_ARG_SCALAR)
            return invalid(i, "must be a scalar int32 (PLX_ARG_SCALAR), got kind " +
                                  std::to_string(static_cast<uint32_t>(a.kind)));
        if (a.size != sizeof(int32_t))
            return invalid(i, "must be a 4-byte int32, got " + std::to_string(a.size) + " bytes");
        if (!a.value) return invalid(i, "has value NULL");
        std::memcpy(&out, a.value, sizeof out);
        return PLX_OK;
    }

    // The buffer of argument i holds `elements` elements of `size` bytes, aligned for them.
    plx_status holds(uint32_t i, plx_buffer buffer, uint64_t elements, size_t size) const {
        uint64_t bytes = 0;
        if (__builtin_mul_overflow(elements, uint64_t{size}, &bytes) || bytes > buffer->bytes)
            return invalid(i, "has " + std::to_string(buffer->bytes) + " bytes, the sizes need " +
                                  std::to_string(elements) + " elements of " +
                                  std::to_string(size) + " bytes");
        if (reinterpret_cast<uintptr_t>(buffer->data) % size != 0)
            return invalid(i, "is not aligned to its " + std::to_string(size) + "-byte elements");
        return PLX_OK;
    }

private:
    Routine routine_;
    const plx_arg* args_;
};

// Whether [p, p + n) and [q, q + m) share a byte.
bool overlap(const void* p, uint64_t n, const void* q, uint64_t m) {
    const auto x = reinterpret_cast<uintptr_t>(p), y = reinterpret_cast<uintptr_t>(q);
    return n != 0 && m != 0 && x < y + m && y < x + n;
}

plx_status read_gemm(Routine routine, const plx_arg* args, uint32_t num_args, Gemm& g) {
    const ArgReader r(routine, args);
    if (num_args != kGemmArgs)
        return fail(PLX_ERROR_INVALID_ARGUMENT,
                    r.prefix() + "takes 8 arguments (a, b, c, m, n, k, trans_a, trans_b), got " +
                        std::to_string(num_args));
    if (!args) return fail(PLX_ERROR_INVALID_ARGUMENT, r.prefix() + "args is NULL");
    plx_buffer a = nullptr, b = nullptr, c = nullptr;
    int32_t trans_a = 0, trans_b = 0;
    // One at a time, so that last_error is the first wrong argument's.
    plx_status s = PLX_OK;
    if ((s = r.buffer(0, a)) != PLX_OK || (s = r.buffer(1, b)) != PLX_OK ||
        (s = r.buffer(2, c)) != PLX_OK || (s = r.int32(3, g.m)) != PLX_OK ||
        (s = r.int32(4, g.n)) != PLX_OK || (s = r.int32(5, g.k)) != PLX_OK ||
        (s = r.int32(6, trans_a)) != PLX_OK || (s = r.int32(7, trans_b)) != PLX_OK)
        return s;
    const int32_t sizes[] = {g.m, g.n, g.k};
    for (uint32_t i = 0; i < 3; ++i)
        if (sizes[i] < 0) return r.invalid(3 + i, "is " + std::to_string(sizes[i]) + ", below 0");
    const size_t in_size = routine == Routine::GemmBf16 ? sizeof(bfloat16) : sizeof(float);
    const uint64_t m = g.m, n = g.n, k = g.k; // products of two int32 fit
    if ((s = r.holds(0, a, m * k, in_size)) != PLX_OK ||
        (s = r.holds(1, b, k * n, in_size)) != PLX_OK ||
        (s = r.holds(2, c, m * n, sizeof(float))) != PLX_OK)
        return s;
    // c is written while a and b are read: BLAS gives no meaning to a c that overlaps them.
    if (overlap(c->data, m * n * sizeof(float), a->data, m * k * in_size) ||
        overlap(c->data, m * n * sizeof(float), b->data, k * n * in_size))
        return r.invalid(2, "overlaps a or b");
    g.a = a->data;
    g.b = b->data;
    g.c = reinterpret_cast<float*>(c->data);
    g.trans_a = trans_a != 0;
    g.trans_b = trans_b != 0;
    return PLX_OK;
}

} // namespace

const char* routine_name(Routine routine) noexcept {
    switch (routine) {
    case Routine::GemmF32: return "gemm_f32";
    case Routine::GemmTf32: return "gemm_tf32";
    case Routine::GemmBf16: return "gemm_bf16";
    }
    return "?";
}

plx_status routine_find(std::string_view name, Routine& routine) {
    if (name == "gemm_f16") return not_found(name, "CBLAS has no GEMM of binary16 (half) elements");
    if (name == "gemm_f32")
        routine = Routine::GemmF32;
    else if (name == "gemm_tf32")
        routine = Routine::GemmTf32;
    else if (name == "gemm_bf16")
        routine = Routine::GemmBf16;
    else
        return not_found(name, "no such routine: the native plugin offers gemm_f32, gemm_tf32 "
                               "and, where its CBLAS library has cblas_sbgemm, gemm_bf16");
    std::call_once(g_cblas_once, open_cblas);
    if (!g_cblas.sgemm) return not_found(name, g_cblas.missing);
    if (routine == Routine::GemmBf16 && !g_cblas.sbgemm)
        return not_found(name, "needs cblas_sbgemm, which " + g_cblas.what +
                                   " lacks (OpenBLAS has it when built with BUILD_BFLOAT16=1)");
    return PLX_OK;
}

plx_status routine_run(Routine routine, const plx_arg* args, uint32_t num_args) {
    Gemm g;
    if (plx_status s = read_gemm(routine, args, num_args, g); s != PLX_OK) return s;
    if (g.m == 0 || g.n == 0) return PLX_OK;
    // BLAS would refuse lda = 0, and an empty sum is 0 whatever the library.
    if (g.k == 0) {
        std::memset(g.c, 0, uint64_t(g.m) * uint64_t(g.n) * sizeof(float));
        return PLX_OK;
    }
    // Row-major: the leading dimension of a matrix is the length of its stored rows.
    const CblasTranspose ta = g.trans_a ? CblasTrans : CblasNoTrans;
    const CblasTranspose tb = g.trans_b ? CblasTrans : CblasNoTrans;
    const int lda = g.trans_a ? g.m : g.k;
    const int ldb = g.trans_b ? g.k : g.n;
    const int ldc = g.n;
    switch (routine) {
    case Routine::GemmF32:
    case Routine::GemmTf32: // exact f32 products are what tf32 "may round" to at best
        if (!g_cblas.sgemm) break;
        g_cblas.sgemm(CblasRowMajor, ta, tb, g.m, g.n, g.k, 1.0f, static_cast<const float*>(g.a),
                      lda, static_cast<const float*>(g.b), ldb, 0.0f, g.c, ldc);
        return PLX_OK;
    case Routine::GemmBf16:
        if (!g_cblas.sbgemm) break;
        g_cblas.sbgemm(CblasRowMajor, ta, tb, g.m, g.n, g.k, 1.0f,
                       static_cast<const bfloat16*>(g.a), lda, static_cast<const bfloat16*>(g.b),
                       ldb, 0.0f, g.c, ldc);
        return PLX_OK;
    }
    // A kernel exists only once routine_find found the library's function for it.
    return fail(PLX_ERROR_INTERNAL, std::string("native: launch: routine \"") +
                                        routine_name(routine) + "\" has no library function");
}

} // namespace plx_native
