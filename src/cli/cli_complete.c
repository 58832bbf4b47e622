/* `ocisbx completion bash|zsh|fish`: completion scripts made from the
 * command table (commands, subcommands, every option, fixed values, files
 * and directories where an option names one). bash and zsh share the data
 * functions (plain sh `case` tables); fish gets `complete` lines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Calls fn for every usage in the table: the command path ("sandbox
 * create", "exec") and its verb entry; hidden verbs too when hidden. */
typedef void (*each_fn)(FILE *out, const char *path, const cli_verb *v, void *ud);
static void each_usage(FILE *out, bool hidden, each_fn fn, void *ud)
{
    char path[160];
    for (const cli_command *c = cli_commands; c->name; c++) {
        if (!c->verbs) {
            fn(out, c->name, c->self, ud);
            continue;
        }
        for (const cli_verb *v = c->verbs; v->name; v++) {
            if ((v->flags & CLI_VERB_HIDDEN) && !hidden)
                continue;
            snprintf(path, sizeof path, "%s %s", c->name, v->name);
            fn(out, path, v, ud);
        }
    }
}

/* What an option's value is: "@file", "@dir", "@any", its fixed values;
 * NULL for a flag. */
static const char *value_kind(const cli_option *o)
{
    if (!o->arg)
        return NULL;
    if (o->values)
        return o->values;
    return (o->flags & CLI_OPT_DIR) ? "@dir" : (o->flags & CLI_OPT_FILE) ? "@file" : "@any";
}

/* ---- the data both sh-like shells read ---- */
typedef struct name_list {
    char *buf;
    size_t len, cap;
} name_list;

/* Adds "--name" once: the list is " --a --b " (a space before and after each). */
static void names_add(name_list *n, const char *prefix, const char *name)
{
    char word[128];
    snprintf(word, sizeof word, " %s%s ", prefix, name);
    if (n->buf && strstr(n->buf, word))
        return;
    const char *src = n->len ? word + 1 : word;
    size_t add = strlen(src);
    if (n->len + add + 1 > n->cap) {
        size_t cap = (n->cap ? n->cap * 2 : 1024) + add;
        char *b = realloc(n->buf, cap);
        if (!b)
            return;
        n->buf = b;
        n->cap = cap;
    }
    memcpy(n->buf + n->len, src, add + 1);
    n->len += add;
}

static void add_valued(FILE *out, const char *path, const cli_verb *v, void *ud)
{
    (void)out;
    (void)path;
    for (const cli_option *o = v->options; o && o->name; o++)
        if (o->arg) {
            names_add(ud, "--", o->name);
            if (o->alias)
                names_add(ud, "--", o->alias);
        }
}

static void sh_verbs(FILE *out)
{
    fputs("_ocisbx_verbs() {\n    case $1 in\n", out);
    for (const cli_command *c = cli_commands; c->name; c++) {
        if (!c->verbs)
            continue;
        fprintf(out, "    %s) echo '", c->name);
        const char *sep = "";
        for (const cli_verb *v = c->verbs; v->name; v++)
            if (!(v->flags & CLI_VERB_HIDDEN)) {
                fprintf(out, "%s%s", sep, v->name);
                sep = " ";
            }
        fputs("' ;;\n", out);
    }
    fputs("    esac\n}\n", out);
}

static void sh_opts_case(FILE *out, const char *path, const cli_verb *v, void *ud)
{
    (void)ud;
    fprintf(out, "    '%s') echo '", path);
    const char *sep = "";
    for (const cli_option *o = v->options; o && o->name; o++) {
        fprintf(out, "%s--%s", sep, o->name);
        sep = " ";
    }
    fputs("' ;;\n", out);
}

static void sh_arg_case(FILE *out, const char *path, const cli_verb *v, void *ud)
{
    (void)ud;
    for (const cli_option *o = v->options; o && o->name; o++) {
        const char *k = value_kind(o);
        if (!k)
            continue;
        fprintf(out, "    '%s --%s') echo '%s' ;;\n", path, o->name, k);
        if (o->alias)
            fprintf(out, "    '%s --%s') echo '%s' ;;\n", path, o->alias, k);
    }
}

