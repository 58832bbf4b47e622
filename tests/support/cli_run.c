#include "cli_run.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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

int cli_run(const char *const *args, const char *stdin_data, const char *const *env, cli_result *out)
{
    memset(out, 0, sizeof *out);
    int fi = temp_fd(), fo = temp_fd(), fe = temp_fd();
    if (fi < 0 || fo < 0 || fe < 0) {
        fprintf(stderr, "cli_run: cannot make temporary files\n");
        return -1;
    }
    if (stdin_data && write(fi, stdin_data, strlen(stdin_data)) != (ssize_t)strlen(stdin_data))
        return -1;
    lseek(fi, 0, SEEK_SET);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(fi, 0);
        dup2(fo, 1);
        dup2(fe, 2);
        for (const char *const *e = env; e && *e; e++)
            putenv(strdup(*e));
        size_t n = 0;
        while (args[n])
            n++;
        char **argv = calloc(n + 2, sizeof *argv);
        argv[0] = strdup(OCISBX_CLI_PATH);
        for (size_t i = 0; i < n; i++)
            argv[i + 1] = strdup(args[i]);
        execv(argv[0], argv);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    out->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    out->out = slurp_fd(fo, &out->out_len);
    out->err = slurp_fd(fe, NULL);
    close(fi);
    close(fo);
    close(fe);
    return out->out && out->err ? 0 : -1;
}

void cli_result_free(cli_result *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}
