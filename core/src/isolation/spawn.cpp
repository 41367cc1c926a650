// run_children: posix_spawn, one poll loop over every child's pipes, waitid without reaping so
// that the process group can be killed while its id is still reserved, then waitpid.
#include "isolation/spawn.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <set>

extern char** environ;

namespace plexus::detail {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kReportFd = 3;
constexpr size_t kOutputKeep = 4096;
constexpr size_t kReportCap = 1 << 20; // a child that floods its report is cut off, not obeyed

struct Pipe {
    int read = -1, write = -1;
};

void close_fd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
}

// Both ends close on exec; the write end is moved to fd 10 or above, so that the dup2 onto
// 1, 2 or 3 in the child always makes a new descriptor, which does not close on exec.
bool make_pipe(Pipe& p) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return false;
    int w = ::fcntl(fds[1], F_DUPFD_CLOEXEC, 10);
    ::close(fds[1]);
    if (w < 0) {
        ::close(fds[0]);
        return false;
    }
    ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
    p = {fds[0], w};
    return true;
}

std::vector<std::string> child_environment(const std::vector<std::string>& extra) {
    std::set<std::string> replaced;
    for (const std::string& e : extra)
        replaced.insert(e.substr(0, e.find('=')));
    std::vector<std::string> env;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        std::string entry = *e;
        if (replaced.count(entry.substr(0, entry.find('='))) == 0) env.push_back(std::move(entry));
    }
    env.insert(env.end(), extra.begin(), extra.end());
    return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
    std::vector<char*> out;
    for (std::string& s : strings)
        out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

struct Running {
    pid_t pid = -1;
    Pipe report, output;
    Clock::time_point start, deadline;
    std::chrono::milliseconds limit{0};
    bool reported = false; // the first report byte came: the deadline is now + limit from then
    ChildResult* result = nullptr;
    bool done = false;
};

// Reads what is there; returns false once the pipe is at its end.
bool drain(int fd, std::string& into, size_t keep) {
    char buf[4096];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n > 0) {
            into.append(buf, static_cast<size_t>(n));
            if (keep != 0 && into.size() > 2 * keep) into.erase(0, into.size() - keep);
            continue;
        }
        if (n == 0) return false;
        if (errno == EINTR) continue;
        return errno == EAGAIN || errno == EWOULDBLOCK;
    }
}

void drain_all(Running& r) {
    if (r.report.read >= 0 && !drain(r.report.read, r.result->report, 0)) close_fd(r.report.read);
    if (!r.reported && !r.result->report.empty()) {
        r.reported = true;
        r.deadline = Clock::now() + r.limit;
    }
    if (r.result->report.size() > kReportCap) r.result->report.resize(kReportCap);
    if (r.output.read >= 0 && !drain(r.output.read, r.result->output, kOutputKeep))
        close_fd(r.output.read);
}

// After the child ended and its group was killed, every writer is gone: read to the end, but
// never wait long for a writer that escaped into another process group.
void finish_reading(Running& r) {
    const auto until = Clock::now() + std::chrono::milliseconds(200);
    while ((r.report.read >= 0 || r.output.read >= 0) && Clock::now() < until) {
        pollfd fds[2];
        nfds_t n = 0;
        for (int fd : {r.report.read, r.output.read})
            if (fd >= 0) fds[n++] = {fd, POLLIN, 0};
        ::poll(fds, n, 20);
        drain_all(r);
    }
    close_fd(r.report.read);
    close_fd(r.output.read);
    if (r.result->output.size() > kOutputKeep)
        r.result->output.erase(0, r.result->output.size() - kOutputKeep);
}

void kill_group(pid_t pid) {
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL); // in case it left its group (setsid)
}

void reap(Running& r, bool timed_out) {
    int status = 0;
    pid_t got;
    do {
        got = ::waitpid(r.pid, &status, 0);
    } while (got < 0 && errno == EINTR);
    ChildResult& res = *r.result;
    res.timed_out = timed_out;
    if (got == r.pid && WIFEXITED(status)) {
        res.exited = true;
        res.exit_status = WEXITSTATUS(status);
    } else if (got == r.pid && WIFSIGNALED(status)) {
        res.signal = WTERMSIG(status);
    } else if (got < 0) {
        res.status_lost = true;
    }
    finish_reading(r);
    res.ms = std::chrono::duration<double, std::milli>(Clock::now() - r.start).count();
    r.done = true;
}