static void sh_files_case(FILE *out, const char *path, const cli_verb *v, void *ud)
{
    (void)ud;
    if (v->flags & CLI_VERB_FILES)
        fprintf(out, "    '%s') echo @file ;;\n", path);
}

static void sh_data(FILE *out)
{
    fputs("_ocisbx_commands='", out);
    for (const cli_command *c = cli_commands; c->name; c++)
        fprintf(out, "%s ", c->name);
    fputs("generative-ai-sandbox'\n_ocisbx_oci_groups='", out);
    const char *sep = "";
    for (const cli_command *c = cli_commands; c->name; c++)
        if (c->flags & CLI_CMD_OCI) {
            fprintf(out, "%s%s", sep, c->name);
            sep = " ";
        }
    name_list globals = {0}, valued = {0};
    size_t ng = 0;
    const cli_global_view *gv = cli_global_views(&ng);
    for (size_t i = 0; i < ng; i++) {
        names_add(&globals, "--", gv[i].opt.name);
        if (gv[i].opt.arg)
            names_add(&valued, "--", gv[i].opt.name);
    }
    each_usage(out, true, add_valued, &valued);
    fprintf(out, "'\n_ocisbx_global_opts='%s'\n", globals.buf ? globals.buf : "");
    fputs("# every option that takes a value (to find the command and subcommand words)\n", out);
    fprintf(out, "_ocisbx_valued='%s'\n", valued.buf ? valued.buf : "");
    free(globals.buf);
    free(valued.buf);
    sh_verbs(out);
    fputs("_ocisbx_opts() {\n    case $1 in\n", out);
    each_usage(out, true, sh_opts_case, NULL);
    fputs("    esac\n}\n", out);
    fputs("# the value of option $2 under $1: @file, @dir, @any, its fixed values; nothing for a flag\n"
          "_ocisbx_arg() {\n    case \"$1 $2\" in\n",
          out);
    each_usage(out, true, sh_arg_case, NULL);
    for (size_t i = 0; i < ng; i++)
        if (value_kind(&gv[i].opt))
            fprintf(out, "    *' --%s') echo '%s' ;;\n", gv[i].opt.name, value_kind(&gv[i].opt));
    fputs("    esac\n}\n", out);
    fputs("# what the words after the options are\n_ocisbx_args() {\n    case $1 in\n", out);
    each_usage(out, true, sh_files_case, NULL);
    fputs("    esac\n}\n", out);
}

