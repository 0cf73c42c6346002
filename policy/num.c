/* policy/num.c -- The one decimal parser of vpower; see num.h. */

#include <config.h>

#include "policy/num.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

/* Digits from 's' up to the first non-digit; '*end' points there. */
static int
parse_digits(const char *s, uint64_t max, uint64_t *out, const char **end)
{
    uint64_t v = 0;
    bool big = false;
    const char *p = s;

    if (!s || *s < '0' || *s > '9') {
        return -EINVAL;
    }
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned) (*p - '0');

        if (d > max || v > (max - d) / 10) {
            big = true;         /* Keep scanning: text after is -EINVAL. */
        } else if (!big) {
            v = v * 10 + d;
        }
    }
    *end = p;
    if (big) {
        return -ERANGE;
    }
    *out = v;
    return 0;
}

int
num_parse_u64(const char *s, uint64_t max, uint64_t *out)
{
    const char *end;
    uint64_t v;
    int r = parse_digits(s, max, &v, &end);

    if (r == -EINVAL || *end) {
        return -EINVAL;
    }
    if (r == 0) {
        *out = v;
    }
    return r;
}

int
num_parse_line(const char *s, uint64_t max, uint64_t *out)
{
    const char *end;
    uint64_t v;
    int r = parse_digits(s, max, &v, &end);

    if (r == -EINVAL) {
        return r;
    }
    while (*end == ' ' || *end == '\n') {
        end++;
    }
    if (*end) {
        return -EINVAL;
    }
    if (r == 0) {
        *out = v;
    }
    return r;
}
