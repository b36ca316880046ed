#!/usr/bin/python3
"""Window mode counts every event lost after the window closed, not only the one that
closed it (issue 12, item 5). window_drops fires known numbers of events after the close
on four rings (on each worker thread some from a signal handler) and prints what each ring
must count; every reader must say exactly that: `emb inspect --json`, `emb trace
--summary`, `emb diff` (two runs), and babeltrace2 on the CTF `emb trace -f ctf` writes
(its discarded-events messages, counted by tests/support/bt_loss.py): the independent
reader.

Usage: test_window_drops.py EMB WINDOW_DROPS WORKDIR
"""
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from tap import done, ok  # noqa: E402

EMB, PROG, WORK = sys.argv[1:4]
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)


def emb(*args):
    r = subprocess.run([EMB] + list(args), capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout, r.stderr


def run(name):
    embt, sealed = os.path.join(WORK, name + ".embt"), os.path.join(WORK, name + ".emb")
    r = subprocess.run([PROG, embt], capture_output=True, text=True, timeout=120)
    ok(r.returncode == 0, "window_drops run %s recorded and dumped %s" % (name, r.stderr.strip()))
    rc, _, err = emb("capture", "-o", sealed, embt)
    ok(rc == 0, "run %s sealed %s" % (name, err.strip()[:200]))
    want = {k: int(v) for k, v in (l.split() for l in r.stdout.splitlines())}
    return embt, sealed, want


embt, sealed, want = run("a")
_, sealed_b, _ = run("b")
total = want.pop("total")
print("# expected per ring %s, total %d" % (want, total))

rc, out, _ = emb("inspect", "--json", sealed)
ok(rc == 0, "emb inspect --json")
ins = json.loads(out)["window"] if rc == 0 else {"contexts": [], "drops": None}
rc, out, _ = emb("trace", "--summary", "--json", embt)
ok(rc == 0, "emb trace --summary --json")
summ = json.loads(out) if rc == 0 else {"contexts": [], "summary": {}}
rc, out, err = emb("diff", "--json", "--same-build", sealed, sealed_b)
ok(rc == 0, "emb diff finds two identical windows alike %s" % err.strip()[:200])
diff = json.loads(out)["set_aside"] if out else {}
ctf = os.path.join(WORK, "ctf")
rc, _, _ = emb("trace", "-f", "ctf", "-o", ctf, embt)
ok(rc == 0, "emb trace -f ctf")
r = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "..", "support", "bt_loss.py"), ctf],
                   capture_output=True, text=True, timeout=120)
ok(r.returncode == 0, "babeltrace2 reads the CTF %s" % r.stderr.strip()[-200:])
bt = json.loads(r.stdout) if r.returncode == 0 else {}
print("# babeltrace2: %s" % bt)

ids = {c["name"]: str(c["id"]) for c in summ["contexts"]}
readers = {
    "emb inspect": ({r["name"]: r["discarded"] for r in ins["contexts"]}, ins["drops"]),
    "emb trace --summary": ({c["name"]: c["discarded"] for c in summ["contexts"]},
                            summ["summary"].get("discarded")),
    "babeltrace2": ({n: bt.get(i, {}).get("discarded") for n, i in ids.items()},
                    sum(s["discarded"] for s in bt.values())),
}
for reader, (rows, sum_) in readers.items():
    ok(rows == want and sum_ == total,
       "%s counts every event fired after the close: %s, total %s" % (reader, rows, sum_))
ok(not any("uncounted" in s for s in bt.values()),
   "babeltrace2 gives a count for every loss (no 'may have discarded')")
ok(diff.get("dropped_after_good") == total and diff.get("dropped_after_bad") == total,
   "emb diff counts them after the compared range, in both runs: %s, %s"
   % (diff.get("dropped_after_good"), diff.get("dropped_after_bad")))
done()