/* ---- bash ---- */
static const char bash_main[] =
    "_ocisbx_value() {\n"
    "    local IFS=$'\\n'\n"
    "    case $1 in\n"
    "    @file) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- \"$2\")) ;;\n"
    "    @dir) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- \"$2\")) ;;\n"
    "    @any) COMPREPLY=() ;;\n"
    "    *) IFS=$' \\t\\n'; COMPREPLY=($(compgen -W \"$1\" -- \"$2\")) ;;\n"
    "    esac\n"
    "}\n"
    "_ocisbx() {\n"
    "    local cur=${COMP_WORDS[COMP_CWORD]} opt= cmd= verb= oci= w i=1 path kind pre\n"
    "    COMPREPLY=()\n"
    "    while [ \"$i\" -lt \"$COMP_CWORD\" ]; do\n"
    "        w=${COMP_WORDS[i]}\n"
    "        case $w in\n"
    "        --) if [ -n \"$cmd\" ]; then _ocisbx_value @file \"$cur\"; return 0; fi ;;\n"
    "        -*) if [ \"${COMP_WORDS[i+1]}\" = = ]; then i=$((i + 2))\n"
    "            elif [[ $w != *=* && $_ocisbx_valued == *\" $w \"* ]]; then i=$((i + 1)); fi ;;\n"
    "        *) if [ -z \"$cmd$oci\" ] && [ \"$w\" = generative-ai-sandbox ]; then oci=1\n"
    "           elif [ -z \"$cmd\" ]; then cmd=$w\n"
    "           elif [ -z \"$verb\" ] && [ -n \"$(_ocisbx_verbs \"$cmd\")\" ]; then verb=$w; fi ;;\n"
    "        esac\n"
    "        i=$((i + 1))\n"
    "    done\n"
    "    path=$cmd${verb:+ $verb}\n"
    "    # an option's value: --opt VALUE, or --opt=VALUE (which bash splits at the =)\n"
    "    if [ \"$cur\" = = ]; then opt=${COMP_WORDS[COMP_CWORD-1]}; cur=\n"
    "    elif [ \"$COMP_CWORD\" -ge 2 ] && [ \"${COMP_WORDS[COMP_CWORD-1]}\" = = ]; then "
    "opt=${COMP_WORDS[COMP_CWORD-2]}\n"
    "    elif [ \"$COMP_CWORD\" -ge 2 ]; then opt=${COMP_WORDS[COMP_CWORD-1]}; fi\n"
    "    case $opt in\n"
    "    --?*) kind=$(_ocisbx_arg \"$path\" \"$opt\")\n"
    "        if [ -n \"$kind\" ]; then _ocisbx_value \"$kind\" \"$cur\"; return 0; fi ;;\n"
    "    esac\n"
    "    case $cur in\n"
    "    --*=*) pre=${cur%%=*}=\n"
    "        _ocisbx_value \"$(_ocisbx_arg \"$path\" \"${cur%%=*}\")\" \"${cur#*=}\"\n"
    "        COMPREPLY=(\"${COMPREPLY[@]/#/$pre}\"); return 0 ;;\n"
    "    -*) COMPREPLY=($(compgen -W \"$(_ocisbx_opts \"$path\") $_ocisbx_global_opts\" -- \"$cur\")); "
    "return 0 ;;\n"
    "    esac\n"
    "    if [ -z \"$cmd\" ] && [ -n \"$oci\" ]; then COMPREPLY=($(compgen -W \"$_ocisbx_oci_groups\" -- "
    "\"$cur\"))\n"
    "    elif [ -z \"$cmd\" ]; then COMPREPLY=($(compgen -W \"$_ocisbx_commands\" -- \"$cur\"))\n"
    "    elif [ -z \"$verb\" ] && [ -n \"$(_ocisbx_verbs \"$cmd\")\" ]; then\n"
    "        COMPREPLY=($(compgen -W \"$(_ocisbx_verbs \"$cmd\")\" -- \"$cur\"))\n"
    "    elif [ -n \"$(_ocisbx_args \"$path\")\" ]; then _ocisbx_value @file \"$cur\"; fi\n"
    "    return 0\n"
    "}\n"
    "complete -F _ocisbx ocisbx\n";

