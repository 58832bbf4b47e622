/* The engine: its options, the curl multi handle and its socket and timer
 * callbacks, the sandboxes, and the two ways to drive it (its own poll()
 * loop, or the caller's loop through the fd and timer callbacks). */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"
#include "ocisbx/util.h"

#define FREE_DELETE_MS 30000 /* engine_free's deletes of sandboxes not closed, in all */
#define FREE_DRIVE_MS 30000  /* engine_free's run of what it canceled (creates in flight, kills, parts) */
#define LIMIT_MAX 4096
#define RUN_MAX_MS (INT64_C(7) * 86400 * 1000)
#define SLOW_START 2 /* creates in flight at first */

struct ocisbx_engine_options {
    ocisbx_backend_options *bo;
    char *project_id;
    int max_connections, max_in_flight, max_creates;
    double rate;
};

/* ---- options ---- */
int ocisbx_engine_options_new(ocisbx_engine_options **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "engine options: NULL out");
    ocisbx_engine_options *o = calloc(1, sizeof *o);
    if (!o)
        return ocisbx_fail_nomem();
    o->max_connections = OCISBX_ENGINE_DEFAULT_MAX_CONNECTIONS;
    o->max_in_flight = OCISBX_ENGINE_DEFAULT_MAX_IN_FLIGHT;
    o->max_creates = OCISBX_ENGINE_DEFAULT_MAX_CREATES;
    *out = o;
    return 0;
}

void ocisbx_engine_options_free(ocisbx_engine_options *o)
{
    if (!o)
        return;
    ocisbx_backend_options_free(o->bo);
    free(o->project_id);
    free(o);
}

static int dup_str(char **dst, const char *src)
{
    *dst = NULL;
    if (src && !(*dst = ocisbx_strdup(src)))
        return ocisbx_fail_nomem();
    return 0;
}

/* A deep copy of backend options (NULL: empty ones). */
static int bo_copy(const ocisbx_backend_options *s, ocisbx_backend_options **out)
{
    ocisbx_backend_options *d = NULL;
    int rc = ocisbx_backend_options_new(&d);
    if (rc || !s) {
        *out = d;
        return rc;
    }
    char **dst[] = {&d->runtime, &d->shape,   &d->expiration, &d->warmpool,  &d->display_name,
                    &d->config_file, &d->profile, &d->region, &d->endpoint, &d->ca_bundle};
    const char *src[] = {s->runtime, s->shape,   s->expiration, s->warmpool,  s->display_name,
                         s->config_file, s->profile, s->region, s->endpoint, s->ca_bundle};
    for (size_t i = 0; !rc && i < sizeof src / sizeof src[0]; i++)
        rc = dup_str(dst[i], src[i]);
    for (size_t i = 0; !rc && i < s->env.n; i++)
        rc = ocisbx_env_list_add(&d->env, s->env.v[i].name, s->env.v[i].value, s->env.v[i].secret);
    d->max_output = s->max_output;
    d->ready_timeout_ms = s->ready_timeout_ms;
    d->poll_interval_ms = s->poll_interval_ms;
    d->client = s->client;
    d->isolate = s->isolate;
    d->network = s->network;
    d->kill_grace_s = s->kill_grace_s;
    d->client_margin_ms = s->client_margin_ms;
    d->stop_timeout_ms = s->stop_timeout_ms;
    if (rc) {
        ocisbx_backend_options_free(d);
        d = NULL;
    }
    *out = d;
    return rc;
}

int ocisbx_engine_options_set_backend_options(ocisbx_engine_options *o, const ocisbx_backend_options *bo)
{
    if (!o)
        return ocisbx_fail(OCISBX_EINVAL, "engine options: NULL");
    ocisbx_backend_options *c = NULL;
    int rc = bo ? bo_copy(bo, &c) : 0;
    if (rc)
        return rc;
    ocisbx_backend_options_free(o->bo);
    o->bo = c;
    return 0;
}

