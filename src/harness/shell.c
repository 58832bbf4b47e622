/* The command line's simple commands, for the policy's command rules (see
 * shell.h). Not a shell: it reads just enough of the POSIX grammar (words,
 * quotes, the list and pipeline operators, redirections) to find every
 * simple command of a line, and calls the line opaque wherever that is
 * not enough to know what runs. */
#include "harness/shell.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ocisbx/backend.h"
#include "util/internal.h"

/* What the next word is. */
enum { WORD_ARG = 0, WORD_FILE = 1, WORD_DUP = 2, WORD_HEREDOC = 3 };

typedef struct parser {
    const char *s, *end;
    shell_line *out;
    ocisbx_buf word; /* the word being read, quotes removed */
    bool in_word;    /* a word has begun (also an empty quoted one) */
    size_t quote_at; /* where the word's first quoted character is (SIZE_MAX: none) */
    bool expands;    /* the word has an expansion or an unquoted glob */
    ocisbx_buf cmd;  /* the simple command's text so far */
    size_t words;    /* its words, assignments included */
    bool named;      /* its command word was seen */
    bool has_redir;  /* it has a redirection */
    int next;        /* what the next word is (WORD_*) */
    bool cd_now, cd; /* this simple command is cd/pushd/popd; an earlier one was */
    bool nomem;
} parser;

static void opaque(parser *p, const char *why)
{
    if (!p->out->opaque)
        p->out->opaque = why;
}

static void put(parser *p, const char *data, size_t len)
{
    if (ocisbx_buf_append(&p->word, data, len))
        p->nomem = true;
    p->in_word = true;
}

static void put_quoted(parser *p, const char *data, size_t len)
{
    if (p->quote_at == SIZE_MAX)
        p->quote_at = p->word.len;
    put(p, data, len);
}

static bool is_name_char(char c, bool first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (!first && c >= '0' && c <= '9');
}

/* NAME=... with the name and the = unquoted. */
static bool is_assignment(const parser *p)
{
    const char *w = p->word.data;
    size_t i = 0;
    while (i < p->word.len && is_name_char(w[i], i == 0))
        i++;
    return i > 0 && i < p->word.len && w[i] == '=' && i < p->quote_at;
}

static bool is_reserved(const char *w)
{
    static const char *const words[] = {"if",       "then",   "else",  "elif", "fi",     "do", "done", "case",
                                        "esac",     "while",  "until", "for",  "in",     "{",  "}",    "!",
                                        "function", "select", "[[",    "]]",   "coproc", NULL};
    for (size_t i = 0; words[i]; i++)
        if (!strcmp(words[i], w))
            return true;
    return false;
}

/* A redirection's file: a literal path that stays in /workspace. */
static void check_target(parser *p)
{
    const char *t = p->word.data ? p->word.data : "";
    if (p->expands || !t[0] || memchr(t, 0, p->word.len)) {
        opaque(p, "a redirection to a computed path");
        return;
    }
    if (t[0] == '/') {
        char *abs = NULL;
        if (strcmp(t, "/dev/null") != 0 && ocisbx_backend_workspace_path(t, &abs) != 0)
            opaque(p, "a redirection out of /workspace");
        ocisbx_free(abs);
        return;
    }
    for (const char *c = t; *c; c = strchr(c, '/') ? strchr(c, '/') + 1 : c + strlen(c))
        if (c[0] == '.' && c[1] == '.' && (c[2] == '/' || c[2] == 0)) {
            opaque(p, "a redirection out of /workspace");
            return;
        }
    if (p->cd)
        opaque(p, "a redirection after a cd");
}

/* The command word (after the assignments): compound commands and eval
 * are opaque; cd moves where relative redirections go. */
static void command_word(parser *p)
{
    const char *w = p->word.data ? p->word.data : "";
    bool quoted = p->quote_at != SIZE_MAX;
    if (!quoted && is_reserved(w))
        opaque(p, "a compound command (if, for, while, case, { })");
    if (!strcmp(w, "eval"))
        opaque(p, "eval");
    p->cd_now = !strcmp(w, "cd") || !strcmp(w, "pushd") || !strcmp(w, "popd");
    p->named = true;
}

