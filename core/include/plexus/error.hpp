// plexus::Error, the one exception type of the C++ API: a code, a message and its context.
#pragma once

#include <stdexcept>
#include <string>

namespace plexus {

enum class ErrorCode {
    InvalidArgument, // the caller passed something wrong (a launch argument, a handle)
    InvalidKernel,   // the validator rejected a kernel
    InvalidConfig,   // the configuration file or object is wrong
    InvalidIR,       // a serialized IR document is malformed
    Compile,         // a backend rejected generated code; build_log holds its words
    OutOfMemory,     // host or device memory exhausted
    OutOfResources,  // too many threads or too much local memory for the device
    NoBackend,       // no loaded backend can run the request
    Launch,          // a launch failed while running (including the interpreter's checks)
    Device,          // any other failure reported by a driver
    Unsupported,     // valid, but not built or not possible here
    Internal,        // a bug in plexus
};

const char* to_string(ErrorCode code);

// Where an error happened; empty fields are unknown or irrelevant.
struct ErrorContext {
    std::string plugin;
    std::string device;
    std::string kernel;
    std::string file;      // a configuration or IR file
    std::string json_path; // "backends.native.priority"
    std::string build_log;
};

class Error : public std::runtime_error {
public:
    Error(ErrorCode code, const std::string& message, ErrorContext context = {});

    ErrorCode code() const noexcept { return code_; }
    // The message without the context, as given to the constructor.
    const std::string& message() const noexcept { return message_; }
    const ErrorContext& context() const noexcept { return context_; }

private:
    ErrorCode code_;
    std::string message_;
    ErrorContext context_;
};

} // namespace plexus