int ocisbx_engine_options_set_project_id(ocisbx_engine_options *o, const char *project_id)
{
    if (!o || (project_id && !*project_id))
        return ocisbx_fail(OCISBX_EINVAL, "engine options: empty project id");
    char *p = NULL;
    int rc = dup_str(&p, project_id);
    if (rc)
        return rc;
    free(o->project_id);
    o->project_id = p;
    return 0;
}

static int set_limit(ocisbx_engine_options *o, int *field, int n, const char *what)
{
    if (!o || n < 1 || n > LIMIT_MAX)
        return ocisbx_fail(OCISBX_EINVAL, "engine options: %s %d is not in 1..%d", what, n, LIMIT_MAX);
    *field = n;
    return 0;
}

int ocisbx_engine_options_set_max_connections(ocisbx_engine_options *o, int n)
{
    return set_limit(o, o ? &o->max_connections : NULL, n, "max connections");
}

int ocisbx_engine_options_set_max_in_flight(ocisbx_engine_options *o, int n)
{
    return set_limit(o, o ? &o->max_in_flight : NULL, n, "max in flight");
}

int ocisbx_engine_options_set_max_creates(ocisbx_engine_options *o, int n)
{
    return set_limit(o, o ? &o->max_creates : NULL, n, "max creates");
}

int ocisbx_engine_options_set_creates_per_second(ocisbx_engine_options *o, double rate)
{
    if (!o || !(rate >= 0 && rate <= 100000))
        return ocisbx_fail(OCISBX_EINVAL, "engine options: creates per second must be 0 (none) to 100000");
    o->rate = rate;
    return 0;
}

/* ---- curl's callbacks ---- */
static int on_socket(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp)
{
    (void)easy;
    (void)socketp;
    ocisbx_engine *e = userp;
    size_t i = 0;
    while (i < e->n_fds && e->fds[i].fd != (int)s)
        i++;
    int w = what == CURL_POLL_REMOVE ? OCISBX_ENGINE_POLL_REMOVE
                                     : ((what & CURL_POLL_IN) ? OCISBX_ENGINE_POLL_IN : 0) |
                                           ((what & CURL_POLL_OUT) ? OCISBX_ENGINE_POLL_OUT : 0);
    if (w == OCISBX_ENGINE_POLL_REMOVE) {
        if (i < e->n_fds)
            e->fds[i] = e->fds[--e->n_fds];
    } else if (i < e->n_fds) {
        e->fds[i].what = w;
    } else {
        if (e->n_fds == e->cap_fds) {
            size_t cap = e->cap_fds ? e->cap_fds * 2 : 16;
            struct eng_fd *p = realloc(e->fds, cap * sizeof *p);
            if (!p)
                return -1;
            e->fds = p;
            e->cap_fds = cap;
        }
        e->fds[e->n_fds].fd = (int)s;
        e->fds[e->n_fds].what = w;
        e->n_fds++;
    }
    if (e->sock_fn)
        e->sock_fn((int)s, w, e->sock_ud);
    return 0;
}

static int on_timer(CURLM *m, long timeout_ms, void *userp)
{
    (void)m;
    ocisbx_engine *e = userp;
    e->curl_due = timeout_ms < 0 ? 0 : ocisbx_time_monotonic_ms() + timeout_ms;
    return 0;
}

/* ---- the engine ---- */
static int make_client(ocisbx_engine *e)
{
    if (e->bo->client) {
        e->client = e->bo->client;
        return 0;
    }
    char *cfg_region = NULL;
    int rc = ocisbx_oci_build_client(e->bo, &e->client, &cfg_region);
    free(cfg_region);
    if (rc)
        return rc;
    e->own_client = true;
    /* over TLS, one connection may carry many requests (the Host value
     * goes as :authority, exactly as signed) */
    e->client->http->http_version = (long)CURL_HTTP_VERSION_2TLS;
    e->bo->client = e->client;
    return 0;
}

