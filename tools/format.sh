#!/bin/bash
# Formats every C and C++ file of the project with clang-format 19 and the root .clang-format;
# with --check, changes nothing and fails on the first file that differs (the `format` test and
# CI run it so). tests/plugin-api/frozen keeps the plugin headers byte for byte as they were
# released, and subprojects/ holds only wraps, so neither is formatted.
set -euo pipefail
cd "$(dirname "$0")/.."
clang_format=${CLANG_FORMAT:-clang-format-19}
if ! command -v "$clang_format" >/dev/null; then
    echo "format.sh: $clang_format not found (Debian and Ubuntu: apt-get install clang-format-19)" >&2
    exit 1
fi
if [ -e .git ]; then
    list() { git ls-files -- '*.c' '*.h' '*.cpp' '*.hpp'; }
else
    list() { find apps core intrinsics plugin-api plugins samples tests -type f \
        \( -name '*.c' -o -name '*.h' -o -name '*.cpp' -o -name '*.hpp' \) | sort; }
fi
files=$(list | grep -v -e '^tests/plugin-api/frozen/' -e '^subprojects/')
if [ "${1:-}" = --check ]; then
    # --Werror turns every "code should be clang-formatted" note into a failure naming the file
    # and line.
    echo "$files" | xargs "$clang_format" --dry-run --Werror
    echo "format.sh: $(echo "$files" | wc -l) files formatted as .clang-format says"
else
    echo "$files" | xargs "$clang_format" -i
fi
