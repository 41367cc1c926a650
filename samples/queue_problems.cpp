// The samples of the host API's queues: multi_device_matmul (one matmul split by rows across
// every device of a backend, one queue each) and pipeline (chunks uploaded, computed and
// downloaded on three queues so that the three overlap).
#include "queue_problems.hpp"

#include "kernels.hpp"
#include "problem_util.hpp"

#include <algorithm>
#include <cmath>
#include <array>
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

class MultiDeviceMatmul final : public MultiDeviceProblem {
public:
    MultiDeviceMatmul(size_t size, Runtime& rt, std::mt19937& g)
        : m_(int(size)), n_(int(std::max<size_t>(1, size - size / 8))), k_(int(size + 3)),
          a_(random_floats(size_t(m_) * k_, g)), b_(random_floats(size_t(k_) * n_, g)), c_(size_t(m_) * n_),
          bb_(rt, b_) {}
    std::string kernel() const override { return "multi_device_matmul"; }
    std::string size_text() const override {
        return "m=" + std::to_string(m_) + " n=" + std::to_string(n_) + " k=" + std::to_string(k_);
    }
    // One band of rows per device of the backend (a target naming a device keeps to it), in
    // multiples of the tile height; b goes to every device, each band of a to its own.
    void run(Runtime& rt, const Target& t) override {
        const Backend& backend = backend_of(rt, t);
        std::vector<int> devices;
        if (t.device >= 0) devices.push_back(t.device);
        else
            for (size_t d = 0; d < backend.devices().size(); ++d) devices.push_back(int(d));
        // The host side of the transfers in memory the devices copy without the host's help,
        // so that every device's upload, kernel and download run at once.
        if (pinned_backend_ != backend.name()) {
            host_a_ = rt.host_memory({backend.name()}, a_.size() * sizeof(float));
            host_c_ = rt.host_memory({backend.name()}, c_.size() * sizeof(float));
            std::copy(a_.begin(), a_.end(), host_a_.as<float>().begin());
            pinned_backend_ = backend.name();
        }
        const std::span<const float> a = host_a_.as<const float>();
        const std::span<float> c = host_c_.as<float>();
        const int parts = std::min<int>(int(devices.size()), (m_ + matmul_block - 1) / matmul_block);
        const int tiles = (m_ + matmul_block - 1) / matmul_block;
        struct Band {
            Queue queue;
            int row0, rows;
            Buffer<float> a, c;
        };
        std::vector<Band> bands;
        int row = 0;
        for (int p = 0; p < parts; ++p) {
            int rows = std::min(m_ - row, (tiles * (p + 1) / parts - tiles * p / parts) * matmul_block);
            bands.push_back({rt.queue({backend.name(), devices[size_t(p)]}), row, rows,
                             Buffer<float>(rt, size_t(rows) * k_), Buffer<float>(rt, size_t(rows) * n_)});
            row += rows;
        }
        devices_used_.clear();
        std::vector<Event> done;
        for (Band& band : bands) {
            band.queue.write(band.a, a.subspan(size_t(band.row0) * k_, size_t(band.rows) * k_));
            const size_t blocks_x = (size_t(n_) + matmul_block - 1) / matmul_block;
            const size_t blocks_y = (size_t(band.rows) + matmul_block - 1) / matmul_block;
            Event e = band.queue.launch(matmul_tiled(),
                                        Grid(blocks_x * matmul_group_size, blocks_y).local_size(matmul_group_size, 1),
                                        band.a, bb_, band.c, band.rows, n_, k_);
            devices_used_.push_back(e.device_index());
            done.push_back(band.queue.read(band.c, c.subspan(size_t(band.row0) * n_, size_t(band.rows) * n_)));
        }
        for (Event& e : done) e.wait();
    }
    // Every element against the reference up to 2^33 multiply-adds (seconds on one core);
    // beyond, where that takes hours, Freivalds' test on every row (see check_matmul_rows).
    CheckResult check() override {
        if (double(m_) * n_ * k_ <= double(1ull << 33)) return check_matmul(a_, b_, host_c_.as<const float>(), m_, n_, k_);
        return check_matmul_rows(a_, b_, host_c_.as<const float>(), m_, n_, k_);
    }
    std::string tolerance() const override { return "|got - want| <= 1e-5 sum_p |a b| + 1e-6 (want in double)"; }
    double work() const override { return 2.0 * m_ * n_ * double(k_); }
    const char* unit() const override { return "GFLOP/s"; }
    std::vector<int> devices_used() const override { return devices_used_; }

private:
    int m_, n_, k_;
    std::vector<float> a_, b_, c_;
    Buffer<float> bb_;
    std::string pinned_backend_; // the backend host_a_ and host_c_ were allocated for
    HostMemory host_a_, host_c_;
    std::vector<int> devices_used_;
};

