#!/bin/sh
# Installs the build into a temporary DESTDIR, then builds and runs a consumer against it
# twice: through pkg-config and through CMake's find_package(plexus).
# args: MESON BUILD_ROOT SOURCE_DIR PREFIX LIBDIR PLUGIN_SUBDIR [EXAMPLE_PLUGIN]
set -eu
MESON=$1 BUILD=$2 SRC=$3 PREFIX=$4 LIBDIR=$5 PLUGINS=$6 EXAMPLE=${7:-}
for tool in cmake pkg-config c++; do
    command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
TMP=$(mktemp -d "${TMPDIR:-/tmp}/plexus-install-XXXXXX")
trap 'rm -rf "$TMP"' EXIT
ROOT=$TMP/root
"$MESON" install -C "$BUILD" --no-rebuild --quiet --destdir "$ROOT" >"$TMP/install.log" 2>&1 || {
    cat "$TMP/install.log"; echo "FAIL: meson install"; exit 1; }
case $LIBDIR in /*) LIB=$ROOT$LIBDIR ;; *) LIB=$ROOT$PREFIX/$LIBDIR ;; esac
PLUGIN_DIR=$ROOT$PREFIX/$PLUGINS
mkdir -p "$PLUGIN_DIR"
for f in "$LIB/pkgconfig/plexus.pc" "$LIB/cmake/plexus/plexusConfig.cmake" \
         "$LIB/cmake/plexus/plexusConfigVersion.cmake" "$ROOT$PREFIX/include/plexus/runtime.hpp" \
         "$ROOT$PREFIX/include/plexus/plugin.h"; do
    [ -f "$f" ] || { echo "FAIL: $f was not installed"; exit 1; }
done

# The plugin guide's example joins the installed plugins, so at least one must load.
[ -n "$EXAMPLE" ] && cp "$EXAMPLE" "$PLUGIN_DIR/"

# Every plugin file of the installed folder gets one report entry (no manifest there).
expected=$(find "$PLUGIN_DIR" -maxdepth 1 -name '*.so' | wc -l)
check() { # $1: how it was built, $2: the consumer
    out=$(LD_LIBRARY_PATH=$LIB "$2" "$PLUGIN_DIR") || { echo "FAIL: $1 consumer exited $?"; exit 1; }
    echo "$out" | sed "s|^|$1: |"
    echo "$out" | grep -qx "report entries: $expected" || { echo "FAIL: $1: expected $expected entries"; exit 1; }
    if [ -n "$EXAMPLE" ]; then
        echo "$out" | grep -q "^plugin example loaded " || { echo "FAIL: $1: the example plugin did not load"; exit 1; }
    fi
}

export PKG_CONFIG_PATH=$LIB/pkgconfig
flags=$(pkg-config --define-variable=prefix="$ROOT$PREFIX" --cflags --libs plexus)
# PLEXUS_TEST_CONSUMER_FLAGS: what a sanitizer build's consumers need too (tests/sanitize.sh:
# ThreadSanitizer must be linked into the executable, not only into libplexus).
c++ -std=c++20 "$SRC/consumer.cpp" $flags ${PLEXUS_TEST_CONSUMER_FLAGS:-} -o "$TMP/consumer-pkgconfig"
check pkg-config "$TMP/consumer-pkgconfig"

cmake -S "$SRC" -B "$TMP/cmake" -DCMAKE_PREFIX_PATH="$ROOT$PREFIX" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_EXE_LINKER_FLAGS="${PLEXUS_TEST_CONSUMER_FLAGS:-}" >"$TMP/cmake.log" 2>&1 || {
    cat "$TMP/cmake.log"; echo "FAIL: cmake configure"; exit 1; }
cmake --build "$TMP/cmake" >>"$TMP/cmake.log" 2>&1 || { cat "$TMP/cmake.log"; echo "FAIL: cmake build"; exit 1; }
check cmake "$TMP/cmake/consumer"
echo "PASS: installed plexus builds with pkg-config and CMake"
