/* `emb`: one command, one table of subcommands, exit statuses mapped here. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "emb_cmds.h"

#ifndef EMB_VERSION
#define EMB_VERSION "0.0.0"
#endif

#define EMB_CMD_ENTRY(name, summary) {#name, summary, emb_cmd_##name},
static const struct emb_cmd commands[] = {EMB_CMD_LIST(EMB_CMD_ENTRY)};
#undef EMB_CMD_ENTRY

static const size_t ncommands = sizeof commands / sizeof commands[0];

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: emb <command> [options] FILE\n"
            "       emb help <command>\n"
            "       emb --help | --version\n"
            "\n"
            "The host side of EMB Observability: decode, convert and compare what the\n"
            "target library recorded.\n"
            "\n"
            "Commands:\n");
    for (size_t i = 0; i < ncommands; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out,
            "\n"
            "Every command takes --help. Exit status: 0 ok, 1 findings, 2 bad input or usage.\n");
}

static const struct emb_cmd *find(const char *name)
{
    for (size_t i = 0; i < ncommands; i++)
        if (!strcmp(commands[i].name, name))
            return &commands[i];
    return NULL;
}

/* Every command's stdout is checked once, here: a write that failed anywhere (a full disk,
 * a closed pipe) is an exit status 2 with a message, never a silent 0. */
static int finish(const char *name, int rc)
{
    char cmd[64];
    snprintf(cmd, sizeof cmd, "emb %s", name ? name : "");
    /* A command that failed has said why (one that saw its own write fail says so). */
    int out = emb_cli_close_stdout(name ? cmd : "emb", rc == EMB_EXIT_BAD);
    return out != 0 ? out : rc;
}

static int unknown(const char *name)
{
    emb_cli_error(NULL, "unknown command '%s'", name);
    usage(stderr);
    return EMB_EXIT_BAD;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EMB_EXIT_BAD;
    }
    const char *arg = argv[1];
    if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
        usage(stdout);
        return finish(NULL, EMB_EXIT_OK);
    }
    if (!strcmp(arg, "--version") || !strcmp(arg, "-V")) {
        printf("emb %s\n", EMB_VERSION);
        return finish(NULL, EMB_EXIT_OK);
    }
    if (!strcmp(arg, "help")) {
        if (argc < 3) {
            usage(stdout);
            return finish(NULL, EMB_EXIT_OK);
        }
        const struct emb_cmd *cmd = find(argv[2]);
        if (!cmd)
            return unknown(argv[2]);
        char *help_argv[] = {(char *)cmd->name, "--help", NULL};
        return finish(cmd->name, cmd->run(2, help_argv));
    }
    if (arg[0] == '-') {
        emb_cli_error(NULL, "unknown option '%s'", arg);
        usage(stderr);
        return EMB_EXIT_BAD;
    }
    const struct emb_cmd *cmd = find(arg);
    if (!cmd)
        return unknown(arg);
    return finish(cmd->name, cmd->run(argc - 1, argv + 1));
}
