# The benchmark's table and JSON, from trace_bench's timing lines and the callgrind
# totals (bench/trace.sh). Inputs: wall.txt ("info KEY VALUE", "wall VARIANT THREADS MEDIAN
# MIN CPU") then instr.txt ("VARIANT IR" for CG events each). Variables: cg_events,
# lttng_events, build_type, json (output path); machine facts come from BENCH_* in the
# environment. Exits 1 if any variant lacks a figure.
#
# Time per event is the threads' CPU time: on a quiet machine it equals the wall clock
# (both are printed), and on a shared one it leaves out the time a thread spent
# descheduled, which is no cost of the event. Ratios and targets use it.

function jstr(s) {
    gsub(/\\/, "\\\\", s)
    gsub(/"/, "\\\"", s)
    return "\"" s "\""
}
function num(x) { return sprintf("%.3f", x) }
function ratio(a, b) { return b > 0 ? a / b : 0 }
function target(name, value, op, limit,    met) {
    met = (op == "<=") ? value <= limit : value >= limit
    ntargets++
    tname[ntargets] = name; tvalue[ntargets] = value; top[ntargets] = op
    tlimit[ntargets] = limit; tmet[ntargets] = met
}

FNR == NR && $1 == "info" { info[$2] = $3; next }
FNR == NR && $1 == "wall" {
    v = $2
    if (!(v in seen)) { seen[v] = 1; order[++nv] = v }
    ns[v, $3] = $4; nsmin[v, $3] = $5; cpu[v, $3] = $6
    next
}
FNR != NR { ir[$1] = $2 }

