// The rows of `plexus bench` for the host API's queues and transfers (see bench.hpp): each
// beside a raw baseline measured in the same run, each checked.
#include "bench.hpp"
#include "cuda_baselines.hpp"
#include "launch_baselines.hpp"
#include "queue_problems.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace plexus::app {

nlohmann::json result_row(const std::string& kernel, const Backend& b, const std::string& device,
                          const std::string& size, const char* unit, double value, bool verified,
                          const std::string& base_name, double base_value,
                          const std::string& base_error) {
    nlohmann::json row = {{"kernel", kernel},    {"backend", b.name()}, {"device", device},
                          {"size", size},        {"unit", unit},        {"value", value},
                          {"verified", verified}};
    row["baseline"] = {{"name", base_name}, {"value", base_value}};
    if (!base_error.empty()) row["baseline"]["error"] = base_error;
    row["ratio"] = base_value > 0 ? nlohmann::json(value / base_value) : nlohmann::json(nullptr);
    std::printf("%-7s %-28.28s %-17s %-22s %10.2f %-8s %10.2f %6.2f %s\n", b.name().c_str(),
                device.c_str(), kernel.c_str(), size.c_str(), value, unit, base_value,
                base_value > 0 ? value / base_value : 0.0, verified ? "yes" : "NO");
    if (!base_error.empty()) std::printf("        baseline not measured: %s\n", base_error.c_str());
    std::fflush(stdout);
    return row;
}

namespace {

// What ordinary memory allows on the host that a CUDA transfer from or to it cannot exceed,
// printed under its row: the host's own copy into (from) page-locked memory on every thread,
// and pinning the caller's memory for the one transfer.
nlohmann::json pageable_ceilings(cuda_baseline::Session& cuda, size_t bytes, bool upload,
                                 int reps) {
    nlohmann::json out = nlohmann::json::array();
    for (const cuda_baseline::Figure& f : {cuda.host_copy_gbps(bytes, upload, reps),
                                           cuda.registered_copy_gbps(bytes, upload, reps)}) {
        if (f.error.empty())
            std::printf("        ceiling of the row above: %.2f GB/s, %s\n", f.value,
                        f.name.c_str());
        else
            std::printf("        ceiling not measured: %s\n", f.error.c_str());
        nlohmann::json c = {{"name", f.name}, {"value", f.error.empty() ? f.value : 0.0}};
        if (!f.error.empty()) c["error"] = f.error;
        out.push_back(std::move(c));
    }
    std::fflush(stdout);
    return out;
}

std::string gib_text(size_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g GiB", double(bytes) / double(1ull << 30));
    return buf;
}

} // namespace

