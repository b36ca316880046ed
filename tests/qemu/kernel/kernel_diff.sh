#!/usr/bin/env bash
# emb diff shows where two runs' priority inheritance parted: the threaded firmware on the
# example kernel run twice, with `-append nochain` (the good run: the control loop does not
# wait for the SPI flash the logger holds) and as it is (the bad run: the driver waits for
# i2c held by the control loop, which waits for spi held by the logger). The comparison,
# aligned on each received sample (msgq_receive), must report the logger's raise through
# spi as the first difference, and list the two-link chain as the bad run's only, named
# as fw.c names the threads and mutexes, the one-link chain as both runs'.
#
# usage: kernel_diff.sh QEMU MACHINE FW EMB WORKDIR
set -uo pipefail
qemu=$1 machine=$2 fw=$3 emb=$4 work=$5
rm -rf "$work"
mkdir -p "$work"
for run in good bad; do
    timeout 60 "$qemu" -M "$machine" -nographic -monitor none -icount shift=3,sleep=off \
        -semihosting-config enable=on,target=native $([ $run = good ] && echo -append nochain) \
        -serial "file:$work/$run.uart0" -serial "file:$work/$run.uart1" -kernel "$fw" > "$work/$run.qemu" 2>&1 ||
        { echo "not ok - the $run run (QEMU exit $?)"; cat "$work/$run.qemu"; exit 1; }
    "$emb" capture --file "$work/$run.uart1" -o "$work/$run.emb" > "$work/$run.capture" 2>&1 ||
        { echo "not ok - emb capture of the $run run"; cat "$work/$run.capture"; exit 1; }
done
"$emb" diff --same-build --anchor msgq_receive --color=never "$work/good.emb" "$work/bad.emb" > "$work/diff.txt" 2> "$work/diff.err"
rc=$?
"$emb" diff --same-build --anchor msgq_receive --json "$work/good.emb" "$work/bad.emb" > "$work/diff.json" 2>> "$work/diff.err"
exec python3 - "$work" "$rc" <<'PY'
import json, re, sys
work, rc = sys.argv[1], int(sys.argv[2])
text = open(f"{work}/diff.txt", encoding="utf-8").read()
doc = json.load(open(f"{work}/diff.json", encoding="utf-8"))
passed = failed = 0
def check(cond, what):
    global passed, failed
    passed, failed = (passed + 1, failed) if cond else (passed, failed + 1)
    print(("ok - " if cond else "not ok - ") + what)
check(rc == 1, f"emb diff finds differences (exit {rc})")
first = re.search(r"FIRST SIGNIFICANT DIFFERENCE.*\n.*\n  observed in the bad run only: (.*)", text)
check(first is not None and re.match(r"prio_inherit thread=2 from=\d to=4 ", first.group(1)) is not None,
      f"the first difference: the logger raised to 4 in the bad run only: {first.group(1) if first else None}")
chains = {c["text"]: (c["links"], c["good"], c["bad"]) for c in doc.get("pi_chains", [])}
two = chains.get("sensor(4) -> i2c -> control(3) -> spi -> logger(2)")
one = chains.get("sensor(4) -> i2c -> control(3)")
check(two is not None and two[0] == 2 and two[1] == 0 and two[2] > 0, f"the two-link chain, bad run only: {two}")
check(one is not None and one[0] == 1 and one[1] > 0 and one[2] > 0, f"the one-link chain in both: {one}")
check(re.search(r"^  2 +0 +\d+  sensor\(4\) -> i2c -> control\(3\) -> spi -> logger\(2\)  \(bad run only\)$",
                text, re.M) is not None, "the text lists the chain as the bad run's only")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
