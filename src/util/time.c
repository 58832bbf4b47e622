/* RFC 1123 and RFC 3339 times. Calendar arithmetic is done here (not with
 * strftime/strptime/timegm) so that the locale and TZ never matter. */
#include <string.h>
#include <time.h>

#include "ocisbx/util.h"
#include "util/internal.h"

static const char *const day_names[7] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
static const char *const month_names[12] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static int floor_div(int64_t a, int64_t b, int64_t *q)
{
    int64_t r = a % b;
    *q = a / b;
    if (r != 0 && ((r < 0) != (b < 0))) {
        r += b;
        *q -= 1;
    }
    return (int)r;
}

static bool is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in_month(int64_t y, int m)
{
    static const int dm[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29 : dm[m - 1];
}

/* Reads exactly n digits. */
static bool digits(const char **p, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        char c = (*p)[i];
        if (c < '0' || c > '9')
            return false;
        v = v * 10 + (c - '0');
    }
    *p += n;
    *out = v;
    return true;
}

/* Writes v as exactly width decimal digits (v fits by construction). */
static char *put_digits(char *o, unsigned v, int width)
{
    for (int i = width - 1; i >= 0; i--) {
        o[i] = (char)('0' + v % 10);
        v /= 10;
    }
    return o + width;
}

static char *put_str(char *o, const char *s)
{
    size_t n = strlen(s);
    memcpy(o, s, n);
    return o + n;
}

static bool lit(const char **p, const char *s)
{
    size_t n = strlen(s);
    if (strncmp(*p, s, n) != 0)
        return false;
    *p += n;
    return true;
}

int ocisbx_time_format_rfc1123(time_t t, char out[OCISBX_RFC1123_LEN + 1])
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "RFC 1123 format: NULL output");
    int64_t days;
    int secs = floor_div((int64_t)t, 86400, &days);
    int64_t y;
    int m, d;
    civil_from_days(days, &y, &m, &d);
    if (y < 0 || y > 9999) {
        out[0] = '\0';
        return ocisbx_fail(OCISBX_EINVAL, "RFC 1123 format: time %lld is outside years 0000-9999", (long long)t);
    }
    int64_t wq;
    int wday = floor_div(days + 4, 7, &wq); /* 1970-01-01 was a Thursday */
    char *o = put_str(out, day_names[wday]);
    o = put_str(o, ", ");
    o = put_digits(o, (unsigned)d, 2);
    *o++ = ' ';
    o = put_str(o, month_names[m - 1]);
    *o++ = ' ';
    o = put_digits(o, (unsigned)y, 4);
    *o++ = ' ';
    o = put_digits(o, (unsigned)(secs / 3600), 2);
    *o++ = ':';
    o = put_digits(o, (unsigned)(secs / 60 % 60), 2);
    *o++ = ':';
    o = put_digits(o, (unsigned)(secs % 60), 2);
    o = put_str(o, " GMT");
    *o = '\0';
    return 0;
}

int ocisbx_time_parse_rfc1123(const char *text, time_t *out)
{
    if (!text || !out)
        return ocisbx_fail(OCISBX_EINVAL, "RFC 1123 parse: NULL argument");
    const char *p = text;
    int wday = -1;
    for (int i = 0; i < 7; i++)
        if (strncmp(p, day_names[i], 3) == 0)
            wday = i;
    if (wday < 0)
        return ocisbx_fail(OCISBX_EPARSE, "RFC 1123 date \"%.64s\": no English day name at the start", text);
    p += 3;
    if (!lit(&p, ", "))
        return ocisbx_fail(OCISBX_EPARSE, "RFC 1123 date \"%.64s\": expected \", \" after the day name", text);
    int d, y, hh, mm, ss;
    if (!digits(&p, 2, &d))
        return ocisbx_fail(OCISBX_EPARSE, "RFC 1123 date \"%.64s\": expected a two-digit day of month", text);
    if (!lit(&p, " "))
        return ocisbx_fail(OCISBX_EPARSE, "RFC 1123 date \"%.64s\": expected a space after the day", text);
    int m = 0;
    for (int i = 0; i < 12; i++)
        if (strncmp(p, month_names[i], 3) == 0)
            m = i + 1;
    if (!m)
        return ocisbx_fail(OCISBX_EPARSE, "RFC 1123 date \"%.64s\": no English month name", text);
    p += 3;
    if (!lit(&p, " ") || !digits(&p, 4, &y) || !lit(&p, " "))
        return ocisbx_fail(OCISBX_EPARSE, "RFC 1123 date \"%.64s\": expected a four-digit year", text);
    if (!digits(&p, 2, &hh) || !lit(&p, ":") || !digits(&p, 2, &mm) || !lit(&p, ":") || !digits(&p, 2, &ss))
        return ocisbx_fail(OCISBX_EPARSE, "RFC 1123 date \"%.64s\": expected the time as HH:MM:SS", text);
    if (!lit(&p, " GMT") || *p != '\0')
        return ocisbx_fail(OCISBX_EPARSE, "RFC 1123 date \"%.64s\": expected \" GMT\" at the end", text);
    if (d < 1 || d > days_in_month(y, m))
        return ocisbx_fail(OCISBX_EPARSE, "RFC 1123 date \"%.64s\": day %d does not exist in %s %d", text, d,
                           month_names[m - 1], y);
    if (hh > 23 || mm > 59 || ss > 60)
        return ocisbx_fail(OCISBX_EPARSE, "RFC 1123 date \"%.64s\": time of day out of range", text);
    /* The day name is not checked against the date: the published signing
     * vector itself says "Thu, 05 Jan 2014", a Sunday. */
    int64_t days = days_from_civil(y, m, d);
    int64_t v = days * 86400 + hh * 3600 + mm * 60 + ss;
    if ((int64_t)(time_t)v != v)
        return ocisbx_fail(OCISBX_EPARSE, "RFC 1123 date \"%.64s\": out of range for time_t", text);
    *out = (time_t)v;
    return 0;
}

