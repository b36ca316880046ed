/* `emb fleet serve`: the upload endpoint (fleet_serve.h) until SIGINT or SIGTERM, a line
 * for each request on stderr. */
#define _POSIX_C_SOURCE 200809L

#include "command.h"

#include "cmd_fleet.h"
#include "fleet_serve.h"

#include <signal.h>

static const char *const CMD = "emb fleet serve";

static volatile sig_atomic_t stopping;

static void on_signal(int signo)
{
    (void)signo;
    stopping = 1;
}

static void log_request(void *arg, const char *line)
{
    (void)arg;
    fprintf(stderr, "%s: %s\n", CMD, line);
}

/* Serves until a signal; the signals are blocked but while waiting, so none is missed. */
static void wait_for_signal(void)
{
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigprocmask(SIG_BLOCK, &block, &old);
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    while (!stopping)
        sigsuspend(&old);
    sigprocmask(SIG_SETMASK, &old, NULL);
}

int emb_fleet_serve_main(const struct emb_fleet_args *a)
{
    if (!a->tokens) {
        emb_cli_error(CMD, "--tokens FILE is needed: who may upload (TOKEN DEVICE a line)");
        return EMB_EXIT_BAD;
    }
    char err[600];
    struct emb_fleet_tokens tokens;
    if (emb_fleet_tokens_load(a->tokens, &tokens, err, sizeof err) != 0) {
        emb_cli_error(CMD, "%s", err);
        return EMB_EXIT_BAD;
    }
    struct emb_fleet_db *db = emb_fleet_db_open(a->db, err, sizeof err);
    struct emb_fleet_server_config c = {.db = db, .tokens = &tokens, .listen = a->listen,
                                        .max_bytes = a->max_bytes, .rate = a->rate, .log = log_request};
    struct emb_fleet_server *s = db ? emb_fleet_server_start(&c, err, sizeof err) : NULL;
    int rc = EMB_EXIT_BAD;
    if (s) {
        printf("emb fleet serve: listening on %.*s:%u\n", (int)(strrchr(a->listen, ':') - a->listen), a->listen,
               emb_fleet_server_port(s));
        fflush(stdout);
        wait_for_signal();
        emb_fleet_server_stop(s);
        rc = EMB_EXIT_OK;
    } else {
        emb_cli_error(CMD, "%s", err);
    }
    emb_fleet_db_close(db);
    emb_fleet_tokens_free(&tokens);
    return rc;
}
