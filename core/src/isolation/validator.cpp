// validate_plugins: which files need a child (policy, process memo, verdict cache), the children
// run all at once, and what their reports, exit statuses and signals mean.
#include "isolation/validator.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <future>
#include <map>
#include <mutex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "config/env.hpp"
#include "config/log.hpp"
#include "isolation/spawn.hpp"
#include "isolation/verdict_cache.hpp"
#include "loader/elf_check.hpp"
#include "loader/library.hpp"

#ifndef PLEXUS_PLUGIN_CHECK_INSTALL_PATH
#error "core/meson.build passes PLEXUS_PLUGIN_CHECK_INSTALL_PATH"
#endif

namespace plexus::detail {

namespace {

using Clock = std::chrono::steady_clock;

struct Memo {
    std::mutex mutex;
    std::map<std::string, std::shared_future<Verdict>> verdicts; // by fingerprint key
};
// Leaked, like the plugin registry: a Runtime may be made during static destruction.
Memo& memo() {
    static auto* m = new Memo;
    return *m;
}

std::shared_future<Verdict> ready(const Verdict& v) {
    std::promise<Verdict> p;
    p.set_value(v);
    return p.get_future().share();
}

std::string where(const std::string& stage) {
    if (stage == "open") return "while being opened (dlopen runs its constructors)";
    if (stage == "init") return "in plx_plugin_init";
    if (stage == "devices") return "while listing its devices";
    if (stage == "grace")
        return "in code it left running, within " + std::to_string(kValidationGraceMs) +
               " ms after plx_plugin_init returned";
    if (stage == "shutdown") return "in its shutdown or while being unloaded";
    return "before it was opened";
}

std::string last_line(const std::string& output) {
    const size_t end = output.find_last_not_of(" \t\r\n");
    if (end == std::string::npos) return {};
    const size_t newline = output.rfind('\n', end);
    const size_t start = newline == std::string::npos ? 0 : newline + 1;
    std::string line = output.substr(start, end + 1 - start);
    return line.size() > 200 ? line.substr(0, 197) + "..." : line;
}

constexpr const char* kRetry =
    "Fix or remove the file: plexus validates it again when it changes, and "
    "`plexus doctor` checks it now";

// What one child's run means for its plugin.
Verdict judge(const ChildResult& c, unsigned timeout_ms) {
    Verdict v;
    v.output = c.output;
    v.ms = c.ms;
    bool said_verdict = false;
    std::istringstream lines(c.report);
    for (std::string line; std::getline(lines, line);) {
        nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
        if (!j.is_object()) continue;
        if (auto s = j.find("stage"); s != j.end() && s->is_string())
            v.stage = s->get<std::string>();
        if (auto n = j.find("name"); n != j.end() && n->is_string()) v.name = n->get<std::string>();
        if (auto r = j.find("verdict"); r != j.end() && r->is_object()) {
            said_verdict = true;
            v.outcome = r->value("outcome", "");
            v.child_message = r->value("message", "");
        }
    }
    const std::string helper_words = last_line(c.output);
    if (!c.start_error.empty() || v.stage.empty() || v.stage == "start") {
        // The child failed, or did not even start, before the plugin ran any code: nothing
        // is known about the plugin.
        v.message = c.timed_out ? "the validation child did not start in time"
                                : "the validation child failed before it opened the plugin (" +
                                      (c.start_error.empty() ? helper_words : c.start_error) + ")";
        return v;
    }
    const std::string last_words =
        helper_words.empty() ? "" : "; its last output: \"" + helper_words + "\"";
    if (c.timed_out) {
        v.result = VerdictResult::TimedOut;
        v.message =
            "did not finish " + where(v.stage) + " within " + std::to_string(timeout_ms) +
            " ms (plugin_init_timeout_ms) in a validation child process, which was killed; it was "
            "not loaded" +
            last_words + ". " + kRetry +
            " (or raise plugin_init_timeout_ms if "
            "its driver is only slow)";
        return v;
    }
    if (c.signal != 0) {
        v.result = VerdictResult::Crashed;
        v.signal = c.signal;
        v.message = "crashed with " + signal_name(c.signal) + " (" + signal_description(c.signal) +
                    ") " + where(v.stage) + ", in a validation child process; it was not loaded" +
                    last_words + ". " + kRetry;
        return v;
    }
    if (said_verdict && (c.exited ? c.exit_status == 0 : c.status_lost)) {
        v.result = VerdictResult::Passed;
        return v;
    }
    v.result = VerdictResult::Crashed;
    v.exit_status = c.exit_status;
    v.message = (c.exited ? "ended the process with exit status " + std::to_string(c.exit_status)
                          : std::string("ended the process")) +
                " " + where(v.stage) +
                " (a plugin must return an error, never exit), in a validation child "
                "process; it was not loaded" +
                last_words + ". " + kRetry;
    return v;
}

ChildSpec validation_child(const std::string& path, const std::string& options,
                           const Config& config) {
    ChildSpec spec;
    spec.argv = {
        plugin_check_path(), "validate",       "--plugin",   path,
        "--options",         options,          "--grace-ms", std::to_string(kValidationGraceMs),
        "--log-level",       config.log_level, "--parent",   std::to_string(::getpid())};
    spec.limit = std::chrono::milliseconds(config.plugin_init_timeout_ms + kValidationGraceMs);
    return spec;
}

double ms_since(Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

} // namespace

const std::string& plugin_check_path() {
    static const std::string path = [] {
        std::vector<std::string> candidates;
        Dl_info info{};
        if (::dladdr(reinterpret_cast<void*>(&validate_plugins), &info) != 0 &&
            info.dli_fname != nullptr) {
            char real[PATH_MAX];
            if (::realpath(info.dli_fname, real) != nullptr) {
                std::string dir = real;
                dir = dir.substr(0, dir.rfind('/'));
                candidates.push_back(dir + "/plexus-plugin-check");        // the build tree
                candidates.push_back(dir + "/plexus/plexus-plugin-check"); // <libdir>/plexus
            }
        }
        candidates.emplace_back(PLEXUS_PLUGIN_CHECK_INSTALL_PATH);
        for (const std::string& c : candidates)
            if (::access(c.c_str(), X_OK) == 0) return c;
        return std::string();
    }();
    return path;
}

void forget_validations() {
    std::lock_guard lock(memo().mutex);
    memo().verdicts.clear();
}

std::vector<Verdict> validate_plugins(const std::vector<ValidationRequest>& requests,
                                      const Config& config) {
    std::vector<Verdict> out(requests.size());
    if (config.validate_plugins == PluginValidation::Never || requests.empty()) return out;
    if (plugin_check_path().empty()) {
        static std::once_flag warned;
        std::call_once(warned, [] {
            log().warn(
                "plexus-plugin-check is not installed beside libplexus (nor at {}): plugins are "
                "initialized in this process without validation",
                PLEXUS_PLUGIN_CHECK_INSTALL_PATH);
        });
        for (Verdict& v : out)
            v.message = "plexus-plugin-check was not found";
        return out;
    }
    const auto t0 = Clock::now();
    const bool first_load = config.validate_plugins == PluginValidation::FirstLoad;
    VerdictCache cache(config.cache_dir);
    struct Job {
        size_t index;
        Fingerprint fp;
        std::promise<Verdict> promise;
    };
    std::vector<Job> jobs;
    std::vector<std::pair<size_t, std::shared_future<Verdict>>> shared;
    size_t from_cache = 0;
    for (size_t i = 0; i < requests.size(); ++i) {
        const ValidationRequest& r = requests[i];
        std::string error;
        std::optional<Fingerprint> fp = fingerprint(r.path, r.options_json, error);
        // Not validated where the loader never runs the plugin's code (it refuses the file
        // first) or already ran it here.
        if (!fp || !check_elf(fp->realpath).empty() || plugin_is_open(fp->realpath)) continue;
        const std::string key = fp->key();
        std::lock_guard lock(memo().mutex);
        if (first_load) {
            if (auto it = memo().verdicts.find(key); it != memo().verdicts.end()) {
                shared.emplace_back(i, it->second);
                continue;
            }
            if (std::optional<Verdict> v = cache.load(*fp)) {
                memo().verdicts[key] = ready(*v);
                out[i] = std::move(*v);
                ++from_cache;
                continue;
            }
        }
        Job job{i, std::move(*fp), {}};
        // Others asking for this file meanwhile wait for this child instead of starting theirs.
        memo().verdicts[key] = job.promise.get_future().share();
        jobs.push_back(std::move(job));
    }
    const double lookup_ms = ms_since(t0);
    if (!jobs.empty()) {
        std::vector<ChildSpec> specs;
        for (const Job& j : jobs)
            specs.push_back(
                validation_child(requests[j.index].path, requests[j.index].options_json, config));
        std::vector<ChildResult> results;
        try {
            results = run_children(specs);
        } catch (const std::exception& e) {
            log().warn("cannot run the plugin validation children: {}", e.what());
            results.assign(jobs.size(), ChildResult{});
            for (ChildResult& c : results)
                c.start_error = e.what();
        }
        for (size_t k = 0; k < jobs.size(); ++k) {
            Verdict v = judge(results[k], config.plugin_init_timeout_ms);
            if (v.result == VerdictResult::Unchecked)
                log().warn("plugin {}: {}; initializing it in this process unchecked",
                           requests[jobs[k].index].path, v.message);
            cache.store(jobs[k].fp, v);
            out[jobs[k].index] = v;
            jobs[k].promise.set_value(std::move(v));
        }
    }
    for (auto& [i, future] : shared) {
        try {
            out[i] = future.get();
        } catch (const std::exception& e) { // the thread that ran that child failed
            out[i].message = std::string("its validation failed: ") + e.what();
        }
    }
    log().debug("plugin validation: {} in child processes, {} from the verdict cache, {} from this "
                "process; "
                "{:.2f} ms for fingerprints and look-ups, {:.1f} ms in all",
                jobs.size(), from_cache, shared.size(), lookup_ms, ms_since(t0));
    return out;
}

} // namespace plexus::detail
