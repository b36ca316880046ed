#!/bin/bash
# TAP checks for the shell tests (sourced). n counts the checks, passed and failed their
# outcomes; each prints "ok N - WHAT" or "not ok N - WHAT".
#   check NAME COMMAND...   runs the command, its output in $work/checks.log (work set)
#   ok STATUS WHAT          a check whose command has run: STATUS its exit status
#   tap_summary [PREFIX]    prints "N passed, N failed" after PREFIX; its status (the
#                           script's last command) fails when a check failed or none ran
n=0 passed=0 failed=0
check() { # check NAME COMMAND...
  local what=$1; shift
  n=$((n + 1))
  if "$@" >>"$work/checks.log" 2>&1; then echo "ok $n - $what"; passed=$((passed + 1)); else echo "not ok $n - $what"; failed=$((failed + 1)); fi
}
ok() { # ok STATUS WHAT
  n=$((n + 1))
  if [ "$1" -eq 0 ]; then echo "ok $n - $2"; passed=$((passed + 1))
  else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}
tap_summary() { # tap_summary [PREFIX]
  echo "${1-}$passed passed, $failed failed"
  [ "$failed" -eq 0 ] && [ "$n" -gt 0 ]
}
