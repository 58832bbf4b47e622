/* exec: the wrapper script (docs/backend.md, "The exec wrapper"), run by the
 * implementation's run primitive, and the client's half: the trailer parsed,
 * head and tail cut on UTF-8 and nearby line boundaries, the note inserted. */
#define _GNU_SOURCE /* memmem */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend_int.h"
#include "util/utf8.h"
#include "ocisbx/util.h"
#include "util/internal.h"

#define TRAILER_HOLD 200 /* longest trailer line, held back from the live callback */
#define NOTE_RESERVE 96  /* room kept for the note in max_output */
#define LINE_NEAR 256    /* a cut moves to a line end at most this far */

struct ocisbx_exec_options {
    int64_t timeout_ms;
    char *cwd;
    ocisbx_env_list env;
    size_t max_output;
    ocisbx_write_fn on_output;
    void *on_output_ud;
};

struct ocisbx_exec_result {
    bool has_exit;
    int exit_code;
    bool timed_out, truncated;
    char *output;
    size_t output_len;
    uint64_t total_bytes, dropped;
    char total_sha[65], returned_sha[65];
    int64_t duration_ms, start_ms;
    char *command_id;
    size_t head_kept; /* bytes of output that are the head */
};

const char *ocisbx_exec_options_cwd_(const ocisbx_exec_options *o)
{
    return o && o->cwd ? o->cwd : "/workspace";
}

int64_t ocisbx_exec_options_timeout_(const ocisbx_exec_options *o)
{
    return o && o->timeout_ms ? o->timeout_ms : OCISBX_BACKEND_DEFAULT_EXEC_TIMEOUT_MS;
}

const ocisbx_env_list *ocisbx_exec_options_env_(const ocisbx_exec_options *o)
{
    return o ? &o->env : NULL;
}

int ocisbx_exec_options_new(ocisbx_exec_options **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "exec options: NULL out");
    *out = calloc(1, sizeof **out);
    return *out ? 0 : ocisbx_fail_nomem();
}

void ocisbx_exec_options_free(ocisbx_exec_options *o)
{
    if (!o)
        return;
    free(o->cwd);
    ocisbx_env_list_free(&o->env);
    free(o);
}

int ocisbx_exec_options_set_timeout_ms(ocisbx_exec_options *o, int64_t ms)
{
    if (!o || ms <= 0 || ms > INT64_C(86400000) * 7)
        return ocisbx_fail(OCISBX_EINVAL, "exec timeout must be positive (at most 7 days)");
    o->timeout_ms = ms;
    return 0;
}

int ocisbx_exec_options_set_cwd(ocisbx_exec_options *o, const char *cwd)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "exec options: NULL");
    char *c = cwd ? ocisbx_strdup(cwd) : NULL;
    if (cwd && !c)
        return ocisbx_fail_nomem();
    free(o->cwd);
    o->cwd = c;
    return 0;
}

int ocisbx_exec_options_add_env(ocisbx_exec_options *o, const char *name, const char *value, int secret)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "exec options: NULL");
    return ocisbx_env_list_add(&o->env, name, value, secret != 0);
}

int ocisbx_exec_options_set_max_output_bytes(ocisbx_exec_options *o, size_t n)
{
    if (!o || (n && n < OCISBX_BACKEND_MIN_MAX_OUTPUT))
        return ocisbx_fail(OCISBX_EINVAL, "max_output_bytes must be at least %d (0: the backend's)",
                           OCISBX_BACKEND_MIN_MAX_OUTPUT);
    o->max_output = n;
    return 0;
}

int ocisbx_exec_options_set_on_output(ocisbx_exec_options *o, ocisbx_write_fn fn, void *user_data)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "exec options: NULL");
    o->on_output = fn;
    o->on_output_ud = user_data;
    return 0;
}

void ocisbx_exec_result_free(ocisbx_exec_result *r)
{
    if (!r)
        return;
    free(r->output);
    free(r->command_id);
    free(r);
}

