/* The harness's tools: one table row per tool (tool_table.c). A row has the
 * tool's name, action label, description for a model, its parameters as a
 * typed table, its implementation and flags. Everything else is generated
 * from the rows: the JSON Schemas, the tool list in the formats models take
 * (tools.c), the arguments' validation with defaults filled in (tool_args.c)
 * and the prompt fragment (prompt.c), so what the model is shown is exactly
 * what is checked. Library-internal.
 *
 * Adding a tool: one row in tool_table.c (its parameters in PARAMS(...)),
 * and its implementation, a function int (harness_call *) in a tool_*.c
 * file, declared in call.h. Adding a parameter: one harness_param in the
 * tool's PARAMS(...); the tool reads it with call_str/call_int/call_bool
 * (defaults are filled in before it runs). */
#ifndef OCISBX_HARNESS_TOOLS_H
#define OCISBX_HARNESS_TOOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

/* The type of a parameter: what the schema says and what is checked. */
typedef enum harness_type {
    HARNESS_STRING,  /* "string" */
    HARNESS_PATH,    /* "string": a workspace path, normalised (and resolved) before the gate */
    HARNESS_COMMAND, /* "string": a shell command line, seen by the gate's command rules and the evidence */
    HARNESS_INTEGER, /* "integer" (an exact integer: |v| <= 2^53) */
    HARNESS_BOOLEAN, /* "boolean" */
    HARNESS_ENV,     /* "object" of variable names (shell names) to string values */
    HARNESS_PATCH,   /* "string": a patch (apply_patch) whose file paths are normalised, resolved and decided
                      * by the gate as a path argument is (call.c) */
    HARNESS_LIST     /* "array" of objects, each described by items */
} harness_type;

/* One parameter. Bounds by type: integer: minimum/maximum of the value;
 * string: minLength/maxLength; list: minItems/maxItems. A default is the
 * schema's "default" and filled in when the argument is absent; implied is
 * a value a path takes when absent that the schema does not show (its help
 * says it). Rows end with one whose name is NULL. */
typedef struct harness_param {
    const char *name;
    harness_type type;
    bool required;
    bool has_min, has_max;
    int64_t min, max;
    bool has_default;
    int64_t def_num;                   /* integer or boolean (0/1) default */
    const char *def_str;               /* string default */
    const char *implied;               /* path: the value when absent, not in the schema */
    const char *const *choices;        /* string: the allowed values (NULL-terminated), "enum" */
    const char *help;                  /* the schema's "description" */
    const struct harness_param *items; /* list: the properties of each item */
} harness_param;

struct harness_call;

/* Tool flags. */
#define HARNESS_TOOL_LISTS_PATHS 1u /* its results are paths the gate's path rules filter */

typedef struct harness_tool {
    const char *name;
    const char *label;
    const char *description;
    const harness_param *params; /* ends with a {NULL} row */
    int (*run)(struct harness_call *c);
    unsigned flags;
} harness_tool;

/* The tools, in the order they are listed; n gets their count. */
const harness_tool *harness_tools(size_t *n);
const harness_tool *harness_tool_find(const char *name);
/* The tool's parameter of that name, or NULL. */
const harness_param *harness_param_find(const harness_param *params, const char *name);

/* 1 when the glob matches the action label (or the name) of at least one
 * tool, 0 when it matches none, or a negative code (the glob matcher's). */
int harness_label_glob_known(const char *pattern);
int harness_tool_glob_known(const char *pattern);
/* The distinct action labels (or the tool names), ", "-separated, into out. */
void harness_labels_text(char *out, size_t cap);
void harness_tool_names_text(char *out, size_t cap);

/* Tool list formats. */
typedef enum harness_format {
    HARNESS_FORMAT_OURS = 0,     /* [{name, description, label, parameters}] */
    HARNESS_FORMAT_OPENAI = 1,   /* [{type: "function", function: {name, description, parameters}}] */
    HARNESS_FORMAT_ANTHROPIC = 2 /* [{name, description, input_schema}] */
} harness_format;
/* "ours"/NULL/"", "openai", "anthropic"; -1 for anything else. */
int harness_format_from_name(const char *name);
/* The tool's JSON Schema, generated from its row (cJSON_Delete); NULL: no memory. */
cJSON *harness_tool_schema(const harness_tool *t);
/* The tool list as JSON text (pretty-printed; free()). */
int harness_tools_json(int format, char **out);

/* The largest arguments text a call takes. */
#define HARNESS_ARGS_MAX (64 * 1024 * 1024)
/* The largest magnitude of an integer argument (exact in a double). */
#define HARNESS_INT_MAX 9007199254740992LL

/* Parses args_json (len bytes) and checks it against the tool's rows:
 * an object, required properties present, no property the rows do not
 * have, each of its type and within its bounds and choices. Absent optional
 * properties get their default. On success *args is the checked object
 * (cJSON_Delete). On failure OCISBX_EINVAL, and msg (cap bytes) gets a
 * message for the model naming the argument and what is wrong. */
int harness_args_check(const harness_tool *t, const char *args_json, size_t len, cJSON **args, char *msg, size_t cap);

#endif
