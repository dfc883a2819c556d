# Helpers shared by the figure scripts (scripts/table1.sh, scripts/fig*.sh). Source it after
# `set -euo pipefail`, then call `pm_setup "${1:-}"`.
#
#   root            the repository root
#   pm              the tool: $PM, default $root/build/src/cli/preserve-model
#   out             OUTDIR, the first argument of the script (default $root/out), made absolute
#   SCENARIOS       the six paper models as bundled scenarios (Table 1, Fig 2, Figs 4-5)
#   MODELS          the same six models by model name (--model, for the paper-dse figures)
#   BIG3            the three largest models as scenarios (Figs 4 and 5)
#   csv_awk [-v V=X]... PROG FILE...   awk over CLI CSVs with columns looked up by header name
#   gp SCRIPT PNG SIZE [VAR=VALUE...]   draw plots/SCRIPT into PNG with gnuplot
#   put KEY VALUE   one `key value` line of the summary (to stdout; redirect it)
# shellcheck shell=bash

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
pm=${PM:-$root/build/src/cli/preserve-model}
# shellcheck disable=SC2034 # used by the scripts that source this file
SCENARIOS=(llama8b llama70b qwen2-7b qwen2-72b phi3-small phi3-medium)
# shellcheck disable=SC2034
MODELS=(llama3-8b llama3-70b qwen2-7b qwen2-72b phi3-small phi3-medium)
# shellcheck disable=SC2034
BIG3=(llama70b qwen2-72b phi3-medium)
# The paper models every layer with full attention: Phi-3-medium's 2047-token sliding window
# (data/models/phi3-medium.json) and Phi-3-small's block-sparse layers
# (data/models/phi3-small.json) are left out of the paper's figures, as the paper's Table 1
# scenarios (data/scenarios/phi3-medium.json, phi3-small.json) leave them out; a no-op for the
# other models.
# shellcheck disable=SC2034
PAPER_MODEL=(--set model.sliding_window=null --set model.dense_attention_every_n_layers=1)

pm_setup() {
    out=${1:-$root/out}
    mkdir -p "$out"
    out=$(cd "$out" && pwd)
    case "$out" in *[\'\"]*)
        echo "$(basename "$0"): OUTDIR must not contain quotes (got $out)" >&2
        exit 2
        ;;
    esac
    if [ ! -x "$pm" ]; then
        echo "$(basename "$0"): $pm is not an executable (build it: meson compile -C build, or set PM)" >&2
        exit 2
    fi
    command -v gnuplot >/dev/null || {
        echo "$(basename "$0"): gnuplot is not installed (apt-get install gnuplot-nox)" >&2
        exit 2
    }
}

# csv_awk [-v VAR=VALUE]... 'PROGRAM' FILE...
# Runs awk -F, over CSV files written by the tool: `#` lines and blank lines are skipped, the first
# other line of each file is its header, and PROGRAM's rules see only the data rows. In PROGRAM,
# v("name") is the field under the header `name` (a missing column is an error, exit 2), and
# ok("name") is true when the row is a valid point (empty `error` column, if any) and the field is a
# number (not NaN); fi is the 1-based index of the current file. The error column is last and may
# hold quoted commas; the fields before it are plain numbers or names, so -F, splits them
# correctly.
csv_awk() {
    local -a vars=()
    while [ "${1:-}" = -v ]; do
        vars+=(-v "$2")
        shift 2
    done
    local prog=$1
    shift
    awk -F, "${vars[@]}" '
function v(n) {
    if (!(n in _col)) { printf "csv_awk: %s: no column \"%s\"\n", FILENAME, n > "/dev/stderr"; exit 2 }
    return $_col[n]
}
function ok(n,   x) {
    x = v(n)
    if (("error" in _col) && $_col["error"] != "") return 0
    return x != "" && x != "NaN" && x != "nan" && x != "-nan" && x != "inf" && x != "-inf"
}
FNR == 1 { _h = 0; fi++ }
/^#/ || /^[ \t\r]*$/ { next }
!_h { for (_k in _col) delete _col[_k]; for (_i = 1; _i <= NF; _i++) _col[$_i] = _i; _h = 1; next }
'"$prog" "$@"
}

# gp SCRIPT PNG SIZE [VAR=VALUE...]
# Draws plots/SCRIPT into PNG (pngcairo, SIZE "W,H" pixels). Each VAR=VALUE becomes the gnuplot
# string variable VAR (gnuplot -e), beside term and out; values must not contain single quotes.
gp() {
    local script=$1 png=$2 size=$3 kv e
    shift 3
    e="term=\"pngcairo size $size font 'Helvetica,11'\"; out='$png'"
    for kv in "$@"; do
        e+="; ${kv%%=*}='${kv#*=}'"
    done
    gnuplot -e "$e" "$root/plots/$script"
}

# put KEY VALUE: a summary line; VALUE is printed as given (awk already formatted it).
put() { printf '%s %s\n' "$1" "$2"; }