static int setup(ocisbx_engine *e, const ocisbx_engine_options *o)
{
    int rc = bo_copy(o ? o->bo : NULL, &e->bo);
    if (!rc)
        rc = dup_str(&e->project_id, ocisbx_backend_setting(o ? o->project_id : NULL, "project_id"));
    if (!rc) { /* the create settings checked now, not at the first create */
        ocisbx_create_sandbox_details *d = NULL;
        rc = ocisbx_oci_create_details(e->bo, &d, &e->ready_ms);
        ocisbx_create_sandbox_details_free(d);
    }
    if (!rc) /* the option, else the setting: every wait's poll comes from it */
        rc = ocisbx_backend_poll_interval_ms(e->bo, &e->bo->poll_interval_ms);
    if (!rc)
        rc = make_client(e);
    if (rc)
        return rc;
    e->max_connections = o ? o->max_connections : OCISBX_ENGINE_DEFAULT_MAX_CONNECTIONS;
    e->max_in_flight = o ? o->max_in_flight : OCISBX_ENGINE_DEFAULT_MAX_IN_FLIGHT;
    e->max_creates = o ? o->max_creates : OCISBX_ENGINE_DEFAULT_MAX_CREATES;
    e->fixed_rate = e->rate = o ? o->rate : 0;
    e->cwnd = e->max_in_flight;
    /* creates start slow (2 in flight, one more per success): a tenancy's
     * create limit is met by a few answers 429, not by a whole burst */
    e->ccwnd = e->max_creates < SLOW_START ? e->max_creates : SLOW_START;
    e->window_start = ocisbx_time_monotonic_ms();
    e->told_due = -2;
    e->next_id = 1;
    /* failures take a token each, successes give a tenth of one back */
    ocisbx_http_budget_init(&e->budget, 10, 0.1);
    if (!(e->multi = curl_multi_init()))
        return ocisbx_fail(OCISBX_ENOMEM, "engine: cannot make the libcurl multi handle");
    curl_multi_setopt(e->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(e->multi, CURLMOPT_SOCKETDATA, e);
    curl_multi_setopt(e->multi, CURLMOPT_TIMERFUNCTION, on_timer);
    curl_multi_setopt(e->multi, CURLMOPT_TIMERDATA, e);
    curl_multi_setopt(e->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)e->max_connections);
    curl_multi_setopt(e->multi, CURLMOPT_MAXCONNECTS, (long)e->max_connections);
    curl_multi_setopt(e->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
    return 0;
}

int ocisbx_engine_new(const ocisbx_engine_options *opts, ocisbx_engine **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "engine: NULL out");
    *out = NULL;
    int rc = ocisbx_global_ensure();
    if (rc)
        return rc;
    ocisbx_engine *e = calloc(1, sizeof *e);
    if (!e)
        return ocisbx_fail_nomem();
    rc = setup(e, opts);
    if (rc) {
        ocisbx_engine_free(e);
        return ocisbx_error_wrap("engine: ");
    }
    *out = e;
    return 0;
}

/* Sandboxes created and not closed: deleted (blocking, 30 s in all). */
static void delete_left(ocisbx_engine *e)
{
    bool any = false;
    for (ocisbx_engine_sandbox *sb = e->sbx; sb; sb = sb->next)
        any = any || (sb->owned && sb->id);
    if (!any || !e->client)
        return;
    int64_t end = ocisbx_time_monotonic_ms() + FREE_DELETE_MS;
    if (e->deadline_at && e->deadline_at < end)
        end = e->deadline_at;
    if (end <= ocisbx_time_monotonic_ms())
        return; /* the caller's deadline has passed: they are left (the caller named them) */
    ocisbx_error_saved *sv = ocisbx_error_save();
    (void)ocisbx_client_hold_cancel(e->client, 1);
    (void)ocisbx_client_set_deadline(e->client, end);
    for (ocisbx_engine_sandbox *sb = e->sbx; sb; sb = sb->next)
        if (sb->owned && sb->id && ocisbx_client_delete_sandbox(e->client, sb->id) != 0 &&
            ocisbx_client_deadline_passed(e->client))
            break;
    (void)ocisbx_client_set_deadline(e->client, 0);
    (void)ocisbx_client_hold_cancel(e->client, 0);
    ocisbx_error_restore(sv);
}

