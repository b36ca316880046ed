/* What every subcommand's file starts from: the C library it uses throughout (getopt_long
 * for its options, stdio for its output), the shared command-line layer (cli.h), the
 * catalogue choice and the command table. A command defines its feature-test macro first,
 * then includes this, then the library headers of the layers it calls. */
#ifndef EMB_COMMAND_H
#define EMB_COMMAND_H

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_choice.h"
#include "cli.h"
#include "command_input.h"
#include "emb_cmds.h"
#include "help_texts.h"

#endif /* EMB_COMMAND_H */
