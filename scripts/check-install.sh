#!/usr/bin/env bash
# Checks that an install stands alone (issue 18): a fresh clone of this repository's committed
# HEAD is configured with --prefix, built and installed, and the clone is moved away; then,
# from another folder and without PRESERVE_MODEL_DATA or PRESERVE_MODEL_PLOTS, the installed
# tool runs the default scenario and draws a sweep, says where to look when its data is
# missing, and the installed Python module (when it was built) imports from the prefix's
# site-packages and evaluates from the installed data.
#
# Usage: scripts/check-install.sh [WORKDIR]   (default: a temporary folder, removed after)
#   PYTHON  the interpreter the module was built for (default /usr/bin/python3)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="${1:-}"
if [ -z "$work" ]; then
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
work="$(cd "$work" && pwd)"
prefix="$work/prefix"
py="${PYTHON:-/usr/bin/python3}"
unset PRESERVE_MODEL_DATA PRESERVE_MODEL_PLOTS
say() { echo "check-install.sh: $*"; }
fail() { echo "check-install.sh: FAIL: $*" >&2; exit 1; }

rm -rf "$work/src" "$work/moved" "$prefix"
git clone -q "$root" "$work/src"
git -C "$work/src" checkout -q "$(git -C "$root" rev-parse HEAD)"
quiet() { "$@" >"$work/log" 2>&1 || { cat "$work/log" >&2; fail "$*"; }; }
quiet meson setup --prefix="$prefix" "$work/src/build" "$work/src"
quiet meson compile -C "$work/src/build"
quiet meson install -C "$work/src/build"
mv "$work/src" "$work/moved"
mkdir -p "$work/elsewhere"
cd "$work/elsewhere"

pm="$prefix/bin/preserve-model"
# Outputs are captured before grep -q reads them: under pipefail, grep leaving at its first match
# would hand a longer output's writer SIGPIPE and fail the pipeline (the help is over 4 KiB).
out="$("$pm" --config llama70b.json)" || fail "$pm --config llama70b.json"
grep -q '^speedup: preserve vs serial' <<<"$out" || fail "$pm --config llama70b.json: no speedup line"
say "ok: $pm --config llama70b.json"
"$pm" --sweep l2=8MiB:64MiB:8MiB --plot "$work/l2.png" >/dev/null 2>&1 || fail "--plot"
[ -s "$work/l2.png" ] || fail "--plot wrote no figure"
say "ok: $pm --sweep l2=8MiB:64MiB:8MiB --plot $work/l2.png"
help="$("$pm" --help)" || fail "$pm --help"
grep -q -- "--data-dir DIR .*(default: $prefix/" <<<"$help" || fail "the default data directory is not under $prefix"
msg="$(PRESERVE_MODEL_DATA="$work/none" "$pm" --config nosuch 2>&1 || true)"
case "$msg" in *PRESERVE_MODEL_DATA*) ;; *) fail "the not-found message does not name PRESERVE_MODEL_DATA: $msg" ;; esac
say "ok: the not-found message names PRESERVE_MODEL_DATA"

# A C program against the installed library, built as the README writes it: pkg-config's flags
# (which name no private dependency: -I/usr/include/cjson leaked before issue 48) and the
# runpath of the installed library.
export PKG_CONFIG_PATH="$(dirname "$(find "$prefix" -name preserve-model.pc | head -1)")"
cflags="$(pkg-config --cflags preserve-model)" || fail "pkg-config --cflags preserve-model"
case "$cflags" in *cjson*|*gsl*) fail "pkg-config --cflags leaks a private dependency: $cflags" ;; esac
cp "$work/moved/examples/estimate.c" "$work/elsewhere/estimate.c"
# shellcheck disable=SC2046
cc -std=c11 estimate.c $(pkg-config --cflags --libs preserve-model) \
    -Wl,-rpath,"$(pkg-config --variable=libdir preserve-model)" -o estimate \
    || fail "cc estimate.c with pkg-config's flags"
./estimate >/dev/null || fail "the C program built against the installed library"
say "ok: a C program built with pkg-config's flags ($cflags) runs"

init="$(find "$prefix" -path '*/preserve_model/__init__.py' | head -1)"
if [ -z "$init" ]; then
    say "the Python module was not built: not checked"
    exit 0
fi
site="$(dirname "$(dirname "$init")")"
PYTHONPATH="$site" "$py" - "$prefix" <<'PY' || fail "import preserve_model from $site"
import os, sys
import preserve_model as pm
prefix = os.path.realpath(sys.argv[1])
assert os.path.realpath(pm.__file__).startswith(prefix + "/"), pm.__file__
assert os.path.realpath(pm.data_dir()).startswith(prefix + "/"), pm.data_dir()
r = pm.estimate("llama70b", batch=8)
assert r["speedup"]["preserve_vs_serial"] > 1
assert len(pm.sweep("llama70b", l2="8MiB:64MiB:8MiB")["preserve_request_s"]) == 8
PY
say "ok: PYTHONPATH=$site $py -c 'import preserve_model'"
