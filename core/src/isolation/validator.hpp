// Out-of-process plugin validation: before a plugin's init first runs in this process, it runs
// in a child (plexus-plugin-check) with a time limit, so that a plugin that crashes or hangs
// there is reported instead of taking the host down. Verdicts are kept in this process and in
// the verdict cache, keyed by the file's fingerprint.
#pragma once

#include <string>
#include <vector>

#include "isolation/verdict.hpp"
#include "plexus/config.hpp"

namespace plexus::detail {

struct ValidationRequest {
    std::string path;         // the library, as found
    std::string options_json; // what its init will be given
};

// One verdict per request, in order, as config.validate_plugins asks: validated children run
// all at once. Unchecked where validation does not apply (policy "never", a file already open
// in this process or that the loader refuses before dlopen, no helper found).
std::vector<Verdict> validate_plugins(const std::vector<ValidationRequest>& requests,
                                      const Config& config);

// The helper executable: beside libplexus in a build tree, <libdir>/plexus when installed;
// "" when neither exists.
const std::string& plugin_check_path();

// How long a validation child lingers after init returned, so that a thread the plugin
// started and that crashes at once is caught there.
constexpr unsigned kValidationGraceMs = 200;

// Forgets this process's verdicts, so that tests can see the verdict cache at work.
void forget_validations();

} // namespace plexus::detail
