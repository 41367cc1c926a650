// The samples of the host API's queues: multi_device_matmul, _f16 and _bf16 (one matmul split
// by rows across every device of a backend, one queue each) and pipeline (chunks uploaded,
// computed and downloaded on three queues so that the three overlap, on every device).
#include "queue_problems.hpp"

#include "kernels.hpp"
#include "matmul_mma.hpp"
#include "problem_util.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>

namespace plexus::samples {
namespace {

const Backend& backend_of(Runtime& rt, const Target& t) {
    const Backend* best = nullptr;
    for (const Backend* b : rt.backends())
        if (t.backend.empty() ? best == nullptr : b->name() == t.backend) best = b;
    if (!best) throw Error(ErrorCode::NoBackend, "no backend named '" + t.backend + "' is loaded");
    return *best;
}

// The devices a target names: its own device, or every device of its backend.
std::vector<int> devices_of(const Backend& backend, const Target& t) {
    std::vector<int> devices;
    if (t.device >= 0)
        devices.push_back(t.device);
    else
        for (size_t d = 0; d < backend.devices().size(); ++d)
            devices.push_back(int(d));
    return devices;
}

// Which kernel computes a band of a multi-device matmul, and its launch for rows x n of c.
template <class T> struct BandKernel;
// `any()`: a kernel the devices that can compute a band run; `pick`: the kernel for a band of
// rows x n x k on the target's device, and its grid.
template <> struct BandKernel<float> { // matmul_tiled
    static constexpr int block = matmul_block;
    static const ir::Kernel& any() { return matmul_tiled().ir(); }
    static auto pick(Runtime&, const Target&, int rows, int n, int) {
        return std::pair{matmul_tiled(), matmul_tiled_grid(size_t(rows), size_t(n))};
    }
};
template <class T> struct MmaBandKernel { // matmul_f16 or matmul_bf16: the family's heuristic
    static constexpr int block = mma_block;
    static const MmaFamily<T>& family() {
        if constexpr (std::same_as<T, half>)
            return matmul_f16();
        else
            return matmul_bf16();
    }
    static const ir::Kernel& any() { return mma_portable(family()); }
    static auto pick(Runtime& rt, const Target& t, int rows, int n, int k) {
        return mma_variant(family(), rt, t, rows, n, k);
    }
};
template <> struct BandKernel<half> : MmaBandKernel<half> {};
template <> struct BandKernel<bf16> : MmaBandKernel<bf16> {};

template <class T> const char* multi_device_name() {
    if constexpr (std::same_as<T, half>)
        return "multi_device_matmul_f16";
    else if constexpr (std::same_as<T, bf16>)
        return "multi_device_matmul_bf16";
    else
        return "multi_device_matmul";
}

// Random inputs in [-1, 1] rounded to T, kept as floats (the reference's values).
template <class T> std::vector<float> rounded_floats(size_t n, std::mt19937& g) {
    std::vector<float> v = random_floats(n, g);
    if constexpr (!std::same_as<T, float>)
        for (float& x : v)
            x = float(T(x));
    return v;
}

template <class T> std::vector<T> typed(const std::vector<float>& v) {
    return std::vector<T>(v.begin(), v.end());
}

// c (f32) = a b with a and b of T: f32 through matmul_tiled, f16 and bf16 through matrix
// fragments (tensor cores on CUDA).
template <class T> class MultiDeviceMatmul final : public MultiDeviceProblem {
public:
    MultiDeviceMatmul(size_t size, Runtime& rt, std::mt19937& g)
        : m_(int(size)), n_(int(std::max<size_t>(1, size - size / 8))), k_(int(size + 3)),
          a_(rounded_floats<T>(size_t(m_) * k_, g)), b_(rounded_floats<T>(size_t(k_) * n_, g)),
          bb_(rt, typed<T>(b_)) {}
    std::string kernel() const override { return multi_device_name<T>(); }
    std::string size_text() const override {
        return "m=" + std::to_string(m_) + " n=" + std::to_string(n_) + " k=" + std::to_string(k_);
    }
    // One band of rows per device of the backend that can run the band's kernel (a target
    // naming a device keeps to it), in multiples of the tile height; b goes to every device,
    // each band of a to its own.
    void run(Runtime& rt, const Target& t) override {
        const Backend& backend = backend_of(rt, t);
        std::vector<int> devices;
        if (t.device >= 0)
            devices.push_back(t.device);
        else
            for (const Candidate& c : rt.explain(Band::any()))
                if (c.kept && c.backend == backend.name()) devices.push_back(int(c.device_index));
        if (devices.empty())
            throw Error(ErrorCode::NoBackend,
                        "no device of backend '" + backend.name() + "' runs " + kernel());
        std::sort(devices.begin(), devices.end());
        // The host side of the transfers in memory the devices copy without the host's help,
        // so that every device's upload, kernel and download run at once.
        if (pinned_backend_ != backend.name()) {
            host_a_ = rt.host_memory({backend.name()}, a_.size() * sizeof(T));
            host_c_ = rt.host_memory({backend.name()}, size_t(m_) * n_ * sizeof(float));
            std::copy(a_.begin(), a_.end(), host_a_.as<T>().begin());
            pinned_backend_ = backend.name();
        }
        const std::span<const T> a = host_a_.as<const T>();
        const std::span<float> c = host_c_.as<float>();
        const int parts = std::min<int>(int(devices.size()), (m_ + Band::block - 1) / Band::block);
        const int tiles = (m_ + Band::block - 1) / Band::block;
        struct Part {
            Queue queue;
            int row0, rows;
            Buffer<T> a;
            Buffer<float> c;
        };
        std::vector<Part> bands;
        int row = 0;
        for (int p = 0; p < parts; ++p) {
            int rows =
                std::min(m_ - row, (tiles * (p + 1) / parts - tiles * p / parts) * Band::block);
            bands.push_back({rt.queue({backend.name(), devices[size_t(p)]}), row, rows,
                             Buffer<T>(rt, size_t(rows) * k_),
                             Buffer<float>(rt, size_t(rows) * n_)});
            row += rows;
        }
        devices_used_.clear();
        std::vector<Event> done;
        for (size_t p = 0; p < bands.size(); ++p) {
            Part& band = bands[p];
            band.queue.write(band.a, a.subspan(size_t(band.row0) * k_, size_t(band.rows) * k_));
            const auto [kernel, grid] =
                Band::pick(rt, {backend.name(), devices[p]}, band.rows, n_, k_);
            Event e = band.queue.launch(kernel, grid, band.a, bb_, band.c, band.rows, n_, k_);
            devices_used_.push_back(e.device_index());
            done.push_back(
                band.queue.read(band.c, c.subspan(size_t(band.row0) * n_, size_t(band.rows) * n_)));
        }
        for (Event& e : done)
            e.wait();
    }
    // Every element against the reference up to 2^33 multiply-adds (seconds on one core);
    // beyond, where that takes hours, Freivalds' test on every row (see check_matmul_rows).
    CheckResult check() override {
        const std::span<const float> c = host_c_.as<const float>();
        if (double(m_) * n_ * k_ <= double(1ull << 33))
            return check_matmul(a_, b_, c, m_, n_, k_, bound());
        return check_matmul_rows(a_, b_, c, m_, n_, k_, bound());
    }
    std::string tolerance() const override {
        return std::same_as<T, float> ? "|got - want| <= 1e-5 sum_p |a b| + 1e-6 (want in double)"
                                      : "|got - want| <= (k + 16) 2^-23 sum_p |a b| + 1e-6 (exact "
                                        "products, f32 sums; want in double)";
    }
    double work() const override { return 2.0 * m_ * n_ * double(k_); }
    const char* unit() const override { return "GFLOP/s"; }
    std::vector<int> devices_used() const override { return devices_used_; }

private:
    using Band = BandKernel<T>;
    // The tolerance of one element from its sum_p |a b|; empty: check_matmul's own for f32.
    std::function<double(double)> bound() const {
        if constexpr (std::same_as<T, float>)
            return {};
        else
            return [k = k_](double mag) { return matmul_mma_bound(k, mag, false); };
    }
    int m_, n_, k_;
    std::vector<float> a_, b_; // the inputs' values, rounded to T
    Buffer<T> bb_;
    std::string pinned_backend_; // the backend host_a_ and host_c_ were allocated for
    HostMemory host_a_, host_c_;
    std::vector<int> devices_used_;
};

class Pipeline final : public StagedProblem {
public:
    Pipeline(size_t n, Runtime&, std::mt19937& g) : n_(n), x_(random_floats(n, g)) {}
    std::string kernel() const override { return "pipeline"; }
    std::string size_text() const override {
        return "n=" + std::to_string(n_) + " in " + std::to_string(chunks()) + " chunks";
    }
    // Chunk i: uploaded on `up`, computed on `compute`, downloaded on `down`, through one of
    // four slots of device buffers. No explicit wait is needed: the launch reading a slot's
    // input follows the upload that wrote it on another queue, the download follows the
    // launch, and an upload into a slot follows the launch that last read it. A target naming
    // no device deals the chunks out to every device of its backend in turn, each device with
    // its own three queues and four slots.
    void run(Runtime& rt, const Target& t) override { run_stages(rt, t, {true, true, true}); }
    void run_stage(Runtime& rt, const Target& t, int stage) override {
        run_stages(rt, t, {stage == 0, stage == 1, stage == 2});
    }
    CheckResult check() override {
        const std::span<const float> y = host_y_.as<const float>();
        CheckResult r;
        for (size_t i = 0; i < n_; ++i) {
            double v = x_[i], acc = pipeline_coefficients[0], mag = std::fabs(acc);
            for (size_t c = 1; c < pipeline_coefficients.size(); ++c) {
                acc = acc * v + pipeline_coefficients[c];
                mag = mag * std::fabs(v) + std::fabs(pipeline_coefficients[c]);
            }
            record(r, i, y[i], acc, 1e-6 * mag);
        }
        return r;
    }
    std::string tolerance() const override {
        return "|got - want| <= 1e-6 sum|c_j x^j| (want in double)";
    }
    double work() const override { return 2.0 * 4 * n_; }
    const char* unit() const override { return "GB/s"; }
    std::vector<int> devices_used() const override { return devices_used_; }

private:
    static constexpr int kSlots = 4;
    static constexpr size_t kChunks = 32;
    size_t chunk() const { return std::max<size_t>(1, (n_ + kChunks - 1) / kChunks); }
    size_t chunks() const { return (n_ + chunk() - 1) / chunk(); }
    struct Slot {
        Buffer<float> x, y;
    };
    struct Lane { // one device's queues and slots
        Queue up, compute, down;
        std::vector<Slot>* slots;
    };
    // The stages asked for, each on its own queue: all three overlap; one alone is what the
    // bench compares with. x and y live in host memory every device copies by itself.
    void run_stages(Runtime& rt, const Target& t, std::array<bool, 3> stage) {
        const Backend& backend = backend_of(rt, t);
        const std::vector<int> devices = devices_of(backend, t);
        const Target first{backend.name(), devices.front()};
        if (pinned_for_ != first.backend + ":" + std::to_string(first.device)) {
            host_x_ = rt.host_memory(first, n_ * sizeof(float));
            host_y_ = rt.host_memory(first, n_ * sizeof(float));
            std::copy(x_.begin(), x_.end(), host_x_.as<float>().begin());
            pinned_for_ = first.backend + ":" + std::to_string(first.device);
        }
        const std::span<const float> x = host_x_.as<const float>();
        const std::span<float> y = host_y_.as<float>();
        std::vector<Lane> lanes;
        for (int d : devices) {
            const Target on{backend.name(), d};
            std::vector<Slot>& slots = slots_[on.backend + ":" + std::to_string(d)];
            while (slots.size() < kSlots)
                slots.push_back({Buffer<float>(rt, chunk()), Buffer<float>(rt, chunk())});
            lanes.push_back({rt.queue(on), rt.queue(on), rt.queue(on), &slots});
        }
        devices_used_.clear();
        for (size_t i = 0; i < chunks(); ++i) {
            Lane& lane = lanes[i % lanes.size()];
            Slot& s = (*lane.slots)[(i / lanes.size()) % kSlots];
            const size_t first_item = i * chunk(), count = std::min(chunk(), n_ - first_item);
            if (stage[0]) lane.up.write(s.x, x.subspan(first_item, count));
            if (stage[1]) {
                Event e = lane.compute.launch(pipeline_step(), Grid(count), s.x, s.y, int(count));
                if (i < lanes.size()) devices_used_.push_back(e.device_index());
            }
            if (stage[2]) lane.down.read(s.y, y.subspan(first_item, count));
        }
        for (Lane& lane : lanes) {
            lane.up.finish();
            lane.compute.finish();
            lane.down.finish();
        }
    }