// One step of the wait: ended, timed out, or still running.
void check(Running& r) {
    siginfo_t info{};
    int rc = ::waitid(P_PID, static_cast<id_t>(r.pid), &info, WEXITED | WNOHANG | WNOWAIT);
    if (rc == 0 && info.si_pid == r.pid) {
        kill_group(r.pid); // what it left behind; its id is still reserved by the zombie
        reap(r, false);
    } else if (rc < 0 && errno == ECHILD) {
        // Someone else reaps our children (SIGCHLD ignored): the pipes' end is the only sign.
        if (r.report.read < 0 && r.output.read < 0) {
            r.result->status_lost = true;
            r.result->ms =
                std::chrono::duration<double, std::milli>(Clock::now() - r.start).count();
            r.done = true;
        } else if (Clock::now() >= r.deadline) {
            kill_group(r.pid);
            r.result->timed_out = true;
            r.result->status_lost = true;
            finish_reading(r);
            r.done = true;
        }
    } else if (Clock::now() >= r.deadline) {
        kill_group(r.pid);
        reap(r, true);
    }
}

bool start(const ChildSpec& spec, Running& r) {
    ChildResult& res = *r.result;
    if (spec.argv.empty()) {
        res.start_error = "no program to run";
        return false;
    }
    if (!make_pipe(r.report) || !make_pipe(r.output)) {
        res.start_error = std::string("cannot create a pipe: ") + std::strerror(errno);
        return false;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, r.output.write, 1);
    posix_spawn_file_actions_adddup2(&actions, r.output.write, 2);
    posix_spawn_file_actions_adddup2(&actions, r.report.write, kReportFd);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    // Its own process group, so that a time-out kills whatever it started too; no signal the
    // host blocks or ignores stays blocked or ignored in the child.
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                        POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setpgroup(&attr, 0);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    sigdelset(&all, SIGKILL);
    sigdelset(&all, SIGSTOP);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);

    std::vector<std::string> args = spec.argv, env = child_environment(spec.extra_env);
    std::vector<char*> argv = pointers(args), envp = pointers(env);
    r.start = Clock::now();
    r.limit = spec.limit;
    r.deadline = r.start + spec.startup + spec.limit;
    int rc = ::posix_spawn(&r.pid, args[0].c_str(), &actions, &attr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    close_fd(r.report.write);
    close_fd(r.output.write);
    if (rc != 0) {
        res.start_error = "cannot start " + args[0] + ": " + std::strerror(rc);
        close_fd(r.report.read);
        close_fd(r.output.read);
        return false;
    }
    return true;
}

} // namespace

std::vector<ChildResult> run_children(const std::vector<ChildSpec>& specs) {
    std::vector<ChildResult> results(specs.size());
    std::vector<Running> running(specs.size());
    for (size_t i = 0; i < specs.size(); ++i) {
        running[i].result = &results[i];
        running[i].done = !start(specs[i], running[i]);
    }
    for (;;) {
        std::vector<pollfd> fds;
        std::vector<Running*> owner;
        auto wait = std::chrono::milliseconds(50);
        bool any = false;
        for (Running& r : running) {
            if (r.done) continue;
            any = true;
            for (int fd : {r.report.read, r.output.read})
                if (fd >= 0) {
                    fds.push_back({fd, POLLIN, 0});
                    owner.push_back(&r);
                }
            // A child whose pipes are closed is about to be reaped: look again soon.
            if (r.report.read < 0 && r.output.read < 0)
                wait = std::min(wait, std::chrono::milliseconds(5));
            auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(r.deadline - Clock::now());
            wait = std::max(std::chrono::milliseconds(0), std::min(wait, left));
        }
        if (!any) break;
        if (::poll(fds.data(), fds.size(), static_cast<int>(wait.count())) > 0)
            for (size_t i = 0; i < fds.size(); ++i)
                if (fds[i].revents != 0) drain_all(*owner[i]);
        for (Running& r : running)
            if (!r.done) check(r);
    }
    return results;
}

std::string signal_name(int signal) {
    const char* abbrev = ::sigabbrev_np(signal);
    return abbrev != nullptr ? std::string("SIG") + abbrev : "signal " + std::to_string(signal);
}

std::string signal_description(int signal) {
    const char* d = ::sigdescr_np(signal);
    std::string s = d != nullptr ? d : "unknown signal";
    if (!s.empty()) s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
    return s;
}

} // namespace plexus::detail
