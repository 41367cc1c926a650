// Fuzz target: the JSON IR reader and the validator (the public plexus::ir::from_json and
// plexus::ir::validate). Any input must end in a kernel or a plexus::Error, never a crash, a
// hang or another exception.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "plexus/error.hpp"
#include "plexus/ir.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        plexus::ir::Kernel k = plexus::ir::from_json(text, "fuzz.json");
        plexus::ir::validate(k);
    } catch (const plexus::Error&) {
    }
#ifndef PLEXUS_FUZZ_STRICT
    // An open bug of the IR reader, which this branch does not own (docs/testing.md): a
    // number too large for a double ("1e999") escapes from_json as nlohmann's out_of_range
    // (id 406) instead of an InvalidIR error. Tolerated so that fuzzing goes on past it;
    // tests/fuzz/known/ir_json holds the input and the fuzz-known-ir_json test, built
    // without this, expects it to fail until the reader is fixed.
    catch (const nlohmann::json::out_of_range& e) {
        if (e.id != 406) throw;
    }
#endif
    return 0;
}
