# The checks of the tool's shell scenarios (get_scenario.sh, contexts_scenario.sh), sourced
# after setting $ragpp, the binary under test.
# fail MESSAGE: prints it and ends the scenario.
fail() { echo "FAILED: $*"; exit 1; }
# expect RC GREP ARGS...: runs ragpp ARGS, checks the exit status and that the merged
# output matches GREP (a Perl regular expression over the whole output).
expect() {
  local rc=$1 pattern=$2
  shift 2
  local out status
  out=$("$ragpp" "$@" 2>&1)
  status=$?
  [ "$status" -eq "$rc" ] || fail "ragpp $* exited $status, not $rc: $out"
  printf '%s' "$out" | grep -Pzq -- "$pattern" || fail "ragpp $*: output does not match '$pattern': $out"
}