/* What is pending is canceled and run to its end, its callbacks not
 * called: a create whose POST is in flight gets its answer and deletes
 * its sandbox, a running command is ended, a write's parts removed;
 * closes go on. Bounded by FREE_DRIVE_MS; not from inside a callback. */
static void drive_pending(ocisbx_engine *e)
{
    if (!e->multi || e->depth > 0 || e->n_ops == 0)
        return;
    ocisbx_error_saved *sv = ocisbx_error_save();
    e->freeing = true;
    e->sock_fn = NULL; /* the caller's loop is done with the engine */
    e->timer_fn = NULL;
    ocisbx_engine_cancel_all(e);
    int64_t end = ocisbx_time_monotonic_ms() + FREE_DRIVE_MS;
    if (e->deadline_at && e->deadline_at + 1000 < end)
        end = e->deadline_at + 1000; /* the requests end by the deadline, their operations just after */
    for (int64_t now = ocisbx_time_monotonic_ms(); e->n_ops > 0 && now < end; now = ocisbx_time_monotonic_ms())
        if (ocisbx_engine_run(e, end - now) < 0)
            break;
    ocisbx_error_restore(sv);
}

void ocisbx_engine_free(ocisbx_engine *e)
{
    if (!e)
        return;
    drive_pending(e);
    while (e->ops)
        eng_op_abandon(e->ops);
    delete_left(e);
    while (e->sbx)
        eng_sandbox_free(e->sbx);
    for (size_t i = 0; i < e->n_pool; i++)
        curl_easy_cleanup(e->pool[i]);
    free(e->pool);
    if (e->multi)
        curl_multi_cleanup(e->multi);
    free(e->fds);
    if (e->own_client)
        ocisbx_client_free(e->client);
    ocisbx_backend_options_free(e->bo);
    free(e->project_id);
    free(e);
}

/* ---- sandboxes ---- */
ocisbx_engine_sandbox *eng_sandbox_new(ocisbx_engine *e)
{
    ocisbx_engine_sandbox *sb = calloc(1, sizeof *sb);
    if (!sb)
        return NULL;
    sb->e = e;
    ocisbx_engine_sandbox **pp = &e->sbx;
    ocisbx_engine_sandbox *last = NULL;
    /* appended: the round robin goes in the order sandboxes came */
    while (*pp) {
        last = *pp;
        pp = &(*pp)->next;
    }
    sb->prev = last;
    *pp = sb;
    return sb;
}

void eng_sandbox_free(ocisbx_engine_sandbox *sb)
{
    if (!sb)
        return;
    ocisbx_engine *e = sb->e;
    while (sb->qhead)
        eng_req_drop(sb->qhead);
    if (e->rr == sb)
        e->rr = sb->next;
    if (sb->prev)
        sb->prev->next = sb->next;
    else
        e->sbx = sb->next;
    if (sb->next)
        sb->next->prev = sb->prev;
    if (sb->b) {
        sb->b->closed = true; /* nothing of the backend's own close: the engine closes */
        ocisbx_backend_free(sb->b);
    }
    free(sb->id);
    free(sb);
}

int eng_sandbox_backend(ocisbx_engine_sandbox *sb)
{
    if (sb->b)
        return 0;
    return ocisbx_backend_oci_open(NULL, sb->id, sb->e->bo, &sb->b);
}

int ocisbx_engine_attach_sandbox(ocisbx_engine *e, const char *sandbox_id, ocisbx_engine_sandbox **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "engine attach: NULL out");
    *out = NULL;
    if (!e || !sandbox_id || !*sandbox_id)
        return ocisbx_fail(OCISBX_EINVAL, "engine attach: a sandbox id is needed");
    ocisbx_engine_sandbox *sb = eng_sandbox_new(e);
    if (!sb)
        return ocisbx_fail_nomem();
    int rc = dup_str(&sb->id, sandbox_id);
    if (!rc)
        rc = eng_sandbox_backend(sb);
    if (rc) {
        eng_sandbox_free(sb);
        return rc;
    }
    *out = sb;
    return 0;
}

const char *ocisbx_engine_sandbox_id(const ocisbx_engine_sandbox *sb)
{
    return sb ? sb->id : NULL;
}