static void end_word(parser *p)
{
    if (!p->in_word)
        return;
    bool fd = p->next == WORD_DUP && p->word.len && !p->expands &&
              (strspn(p->word.data, "0123456789") == p->word.len || !strcmp(p->word.data, "-"));
    if (fd) {
        /* >&2, <&-: a file descriptor, not a file */
    } else if (p->next == WORD_FILE || p->next == WORD_DUP) {
        check_target(p);
    } else if (p->next == WORD_ARG) {
        if (!p->named && !is_assignment(p))
            command_word(p);
        if ((p->cmd.len && ocisbx_buf_append(&p->cmd, " ", 1)) ||
            ocisbx_buf_append(&p->cmd, p->word.data ? p->word.data : "", p->word.len))
            p->nomem = true;
        p->words++;
    }
    p->next = WORD_ARG;
    ocisbx_buf_clear(&p->word);
    p->in_word = false;
    p->quote_at = SIZE_MAX;
    p->expands = false;
}

static void end_cmd(parser *p)
{
    end_word(p);
    if (p->next != WORD_ARG)
        opaque(p, "a redirection without a target");
    if (p->words || p->has_redir) {
        shell_line *l = p->out;
        if (l->n == HARNESS_SHELL_CMDS_MAX) {
            opaque(p, "too many commands");
        } else {
            char **v = realloc(l->cmds, (l->n + 1) * sizeof *v);
            char *text = ocisbx_strdup(p->cmd.data ? p->cmd.data : "");
            if (!v || !text) {
                free(text);
                p->nomem = true;
            }
            if (v)
                l->cmds = v;
            if (v && text)
                l->cmds[l->n++] = text;
        }
    }
    p->cd = p->cd || p->cd_now;
    ocisbx_buf_clear(&p->cmd);
    p->words = 0;
    p->named = p->has_redir = p->cd_now = false;
    p->next = WORD_ARG;
}

/* $... : a command substitution is opaque, a parameter marks the word. */
static void dollar(parser *p, bool in_dq)
{
    const char *s = p->s + 1;
    if (s < p->end && *s == '(') {
        opaque(p, "a command substitution $(...)");
        put(p, "$", 1);
        p->s = s;
        return;
    }
    if (!in_dq && s < p->end && (*s == '\'' || *s == '"')) {
        opaque(p, "$'...' or $\"...\" quoting");
        p->s = s;
        return;
    }
    if (s < p->end && *s == '{') {
        const char *e = s;
        while (e < p->end && *e != '}')
            e++;
        bool subst = memchr(s, '`', (size_t)(e - s)) != NULL;
        for (const char *q = s; !subst && q + 1 < e; q++)
            subst = q[0] == '$' && q[1] == '(';
        if (subst)
            opaque(p, "a command substitution inside ${...}");
        if (e == p->end)
            opaque(p, "an unterminated ${");
        put(p, p->s, (size_t)(e - p->s) + (e < p->end));
        p->expands = true;
        p->s = e < p->end ? e + 1 : e;
        return;
    }
    size_t n = 0;
    if (s < p->end && strchr("@*#?-$!0123456789", *s) && *s)
        n = 1;
    else
        while (s + n < p->end && is_name_char(s[n], n == 0))
            n++;
    put(p, p->s, n + 1);
    p->expands = p->expands || n > 0;
    p->s = s + n;
}

/* "...": backslash escapes only $ ` " \ and a newline. */
static void double_quoted(parser *p)
{
    p->s++;
    put_quoted(p, "", 0);
    while (p->s < p->end && *p->s != '"') {
        char c = *p->s;
        if (c == '\\' && p->s + 1 < p->end && strchr("$`\"\\\n", p->s[1]) && p->s[1]) {
            if (p->s[1] != '\n')
                put_quoted(p, p->s + 1, 1);
            p->s += 2;
        } else if (c == '`') {
            opaque(p, "a command substitution `...`");
            put_quoted(p, p->s++, 1);
        } else if (c == '$') {
            dollar(p, true);
        } else {
            put_quoted(p, p->s++, 1);
        }
    }
    if (p->s == p->end)
        opaque(p, "an unterminated quote");
    else
        p->s++;
}

