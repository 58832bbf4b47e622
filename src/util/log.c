/* Logging to a caller's callback, with secrets redacted from every line. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "util/internal.h"

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static ocisbx_log_fn log_fn;
static void *log_ud;
static int log_max = -1;

void ocisbx_set_log(ocisbx_log_fn fn, int max_level, void *user_data)
{
    pthread_mutex_lock(&log_lock);
    log_fn = fn;
    log_ud = user_data;
    log_max = fn ? max_level : -1;
    pthread_mutex_unlock(&log_lock);
}

bool ocisbx_log_enabled(int level)
{
    pthread_mutex_lock(&log_lock);
    bool on = log_fn != NULL && level <= log_max;
    pthread_mutex_unlock(&log_lock);
    return on;
}

/* Overwrites s[from, end-of-value) with "<redacted>" when it fits, else '*'. */
static void redact_span(char *s, size_t from, size_t to)
{
    static const char mark[] = "<redacted>";
    size_t n = to - from;
    if (n >= sizeof mark - 1) {
        memcpy(s + from, mark, sizeof mark - 1);
        memmove(s + from + sizeof mark - 1, s + to, strlen(s + to) + 1);
    } else {
        memset(s + from, '*', n);
    }
}

static bool is_token_char(char c)
{
    return c && c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '"' && c != ',' && c != '\'';
}

void ocisbx_log_redact(char *line)
{
    static const char *const header_names[] = {"authorization:", "x-app-token:"};
    for (size_t h = 0; h < sizeof header_names / sizeof header_names[0]; h++) {
        size_t hn = strlen(header_names[h]);
        for (size_t i = 0; line[i]; i++) {
            if (ocisbx_strncasecmp(line + i, header_names[h], hn) != 0)
                continue;
            size_t from = i + hn;
            while (line[from] == ' ' || line[from] == '=' || line[from] == ':')
                from++;
            size_t to = from;
            while (line[to] && line[to] != '\n' && line[to] != '\r')
                to++;
            if (to > from)
                redact_span(line, from, to);
            i = from;
            if (!line[i])
                break;
        }
    }
    /* Session tokens used as keyIds. */
    for (char *p = strstr(line, "ST$"); p; p = strstr(p + 3, "ST$")) {
        size_t from = (size_t)(p - line) + 3, to = from;
        while (is_token_char(line[to]))
            to++;
        if (to > from)
            redact_span(line, from, to);
    }
    /* A Signature header's parameters, wherever they appear. */
    for (char *p = strstr(line, "signature=\""); p; p = strstr(p + 11, "signature=\"")) {
        size_t from = (size_t)(p - line) + 11, to = from;
        while (line[to] && line[to] != '"')
            to++;
        if (to > from)
            redact_span(line, from, to);
    }
}

/* The calling thread's own pass over its log lines (see internal.h). */
static _Thread_local ocisbx_log_filter_fn thread_filter;
static _Thread_local void *thread_filter_ud;

void ocisbx_log_set_thread_filter(ocisbx_log_filter_fn fn, void *user_data, ocisbx_log_filter_fn *prev,
                                  void **prev_ud)
{
    if (prev)
        *prev = thread_filter;
    if (prev_ud)
        *prev_ud = thread_filter_ud;
    thread_filter = fn;
    thread_filter_ud = user_data;
}

void ocisbx_log(int level, const char *fmt, ...)
{
    pthread_mutex_lock(&log_lock);
    ocisbx_log_fn fn = log_fn;
    void *ud = log_ud;
    int max = log_max;
    pthread_mutex_unlock(&log_lock);
    if (!fn || level > max)
        return;
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    ocisbx_log_redact(line);
    if (thread_filter)
        thread_filter(line, sizeof line, thread_filter_ud);
    fn(level, line, ud);
}
