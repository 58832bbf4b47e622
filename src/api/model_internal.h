/* Models (internal): every model is a cJSON tree checked against a schema
 * from the one model table (model_table.c). Keeping the JSON means unknown
 * fields survive, every model can be had as JSON text, and typed getters
 * read straight from the tree. */
#ifndef OCISBX_API_MODEL_INTERNAL_H
#define OCISBX_API_MODEL_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "util/json.h"

#include "util/internal.h"

typedef enum ocisbx_ftype {
    OCISBX_F_STRING,
    OCISBX_F_INT, /* a JSON number with no fraction, fits int64 */
    OCISBX_F_BOOL,
    OCISBX_F_STRING_ARRAY,
    OCISBX_F_OBJECT, /* sub: the nested model */
    OCISBX_F_OBJECT_ARRAY,
    OCISBX_F_ENV,    /* [{name, value}] or {name: value}: the spec leaves the form open */
    OCISBX_F_OUTPUT, /* a string, or a SandboxCommandOutput object */
    OCISBX_F_TIME    /* a string in RFC 3339 form (ocisbx_time_parse_rfc3339) */
} ocisbx_ftype;

typedef struct ocisbx_model_def ocisbx_model_def;

typedef struct ocisbx_field_def {
    const char *name;
    ocisbx_ftype type;
    bool required;
    const ocisbx_model_def *sub;
} ocisbx_field_def;

struct ocisbx_model_def {
    const char *name; /* the service's model name, used in error messages */
    const ocisbx_field_def *fields;
    size_t nfields;
    const ocisbx_model_def *items; /* collections: the model of items[] */
};

/* The model table (model_table.c). */
extern const ocisbx_model_def ocisbx_md_sandbox;
extern const ocisbx_model_def ocisbx_md_sandbox_summary;
extern const ocisbx_model_def ocisbx_md_sandbox_collection;
extern const ocisbx_model_def ocisbx_md_command;
extern const ocisbx_model_def ocisbx_md_command_summary;
extern const ocisbx_model_def ocisbx_md_command_collection;
extern const ocisbx_model_def ocisbx_md_command_output;
extern const ocisbx_model_def ocisbx_md_command_event;
extern const ocisbx_model_def ocisbx_md_file;
extern const ocisbx_model_def ocisbx_md_snapshot;
extern const ocisbx_model_def ocisbx_md_snapshot_summary;
extern const ocisbx_model_def ocisbx_md_snapshot_collection;
extern const ocisbx_model_def ocisbx_md_create_sandbox_details;
extern const ocisbx_model_def ocisbx_md_update_sandbox_details;
extern const ocisbx_model_def ocisbx_md_run_command_details;
extern const ocisbx_model_def ocisbx_md_extend_details;
extern const ocisbx_model_def ocisbx_md_stop_details;
extern const ocisbx_model_def ocisbx_md_empty_details;
extern const ocisbx_model_def ocisbx_md_create_snapshot_details;
extern const ocisbx_model_def ocisbx_md_error;
/* Every model above, for lookups by name and the fuzz target. */
extern const ocisbx_model_def *const ocisbx_model_defs[];
extern const size_t ocisbx_model_defs_count;
const ocisbx_model_def *ocisbx_model_def_find(const char *name);

/* A string value of the JSON text that held \u0000: its bytes, NULs
 * included (cJSON keeps strings NUL-terminated, so the tree holds a
 * sentinel code point in their place; see nul_escape.c). */
typedef struct ocisbx_nul_str {
    const cJSON *node;
    char *data; /* len bytes + a terminating NUL */
    size_t len;
} ocisbx_nul_str;

typedef struct ocisbx_model {
    const ocisbx_model_def *def;
    const struct ocisbx_model *root; /* items: the collection that owns the tree (NULL: itself) */
    char sentinel[4];                /* UTF-8 of the code point standing for U+0000 ("" when none) */
    ocisbx_nul_str *nuls;
    size_t nnuls;
    cJSON *json;
    bool owned;                 /* json is freed with the model */
    struct ocisbx_model *items; /* collections: views into json */
    size_t nitems;
    char *next_page; /* opc-next-page */
    char *etag;
    char *request_id; /* opc-request-id of the answer */
} ocisbx_model;

/* Checks j against def; errors are OCISBX_EPARSE naming model.field. */
int ocisbx_model_validate(const ocisbx_model_def *def, const cJSON *j);
/* Parses text, validates, and wraps (taking the tree). */
int ocisbx_model_parse(const ocisbx_model_def *def, const char *text, size_t len, ocisbx_model **out);
/* Wraps an already-validated tree (takes ownership). */
int ocisbx_model_wrap(const ocisbx_model_def *def, cJSON *json, ocisbx_model **out);
/* An empty object of this model (request details built with setters). */
int ocisbx_model_new_empty(const ocisbx_model_def *def, ocisbx_model **out);
void ocisbx_model_free(ocisbx_model *m);
int ocisbx_model_to_json(const ocisbx_model *m, char **out);
int ocisbx_model_set_meta(ocisbx_model *m, const char *etag, const char *request_id, const char *next_page);

/* Typed reads; NULL / false when absent or null. */
const char *ocisbx_model_str(const ocisbx_model *m, const char *field);
bool ocisbx_model_int(const ocisbx_model *m, const char *field, int64_t *out);
bool ocisbx_model_bool(const ocisbx_model *m, const char *field, bool *out);
const cJSON *ocisbx_model_get(const ocisbx_model *m, const char *field);

/* Writes for request details (replace the field; value NULL removes it). */
int ocisbx_model_put_str(ocisbx_model *m, const char *field, const char *value);
int ocisbx_model_put_int(ocisbx_model *m, const char *field, int64_t value);
int ocisbx_model_put_bool(ocisbx_model *m, const char *field, bool value);
int ocisbx_model_append_str(ocisbx_model *m, const char *field, const char *value);
/* Appends {name, value} to an [{name, value}] array. */
int ocisbx_model_append_env(ocisbx_model *m, const char *field, const char *name, const char *value);

/* The bytes of a string field (NULs included) and their count; NULL when
 * the field is absent or not a string. */
const char *ocisbx_model_bytes(const ocisbx_model *m, const cJSON *v, size_t *len);

/* nul_escape.c: builds m->nuls from a tree parsed with
 * ocisbx_json_parse_nul (util/json.h; m->sentinel set). */
int ocisbx_model_collect_nuls(ocisbx_model *m);

#endif