int ocisbx_exec_result_exit_code(const ocisbx_exec_result *r, int *out)
{
    if (!r || !r->has_exit)
        return 0;
    if (out)
        *out = r->exit_code;
    return 1;
}
int ocisbx_exec_result_timed_out(const ocisbx_exec_result *r)
{
    return r && r->timed_out;
}
int ocisbx_exec_result_truncated(const ocisbx_exec_result *r)
{
    return r && r->truncated;
}
const char *ocisbx_exec_result_output(const ocisbx_exec_result *r, size_t *len)
{
    if (len)
        *len = r ? r->output_len : 0;
    return r ? r->output : NULL;
}
uint64_t ocisbx_exec_result_total_bytes(const ocisbx_exec_result *r)
{
    return r ? r->total_bytes : 0;
}
const char *ocisbx_exec_result_total_sha256(const ocisbx_exec_result *r)
{
    return r ? r->total_sha : NULL;
}
uint64_t ocisbx_exec_result_returned_bytes(const ocisbx_exec_result *r)
{
    return r ? r->output_len : 0;
}
const char *ocisbx_exec_result_returned_sha256(const ocisbx_exec_result *r)
{
    return r ? r->returned_sha : NULL;
}
uint64_t ocisbx_exec_result_dropped_bytes(const ocisbx_exec_result *r)
{
    return r ? r->dropped : 0;
}
int64_t ocisbx_exec_result_duration_ms(const ocisbx_exec_result *r)
{
    return r ? r->duration_ms : 0;
}
int64_t ocisbx_exec_result_start_time_ms(const ocisbx_exec_result *r)
{
    return r ? r->start_ms : 0;
}
const char *ocisbx_exec_result_command_id(const ocisbx_exec_result *r)
{
    return r ? r->command_id : NULL;
}

/* ---- the wrapper ---- */
/* The script, byte for byte as docs/backend.md shows it. id: the run's id,
 * also the nonce of its markers. */
static int build_wrapper(ocisbx_backend *b, const char *command, const char *cwd_rel, int64_t secs, size_t head,
                         size_t tail, const char *id, ocisbx_buf *s)
{
    ocisbx_buf inner = OCISBX_BUF_INIT;
    int rc = ocisbx_buf_appendf(&inner, "exec 2>&1\n%s", command);
    if (rc)
        goto out;
    rc = ocisbx_buf_appends(s, "W=");
    if (!rc)
        rc = ocisbx_buf_append_shell_quoted(s, b->root);
    if (!rc)
        rc = ocisbx_buf_appendf(s, "\nN=%s\nD=\"$W/.ocisbx/run-$N\"\ncd \"$W\"/", id);
    if (!rc)
        rc = ocisbx_buf_append_shell_quoted(s, *cwd_rel ? cwd_rel : ".");
    if (!rc)
        rc = ocisbx_buf_appends(s, " 2>/dev/null || { printf '\\nOCISBX-NOCWD\\n'; exit 0; }\n"
                                   "mkdir -p \"$D\" || exit 125\n"
                                   ": > \"$D/out\" || exit 125\n");
    if (!rc)
        rc = ocisbx_buf_appendf(s, "timeout -v -s TERM -k %d %" PRId64 " sh -c ", OCISBX_BACKEND_KILL_GRACE_S, secs);
    if (!rc)
        rc = ocisbx_buf_append_shell_quoted(s, inner.data);
    size_t h4 = head - 4;
    if (!rc)
        rc = ocisbx_buf_appendf(
            s,
            " > \"$D/out\" 2> \"$D/tv\" < /dev/null &\n"
            "P=$!\n"
            "tail -s 0.01 -c +1 -f --pid=$P \"$D/out\" 2>/dev/null | head -c %zu\n"
            "wait $P\n"
            "S=$?\n"
            "T=$(wc -c < \"$D/out\")\n"
            "T=$((T + 0))\n"
            "SUM=$(sha256sum < \"$D/out\")\n"
            "SUM=${SUM%%%% *}\n"
            "TO=0\n"
            "[ -s \"$D/tv\" ] && TO=1\n"
            "if [ \"$T\" -gt %zu ]; then\n"
            "  HL=%zu\n"
            "  K=%zu\n"
            "  for V in $(tail -c +%zu \"$D/out\" | head -c 5 | od -An -v -tu1); do\n"
            "    if [ \"$V\" -lt 128 ] || [ \"$V\" -ge 192 ]; then HL=$K; fi\n"
            "    K=$((K + 1))\n"
            "  done\n"
            "  tail -c +%zu \"$D/out\" | head -c $((HL - %zu))\n"
            "  printf '\\nOCISBX-MID %%s\\n' \"$N\"\n"
            "  TL=$((T - HL))\n"
            "  [ \"$TL\" -gt %zu ] && TL=%zu\n"
            "  for V in $(tail -c \"$TL\" \"$D/out\" | head -c 4 | od -An -v -tu1); do\n"
            "    if [ \"$V\" -ge 128 ] && [ \"$V\" -lt 192 ]; then TL=$((TL - 1)); else break; fi\n"
            "  done\n"
            "  tail -c \"$TL\" \"$D/out\"\n"
            "else\n"
            "  [ \"$T\" -gt %zu ] && tail -c +%zu \"$D/out\"\n"
            "  HL=$T\n"
            "  TL=0\n"
            "fi\n"
            "rm -rf \"$D\"\n"
            "printf '\\nOCISBX-END %%s %%s %%s %%s %%s %%s %%s\\n' \"$N\" \"$T\" \"$SUM\" \"$S\" \"$TO\" \"$HL\" "
            "\"$TL\"\n",
            h4, head, head, h4, h4 + 1, h4 + 1, h4, tail, tail, h4, h4 + 1);
out:
    ocisbx_buf_free(&inner);
    return rc;
}

