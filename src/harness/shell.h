/* A POSIX shell command line as the policy's command rules see it
 * (library-internal): its simple commands, and whether it has anything an
 * allow rule cannot vouch for by looking at them.
 *
 * The line is split at ;, &, &&, |, || and newlines into simple commands;
 * each one's text is its words with the quotes removed (single, double,
 * backslash; $'...' is not understood), joined by one space, without its
 * redirections. The line is opaque when it has a command substitution
 * ($(...), backquotes, also $((...))), a process substitution (<(...),
 * >(...)), eval, a subshell or any compound command ((...), { }, if, for,
 * while, case, a function), a here-document, $'...' or $"...", a
 * redirection whose target is computed (an expansion, a glob, ~) or out of
 * /workspace (an absolute path other than /workspace/... and /dev/null, a
 * relative one with "..", or one after a cd), an unterminated quote, or
 * more than HARNESS_SHELL_CMDS_MAX simple commands. */
#ifndef OCISBX_HARNESS_SHELL_H
#define OCISBX_HARNESS_SHELL_H

#include <stddef.h>

#define HARNESS_SHELL_CMDS_MAX 4096

typedef struct shell_line {
    char **cmds; /* the simple commands' texts */
    size_t n;
    const char *opaque; /* NULL, or what makes the line opaque (static text, for messages) */
} shell_line;

/* Parses len bytes of line. 0, or OCISBX_ENOMEM (then *out is empty). */
int harness_shell_parse(const char *line, size_t len, shell_line *out);
void harness_shell_line_free(shell_line *l);

#endif
