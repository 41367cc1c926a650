// The nvptx64 target of the shared LLVM lowering: one kernel function with buffers as global
// (addrspace 1) pointers and shared arrays as addrspace 3 globals (parts of the dynamic shared
// array past 48 KiB), the indices from special registers, bar.sync and membar, and math from
// libdevice or the special-function unit.
#include "ptx_target.hpp"

#include "codegen/cuda_shared.hpp"
#include "codegen/llvm/lowering.hpp"
#include "plexus/catalog.hpp"

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace plexus::codegen::ptx {
namespace {

using namespace plexus::ir;
using llvm::Value;

constexpr unsigned global_space = 1;
constexpr unsigned shared_space = 3;

class PtxLowering final : public LlvmLowering {
public:
    PtxLowering(const Kernel& kernel, const Options& options, llvm::Module& module, bool libdevice,
                int sm, bool wgmma)
        : LlvmLowering(kernel, options, module, "PTX generation"), libdevice_(libdevice), sm_(sm),
          wgmma_(wgmma), warpgroup_(kernel.has_warpgroup()) {}

    // One nvvm.annotations entry on the kernel function.
    void annotate(const char* key, uint32_t value) {
        m_.getOrInsertNamedMetadata("nvvm.annotations")
            ->addOperand(
                llvm::MDNode::get(c_, {llvm::ValueAsMetadata::get(f_), llvm::MDString::get(c_, key),
                                       llvm::ConstantAsMetadata::get(b_.getInt32(value))}));
    }
    // The declared work-group size, as .reqntid (a required shape) or .maxntid (a most-items
    // bound), only where it can matter for launching: without one ptxas uses at most 255
    // registers a thread, and a group of up to 256 threads then always fits the 64K-register
    // file. Below that the hint costs speed: ptxas then holds matmul_tiled to fewer registers
    // (docs/benchmarks.md, "What the figures taught"). A kernel that
    // asks for several groups per multiprocessor gets its bound and .minnctapersm at any size.
    void annotate_work_group() {
        const auto& bound = k_.work_group;
        // Groups per multiprocessor asked for: the bound and .minnctapersm, whatever its size.
        if (bound.items() <= codegen::unbounded_group_items && !bound.min_groups) return;
        if (bound.min_groups) annotate("minctasm", bound.min_groups);
        if (bound.required[0]) {
            annotate("reqntidx", bound.required[0]);
            annotate("reqntidy", bound.required[1]);
            annotate("reqntidz", bound.required[2]);
        } else {
            annotate("maxntidx", bound.max);
        }
    }

    void run() {
        // A scalar argument arrives in its memory form: an f16 is its 2 bytes.
        std::vector<llvm::Type*> params;
        for (auto& p : k_.params)
            params.push_back(p.kind == Param::Kind::Buffer ? b_.getPtrTy(global_space)
                                                           : mem_type(p.type));
        auto* type = llvm::FunctionType::get(b_.getVoidTy(), params, false);
        f_ = llvm::Function::Create(type, llvm::Function::ExternalLinkage, k_.name, m_);
        // LLVM 19's NVPTX reads nvvm.annotations first and the calling convention second;
        // setting both keeps the kernel a kernel whichever a later LLVM prefers.
        f_->setCallingConv(llvm::CallingConv::PTX_Kernel);
        f_->addFnAttr(llvm::Attribute::NoUnwind);
        annotate("kernel", 1);
        annotate_work_group();

        alloca_block_ = new_block("entry");
        b_.SetInsertPoint(alloca_block_);
        for (size_t i = 0; i < k_.params.size(); ++i) {
            const Param& p = k_.params[i];
            llvm::Argument* arg = f_->getArg(unsigned(i));
            arg->setName(p.name);
            const bool buffer = p.kind == Param::Kind::Buffer;
            buffers_.push_back(buffer ? arg : nullptr);
            // A scalar may be assigned like a variable; mem2reg removes the slot otherwise.
            if (!buffer) declare(p.name, p.type, from_mem(arg, p.type));
        }
        // Past CUDA's 48 KiB of static shared memory, the arrays are parts of one dynamic
        // (extern) array that the launch sizes (codegen::cuda_dynamic_shared).
        if (const CudaDynamicShared dynamic = cuda_dynamic_shared(k_); dynamic.bytes) {
            auto* bytes = llvm::ArrayType::get(b_.getInt8Ty(), 0);
            auto* all = new llvm::GlobalVariable(
                m_, bytes, false, llvm::GlobalValue::ExternalLinkage, nullptr, "plx_dynamic_shared",
                nullptr, llvm::GlobalValue::NotThreadLocal, shared_space);
            all->setAlignment(llvm::Align(dynamic.align));
            for (uint64_t offset : dynamic.offsets)
                shared_.push_back(llvm::ConstantExpr::getInBoundsGetElementPtr(
                    b_.getInt8Ty(), all, b_.getInt64(offset)));
        } else {
            for (auto& s : k_.shared) {
                auto* array_type = array_of(s.type, s.count);
                // Shared memory cannot be initialized on the GPU: undef is the only initializer
                // NVPTX accepts.
                auto* global = new llvm::GlobalVariable(
                    m_, array_type, false, llvm::GlobalValue::InternalLinkage,
                    llvm::UndefValue::get(array_type), s.name, nullptr,
                    llvm::GlobalValue::NotThreadLocal, shared_space);
                // 32 bytes where matrix fragments may load from it (wmma's alignment).
                // 1024 for a swizzled array (the tensor cores swizzle by the address bits).
                global->setAlignment(std::max(llvm::Align(s.swizzle              ? 1024
                                                          : k_.fragments.empty() ? 16
                                                                                 : 32),
                                              align_of(s.type)));
                shared_.push_back(global);
            }
        }
        stmt(k_.body);
        b_.CreateRetVoid();

        std::string problems;
        llvm::raw_string_ostream os(problems);
        if (llvm::verifyFunction(*f_, &os)) internal("invalid LLVM IR: " + os.str());
    }

private:
    const bool libdevice_;
    const int sm_;         // the architecture: 90 for sm_90
    const bool wgmma_;     // the target is sm_90a: warpgroup accumulators on wgmma
    const bool warpgroup_; // the kernel has warpgroup accumulators

    // cvt.rn.f16.f32 and cvt.f32.f16 on every architecture; cvt.rn.bf16.f32 from sm_80 on,
    // below it the base's integer code. A bf16 widens by a shift either way.
    Value* half_from_f32(Value* f, Scalar t) override {
        if (t == Scalar::F16 || sm_ >= 80) return half_by_fptrunc(f, t);
        return LlvmLowering::half_from_f32(f, t);
    }
    Value* half_to_f32(Value* bits, Scalar t) override {
        if (t == Scalar::F16 || sm_ >= 80) return half_by_fpext(bits, t);
        return LlvmLowering::half_to_f32(bits, t);
    }

    // An f16 or bf16 variable keeps its bits: a value copied through it (loaded, maybe
    // selected against a constant, stored) then converts nothing, where an f32 home made
    // every copy a cvt pair that LLVM cannot fold through the phis of a branch or a loop
    // (matmul_f16's copy of a slice carried 64 per work-item). Arithmetic converts as before:
    // a rounded value's bits are at hand when it is written, and a read widens once.
    static bool half_home(const Type& t) { return !t.is_aggregate() && is_half(t.scalar()); }
    size_t new_variable(const std::string& name, const Type& t) override {
        if (!half_home(t)) return LlvmLowering::new_variable(name, t);
        variables_.push_back({t, entry_alloca(mem_type(t), name)});
        return variables_.size() - 1;
    }
    Value* read_variable(size_t id) override {
        const Variable& v = variables_[id];
        if (!half_home(v.type)) return LlvmLowering::read_variable(id);
        return from_mem(b_.CreateLoad(mem_type(v.type), v.home), v.type);
    }
    void write_variable(size_t id, Value* v) override {
        const Variable& var = variables_[id];
        if (!half_home(var.type)) return LlvmLowering::write_variable(id, v);
        b_.CreateStore(to_mem(v, var.type), var.home);
    }

    // A non-overloaded NVVM intrinsic, by name.
    Value* nvvm(const std::string& name, llvm::ArrayRef<Value*> args = {}) {
        llvm::Intrinsic::ID id = llvm::Function::lookupIntrinsicID(name);
        if (id == llvm::Intrinsic::not_intrinsic) internal("LLVM 19 has no intrinsic " + name);
        return b_.CreateCall(llvm::Intrinsic::getDeclaration(&m_, id), args);
    }
    // The catalog's NVVM spelling of an intrinsic ("local_id_x": llvm.nvvm.read.ptx.sreg.tid.x).
    Value* catalog(const std::string& name) {
        const IntrinsicInfo* info = find_intrinsic(name);
        if (!info || info->nvvm.empty()) internal("intrinsic '" + name + "' has no PTX lowering");
        return nvvm(info->nvvm);
    }
    Value* sreg(const char* what, unsigned d) {
        return catalog(std::string(what) + "_" + char('x' + d));
    }

    Value* local_id(unsigned d) override { return sreg("local_id", d); }
    Value* local_size(unsigned d) override { return sreg("local_size", d); }
    Value* group_id(unsigned d) override {
        return b_.CreateZExt(sreg("group_id", d), b_.getInt64Ty());
    }
    Value* num_groups(unsigned d) override {
        return b_.CreateZExt(sreg("num_groups", d), b_.getInt64Ty());
    }
    // ---- matrix fragments: NVVM's wmma intrinsics (wmma.load / mma / store.d), each
    // fragment an array of its registers in the entry block, which SROA makes registers.
    struct Fragment {
        llvm::Type* reg = nullptr;
        unsigned count = 0;
        llvm::AllocaInst* home = nullptr;
    };
    std::map<std::string, Fragment> fragments_;

    Fragment& fragment(const std::string& name) {
        Fragment& f = fragments_[name];
        if (f.home) return f;
        const FragmentDecl& d = *k_.fragment(name);
        if (d.warpgroup()) { // wgmma's accumulator: N / 2 f32 registers a lane
            f.reg = b_.getFloatTy();
            f.count = d.n / 2;
        } else if (d.use == MatrixUse::Acc) {
            f.reg = d.type == Scalar::F32 ? b_.getFloatTy()
                                          : llvm::FixedVectorType::get(b_.getHalfTy(), 2);
            f.count = d.type == Scalar::F32 ? 8 : 4;
        } else {
            f.reg = d.type == Scalar::F16
                        ? static_cast<llvm::Type*>(llvm::FixedVectorType::get(b_.getHalfTy(), 2))
                        : b_.getInt32Ty();
            f.count = d.type == Scalar::F16 ? 8 : 4;
        }
        f.home = entry_alloca(llvm::ArrayType::get(f.reg, f.count), name);
        return f;
    }
    Value* reg_slot(Fragment& f, unsigned i) {
        return b_.CreateConstInBoundsGEP2_32(f.home->getAllocatedType(), f.home, 0, i);
    }
    std::vector<Value*> registers(const std::string& name) {
        Fragment& f = fragment(name);
        std::vector<Value*> v;
        for (unsigned i = 0; i < f.count; ++i)
            v.push_back(b_.CreateLoad(f.reg, reg_slot(f, i)));
        return v;
    }
    void set_registers(const std::string& name, Value* call) {
        Fragment& f = fragment(name);
        for (unsigned i = 0; i < f.count; ++i)
            b_.CreateStore(b_.CreateExtractValue(call, i), reg_slot(f, i));
    }
    static std::string wmma_type(const FragmentDecl& d) {
        return d.use != MatrixUse::Acc && d.type == Scalar::F32 ? "tf32" : to_string(d.type);
    }
    // An NVVM intrinsic by its full name; `overload` is the pointer type of a load or store.
    Value* wmma(const std::string& name, llvm::ArrayRef<Value*> args,
                llvm::Type* overload = nullptr) {
        llvm::Intrinsic::ID id = llvm::Function::lookupIntrinsicID(name);
        if (id == llvm::Intrinsic::not_intrinsic) internal("LLVM 19 has no intrinsic " + name);
        llvm::Function* fn = overload ? llvm::Intrinsic::getDeclaration(&m_, id, {overload})
                                      : llvm::Intrinsic::getDeclaration(&m_, id);
        return b_.CreateCall(fn, args);
    }

    void matrix(const Matrix& n) override {
        const FragmentDecl& d = *k_.fragment(n.frag);
        // f16 (with either accumulator) from sm_70; bf16, the tf32 shape and warpgroup
        // accumulators from sm_80.
        const int needs = d.type == Scalar::BF16 || d.k == 8 || d.warpgroup() ? 80 : 70;
        if (sm_ < needs)
            fail(ErrorCode::Unsupported, std::string("matrix fragments ") + d.intrinsic() +
                                             " need sm_" + std::to_string(needs) +
                                             ", the target is sm_" + std::to_string(sm_));
        switch (n.op) {
        case MatrixOp::Fill: {
            if (d.warpgroup()) wgmma_drain(n.frag);
            Value* v = cast(expr(n.value), n.value->type,
                            Type(d.type)); // register form: f32 for f16 / bf16
            Fragment& f = fragment(n.frag);
            Value* reg = nullptr;
            if (f.reg->isFloatTy())
                reg = v;
            else if (d.type == Scalar::F32)
                reg = b_.CreateBitCast(v, b_.getInt32Ty()); // tf32
            else if (d.type == Scalar::F16) {
                Value* h = b_.CreateBitCast(half_from_f32(v, Scalar::F16), b_.getHalfTy());
                reg = b_.CreateVectorSplat(2, h);
            } else { // bf16: the bits twice in one i32
                Value* bits = b_.CreateZExt(half_from_f32(v, Scalar::BF16), b_.getInt32Ty());
                reg = b_.CreateOr(bits, b_.CreateShl(bits, 16));
            }
            for (unsigned i = 0; i < f.count; ++i)
                b_.CreateStore(reg, reg_slot(f, i));
            return;
        }
        case MatrixOp::Load:
        case MatrixOp::Store: {
            if (d.warpgroup()) return warpgroup_store(n); // the validator allows no load
            const bool load = n.op == MatrixOp::Load;
            const MatrixLayout layout = d.use == MatrixUse::Acc ? n.layout : d.layout;
            const char* which = !load                   ? "d"
                                : d.use == MatrixUse::A ? "a"
                                : d.use == MatrixUse::B ? "b"
                                                        : "c";
            const std::string name = "llvm.nvvm.wmma." + d.shape() + (load ? ".load." : ".store.") +
                                     which + "." + to_string(layout) + ".stride." + wmma_type(d);
            Value* address = element_address(n.array, n.space, n.index);
            Value* stride =
                b_.CreateIntCast(expr(n.stride), b_.getInt32Ty(), is_signed(n.stride->type));
            if (load) {
                set_registers(n.frag, wmma(name, {address, stride}, address->getType()));
            } else {
                std::vector<Value*> args{address};
                for (Value* r : registers(n.frag))
                    args.push_back(r);
                args.push_back(stride);
                wmma(name, args, address->getType());
            }
            return;
        }
        case MatrixOp::Mma: {
            const FragmentDecl &a = *k_.fragment(n.a), &b = *k_.fragment(n.b),
                               &c = *k_.fragment(n.c);
            // f16 products name the accumulators' types (.f32.f32), the others their inputs'
            // (.bf16).
            std::string name = "llvm.nvvm.wmma." + d.shape() + ".mma.";
            name.append(to_string(a.layout)).append(".").append(to_string(b.layout)).append(".");
            if (a.type == Scalar::F16)
                name.append(to_string(d.type)).append(".").append(to_string(c.type));
            else
                name.append(wmma_type(a));
            std::vector<Value*> args;
            for (const std::string* f : {&n.a, &n.b, &n.c})
                for (Value* r : registers(*f))
                    args.push_back(r);
            set_registers(n.frag, wmma(name, args));
            return;
        }
        case MatrixOp::MmaShared:
            if (wgmma_)
                wgmma(n, d);
            else
                mma_sync_shared(n, d);
            return;
        }
    }

    // ---- warpgroup accumulators (m64nNk16). A subgroup's 16 rows are N / 2 f32 registers in
    // wgmma's accumulator layout (PTX ISA, "Matrix Fragments for wgmma.mma_async.m64nNk16"):
    // register i of lane l holds row 8 * (i / 2 % 2) + l / 4 and column 8 * (i / 4) + 2 * (l %
    // 4) + i % 2 of the subgroup's part, the rows 16 * (warp % 4) .. of the tile. Each 8 columns
    // are mma.m16n8k16's C fragment, so the sm_80 path uses the same registers.
    Value* i32_of(const Expr& e) {
        return b_.CreateIntCast(expr(e), b_.getInt32Ty(), is_signed(e->type));
    }
    Value* quarter_row() { // 16 * (warp % 4)
        return b_.CreateShl(b_.CreateAnd(b_.CreateLShr(linear_local_id(), 5), b_.getInt32(3)), 4,
                            "quarter_row");
    }
    // The byte offset of [r][c] in a swizzled array: the panel, the row, the byte in the row;
    // `swizzled` applies the chunk permutation (the tensor cores apply it themselves to a
    // descriptor's addresses).
    Value* swizzled_bytes(const ArrayDecl& a, Value* r, Value* c, bool swizzled) {
        const uint32_t size = size_of(a.type.scalar()), per_row = 128 / size;
        Value* panel =
            b_.CreateMul(b_.CreateUDiv(c, b_.getInt32(per_row)), b_.getInt32(a.dims[0] * 128));
        Value* in_row = b_.CreateMul(b_.CreateURem(c, b_.getInt32(per_row)), b_.getInt32(size));
        if (swizzled)
            in_row = b_.CreateXor(in_row, b_.CreateShl(b_.CreateAnd(r, b_.getInt32(7)), 4));
        return b_.CreateAdd(b_.CreateAdd(panel, b_.CreateMul(r, b_.getInt32(128))), in_row);
    }
    Value* shared_start(const std::string& array) {
        return element_address(array, Space::Local, Const::make_int(Scalar::I64, 0));
    }

    // Each lane stores its registers' elements (pairs of adjacent columns as one 8-byte store
    // where both are inside and the address is aligned), under the bounds when there are any.
    void warpgroup_store(const Matrix& n) {
        wgmma_drain(n.frag);
        Fragment& f = fragment(n.frag);
        llvm::Type* i64 = b_.getInt64Ty();
        Value* lane = lane_id();
        Value* row0 = b_.CreateAdd(quarter_row(), b_.CreateLShr(lane, 2));
        Value* col0 = b_.CreateShl(b_.CreateAnd(lane, b_.getInt32(3)), 1);
        Value* index = b_.CreateIntCast(expr(n.index), i64, is_signed(n.index->type));
        Value* stride = b_.CreateIntCast(expr(n.stride), i64, is_signed(n.stride->type));
        Value* rows =
            n.rows ? b_.CreateIntCast(expr(n.rows), i64, is_signed(n.rows->type)) : nullptr;
        Value* cols =
            n.cols ? b_.CreateIntCast(expr(n.cols), i64, is_signed(n.cols->type)) : nullptr;
        // Pairs go out whole when the first of them lands on an even element of 8-byte elements.
        Value* even = b_.CreateICmpEQ(b_.CreateAnd(b_.CreateOr(index, stride), b_.getInt64(1)),
                                      b_.getInt64(0));
        Value* base = element_address(n.array, n.space, Const::make_int(Scalar::I64, 0));
        llvm::Type* f32 = b_.getFloatTy();
        for (unsigned i = 0; i < f.count; i += 2) {
            Value* r = b_.CreateZExt(b_.CreateAdd(row0, b_.getInt32(8 * (i / 2 % 2))), i64);
            Value* c = b_.CreateZExt(b_.CreateAdd(col0, b_.getInt32(8 * (i / 4))), i64);
            Value* at = b_.CreateAdd(index, b_.CreateAdd(b_.CreateMul(r, stride), c));
            Value* p = b_.CreateGEP(f32, base, at);
            Value *v0 = b_.CreateLoad(f32, reg_slot(f, i)),
                  *v1 = b_.CreateLoad(f32, reg_slot(f, i + 1));
            Value* row_in = rows ? b_.CreateICmpSLT(r, rows) : b_.getTrue();
            Value* first_in = cols ? b_.CreateAnd(row_in, b_.CreateICmpSLT(c, cols)) : row_in;
            Value* second_in =
                cols ? b_.CreateAnd(row_in, b_.CreateICmpSLT(b_.CreateAdd(c, b_.getInt64(1)), cols))
                     : row_in;
            llvm::BasicBlock *single = new_block("wg.single"), *second = new_block("wg.second"),
                             *done = new_block("wg.done");
            Value* pair = b_.CreateInsertElement(
                llvm::PoisonValue::get(llvm::FixedVectorType::get(f32, 2)), v0, uint64_t(0));
            store_if(b_.CreateAnd(second_in, even), b_.CreateInsertElement(pair, v1, uint64_t(1)),
                     p, 8, done, single);
            store_if(first_in, v0, p, 4, second, second);
            store_if(second_in, v1, b_.CreateGEP(f32, p, b_.getInt64(1)), 4, done, done);
            b_.SetInsertPoint(done);
        }
    }

    // if (cond) *at = v, then on to `next`; else to `otherwise`. Continues in `otherwise`.
    void store_if(Value* cond, Value* v, Value* at, unsigned align, llvm::BasicBlock* next,
                  llvm::BasicBlock* otherwise) {
        llvm::BasicBlock* yes = new_block("wg.store");
        b_.CreateCondBr(cond, yes, otherwise);
        b_.SetInsertPoint(yes);
        b_.CreateAlignedStore(v, at, llvm::Align(align));
        b_.CreateBr(next);
        b_.SetInsertPoint(otherwise);
    }

    // sm_90a: waits for every wgmma in flight (mma_shared with in_flight > 0), as an asm that
    // takes and gives back the accumulator's registers, so nothing reads them before it.
    void wgmma_drain(const std::string& frag) {
        if (!wgmma_) return;
        Fragment& f = fragment(frag);
        std::vector<Value*> args;
        std::vector<llvm::Type*> types(f.count, f.reg);
        std::string constraints;
        for (unsigned i = 0; i < f.count; ++i)
            constraints += "=f,";
        for (unsigned i = 0; i < f.count; ++i) {
            args.push_back(b_.CreateLoad(f.reg, reg_slot(f, i)));
            constraints += std::to_string(i) + (i + 1 < f.count ? "," : ",~{memory}");
        }
        auto* type = llvm::FunctionType::get(llvm::StructType::get(c_, types), types, false);
        set_registers(frag,
                      b_.CreateCall(llvm::InlineAsm::get(type, "wgmma.wait_group.sync.aligned 0;",
                                                         constraints, true),
                                    args));
    }

    static std::string operand_list(unsigned first, unsigned count) {
        std::string s = "{";
        for (unsigned i = 0; i < count; ++i)
            s += (i ? ", $" : "$") + std::to_string(first + i);
        return s + "}";
    }
    // A shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format"): the start's
    // shared address, the leading and stride byte offsets, each >> 4, and the 128-byte swizzle.
    Value* descriptor(Value* address, uint32_t leading, uint32_t stride) {
        llvm::Type* i64 = b_.getInt64Ty();
        Value* start =
            b_.CreateLShr(b_.CreateAnd(b_.CreateZExt(address, i64), b_.getInt64(0x3FFFF)), 4);
        const uint64_t fixed =
            uint64_t(leading >> 4) << 16 | uint64_t(stride >> 4) << 32 | uint64_t(1) << 62;
        return b_.CreateOr(start, b_.getInt64(fixed));
    }

    // sm_90a: one inline-asm block per mma_shared, so no other instruction touches the
    // accumulator between its wgmmas (ptxas would serialize them): fence, a wgmma per 16 of k
    // with A K-major (row-major) and B N-major (row-major, transposed: imm-trans-b 1), both in
    // the 128-byte swizzle, then commit and wait. A's descriptor steps 32 bytes along its rows
    // for each 16 of k, B's 16 rows; B's panels of 64 columns lie `rows` x 128 bytes apart.
    void wgmma(const Matrix& n, const FragmentDecl& d) {
        const ArrayDecl &a = *k_.shared_array(n.array), &bd = *k_.shared_array(n.array_b);
        Fragment& f = fragment(n.frag);
        Value* a_start = b_.CreatePtrToInt(shared_start(n.array), b_.getInt32Ty());
        Value* b_start = b_.CreatePtrToInt(shared_start(n.array_b), b_.getInt32Ty());
        Value *row_a = i32_of(n.row_a), *col_a = i32_of(n.col_a), *row_b = i32_of(n.row_b),
              *col_b = i32_of(n.col_b);
        const unsigned regs = f.count;
        std::vector<Value*> args;
        for (unsigned i = 0; i < regs; ++i)
            args.push_back(b_.CreateLoad(f.reg, reg_slot(f, i)));
        for (uint32_t s = 0; s < n.steps; ++s) {
            Value* at_a = b_.CreateAdd(
                a_start, swizzled_bytes(a, row_a, b_.CreateAdd(col_a, b_.getInt32(16 * s)), false));
            Value* at_b =
                b_.CreateAdd(b_start, swizzled_bytes(bd, b_.CreateAdd(row_b, b_.getInt32(16 * s)),
                                                     col_b, false));
            args.push_back(descriptor(at_a, 16, 1024));
            args.push_back(descriptor(at_b, bd.dims[0] * 128, 1024));
        }
        const std::string t = ir::to_string(a.type.scalar());
        std::string text = "{\n.reg .pred plx_p;\nsetp.ne.b32 plx_p, $" +
                           std::to_string(2 * regs + 2 * n.steps) +
                           ", 0;\nwgmma.fence.sync.aligned;\n";
        for (uint32_t s = 0; s < n.steps; ++s)
            text += "wgmma.mma_async.sync.aligned.m64n" + std::to_string(d.n) + "k16.f32." + t +
                    "." + t + " " + operand_list(0, regs) + ", $" +
                    std::to_string(2 * regs + 2 * s) + ", $" +
                    std::to_string(2 * regs + 2 * s + 1) + ", plx_p, 1, 1, 0, 1;\n";
        text += "wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned " +
                std::to_string(n.in_flight) + ";\n}";
        std::string constraints;
        for (unsigned i = 0; i < regs; ++i)
            constraints += "=f,";
        for (unsigned i = 0; i < regs; ++i)
            constraints += std::to_string(i) + ",";
        for (uint32_t s = 0; s < 2 * n.steps; ++s)
            constraints += "l,";
        constraints += "r,~{memory}";
        args.push_back(b_.getInt32(1));
        std::vector<llvm::Type*> outs(regs, f.reg), ins;
        for (Value* v : args)
            ins.push_back(v->getType());
        auto* fn_type = llvm::FunctionType::get(llvm::StructType::get(c_, outs), ins, false);
        Value* out = b_.CreateCall(
            llvm::InlineAsm::get(fn_type, text, constraints, /*hasSideEffects=*/true), args);
        set_registers(n.frag, out);
    }

    // sm_80 .. 89 (and GPUs past sm_90, which have no wgmma): per 16 of k, the subgroup's A
    // (16 x 16) by ldmatrix and each 16 columns of B by ldmatrix.trans from the swizzled
    // addresses, then an mma.m16n8k16 per 8 columns into the same registers.
    void mma_sync_shared(const Matrix& n, const FragmentDecl& d) {
        const ArrayDecl &a = *k_.shared_array(n.array), &bd = *k_.shared_array(n.array_b);
        Fragment& f = fragment(n.frag);
        const bool f16 = a.type == Scalar::F16;
        Value* lane = lane_id();
        Value* matrix = b_.CreateLShr(lane, 3); // which 8 x 8 matrix this lane addresses
        Value* row8 = b_.CreateAdd(b_.CreateShl(b_.CreateAnd(matrix, b_.getInt32(1)), 3),
                                   b_.CreateAnd(lane, b_.getInt32(7)));
        Value* col8 =
            b_.CreateShl(b_.CreateLShr(matrix, 1), 3); // + 8 for the lanes of matrices 2 and 3
        Value *row_a = b_.CreateAdd(b_.CreateAdd(i32_of(n.row_a), quarter_row()), row8),
              *col_a = i32_of(n.col_a);
        Value *row_b = b_.CreateAdd(i32_of(n.row_b), row8),
              *col_b = b_.CreateAdd(i32_of(n.col_b), col8);
        Value *a_start = shared_start(n.array), *b_start = shared_start(n.array_b);
        auto ldmatrix = [&](Value* start, Value* bytes, bool trans) {
            Value* p = b_.CreateGEP(b_.getInt8Ty(), start, bytes);
            Value* regs = wmma(std::string("llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.") +
                                   (trans ? "trans." : "") + "b16",
                               {p},
                               p->getType()); // overloaded on the pointer's address space
            std::vector<Value*> out;
            for (unsigned i = 0; i < 4; ++i) {
                Value* r = b_.CreateExtractValue(regs, i);
                out.push_back(
                    f16 ? b_.CreateBitCast(r, llvm::FixedVectorType::get(b_.getHalfTy(), 2)) : r);
            }
            return out;
        };
        const std::string mma =
            f16 ? "llvm.nvvm.mma.m16n8k16.row.col.f32.f32" : "llvm.nvvm.mma.m16n8k16.row.col.bf16";
        for (uint32_t s = 0; s < n.steps; ++s) {
            // Lanes 16 .. 31 address A's columns 8 .. 15 (matrices 2 and 3).
            std::vector<Value*> fa = ldmatrix(
                a_start,
                swizzled_bytes(a, row_a,
                               b_.CreateAdd(b_.CreateAdd(col_a, col8), b_.getInt32(16 * s)), true),
                false);
            for (uint32_t j = 0; j < d.n / 16; ++j) {
                Value* kb = b_.CreateAdd(row_b, b_.getInt32(16 * s));
                std::vector<Value*> fb = ldmatrix(
                    b_start, swizzled_bytes(bd, kb, b_.CreateAdd(col_b, b_.getInt32(16 * j)), true),
                    true);
                for (unsigned h = 0; h < 2; ++h) {
                    const unsigned first = 4 * (2 * j + h);
                    std::vector<Value*> args{fa[0], fa[1], fa[2], fa[3], fb[2 * h], fb[2 * h + 1]};
                    for (unsigned i = 0; i < 4; ++i)
                        args.push_back(b_.CreateLoad(f.reg, reg_slot(f, first + i)));
                    Value* out = nvvm(mma, args);
                    for (unsigned i = 0; i < 4; ++i)
                        b_.CreateStore(b_.CreateExtractValue(out, i), reg_slot(f, first + i));
                }
            }
        }
    }

    // ---- asynchronous copies (sm_80 on; below it ir::lower_async_copy has run): cp.async with
    // its src-size operand, `valid` elements in bytes, so the rest is zero-filled and not read.
    // 4 and 8 bytes go through L1 (.ca), 16 bytes bypass it (.cg), as cuBLAS's tiles do.
    void async_copy(const AsyncCopy& n) override {
        switch (n.op) {
        case AsyncCopyOp::Commit: nvvm("llvm.nvvm.cp.async.commit.group"); return;
        case AsyncCopyOp::Wait:
            nvvm("llvm.nvvm.cp.async.wait.group", {b_.getInt32(n.pending)});
            return;
        case AsyncCopyOp::Copy: {
            const uint32_t size = size_of(k_.param(n.buffer)->type.scalar()),
                           bytes = size * n.count;
            Value* dst = element_address(n.array, Space::Local, n.index);
            Value* src = element_address(n.buffer, Space::Global, n.src_index);
            Value* valid =
                b_.CreateIntCast(expr(n.valid), b_.getInt32Ty(), is_signed(n.valid->type));
            // Reading nothing, the copy still names an address: the buffer's start, which is
            // valid and aligned, stands in for one that may lie outside the buffer.
            Value* base = buffers_[size_t(k_.param(n.buffer) - k_.params.data())];
            src = b_.CreateSelect(b_.CreateICmpSGT(valid, b_.getInt32(0)), src, base);
            const std::string name = std::string("llvm.nvvm.cp.async.") +
                                     (bytes == 16 ? "cg" : "ca") + ".shared.global." +
                                     std::to_string(bytes) + ".s";
            nvvm(name, {dst, src, b_.CreateMul(valid, b_.getInt32(size))});
            return;
        }
        }
    }

    // With wgmma, what the work-items wrote to shared memory is made visible to the tensor
    // cores' (async) proxy before each barrier, so a warpgroup's wgmma after it reads it.
    void barrier() override {
        if (wgmma_ && warpgroup_) {
            auto* type = llvm::FunctionType::get(b_.getVoidTy(), false);
            b_.CreateCall(
                llvm::InlineAsm::get(type, "fence.proxy.async.shared::cta;", "~{memory}", true));
        }
        catalog("barrier");
    }
    void fence(const Fence& n) override { catalog(n.intrinsic()); }
    void return_from_item() override {
        b_.CreateRetVoid();
        b_.SetInsertPoint(new_block("after.return"));
    }

    // Subgroups are warps: 32 threads of consecutive linear id. Every warp instruction names
    // the lanes that take part, which in a group's partial last warp are the ones that exist.
    unsigned subgroup_width() const override { return 32; }
    Value* member_mask() {
        return b_.CreateLShr(b_.getInt32(~0u), b_.CreateSub(b_.getInt32(32), subgroup_lanes()),
                             "member_mask");
    }
    Value* shuffle32(Shuffle kind, Value* v, Value* arg) override {
        static const char* const names[] = {
            "llvm.nvvm.shfl.sync.idx.i32", "llvm.nvvm.shfl.sync.bfly.i32",
            "llvm.nvvm.shfl.sync.up.i32", "llvm.nvvm.shfl.sync.down.i32"};
        // The clamp operand: 0x1f bounds idx, bfly and down by the warp's last lane, 0 up by its
        // first.
        const uint32_t clamp = kind == Shuffle::Up ? 0 : 0x1f;
        return nvvm(names[int(kind)], {member_mask(), v, arg, b_.getInt32(clamp)});
    }
    Value* vote(Vote kind, Value* pred) override {
        if (kind == Vote::Ballot)
            return b_.CreateZExt(nvvm("llvm.nvvm.vote.ballot.sync", {member_mask(), pred}),
                                 b_.getInt64Ty());
        return nvvm(kind == Vote::Any ? "llvm.nvvm.vote.any.sync" : "llvm.nvvm.vote.all.sync",
                    {member_mask(), pred});
    }
    // From sm_80 a 32-bit integer reduction is one redux.sync; the rest is the shared lowering's.
    Value* subgroup(const std::string& name, Scalar t, const std::vector<Value*>& args) override {
        const bool word = t == Scalar::I32 || t == Scalar::U32;
        if (sm_ >= 80 && word && name.rfind("subgroup_reduce_", 0) == 0) {
            const std::string op = name.substr(16, name.size() - 16 - 4); // "add", "min", "max"
            const std::string suffix = op == "add" || t == Scalar::I32 ? op : "u" + op;
            return nvvm("llvm.nvvm.redux.sync." + suffix, {args[0], member_mask()});
        }
        return LlvmLowering::subgroup(name, t, args);
    }

    // PTX comes out of LLVM, so there is nowhere to splice backend source: only the portable
    // fallback can be used.
    void check_native(const Native& n) override {
        if (!n.fallback && (n.code.count(options_.backend) || n.code.count("cuda")))
            invalid("native CUDA code needs the CUDA C path (cuda.compiler = nvrtc): the PTX "
                    "generator cannot compile it, and the native block has no fallback");
        LlvmLowering::check_native(n);
    }

    // libdevice's __nv_* functions (accuracy in ptx_codegen.cpp); without it, f32 only.
    Value* transcendental(const std::string& base, Scalar t,
                          const std::vector<Value*>& args) override {
        if (base == "hypot" && t == Scalar::F64) return hypot_f64(args[0], args[1]);
        if (libdevice_) {
            std::vector<llvm::Type*> types;
            for (Value* a : args)
                types.push_back(a->getType());
            auto callee =
                m_.getOrInsertFunction("__nv_" + base + (t == Scalar::F32 ? "f" : ""),
                                       llvm::FunctionType::get(reg_type(t), types, false));
            return b_.CreateCall(callee, args);
        }
        if (t != Scalar::F32)
            fail(ErrorCode::Unsupported, "intrinsic '" + base + "_" + to_string(t) +
                                             "' needs libdevice (libdevice.10.bc), "
                                             "which was not found (looked in " +
                                             libdevice().path +
                                             "; set CUDA_HOME or PLEXUS_LIBDEVICE)");
        return approximate_f32(base, args);
    }

    // px::fast:: functions: the special-function unit, libdevice or not, as CUDA's __expf
    // class (exp10 as ex2(x * log2 10), as __exp10f; tan = sin / cos with an approximate
    // division, as __tanf); ptx_codegen.cpp states the error of each instruction.
    Value* fast_math(const std::string& base, const std::vector<Value*>& args) override {
        auto f = [&](double v) { return llvm::ConstantFP::get(b_.getFloatTy(), v); };
        const double log2_10 = 3.321928094887362, log10_2 = 0.30102999566398120;
        Value* x = args[0];
        if (base == "exp10") return nvvm("llvm.nvvm.ex2.approx.f", b_.CreateFMul(x, f(log2_10)));
        if (base == "log10") return b_.CreateFMul(nvvm("llvm.nvvm.lg2.approx.f", x), f(log10_2));
        if (base == "sqrt") return nvvm("llvm.nvvm.sqrt.approx.f", x);
        if (base == "divide") return nvvm("llvm.nvvm.div.approx.f", {x, args[1]});
        if (base == "recip") return nvvm("llvm.nvvm.div.approx.f", {f(1.0), x});
        if (base == "tan")
            return nvvm("llvm.nvvm.div.approx.f",
                        {nvvm("llvm.nvvm.sin.approx.f", x), nvvm("llvm.nvvm.cos.approx.f", x)});
        return approximate_f32(base, args);
    }

    // libdevice's __nv_hypot overflows to inf at (4.9e-324, 1.8e308), whose result is 1.8e308
    // (tests/core/kernel/math, on the H100): max * sqrt(1 + (min / max)^2) instead, under 2 ulp (a
    // sweep of 2 million inputs of the same formula on the host: 1.97) where the bound is 4, with
    // C's special values (an infinity wins over NaN).
    Value* hypot_f64(Value* x, Value* y) {
        llvm::Type* f64 = b_.getDoubleTy();
        auto c = [&](double v) { return llvm::ConstantFP::get(f64, v); };
        Value* a = call_intrinsic(llvm::Intrinsic::fabs, f64, {x});
        Value* b = call_intrinsic(llvm::Intrinsic::fabs, f64, {y});
        Value* hi = call_intrinsic(llvm::Intrinsic::maxnum, f64, {a, b});
        Value* lo = call_intrinsic(llvm::Intrinsic::minnum, f64, {a, b});
        Value* r = b_.CreateFDiv(lo, hi);
        Value* h = b_.CreateFMul(
            hi, call_intrinsic(llvm::Intrinsic::sqrt, f64,
                               {call_intrinsic(llvm::Intrinsic::fma, f64, {r, r, c(1)})}));
        h = b_.CreateSelect(b_.CreateFCmpOEQ(hi, c(0)), c(0), h);
        Value* nan = b_.CreateFCmpUNO(x, y);
        h = b_.CreateSelect(nan, llvm::ConstantFP::getNaN(f64), h);
        Value* inf =
            b_.CreateOr(b_.CreateFCmpOEQ(a, c(INFINITY)), b_.CreateFCmpOEQ(b, c(INFINITY)));
        return b_.CreateSelect(inf, c(INFINITY), h);
    }

    // Without libdevice: the GPU's special-function unit (sin.approx, ex2.approx, lg2.approx,
    // rsqrt.approx); ptx_codegen.cpp states the error of each.
    Value* approximate_f32(const std::string& base, const std::vector<Value*>& args) {
        auto f = [&](double v) { return llvm::ConstantFP::get(b_.getFloatTy(), v); };
        const double log2e = 1.4426950408889634, ln2 = 0.6931471805599453;
        Value* x = args[0];
        if (base == "sin") return nvvm("llvm.nvvm.sin.approx.f", x);
        if (base == "cos") return nvvm("llvm.nvvm.cos.approx.f", x);
        if (base == "tan")
            return b_.CreateFDiv(nvvm("llvm.nvvm.sin.approx.f", x),
                                 nvvm("llvm.nvvm.cos.approx.f", x));
        if (base == "exp2") return nvvm("llvm.nvvm.ex2.approx.f", x);
        if (base == "log2") return nvvm("llvm.nvvm.lg2.approx.f", x);
        if (base == "exp") return nvvm("llvm.nvvm.ex2.approx.f", b_.CreateFMul(x, f(log2e)));
        if (base == "log") return b_.CreateFMul(nvvm("llvm.nvvm.lg2.approx.f", x), f(ln2));
        if (base == "rsqrt") return nvvm("llvm.nvvm.rsqrt.approx.f", x);
        if (base == "pow")
            return nvvm("llvm.nvvm.ex2.approx.f",
                        b_.CreateFMul(args[1], nvvm("llvm.nvvm.lg2.approx.f", x)));
        fail(ErrorCode::Unsupported,
             "intrinsic '" + base +
                 "_f32' needs libdevice (libdevice.10.bc), which was not found (looked in " +
                 libdevice().path + "; set CUDA_HOME or PLEXUS_LIBDEVICE)");
    }
};

} // namespace

void lower_kernel(const Kernel& kernel, const Options& options, llvm::Module& module,
                  bool use_libdevice, int sm, bool wgmma) {
    PtxLowering(kernel, options, module, use_libdevice, sm, wgmma).run();
}

} // namespace plexus::codegen::ptx
