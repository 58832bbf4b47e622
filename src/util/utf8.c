/* UTF-8 validation, sanitising and cutting (see utf8.h). */
#include "util/utf8.h"

#include <stdint.h>

size_t ocisbx_utf8_seq_len(const unsigned char *p, size_t avail)
{
    if (!avail)
        return 0;
    unsigned char c = p[0];
    if (c < 0x80)
        return 1;
    size_t n;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) {
        n = 2;
        cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
        n = 3;
        cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (n > avail)
        return 0;
    for (size_t k = 1; k < n; k++) {
        if ((p[k] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[k] & 0x3F);
    }
    static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

bool ocisbx_utf8_valid(const char *data, size_t len)
{
    const unsigned char *p = (const unsigned char *)data;
    for (size_t i = 0; i < len;) {
        if (p[i] < 0x80) {
            i++;
            continue;
        }
        size_t n = ocisbx_utf8_seq_len(p + i, len - i);
        if (!n)
            return false;
        i += n;
    }
    return true;
}

bool ocisbx_utf8_valid_sample(const char *data, size_t len)
{
    /* valid up to the last lead byte, and what follows it is the start of a
     * sequence (continuation bytes only, fewer than it needs) */
    size_t cut = ocisbx_utf8_cut_back(data, len);
    if (!ocisbx_utf8_valid(data, cut))
        return false;
    for (size_t i = cut + 1; i < len; i++)
        if (((unsigned char)data[i] & 0xC0) != 0x80)
            return false;
    if (cut < len) {
        unsigned char c = (unsigned char)data[cut];
        size_t need = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
        if (!need || c == 0xC0 || c == 0xC1 || c > 0xF4)
            return false;
        if (len - cut > 1) {
            unsigned char c1 = (unsigned char)data[cut + 1];
            if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 > 0x9F) || (c == 0xF0 && c1 < 0x90) ||
                (c == 0xF4 && c1 > 0x8F))
                return false;
        }
    }
    return true;
}

int ocisbx_utf8_sanitize(const char *data, size_t len, ocisbx_buf *out)
{
    const unsigned char *p = (const unsigned char *)data;
    size_t i = 0, run = 0; /* run: start of the pending valid bytes */
    while (i < len) {
        size_t n = p[i] < 0x80 ? 1 : ocisbx_utf8_seq_len(p + i, len - i);
        if (n) {
            i += n;
            continue;
        }
        if (ocisbx_buf_append(out, p + run, i - run) || ocisbx_buf_append(out, "\xEF\xBF\xBD", 3))
            return OCISBX_ENOMEM;
        run = ++i;
    }
    return ocisbx_buf_append(out, p + run, len - run) ? OCISBX_ENOMEM : 0;
}

/* true when data[i] is a continuation byte (10xxxxxx). */
static bool cont(const char *data, size_t i)
{
    return ((unsigned char)data[i] & 0xC0) == 0x80;
}

size_t ocisbx_utf8_cut_back(const char *data, size_t len)
{
    /* step back over at most 3 continuation bytes to the lead byte; keep the
     * character only when it is complete within len */
    size_t i = len;
    for (int k = 0; k < 3 && i > 0 && cont(data, i - 1); k++)
        i--;
    if (i == 0)
        return len; /* no lead byte: not UTF-8 here, cut where asked */
    size_t lead = i - 1;
    const unsigned char c = (unsigned char)data[lead];
    size_t need = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
    if (i == len && need == 1)
        return len;
    return lead + need <= len ? len : lead;
}

size_t ocisbx_utf8_cut_forward(const char *data, size_t len, size_t start)
{
    size_t i = start;
    for (int k = 0; k < 3 && i < len && cont(data, i); k++)
        i++;
    return i;
}
