// read_json_file and write_atomically (json_file.hpp).
#include "cache/json_file.hpp"

#include "cache/disk_cache.hpp"
#include "plexus/error.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace plexus::detail {

std::optional<nlohmann::json> read_json_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    try {
        return nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception&) {
        return std::nullopt;
    }
}

std::vector<std::string> json_files(const std::string& dir) {
    namespace fs = std::filesystem;
    std::vector<std::string> files;
    std::error_code ec;
    if (dir.empty() || !fs::is_directory(dir, ec)) return files;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.path().extension() == ".json") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    return files;
}

void write_atomically(const std::string& path, const std::string& text) {
    const std::string tmp = temp_name(path);
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        throw Error(ErrorCode::InvalidArgument,
                    "cannot create " + tmp + ": " + std::strerror(errno));
    bool ok = write_all(fd, text.data(), text.size());
    int saved = errno;
    if (::close(fd) != 0 && ok) ok = false, saved = errno;
    if (ok && ::rename(tmp.c_str(), path.c_str()) != 0) ok = false, saved = errno;
    if (!ok) {
        ::unlink(tmp.c_str());
        throw Error(ErrorCode::InvalidArgument,
                    "cannot write " + path + ": " + std::strerror(saved));
    }
}

} // namespace plexus::detail
