/* Path globs, as the harness's policy file and the backends' glob and search
 * tools use them (one matcher for all of them):
 *
 *   *       any run of characters other than '/'
 *   ?       one character other than '/'
 *   [a-z]   one character of the class ('!' or '^' first negates it); never '/'
 *   **      as a whole component (alone, or between slashes, or at either end
 *           next to a slash): zero or more whole components; so the pattern
 *           /workspace/.git/ followed by ** matches /workspace/.git itself and
 *           everything below it
 *   \c      the character c itself
 *
 * Elsewhere "**" is the same as "*". Bytes are compared as they are (no case
 * folding, no locale), so any byte string works as a name. The work is
 * bounded (each pattern/text position pair is tried once), whatever the
 * pattern. */
#ifndef OCISBX_UTIL_GLOB_H
#define OCISBX_UTIL_GLOB_H

#include <stddef.h>

/* The longest pattern and text the matcher takes (OCISBX_ETOOLARGE above). */
#define OCISBX_GLOB_MAX 4096

/* 1 when text matches pattern, 0 when not, or a negative OCISBX_E* code
 * (OCISBX_ETOOLARGE, OCISBX_ENOMEM) with the thread's error set. */
int ocisbx_glob_match(const char *pattern, const char *text);

#endif
