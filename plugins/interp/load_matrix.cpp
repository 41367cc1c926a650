// The loader's matrix fragments: the kernel's "fragments" and its Matrix statements, checked as
// the core's FragmentDecl::check and validator check them (the collective rules are checked at
// run time, matrix.cpp); errors name the JSON path.
#include "loader.hpp"

namespace plx_interp {
namespace {

const char* use_name(FragmentUse u) {
    return u == FragmentUse::A ? "a" : u == FragmentUse::B ? "b" : "acc";
}
const char* layout_name(bool col) {
    return col ? "col" : "row";
}
std::string shape(const Fragment& f) {
    std::string s = "m"; // appended, not "m" + ...: GCC 12 warns falsely (-Wrestrict) on that
    s += std::to_string(f.m) + "n" + std::to_string(f.n) + "k" + std::to_string(f.k);
    return s;
}

// "" when the shape, use and type form a fragment some device has; else what is wrong.
std::string check(const Fragment& f) {
    const bool k16 = f.m == 16 && f.n == 16 && f.k == 16, k8 = f.m == 16 && f.n == 16 && f.k == 8;
    if (!k16 && !k8) return "shape " + shape(f) + " (fragments are m16n16k16 or m16n16k8)";
    const std::string what =
        std::string(f.use == FragmentUse::Acc ? "an accumulator" : "an A or B fragment") + " of " +
        ty_name(f.type) + " at " + shape(f);
    if (f.use == FragmentUse::Acc) {
        if (f.type == Ty::F32 || (f.type == Ty::F16 && k16)) return {};
        return what + " (accumulators are f32, or f16 at m16n16k16)";
    }
    if (k16 && ty_half(f.type)) return {};
    if (k8 && f.type == Ty::F32) return {};
    return what + " (A and B are f16 or bf16 at m16n16k16, tf32 as f32 at m16n16k8)";
}

bool is_integer(Ty t) {
    return ty_integer(t);
}

} // namespace

// "fragments": [{"name", "use": a | b | acc, "m", "n", "k", "type", "layout" (A and B only)}]
void Loader::fragments(const json& j) {
    const json& decls = list(j, "", "fragments");
    for (size_t i = 0; i < decls.size(); ++i) {
        const std::string path = at("fragments", i);
        const json& jf = decls[i];
        keys(jf, path, {"name", "use", "m", "n", "k", "type", "layout"});
        Fragment f{};
        f.name = str(jf, path, "name");
        if (f.name.empty()) fail(path + ".name", "empty fragment name");
        if (array_named(f.name) || lookup(f.name) || fragment_named(f.name))
            fail(path + ".name", "the name \"" + f.name + "\" is declared twice");
        const std::string use = str(jf, path, "use");
        if (use == "a")
            f.use = FragmentUse::A;
        else if (use == "b")
            f.use = FragmentUse::B;
        else if (use == "acc")
            f.use = FragmentUse::Acc;
        else
            fail(path + ".use", "unknown fragment use \"" + use + "\" (expected a, b or acc)");
        f.m = count(field(jf, path, "m"), path + ".m");
        f.n = count(field(jf, path, "n"), path + ".n");
        f.k = count(field(jf, path, "k"), path + ".k");
        const TypeId t = type(jf, path);
        f.type = types_.scalar(t);
        if (f.type == Ty::Void)
            fail(path + ".type", "a fragment of " + name_of(t) + " (fragments hold numbers)");
        if (f.use != FragmentUse::Acc) {
            const std::string layout = str(jf, path, "layout");
            if (layout != "row" && layout != "col")
                fail(path + ".layout", "unknown layout \"" + layout + "\" (expected row or col)");
            f.col = layout == "col";
        } else if (jf.contains("layout")) {
            fail(path + ".layout",
                 "an accumulator has no declared layout (its loads and stores name one)");
        }
        if (const std::string bad = check(f); !bad.empty())
            fail(path, "fragment \"" + f.name + "\" is " + bad);
        f.rows = f.use == FragmentUse::B ? f.k : f.m;
        f.cols = f.use == FragmentUse::A ? f.k : f.n;
        f.offset = p_.fragment_elements;
        p_.fragment_elements += f.rows * f.cols;
        p_.fragments.push_back(std::move(f));
    }
    const uint64_t bytes = p_.private_bytes + uint64_t(p_.fragment_elements) * sizeof(float);
    if (bytes > kPrivateBytes)
        fail("fragments",
             "fragments and private arrays of " + std::to_string(bytes) +
                 " bytes per work-item (each work-item holds every tile where no matrix unit "
                 "runs them), above the interpreter's limit of " +
                 std::to_string(kPrivateBytes) + " (CUDA's local memory per thread)");
}

uint32_t Loader::fragment(const json& j, const std::string& path, const char* key) const {
    const std::string name = str(j, path, key);
    const Fragment* f = fragment_named(name);
    if (!f) fail(path + "." + key, "\"" + name + "\" is not a declared fragment");
    return static_cast<uint32_t>(f - p_.fragments.data());
}

// {"stmt": "Matrix", "op": fill | load | store | mma, "fragment", then per op: "value"; "array",
// "space", "index", "stride", "layout"; "a", "b", "c"}.
void Loader::matrix(StmtNode& n, const json& j, const std::string& jp) {
    const std::string op = str(j, jp, "op");
    MatrixStmt ms{};
    ms.frag = fragment(j, jp, "fragment");
    const Fragment& f = p_.fragments[ms.frag];
    const std::string what = op + " of fragment \"" + f.name + "\"";
    if (op == "fill") {
        keys(j, jp, {"stmt", "op", "fragment", "value"});
        ms.op = MatrixOp::Fill;
        n.e0 = scalar(j, jp, "value", ty_arithmetic, "a number");
    } else if (op == "load" || op == "store") {
        keys(j, jp, {"stmt", "op", "fragment", "array", "space", "index", "stride", "layout"});
        ms.op = op == "load" ? MatrixOp::Load : MatrixOp::Store;
        if (ms.op == MatrixOp::Store && f.use != FragmentUse::Acc)
            fail(jp + ".fragment", what + ": only accumulators are stored (\"" + f.name + "\" is " +
                                       (f.use == FragmentUse::A ? "an A" : "a B") + " fragment)");
        ms.array = array(j, jp, ms.op == MatrixOp::Store);
        const Array& a = p_.arrays[ms.array];
        if (a.space == Space::Private)
            fail(jp + ".space", "fragment \"" + f.name +
                                    "\": a fragment loads from and stores to a buffer or a "
                                    "shared array, not the private array \"" +
                                    a.name + "\"");
        if (array_types_[ms.array] != Types::of(f.type))
            fail(jp + ".array", what + ": \"" + a.name + "\" holds " + a.type_name +
                                    ", the fragment " + ty_name(f.type));
        const std::string layout = str(j, jp, "layout");
        if (layout != "row" && layout != "col")
            fail(jp + ".layout", "unknown layout \"" + layout + "\" (expected row or col)");
        ms.col = layout == "col";
        if (f.use != FragmentUse::Acc && ms.col != f.col)
            fail(jp + ".layout", what + " reads " + layout +
                                     "-major memory, the fragment is declared " +
                                     layout_name(f.col) + "-major");
        n.e0 = scalar(j, jp, "index", is_integer, "an integer");
        n.e1 = scalar(j, jp, "stride", is_integer, "an integer");
    } else if (op == "mma") {
        keys(j, jp, {"stmt", "op", "fragment", "a", "b", "c"});
        ms.op = MatrixOp::Mma;
        ms.a = fragment(j, jp, "a");
        ms.b = fragment(j, jp, "b");
        ms.c = fragment(j, jp, "c");
        const Fragment &a = p_.fragments[ms.a], &b = p_.fragments[ms.b], &c = p_.fragments[ms.c];
        if (a.use != FragmentUse::A || b.use != FragmentUse::B || c.use != FragmentUse::Acc ||
            f.use != FragmentUse::Acc)
            fail(jp, "mma takes an A, a B and an accumulator into an accumulator (\"" + f.name +
                         "\" (" + use_name(f.use) + ") = \"" + a.name + "\" (" + use_name(a.use) +
                         ") x \"" + b.name + "\" (" + use_name(b.use) + ") + \"" + c.name + "\" (" +
                         use_name(c.use) + "))");
        if (shape(a) != shape(f) || shape(b) != shape(f) || shape(c) != shape(f))
            fail(jp, "mma of fragments of different shapes (" + shape(a) + ", " + shape(b) + ", " +
                         shape(c) + " into " + shape(f) + ")");
        if (a.type != b.type)
            fail(jp,
                 std::string("mma of A of ") + ty_name(a.type) + " and B of " + ty_name(b.type));
        if (c.type != f.type)
            fail(jp, std::string("mma adds an accumulator of ") + ty_name(c.type) +
                         " into one of " + ty_name(f.type));
        if (f.type == Ty::F16 && a.type != Ty::F16)
            fail(jp, std::string("an f16 accumulator takes f16 products, not ") + ty_name(a.type));
    } else {
        fail(jp + ".op", "unknown matrix op \"" + op + "\" (expected fill, load, store or mma)");
    }
    n.kind = StmtKind::Matrix;
    n.first = static_cast<uint32_t>(p_.matrices.size());
    p_.matrices.push_back(ms);
}

} // namespace plx_interp
