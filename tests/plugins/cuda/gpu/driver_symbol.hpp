// The benchmark programs' look-up of a CUDA driver function they call directly: exits with a
// message when the driver lacks it.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>

template <class F> F sym(void* lib, const char* name) {
    F f = reinterpret_cast<F>(dlsym(lib, name));
    if (f == nullptr) {
        std::fprintf(stderr, "libcuda lacks %s\n", name);
        std::exit(1);
    }
    return f;
}
