/* Internal helpers shared by every layer (not installed). */
#ifndef OCISBX_UTIL_INTERNAL_H
#define OCISBX_UTIL_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sys/stat.h>

#include "ocisbx/common.h"

#if defined(__GNUC__) || defined(__clang__)
#define OCISBX_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define OCISBX_PRINTF(f, a)
#endif

/* ---- growable byte buffer; data is always NUL-terminated when non-NULL ---- */
typedef struct ocisbx_buf {
    char *data;
    size_t len;
    size_t cap;
} ocisbx_buf;

#define OCISBX_BUF_INIT \
    {                   \
        NULL, 0, 0      \
    }
void ocisbx_buf_init(ocisbx_buf *b);
int ocisbx_buf_reserve(ocisbx_buf *b, size_t extra);
int ocisbx_buf_append(ocisbx_buf *b, const void *data, size_t len);
int ocisbx_buf_appends(ocisbx_buf *b, const char *s);
/* s as one POSIX shell word (ocisbx_shell_quote): the one way any piece of
 * text reaches a shell command line. */
int ocisbx_buf_append_shell_quoted(ocisbx_buf *b, const char *s);
/* Replaces every occurrence of value (non-empty) in b by "[REDACTED]"; the
 * old bytes are wiped. A failed allocation leaves b empty (nothing shown
 * rather than the secret). */
#define OCISBX_REDACTED "[REDACTED]"
void ocisbx_buf_redact(ocisbx_buf *b, const char *value);
/* A secret cut at a piece's edge: the longest k (min <= k < strlen(value))
 * such that data's last k bytes are value's first k (..._prefix), or its
 * first k bytes are value's last k (..._suffix); 0 when there is none. For
 * redaction across the cut of a capped output, and for a stream that holds
 * back what may be the start of a secret. */
size_t ocisbx_redact_edge_prefix(const char *data, size_t len, const char *value, size_t min);
size_t ocisbx_redact_edge_suffix(const char *data, size_t len, const char *value, size_t min);
int ocisbx_buf_appendf(ocisbx_buf *b, const char *fmt, ...) OCISBX_PRINTF(2, 3);
int ocisbx_buf_vappendf(ocisbx_buf *b, const char *fmt, va_list ap) OCISBX_PRINTF(2, 0);
void ocisbx_buf_clear(ocisbx_buf *b); /* len = 0, keeps memory */
/* Hands the data to the caller (never NULL on success: "" for empty). */
char *ocisbx_buf_detach(ocisbx_buf *b);
void ocisbx_buf_free(ocisbx_buf *b);
/* Wipes (OPENSSL_cleanse) the whole capacity, then frees: for secrets. */
void ocisbx_buf_wipe_free(ocisbx_buf *b);

/* ---- a body read from memory it borrows (an ocisbx_read_fn and its
 * rewind; user_data is the ocisbx_mem_reader) ---- */
typedef struct ocisbx_mem_reader {
    const unsigned char *p;
    size_t len, at;
} ocisbx_mem_reader;
int64_t ocisbx_mem_reader_read(void *buf, size_t cap, void *user_data);
int ocisbx_mem_reader_rewind(void *user_data);

/* ---- strings ---- */
char *ocisbx_strdup(const char *s); /* NULL -> NULL */
char *ocisbx_strndup(const char *s, size_t n);
char *ocisbx_asprintf(const char *fmt, ...) OCISBX_PRINTF(1, 2);
int ocisbx_strcasecmp(const char *a, const char *b); /* ASCII only, locale-free */
int ocisbx_strncasecmp(const char *a, const char *b, size_t n);
/* Wipes a NUL-terminated secret, then frees it. NULL is a no-op. */
void ocisbx_free_secret(char *s);
/* Wipes n bytes (OPENSSL_cleanse). */
void ocisbx_wipe(void *p, size_t n);
/* Copies in to out (cap bytes) with bytes outside printable ASCII and '\\'
 * written as \xNN, so that a message quoting input stays one line. */
