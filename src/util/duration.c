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

/* One number: its whole part (saturating: whole_overflow), and a fraction
 * of which the first 9 digits count (later ones are below a nanosecond). */
typedef struct number {
    uint64_t whole, frac_num, frac_den;
    bool whole_overflow, fraction;
} number;

static int read_number(const char *s, const char **pp, number *n)
{
    const char *p = *pp;
    *n = (number){0, 0, 1, false, false};
    for (; is_digit(*p); p++) {
        if (n->whole > (UINT64_MAX - 9) / 10)
            n->whole_overflow = true;
        else
            n->whole = n->whole * 10 + (uint64_t)(*p - '0');
    }
    if (*p == '.' || *p == ',') {
        n->fraction = true;
        p++;
        if (!is_digit(*p))
            return BAD("duration \"%.64s\": no digits after the decimal mark", s);
        for (; is_digit(*p); p++) {
            if (n->frac_den < UINT64_C(1000000000)) {
                n->frac_num = n->frac_num * 10 + (uint64_t)(*p - '0');
                n->frac_den *= 10;
            }
        }
    }
    *pp = p;
    return 0;
}

/* The unit letter's rank and length, with the date/time part checked. */
static int unit_of(const char *s, char unit, bool in_time, uint64_t whole, int *rank, int64_t *unit_ms)
{
    switch (unit) {
    case '\0': return BAD("duration \"%.64s\": the number at the end has no unit", s);
    case 'Y': return BAD("duration \"%.64s\": years are not supported (no fixed length); use days", s);
    case 'W':
        if (in_time)
            return BAD("duration \"%.64s\": unit 'W' after 'T' (weeks belong in the date part)", s);
        *rank = R_WEEK, *unit_ms = MS_WEEK;
        return 0;
    case 'D':
        if (in_time)
            return BAD("duration \"%.64s\": unit 'D' after 'T' (days belong in the date part)", s);
        *rank = R_DAY, *unit_ms = MS_DAY;
        return 0;
    case 'H':
        if (!in_time)
            return BAD("duration \"%.64s\": unit 'H' needs 'T' before it (e.g. \"PT1H\")", s);
        *rank = R_HOUR, *unit_ms = MS_HOUR;
        return 0;
    case 'M':
        if (!in_time)
            return BAD("duration \"%.64s\": months are not supported (no fixed length); "
                       "for minutes write \"PT%lluM\"",
                       s, (unsigned long long)whole);
        *rank = R_MINUTE, *unit_ms = MS_MINUTE;
        return 0;
    case 'S':
        if (!in_time)
            return BAD("duration \"%.64s\": unit 'S' needs 'T' before it (e.g. \"PT30S\")", s);
        *rank = R_SECOND, *unit_ms = MS_SECOND;
        return 0;
    default:
        if (unit >= 0x21 && unit <= 0x7e)
            return BAD("duration \"%.64s\": unknown unit '%c' (expected W, D, H, M or S)", s, unit);
        return BAD("duration \"%.64s\": unknown unit byte 0x%02x (expected W, D, H, M or S)", s, (unsigned char)unit);
    }
}

/* The parse's state between units. */
typedef struct parse_state {
    bool in_time, had_fraction, had_week;
    int last_rank, count, time_count;
    int64_t total;
} parse_state;

/* One "<number><unit>" at *pp, added to st->total. */
static int read_part(const char *s, const char **pp, parse_state *st)
{
    const char *p = *pp;
    if (*p == '-' || *p == '+')
        return BAD("duration \"%.64s\": signs are not allowed (negative durations are refused)", s);
    if (!is_digit(*p)) {
        if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z'))
            return BAD("duration \"%.64s\": unit '%c' without a number before it", s, *p);
        return BAD("duration \"%.64s\": unexpected character 0x%02x at offset %d", s, (unsigned char)*p,
                   (int)(p - s));
    }
    if (st->had_fraction)
        return BAD("duration \"%.64s\": a fraction is allowed on the last (smallest) unit only", s);
    number n;
    int rank = 0;
    int64_t unit_ms = 0;
    int rc = read_number(s, &p, &n);
    if (!rc)
        rc = unit_of(s, *p, st->in_time, n.whole, &rank, &unit_ms);
    if (rc)
        return rc;
    if (rank == st->last_rank)
        return BAD("duration \"%.64s\": unit '%c' repeated", s, *p);
    if (rank < st->last_rank)
        return BAD("duration \"%.64s\": unit '%c' out of order (units go from largest to smallest)", s, *p);
    if (st->had_week || (rank == R_WEEK && st->count > 0))
        return BAD("duration \"%.64s\": weeks cannot be combined with other units (write days)", s);
    p++;
    int64_t part;
    if (n.whole_overflow || n.whole > (uint64_t)INT64_MAX || __builtin_mul_overflow((int64_t)n.whole, unit_ms, &part))
        return BAD("duration \"%.64s\": too large (more than %lld ms)", s, (long long)INT64_MAX);
    /* unit_ms * frac_num < 6.1e8 * 1e9: no overflow. */
    int64_t frac_ms = (int64_t)((uint64_t)unit_ms * n.frac_num / n.frac_den);
    if (__builtin_add_overflow(part, frac_ms, &part) || __builtin_add_overflow(st->total, part, &st->total))
        return BAD("duration \"%.64s\": too large (more than %lld ms)", s, (long long)INT64_MAX);
    st->had_fraction = n.fraction;
    st->had_week = rank == R_WEEK;
    st->last_rank = rank;
    st->count++;
    if (st->in_time)
        st->time_count++;
    *pp = p;
    return 0;
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
    parse_state st = {0};
    while (*p) {
        if (*p != 'T') {
            int rc = read_part(s, &p, &st);
            if (rc)
                return rc;
            continue;
        }
        if (st.in_time)
            return BAD("duration \"%.64s\": 'T' appears twice", s);
        if (st.had_fraction)
            return BAD("duration \"%.64s\": a fraction is allowed on the last (smallest) unit only", s);
        st.in_time = true;
        p++;
        if (*p == '\0')
            return BAD("duration \"%.64s\": empty, no value after 'T'", s);
    }
    if (st.in_time && st.time_count == 0)
        return BAD("duration \"%.64s\": empty, no value after 'T'", s);
    *out_ms = st.total;
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
