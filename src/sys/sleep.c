/* The one cancellable sleep (see sleep.h). */
#include <time.h>

#include "sys/sleep.h"
#include "ocisbx/util.h"

int ocisbx_sys_canceled(ocisbx_cancel_fn cancel, void *user_data)
{
    return cancel && cancel(user_data) != 0;
}

/* A signal ends a nap early: the caller asks cancel at once (a handler
 * that set a flag is seen without waiting for the slice to end). */
static void nap(int64_t ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    (void)nanosleep(&ts, NULL);
}

int ocisbx_sys_sleep_ms(int64_t ms, ocisbx_cancel_fn cancel, void *user_data)
{
    if (ocisbx_sys_canceled(cancel, user_data))
        return OCISBX_ECANCELED;
    if (ms <= 0)
        return 0;
    int64_t end = ocisbx_time_monotonic_ms() + ms;
    for (;;) {
        int64_t left = end - ocisbx_time_monotonic_ms();
        if (left <= 0)
            return 0;
        nap(cancel && left > OCISBX_SYS_SLEEP_SLICE_MS ? OCISBX_SYS_SLEEP_SLICE_MS : left);
        if (ocisbx_sys_canceled(cancel, user_data))
            return OCISBX_ECANCELED;
    }
}
