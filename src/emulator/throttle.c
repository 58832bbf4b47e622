/* Token buckets for the service-like throttling (see throttle.h). */
#include <pthread.h>
#include <stdlib.h>

#include "emulator/throttle.h"

struct emu_throttle {
    pthread_mutex_t mu;
    size_t n;
    emu_bucket *requests; /* per user */
    emu_bucket *creates;
};

static double capacity(double rate)
{
    return rate > 1.0 ? rate : 1.0;
}

/* The tokens of b at now_ms (refilled, capped), without taking any. */
static double level(const emu_bucket *b, double rate, int64_t now_ms)
{
    if (b->t_ms == 0)
        return capacity(rate);
    double t = b->tokens + (double)(now_ms - b->t_ms) * rate / 1000.0;
    return t < capacity(rate) ? t : capacity(rate);
}

/* Milliseconds until b holds a whole token (0: it does). */
static int64_t wait_ms(const emu_bucket *b, double rate, int64_t now_ms)
{
    if (rate <= 0)
        return 0;
    double have = level(b, rate, now_ms);
    if (have >= 1.0)
        return 0;
    double x = (1.0 - have) * 1000.0 / rate;
    int64_t ms = (int64_t)x;
    if ((double)ms < x) /* rounded up: at ms the token is there */
        ms++;
    return ms > 0 ? ms : 1;
}

static void take(emu_bucket *b, double rate, int64_t now_ms)
{
    if (rate <= 0)
        return;
    b->tokens = level(b, rate, now_ms) - 1.0;
    b->t_ms = now_ms > 0 ? now_ms : 1;
}

int64_t emu_bucket_take(emu_bucket *b, double rate, int64_t now_ms)
{
    int64_t w = wait_ms(b, rate, now_ms);
    if (w == 0)
        take(b, rate, now_ms);
    return w;
}

emu_throttle *emu_throttle_new(size_t n_users)
{
    emu_throttle *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->n = n_users;
    t->requests = calloc(n_users + 1, sizeof *t->requests);
    t->creates = calloc(n_users + 1, sizeof *t->creates);
    if (!t->requests || !t->creates) {
        emu_throttle_free(t);
        return NULL;
    }
    pthread_mutex_init(&t->mu, NULL);
    return t;
}

void emu_throttle_free(emu_throttle *t)
{
    if (!t)
        return;
    if (t->requests && t->creates)
        pthread_mutex_destroy(&t->mu);
    free(t->requests);
    free(t->creates);
    free(t);
}

static int seconds(int64_t ms)
{
    int64_t s = (ms + 999) / 1000;
    return s < 1 ? 1 : s > 86400 ? 86400 : (int)s;
}

int emu_throttle_check(emu_throttle *t, double requests_per_second, double creates_per_second, size_t who,
                       bool create, int64_t now_ms, const char **what)
{
    if (!t || who >= t->n)
        return 0;
    pthread_mutex_lock(&t->mu);
    int rc = 0;
    int64_t w = wait_ms(&t->requests[who], requests_per_second, now_ms);
    if (w) {
        *what = "limits.requests_per_second";
        rc = seconds(w);
    } else if (create && (w = wait_ms(&t->creates[who], creates_per_second, now_ms)) != 0) {
        *what = "limits.creates_per_second";
        rc = seconds(w);
    } else {
        take(&t->requests[who], requests_per_second, now_ms);
        if (create)
            take(&t->creates[who], creates_per_second, now_ms);
    }
    pthread_mutex_unlock(&t->mu);
    return rc;
}