std::vector<nlohmann::json> transfer_rows(Runtime& rt, const Backend& b, size_t d, size_t bytes,
                                          int reps, cuda_baseline::Session* cuda,
                                          const std::string& cuda_why) {
    const DeviceInfo& dev = b.devices()[d];
    const Target target{b.name(), int(d)};
    Queue q = rt.queue(target);
    Buffer<uint8_t> buffer(rt, bytes);
    std::vector<uint8_t> pageable(bytes);
    HostMemory pinned = rt.host_memory(target, bytes);
    std::string ocl_why;
    std::shared_ptr<launch_baseline::OpenCL> ocl;
    if (b.name() == "opencl") ocl = launch_baseline::OpenCL::open(dev.platform, dev.name, ocl_why);
    std::vector<uint8_t> memcpy_peer(b.name() == "opencl" || b.name() == "cuda" ? 0 : bytes);
    std::vector<nlohmann::json> rows;
    for (bool use_pinned : {false, true}) {
        const std::span<uint8_t> host =
            use_pinned ? pinned.as<uint8_t>() : std::span<uint8_t>(pageable);
        for (bool upload : {true, false}) {
            // A pattern that differs per row, so that a stale copy cannot pass the check.
            const uint8_t salt = uint8_t(use_pinned * 2 + upload + 1);
            auto fill = [&] {
                for (size_t i = 0; i < bytes; ++i)
                    host[i] = uint8_t(i * 131 + (i >> 12) + salt);
            };
            fill();
            if (!upload) q.write(buffer, std::span<const uint8_t>(host)).wait();
            auto ours = [&] {
                (upload ? q.write(buffer, std::span<const uint8_t>(host)) : q.read(buffer, host))
                    .wait();
            };
            std::string base_name, base_error;
            double base_value = 0, seconds = 0;
            if (b.name() == "cuda") {
                seconds = median_seconds(reps, ours);
                if (cuda) {
                    cuda_baseline::Figure f = cuda->memcpy_gbps(bytes, upload, reps);
                    base_name = f.name;
                    base_value = f.error.empty() && f.verified ? f.value : 0;
                    base_error = f.error;
                } else {
                    base_error = cuda_why;
                }
            } else if (b.name() == "opencl") {
                base_name = std::string(upload ? "clEnqueueWriteBuffer" : "clEnqueueReadBuffer") +
                            ", blocking, from the same memory";
                if (!ocl) {
                    seconds = median_seconds(reps, ours);
                    base_error = ocl_why;
                } else {
                    double raw = 0;
                    auto theirs = [&] {
                        raw = ocl->transfer_seconds(host.data(), bytes, upload, ocl_why);
                        if (raw < 0) throw Error(ErrorCode::Device, ocl_why);
                    };
                    auto [s, sb] = median_seconds_alternating(reps, ours, theirs);
                    seconds = s;
                    base_value = double(bytes) / sb / 1e9;
                }
            } else {
                base_name = "memcpy between host arrays";
                auto theirs = [&] {
                    if (upload)
                        std::memcpy(memcpy_peer.data(), host.data(), bytes);
                    else
                        std::memcpy(host.data(), memcpy_peer.data(), bytes);
                };
                auto [s, sb] = median_seconds_alternating(reps, ours, theirs);
                seconds = s;
                base_value = double(bytes) / sb / 1e9;
            }
            // Checked: the last transfer moved every byte. An upload is read back first.
            bool verified = true;
            if (!upload) fill();
            if (upload) {
                std::vector<uint8_t> back(bytes);
                q.read(buffer, std::span<uint8_t>(back)).wait();
                verified = std::memcmp(back.data(), host.data(), bytes) == 0;
            } else {
                std::vector<uint8_t> want(host.begin(), host.end());
                std::fill(host.begin(), host.end(), uint8_t(0));
                q.read(buffer, host).wait();
                // The buffer holds the pattern of this row's salt, written before the timing.
                verified = std::memcmp(want.data(), host.data(), bytes) == 0;
            }
            const std::string size =
                gib_text(bytes) + (upload ? " up, " : " down, ") +
                (use_pinned ? (pinned.page_locked() ? "pinned" : "HostMemory") : "pageable");
            nlohmann::json row =
                result_row("transfer", b, dev.name, size, "GB/s", double(bytes) / seconds / 1e9,
                           verified, base_name, base_value, base_error);
            if (b.name() == "cuda" && cuda && !use_pinned)
                row["ceilings"] = pageable_ceilings(*cuda, bytes, upload, reps);
            rows.push_back(std::move(row));
        }
    }
    return rows;
}