typedef struct live {
    ocisbx_buf got;
    size_t cap;       /* bytes kept (head + tail + trailer, bounded) */
    size_t head;      /* the head budget */
    size_t delivered; /* to the live callback */
    ocisbx_write_fn fn;
    void *ud;
    bool canceled;
} live;

static int live_cb(const char *data, size_t len, void *ud)
{
    live *l = ud;
    size_t room = l->got.len < l->cap ? l->cap - l->got.len : 0;
    if (ocisbx_buf_append(&l->got, data, len < room ? len : room))
        return 1;
    if (l->fn && l->got.len > TRAILER_HOLD) {
        size_t upto = l->got.len - TRAILER_HOLD;
        if (upto > l->head)
            upto = l->head;
        if (upto > l->delivered) {
            if (l->fn(l->got.data + l->delivered, upto - l->delivered, l->ud)) {
                l->canceled = true;
                return 1;
            }
            l->delivered = upto;
        }
    }
    return 0;
}

static bool parse_u64(const char **p, uint64_t *v)
{
    const char *s = *p;
    if (*s < '0' || *s > '9')
        return false;
    uint64_t x = 0;
    while (*s >= '0' && *s <= '9') {
        x = x * 10 + (uint64_t)(*s - '0');
        s++;
    }
    *v = x;
    if (*s == ' ')
        s++;
    *p = s;
    return true;
}

static void hex_sha(const void *d, size_t n, char out[65])
{
    unsigned char h[OCISBX_SHA256_LEN];
    ocisbx_sha256(d, n, h);
    ocisbx_hex(h, sizeof h, out);
}

static int finish_output(ocisbx_exec_result *r, const char *head, size_t hl, const char *tail, size_t tl,
                         uint64_t total)
{
    ocisbx_buf o = OCISBX_BUF_INIT;
    int rc = 0;
    if (total <= hl + tl) {
        rc = ocisbx_buf_append(&o, head, hl);
        if (!rc)
            rc = ocisbx_buf_append(&o, tail, tl);
        r->dropped = 0;
        r->head_kept = hl + tl;
    } else {
        size_t hk = ocisbx_utf8_cut_back(head, hl);
        for (size_t i = hk; i > 0 && hk - i < LINE_NEAR; i--)
            if (head[i - 1] == '\n') {
                hk = i;
                break;
            }
        size_t ts = ocisbx_utf8_cut_forward(tail, tl, 0);
        for (size_t i = ts; i < tl && i - ts < LINE_NEAR; i++)
            if (tail[i] == '\n') {
                ts = i + 1;
                break;
            }
        r->dropped = total - hk - (tl - ts);
        r->head_kept = hk;
        r->truncated = true;
        rc = ocisbx_buf_append(&o, head, hk);
        if (!rc && hk && head[hk - 1] != '\n')
            rc = ocisbx_buf_appends(&o, "\n");
        if (!rc)
            rc = ocisbx_buf_appendf(&o, "[... %" PRIu64 " bytes of output dropped ...]\n", r->dropped);
        if (!rc)
            rc = ocisbx_buf_append(&o, tail + ts, tl - ts);
    }
    if (rc) {
        ocisbx_buf_free(&o);
        return rc;
    }
    r->output_len = o.len;
    r->output = ocisbx_buf_detach(&o);
    hex_sha(r->output, r->output_len, r->returned_sha);
    return 0;
}

