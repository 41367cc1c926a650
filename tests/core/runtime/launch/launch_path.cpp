// A benchmark program (not a test): the core's own host cost of a launch, through two fake
// plugins whose calls do nothing: fakejit (JIT, an event per launch, like the CUDA plugin)
// and fakedirect (Direct, no events). Per kind of launch it prints the median time per launch
// over rounds of launches and the heap allocations (operator new) per launch.
//   launch_path [BACKEND [ROUNDS [LAUNCHES]]]   (default: both, 31 rounds of 2000 launches)
// BACKEND `cuda` is the real CUDA plugin instead, alone: over tests/plugins/cuda's stub driver
// (PLEXUS_CUDA_LIBRARY=build/tests/plugins/cuda/libcudastub.so), on which nothing runs, it counts
// the plugin's host work too, event included. LAUNCH_PATH_PLUGIN_DIR names another folder to load
// the plugins from: a copy of another build's, so that two builds run in turn on one machine.
// Instructions per launch: each row of one backend runs in its own instance of launch_round, so
//   cd build/tests/core/runtime/launch
//   valgrind --tool=callgrind --callgrind-out-file=cg.out ./launch_path fakejit 3 2000
//   callgrind_annotate --inclusive=yes cg.out | grep launch_round
// gives each row's instructions for the launches it reports (3 x 2000 here).
#include "counting_new.hpp"
#include "launch_fixture.hpp"

#include <plexus/plexus.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace px = plexus;

namespace {

struct Figures {
    double ns = 0;
    double allocations = 0;
};

// One round: `launches` calls of `launch`, each Event dropped at once as plexus bench does.
template <class F> [[gnu::noinline]] void launch_round(int launches, F& launch) {
    for (int i = 0; i < launches; ++i)
        launch();
}

template <class F> Figures measure(px::Runtime& rt, int rounds, int launches, F launch) {
    launch(); // compiles, routes and makes the arguments resident
    rt.finish();
    std::vector<double> ns;
    unsigned long allocated = 0;
    for (int r = 0; r < rounds; ++r) {
        const unsigned long a0 = launch_test::allocations.load();
        const auto t0 = std::chrono::steady_clock::now();
        launch_round(launches, launch);
        const auto t1 = std::chrono::steady_clock::now();
        allocated += launch_test::allocations.load() - a0;
        rt.finish();
        ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / launches);
    }
    std::sort(ns.begin(), ns.end());
    return {ns[ns.size() / 2], double(allocated) / (double(rounds) * launches)};
}

} // namespace

int main(int argc, char** argv) {
    const std::vector<std::string> backends =
        argc > 1 ? std::vector<std::string>{argv[1]}
                 : std::vector<std::string>{"fakejit", "fakedirect"};
    const int rounds = argc > 2 ? std::atoi(argv[2]) : 31;
    const int launches = argc > 3 ? std::atoi(argv[3]) : 2000;
    px::Config config = launch_test::fake_config();
#ifdef CUDA_PLUGIN_DIR
    if (backends.size() == 1 && backends[0] == "cuda")
        config = launch_test::config_for(CUDA_PLUGIN_DIR);
#endif
    if (const char* dir = std::getenv("LAUNCH_PATH_PLUGIN_DIR")) config.plugin_dirs = {dir};
    px::Runtime rt(config);

    const auto& empty = launch_test::empty_kernel();
    const auto& add = launch_test::add_kernel();
    std::printf("%d rounds of %d launches (%d launches per row in launch_round)\n", rounds,
                launches, rounds * launches);
    std::printf("%-44s %10s %14s\n", "launch", "ns", "allocations");
    for (const std::string& backend : backends) {
        const px::Target target{backend, 0};
        px::Buffer<float> a(rt, 64), b(rt, 64), c(rt, 64);
        const Figures e = measure(rt, rounds, launches,
                                  [&] { rt.launch(target, empty, px::Grid(32).local_size(32)); });
        const Figures v = measure(rt, rounds, launches, [&] {
            rt.launch(target, add, px::Grid(64).local_size(32), a, b, c, 64);
        });
        std::printf("%-44s %10.1f %14.2f\n", (backend + ": empty kernel").c_str(), e.ns,
                    e.allocations);
        std::printf("%-44s %10.1f %14.2f\n", (backend + ": 3 buffers + 1 scalar").c_str(), v.ns,
                    v.allocations);
    }
    return 0;
}
