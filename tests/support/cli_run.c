#define _XOPEN_SOURCE 700 /* posix_openpt, grantpt, unlockpt, ptsname */
#include "cli_run.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char *slurp_fd(int fd, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    ssize_t r;
    lseek(fd, 0, SEEK_SET);
    while (b && (r = read(fd, b + n, cap - n - 1)) > 0) {
        n += (size_t)r;
        if (cap - n < 2) {
            char *nb = realloc(b, cap *= 2);
            if (!nb) {
                free(b);
                return NULL;
            }
            b = nb;
        }
    }
    if (b)
        b[n] = 0;
    if (len)
        *len = n;
    return b;
}

static int temp_fd(void)
{
    char path[] = "/tmp/ocisbx-cli-run-XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0)
        unlink(path);
    return fd;
}

/* The terminal's master side: read until the child is gone, typing the
 * answer once the prompt has shown. */
static void pty_converse(int master, pid_t pid, cli_run_options *o, int *status)
{
    size_t cap = 4096, n = 0;
    char *seen = calloc(1, cap);
    bool answered = !o->tty_answer, exited = false;
    time_t deadline = time(NULL) + (o->timeout_s > 0 ? o->timeout_s : 120);
    for (;;) {
        struct pollfd p = {master, POLLIN, 0};
        int r = poll(&p, 1, 100);
        if (r > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR))) {
            char buf[1024];
            ssize_t got = read(master, buf, sizeof buf);
            if (got > 0 && seen) {
                if (n + (size_t)got + 1 > cap) {
                    char *nb = realloc(seen, cap = (n + (size_t)got + 1) * 2);
                    if (!nb) {
                        free(seen);
                        seen = NULL;
                    }
                    seen = nb;
                }
                if (seen) {
                    memcpy(seen + n, buf, (size_t)got);
                    n += (size_t)got;
                    seen[n] = 0;
                }
            } else if (got <= 0 && exited) {
                break; /* EIO: every slave side is closed */
            } else if (got <= 0) {
                usleep(10000);
            }
        }
        if (!answered && seen && strstr(seen, o->tty_prompt ? o->tty_prompt : "")) {
            answered = true;
            if (write(master, o->tty_answer, strlen(o->tty_answer)) < 0)
                fprintf(stderr, "cli_run: writing to the terminal: %s\n", strerror(errno));
        }
        if (!exited && waitpid(pid, status, WNOHANG) == pid)
            exited = true;
        else if (exited && r == 0)
            break;
        if (!exited && time(NULL) > deadline) {
            fprintf(stderr, "cli_run: the child did not finish in time; killed (terminal: %s)\n", seen ? seen : "");
            kill(pid, SIGKILL);
            waitpid(pid, status, 0);
            exited = true;
        }
    }
    o->tty_out = seen ? seen : calloc(1, 1);
}

int cli_run_ex(const char *const *args, cli_run_options *o, cli_result *out)
{
    cli_run_options none = {0};
    if (!o)
        o = &none;
    memset(out, 0, sizeof *out);
    o->tty_out = NULL;
    int fi = temp_fd(), fo = temp_fd(), fe = temp_fd();
    if (fi < 0 || fo < 0 || fe < 0) {
        fprintf(stderr, "cli_run: cannot make temporary files\n");
        return -1;
    }
    const char *in = o->stdin_data;
    if (in && write(fi, in, strlen(in)) != (ssize_t)strlen(in))
        return -1;
    lseek(fi, 0, SEEK_SET);
    int master = -1;
    const char *slave = NULL;
    if (o->tty == CLI_TTY_PTY) {
        master = posix_openpt(O_RDWR | O_NOCTTY);
        if (master < 0 || grantpt(master) || unlockpt(master) || !(slave = ptsname(master))) {
            fprintf(stderr, "cli_run: no pseudo-terminal: %s\n", strerror(errno));
            return -1;
        }
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        if (o->tty != CLI_TTY_INHERIT)
            setsid(); /* no controlling terminal now */
        if (o->tty == CLI_TTY_PTY) {
            close(master);
            int s = open(slave, O_RDWR); /* a session leader's first terminal becomes its own */
            if (s < 0)
                _exit(126);
            close(s); /* /dev/tty still names it */
        }
        dup2(fi, 0);
        dup2(fo, 1);
        dup2(fe, 2);
        for (const char *const *e = o->env; e && *e; e++)
            putenv(strdup(*e));
        size_t n = 0;
        while (args[n])
            n++;
        char **argv = calloc(n + 2, sizeof *argv);
        argv[0] = strdup(o->program ? o->program : OCISBX_CLI_PATH);
        for (size_t i = 0; i < n; i++)
            argv[i + 1] = strdup(args[i]);
        execv(argv[0], argv);
        _exit(127);
    }
    int st = 0;
    if (master >= 0) {
        pty_converse(master, pid, o, &st);
        close(master);
    } else {
        waitpid(pid, &st, 0);
    }
    out->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    out->out = slurp_fd(fo, &out->out_len);
    out->err = slurp_fd(fe, NULL);
    close(fi);
    close(fo);
    close(fe);
    return out->out && out->err ? 0 : -1;
}

int cli_run(const char *const *args, const char *stdin_data, const char *const *env, cli_result *out)
{
    cli_run_options o = {0};
    o.stdin_data = stdin_data;
    o.env = env;
    return cli_run_ex(args, &o, out);
}

void cli_result_free(cli_result *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}