void ocisbx_escape_shown(const char *in, char *out, size_t cap);
/* The same, but valid UTF-8 (other than the C1 controls) is kept as it is:
 * what a message quoting a name or path given by the user uses. Returns out.
 * OCISBX_SHOWN(in) is it as an expression for a message argument: the copy
 * lives in a buffer of the enclosing block, cut to OCISBX_SHOWN_CAP bytes:
 *   ocisbx_fail(OCISBX_ECONFIG, "key file %s: not found", OCISBX_SHOWN(path)); */
#define OCISBX_SHOWN_CAP 512
#define OCISBX_SHOWN(in) ocisbx_shown((in), (char[OCISBX_SHOWN_CAP]){0}, OCISBX_SHOWN_CAP)
const char *ocisbx_shown(const char *in, char *out, size_t cap);
/* The value of a hex digit (either case), -1 for any other byte. */
int ocisbx_hex_digit(char c);
/* n bytes as lowercase (or uppercase) hex pairs joined by ':', NUL-ended:
 * out holds 3 * n bytes. The form key fingerprints are shown in. */
void ocisbx_hex_colon(const unsigned char *in, size_t n, bool upper, char *out);

/* ---- loopback: the one rule (plain http, the emulator's --listen) ---- */
/* 127.0.0.0/8, ::1, localhost and names ending in .localhost (any case). */
bool ocisbx_host_is_loopback(const char *host);
/* The host of an absolute URL "scheme://[userinfo@]host[:port][/?#...]"
 * ("[::1]" unbracketed) is a loopback host. False for anything else. */
bool ocisbx_url_host_is_loopback(const char *url);

/* ---- files ---- */
/* Opens a file the user named, for reading, without blocking on a FIFO or a
 * device (O_NONBLOCK, fstat, then blocking again; close-on-exec). Returns the
 * descriptor of a regular file (its stat in *st when st is not NULL),
 * OCISBX_OPEN_NOT_REGULAR when it is anything else, or -1 with errno set. */
#define OCISBX_OPEN_NOT_REGULAR (-2)
int ocisbx_open_regular(const char *path, struct stat *st);
/* ---- reading a bounded file: the ONE way the library reads a whole file
 * (config, key, token, policy, the emulator's files) ----
 * Errors, one style: "<what> <path>: not found" | ": not a regular file" |
 * ": cannot open: <reason>" | ": cannot read: <reason>" | ": larger than N
 * bytes"; codes OCISBX_ENOTFOUND, OCISBX_EINVAL (not a regular file),
 * OCISBX_EIO, OCISBX_ETOOLARGE; or one code for all of them (OCISBX_READ_CONFIG,
 * OCISBX_READ_IO). */
#define OCISBX_READ_SECRET 0x1u  /* a secret: every buffer that held it is wiped (also on failure) */
#define OCISBX_READ_REGULAR 0x2u /* refuse FIFOs, devices, directories at once (never blocks) */
#define OCISBX_READ_STDIN 0x4u   /* "-" is standard input */
#define OCISBX_READ_CONFIG 0x8u  /* every failure is OCISBX_ECONFIG (a file the configuration names) */
#define OCISBX_READ_IO 0x10u     /* every failure is OCISBX_EIO */
typedef struct ocisbx_file {
    char *data; /* NUL-ended (never NULL after a success) */
    size_t len;
    size_t cap;
    unsigned flags;
    struct stat st; /* of the file read */
} ocisbx_file;
/* Reads at most max bytes of path into *out (release with ocisbx_file_release). */
int ocisbx_file_read(const char *path, const char *what, size_t max, unsigned flags, ocisbx_file *out);
/* Overwrites the whole buffer with zeros (it stays allocated). */
void ocisbx_file_wipe(ocisbx_file *f);
/* Frees the data, wiped first (ocisbx_file_wipe) when read with
 * OCISBX_READ_SECRET. A released or failed ocisbx_file may be released again. */
void ocisbx_file_release(ocisbx_file *f);
/* Hands the data (free() it; wipe it first if secret) and its length over. */
char *ocisbx_file_detach(ocisbx_file *f, size_t *len);

