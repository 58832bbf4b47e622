/* --help and the man page ocisbx(1), both made from the command table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define USAGE_WIDTH 100

/* ---- the usage line ---- */
/* Words of a usage line, wrapped at USAGE_WIDTH, continuation lines
 * indented by indent. */
typedef struct wrap {
    FILE *out;
    size_t col, indent;
} wrap;

static void wrap_word(wrap *w, const char *word)
{
    size_t n = strlen(word);
    if (w->col > w->indent && w->col + 1 + n > USAGE_WIDTH) {
        fprintf(w->out, "\n%*s", (int)w->indent, "");
        w->col = w->indent;
    } else {
        fputc(' ', w->out);
        w->col++;
    }
    fputs(word, w->out);
    w->col += n;
}

static void option_usage(const cli_option *o, char *buf, size_t cap)
{
    bool req = o->flags & CLI_OPT_REQUIRED, rep = o->flags & CLI_OPT_REPEAT;
    if (!o->arg)
        snprintf(buf, cap, "[--%s]", o->name);
    else
        snprintf(buf, cap, "%s--%s %s%s%s", req ? "" : "[", o->name, o->arg, req ? "" : "]", rep ? "..." : "");
}

/* The command path the verb is shown under ("sandbox-command-event stream"). */
static void verb_path(const cli_command *c, const cli_verb *v, char *buf, size_t cap)
{
    if (v && v->shown_as)
        snprintf(buf, cap, "%s", v->shown_as);
    else if (v && c->verbs)
        snprintf(buf, cap, "%s %s", c->name, v->name);
    else
        snprintf(buf, cap, "%s", c->name);
}

/* "ocisbx PATH [--opt V]... ARGS", starting at column col of out. */
static void usage_line(FILE *out, size_t col, size_t indent, const char *path, const cli_verb *v)
{
    wrap w = {out, col, indent};
    char word[160];
    snprintf(word, sizeof word, "ocisbx %s", path);
    fputs(word, out);
    w.col += strlen(word);
    for (const cli_option *o = v->options; o && o->name; o++) {
        option_usage(o, word, sizeof word);
        wrap_word(&w, word);
    }
    if (v->args)
        wrap_word(&w, v->args);
    fputc('\n', out);
}

/* "SMALL MEDIUM LARGE" as "SMALL|MEDIUM|LARGE" (sep "|"), or "SMALL, MEDIUM, LARGE". */
static void values_joined(const char *values, const char *sep, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (const char *p = values; *p && n < cap;) {
        size_t len = strcspn(p, " ");
        n += (size_t)snprintf(buf + n, cap - n, "%s%.*s", n ? sep : "", (int)len, p);
        p += len;
        while (*p == ' ')
            p++;
    }
}

/* The option's help with its fixed values (joined by sep) and its alias. */
static void option_help_text(const cli_option *o, const char *sep, char *buf, size_t cap)
{
    char vals[400] = "", first[64];
    snprintf(first, sizeof first, "%.*s", o->values ? (int)strcspn(o->values, " ") : 0, o->values ? o->values : "");
    bool shown = o->values && strstr(o->help, first); /* the help names them already */
    if (o->values && !shown)
        values_joined(o->values, sep, vals, sizeof vals);
    snprintf(buf, cap, "%s%s%s%s%s%s", o->help, vals[0] ? ": " : "", vals, o->alias ? " (alias --" : "",
             o->alias ? o->alias : "", o->alias ? ")" : "");
}

