// plexus::Error: what() carries the message and, in brackets, every known piece of context.
#include "plexus/error.hpp"

namespace plexus {

const char* to_string(ErrorCode code) {
    switch (code) {
    case ErrorCode::InvalidArgument: return "invalid argument";
    case ErrorCode::InvalidKernel: return "invalid kernel";
    case ErrorCode::InvalidConfig: return "invalid configuration";
    case ErrorCode::InvalidIR: return "invalid IR";
    case ErrorCode::Compile: return "compile error";
    case ErrorCode::OutOfMemory: return "out of memory";
    case ErrorCode::OutOfResources: return "out of resources";
    case ErrorCode::NoBackend: return "no backend";
    case ErrorCode::Launch: return "launch failed";
    case ErrorCode::Device: return "device error";
    case ErrorCode::Unsupported: return "unsupported";
    case ErrorCode::Internal: return "internal error (a bug in plexus)";
    }
    return "unknown error";
}

static std::string describe(ErrorCode code, const std::string& message, const ErrorContext& c) {
    std::string s = to_string(code);
    s.append(": ").append(message);
    auto add = [&](const char* key, const std::string& value) {
        if (!value.empty()) s.append(" [").append(key).append(" ").append(value).append("]");
    };
    add("file", c.file);
    add("at", c.json_path);
    add("kernel", c.kernel);
    add("plugin", c.plugin);
    add("device", c.device);
    if (!c.build_log.empty()) s.append("\nbuild log:\n").append(c.build_log);
    return s;
}

Error::Error(ErrorCode code, const std::string& message, ErrorContext context)
    : std::runtime_error(describe(code, message, context)), code_(code), message_(message),
      context_(std::move(context)) {}

} // namespace plexus