int ocisbx_time_format_rfc3339(int64_t unix_ms, char out[OCISBX_RFC3339_LEN + 1])
{
    if (!out)
        return ocisbx_fail(OCISBX_EINVAL, "RFC 3339 format: NULL output");
    int64_t secs, days;
    int ms = floor_div(unix_ms, 1000, &secs);
    int sod = floor_div(secs, 86400, &days);
    int64_t y;
    int m, d;
    civil_from_days(days, &y, &m, &d);
    if (y < 0 || y > 9999) {
        out[0] = '\0';
        return ocisbx_fail(OCISBX_EINVAL, "RFC 3339 format: time %lld ms is outside years 0000-9999",
                           (long long)unix_ms);
    }
    char *o = put_digits(out, (unsigned)y, 4);
    *o++ = '-';
    o = put_digits(o, (unsigned)m, 2);
    *o++ = '-';
    o = put_digits(o, (unsigned)d, 2);
    *o++ = 'T';
    o = put_digits(o, (unsigned)(sod / 3600), 2);
    *o++ = ':';
    o = put_digits(o, (unsigned)(sod / 60 % 60), 2);
    *o++ = ':';
    o = put_digits(o, (unsigned)(sod % 60), 2);
    *o++ = '.';
    o = put_digits(o, (unsigned)ms, 3);
    *o++ = 'Z';
    *o = '\0';
    return 0;
}

int ocisbx_time_parse_rfc3339(const char *text, int64_t *unix_ms)
{
    if (!text || !unix_ms)
        return ocisbx_fail(OCISBX_EINVAL, "RFC 3339 parse: NULL argument");
    const char *p = text;
    int y, m, d, hh, mm, ss;
    if (!digits(&p, 4, &y) || !lit(&p, "-") || !digits(&p, 2, &m) || !lit(&p, "-") || !digits(&p, 2, &d))
        return ocisbx_fail(OCISBX_EPARSE, "RFC 3339 time \"%.64s\": expected a date YYYY-MM-DD", text);
    if (*p != 'T' && *p != 't')
        return ocisbx_fail(OCISBX_EPARSE, "RFC 3339 time \"%.64s\": expected 'T' after the date", text);
    p++;
    if (!digits(&p, 2, &hh) || !lit(&p, ":") || !digits(&p, 2, &mm) || !lit(&p, ":") || !digits(&p, 2, &ss))
        return ocisbx_fail(OCISBX_EPARSE, "RFC 3339 time \"%.64s\": expected the time as HH:MM:SS", text);
    int ms = 0;
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9')
            return ocisbx_fail(OCISBX_EPARSE, "RFC 3339 time \"%.64s\": no digits after the decimal point", text);
        /* Digits past milliseconds are accepted and truncated. */
        int n = 0;
        for (; *p >= '0' && *p <= '9'; p++, n++)
            if (n < 3)
                ms = ms * 10 + (*p - '0');
        for (; n < 3; n++)
            ms *= 10;
    }
    int offset_min = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p == '-' ? -1 : 1, oh, om;
        p++;
        if (!digits(&p, 2, &oh) || !lit(&p, ":") || !digits(&p, 2, &om))
            return ocisbx_fail(OCISBX_EPARSE, "RFC 3339 time \"%.64s\": expected the offset as +hh:mm", text);
        if (oh > 23 || om > 59)
            return ocisbx_fail(OCISBX_EPARSE, "RFC 3339 time \"%.64s\": offset out of range", text);
        offset_min = sign * (oh * 60 + om);
    } else {
        return ocisbx_fail(OCISBX_EPARSE, "RFC 3339 time \"%.64s\": expected 'Z' or an offset +hh:mm", text);
    }
    if (*p != '\0')
        return ocisbx_fail(OCISBX_EPARSE, "RFC 3339 time \"%.64s\": unexpected text after the time", text);
    if (m < 1 || m > 12)
        return ocisbx_fail(OCISBX_EPARSE, "RFC 3339 time \"%.64s\": month %d out of range", text, m);
    if (d < 1 || d > days_in_month(y, m))
        return ocisbx_fail(OCISBX_EPARSE, "RFC 3339 time \"%.64s\": day %d does not exist in %04d-%02d", text, d, y,
                           m);
    /* 60 is a leap second (RFC 3339 5.7); it is counted as the next second. */
    if (hh > 23 || mm > 59 || ss > 60)
        return ocisbx_fail(OCISBX_EPARSE, "RFC 3339 time \"%.64s\": time of day out of range", text);
    int64_t secs = days_from_civil(y, m, d) * 86400 + hh * 3600 + mm * 60 + ss - (int64_t)offset_min * 60;
    *unix_ms = secs * 1000 + ms;
    return 0;
}

int64_t ocisbx_time_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t ocisbx_time_monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
