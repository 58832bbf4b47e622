/* ISO 8601 durations limited to units of fixed length (weeks, days, hours,
 * minutes, seconds): years and months have no fixed length, so they are
 * refused rather than guessed. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ocisbx/util.h"
#include "util/internal.h"

#define MS_SECOND INT64_C(1000)
#define MS_MINUTE (60 * MS_SECOND)
#define MS_HOUR (60 * MS_MINUTE)
#define MS_DAY (24 * MS_HOUR)
#define MS_WEEK (7 * MS_DAY)

/* Ranks give the only order units may appear in. */
enum { R_WEEK = 1, R_DAY, R_HOUR, R_MINUTE, R_SECOND };

/* Messages quote the input: its control bytes are written as \xNN so the
 * message stays one line whatever was given. */
static int bad(const char *fmt, ...) OCISBX_PRINTF(1, 2);
static int bad(const char *fmt, ...)
{
    char raw[512], shown[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    /* Only control bytes: non-ASCII input is quoted as given (the tests
     * expect it), unlike ocisbx_escape_shown. */
    size_t o = 0;
    for (const unsigned char *q = (const unsigned char *)raw; *q && o + 5 < sizeof shown; q++) {
        if (*q < 0x20 || *q == 0x7f)
            o += (size_t)snprintf(shown + o, sizeof shown - o, "\\x%02x", *q);
        else
            shown[o++] = (char)*q;
    }
    shown[o] = '\0';
    return ocisbx_fail(OCISBX_EPARSE, "%s", shown);
}
#define BAD(...) bad(__VA_ARGS__)

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

int ocisbx_duration_parse(const char *text, int64_t *out_ms)
{
    if (!text || !out_ms)
        return ocisbx_fail(OCISBX_EINVAL, "duration parse: NULL argument");
    const char *s = text;
    if (s[0] == '-')
        return BAD("duration \"%.64s\": negative durations are not allowed", s);
    if (s[0] != 'P')
        return BAD("duration \"%.64s\": must start with 'P' (ISO 8601, e.g. \"PT1H30M\")", s);
    const char *p = s + 1;
    if (*p == '\0')
        return BAD("duration \"%.64s\": empty, no value after 'P'", s);
    bool in_time = false, had_fraction = false, had_week = false;
    int last_rank = 0, count = 0, time_count = 0;
    int64_t total = 0;
    while (*p) {
        if (*p == 'T') {
            if (in_time)
                return BAD("duration \"%.64s\": 'T' appears twice", s);
            if (had_fraction)
                return BAD("duration \"%.64s\": a fraction is allowed on the last (smallest) unit only", s);
            in_time = true;
            p++;
            if (*p == '\0')
                return BAD("duration \"%.64s\": empty, no value after 'T'", s);
            continue;
        }
        if (*p == '-' || *p == '+')
            return BAD("duration \"%.64s\": signs are not allowed (negative durations are refused)", s);
        if (!is_digit(*p)) {
            if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z'))
                return BAD("duration \"%.64s\": unit '%c' without a number before it", s, *p);
            return BAD("duration \"%.64s\": unexpected character 0x%02x at offset %d", s, (unsigned char)*p,
                       (int)(p - s));
        }
        if (had_fraction)
            return BAD("duration \"%.64s\": a fraction is allowed on the last (smallest) unit only", s);
        /* Whole part: at most 19 digits fit an int64; overflow is checked on use. */
        uint64_t whole = 0;
        bool whole_overflow = false;
        for (; is_digit(*p); p++) {
            if (whole > (UINT64_MAX - 9) / 10)
                whole_overflow = true;
            else
                whole = whole * 10 + (uint64_t)(*p - '0');
        }
        /* Fraction: the first 9 digits count, later ones are below a nanosecond. */
        uint64_t frac_num = 0, frac_den = 1;
        bool fraction = false;
        if (*p == '.' || *p == ',') {
            fraction = true;
            p++;
            if (!is_digit(*p))
                return BAD("duration \"%.64s\": no digits after the decimal mark", s);
            for (; is_digit(*p); p++) {
                if (frac_den < UINT64_C(1000000000)) {
                    frac_num = frac_num * 10 + (uint64_t)(*p - '0');
                    frac_den *= 10;
                }
            }
        }
        char unit = *p;
        if (unit == '\0')
            return BAD("duration \"%.64s\": the number at the end has no unit", s);
        int rank;
        int64_t unit_ms;
        switch (unit) {
        case 'Y': return BAD("duration \"%.64s\": years are not supported (no fixed length); use days", s);
        case 'W':
            if (in_time)
                return BAD("duration \"%.64s\": unit 'W' after 'T' (weeks belong in the date part)", s);
            rank = R_WEEK, unit_ms = MS_WEEK;
            break;
        case 'D':
            if (in_time)
                return BAD("duration \"%.64s\": unit 'D' after 'T' (days belong in the date part)", s);
            rank = R_DAY, unit_ms = MS_DAY;
            break;
        case 'H':
            if (!in_time)
                return BAD("duration \"%.64s\": unit 'H' needs 'T' before it (e.g. \"PT1H\")", s);
            rank = R_HOUR, unit_ms = MS_HOUR;
            break;
        case 'M':
            if (!in_time)
                return BAD("duration \"%.64s\": months are not supported (no fixed length); "
                           "for minutes write \"PT%lluM\"",
                           s, (unsigned long long)whole);
            rank = R_MINUTE, unit_ms = MS_MINUTE;
            break;
        case 'S':
            if (!in_time)
                return BAD("duration \"%.64s\": unit 'S' needs 'T' before it (e.g. \"PT30S\")", s);
            rank = R_SECOND, unit_ms = MS_SECOND;
            break;
        default:
            if (unit >= 0x21 && unit <= 0x7e)
                return BAD("duration \"%.64s\": unknown unit '%c' (expected W, D, H, M or S)", s, unit);
            return BAD("duration \"%.64s\": unknown unit byte 0x%02x (expected W, D, H, M or S)", s,
                       (unsigned char)unit);
        }
        if (rank == last_rank)
            return BAD("duration \"%.64s\": unit '%c' repeated", s, unit);
        if (rank < last_rank)
            return BAD("duration \"%.64s\": unit '%c' out of order (units go from largest to smallest)", s, unit);
        if (had_week || (rank == R_WEEK && count > 0))
            return BAD("duration \"%.64s\": weeks cannot be combined with other units (write days)", s);
        p++;
        int64_t part;
        if (whole_overflow || whole > (uint64_t)INT64_MAX || __builtin_mul_overflow((int64_t)whole, unit_ms, &part))
            return BAD("duration \"%.64s\": too large (more than %lld ms)", s, (long long)INT64_MAX);
        /* unit_ms * frac_num < 6.1e8 * 1e9: no overflow. */
        int64_t frac_ms = (int64_t)((uint64_t)unit_ms * frac_num / frac_den);
        if (__builtin_add_overflow(part, frac_ms, &part) || __builtin_add_overflow(total, part, &total))
            return BAD("duration \"%.64s\": too large (more than %lld ms)", s, (long long)INT64_MAX);
        had_fraction = fraction;
        had_week = rank == R_WEEK;
        last_rank = rank;
        count++;
        if (in_time)
            time_count++;
    }
    if (in_time && time_count == 0)
        return BAD("duration \"%.64s\": empty, no value after 'T'", s);
    *out_ms = total;
    return 0;
}

int ocisbx_duration_format(int64_t ms, char **out)
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "duration format: NULL output");
    *out = NULL;
    if (ms < 0)
        return ocisbx_fail(OCISBX_EINVAL, "duration format: negative duration %lld ms", (long long)ms);
    int64_t days = ms / MS_DAY, rest = ms % MS_DAY;
    int64_t h = rest / MS_HOUR, m = rest / MS_MINUTE % 60, sec = rest / MS_SECOND % 60, frac = rest % 1000;
    char buf[64];
    size_t n = 0;
    buf[n++] = 'P';
    if (days)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%lldD", (long long)days);
    if (rest || !days) {
        buf[n++] = 'T';
        if (h)
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%lldH", (long long)h);
        if (m)
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%lldM", (long long)m);
        if (sec || frac || rest == 0) {
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%lld", (long long)sec);
            if (frac) {
                char f[8];
                snprintf(f, sizeof f, ".%03d", (int)frac);
                size_t fl = strlen(f);
                while (f[fl - 1] == '0')
                    f[--fl] = '\0';
                n += (size_t)snprintf(buf + n, sizeof buf - n, "%s", f);
            }
            buf[n++] = 'S';
        }
    }
    buf[n] = '\0';
    *out = ocisbx_strdup(buf);
    return *out ? 0 : ocisbx_fail_nomem();
}
