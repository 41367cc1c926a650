// Each built plugin exports plx_plugin_init and nothing else (docs/architecture.md; the version
// script plugins/common/exports.map): its dynamic symbol table, as the dynamic linker reads it,
// defines no other global symbol. meson passes the plugins as PLEXUS_TEST_PLUGINS,
// "native=/path/libplexus-native.so:interp=...".
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <elf.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

struct Elf64 {
    using Ehdr = Elf64_Ehdr;
    using Shdr = Elf64_Shdr;
    using Sym = Elf64_Sym;
    static unsigned char bind(unsigned char info) { return ELF64_ST_BIND(info); }
    static unsigned char type(unsigned char info) { return ELF64_ST_TYPE(info); }
    static unsigned char visibility(unsigned char other) { return ELF64_ST_VISIBILITY(other); }
};

struct Elf32 {
    using Ehdr = Elf32_Ehdr;
    using Shdr = Elf32_Shdr;
    using Sym = Elf32_Sym;
    static unsigned char bind(unsigned char info) { return ELF32_ST_BIND(info); }
    static unsigned char type(unsigned char info) { return ELF32_ST_TYPE(info); }
    static unsigned char visibility(unsigned char other) { return ELF32_ST_VISIBILITY(other); }
};

struct Exported {
    std::string name;
    bool function;
};

// `count` objects of type T at `offset` of the file, checked against its size.
template <class T> const T* at(const std::string& file, uint64_t offset, uint64_t count = 1) {
    if (offset > file.size() || count > (file.size() - offset) / sizeof(T))
        throw std::runtime_error("truncated ELF file");
    return reinterpret_cast<const T*>(file.data() + offset);
}

// The symbols of .dynsym that another object can bind to: defined, global, weak or unique,
// and of default or protected visibility.
template <class Elf> std::vector<Exported> exported(const std::string& file) {
    const auto* header = at<typename Elf::Ehdr>(file, 0);
    const auto* sections = at<typename Elf::Shdr>(file, header->e_shoff, header->e_shnum);
    std::vector<Exported> out;
    bool found = false;
    for (unsigned i = 0; i < header->e_shnum; ++i) {
        const auto& dynsym = sections[i];
        if (dynsym.sh_type != SHT_DYNSYM) continue;
        found = true;
        if (dynsym.sh_link >= header->e_shnum) throw std::runtime_error("bad .dynsym link");
        const auto& strtab = sections[dynsym.sh_link];
        const char* names = at<char>(file, strtab.sh_offset, strtab.sh_size);
        const uint64_t count = dynsym.sh_size / sizeof(typename Elf::Sym);
        const auto* symbols = at<typename Elf::Sym>(file, dynsym.sh_offset, count);
        for (uint64_t s = 1; s < count; ++s) {
            const auto& sym = symbols[s];
            const unsigned bind = Elf::bind(sym.st_info);
            const unsigned vis = Elf::visibility(sym.st_other);
            if (sym.st_shndx == SHN_UNDEF) continue;
            if (bind != STB_GLOBAL && bind != STB_WEAK && bind != STB_GNU_UNIQUE) continue;
            if (vis != STV_DEFAULT && vis != STV_PROTECTED) continue;
            if (sym.st_name >= strtab.sh_size) throw std::runtime_error("bad symbol name");
            out.push_back({std::string(names + sym.st_name,
                                       strnlen(names + sym.st_name, strtab.sh_size - sym.st_name)),
                           Elf::type(sym.st_info) == STT_FUNC});
        }
    }
    if (!found) throw std::runtime_error("no .dynsym section");
    return out;
}

std::vector<Exported> exported_symbols(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + path);
    const std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (file.size() < EI_NIDENT || std::memcmp(file.data(), ELFMAG, SELFMAG) != 0)
        throw std::runtime_error(path + " is not an ELF file");
    if (file[EI_CLASS] == ELFCLASS64) return exported<Elf64>(file);
    if (file[EI_CLASS] == ELFCLASS32) return exported<Elf32>(file);
    throw std::runtime_error(path + ": unknown ELF class");
}

// PLEXUS_TEST_PLUGINS as (name, path) pairs.
std::vector<std::pair<std::string, std::string>> plugins() {
    const char* list = std::getenv("PLEXUS_TEST_PLUGINS");
    std::vector<std::pair<std::string, std::string>> out;
    std::istringstream in(list ? list : "");
    for (std::string item; std::getline(in, item, ':');) {
        const auto eq = item.find('=');
        if (eq != std::string::npos) out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    }
    return out;
}

} // namespace

TEST_CASE("every built plugin exports plx_plugin_init alone") {
    const auto list = plugins();
    REQUIRE_MESSAGE(!list.empty(), "PLEXUS_TEST_PLUGINS names no plugin");
    for (const auto& [name, path] : list) {
        CAPTURE(name);
        CAPTURE(path);
        std::vector<Exported> symbols;
        REQUIRE_NOTHROW(symbols = exported_symbols(path));
        std::set<std::string> others;
        bool entry = false;
        for (const Exported& s : symbols) {
            if (s.name == "plx_plugin_init" && s.function)
                entry = true;
            else
                others.insert(s.name);
        }
        CHECK_MESSAGE(entry, name << " does not export the function plx_plugin_init");
        std::string extra;
        for (const std::string& s : others)
            extra += (extra.empty() ? "" : ", ") + s;
        CHECK_MESSAGE(others.empty(),
                      name << " also exports " << others.size() << " symbol(s): " << extra);
    }
}
