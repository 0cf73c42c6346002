/* policy/cpuset.c -- Fixed-size CPU bitmaps and Linux cpulist text.
 *
 * Every other policy module describes sets of host CPUs with these
 * values; the manager reads sysfs cpulists and libvirt pinning through
 * cpuset_parse() and prints them with cpuset_format().  Parsing is
 * strict because the text comes from files and users. */

#include "policy/cpuset.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Bits set in 'x' (SWAR: the target may lack a popcount instruction). */
static unsigned
popcount64(uint64_t x)
{
    x = x - ((x >> 1) & UINT64_C(0x5555555555555555));
    x = (x & UINT64_C(0x3333333333333333))
        + ((x >> 2) & UINT64_C(0x3333333333333333));
    x = (x + (x >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
    return (unsigned) ((x * UINT64_C(0x0101010101010101)) >> 56);
}

unsigned
cpuset_count(const struct cpuset *s)
{
    unsigned n = 0;

    for (size_t i = 0; i < CPUSET_WORDS; i++) {
        if (s->w[i]) {
            n += popcount64(s->w[i]);
        }
    }
    return n;
}

/* Reads a decimal CPU number at '*p'; at most 7 digits so it cannot
 * overflow.  Returns 0 and advances '*p', or -EINVAL. */
static int
parse_cpu(const char **p, unsigned *out)
{
    const char *s = *p;
    unsigned v = 0;
    int n = 0;

    while (*s >= '0' && *s <= '9') {
        if (++n > 7) {
            return -EINVAL;
        }
        v = v * 10 + (unsigned) (*s++ - '0');
    }
    if (!n || v >= POL_MAX_CPUS) {
        return -EINVAL;
    }
    *p = s;
    *out = v;
    return 0;
}

int
cpuset_parse(struct cpuset *set, const char *list)
{
    struct cpuset tmp;
    const char *p = list;

    cpuset_zero(&tmp);
    if (!p) {
        return -EINVAL;
    }
    /* The empty list (possibly just a newline) is the empty set, as in
     * sysfs files such as 'offline'. */
    while (*p && *p != ' ' && *p != '\t' && *p != '\n') {
        unsigned lo, hi;

        if (parse_cpu(&p, &lo)) {
            return -EINVAL;
        }
        hi = lo;
        if (*p == '-') {
            p++;
            if (parse_cpu(&p, &hi) || hi < lo) {
                return -EINVAL;
            }
        }
        for (unsigned c = lo; c <= hi; c++) {
            cpuset_set(&tmp, c);
        }
        if (*p == ',') {
            p++;
            if (!(*p >= '0' && *p <= '9')) {
                return -EINVAL;
            }
        } else if (*p && *p != ' ' && *p != '\t' && *p != '\n') {
            return -EINVAL;
        }
    }
    while (*p == ' ' || *p == '\t' || *p == '\n') {
        p++;
    }
    if (*p) {
        return -EINVAL;
    }
    *set = tmp;
    return 0;
}

int
cpuset_format(const struct cpuset *set, char *buf, size_t len)
{
    size_t need = 0;
    int cpu = cpuset_next(set, 0);

    if (len) {
        buf[0] = '\0';
    }
    while (cpu >= 0) {
        int end = cpu;
        char tmp[24];
        int n;

        while (end + 1 < POL_MAX_CPUS && cpuset_has(set, (unsigned) end + 1)) {
            end++;
        }
        if (end == cpu) {
            n = snprintf(tmp, sizeof tmp, "%s%d", need ? "," : "", cpu);
        } else {
            n = snprintf(tmp, sizeof tmp, "%s%d-%d", need ? "," : "", cpu,
                         end);
        }
        if (need + (size_t) n < len) {
            memcpy(buf + need, tmp, (size_t) n + 1);
        } else if (len) {
            /* Keep what fits; the result stays NUL-terminated. */
            size_t room = len - 1 - (need < len - 1 ? need : len - 1);
            memcpy(buf + (need < len - 1 ? need : len - 1), tmp, room);
            buf[len - 1] = '\0';
        }
        need += (size_t) n;
        cpu = end + 1 < POL_MAX_CPUS ? cpuset_next(set, (unsigned) end + 1)
                                     : -1;
    }
    return (int) need;
}

const char *
cpuset_label(const struct cpuset *set, char *buf, size_t len)
{
    cpuset_format(set, buf, len);
    if (len && !buf[0]) {
        snprintf(buf, len, "-");
    }
    return buf;
}