/* ---- the environment and the home directory: the settings' primitives ----
 * The value of the first of names (NULL-ended) that is set and not empty;
 * *which (may be NULL) gets its name. NULL when none is. The one place the
 * library reads a setting's variable (the settings table calls it). */
const char *ocisbx_env_first(const char *const *names, const char **which);
/* The home directory, the one rule: $HOME when set and not empty, else the
 * passwd entry of the real user id; NULL when neither exists. */
const char *ocisbx_home_dir(void);
/* "~" and "~/x" with the home directory above (malloc'd copy; "~user" and
 * every other path are copied as they are). NULL on out of memory. */
char *ocisbx_expand_home(const char *path);
/* The variables that name the OCI config file (first set wins) and the
 * default path: shared by ocisbx_config_load(NULL) and the settings table. */
extern const char *const ocisbx_config_file_vars[];
#define OCISBX_CONFIG_FILE_DEFAULT "~/.oci/config"

/* ---- errors ----
 * Every failing internal function sets the thread's last error and returns
 * the code: `return ocisbx_fail(OCISBX_ECONFIG, "config file %s: ...", path);` */
int ocisbx_fail(int code, const char *fmt, ...) OCISBX_PRINTF(2, 3);
/* A failure that is an answer from a server. svc_code and request_id may be NULL. */
int ocisbx_fail_http(int code, int http_status, const char *svc_code, const char *request_id, const char *fmt, ...)
    OCISBX_PRINTF(5, 6);
/* Prefixes the current error message with context ("writing /workspace/a: ").
 * Returns the current code (so: return ocisbx_error_wrap("...") ). */
int ocisbx_error_wrap(const char *fmt, ...) OCISBX_PRINTF(1, 2);
/* The same, the text added after the current message (a note on what
 * happened next, such as " (the sandbox was deleted anyway)"). */
int ocisbx_error_append(const char *fmt, ...) OCISBX_PRINTF(1, 2);
/* Adds what is known about the call to the current error when it lacks it:
 * the HTTP status of an answer that was received (e.g. a 200 whose body failed
 * a check) and the call's opc-request-id. NULL / 0 leave a field as it is. */
void ocisbx_error_annotate(int http_status, const char *request_id);
/* The number of attempts of the HTTP call the current error ended (> 0). */
void ocisbx_error_set_attempts(int attempts);
/* Out of memory: sets a static message without allocating. */
int ocisbx_fail_nomem(void);
/* Saves and restores the thread's last error (cleanup code that must not
 * overwrite the failure it is cleaning up after). */
typedef struct ocisbx_error_saved ocisbx_error_saved;
ocisbx_error_saved *ocisbx_error_save(void);
void ocisbx_error_restore(ocisbx_error_saved *s); /* restores and frees */
/* Maps an HTTP error status to an OCISBX_E* code. */
int ocisbx_status_from_http(int http_status);

/* ---- logging ---- */
void ocisbx_log(int level, const char *fmt, ...) OCISBX_PRINTF(2, 3);
bool ocisbx_log_enabled(int level);
/* Redacts secrets in a log line in place: the value after "authorization:"
 * or "x-app-token:" (any case), "Signature ..." parameters, and "ST$<token>". */
void ocisbx_log_redact(char *line);
/* A pass of the calling thread's own over each line it logs, after
 * ocisbx_log_redact (the harness redacts its secrets from whatever a call
 * logs on its way down): it may rewrite line (cap bytes, NUL-terminated) in
 * place. fn NULL: none. *prev, *prev_ud (may be NULL) get the one it
 * replaces, to put back. */
typedef void (*ocisbx_log_filter_fn)(char *line, size_t cap, void *user_data);
void ocisbx_log_set_thread_filter(ocisbx_log_filter_fn fn, void *user_data, ocisbx_log_filter_fn *prev,
                                  void **prev_ud);

/* ---- global init (refcounted) ---- */
int ocisbx_global_ensure(void); /* init once for the process lifetime if nobody did */

#endif
