// The kernels of type_kernels.hpp, traced once each.
#include "type_kernels.hpp"

namespace typek {

namespace {

template <class T> const ir::Kernel& small_ints_of(const char* name) {
    static const auto k =
        px::kernel(name, {"a", "b", "big", "o", "w", "f", "n"},
                   [](px::In<T> a, px::In<T> b, px::In<float> big, px::Out<T> o, px::Out<int32_t> w,
                      px::Out<float> f, px::Int n) {
                       px::Int i = px::global_id(0);
                       px::If(i < n, [&] {
                           o[i * 8 + 0] = a[i] + b[i];
                           o[i * 8 + 1] = a[i] * b[i];
                           o[i * 8 + 2] = a[i] / b[i];
                           o[i * 8 + 3] = a[i] % b[i];
                           o[i * 8 + 4] = a[i] << b[i];
                           o[i * 8 + 5] = a[i] >> b[i];
                           o[i * 8 + 6] = -a[i];
                           o[i * 8 + 7] = px::max(a[i], b[i]);
                           w[i * 2] = px::cast<int32_t>(a[i]) + px::cast<int32_t>(b[i]);
                           w[i * 2 + 1] = px::cast<int32_t>(px::cast<T>(px::cast<int32_t>(big[i])));
                           f[i * 2] = px::cast<float>(a[i]);
                           f[i * 2 + 1] = px::cast<float>(px::cast<T>(big[i]));
                       });
                   });
    return k.ir();
}

template <class T> const ir::Kernel& half_arith_of(const char* name) {
    static const auto k =
        px::kernel(name, {"a", "b", "o", "s", "n"},
                   [](px::In<T> a, px::In<T> b, px::Out<T> o, px::Var<T> s, px::Int n) {
                       px::Int i = px::global_id(0);
                       px::If(i < n, [&] {
                           o[i * 8 + 0] = a[i] + b[i];
                           o[i * 8 + 1] = a[i] - b[i];
                           o[i * 8 + 2] = a[i] * b[i];
                           o[i * 8 + 3] = a[i] / b[i];
                           o[i * 8 + 4] = px::min(a[i], b[i]);
                           o[i * 8 + 5] = px::max(a[i], b[i]);
                           o[i * 8 + 6] = -a[i];
                           o[i * 8 + 7] = a[i] * s;
                       });
                   });
    return k.ir();
}

template <class T, class Other> const ir::Kernel& half_convert_of(const char* name) {
    static const auto k =
        px::kernel(name, {"f", "d", "n32", "n64", "h", "o", "wide", "whole", "other", "n"},
                   [](px::In<float> f, px::In<double> d, px::In<int32_t> n32, px::In<int64_t> n64,
                      px::In<T> h, px::Out<T> o, px::Out<double> wide, px::Out<int32_t> whole,
                      px::Out<Other> other, px::Int n) {
                       px::Int i = px::global_id(0);
                       px::If(i < n, [&] {
                           o[i * 4 + 0] = px::cast<T>(f[i]);
                           o[i * 4 + 1] = px::cast<T>(d[i]);
                           o[i * 4 + 2] = px::cast<T>(n32[i]);
                           o[i * 4 + 3] = px::cast<T>(n64[i]);
                           wide[i * 2] = px::cast<double>(px::cast<float>(h[i]));
                           wide[i * 2 + 1] = px::cast<double>(h[i]);
                           whole[i] = px::cast<int32_t>(h[i]);
                           other[i] = px::cast<Other>(h[i]);
                       });
                   });
    return k.ir();
}

} // namespace

const ir::Kernel& small_ints(ir::Scalar t) {
    switch (t) {
    case ir::Scalar::I8: return small_ints_of<int8_t>("small_ints_i8");
    case ir::Scalar::U8: return small_ints_of<uint8_t>("small_ints_u8");
    case ir::Scalar::I16: return small_ints_of<int16_t>("small_ints_i16");
    default: return small_ints_of<uint16_t>("small_ints_u16");
    }
}

const ir::Kernel& half_arith(ir::Scalar t) {
    return t == ir::Scalar::F16 ? half_arith_of<px::half>("half_arith_f16")
                                : half_arith_of<px::bf16>("half_arith_bf16");
}

const ir::Kernel& half_convert(ir::Scalar t) {
    return t == ir::Scalar::F16 ? half_convert_of<px::half, px::bf16>("half_convert_f16")
                                : half_convert_of<px::bf16, px::half>("half_convert_bf16");
}

const ir::Kernel& vector_add4() {
    using F4 = px::Vec<float, 4>;
    static const auto k = px::kernel("vector_add4", {"a", "b", "c", "n"},
                                     [](px::In<F4> a, px::In<F4> b, px::Out<F4> c, px::Int n) {
                                         px::Int i = px::global_id(0);
                                         px::If(i < n, [&] { c[i] = a[i] + b[i]; });
                                     });
    return k.ir();
}

// Per i < n:
// of[10i..]: a+b, a-b, a*b, a/b, min(a,b), -a, a.zyx, (b.z, a.x, 2.5), broadcast a.y, a with
//            lane y set to b.x and lane z increased by 1;
// oi[16i..]: ia+ib, ia-ib, ia*ib, ia/ib, ia%ib, ia&ib, ia^ib, ia<<ib, ia>>ib, ~ia, max, ia.wzyx,
//            ia.xxwy, i32x4((a.x, a.y, a.z, b.x)), ia with lane z stored as 77, lane y alone
//            stored as ib.x (the other lanes keep what the buffer held);
// ou[5i..]:  ua+ub, ua*ub, ua>>ub, min, u8(i8(ua) >> 1);
// oh[6i..]:  ha+hb, ha*hb, ha/hb, -ha, max, f16(f32(ua) * 0.1);
// of4[3i..]: f32(ia), f32(ha.xyzw), f32(ia) * (1 + 2 + 3 + 0) summed through a private array.
const ir::Kernel& vector_ops() {
    using F3 = px::Vec<float, 3>;
    using F4 = px::Vec<float, 4>;
    using I4 = px::Vec<int32_t, 4>;
    using U8 = px::Vec<uint8_t, 8>;
    using H8 = px::Vec<px::half, 8>;
    static const auto k = px::kernel(
        "vector_ops",
        {"a", "b", "ia", "ib", "ua", "ub", "ha", "hb", "of", "oi", "ou", "oh", "of4", "n"},
        [](px::In<F3> a, px::In<F3> b, px::In<I4> ia, px::In<I4> ib, px::In<U8> ua, px::In<U8> ub,
           px::In<H8> ha, px::In<H8> hb, px::Out<F3> of, px::Out<I4> oi, px::Out<U8> ou,
           px::Out<H8> oh, px::Out<F4> of4, px::Int n) {
            px::Int i = px::global_id(0);
            auto pv = px::private_array<F4>(4);
            px::If(i < n, [&] {
                of[i * 10 + 0] = a[i] + b[i];
                of[i * 10 + 1] = a[i] - b[i];
                of[i * 10 + 2] = a[i] * b[i];
                of[i * 10 + 3] = a[i] / b[i];
                of[i * 10 + 4] = px::min(a[i], b[i]);
                of[i * 10 + 5] = -a[i];
                of[i * 10 + 6] = a[i].zyx();
                of[i * 10 + 7] = px::make<F3>(b[i].z(), a[i].x(), 2.5f);
                of[i * 10 + 8] = px::broadcast<3>(a[i].y());
                px::Var<F3> v = a[i];
                v.y() = b[i].x();
                v.z() += 1.0f;
                of[i * 10 + 9] = v;

                oi[i * 16 + 0] = ia[i] + ib[i];
                oi[i * 16 + 1] = ia[i] - ib[i];
                oi[i * 16 + 2] = ia[i] * ib[i];
                oi[i * 16 + 3] = ia[i] / ib[i];
                oi[i * 16 + 4] = ia[i] % ib[i];
                oi[i * 16 + 5] = ia[i] & ib[i];
                oi[i * 16 + 6] = ia[i] ^ ib[i];
                oi[i * 16 + 7] = ia[i] << ib[i];
                oi[i * 16 + 8] = ia[i] >> ib[i];
                oi[i * 16 + 9] = ~ia[i];
                oi[i * 16 + 10] = px::max(ia[i], ib[i]);
                oi[i * 16 + 11] = ia[i].wzyx();
                oi[i * 16 + 12] = ia[i].swizzle<0, 0, 3, 1>();
                oi[i * 16 + 13] =
                    px::cast<I4>(px::make<F4>(a[i].x(), a[i].y(), a[i].z(), b[i].x()));
                oi[i * 16 + 14] = ia[i];
                oi[i * 16 + 14].z() = 77;
                oi[i * 16 + 15].y() = ib[i].x();

                ou[i * 5 + 0] = ua[i] + ub[i];
                ou[i * 5 + 1] = ua[i] * ub[i];
                ou[i * 5 + 2] = ua[i] >> ub[i];
                ou[i * 5 + 3] = px::min(ua[i], ub[i]);
                ou[i * 5 + 4] = px::cast<U8>(px::cast<px::Vec<int8_t, 8>>(ua[i]) >> int8_t(1));

                oh[i * 6 + 0] = ha[i] + hb[i];
                oh[i * 6 + 1] = ha[i] * hb[i];
                oh[i * 6 + 2] = ha[i] / hb[i];
                oh[i * 6 + 3] = -ha[i];
                oh[i * 6 + 4] = px::max(ha[i], hb[i]);
                oh[i * 6 + 5] = px::cast<H8>(px::cast<px::Vec<float, 8>>(ua[i]) * 0.1f);

                of4[i * 3 + 0] = px::cast<F4>(ia[i]);
                of4[i * 3 + 1] = px::cast<F4>(ha[i].swizzle<0, 1, 2, 3>());
                px::For(0, 4, [&](px::Int j) { pv[j] = px::cast<F4>(ia[i]) * px::cast<float>(j); });
                px::Var<F4> sum = 0.0f;
                px::For(0, 4, [&](px::Int j) { sum += pv[(j + 1) % 4]; });
                of4[i * 3 + 2] = sum;
            });
        });
    return k.ir();
}

// Groups of 32. Per work-item, with p = parts[min(i, n - 1)] moved by dt (pos += vel * dt,
// vel.y -= 9.75 * dt, charge = bf16(mass / 2)); q the same of the next work-item of the group
// (through shared memory); pm = p.mass + 1 (through a private array, across the barrier); for i <
// n: parts[i] = q with vel.z = pm; cells[i] = {-3, f16(q.mass), q with pos.x = 0.5, u16(i)} with
// flag = i8(l) - 64; probe[i] = f32(parts[i].charge) + parts[i].vel.z.
const ir::Kernel& records() {
    static const auto k = px::kernel(
        "records", {"parts", "cells", "probe", "dt", "n"},
        [](px::InOut<Particle> parts, px::Out<Cell> cells, px::Out<float> probe, px::Float dt,
           px::Int n) {
            px::Int i = px::global_id(0);
            px::Int l = px::local_id(0);
            auto sh = px::shared<Particle>(32);
            auto pr = px::private_array<Particle>(2);
            px::Var<Particle> p = parts[px::min(i, n - 1)];
            p[&Particle::pos] = p[&Particle::pos] + p[&Particle::vel] * dt;
            p[&Particle::vel].y() = p[&Particle::vel].y() - 9.75f * dt;
            p[&Particle::charge] = px::cast<px::bf16>(p[&Particle::mass] * 0.5f);
            pr[1] = p;
            pr[1][&Particle::mass] = p[&Particle::mass] + 1.0f;
            sh[l] = p;
            px::barrier();
            px::Var<Particle> q = sh[(l + 1) % 32];
            px::If(i < n, [&] {
                parts[i] = q;
                parts[i][&Particle::vel].z() = pr[1][&Particle::mass];
                px::Var<Cell> c = px::make<Cell>(int8_t(-3), px::cast<px::half>(q[&Particle::mass]),
                                                 q, px::cast<uint16_t>(i));
                c[&Cell::p][&Particle::pos].x() = 0.5f;
                cells[i] = c;
                cells[i][&Cell::flag] = px::cast<int8_t>(l) - int8_t(64);
                probe[i] =
                    px::cast<float>(parts[i][&Particle::charge]) + parts[i][&Particle::vel].z();
            });
        });
    return k.ir();
}

const ir::Kernel& record_fields() {
    static const auto k =
        px::kernel("record_fields", {"parts", "out", "n"},
                   [](px::In<Particle> parts, px::Out<float> out, px::Int n) {
                       px::Int i = px::global_id(0);
                       px::If(i < n, [&] {
                           out[i] = parts[i][&Particle::mass] + parts[i][&Particle::vel].y();
                       });
                   });
    return k.ir();
}

// Per i < n: area[i] = -1 (none), r*r*3 (circle), (v.x + 1) * v.y (rect), p.mass (blob), read
// by a match on the buffer element; out[i] = rect(r, 2r) for a circle, circle(v.x + v.y) for a
// rect, the shape itself otherwise (a case known at run time); marks[i] = circle(area[i]) (a
// case known here); count[i] = over j < 8 of the shapes in[(i + j) % n]: stop at a none, skip
// a circle, else add 1, and add 100 per shape not skipped.
const ir::Kernel& variants() {
    using V2 = px::Vec<float, 2>;
    static const auto k = px::kernel(
        "variants", {"in", "out", "marks", "area", "count", "n"},
        [](px::In<Shape> in, px::Out<Shape> out, px::Out<Shape> marks, px::Out<float> area,
           px::Out<int32_t> count, px::Int n) {
            px::Int i = px::global_id(0);
            px::If(i < n, [&] {
                px::Var<float> a = 0.0f;
                px::Match(in[i], px::on<"none">([&] { a = -1.0f; }),
                          px::on<"circle">([&](px::Var<float> r) { a = r * r * 3.0f; }),
                          px::on<"rect">([&](px::Var<V2> v) {
                              v.x() += 1.0f;
                              a = v.x() * v.y();
                          }),
                          px::on<"blob">([&](px::Var<Particle> p) { a = p[&Particle::mass]; }));
                area[i] = a;
                auto kept = px::private_array<Shape>(2);
                px::Var<Shape> s = in[i];
                px::Var<Shape> t = px::make_variant<Shape, "none">();
                px::Match(s, px::on<"circle">([&](px::Var<float> r) {
                              t = px::make_variant<Shape, "rect">(px::make<V2>(r, r * 2.0f));
                          }),
                          px::on<"rect">([&](px::Var<V2> v) {
                              t = px::make_variant<Shape, "circle">(v.x() + v.y());
                          }),
                          px::otherwise([&] { t = s; }));
                kept[1] = t; // through a private array on the way out
                out[i] = kept[1];
                marks[i] = px::make_variant<Shape, "circle">(a);
                px::Var<int32_t> c = 0;
                px::For(0, 8, [&](px::Int j) {
                    px::Match(in[(i + j) % n], px::on<"none">([&] { px::Break(); }),
                              px::on<"circle">([&](px::Var<float>) { px::Continue(); }),
                              px::otherwise([&] { c += 1; }));
                    c += 100;
                });
                count[i] = c;
            });
        });
    return k.ir();
}

// Per i < n: o[3i..3i+2] = a+b, a*b, bf16(f32(a) / 3) on bf16x3.
const ir::Kernel& bf16_vectors() {
    using B3 = px::Vec<px::bf16, 3>;
    static const auto k =
        px::kernel("bf16_vectors", {"a", "b", "o", "n"},
                   [](px::In<B3> a, px::In<B3> b, px::Out<B3> o, px::Int n) {
                       px::Int i = px::global_id(0);
                       px::If(i < n, [&] {
                           o[i * 3 + 0] = a[i] + b[i];
                           o[i * 3 + 1] = a[i] * b[i];
                           o[i * 3 + 2] = px::cast<B3>(px::cast<px::Vec<float, 3>>(a[i]) / 3.0f);
                       });
                   });
    return k.ir();
}

// Groups of 64, with l the local id. mode[0] is uniform: for a circle of radius r, each
// work-item makes r its own (r + l), and y[i] = (r' of the next work-item) * x[next] + r + l,
// through shared memory and a barrier; otherwise y[i] = x[i]. steps[i] = over j < 4 while
// mode[j + 1] is not none: through shared memory, the shape of work-item (l + 3) % 64 (all the
// same: mode[j + 1]) adds i32(v.x) for a rect, else 1.
const ir::Kernel& variant_group() {
    static const auto k = px::kernel(
        "variant_group", {"mode", "x", "y", "steps"},
        [](px::In<Shape> mode, px::In<float> x, px::Out<float> y, px::Out<int32_t> steps) {
            px::Int i = px::global_id(0);
            px::Int l = px::local_id(0);
            auto sh = px::shared<float>(64);
            auto sv = px::shared<Shape>(64);
            px::Match(mode[0], px::on<"circle">([&](px::Var<float> r) {
                          r += px::cast<float>(l);
                          sh[l] = r * x[i];
                          px::barrier();
                          y[i] = sh[(l + 1) % 64] + r;
                      }),
                      px::otherwise([&] { y[i] = x[i]; }));
            px::Var<int32_t> s = 0;
            px::For(0, 4, [&](px::Int j) {
                px::Match(mode[j + 1], px::on<"none">([&] { px::Break(); }), px::otherwise([&] {
                              sv[l] = mode[j + 1];
                              px::barrier();
                              px::Match(sv[(l + 3) % 64],
                                        px::on<"rect">([&](px::Var<px::Vec<float, 2>> v) {
                                            s += px::cast<int32_t>(v.x());
                                        }),
                                        px::otherwise([&] { s += 1; }));
                              px::barrier();
                          }));
            });
            steps[i] = s;
        });
    return k.ir();
}

// Groups of 64: pa[j] = x[i] * (j + 1) for j < 4 and pb[j] = j * l for j < 3; y[i] = (pa[3] +
// pb[2] of work-item (l + 1) % 64, through shared memory) + pa[0] + pa[1] + pa[2] + pa[3].
const ir::Kernel& private_barrier() {
    static const auto k =
        px::kernel("private_barrier", {"x", "y"}, [](px::In<float> x, px::Out<float> y) {
            px::Int i = px::global_id(0);
            px::Int l = px::local_id(0);
            auto pa = px::private_array<float>(4);
            auto pb = px::private_array<int32_t>(3);
            auto sh = px::shared<float>(64);
            px::For(0, 4, [&](px::Int j) { pa[j] = x[i] * px::cast<float>(j + 1); });
            px::For(0, 3, [&](px::Int j) { pb[j] = j * l; });
            sh[l] = pa[3] + px::cast<float>(pb[2]);
            px::barrier();
            px::Var<float> acc = sh[(l + 1) % 64];
            px::For(0, 4, [&](px::Int j) { acc += pa[j]; });
            y[i] = acc;
        });
    return k.ir();
}

// Groups of at most 64. Per work-item (local id l, group size L), with j = min(i, n - 1):
//   h = ha[j] (f16 x3), c = (i, -i) (i32 x2) and u = u8x4(i, i + 1, i + 2, i + 3), all three
//   across the barriers; t = 0 (f32 x3); tile[l] = f32(h);
//   barrier; acc = 0 (f32 x3); s = tile[l]; t = tile[(l + 1) % L]; for k < trips[j] (a count
//       per work-item): d = tile[(l + k) % L] - acc * 0.5; acc += d * 0.25; c += (k, 1);
//       u += u8x4(k, 1, 2, 3) (wrapping); s = s * 0.5 + d;
//       if k is odd: h += f16(acc).zyx (each lane rounded to f16 after the add);
//   after the loop acc += s * 0.125 + t;
//   barrier; t = acc * 2; for i < n: oh[i] = h, of[i] = t - acc, oc[i] = c, ou[i] = u.
// s is carried from lane loop to lane loop in lock step, t is a temporary each region assigns
// before it reads it.
const ir::Kernel& vectors_lockstep() {
    using F3 = px::Vec<float, 3>;
    using H3 = px::Vec<px::half, 3>;
    using I2 = px::Vec<int32_t, 2>;
    using U4 = px::Vec<uint8_t, 4>;
    static const auto k = px::kernel(
        "vectors_lockstep", {"ha", "trips", "oh", "of", "oc", "ou", "n"},
        [](px::In<H3> ha, px::In<int32_t> trips, px::Out<H3> oh, px::Out<F3> of, px::Out<I2> oc,
           px::Out<U4> ou, px::Int n) {
            px::Int i = px::global_id(0);
            px::Int l = px::local_id(0);
            px::Int size = px::local_size(0);
            auto tile = px::shared<F3>(64);
            px::Int j = px::min(i, n - 1);
            px::Var<H3> h = ha[j];
            px::Var<I2> c = px::make<I2>(i, -i);
            px::Var<U4> u = px::make<U4>(px::cast<uint8_t>(i), px::cast<uint8_t>(i + 1),
                                         px::cast<uint8_t>(i + 2), px::cast<uint8_t>(i + 3));
            px::Var<F3> t = 0.0f;
            tile[l] = px::cast<F3>(h);
            px::barrier();
            px::Var<F3> acc = 0.0f;
            px::Var<F3> s = tile[l];
            t = tile[(l + 1) % size];
            px::For(0, trips[j], [&](px::Int k) {
                px::Var<F3> d = tile[(l + k) % size] - acc * 0.5f;
                acc += d * 0.25f;
                c += px::make<I2>(k, 1);
                u += px::make<U4>(px::cast<uint8_t>(k), uint8_t(1), uint8_t(2), uint8_t(3));
                s = s * 0.5f + d;
                px::If(k % 2 == 1, [&] { h = h + px::cast<H3>(acc).swizzle<2, 1, 0>(); });
            });
            acc += s * 0.125f + t;
            px::barrier();
            t = acc * 2.0f;
            px::If(i < n, [&] {
                oh[i] = h;
                of[i] = t - acc;
                oc[i] = c;
                ou[i] = u;
            });
        });
    return k.ir();
}

std::vector<Named> all() {
    std::vector<Named> out;
    for (ir::Scalar t : {ir::Scalar::I8, ir::Scalar::U8, ir::Scalar::I16, ir::Scalar::U16}) {
        const ir::Kernel& k = small_ints(t);
        out.push_back({k.name, &k});
    }
    for (ir::Scalar t : {ir::Scalar::F16, ir::Scalar::BF16})
        for (const ir::Kernel* k : {&half_arith(t), &half_convert(t)})
            out.push_back({k->name, k});
    for (const ir::Kernel* k :
         {&vector_add4(), &vector_ops(), &bf16_vectors(), &records(), &record_fields(), &variants(),
          &variant_group(), &private_barrier(), &vectors_lockstep()})
        out.push_back({k->name, k});
    return out;
}

} // namespace typek
