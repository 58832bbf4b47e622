/* The library's one sleep (internal): in short slices, asking a cancel
 * callback between them, so every wait (retry backoff, polling, stream
 * resumption) can be interrupted. */
#ifndef OCISBX_SYS_SLEEP_H
#define OCISBX_SYS_SLEEP_H

#include <stdint.h>

#include "ocisbx/common.h"

/* The longest gap between two questions to cancel. */
#define OCISBX_SYS_SLEEP_SLICE_MS 50

/* Sleeps ms milliseconds (<= 0: not at all), asking cancel (may be NULL)
 * before the first slice and after each. Returns 0, or OCISBX_ECANCELED as
 * soon as cancel returns non-zero (the thread's error is not set: the
 * caller names what was canceled). A signal does not
 * shorten it, but makes it ask cancel at once. */
int ocisbx_sys_sleep_ms(int64_t ms, ocisbx_cancel_fn cancel, void *user_data);

/* cancel(user_data) != 0, NULL being "never". */
int ocisbx_sys_canceled(ocisbx_cancel_fn cancel, void *user_data);

#endif