static int do_exec(ocisbx_backend *b, const char *command, const ocisbx_exec_options *o, ocisbx_exec_result **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "exec: NULL out");
    *out = NULL;
    if (!b || !command)
        return ocisbx_fail(OCISBX_EINVAL, "exec: NULL argument");
    if (b->closed)
        return ocisbx_fail(OCISBX_ECONFLICT, "exec: the backend is closed");
    if (strchr(command, '\0') != command + strlen(command))
        return ocisbx_fail(OCISBX_EINVAL, "exec: bad command");
    char *cwd_rel = NULL;
    int rc = ocisbx_backend_rel_path(o && o->cwd ? o->cwd : "/workspace", &cwd_rel);
    if (rc)
        return rc;
    int64_t tms = o && o->timeout_ms ? o->timeout_ms : OCISBX_BACKEND_DEFAULT_EXEC_TIMEOUT_MS;
    int64_t secs = (tms + 999) / 1000;
    size_t max = o && o->max_output ? o->max_output : b->max_output;
    size_t head = (max - NOTE_RESERVE) / 2, tail = max - NOTE_RESERVE - head;
    ocisbx_buf script = OCISBX_BUF_INIT;
    live l = {OCISBX_BUF_INIT,         head + tail + 4 * TRAILER_HOLD, head - 4, 0,
              o ? o->on_output : NULL, o ? o->on_output_ud : NULL,     false};
    ocisbx_run_res res = {0};
    ocisbx_exec_result *r = calloc(1, sizeof *r);
    if (!r) {
        free(cwd_rel);
        return ocisbx_fail_nomem();
    }
    char id[17];
    rc = ocisbx_random_id(id, 16);
    if (!rc)
        rc = build_wrapper(b, command, cwd_rel, secs, head, tail, id, &script);
    if (rc)
        goto done;
    ocisbx_run_req req = {0};
    req.script = script.data;
    req.env[0] = &b->env;
    req.env[1] = o ? &o->env : NULL;
    req.backstop_s = secs + OCISBX_BACKEND_KILL_GRACE_S + 2;
    int64_t t0 = ocisbx_time_monotonic_ms();
    r->start_ms = ocisbx_time_now_ms();
    req.deadline_ms = t0 + secs * 1000 + OCISBX_BACKEND_KILL_GRACE_S * 1000 + OCISBX_BACKEND_CLIENT_MARGIN_MS;
    req.on_stdout = live_cb;
    req.user_data = &l;
    rc = b->vt->run(b, &req, &res);
    r->duration_ms = ocisbx_time_monotonic_ms() - t0;
    r->command_id = res.command_id;
    res.command_id = NULL;
    if (rc == OCISBX_ECANCELED && l.canceled)
        rc = ocisbx_fail(OCISBX_ECANCELED, "exec: canceled by the output callback");
    if (rc == OCISBX_ETIMEOUT) {
        /* The service did not give the command back in time: it was
         * canceled; what arrived of the head is returned. */
        size_t hl = l.got.len < head ? l.got.len : head;
        r->timed_out = true;
        r->total_bytes = hl;
        rc = finish_output(r, l.got.data ? l.got.data : "", hl, "", 0, hl);
        if (!rc)
            memcpy(r->total_sha, r->returned_sha, sizeof r->total_sha);
        goto done;
    }
    if (rc)
        goto done;
    const char *g = l.got.data ? l.got.data : "";
    if (l.got.len >= 14 && memcmp(g + l.got.len - 14, "\nOCISBX-NOCWD\n", 14) == 0) {
        rc = ocisbx_fail(OCISBX_ENOTFOUND, "exec: the working directory does not exist or is not a directory");
        goto done;
    }
    /* the trailer: the last line, with this run's nonce */
    char endm[40], midm[40];
    snprintf(endm, sizeof endm, "\nOCISBX-END %s ", id);
    snprintf(midm, sizeof midm, "\nOCISBX-MID %s\n", id);
    size_t el = strlen(endm), ml = strlen(midm);
    const char *t = NULL;
    for (size_t i = l.got.len >= 2 ? l.got.len - 2 : 0;; i--) {
        if (g[i] == '\n' && l.got.len - i > el && memcmp(g + i, endm, el) == 0) {
            t = g + i;
            break;
        }
        if (i == 0 || l.got.len - i > TRAILER_HOLD)
            break;
    }
    if (!t) {
        rc = ocisbx_fail(res.has_exit && res.exit_code == 125 ? OCISBX_EIO : OCISBX_EPARSE,
                         "exec: the wrapper gave no trailer (exit status %d%s%.200s)",
                         res.has_exit ? res.exit_code : -1, res.stderr_text ? ": " : "",
                         res.stderr_text ? res.stderr_text : "");
        goto done;
    }
    const char *p = t + el;
    uint64_t total = 0, st = 0, to = 0, hl = 0, tl = 0;
    char sum[65] = {0};
    bool ok = parse_u64(&p, &total);
    if (ok) {
        size_t k = 0;
        while (k < 64 && ((p[k] >= '0' && p[k] <= '9') || (p[k] >= 'a' && p[k] <= 'f')))
            k++;
        ok = k == 64 && p[k] == ' ';
        if (ok) {
            memcpy(sum, p, 64);
            p += 65;
        }
    }
    ok = ok && parse_u64(&p, &st) && parse_u64(&p, &to) && parse_u64(&p, &hl) && parse_u64(&p, &tl) && *p == '\n';
    if (!ok || hl > head || tl > tail) {
        rc = ocisbx_fail(OCISBX_EPARSE, "exec: malformed wrapper trailer");
        goto done;
    }
    /* Head and tail by their markers: a service that rewrites bytes that
     * are not UTF-8 changes their lengths, never the markers. */
    size_t before = (size_t)(t - g);
    const char *mid = total > hl ? memmem(g, before, midm, ml) : NULL;
    if (total > hl && !mid) {
        rc = ocisbx_fail(OCISBX_EPARSE, "exec: the wrapper's output has no head/tail marker");
        goto done;
    }
    size_t ghl = mid ? (size_t)(mid - g) : before;
    const char *gt = mid ? mid + ml : t;
    size_t gtl = mid ? (size_t)(t - gt) : 0;
    r->total_bytes = total;
    memcpy(r->total_sha, sum, 65);
    r->timed_out = to != 0;
    r->has_exit = !r->timed_out;
    r->exit_code = (int)st;
    hl = ghl;
    tl = gtl;
    rc = finish_output(r, g, hl, gt, tl, total);
    if (rc)
        goto done;
    size_t from = l.delivered <= r->head_kept ? l.delivered : r->head_kept;
    if (l.fn && r->output_len > from && l.fn(r->output + from, r->output_len - from, l.ud))
        rc = ocisbx_fail(OCISBX_ECANCELED, "exec: canceled by the output callback");
