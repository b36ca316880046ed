/* The loops of loops.c with the trace classes and the log compiled out. */
#undef CONFIG_EMB_TRACE_CLASSES /* the benchmark's command line compiles every class in */
#define CONFIG_EMB_TRACE_CLASSES 0u
#define CONFIG_EMB_LOG 0
#define LOOP_SUFFIX _out
#include "loops.c"