    size_t n_;
    std::vector<float> x_;
    std::map<std::string, std::vector<Slot>> slots_; // by "backend:device"
    std::string pinned_for_; // the device host_x_ and host_y_ were allocated for
    HostMemory host_x_, host_y_;
    std::vector<int> devices_used_;
};

} // namespace

CheckResult check_matmul(const std::vector<float>& a, const std::vector<float>& b,
                         std::span<const float> c, int m, int n, int k,
                         std::function<double(double)> bound) {
    CheckResult r;
    std::vector<double> want(static_cast<size_t>(n)), mag(static_cast<size_t>(n));
    for (int row = 0; row < m; ++row) {
        std::fill(want.begin(), want.end(), 0.0);
        std::fill(mag.begin(), mag.end(), 0.0);
        for (int p = 0; p < k; ++p) {
            double av = a[size_t(row) * k + p];
            const float* bp = &b[size_t(p) * n];
            for (int col = 0; col < n; ++col) {
                want[size_t(col)] += av * bp[col];
                mag[size_t(col)] += std::fabs(av * bp[col]);
            }
        }
        for (int col = 0; col < n; ++col)
            record(r, size_t(row) * n + col, c[size_t(row) * n + col], want[size_t(col)],
                   bound ? bound(mag[size_t(col)]) : 1e-5 * mag[size_t(col)] + 1e-6);
    }
    return r;
}

CheckResult check_matmul_rows(const std::vector<float>& a, const std::vector<float>& b,
                              std::span<const float> c, int m, int n, int k,
                              std::function<double(double)> tolerance) {
    CheckResult r;
    std::mt19937 g(99);
    std::vector<double> x(static_cast<size_t>(n)), bx(static_cast<size_t>(k)),
        babs(static_cast<size_t>(k));
    for (int trial = 0; trial < 3; ++trial) {
        for (double& v : x)
            v = g() % 2 ? 1.0 : -1.0;
        for (int p = 0; p < k; ++p) {
            double sum = 0, mag = 0;
            for (int j = 0; j < n; ++j) {
                sum += double(b[size_t(p) * n + j]) * x[size_t(j)];
                mag += std::fabs(b[size_t(p) * n + j]);
            }
            bx[size_t(p)] = sum;
            babs[size_t(p)] = mag;
        }
        for (int i = 0; i < m; ++i) {
            double want = 0, bound = 0, got = 0;
            for (int p = 0; p < k; ++p) {
                want += double(a[size_t(i) * k + p]) * bx[size_t(p)];
                bound += std::fabs(a[size_t(i) * k + p]) * babs[size_t(p)];
            }
            for (int j = 0; j < n; ++j)
                got += double(c[size_t(i) * n + j]) * x[size_t(j)];
            record(r, size_t(i), got, want,
                   (tolerance ? tolerance(bound) : 1e-5 * bound) + 1e-6 * n);
        }
    }
    return r;
}

std::unique_ptr<Problem> make_queue_problem(const std::string& name, size_t size, Runtime& rt,
                                            std::mt19937& g) {
    if (name == "multi_device_matmul")
        return std::make_unique<MultiDeviceMatmul<float>>(size, rt, g);
    if (name == "multi_device_matmul_f16")
        return std::make_unique<MultiDeviceMatmul<half>>(size, rt, g);
    if (name == "multi_device_matmul_bf16")
        return std::make_unique<MultiDeviceMatmul<bf16>>(size, rt, g);
    if (name == "pipeline") return std::make_unique<Pipeline>(size, rt, g);
    return nullptr;
}

const std::vector<std::string>& queue_problem_names() {
    static const std::vector<std::string> names = {"multi_device_matmul", "multi_device_matmul_f16",
                                                   "multi_device_matmul_bf16", "pipeline"};
    return names;
}

} // namespace plexus::samples
