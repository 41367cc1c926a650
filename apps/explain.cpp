// `plexus explain KERNEL [--grid X[,Y[,Z]]] [--local X[,Y[,Z]]] [--compile] [--json]`: where a
// kernel would run, every (backend, device) candidate ranked, with the reason each was kept or
// dropped (the configuration, a missing intrinsic or type, fp64, local memory, the work-group
// size; with --compile, a device that rejects the generated code), and the launch times stored
// for measured routing.
#include "app.hpp"

#include "kernels.hpp"
#include "plexus/plexus.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

namespace plexus::app {
namespace {

int usage(std::ostream& out, int status) {
    out << "usage: plexus explain KERNEL [--grid X[,Y[,Z]]] [--local X[,Y[,Z]]] [--compile] "
           "[--json]\n"
           "  KERNEL  a sample kernel or a JSON IR file\n"
           "  --grid, --local  the launch's global and work-group sizes (default: none given)\n"
           "  --compile  compile the kernel on every kept candidate first: one that rejects it\n"
           "             is dropped with the compiler's words, as a routed launch would pass it "
           "over\n"
           "  --json  the ranking as JSON\n";
    return status;
}

// "256,4" -> {256, 4}; throws InvalidArgument naming the option.
std::vector<uint64_t> sizes(const std::string& option, const std::string& text) {
    std::vector<uint64_t> v;
    std::stringstream ss(text);
    for (std::string part; std::getline(ss, part, ',');) {
        size_t used = 0;
        uint64_t n = 0;
        try {
            n = std::stoull(part, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used == 0 || used != part.size() || n == 0)
            throw Error(ErrorCode::InvalidArgument,
                        option + " " + text + ": expected 1 to 3 positive sizes, like 1024,16");
        v.push_back(n);
    }
    if (v.empty() || v.size() > 3)
        throw Error(ErrorCode::InvalidArgument,
                    option + " " + text + ": expected 1 to 3 positive sizes, like 1024,16");
    return v;
}

int run_explain(const std::vector<std::string>& args) {
    std::string kernel;
    std::vector<uint64_t> global, local;
    bool json = false, compile = false;
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--help" || args[i] == "-h") return usage(std::cout, 0);
        if (args[i] == "--json")
            json = true;
        else if (args[i] == "--compile")
            compile = true;
        else if ((args[i] == "--grid" || args[i] == "--local") && i + 1 < args.size())
            (args[i] == "--grid" ? global : local) = sizes(args[i], args[i + 1]), ++i;
        else if (kernel.empty() && args[i].rfind("--", 0) != 0)
            kernel = args[i];
        else {
            std::cerr << "plexus explain: unexpected argument '" << args[i] << "'\n";
            return usage(std::cerr, 2);
        }
    }
    if (kernel.empty()) return usage(std::cerr, 2);
    ir::Kernel k = load_kernel(kernel);
    Runtime rt(load_config());
    std::optional<Grid> grid;
    if (!global.empty() || !local.empty()) {
        if (global.empty()) global.assign(local.size(), 1);
        grid = global.size() == 1   ? Grid(global[0])
               : global.size() == 2 ? Grid(global[0], global[1])
                                    : Grid(global[0], global[1], global[2]);
        if (!local.empty()) {
            if (local.size() != global.size())
                throw Error(ErrorCode::InvalidArgument,
                            "--local must have as many sizes as --grid");
            local.resize(3, 1);
            grid->local_size(uint32_t(local[0]), uint32_t(local[1]), uint32_t(local[2]));
        }
    }
    std::vector<Candidate> ranked = rt.explain(k, grid ? &*grid : nullptr, compile);
    // The measured history of this kernel (its IR hash), by bucket: what routing "measured"
    // predicts from (transfers come on top, from where the launch's buffers are then).
    std::map<LaunchBucket, std::vector<RouteRecord>> history;
    for (RouteRecord& r : stored_routes(rt.config().cache_dir))
        if (r.kernel_hash == k.hash()) history[r.bucket].push_back(std::move(r));
    if (json) {
        nlohmann::json out = nlohmann::json::array();
        for (const Candidate& c : ranked)
            out.push_back({{"backend", c.backend},
                           {"device", c.device_index},
                           {"device_name", c.device_name},
                           {"kept", c.kept},
                           {"priority", c.priority},
                           {"reason", c.reason}});
        nlohmann::json measured = nlohmann::json::array();
        for (const auto& [bucket, records] : history)
            for (const RouteRecord& r : records)
                measured.push_back({{"bucket", {bucket.items_bits, bucket.bytes_bits}},
                                    {"backend", r.backend},
                                    {"device_name", r.device},
                                    {"launches", r.seconds.size()},
                                    {"median_seconds", r.median_seconds()}});
        std::cout << nlohmann::json{{"kernel", k.name},
                                    {"routing", to_string(rt.config().routing)},
                                    {"candidates", out},
                                    {"measured", measured}}
                         .dump(2)
                  << "\n";
        return 0;
    }
    std::printf("kernel %s: %zu candidates\n", k.name.c_str(), ranked.size());
    int rank = 0;
    for (const Candidate& c : ranked) {
        if (c.kept)
            std::printf("  %d. %s:%u (%s): %s\n", ++rank, c.backend.c_str(), c.device_index,
                        c.device_name.c_str(), c.reason.c_str());
        else
            std::printf("  -  %s:%u (%s): dropped: %s\n", c.backend.c_str(), c.device_index,
                        c.device_name.c_str(), c.reason.c_str());
    }
    if (rank == 0) std::printf("no backend can run it\n");
    std::printf("\nrouting: %s (config)", to_string(rt.config().routing));
    if (history.empty())
        std::printf("; no timed launches stored in %s/routing\n", rt.config().cache_dir.c_str());
    else
        std::printf("; timed launches stored in %s/routing, the fastest of each size first:\n",
                    rt.config().cache_dir.c_str());
    for (auto& [bucket, records] : history) {
        std::sort(records.begin(), records.end(), [&](const RouteRecord& a, const RouteRecord& b) {
            return a.median_seconds() < b.median_seconds();
        });
        std::printf("  %s:\n", to_string(bucket).c_str());
        for (const RouteRecord& r : records)
            std::printf("    %s (%s): %.4f ms, median of %zu launches\n", r.backend.c_str(),
                        r.device.c_str(), r.median_seconds() * 1e3, r.seconds.size());
    }
    if (const detail::FamilyDef* f = samples::find_family(kernel)) {
        // A family routes per variant (docs/tuning.md): its space and what was measured.
        std::printf("\n%s is a kernel family (the ranking above is of its first variant); its "
                    "tuning parameters:",
                    kernel.c_str());
        for (const auto& [name, values] : f->space()) {
            std::printf(" %s {", name.c_str());
            for (size_t i = 0; i < values.size(); ++i)
                std::printf("%s%lld", i ? ", " : "", static_cast<long long>(values[i]));
            std::printf("}");
        }
        std::printf("\nchoices stored in %s/tuning:\n", rt.config().cache_dir.c_str());
        if (print_stored_tunings(rt.config().cache_dir, kernel) == 0)
            std::printf("  none yet: the first launch of each shape bucket tunes (plexus tune "
                        "%s --mnk M,N,K does it ahead)\n",
                        kernel.c_str());
    }
    return rank == 0 ? 1 : 0;
}

const Registration reg{{"explain", run_explain,
                        "rank the backends for a kernel and say why each was kept or dropped"}};

} // namespace
} // namespace plexus::app
