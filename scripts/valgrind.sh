#!/usr/bin/env bash
# Runs the test suite of a meson build under valgrind memcheck: every C test executable through
# meson's --wrapper, then the tool itself on the hostile inputs of tests/test_hostile.sh (the
# shell tests are not wrapped as a whole, which would check bash rather than our code). Any
# invalid read or write, use of uninitialised memory, or definite or indirect leak fails it.
#
# Usage: scripts/valgrind.sh BUILD_DIR
#   BUILD_DIR  a configured and compiled meson build of this tree, not a sanitizer build
#              (valgrind and AddressSanitizer do not mix)
# Needs valgrind (Debian: apt-get install valgrind).
set -euo pipefail

build="${1:?usage: scripts/valgrind.sh BUILD_DIR}"
root="$(cd "$(dirname "$0")/.." && pwd)"
command -v valgrind >/dev/null || { echo "valgrind.sh: valgrind not found" >&2; exit 2; }

memcheck="valgrind --quiet --tool=memcheck --leak-check=full --show-leak-kinds=definite,indirect
  --errors-for-leak-kinds=definite,indirect --track-origins=yes"

# The C tests of the fast suite (and the benchmark's smoke test): everything but the shell
# scripts and the Python ones (pytest and examples/notebook.py would check the interpreter).
# `meson test --list` prints "project:suite / name" when there are several suites and plain
# names otherwise.
mapfile -t tests < <(meson test -C "$build" --list 2>/dev/null |
    sed -n -e '/^ninja:/d' -e '/ \/ /{s/^.*:fast \/ //p;d;}' -e p |
    grep -vx -e cli -e hostile -e writers -e ux -e python -e notebook)
[ "${#tests[@]}" -gt 0 ] || { echo "valgrind.sh: no tests found in $build" >&2; exit 2; }
echo "valgrind.sh: ${#tests[@]} tests under memcheck: ${tests[*]}"
# valgrind runs code 20 to 50 times slower; the suites' timeouts are for native runs.
meson test -C "$build" --print-errorlogs --timeout-multiplier 20 \
    --wrapper "$(echo $memcheck) --error-exitcode=1" "${tests[@]}"

# The tool on hostile inputs: a memcheck error exits 99, which no case expects.
echo "valgrind.sh: tests/test_hostile.sh with the tool under memcheck"
PM_WRAPPER="$(echo $memcheck) --error-exitcode=99" PM_TIME_LIMIT=600 \
    "$root/tests/test_hostile.sh" "$build/src/cli/preserve-model" "$root/data"