END {
    required = "empty compiled_out runtime_disabled clock bare enabled enabled_locked lttng_idle lttng_traced"
    n = split(required, req, " ")
    bad = 0
    for (i = 1; i <= n; i++) {
        v = req[i]
        if (!((v, 1) in ns) || !((v, 2) in ns) || !(v in ir)) {
            print "bench: error: variant " v " was not measured" > "/dev/stderr"
            bad = 1
        }
    }
    if (bad) exit 1

    for (i = 1; i <= nv; i++) {
        v = order[i]
        ipe[v] = v == "empty" ? ir[v] / cg_events : (ir[v] - ir["empty"]) / cg_events
    }

    printf "\n%-17s %9s %9s %9s %9s %9s %9s %9s\n", "", "ns/event", "ns/event", "wall ns",
           "wall ns", "instr/", "time/", "instr/"
    printf "%-17s %9s %9s %9s %9s %9s %9s %9s\n", "variant", "1 thread", "2 threads",
           "1 thread", "2 threads", "event", "bare", "bare"
    for (i = 1; i <= nv; i++) {
        v = order[i]
        printf "%-17s %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f\n", v, cpu[v, 1], cpu[v, 2],
               ns[v, 1], ns[v, 2], ipe[v], ratio(cpu[v, 1], cpu["bare", 1]),
               ratio(ipe[v], ipe["bare"])
    }
    print "(ns/event: thread CPU time per event per thread, median over rounds; wall ns: the"
    print " same by the wall clock; instr/event: callgrind, minus the empty loop, whose row is"
    print " the loop itself; time/bare: 1 thread)"

    r_eb_t1 = ratio(cpu["enabled", 1], cpu["bare", 1])
    r_eb_t2 = ratio(cpu["enabled", 2], cpu["bare", 2])
    r_eb_i = ratio(ipe["enabled"], ipe["bare"])
    r_le_t1 = ratio(cpu["lttng_traced", 1], cpu["enabled", 1])
    r_le_t2 = ratio(cpu["lttng_traced", 2], cpu["enabled", 2])
    r_le_i = ratio(ipe["lttng_traced"], ipe["enabled"])
    r_lk_t1 = ratio(cpu["enabled_locked", 1], cpu["enabled", 1])
    r_lk_t2 = ratio(cpu["enabled_locked", 2], cpu["enabled", 2])
    r_lk_i = ratio(ipe["enabled_locked"], ipe["enabled"])
    w_eb_t1 = ratio(ns["enabled", 1], ns["bare", 1])
    w_eb_t2 = ratio(ns["enabled", 2], ns["bare", 2])
    w_le_t1 = ratio(ns["lttng_traced", 1], ns["enabled", 1])
    w_le_t2 = ratio(ns["lttng_traced", 2], ns["enabled", 2])

    target("enabled/bare time, 1 thread", r_eb_t1, "<=", 1.5)
    target("enabled/bare time, 2 threads", r_eb_t2, "<=", 1.5)
    target("enabled/bare instructions", r_eb_i, "<=", 1.5)
    target("LTTng-UST/enabled time, 1 thread", r_le_t1, ">=", 5)
    target("LTTng-UST/enabled time, 2 threads", r_le_t2, ">=", 5)
    target("runtime-disabled instructions", ipe["runtime_disabled"], "<=", 4)
    target("compiled-out instructions", ipe["compiled_out"], "<=", 0.01)

    printf "\nratios (1 thread, 2 threads, instructions; wall clock in brackets):\n"
    printf "  enabled/bare                  %5.2fx %5.2fx %5.2fx   [%.2fx %.2fx]\n",
           r_eb_t1, r_eb_t2, r_eb_i, w_eb_t1, w_eb_t2
    printf "  LTTng-UST/enabled             %5.2fx %5.2fx %5.2fx   [%.2fx %.2fx]\n",
           r_le_t1, r_le_t2, r_le_i, w_le_t1, w_le_t2
    printf "  bus-locked/context-local      %5.2fx %5.2fx %5.2fx\n", r_lk_t1, r_lk_t2, r_lk_i
    print "targets:"
    for (i = 1; i <= ntargets; i++)
        printf "  %-36s %8.2f %s %-5s %s\n", tname[i], tvalue[i], top[i], tlimit[i],
               tmet[i] ? "met" : "MISSED"
    busy = ""
    for (i = 1; i <= nv; i++)
        for (t = 1; t <= 2; t++)
            if (cpu[order[i], t] > 0 && ns[order[i], t] > 1.10 * cpu[order[i], t] &&
                ns[order[i], t] > 2)
                busy = busy " " order[i] "/" t
    if (busy != "")
        print "note: wall clock exceeded CPU time by >10% for" busy \
              " (threads were descheduled: the machine is shared)"

    # JSON
    printf "{\n" > json
    printf "  \"date\": %s,\n", jstr(ENVIRON["BENCH_DATE"]) > json
    printf "  \"machine\": {\"cpu\": %s, \"cores\": %d, \"kernel\": %s},\n",
           jstr(ENVIRON["BENCH_CPU"]), ENVIRON["BENCH_CORES"], jstr(ENVIRON["BENCH_KERNEL"]) > json
    printf "  \"compiler\": %s,\n  \"build_type\": %s,\n", jstr(ENVIRON["BENCH_CC"]),
           jstr(build_type) > json
    printf "  \"lttng_ust\": %s,\n  \"valgrind\": %s,\n", jstr(ENVIRON["BENCH_LTTNG"]),
           jstr(ENVIRON["BENCH_VALGRIND"]) > json
    printf "  \"port\": %s,\n  \"timestamp_hz\": %d,\n", jstr(info["port"]), info["timestamp_hz"] > json
    printf "  \"events_per_thread\": %d,\n  \"rounds\": %d,\n  \"callgrind_events\": %d,\n",
           info["events"], info["rounds"], cg_events > json
    printf "  \"lttng_snapshot_events\": %d,\n", lttng_events > json
    printf "  \"variants\": {\n" > json
    for (i = 1; i <= nv; i++) {
        v = order[i]
        printf "    %s: {\"ns_per_event\": {\"1\": %s, \"2\": %s}, " \
               "\"wall_ns_per_event\": {\"1\": %s, \"2\": %s}, " \
               "\"wall_ns_per_event_min\": {\"1\": %s, \"2\": %s}, " \
               "\"instructions_per_event\": %s, \"callgrind_ir\": %d, " \
               "\"vs_bare\": {\"time_1\": %s, \"time_2\": %s, \"instructions\": %s}}%s\n",
               jstr(v), num(cpu[v, 1]), num(cpu[v, 2]), num(ns[v, 1]), num(ns[v, 2]),
               num(nsmin[v, 1]), num(nsmin[v, 2]), num(ipe[v]), ir[v],
               num(ratio(cpu[v, 1], cpu["bare", 1])), num(ratio(cpu[v, 2], cpu["bare", 2])),
               num(ratio(ipe[v], ipe["bare"])), (i < nv ? "," : "") > json
    }
    printf "  },\n" > json
    printf "  \"time_basis\": \"thread CPU time per event per thread, median over rounds (wall clock in wall_*)\",\n" > json
    printf "  \"ratios\": {\"enabled_vs_bare\": {\"time_1\": %s, \"time_2\": %s, \"instructions\": %s, \"wall_1\": %s, \"wall_2\": %s},\n",
           num(r_eb_t1), num(r_eb_t2), num(r_eb_i), num(w_eb_t1), num(w_eb_t2) > json
    printf "             \"lttng_vs_enabled\": {\"time_1\": %s, \"time_2\": %s, \"instructions\": %s, \"wall_1\": %s, \"wall_2\": %s},\n",
           num(r_le_t1), num(r_le_t2), num(r_le_i), num(w_le_t1), num(w_le_t2) > json
    printf "             \"locked_vs_enabled\": {\"time_1\": %s, \"time_2\": %s, \"instructions\": %s}},\n",
           num(r_lk_t1), num(r_lk_t2), num(r_lk_i) > json
    printf "  \"targets\": [\n" > json
    for (i = 1; i <= ntargets; i++)
        printf "    {\"name\": %s, \"value\": %s, \"op\": %s, \"limit\": %s, \"met\": %s}%s\n",
               jstr(tname[i]), num(tvalue[i]), jstr(top[i]), tlimit[i],
               tmet[i] ? "true" : "false", (i < ntargets ? "," : "") > json
    printf "  ]\n}\n" > json
    close(json)
}
