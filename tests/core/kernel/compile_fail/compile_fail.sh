#!/bin/sh
# Each file in compile_fail/ must fail to compile with the message its first line names
# ("// expect: TEXT"). Arguments: the folder, then the compiler command and its flags.
dir=$1
shift
status=0
for f in "$dir"/*.cpp; do
    want=$(sed -n '1s|^// expect: ||p' "$f")
    if out=$("$@" -fsyntax-only "$f" 2>&1); then
        echo "FAIL $f: compiled, expected an error containing: $want"
        status=1
    elif printf '%s' "$out" | grep -qF -- "$want"; then
        echo "ok   $f"
    else
        echo "FAIL $f: the error does not say: $want"
        printf '%s\n' "$out" | grep -E 'error' | head -5
        status=1
    fi
done
exit $status