static void single_quoted(parser *p)
{
    const char *e = memchr(p->s + 1, '\'', (size_t)(p->end - p->s - 1));
    put_quoted(p, p->s + 1, (size_t)((e ? e : p->end) - p->s - 1));
    if (!e)
        opaque(p, "an unterminated quote");
    p->s = e ? e + 1 : p->end;
}

/* <, >, >>, >|, <>, <&, >&, <<, <(, >(; an all-digit word before is the descriptor. */
static void redirection(parser *p)
{
    if (p->in_word && p->quote_at == SIZE_MAX && !p->expands && p->word.len &&
        strspn(p->word.data, "0123456789") == p->word.len) {
        ocisbx_buf_clear(&p->word);
        p->in_word = false;
    }
    end_word(p);
    if (p->next != WORD_ARG)
        opaque(p, "a redirection without a target");
    char c = *p->s++, n = p->s < p->end ? *p->s : 0;
    p->has_redir = true;
    p->next = WORD_FILE;
    if (n == '(') {
        opaque(p, "a process substitution");
        p->next = WORD_ARG;
    } else if (c == '<' && n == '<') {
        opaque(p, "a here-document");
        p->s++;
        if (p->s < p->end && (*p->s == '-' || *p->s == '<'))
            p->s++;
        p->next = WORD_HEREDOC;
    } else if (n == '&') {
        p->s++;
        p->next = WORD_DUP;
    } else if ((c == '>' && (n == '>' || n == '|')) || (c == '<' && n == '>')) {
        p->s++;
    }
}

/* One character outside quotes. */
static void step(parser *p)
{
    char c = *p->s, n = p->s + 1 < p->end ? p->s[1] : 0;
    if (c == ' ' || c == '\t') {
        end_word(p);
        p->s++;
    } else if (c == '\n' || c == ';' || c == '|' || (c == '&' && n != '>')) {
        if (c == ';' && n == ';')
            opaque(p, "a case terminator");
        end_cmd(p);
        p->s += (c == '&' && n == '&') || (c == '|' && (n == '|' || n == '&')) ? 2 : 1;
    } else if (c == '&') { /* &> and &>>: stdout and stderr to a file */
        p->s++;
        redirection(p);
    } else if (c == '(' || c == ')') {
        opaque(p, "a subshell or a function");
        end_cmd(p);
        p->s++;
    } else if (c == '<' || c == '>') {
        redirection(p);
    } else if (c == '#' && !p->in_word) {
        while (p->s < p->end && *p->s != '\n')
            p->s++;
    } else if (c == '\\') {
        if (n != '\n' && p->s + 1 < p->end)
            put_quoted(p, p->s + 1, 1);
        p->s += p->s + 1 < p->end ? 2 : 1;
    } else if (c == '\'') {
        single_quoted(p);
    } else if (c == '"') {
        double_quoted(p);
    } else if (c == '`') {
        opaque(p, "a command substitution `...`");
        put(p, p->s++, 1);
    } else if (c == '$') {
        dollar(p, false);
    } else {
        if (c == '*' || c == '?' || c == '[' || (c == '~' && !p->in_word))
            p->expands = true;
        put(p, p->s++, 1);
    }
}

void harness_shell_line_free(shell_line *l)
{
    for (size_t i = 0; l && i < l->n; i++)
        free(l->cmds[i]);
    if (l) {
        free(l->cmds);
        memset(l, 0, sizeof *l);
    }
}

int harness_shell_parse(const char *line, size_t len, shell_line *out)
{
    memset(out, 0, sizeof *out);
    parser p;
    memset(&p, 0, sizeof p);
    p.s = line ? line : "";
    p.end = p.s + (line ? len : 0);
    p.out = out;
    p.quote_at = SIZE_MAX;
    if (memchr(p.s, 0, (size_t)(p.end - p.s)))
        opaque(&p, "a NUL byte");
    while (p.s < p.end && !p.nomem)
        step(&p);
    end_cmd(&p);
    ocisbx_buf_free(&p.word);
    ocisbx_buf_free(&p.cmd);
    if (p.nomem) {
        harness_shell_line_free(out);
        return ocisbx_fail_nomem();
    }
    return 0;
}
