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
#include <sys/resource.h>
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

/* The child's side after fork: its terminal, its files, its environment,
 * then the program. Never returns. */
static void child(const char *const *args, const cli_run_options *o, int fi, int fo, int fe, int master,
                  const char *slave)
{
    if (o->tty != CLI_TTY_INHERIT)
        setsid(); /* no controlling terminal now */
    if (o->tty == CLI_TTY_PTY || o->tty == CLI_TTY_PTY_STDIO) {
        close(master);
        int s = open(slave, O_RDWR); /* a session leader's first terminal becomes its own */
        if (s < 0)
            _exit(126);
        if (o->tty == CLI_TTY_PTY_STDIO)
            fi = fo = fe = s;
        else
            close(s); /* /dev/tty still names it */
    }
    if (o->stdout_to && (fo = open(o->stdout_to, O_WRONLY)) < 0)
        _exit(126);
    dup2(fi, 0);
    dup2(fo, 1);
    dup2(fe, 2);
    /* the emulator answers at once: the CLI's waits poll every 100 ms unless
     * the test's environment or env says otherwise */
    setenv("OCI_SANDBOX_POLL_INTERVAL", "0.1", 0);
    for (const char *const *e = o->env; e && *e; e++) {
        if (strchr(*e, '='))
            putenv(strdup(*e));
        else
            unsetenv(*e);
    }
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

/* The files and the child; *master set for a pseudo-terminal. */
static int start(const char *const *args, const cli_run_options *o, cli_proc *p, int *master)
{
    memset(p, 0, sizeof *p);
    p->in_fd = temp_fd(), p->out_fd = temp_fd(), p->err_fd = temp_fd();
    *master = -1;
    if (p->in_fd < 0 || p->out_fd < 0 || p->err_fd < 0) {
        fprintf(stderr, "cli_run: cannot make temporary files\n");
        return -1;
    }
    /* the child appends whatever the parent reads meanwhile (the file offset is shared) */
    fcntl(p->out_fd, F_SETFL, O_APPEND);
    fcntl(p->err_fd, F_SETFL, O_APPEND);
    const char *in = o->stdin_data;
    if (in && write(p->in_fd, in, strlen(in)) != (ssize_t)strlen(in))
        return -1;
    lseek(p->in_fd, 0, SEEK_SET);
    const char *slave = NULL;
    if (o->tty == CLI_TTY_PTY || o->tty == CLI_TTY_PTY_STDIO) {
        *master = posix_openpt(O_RDWR | O_NOCTTY);
        if (*master < 0 || grantpt(*master) || unlockpt(*master) || !(slave = ptsname(*master))) {
            fprintf(stderr, "cli_run: no pseudo-terminal: %s\n", strerror(errno));
            return -1;
        }
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0)
        child(args, o, p->in_fd, p->out_fd, p->err_fd, *master, slave);
    p->pid = pid;
    return 0;
}

static int collect(cli_proc *p, int st, cli_result *out)
{
    out->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    out->signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
    out->out = slurp_fd(p->out_fd, &out->out_len);
    out->err = slurp_fd(p->err_fd, NULL);
    close(p->in_fd);
    close(p->out_fd);
    close(p->err_fd);
    return out->out && out->err ? 0 : -1;
}

int cli_run_ex(const char *const *args, cli_run_options *o, cli_result *out)
{
    cli_run_options none = {0};
    if (!o)
        o = &none;
    memset(out, 0, sizeof *out);
    o->tty_out = NULL;
    cli_proc p;
    int master = -1;
    if (start(args, o, &p, &master) != 0)
        return -1;
    int st = 0;
    if (master >= 0) {
        pty_converse(master, p.pid, o, &st);
        close(master);
    } else {
        struct rusage ru;
        if (wait4(p.pid, &st, 0, &ru) == p.pid)
            out->peak_rss_kb = ru.ru_maxrss;
    }
    int rc = collect(&p, st, out);
    if (rc == 0 && o->tty == CLI_TTY_PTY_STDIO) { /* both streams went to the terminal */
        free(out->out);
        out->out = strdup(o->tty_out ? o->tty_out : "");
        out->out_len = strlen(out->out);
    }
    return out->out ? rc : -1;
}

int cli_run_start(const char *const *args, const cli_run_options *o, cli_proc *p)
{
    cli_run_options none = {0};
    int master = -1;
    if (o && (o->tty == CLI_TTY_PTY || o->tty == CLI_TTY_PTY_STDIO)) {
        fprintf(stderr, "cli_run_start: not with a pseudo-terminal\n");
        return -1;
    }
    return start(args, o ? o : &none, p, &master);
}

char *cli_proc_stderr(const cli_proc *p)
{
    return slurp_fd(p->err_fd, NULL); /* the child appends (O_APPEND): reading moves nothing of its */
}

char *cli_proc_stdout(const cli_proc *p)
{
    return slurp_fd(p->out_fd, NULL);
}

int cli_run_finish(cli_proc *p, cli_result *out)
{
    memset(out, 0, sizeof *out);
    int st = 0;
    struct rusage ru;
    if (wait4(p->pid, &st, 0, &ru) != p->pid)
        return -1;
    out->peak_rss_kb = ru.ru_maxrss;
    return collect(p, st, out);
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
