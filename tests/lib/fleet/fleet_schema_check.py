#!/usr/bin/env python3
"""The fleet's SQLite schema read with Python's own sqlite3 module: the migrations'
version is the newest (2), and SQLite's planner answers the bucket query (the statement
of tools/lib/fleet/fleet_query.c) from the covering index alone, never the table.
usage: fleet_schema_check.py FLEET.db"""
import sqlite3
import sys

db = sqlite3.connect(sys.argv[1])
version = db.execute("SELECT MAX(version) FROM fleet_schema").fetchone()[0]
plan = " ".join(str(r[-1]) for r in db.execute(
    "EXPLAIN QUERY PLAN SELECT bucket, MIN(signature), COUNT(*), COUNT(DISTINCT device),"
    " MIN(uploaded), MAX(uploaded) FROM records WHERE status = 'ok' AND bucket IS NOT NULL"
    " GROUP BY bucket ORDER BY COUNT(*) DESC, bucket"))
ok = version == 2 and "COVERING INDEX records_by_bucket" in plan
if not ok:
    print("fleet_schema_check: version %s, plan: %s" % (version, plan))
sys.exit(0 if ok else 1)
