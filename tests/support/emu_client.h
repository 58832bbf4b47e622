/* A library client for a running emulator fixture: its config file's API
 * key, its CA (with https), short backoffs. */
#ifndef OCISBX_TEST_EMU_CLIENT_H
#define OCISBX_TEST_EMU_CLIENT_H

#include "emu_fixture.h"
#include "ocisbx/api.h"
#include "ocisbx/http.h"

/* 0 or the failing call's code (the thread's error says why). */
int emu_client_new(emu_fixture *f, int prefer_ndjson, ocisbx_client **out);
/* The same with at most max_attempts attempts a request (ocisbx_http_options_set_max_attempts). */
int emu_client_new_attempts(emu_fixture *f, int max_attempts, ocisbx_client **out);
/* The same with a download limit (ocisbx_client_options_set_max_download_bytes). */
int emu_client_new_limited(emu_fixture *f, int prefer_ndjson, int64_t max_download, ocisbx_client **out);

/* The same, fn called after every HTTP attempt of the client (the http
 * layer's attempt callback). */
int emu_client_new_observed(emu_fixture *f, ocisbx_http_attempt_fn fn, void *ud, ocisbx_client **out);
/* The same, counting every HTTP attempt of the client in *attempts (the
 * http layer's attempt callback): for request counts in benchmarks. */
int emu_client_new_counting(emu_fixture *f, int *attempts, ocisbx_client **out);

#endif