done:
    free(cwd_rel);
    ocisbx_buf_free(&script);
    ocisbx_buf_free(&l.got);
    free(res.command_id);
    free(res.stderr_text);
    if (rc) {
        ocisbx_exec_result_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

int ocisbx_backend_exec(ocisbx_backend *b, const char *command, const ocisbx_exec_options *o,
                        ocisbx_exec_result **out)
{
    return do_exec(b, command, o, out);
}

int ocisbx_backend_exec_argv(ocisbx_backend *b, const char *const *argv, size_t argc, const ocisbx_exec_options *o,
                             ocisbx_exec_result **out)
{
    if (out)
        *out = NULL;
    if (!argv || argc == 0)
        return ocisbx_fail(OCISBX_EINVAL, "exec: an empty argv");
    ocisbx_buf cmd = OCISBX_BUF_INIT;
    int rc = 0;
    for (size_t i = 0; i < argc && !rc; i++) {
        if (!argv[i]) {
            rc = ocisbx_fail(OCISBX_EINVAL, "exec: argv[%zu] is NULL", i);
            break;
        }
        if (i)
            rc = ocisbx_buf_appends(&cmd, " ");
        if (!rc)
            rc = ocisbx_buf_append_shell_quoted(&cmd, argv[i]);
    }
    if (!rc)
        rc = do_exec(b, cmd.data, o, out);
    ocisbx_buf_free(&cmd);
    return rc;
}
