#!/bin/bash
# TAP checks for the shell tests (sourced): `check NAME COMMAND...` runs the command with
# its output in $work/checks.log and prints "ok N - NAME" or "not ok N - NAME"; n counts
# the checks, failed the failures. Expects work set.
n=0 failed=0
check() { # check NAME COMMAND...
  local what=$1; shift
  n=$((n + 1))
  if "$@" >>"$work/checks.log" 2>&1; then echo "ok $n - $what"; else echo "not ok $n - $what"; failed=$((failed + 1)); fi
}
