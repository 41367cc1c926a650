// What the PTX test files share: generating PTX for an architecture, looking for pieces of it,
// and assembling it with ptxas when the toolkit was found at configure time.
#pragma once

#include "ptxas.hpp"

#include "plexus/codegen.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <iterator>
#include <regex>
#include <string>

namespace ptxtest {

inline std::string generate(const plexus::ir::Kernel& k, const std::string& arch = "sm_90") {
    plexus::codegen::Options options;
    options.backend = "cuda";
    options.arch = arch;
    return plexus::codegen::make_ptx_codegen()->generate(k, options);
}

inline bool has(const std::string& text, const std::string& piece) {
    return text.find(piece) != std::string::npos;
}
inline size_t count(const std::string& text, const std::regex& pattern) {
    return size_t(std::distance(std::sregex_iterator(text.begin(), text.end(), pattern),
                                std::sregex_iterator()));
}

inline bool without_libdevice() {
    const char* v = std::getenv("PLEXUS_LIBDEVICE");
    return v && std::string(v) == "none";
}

inline const std::string ptxas = PLEXUS_TEST_PTXAS;

inline void check_assembles(const std::string& name, const std::string& ptx,
                            const std::string& arch) {
    if (ptxas.empty()) return;
    auto result = run_ptxas(ptxas, ptx, arch);
    INFO("kernel ", name, " for ", arch, "; ptxas said:\n", result.output, "\nPTX:\n", ptx);
    CHECK(result.status == 0);
}

} // namespace ptxtest
