#!/usr/bin/env bash
# emb fleet serve over HTTP, spoken to by curl as a device would: a crash record the
# native port's fault path left, raw and framed as a channel-2 frame (the library's frame
# encoder); a device token and a fleet token; and every refusal with its HTTP status: no
# or a bad token (401), no device (400), an empty body (400), too large (413), a record
# its decoder refuses (422, stored as refused), over the rate (429), another method (405),
# another path (404).
# usage: test_fleet_serve.sh EMB DEVICE SCRATCH
set -u
emb=$1 dev=$2 out=$3
rm -rf "$out" && mkdir -p "$out"
pass=0 fail=0
check() { # check DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then pass=$((pass + 1)); echo "ok - $what"; else fail=$((fail + 1)); echo "not ok - $what"; fi
}
# post [CURL ARGS...]: the HTTP status; the body in $out/body.
post() { curl -s -o "$out/body" -w '%{http_code}' -X POST "$@"; }

for kind in null div0; do
  { "$dev" crash "$out/retained-$kind" $kind; } 2>/dev/null
done
"$dev" save "$out/retained-null" "$out/null.rec"
cp "$out/retained-div0" "$out/retained-div0-copy"
"$dev" frame "$out/retained-div0" "$out/div0.frame"
"$dev" save "$out/retained-div0-copy" "$out/div0.rec"
check "the device left a record, and another framed as its link sends it" test -s "$out/null.rec" -a -s "$out/div0.frame"
head -c 6000 /dev/urandom >"$out/big.bin"
cat >"$out/tokens" <<'T'
# TOKEN DEVICE
dev-7-secret node-7
fleet-secret *
rate-secret node-r
T
db=sqlite:$out/fleet.db
"$emb" fleet serve --db "$db" --tokens "$out/tokens" --listen 127.0.0.1:0 --max-bytes 5000 --rate 20 \
  >"$out/serve.out" 2>"$out/serve.err" &
server=$!
for _ in $(seq 100); do grep -qs listening "$out/serve.out" && break; sleep 0.1; done
port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\)$/\1/p' "$out/serve.out")
check "serve says where it listens" test -n "$port"
url=http://127.0.0.1:$port/v1/upload
dtok=(-H "Authorization: Bearer dev-7-secret")

check "a device's record: 201 stored" test "$(post "${dtok[@]}" --data-binary @"$out/null.rec" "$url")" = 201
check "  the reply names its bucket" grep -q '"status": "stored".*"bucket": "[0-9a-f]\{12\}"' "$out/body"
check "the same record again: 200, stored already" test "$(post "${dtok[@]}" --data-binary @"$out/null.rec" "$url")" = 200
check "a record framed as a channel-2 frame: 201" test "$(post "${dtok[@]}" --data-binary @"$out/div0.frame" "$url")" = 201
check "  it is the record itself: the bare record is stored already (200)" \
  test "$(post "${dtok[@]}" --data-binary @"$out/div0.rec" "$url")" = 200
check "no token: 401" test "$(post --data-binary @"$out/null.rec" "$url")" = 401
check "a bad token: 401" test "$(post -H "Authorization: Bearer dev-7-secreT" --data-binary @"$out/null.rec" "$url")" = 401
check "  with a JSON reason" grep -q '"error": *"no valid token' "$out/body"
check "a fleet token without a device: 400" \
  test "$(post -H "Authorization: Bearer fleet-secret" --data-binary @"$out/null.rec" "$url")" = 400
check "a fleet token naming its device: 200 (the record is stored already)" \
  test "$(post -H "Authorization: Bearer fleet-secret" -H "X-Emb-Device: node-9" --data-binary @"$out/null.rec" "$url")" = 200
check "an empty upload: 400" test "$(post "${dtok[@]}" --data-binary '' "$url")" = 400
check "an upload over --max-bytes: 413" test "$(post "${dtok[@]}" --data-binary @"$out/big.bin" "$url")" = 413
check "  also when sent in chunks, its length unannounced: 413" \
  test "$(post "${dtok[@]}" -H "Transfer-Encoding: chunked" --data-binary @"$out/big.bin" "$url")" = 413
printf 'EMBC but not a record at all' >"$out/bad.bin"
check "a malformed record: 422" test "$(post "${dtok[@]}" --data-binary @"$out/bad.bin" "$url")" = 422
check "  saying why, at which byte" grep -q '"error": *"byte [0-9]*: ' "$out/body"
check "GET: 405" test "$(curl -s -o /dev/null -w '%{http_code}' "${dtok[@]}" "$url")" = 405
check "another path: 404" test "$(post "${dtok[@]}" --data-binary @"$out/null.rec" "http://127.0.0.1:$port/upload")" = 404
# The rate: 20 a minute per token. A minute may turn once while these run, so of 41 uploads
# the first 20 are taken and at least one later is refused.
# Each refusal's headers are kept, so the Retry-After check reads a refusal seen here (an
# upload sent after the loop would be taken if the minute turned in between).
codes=$(for i in $(seq 41); do printf 'x%03d' $i >"$out/r.bin"; post -D "$out/r.headers" -H "Authorization: Bearer rate-secret" --data-binary @"$out/r.bin" "$url"; grep -qi '^HTTP/[0-9.]* 429' "$out/r.headers" && cp "$out/r.headers" "$out/refused.headers"; echo; done)
check "the first 20 uploads of a token in a minute are taken" \
  test "$(echo "$codes" | head -20 | grep -c 429)" -eq 0
check "  then it is refused: 429" bash -c "echo '$codes' | grep -q 429"
check "  with Retry-After" grep -qi '^Retry-After: 60' "$out/refused.headers"
check "the other tokens are not limited by it" test "$(post "${dtok[@]}" --data-binary @"$out/null.rec" "$url")" = 200

kill -TERM $server; wait $server; rc=$?
check "serve stops on SIGTERM, exit 0" test $rc -eq 0
"$emb" fleet buckets --db "$db" --json >"$out/buckets.json"
check "the database holds the two records' buckets, the refused uploads as refused" python3 - "$out/buckets.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
sigs = sorted(b["signature"] for b in d["buckets"])
ok = d["records"] == 2 and len(sigs) == 2 and d["refused"] >= 2
sys.exit(0 if ok else 1)
PY
check "serve without --tokens is exit 2" test "$("$emb" fleet serve --db "$db" 2>/dev/null; echo $?)" = 2
check "serve on a bad address is exit 2" \
  test "$("$emb" fleet serve --db "$db" --tokens "$out/tokens" --listen nowhere 2>/dev/null; echo $?)" = 2
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
