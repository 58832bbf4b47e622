/* Load on an emulator fixture: many signed requests at once over libcurl's
 * multi interface (one thread), for the scale test and bench_emulator.
 *
 *   emu_load_req r[N] = {0};  // method, path, body of each
 *   emu_load_run(f, r, N, 64);         // all of them, at most 64 in flight
 *   emu_load_hold(f, r, M, 120, cb, ud);  // M at once, kept open: cb runs
 *                                         // once each got its first bytes
 *   emu_load_free(r, N);
 */
#ifndef OCISBX_EMU_LOAD_H
#define OCISBX_EMU_LOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "emu_fixture.h"

#define EMU_LOAD_BODY_MAX 65536

typedef struct emu_load_req {
    const char *method; /* "GET", "POST", ... */
    char path[512];     /* below /<apiVersion>, with the query */
    const char *body;   /* NULL: none */
    /* results */
    long status;     /* HTTP status, 0 when none */
    int curl_code;   /* CURLcode (0 = OK) */
    char *resp;      /* the first EMU_LOAD_BODY_MAX bytes of the answer, NUL-terminated */
    size_t resp_len;
    double ms;       /* from start to end (emu_load_run) or to the first bytes (emu_load_hold) */
    bool got_bytes;  /* some of the body arrived */
    /* internal */
    void *easy;
    void *headers;
    double t0;
    bool done;
} emu_load_req;

/* Runs every request to its end, at most concurrency at a time. Returns the
 * number that got an HTTP answer (any status), or -1 on a local failure. */
int emu_load_run(emu_fixture *f, emu_load_req *r, size_t n, int concurrency);
/* Starts all n at once and waits (at most timeout_s) until each has got its
 * first body bytes or ended; then calls open_cb(ud, open) with the number
 * open at that moment (bytes received, not ended), then closes them all.
 * Returns open, or -1 on a local failure. */
int emu_load_hold(emu_fixture *f, emu_load_req *r, size_t n, double timeout_s, void (*open_cb)(void *ud, size_t open),
                  void *ud);
void emu_load_free(emu_load_req *r, size_t n);

/* Of a process: its open descriptors (/proc/PID/fd), its threads and a
 * /proc/PID/status field in kB ("VmRSS", "VmHWM"); -1 when unknown. */
long emu_load_fds(int pid);
long emu_load_threads(int pid);
long emu_load_status_kb(int pid, const char *field);
/* The sum of the proportional set sizes (Pss of /proc/PID/smaps_rollup, kB:
 * shared pages divided among their users) of pid's descendants (not pid). */
long emu_load_children_pss_kb(int pid);

#endif
