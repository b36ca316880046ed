/* The subcommands of `emb`, one line each: EMB_CMD(name, summary). Adding a subcommand
 * is one line here plus its file cmd_<name>.c defining
 * `int emb_cmd_<name>(int argc, char **argv)`; main.c builds its table from this list. */
#ifndef EMB_CMDS_H
#define EMB_CMDS_H

#define EMB_CMD_LIST(EMB_CMD)                                                              \
    EMB_CMD(trace, "decode a trace stream file to text, JSON, Perfetto or CTF")             \
    EMB_CMD(log, "decode a deferred log stream against the program's ELF")                  \
    EMB_CMD(capture, "seal a run's trace (and log, crash record) into a capture file")       \
    EMB_CMD(inspect, "show what a capture file holds: identity, window, events, frames")     \
    EMB_CMD(diff, "compare a good and a bad capture: the earliest significant difference")   \
    EMB_CMD(events, "service IPC tracing: run the events sink, ask it, export its ring")     \
    EMB_CMD(crash, "show a crash record with its faulting line, registers and last events")  \
    EMB_CMD(desc, "read a memory image through its debug descriptor: contexts, rings, monitors") \
    EMB_CMD(import, "import another system's trace (RTEMS record streams) as a trace stream") \
    EMB_CMD(fleet, "many devices' crash records in a database: ingest, buckets, report, serve")

#define EMB_CMD_DECLARE(name, summary) int emb_cmd_##name(int argc, char **argv);
EMB_CMD_LIST(EMB_CMD_DECLARE)
#undef EMB_CMD_DECLARE

/* `emb capture extract`, which `emb capture` hands its arguments to. */
int emb_cmd_capture_extract(int argc, char **argv);

#endif /* EMB_CMDS_H */