class Pipeline final : public StagedProblem {
public:
    Pipeline(size_t n, Runtime& rt, std::mt19937& g) : n_(n), x_(random_floats(n, g)) {
        for (int s = 0; s < kSlots; ++s) slots_.push_back({Buffer<float>(rt, chunk()), Buffer<float>(rt, chunk())});
    }
    std::string kernel() const override { return "pipeline"; }
    std::string size_text() const override {
        return "n=" + std::to_string(n_) + " in " + std::to_string(chunks()) + " chunks";
    }
    // Chunk i: uploaded on `up`, computed on `compute`, downloaded on `down`, through one of
    // four slots of device buffers. No explicit wait is needed: the launch reading a slot's
    // input follows the upload that wrote it on another queue, the download follows the
    // launch, and an upload into a slot follows the launch that last read it.
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
    std::string tolerance() const override { return "|got - want| <= 1e-6 sum|c_j x^j| (want in double)"; }
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
    // The stages asked for, each on its own queue: all three overlap; one alone is what the
    // bench compares with. x and y live in host memory the device copies by itself.
    void run_stages(Runtime& rt, const Target& t, std::array<bool, 3> stage) {
        const Backend& backend = backend_of(rt, t);
        const Target on{backend.name(), t.device < 0 ? 0 : t.device};
        if (pinned_for_ != on.backend + ":" + std::to_string(on.device)) {
            host_x_ = rt.host_memory(on, n_ * sizeof(float));
            host_y_ = rt.host_memory(on, n_ * sizeof(float));
            std::copy(x_.begin(), x_.end(), host_x_.as<float>().begin());
            pinned_for_ = on.backend + ":" + std::to_string(on.device);
        }
        const std::span<const float> x = host_x_.as<const float>();
        const std::span<float> y = host_y_.as<float>();
        Queue up = rt.queue(on), compute = rt.queue(on), down = rt.queue(on);
        devices_used_.clear();
        for (size_t i = 0; i < chunks(); ++i) {
            Slot& s = slots_[i % kSlots];
            const size_t first = i * chunk(), count = std::min(chunk(), n_ - first);
            if (stage[0]) up.write(s.x, x.subspan(first, count));
            if (stage[1]) {
                Event e = compute.launch(pipeline_step(), Grid(count), s.x, s.y, int(count));
                if (i == 0) devices_used_.push_back(e.device_index());
            }
            if (stage[2]) down.read(s.y, y.subspan(first, count));
        }
        up.finish();
        compute.finish();
        down.finish();
    }

    size_t n_;
    std::vector<float> x_;
    std::vector<Slot> slots_;
    std::string pinned_for_; // the device host_x_ and host_y_ were allocated for
    HostMemory host_x_, host_y_;
    std::vector<int> devices_used_;
};

} // namespace

CheckResult check_matmul(const std::vector<float>& a, const std::vector<float>& b, std::span<const float> c, int m,
                         int n, int k) {
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
            record(r, size_t(row) * n + col, c[size_t(row) * n + col], want[size_t(col)], 1e-5 * mag[size_t(col)] + 1e-6);
    }
    return r;
}

CheckResult check_matmul_rows(const std::vector<float>& a, const std::vector<float>& b, std::span<const float> c, int m,
                              int n, int k, std::function<double(double)> tolerance) {
    CheckResult r;
    std::mt19937 g(99);
    std::vector<double> x(static_cast<size_t>(n)), bx(static_cast<size_t>(k)), babs(static_cast<size_t>(k));
    for (int trial = 0; trial < 3; ++trial) {
        for (double& v : x) v = g() % 2 ? 1.0 : -1.0;
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
            for (int j = 0; j < n; ++j) got += double(c[size_t(i) * n + j]) * x[size_t(j)];
            record(r, size_t(i), got, want, (tolerance ? tolerance(bound) : 1e-5 * bound) + 1e-6 * n);
        }
    }
    return r;
}

std::unique_ptr<Problem> make_queue_problem(const std::string& name, size_t size, Runtime& rt, std::mt19937& g) {
    if (name == "multi_device_matmul") return std::make_unique<MultiDeviceMatmul>(size, rt, g);
    if (name == "pipeline") return std::make_unique<Pipeline>(size, rt, g);
    return nullptr;
}

const std::vector<std::string>& queue_problem_names() {
    static const std::vector<std::string> names = {"multi_device_matmul", "pipeline"};
    return names;
}

} // namespace plexus::samples