nlohmann::json peer_copy_row(Runtime& rt, const Backend& b, size_t bytes, int reps,
                             cuda_baseline::Session* cuda, const std::string& cuda_why) {
    if (b.devices().size() < 2) return nullptr;
    const Target first{b.name(), 0}, second{b.name(), 1};
    Queue q0 = rt.queue(first), q1 = rt.queue(second);
    Buffer<uint8_t> buffer(rt, bytes);
    std::vector<uint8_t> pattern(bytes);
    for (size_t i = 0; i < bytes; ++i)
        pattern[i] = uint8_t(i * 7 + (i >> 16));
    q0.write(buffer, std::span<const uint8_t>(pattern)).wait();
    // Each run: the copy on device 0 is declared the only current one (no data moves), then
    // device 1 asks for it.
    const double seconds = median_seconds(reps, [&] {
        buffer.modified_on(first);
        q1.prefetch(buffer).wait();
    });
    std::vector<uint8_t> back(bytes);
    q1.read(buffer, std::span<uint8_t>(back)).wait();
    const bool verified = back == pattern;
    std::string base_name, base_error = cuda_why;
    double base_value = 0;
    if (cuda) {
        cuda_baseline::Figure f = cuda->peer_copy_gbps(0, bytes, reps);
        base_name = f.name;
        base_error = f.error;
        base_value = f.error.empty() && f.verified ? f.value : 0;
    } else if (b.name() != "cuda") {
        base_error = "no raw device-to-device baseline for backend '" + b.name() + "'";
    }
    return result_row("peer_copy", b, b.devices()[1].name, gib_text(bytes) + " device 0 -> 1",
                      "GB/s", double(bytes) / seconds / 1e9, verified, base_name, base_value,
                      base_error);
}

nlohmann::json pipeline_row(Runtime& rt, const Backend& b, int d, size_t n, int reps,
                            cuda_baseline::Session* cuda) {
    const Target target{b.name(), d};
    const std::string device =
        d >= 0 ? b.devices()[size_t(d)].name : std::to_string(b.devices().size()) + " devices";
    auto p = samples::make_problem("pipeline", n, rt, 7);
    auto& staged = dynamic_cast<samples::StagedProblem&>(*p);
    const double together = median_seconds(reps, [&] { p->run(rt, target); });
    const bool verified = p->check().ok();
    double slowest = 0;
    for (int stage = 0; stage < samples::StagedProblem::stages; ++stage)
        slowest =
            std::max(slowest, median_seconds(reps, [&] { staged.run_stage(rt, target, stage); }));
    nlohmann::json row = result_row(
        "pipeline", b, device, p->size_text(), p->unit(), p->work() / together / 1e9, verified,
        "its slowest stage alone (upload, kernel or download)", p->work() / slowest / 1e9, "");
    if (d < 0) { // every device, each with its own queues: beside the same pipeline on device 0
        const double one = median_seconds(reps, [&] { p->run(rt, {b.name(), 0}); });
        row["one_device"] = {{"value", p->work() / one / 1e9}, {"speedup", one / together}};
        std::printf("        the same on device 0 alone: %.2f GB/s (every device: %.2f x)\n",
                    p->work() / one / 1e9, one / together);
    }
    // What the links give when uploads and downloads overlap, raw: the bound for the overlap
    // (on every device at once for the row of every device).
    if (cuda) {
        const cuda_baseline::Figure f =
            d < 0 ? cuda_baseline::duplex_every_device_gbps(int(b.devices().size()),
                                                            n * sizeof(float), reps)
                  : cuda->duplex_gbps(n * sizeof(float), reps);
        row["raw_duplex"] = {{"name", f.name}, {"value", f.value}, {"error", f.error}};
        if (f.error.empty())
            std::printf("        raw %s: %.2f GB/s up and down together (each alone: see the "
                        "transfer rows)\n",
                        f.name.c_str(), f.value);
    }
    return row;
}

nlohmann::json multi_device_row(Runtime& rt, const Backend& b, const std::string& kernel,
                                size_t size, int reps) {
    auto p = samples::make_problem(kernel, size, rt, 7);
    const Target all{b.name()}, first{b.name(), 0};
    auto [s_all, s_one] =
        median_seconds_alternating(reps, [&] { p->run(rt, all); }, [&] { p->run(rt, first); });
    p->run(rt, all);
    const bool verified = p->check().ok();
    const size_t used = dynamic_cast<samples::MultiDeviceProblem&>(*p).devices_used().size();
    const std::string devices = std::to_string(used) + (used == 1 ? " device" : " devices");
    return result_row(kernel, b, devices, p->size_text(), p->unit(), p->work() / s_all / 1e9,
                      verified, "the same on device 0 alone (" + b.devices()[0].name + ")",
                      p->work() / s_one / 1e9, "");
}

} // namespace plexus::app