/* ---- zsh ---- */
static const char zsh_main[] =
    "_ocisbx_value() {\n"
    "    case $1 in\n"
    "    @file) _files ;;\n"
    "    @dir) _files -/ ;;\n"
    "    @any) ;;\n"
    "    *) compadd -- ${=1} ;;\n"
    "    esac\n"
    "}\n"
    "_ocisbx() {\n"
    "    local cur=${words[CURRENT]} opt= cmd= verb= oci= w i=2 path kind\n"
    "    while (( i < CURRENT )); do\n"
    "        w=${words[i]}\n"
    "        case $w in\n"
    "        --) if [[ -n $cmd ]]; then _files; return; fi ;;\n"
    "        -*) if [[ $w != *=* && $_ocisbx_valued == *\" $w \"* ]]; then (( i++ )); fi ;;\n"
    "        *) if [[ -z $cmd$oci && $w == generative-ai-sandbox ]]; then oci=1\n"
    "           elif [[ -z $cmd ]]; then cmd=$w\n"
    "           elif [[ -z $verb && -n $(_ocisbx_verbs $cmd) ]]; then verb=$w; fi ;;\n"
    "        esac\n"
    "        (( i++ ))\n"
    "    done\n"
    "    path=$cmd${verb:+ $verb}\n"
    "    if [[ $cur == --*=* ]]; then\n"
    "        kind=$(_ocisbx_arg \"$path\" \"${cur%%=*}\")\n"
    "        compset -P '*='\n"
    "        _ocisbx_value \"$kind\"; return\n"
    "    fi\n"
    "    opt=${words[CURRENT-1]}\n"
    "    if [[ CURRENT -gt 2 && $opt == --?* ]]; then\n"
    "        kind=$(_ocisbx_arg \"$path\" \"$opt\")\n"
    "        if [[ -n $kind ]]; then _ocisbx_value \"$kind\"; return; fi\n"
    "    fi\n"
    "    if [[ $cur == -* ]]; then compadd -- ${=$(_ocisbx_opts \"$path\")} ${=_ocisbx_global_opts}; return; fi\n"
    "    if [[ -z $cmd && -n $oci ]]; then compadd -- ${=_ocisbx_oci_groups}\n"
    "    elif [[ -z $cmd ]]; then compadd -- ${=_ocisbx_commands}\n"
    "    elif [[ -z $verb && -n $(_ocisbx_verbs $cmd) ]]; then compadd -- ${=$(_ocisbx_verbs $cmd)}\n"
    "    elif [[ -n $(_ocisbx_args \"$path\") ]]; then _files; fi\n"
    "}\n"
    "if [[ ${funcstack[1]} == _ocisbx ]]; then _ocisbx \"$@\"; else compdef _ocisbx ocisbx; fi\n";

