/* The harness's tools: one table (name, action label, description for a
 * model, JSON Schema of the arguments), the tool list in the formats models
 * take, and the arguments' validation against the same schema (so what the
 * model is shown is exactly what is checked). Library-internal. */
#ifndef OCISBX_HARNESS_TOOLS_H
#define OCISBX_HARNESS_TOOLS_H

#include <stddef.h>

#include <cjson/cJSON.h>

typedef struct harness_tool {
    const char *name;
    const char *label;
    const char *description;
    const char *schema; /* JSON text */
} harness_tool;

/* The tools, in the order they are listed; n gets their count. */
const harness_tool *harness_tools(size_t *n);
const harness_tool *harness_tool_find(const char *name);

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
/* The tool list as JSON text (pretty-printed; free()). */
int harness_tools_json(int format, char **out);

/* The largest arguments text a call takes. */
#define HARNESS_ARGS_MAX (64 * 1024 * 1024)

/* Parses args_json (len bytes) and checks it against the tool's schema:
 * an object, required properties present, no property the schema does not
 * have, each of its type (and minimum, maximum, enum, minLength where the
 * schema says). Absent optional properties get the schema's default.
 * On success *args is the checked object (cJSON_Delete). On failure
 * OCISBX_EINVAL, and msg (cap bytes) gets a message for the model naming the
 * argument and what is wrong. */
int harness_args_check(const harness_tool *t, const char *args_json, size_t len, cJSON **args, char *msg, size_t cap);

#endif
