/* ocisbx-docgen DIR: writes the man page and the completion scripts made
 * from the command table into DIR (the build runs it; not installed):
 * ocisbx.1, ocisbx.bash, _ocisbx (zsh), ocisbx.fish. Each file is written
 * whole under a temporary name, then renamed. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static int write_one(const char *dir, const char *name, const char *what)
{
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        perror(tmp);
        return 1;
    }
    int rc = strcmp(what, "man") == 0 ? cli_man_page(f) : cli_completion_script(f, what);
    if (fclose(f) != 0 || rc != 0 || rename(tmp, path) != 0) {
        fprintf(stderr, "ocisbx-docgen: writing %s failed\n", path);
        remove(tmp);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: ocisbx-docgen DIR\n");
        return 2;
    }
    return write_one(argv[1], "ocisbx.1", "man") || write_one(argv[1], "ocisbx.bash", "bash") ||
           write_one(argv[1], "_ocisbx", "zsh") || write_one(argv[1], "ocisbx.fish", "fish");
}
