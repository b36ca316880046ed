/* `emb crash`'s threads at the fault: each kernel thread's state as the flight recorder
 * leaves it (running, ready, blocked and on what), the mutexes it holds, what woke it
 * last, and the SPEC-015 §11 summary of the faulting thread. */
#ifndef EMB_TOOL_CRASH_THREADS_H
#define EMB_TOOL_CRASH_THREADS_H

#include <stdio.h>

#include "crash_report.h"
#include "json.h"

void emb_crash_print_threads(FILE *out, const struct emb_crash_report *rep);
void emb_crash_json_threads(struct emb_json *j, const struct emb_crash_report *rep);

#endif /* EMB_TOOL_CRASH_THREADS_H */