int ocisbx_engine_sandbox_is_owned(const ocisbx_engine_sandbox *sb)
{
    return sb && sb->owned;
}

/* ---- driving ---- */
static int64_t due_at(const ocisbx_engine *e, int64_t eng_due)
{
    int64_t due = e->curl_due;
    if (eng_due && (!due || eng_due < due))
        due = eng_due;
    return due;
}

static void tell_timer(ocisbx_engine *e)
{
    if (!e->timer_fn)
        return;
    int64_t due = due_at(e, e->eng_due);
    if (due == e->told_due && due != 0)
        return;
    e->told_due = due;
    int64_t now = ocisbx_time_monotonic_ms();
    e->timer_fn(due == 0 ? -1 : due > now ? due - now : 0, e->timer_ud);
}

void eng_process(ocisbx_engine *e)
{
    e->depth++;
    eng_reap(e);
    int64_t expiry = eng_expire(e);
    eng_ops_due(e);
    e->eng_due = eng_pump(e);
    if (expiry && (!e->eng_due || expiry < e->eng_due))
        e->eng_due = expiry;
    if (eng_ops_soon(e)) /* a callback decided an end: at once */
        e->eng_due = ocisbx_time_monotonic_ms();
    e->depth--;
    tell_timer(e);
}

void eng_kick(ocisbx_engine *e)
{
    if (e->depth == 0)
        eng_process(e);
}

int ocisbx_engine_socket_action(ocisbx_engine *e, int fd, int events)
{
    if (!e)
        return ocisbx_fail(OCISBX_EINVAL, "engine: NULL");
    int mask = ((events & OCISBX_ENGINE_POLL_IN) ? CURL_CSELECT_IN : 0) |
               ((events & OCISBX_ENGINE_POLL_OUT) ? CURL_CSELECT_OUT : 0);
    int running = 0;
    e->depth++;
    CURLMcode mc = curl_multi_socket_action(e->multi, (curl_socket_t)fd, mask, &running);
    e->depth--;
    eng_process(e);
    return mc == CURLM_OK || mc == CURLM_BAD_SOCKET ? 0 : ocisbx_fail(OCISBX_EIO, "engine: %s", curl_multi_strerror(mc));
}

