// The kernel the asynchronous-copy tests share (e2e on every device, PTX, CUDA C): a group
// streams its tiles of `src` through a double-buffered shared array with px::copy_async and
// writes them to `dst`, so dst[i] = i < n ? src[i] : 0 over whole tiles.
#pragma once

#include "plexus/plexus.hpp"

#include <string>

namespace async_copy_test {

namespace px = plexus;

constexpr int kGroup = 32; // work-items per group
constexpr int kTilesPerGroup = 4;

// Each work-item copies N elements per tile: a tile is kGroup * N elements, and a group copies
// kTilesPerGroup of them one after the other, the next copy in flight while the current tile is
// written out. Each work-item writes elements that other work-items copied (a stride of kGroup
// over the tile), so the barrier after the wait is what makes them visible. The last tiles read
// past n: valid < N at the end, 0 after it (the source index is then outside the buffer, which
// a copy reading nothing allows). TwoD copies into rows of a padded 2-D shared array.
template <class T, uint32_t N, bool TwoD = false> const auto& tiles_kernel() {
    static const auto k = px::kernel(
        std::string("async_copy_") + (TwoD ? "2d_" : "") + px::ir::to_string(px::scalar_v<T>) +
            "_x" + std::to_string(N),
        {"src", "dst", "n"}, [](px::In<T> src, px::Out<T> dst, px::Int n) {
            constexpr int tile = kGroup * int(N);
            const px::Int li = px::local_id(0);
            const px::Int base = px::group_id(0) * (kTilesPerGroup * tile);
            auto run = [&](const auto& buffer) {
                // Tile t into stage s: work-item li copies elements li * N .. li * N + N - 1.
                auto stage = [&](const auto& s, const auto& t) {
                    px::Int from = base + t * tile + li * int(N);
                    px::Int valid = px::clamp(n - from, 0, int(N));
                    if constexpr (TwoD)
                        px::copy_async<N>(buffer, s * kGroup + li, 0, src, from, valid);
                    else
                        px::copy_async<N>(buffer, s * tile + li * int(N), src, from, valid);
                    px::copy_async_commit();
                };
                stage(0, 0);
                px::For(0, kTilesPerGroup, [&](px::Int t) {
                    px::Int s = t % 2;
                    px::If(t + 1 < kTilesPerGroup, [&] {
                        stage(1 - s, t + 1);
                        px::copy_async_wait(1); // tile t is in, t + 1 may still be in flight
                    }).Else([&] { px::copy_async_wait(0); });
                    px::barrier();
                    px::For(li, tile, kGroup, [&](px::Int e) {
                        px::Int out = base + t * tile + e;
                        if constexpr (TwoD)
                            dst[out] = buffer[s * kGroup + e / int(N)][e % int(N)];
                        else
                            dst[out] = buffer[s * tile + e];
                    });
                    px::barrier(); // every read of stage s is done before the next copy into it
                });
            };
            if constexpr (TwoD)
                run(px::shared<T>(2 * kGroup, N, px::Pad{N})); // rows of N, pitch 2N
            else
                run(px::shared<T>(2 * tile));
        });
    return k;
}

} // namespace async_copy_test
