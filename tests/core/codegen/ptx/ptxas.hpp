// Runs NVIDIA's ptxas on PTX text in a temporary directory: the tests' proof that generated PTX
// is valid for a real GPU architecture.
#pragma once

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace ptxtest {

struct PtxasResult {
    int status = -1;    // ptxas's exit status; 0 when it assembled
    std::string output; // what ptxas printed
};

inline PtxasResult run_ptxas(const std::string& ptxas, const std::string& ptx,
                             const std::string& arch) {
    PtxasResult result;
    char dir_template[] = "/tmp/plexus-ptx-XXXXXX";
    const char* dir = mkdtemp(dir_template);
    if (!dir) {
        result.output = "cannot make a temporary directory";
        return result;
    }
    const std::filesystem::path root(dir);
    std::ofstream(root / "kernel.ptx") << ptx;
    const std::string command = "'" + ptxas + "' -arch=" + arch + " -o '" +
                                (root / "kernel.cubin").string() + "' '" +
                                (root / "kernel.ptx").string() + "' 2>&1";
    if (FILE* pipe = popen(command.c_str(), "r")) {
        char chunk[4096];
        size_t got;
        while ((got = fread(chunk, 1, sizeof chunk, pipe)) > 0)
            result.output.append(chunk, got);
        const int status = pclose(pipe);
        result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    } else {
        result.output = "cannot run " + command;
    }
    std::error_code ignored;
    std::filesystem::remove_all(root, ignored);
    return result;
}

} // namespace ptxtest
