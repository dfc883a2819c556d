# check(): the shell tests' one assertion, sourced by test_cli.sh and test_ux.sh (they set
# pass and fail to 0 first). The command runs with stdout and stderr together.
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
