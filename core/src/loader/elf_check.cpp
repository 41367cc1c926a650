// check_elf: the ELF identity, type and machine, and that every segment the dynamic loader
// maps lies inside the file.
#include "loader/elf_check.hpp"

#include <cstring>
#include <elf.h>
#include <fstream>
#include <link.h>
#include <vector>

namespace plexus::detail {

namespace {

// The machine of the running process, read from its own headers.
int host_machine() {
    static const int machine = [] {
        std::ifstream in("/proc/self/exe", std::ios::binary);
        ElfW(Ehdr) h{};
        in.read(reinterpret_cast<char*>(&h), sizeof h);
        return in ? static_cast<int>(h.e_machine) : -1;
    }();
    return machine;
}

} // namespace

std::string check_elf(const std::string& path) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) return "cannot open the file";
    const auto size = static_cast<uint64_t>(in.tellg());
    in.seekg(0);
    ElfW(Ehdr) h{};
    if (size < sizeof h || !in.read(reinterpret_cast<char*>(&h), sizeof h))
        return "not an ELF file (only " + std::to_string(size) + " bytes)";
    if (std::memcmp(h.e_ident, ELFMAG, SELFMAG) != 0) return "not an ELF file (bad magic number)";
#if __SIZEOF_POINTER__ == 8
    const int want_class = ELFCLASS64;
#else
    const int want_class = ELFCLASS32;
#endif
    if (h.e_ident[EI_CLASS] != want_class)
        return want_class == ELFCLASS64 ? "a 32-bit library in a 64-bit process"
                                        : "a 64-bit library in a 32-bit process";
    if (h.e_type != ET_DYN)
        return "an ELF file that is not a shared library (e_type " + std::to_string(h.e_type) + ")";
    if (host_machine() >= 0 && h.e_machine != host_machine())
        return "built for another machine (e_machine " + std::to_string(h.e_machine) +
               ", this process is " + std::to_string(host_machine()) + ")";
    if (h.e_phentsize != sizeof(ElfW(Phdr)) || h.e_phnum == 0)
        return "corrupt ELF header (program header size " + std::to_string(h.e_phentsize) + ")";
    const uint64_t ph_end = uint64_t(h.e_phoff) + uint64_t(h.e_phnum) * h.e_phentsize;
    if (ph_end > size)
        return "truncated ELF file: its program headers end at byte " + std::to_string(ph_end) +
               " but the file has " + std::to_string(size);
    std::vector<ElfW(Phdr)> ph(h.e_phnum);
    in.seekg(static_cast<std::streamoff>(h.e_phoff));
    if (!in.read(reinterpret_cast<char*>(ph.data()),
                 static_cast<std::streamsize>(ph.size() * sizeof(ElfW(Phdr)))))
        return "cannot read the program headers";
    for (size_t i = 0; i < ph.size(); ++i) {
        if (ph[i].p_type != PT_LOAD && ph[i].p_type != PT_DYNAMIC) continue;
        const uint64_t end = uint64_t(ph[i].p_offset) + ph[i].p_filesz;
        if (end < ph[i].p_offset || end > size)
            return "truncated ELF file: segment " + std::to_string(i) + " ends at byte " +
                   std::to_string(end) + " but the file has " + std::to_string(size);
    }
    return {};
}

} // namespace plexus::detail
