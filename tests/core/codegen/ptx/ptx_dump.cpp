// ptx_dump: prints (or writes to a folder) the PTX of every PTX test kernel, to look at or to
// load on a GPU machine. Usage: ptx_dump [--arch sm_90] [--out DIR] [KERNEL...]
#include "kernels.hpp"

#include "plexus/codegen.hpp"
#include "plexus/error.hpp"

#include <cstring>
#include <fstream>
#include <iostream>
#include <set>

int main(int argc, char** argv) {
    plexus::codegen::Options options;
    options.backend = "cuda";
    std::string out_dir;
    std::set<std::string> wanted;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--arch") && i + 1 < argc)
            options.arch = argv[++i];
        else if (!std::strcmp(argv[i], "--out") && i + 1 < argc)
            out_dir = argv[++i];
        else if (argv[i][0] == '-') {
            std::cerr << "usage: ptx_dump [--arch sm_90] [--out DIR] [KERNEL...]\n";
            return 2;
        } else
            wanted.insert(argv[i]);
    }
    auto generator = plexus::codegen::make_ptx_codegen();
    int failures = 0;
    for (const auto& [name, kernel] : ptxtest::all_kernels()) {
        if (!wanted.empty() && !wanted.count(name)) continue;
        try {
            const std::string ptx = generator->generate(kernel, options);
            if (out_dir.empty()) {
                std::cout << "// ---- " << name << "\n" << ptx << "\n";
            } else {
                std::ofstream(out_dir + "/" + name + ".ptx") << ptx;
                std::cout << out_dir << "/" << name << ".ptx\n";
            }
        } catch (const plexus::Error& e) {
            std::cerr << name << ": " << e.what() << "\n";
            ++failures;
        }
    }
    return failures == 0 ? 0 : 1;
}
