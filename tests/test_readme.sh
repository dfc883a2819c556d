#!/usr/bin/env bash
# The README as written (issue 48): every preserve-model command in its sh blocks runs (exit 0)
# with the tool under test, and the example output under "What it prints" is the tool's output
# byte for byte, so the README cannot drift from the tool. The install lines (apt-get, meson,
# the installed copy) are not run here: scripts/check-install.sh runs those on a fresh clone.
# Usage: test_readme.sh PATH/TO/preserve-model SOURCE_ROOT
set -euo pipefail
pm=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$2" && pwd)
readme="$root/README.md"
export PRESERVE_MODEL_DATA="$root/data" PRESERVE_MODEL_PLOTS="$root/plots"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
pass=0
fail=0

# The commands: lines of ```sh blocks that start with preserve-model or
# build/src/cli/preserve-model (continuation lines joined), without their trailing comment.
# Skipped, with the reason: the GNU parallel and Slurm lines (other programs), a pipe into
# Graphviz when dot is not installed.
mapfile -t cmds < <(awk '
    /^```sh$/ { inblock = 1; next }
    /^```/ { inblock = 0; next }
    !inblock { next }
    { line = (cont ? cont " " : "") $0; cont = "" }
    line ~ /\\$/ { sub(/\\$/, "", line); cont = line; next }
    line ~ /^(build\/src\/cli\/)?preserve-model / { print line }
' "$readme")
[ "${#cmds[@]}" -ge 10 ] || { echo "FAIL found only ${#cmds[@]} commands in $readme"; exit 1; }
for c in "${cmds[@]}"; do
    c="${c%%  #*}"                                    # the comment after two spaces
    c=$(printf '%s' "$c" | sed -E 's/[[:space:]]+$//')
    run="${c#build/src/cli/}"
    run="\"\$pm\" ${run#preserve-model }"
    run="${run//| preserve-model /| \"\$pm\" }"
    case "$c" in
    *"| dot "*) command -v dot >/dev/null || { echo "skip  $c (no Graphviz dot)"; continue; } ;;
    *"merge shard-"*) echo "skip  $c (needs the shards of the parallel line)"; continue ;;
    *SLURM*) echo "skip  $c (a Slurm job array's line)"; continue ;;
    esac
    if out=$(pm="$pm" bash -c "$run" 2>&1 >/dev/null); then
        echo "ok    $c"
        pass=$((pass + 1))
    else
        echo "FAIL  $c"
        printf '%s\n' "$out" | head -5
        fail=$((fail + 1))
    fi
done

# The example output: the block after "$ build/src/cli/preserve-model --config llama70b.json".
want=$(awk '
    /^\$ build\/src\/cli\/preserve-model --config llama70b.json$/ { on = 1; next }
    on && /^```/ { exit }
    on { print }
' "$readme")
got=$("$pm" --config llama70b.json 2>&1)
if [ -n "$want" ] && [ "$want" = "$got" ]; then
    echo "ok    README's example output is the tool's"
    pass=$((pass + 1))
else
    echo "FAIL  README's example output differs from the tool's:"
    diff <(printf '%s\n' "$want") <(printf '%s\n' "$got") | head -20 || true
    fail=$((fail + 1))
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
