# The shell tests' common parts, sourced by test_cli.sh, test_ux.sh and test_writers.sh:
#   check_begin PM ROOT   sets pm and root, points the tool at ROOT's data and plots, zeroes
#                         pass and fail, and enters a scratch directory ($tmp) removed on exit
#   check ...             the one assertion (test_writers.sh defines its own after sourcing)
#   lacks ...             its converse: a substring that must not be in the output
#   check_end             prints the counts; its status is the script's (0: no failure)
check_begin() {
    pm="$1"
    root="$2"
    export PRESERVE_MODEL_DATA="$root/data"
    export PRESERVE_MODEL_PLOTS="$root/plots"
    fail=0
    pass=0
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    cd "$tmp" || exit 1
}

check_end() {
    echo "$pass passed, $fail failed"
    [ "$fail" -eq 0 ]
}

# check(): the command runs with stdout and stderr together.
check() { # name, expected exit code, substring expected in stdout+stderr, command...
    local name="$1" code="$2" want="$3"
    shift 3
    local out rc
    out=$("$@" 2>&1)
    rc=$?
    if [ "$rc" -ne "$code" ] || ! grep -qF -- "$want" <<<"$out"; then
        echo "FAIL $name: exit $rc (want $code), output lacks '$want':"
        echo "$out" | head -20
        fail=$((fail + 1))
    else
        pass=$((pass + 1))
    fi
}

lacks() { # name, substring that must not be in stdout+stderr, command...
    local name="$1" bad="$2"
    shift 2
    if "$@" 2>&1 | grep -qF -- "$bad"; then
        echo "FAIL $name: output has '$bad'"
        fail=$((fail + 1))
    else
        pass=$((pass + 1))
    fi
}
