/* Throttling like the service's (limits.requests_per_second and
 * limits.creates_per_second, per user): one token bucket per user and kind.
 * A bucket holds at most max(1, rate) tokens (one second's worth, at least
 * one request), refills at rate per second and starts full; a request takes
 * one token, or is refused with the time until one is there (the 429's
 * retry-after). Pure but for its own lock: time is given by the caller. */
#ifndef OCISBX_EMU_THROTTLE_H
#define OCISBX_EMU_THROTTLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct emu_bucket {
    double tokens;
    int64_t t_ms; /* when tokens was last computed; 0: never used (full) */
} emu_bucket;

/* Takes one token at now_ms: 0, or (nothing taken) the milliseconds until a
 * token is there (>= 1). rate <= 0 is no limit. */
int64_t emu_bucket_take(emu_bucket *b, double rate, int64_t now_ms);

typedef struct emu_throttle emu_throttle;

/* Buckets for users 0..n_users-1 (the caller's numbering of its principals). */
emu_throttle *emu_throttle_new(size_t n_users);
void emu_throttle_free(emu_throttle *t);

/* One request of user `who` (a create when create is true): 0 when allowed
 * (its tokens taken: one request, and one create for a create); else the
 * retry-after in whole seconds (>= 1, rounded up) and *what names the limit
 * that refused it ("limits.requests_per_second" or
 * "limits.creates_per_second"); nothing is taken then. who out of range:
 * allowed. Thread-safe. */
int emu_throttle_check(emu_throttle *t, double requests_per_second, double creates_per_second, size_t who,
                       bool create, int64_t now_ms, const char **what);

#endif
