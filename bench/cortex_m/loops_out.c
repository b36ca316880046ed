/* The loops of loops.c with the trace classes and the log compiled out. */
#define CONFIG_EMB_TRACE_CLASSES 0u
#define CONFIG_EMB_LOG 0
#define LOOP_SUFFIX _out
#include "loops.c"