static void options_help(const char *path, const cli_option *opts)
{
    if (!opts || !opts->name) {
        printf("\n%s has no options of its own (the global options: ocisbx --help).\n", path);
        return;
    }
    printf("\noptions of %s (* required):\n", path);
    for (const cli_option *o = opts; o->name; o++) {
        char left[96], text[600];
        snprintf(left, sizeof left, "--%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        option_help_text(o, "|", text, sizeof text);
        printf("  %c %-32s %s\n", (o->flags & CLI_OPT_REQUIRED) ? '*' : ' ', left, text);
    }
}

void cli_help(const cli_command *c, const cli_verb *v)
{
    char path[128];
    if (c->verbs && !v) { /* the group: its subcommands */
        printf("usage: ocisbx %s <subcommand> [options]\n\n%s subcommands:\n", c->name, c->name);
        for (const cli_verb *w = c->verbs; w->name; w++) {
            if (w->flags & CLI_VERB_HIDDEN)
                continue;
            verb_path(c, w, path, sizeof path);
            printf("  ");
            usage_line(stdout, 2, 8, path, w);
            printf("      %s\n", w->summary);
        }
        printf("\nocisbx %s <subcommand> --help describes each option.\n", c->name);
        return;
    }
    if (!v)
        v = c->self;
    verb_path(c, v, path, sizeof path);
    printf("usage: ");
    usage_line(stdout, 7, 8, path, v);
    printf("\n%s.\n", v->summary);
    if (v->text)
        printf("\n%s", v->text);
    options_help(path, v->options);
}

void cli_help_top(FILE *out, bool oci_only)
{
    if (oci_only)
        fprintf(out, "usage: ocisbx [global options] generative-ai-sandbox <group> <subcommand> [options]\n\n"
                     "The OCI CLI's path (oci generative-ai-sandbox ...): the same as ocisbx <group> ...\n\n"
                     "groups:\n");
    else
        fprintf(out, "usage: ocisbx [global options] <command> [<subcommand>] [options]\n\ncommands:\n");
    for (const cli_command *c = cli_commands; c->name; c++) {
        if (oci_only && !(c->flags & CLI_CMD_OCI))
            continue;
        fprintf(out, "  %-28s %s\n", c->name, c->summary ? c->summary : c->self->summary);
    }
    if (oci_only)
        return;
    fprintf(out, "\nThe OCI CLI's full path works too: ocisbx generative-ai-sandbox <group> <subcommand> ...\n"
                 "\nglobal options (before or after the command):\n");
    cli_settings_help(out); /* the client settings: the library's settings table */
    for (const cli_global_option *g = cli_global_options; g->opt.name; g++) {
        char left[64], text[600];
        snprintf(left, sizeof left, "--%s%s%s", g->opt.name, g->opt.arg ? " " : "", g->opt.arg ? g->opt.arg : "");
        option_help_text(&g->opt, "|", text, sizeof text);
        if (strlen(left) > 20)
            fprintf(out, "  %s\n  %-20s %s\n", left, "", text);
        else
            fprintf(out, "  %-20s %s\n", left, text);
    }
    fprintf(out, "  %-20s %s\n", "-h", "the same as --help");
    fprintf(out, "  %-20s %s\n", "--", "ends the options: what follows is not read as one");
    fprintf(out, "A flag wins over its variable, a variable over the config file, the file over the default;\n"
                 "the OCI_SANDBOX_ variable wins over the OCI CLI's (OCI_CLI_) when both are set.\n");
}

/* ---- the man page ---- */
/* Text for roff: backslashes and dashes escaped, no line starting with a
 * control character. */
static void roff(FILE *out, const char *text)
{
    bool bol = true;
    for (const char *p = text; *p; p++) {
        if (bol && (*p == '.' || *p == '\''))
            fputs("\\&", out);
        bol = *p == '\n';
        if (*p == '\\')
            fputs("\\e", out);
        else if (*p == '-')
            fputs("\\-", out);
        else
            fputc(*p, out);
    }
}

static void man_option(FILE *out, const cli_option *o, const char *env, const char *default_value)
{
    fputs(".TP\n\\fB", out);
    roff(out, "--");
    roff(out, o->name);
    fputs("\\fR", out);
    if (o->arg) {
        fputs(" \\fI", out);
        roff(out, o->arg);
        fputs("\\fR", out);
    }
    if (o->flags & CLI_OPT_REPEAT)
        fputs(" ...", out);
    fputc('\n', out);
    char text[600];
    option_help_text(o, ", ", text, sizeof text);
    roff(out, text);
    if (o->flags & CLI_OPT_REQUIRED)
        fputs(" (required)", out);
    if (default_value) {
        fputs(" (default: ", out);
        roff(out, default_value);
        fputc(')', out);
    }
    if (env && *env) {
        fputs(" (environment: ", out);
        roff(out, env);
        fputc(')', out);
    }
    fputs(".\n", out);
}

static void man_verb(FILE *out, const cli_command *c, const cli_verb *v)
{
    char path[128];
    verb_path(c, v, path, sizeof path);
    fputs(".SS \"", out);
    roff(out, "ocisbx ");
    roff(out, path);
    fputs("\"\n", out);
    roff(out, v->summary);
    fputs(".\n.PP\n.nf\n", out);
    FILE *mem = NULL;
    char *buf = NULL;
    size_t len = 0;
    mem = open_memstream(&buf, &len);
    if (mem) {
        usage_line(mem, 0, 4, path, v);
        fclose(mem);
        roff(out, buf);
    }
    free(buf);
    fputs(".fi\n", out);
    if (v->text) {
        fputs(".PP\n", out);
        roff(out, v->text);
    }
    for (const cli_option *o = v->options; o && o->name; o++)
        man_option(out, o, NULL, NULL);
}

static void man_commands(FILE *out)
{
    fputs(".SH COMMANDS\n", out);
    for (const cli_command *c = cli_commands; c->name; c++) {
        if (c->flags & CLI_CMD_ALIAS)
            continue;
        if (!c->verbs) {
            man_verb(out, c, c->self);
            continue;
        }
        for (const cli_verb *v = c->verbs; v->name; v++)
            if (!(v->flags & CLI_VERB_HIDDEN))
                man_verb(out, c, v);
    }
    fputs(".SH ALIASES\nThis CLI's first names stay accepted and run the same subcommands:\n", out);
    for (const cli_command *c = cli_commands; c->name; c++) {
        if (!(c->flags & CLI_CMD_ALIAS))
            continue;
        for (const cli_verb *v = c->verbs; v->name; v++) {
            if (v->flags & CLI_VERB_HIDDEN)
                continue;
            fputs(".TP\n\\fBocisbx ", out);
            roff(out, c->name);
            fputc(' ', out);
            roff(out, v->name);
            fputs("\\fR\nis \\fBocisbx ", out);
            roff(out, v->shown_as ? v->shown_as : v->name);
            fputs("\\fR.\n", out);
        }
    }
}

/* Each variable of the settings table: the option it stands for. */
static void man_environment(FILE *out)
{
    fputs(".SH ENVIRONMENT\nA flag wins over its variable, a variable over the config file. Of several variables "
          "of one setting the first that is set wins (this CLI's OCI_SANDBOX_ ones before the OCI CLI's).\n",
          out);
    for (const ocisbx_setting *r = ocisbx_setting_next(NULL); r; r = ocisbx_setting_next(r))
        for (const char *const *e = r->env; e && *e; e++) {
            fputs(".TP\n\\fB", out);
            roff(out, *e);
            fputs("\\fR\nas \\fB", out);
            roff(out, r->option);
            fputs("\\fR: ", out);
            roff(out, r->help);
            fputs("\n", out);
        }
}

static const char man_head[] =
    ".SH NAME\nocisbx \\- the command line of libocisbx, for OCI Generative AI Sandboxes\n"
    ".SH SYNOPSIS\n\\fBocisbx\\fR [\\fIglobal options\\fR] \\fIcommand\\fR [\\fIsubcommand\\fR] "
    "[\\fIoptions\\fR]\n.br\n\\fBocisbx\\fR [\\fIglobal options\\fR] \\fBgenerative\\-ai\\-sandbox\\fR "
    "\\fIgroup\\fR \\fIsubcommand\\fR [\\fIoptions\\fR]\n"
    ".SH DESCRIPTION\n\\fBocisbx\\fR calls the OCI Generative AI Sandboxes service: its groups, subcommands "
    "and options are those of \\fBoci generative\\-ai\\-sandbox\\fR (the OCI CLI), and the OCI CLI's full "
    "path is accepted too. It also runs commands in a sandbox or a local directory through the library's "
    "workspace backend (\\fBcreate\\fR, \\fBexec\\fR, \\fBcp\\fR, \\fBclose\\fR), and a model's gated tools "
    "(\\fBharness\\fR).\n.PP\nEvery option that takes a value accepts \\fB\\-\\-name VALUE\\fR and "
    "\\fB\\-\\-name=VALUE\\fR. \\fB\\-\\-\\fR ends the options. \\fBocisbx \\fIcommand\\fR "
    "[\\fIsubcommand\\fR] \\fB\\-\\-help\\fR describes each option.\n"
    ".SH GLOBAL OPTIONS\nThey may come before or after the command; an option wins over its environment "
    "variable.\n";

static const char man_tail[] =
    ".SH EXIT STATUS\n.TP\n0\nsuccess\n.TP\n1\na failure: an error answer, a transport or TLS failure, bad "
    "configuration\n.TP\n2\na bad command line (nothing is sent)\n.TP\n124\n\\fBexec\\fR: the command timed "
    "out\n.TP\n125\n\\fBrun\\-and\\-stream\\fR, \\fBstream\\fR: the command finished without an exit "
    "status\n.TP\n130, 143\ninterrupted by SIGINT or SIGTERM\n.PP\n\\fBexec\\fR and the streaming "
    "subcommands pass the command's own exit status through.\n"
    ".SH FILES\n.TP\n\\fI~/.oci/config\\fR\nthe OCI config file (\\fB\\-\\-config\\-file\\fR)\n"
    ".SH SEE ALSO\n\\fBocisbx\\-emulator\\fR(1), \\fBoci\\fR(1); the library's docs/cli.md\n";

int cli_man_page(FILE *out)
{
    fputs(".TH OCISBX 1 \"\" \"ocisbx ", out);
    roff(out, ocisbx_version());
    fputs("\" \"User Commands\"\n.nh\n.ad l\n", out);
    fputs(man_head, out);
    size_t n = 0;
    const cli_global_view *g = cli_global_views(&n);
    for (size_t i = 0; i < n; i++)
        man_option(out, &g[i].opt, g[i].env, g[i].default_value);
    man_commands(out);
    man_environment(out);
    fputs(man_tail, out);
    return ferror(out) ? -1 : 0;
}