int ocisbx_engine_timeout(ocisbx_engine *e)
{
    if (!e)
        return ocisbx_fail(OCISBX_EINVAL, "engine: NULL");
    int running = 0;
    e->told_due = -2; /* the timer has fired: the next one is told whatever it is */
    e->depth++;
    CURLMcode mc = curl_multi_socket_action(e->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    e->depth--;
    eng_process(e);
    return mc == CURLM_OK ? 0 : ocisbx_fail(OCISBX_EIO, "engine: %s", curl_multi_strerror(mc));
}

int64_t ocisbx_engine_timeout_ms(ocisbx_engine *e)
{
    if (!e)
        return -1;
    int64_t due = due_at(e, e->eng_due);
    int64_t now = ocisbx_time_monotonic_ms();
    return due == 0 ? -1 : due > now ? due - now : 0;
}

int ocisbx_engine_set_socket_callback(ocisbx_engine *e, ocisbx_engine_socket_fn fn, void *user_data)
{
    if (!e)
        return ocisbx_fail(OCISBX_EINVAL, "engine: NULL");
    e->sock_fn = fn;
    e->sock_ud = user_data;
    for (size_t i = 0; fn && i < e->n_fds; i++)
        fn(e->fds[i].fd, e->fds[i].what, user_data);
    return 0;
}

int ocisbx_engine_set_timer_callback(ocisbx_engine *e, ocisbx_engine_timer_fn fn, void *user_data)
{
    if (!e)
        return ocisbx_fail(OCISBX_EINVAL, "engine: NULL");
    e->timer_fn = fn;
    e->timer_ud = user_data;
    e->told_due = -2;
    tell_timer(e);
    return 0;
}

/* One wait of the own loop: poll() over the engine's fds, at most wait_ms. */
static int wait_once(ocisbx_engine *e, int64_t wait_ms)
{
    size_t n = e->n_fds;
    struct pollfd *p = calloc(n ? n : 1, sizeof *p);
    if (!p)
        return ocisbx_fail_nomem();
    for (size_t i = 0; i < n; i++) {
        p[i].fd = e->fds[i].fd;
        p[i].events = (short)(((e->fds[i].what & OCISBX_ENGINE_POLL_IN) ? POLLIN : 0) |
                              ((e->fds[i].what & OCISBX_ENGINE_POLL_OUT) ? POLLOUT : 0));
    }
    int r = poll(p, (nfds_t)n, wait_ms > 1000000 ? 1000000 : (int)wait_ms);
    if (r < 0) {
        int err = errno;
        free(p);
        return err == EINTR ? 1 : ocisbx_fail(OCISBX_EIO, "engine: poll: %s", strerror(err));
    }
    for (size_t i = 0; r > 0 && i < n; i++) {
        if (!p[i].revents)
            continue;
        int ev = ((p[i].revents & (POLLIN | POLLHUP | POLLERR)) ? OCISBX_ENGINE_POLL_IN : 0) |
                 ((p[i].revents & (POLLOUT | POLLERR)) ? OCISBX_ENGINE_POLL_OUT : 0);
        (void)ocisbx_engine_socket_action(e, p[i].fd, ev);
    }
    free(p);
    if (r == 0)
        (void)ocisbx_engine_timeout(e);
    return 0;
}

int ocisbx_engine_run(ocisbx_engine *e, int64_t timeout_ms)
{
    if (!e)
        return ocisbx_fail(OCISBX_EINVAL, "engine: NULL");
    if (timeout_ms > RUN_MAX_MS)
        timeout_ms = RUN_MAX_MS; /* no overflow of the end below */
    int64_t end = timeout_ms >= 0 ? ocisbx_time_monotonic_ms() + timeout_ms : 0;
    eng_process(e);
    for (;;) {
        if (e->n_ops == 0)
            return 0;
        int64_t t = ocisbx_engine_timeout_ms(e);
        int64_t now = ocisbx_time_monotonic_ms();
        int64_t left = timeout_ms >= 0 ? (end > now ? end - now : 0) : -1;
        int64_t wait = t < 0 ? left : (left < 0 || t < left ? t : left);
        if (wait < 0)
            wait = 1000; /* nothing to wait for is a bug's symptom: look again each second */
        int rc = wait_once(e, wait);
        if (rc < 0)
            return rc;
        if (rc == 1) /* a signal: the caller looks at its flags */
            return (int)(e->n_ops > 0 ? e->n_ops : 0);
        if (timeout_ms >= 0 && ocisbx_time_monotonic_ms() >= end)
            return (int)e->n_ops;
    }
}

int ocisbx_engine_set_deadline(ocisbx_engine *e, int64_t timeout_ms)
{
    if (!e || timeout_ms < 0 || timeout_ms > RUN_MAX_MS)
        return ocisbx_fail(OCISBX_EINVAL, "engine deadline: an engine and 0..%lld ms are needed", (long long)RUN_MAX_MS);
    int64_t at = ocisbx_time_monotonic_ms() + timeout_ms;
    if (e->deadline_at && e->deadline_at <= at)
        return 0;
    e->deadline_at = at;
    for (ocisbx_engine_sandbox *sb = e->sbx; sb; sb = sb->next)
        for (eng_req *q = sb->qhead; q; q = q->next)
            eng_req_deadline(q, at);
    eng_kick(e);
    return 0;
}

size_t ocisbx_engine_pending(const ocisbx_engine *e)
{
    return e ? e->n_ops : 0;
}

uint64_t ocisbx_engine_throttled(const ocisbx_engine *e)
{
    return e ? e->throttled : 0;
}

uint64_t ocisbx_engine_attempts(const ocisbx_engine *e)
{
    return e ? e->attempts : 0;
}

int ocisbx_engine_in_flight_bound(const ocisbx_engine *e)
{
    return e ? (int)e->cwnd : 0;
}
