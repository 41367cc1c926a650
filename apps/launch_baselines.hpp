// Raw launch paths for the empty_launch rows of `plexus bench` on OpenCL and CPU devices: what
// a program without plexus pays to submit an empty kernel. Each measures one round at a time,
// so that `plexus bench` alternates rounds with its own and a busy host slows both alike.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace plexus::app::launch_baseline {

// clEnqueueNDRangeKernel of an empty OpenCL C kernel (global 32, local 32, no event) on one
// device, found by its platform and device names, through the ICD loader opened at run time.
class OpenCL {
public:
    // nullptr, with why set, when there is no ICD loader, no such device or the build failed.
    static std::unique_ptr<OpenCL> open(const std::string& platform, const std::string& device,
                                        std::string& why);
    ~OpenCL();
    OpenCL(const OpenCL&) = delete;
    OpenCL& operator=(const OpenCL&) = delete;
    // Host microseconds per enqueue over `launches` enqueues; clFinish after, untimed.
    // Negative with why set on a failure.
    double round_us(int launches, std::string& why);
    // Seconds of one blocking clEnqueueWriteBuffer (upload) or clEnqueueReadBuffer of `bytes`
    // between `host` and a device buffer of the same size. Negative with why set on a failure.
    double transfer_seconds(void* host, size_t bytes, bool upload, std::string& why);

private:
    struct State;
    explicit OpenCL(std::unique_ptr<State> s);
    std::unique_ptr<State> s_;
};

// A fork-join over persistent std::threads, one per hardware thread with the caller taking
// part: each launch hands `groups` calls of an empty function to the threads and waits for
// all of them, as a hand-written CPU runtime would.
class ForkJoin {
public:
    ForkJoin();
    ~ForkJoin();
    ForkJoin(const ForkJoin&) = delete;
    ForkJoin& operator=(const ForkJoin&) = delete;
    double round_us(int launches, unsigned groups); // host microseconds per fork-join
    unsigned threads() const;

private:
    struct State;
    std::unique_ptr<State> s_;
};

} // namespace plexus::app::launch_baseline
