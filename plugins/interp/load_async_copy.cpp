// The loader's asynchronous copies: AsyncCopy statements, checked as the core's make() and
// validator check them (the rules on operand values are checked at run time, async_copy.cpp);
// errors name the JSON path.
#include "loader.hpp"

namespace plx_interp {

// {"stmt": "AsyncCopy", "op": copy | commit | wait, then per op: "array", "index", "buffer",
// "src_index", "count", "valid"; nothing; "pending"}.
void Loader::async_copy(StmtNode& n, const json& j, const std::string& jp) {
    const std::string op = str(j, jp, "op");
    if (op == "commit" || op == "wait") {
        if (op == "wait") {
            keys(j, jp, {"stmt", "op", "pending"});
            count(field(j, jp, "pending"), jp + ".pending");
        } else {
            keys(j, jp, {"stmt", "op"});
        }
        n.kind = StmtKind::Nop; // every copy is done at once: nothing is ever in flight
        return;
    }
    if (op != "copy")
        fail(jp + ".op", "unknown async copy op \"" + op + "\" (expected copy, commit or wait)");
    keys(j, jp, {"stmt", "op", "array", "index", "buffer", "src_index", "count", "valid"});
    const std::string array = str(j, jp, "array"), buffer = str(j, jp, "buffer");
    const Array* to = array_named(array);
    const Array* from = array_named(buffer);
    if (!to || to->space != Space::Local)
        fail(jp + ".array",
             "\"" + array +
                 "\" is not a declared shared array (an async copy writes shared memory)");
    if (!from || from->space != Space::Global)
        fail(jp + ".buffer", "\"" + buffer + "\" is not a buffer parameter");
    AsyncCopyStmt c{};
    c.array = static_cast<uint32_t>(to - p_.arrays.data());
    c.buffer = static_cast<uint32_t>(from - p_.arrays.data());
    c.count = count(field(j, jp, "count"), jp + ".count");
    const std::string what = "async copy of " + std::to_string(c.count) + " elements from \"" +
                             buffer + "\" into \"" + array + "\"";
    if (array_types_[c.array] != array_types_[c.buffer])
        fail(jp, what + ": the shared array holds " + to->type_name + ", the buffer " +
                     from->type_name + " (an async copy moves elements of one type)");
    c.size = ty_size(to->scalar);
    if (c.size != 2 && c.size != 4 && c.size != 8)
        fail(jp, what + ": elements of " + to->type_name +
                     " (async copies move scalars of 2, 4 or 8 bytes)");
    const uint64_t bytes = uint64_t(c.count) * c.size;
    if (bytes != 4 && bytes != 8 && bytes != 16)
        fail(jp + ".count",
             what + ": " + std::to_string(bytes) + " bytes (an async copy moves 4, 8 or 16 bytes)");
    n.e0 = scalar(j, jp, "index", ty_integer, "an integer");
    n.e1 = scalar(j, jp, "src_index", ty_integer, "an integer");
    n.e2 = scalar(j, jp, "valid", ty_integer, "an integer");
    n.kind = StmtKind::AsyncCopy;
    n.first = static_cast<uint32_t>(p_.async_copies.size());
    p_.async_copies.push_back(c);
}

} // namespace plx_interp
