// A fuzz target without libFuzzer, for the normal (gcc) suite: runs every file of the given
// folders (the seed corpus and every input that once crashed a target), then a fixed number
// of deterministic mutations of them, through LLVMFuzzerTestOneInput. A crash, an abort or an
// uncaught exception fails the test; the input that did it is printed first.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// Tokens that break JSON readers in interesting ways, spliced in whole.
const char* const kTokens[] = {"{",
                               "}",
                               "[",
                               "]",
                               ",",
                               ":",
                               "\"",
                               "null",
                               "true",
                               "-1",
                               "0",
                               "1e999",
                               "-0.0",
                               "18446744073709551616",
                               "-9223372036854775809",
                               "\"\\u0000\"",
                               "\"\\ud800\"",
                               "\xff",
                               "{\"\":{}}",
                               "[[[[[[[[",
                               "4294967296"};

std::string mutate(std::string s, std::mt19937_64& rng) {
    auto pick = [&](size_t n) { return n == 0 ? size_t(0) : size_t(rng() % n); };
    const int edits = 1 + int(rng() % 4);
    for (int e = 0; e < edits; ++e) {
        size_t at = pick(s.size() + 1);
        switch (rng() % 7) {
        case 0:
            if (!s.empty()) s[pick(s.size())] ^= char(1u << (rng() % 8));
            break;
        case 1:
            if (!s.empty()) s[pick(s.size())] = char(rng());
            break;
        case 2: s.insert(at, 1, char(rng())); break;
        case 3:
            if (!s.empty()) s.erase(pick(s.size()), 1 + pick(16));
            break;
        case 4: s.insert(at, kTokens[pick(std::size(kTokens))]); break;
        case 5: s.resize(pick(s.size() + 1)); break;
        default: {
            size_t from = pick(s.size()), len = std::min(s.size() - from, pick(64) + 1);
            s.insert(at, s.substr(from, len));
        }
        }
    }
    return s;
}

void run(const std::string& input, const std::string& what) {
    // Printed before the call, so that the input of a crash is in the test log.
    std::fprintf(stderr, "%s\r", what.c_str());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

} // namespace

int main(int argc, char** argv) {
    long mutations = 0;
    std::vector<fs::path> files;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--mutations" && i + 1 < argc) {
            mutations = std::atol(argv[++i]);
        } else if (fs::is_directory(arg)) {
            for (const auto& e : fs::directory_iterator(arg))
                if (e.is_regular_file()) files.push_back(e.path());
        } else if (fs::is_regular_file(arg)) {
            files.emplace_back(arg);
        } else {
            std::fprintf(
                stderr,
                "usage: %s [--mutations N] FILE_OR_FOLDER...\n(no such file or folder: %s)\n",
                argv[0], arg.c_str());
            return 2;
        }
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) {
        std::fprintf(stderr, "no inputs\n");
        return 2;
    }
    std::vector<std::string> inputs;
    for (const fs::path& f : files) {
        inputs.push_back(read_file(f));
        run(inputs.back(), "input " + f.string());
    }
    std::mt19937_64 rng(20240611);
    for (long m = 0; m < mutations; ++m) {
        const size_t base = size_t(rng() % inputs.size());
        run(mutate(inputs[base], rng),
            "mutation " + std::to_string(m) + " of " + files[base].string());
    }
    std::fprintf(stderr, "\n");
    std::printf("%zu inputs and %ld mutations of them ran without a crash\n", inputs.size(),
                mutations);
    return 0;
}
