/* Path glob matching with "**" (see glob.h). A memo of the (pattern, text)
 * positions already found not to match keeps the work at most
 * pattern length x text length steps, whatever the stars. */
#include "util/glob.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/internal.h"

typedef struct matcher {
    const char *p, *t;
    size_t pl, tl;
    uint8_t *failed; /* bit (pi * (tl + 1) + ti): known not to match */
    bool nomem;
} matcher;

static bool known_failed(matcher *m, size_t pi, size_t ti)
{
    size_t bit = pi * (m->tl + 1) + ti;
    return m->failed && (m->failed[bit / 8] >> (bit % 8) & 1);
}

static void mark_failed(matcher *m, size_t pi, size_t ti)
{
    if (!m->failed) {
        size_t bits = (m->pl + 1) * (m->tl + 1);
        m->failed = calloc(bits / 8 + 1, 1);
        if (!m->failed) {
            m->nomem = true;
            return;
        }
    }
    size_t bit = pi * (m->tl + 1) + ti;
    m->failed[bit / 8] |= (uint8_t)(1u << (bit % 8));
}

/* A class at p[pi] == '['. *end gets the index after ']'; false when the
 * class is not closed (the '[' is then a literal). */
static bool class_matches(const matcher *m, size_t pi, unsigned char c, size_t *end, bool *hit)
{
    size_t i = pi + 1;
    bool negate = false;
    if (i < m->pl && (m->p[i] == '!' || m->p[i] == '^')) {
        negate = true;
        i++;
    }
    bool found = false, first = true;
    while (i < m->pl && (m->p[i] != ']' || first)) {
        first = false;
        unsigned char lo = (unsigned char)m->p[i];
        if (lo == '\\' && i + 1 < m->pl)
            lo = (unsigned char)m->p[++i];
        unsigned char hi = lo;
        if (i + 2 < m->pl && m->p[i + 1] == '-' && m->p[i + 2] != ']') {
            hi = (unsigned char)m->p[i + 2];
            if (hi == '\\' && i + 3 < m->pl) {
                hi = (unsigned char)m->p[i + 3];
                i++;
            }
            i += 2;
        }
        if (c >= lo && c <= hi)
            found = true;
        i++;
    }
    if (i >= m->pl)
        return false;
    *end = i + 1;
    *hit = found != negate;
    return true;
}

/* "**" at pi forms a whole component. */
static bool globstar_at(const matcher *m, size_t pi)
{
    return pi + 1 < m->pl && m->p[pi] == '*' && m->p[pi + 1] == '*' && (pi == 0 || m->p[pi - 1] == '/') &&
           (pi + 2 == m->pl || m->p[pi + 2] == '/');
}

static bool match(matcher *m, size_t pi, size_t ti)
{
    if (m->nomem || known_failed(m, pi, ti))
        return false;
    const size_t start_pi = pi, start_ti = ti;
    while (pi < m->pl) {
        char c = m->p[pi];
        if (c == '*') {
            if (globstar_at(m, pi)) {
                if (pi + 2 == m->pl)
                    return true; /* the rest, whatever it is */
                /* "**" + "/" then the rest: at ti, or after any later '/' */
                for (size_t t = ti;;) {
                    if (match(m, pi + 3, t))
                        return true;
                    const char *s = memchr(m->t + t, '/', m->tl - t);
                    if (!s)
                        break;
                    t = (size_t)(s - m->t) + 1;
                }
                break;
            }
            size_t next = pi + 1;
            while (next < m->pl && m->p[next] == '*')
                next++;
            for (size_t t = ti;; t++) {
                if (match(m, next, t))
                    return true;
                if (t == m->tl || m->t[t] == '/')
                    break;
            }
            break;
        }
        if (c == '/' && ti == m->tl && globstar_at(m, pi + 1) && pi + 3 == m->pl)
            return true; /* "a/" + "**" matches "a" */
        if (ti == m->tl)
            break;
        unsigned char tc = (unsigned char)m->t[ti];
        if (c == '?') {
            if (tc == '/')
                break;
            pi++;
            ti++;
            continue;
        }
        if (c == '[') {
            size_t end;
            bool hit;
            if (class_matches(m, pi, tc, &end, &hit)) {
                if (!hit || tc == '/')
                    break;
                pi = end;
                ti++;
                continue;
            }
        }
        if (c == '\\' && pi + 1 < m->pl)
            c = m->p[++pi];
        if ((unsigned char)c != tc)
            break;
        pi++;
        ti++;
    }
    if (pi == m->pl && ti == m->tl)
        return true;
    mark_failed(m, start_pi, start_ti);
    return false;
}

int ocisbx_glob_match(const char *pattern, const char *text)
{
    if (!pattern || !text)
        return ocisbx_fail(OCISBX_EINVAL, "glob: NULL argument");
    matcher m = {pattern, text, strlen(pattern), strlen(text), NULL, false};
    if (m.pl > OCISBX_GLOB_MAX || m.tl > OCISBX_GLOB_MAX)
        return ocisbx_fail(OCISBX_ETOOLARGE, "glob: pattern or path longer than %d bytes", OCISBX_GLOB_MAX);
    bool hit = match(&m, 0, 0);
    free(m.failed);
    if (m.nomem)
        return ocisbx_fail_nomem();
    return hit ? 1 : 0;
}