/* ---- fish ---- */
/* A description for fish: no single quotes or backslashes inside '...'. */
static void fish_text(FILE *out, const char *text)
{
    for (const char *p = text; *p; p++)
        if (*p == '\'' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else
            fputc(*p, out);
}

static void fish_option(FILE *out, const char *cond, const cli_option *o)
{
    const char *names[2] = {o->name, o->alias};
    for (int i = 0; i < 2 && names[i]; i++) {
        fputs("complete -c ocisbx", out);
        if (cond)
            fprintf(out, " -n '__ocisbx_is \"%s\"'", cond);
        fprintf(out, " -l %s", names[i]);
        const char *k = value_kind(o);
        if (k && strcmp(k, "@file") == 0)
            fputs(" -r -F", out);
        else if (k && strcmp(k, "@dir") == 0)
            fputs(" -x -a '(__fish_complete_directories)'", out);
        else if (k && strcmp(k, "@any") == 0)
            fputs(" -x", out);
        else if (k)
            fprintf(out, " -x -a '%s'", k);
        fputs(" -d '", out);
        fish_text(out, o->help);
        fputs("'\n", out);
    }
}

static void fish_usage(FILE *out, const char *path, const cli_verb *v, void *ud)
{
    (void)ud;
    for (const cli_option *o = v->options; o && o->name; o++)
        fish_option(out, path, o);
    if (v->flags & CLI_VERB_FILES)
        fprintf(out, "complete -c ocisbx -n '__ocisbx_is \"%s\"' -F\n", path);
}

static void fish_word(FILE *out, const char *cond, const char *word, const char *summary)
{
    fprintf(out, "complete -c ocisbx -n '__ocisbx_is \"%s\"' -a %s -d '", cond, word);
    fish_text(out, summary);
    fputs("'\n", out);
}

static const char fish_head[] = "# the command and subcommand typed so far (\"@oci\": after generative-ai-sandbox)\n"
                                "function __ocisbx_path\n"
                                "    set -l cmd\n"
                                "    set -l verb\n"
                                "    set -l oci\n"
                                "    set -l skip 0\n"
                                "    for w in (commandline -opc)[2..-1]\n"
                                "        if test $skip = 1\n"
                                "            set skip 0\n"
                                "            continue\n"
                                "        end\n"
                                "        switch $w\n"
                                "            case '--'\n"
                                "                test -n \"$cmd\"; and break\n"
                                "            case '--*=*'\n"
                                "            case '-*'\n"
                                "                string match -q -- \"* $w *\" \"$__ocisbx_valued\"; and set skip 1\n"
                                "            case '*'\n"
                                "                if test -z \"$cmd$oci\" -a \"$w\" = generative-ai-sandbox\n"
                                "                    set oci 1\n"
                                "                else if test -z \"$cmd\"\n"
                                "                    set cmd $w\n"
                                "                else if test -z \"$verb\"; and contains -- $cmd $__ocisbx_groups\n"
                                "                    set verb $w\n"
                                "                end\n"
                                "        end\n"
                                "    end\n"
                                "    if test -z \"$cmd\" -a -n \"$oci\"\n"
                                "        echo @oci\n"
                                "    else\n"
                                "        string trim -- \"$cmd $verb\"\n"
                                "    end\n"
                                "end\n"
                                "function __ocisbx_is\n"
                                "    test (__ocisbx_path | string collect) = \"$argv[1]\"\n"
                                "end\n"
                                "complete -c ocisbx -f\n";

static void fish_script(FILE *out)
{
    name_list valued = {0};
    size_t ng = 0;
    const cli_global_view *gv = cli_global_views(&ng);
    for (size_t i = 0; i < ng; i++)
        if (gv[i].opt.arg)
            names_add(&valued, "--", gv[i].opt.name);
    each_usage(out, true, add_valued, &valued);
    fprintf(out, "set -g __ocisbx_valued '%s'\nset -g __ocisbx_groups", valued.buf ? valued.buf : "");
    free(valued.buf);
    for (const cli_command *c = cli_commands; c->name; c++)
        if (c->verbs)
            fprintf(out, " %s", c->name);
    fputs("\n", out);
    fputs(fish_head, out);
    for (const cli_command *c = cli_commands; c->name; c++) {
        fish_word(out, "", c->name, c->summary ? c->summary : c->self->summary);
        if (c->flags & CLI_CMD_OCI)
            fish_word(out, "@oci", c->name, c->summary);
        for (const cli_verb *v = c->verbs; v && v->name; v++)
            if (!(v->flags & CLI_VERB_HIDDEN))
                fish_word(out, c->name, v->name, v->summary);
    }
    fish_word(out, "", "generative-ai-sandbox", "the OCI CLI's path: generative-ai-sandbox GROUP VERB");
    for (size_t i = 0; i < ng; i++)
        fish_option(out, NULL, &gv[i].opt);
    each_usage(out, false, fish_usage, NULL);
}

int cli_completion_script(FILE *out, const char *shell)
{
    bool bash = strcmp(shell, "bash") == 0, zsh = strcmp(shell, "zsh") == 0;
    if (!bash && !zsh && strcmp(shell, "fish") != 0)
        return -1;
    if (zsh)
        fputs("#compdef ocisbx\n", out);
    fprintf(out, "# %s completion for ocisbx %s, made from its command table (ocisbx completion %s)\n", shell,
            ocisbx_version(), shell);
    if (bash || zsh) {
        sh_data(out);
        fputs(bash ? bash_main : zsh_main, out);
    } else {
        fish_script(out);
    }
    return ferror(out) ? -1 : 0;
}

int cmd_completion(cli_ctx *ctx, int argc, char **argv)
{
    (void)ctx;
    const cli_command *self = cli_find_command("completion");
    const cli_verb *v = argc > 1 ? cli_find_verb(self, argv[1]) : NULL;
    if (!v)
        return cli_api_unknown_sub("completion", argc > 1 ? argv[1] : NULL, "bash, zsh, fish");
    if (argc > 2)
        return argv[2][0] == '-' ? cli_unknown_option("completion", argv[2])
                                 : cli_error(CLI_EXIT_USAGE, "completion: unexpected argument %s", argv[2]);
    if (cli_completion_script(stdout, v->name) != 0)
        return cli_stdout_failed();
    return CLI_EXIT_OK;
}
