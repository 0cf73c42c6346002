/* manager/inputs/freqsrc.c -- Frequency that ran, from APERF/MPERF, cpufreq or
 * nothing.
 *
 * The daemon reads every managed CPU once per cycle and hands the result
 * to pol_load_update().  MSR file descriptors stay open for the life of
 * the source (one open per CPU, not per cycle); sysfs files are reopened
 * each read because they are cheap and survive CPU hotplug. */

#include <config.h>

#include "manager/inputs/freqsrc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "manager/drivers/sysfs.h"
#include "manager/util.h"

#define LOG_MODULE "freqsrc"
#include "manager/log.h"

struct freqsrc_cpu {
    int msr_fd;
    bool primed;
    uint64_t aperf, mperf;
};

struct freqsrc {
    enum freqsrc_kind kind;
    char *cpu_root, *msr_root;
    unsigned n_cpus;
    uint32_t base_khz;
    struct freqsrc_cpu *cpus;
};

static int
read_u32_file(const char *path, uint32_t *out)
{
    char buf[32];
    int r = sysfs_read_file(path, buf, sizeof buf);

    return r < 0 ? r : sysfs_parse_u32(buf, out);
}

static int
read_msr(int fd, uint32_t msr, uint64_t *v)
{
    ssize_t n = pread(fd, v, sizeof *v, (off_t) msr);
    if (n != (ssize_t) sizeof *v) {
        return n < 0 ? -errno : -EIO;
    }
    return 0;
}

static int
open_msr(const struct freqsrc *s, unsigned cpu)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%u/msr", s->msr_root, cpu);
    return open(path, O_RDONLY | O_CLOEXEC);
}

static uint32_t
find_base_khz(const char *cpu_root)
{
    static const char *const names[] = {
        "cpufreq/base_frequency", "cpufreq/cpuinfo_max_freq",
    };
    for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
        char path[512];
        uint32_t v;
        snprintf(path, sizeof path, "%s/cpu0/%s", cpu_root, names[i]);
        if (read_u32_file(path, &v) == 0 && v > 0) {
            return v;
        }
    }
    return 0;
}

struct freqsrc *
freqsrc_open(const char *cpu_root, const char *msr_root, unsigned n_cpus,
             uint32_t base_khz)
{
    struct freqsrc *s = XNEW(struct freqsrc);
    s->cpu_root = xstrdup(cpu_root ? cpu_root : "/sys/devices/system/cpu");
    s->msr_root = xstrdup(msr_root ? msr_root : "/dev/cpu");
    s->n_cpus = n_cpus;
    s->cpus = XNEWARRAY(struct freqsrc_cpu, n_cpus ? n_cpus : 1);
    for (unsigned i = 0; i < n_cpus; i++) {
        s->cpus[i].msr_fd = -1;
    }
    s->base_khz = base_khz ? base_khz : find_base_khz(s->cpu_root);

    int fd = n_cpus ? open_msr(s, 0) : -1;
    uint64_t a, m;
    if (fd >= 0 && s->base_khz
        && read_msr(fd, FREQSRC_MSR_APERF, &a) == 0
        && read_msr(fd, FREQSRC_MSR_MPERF, &m) == 0) {
        s->kind = FREQSRC_APERF_MPERF;
        s->cpus[0].msr_fd = fd;
        return s;
    }
    if (fd >= 0) {
        close(fd);
    }
    char path[512];
    uint32_t khz;
    snprintf(path, sizeof path, "%s/cpu0/cpufreq/scaling_cur_freq",
             s->cpu_root);
    s->kind = read_u32_file(path, &khz) == 0 ? FREQSRC_CPUFREQ
                                              : FREQSRC_NOMINAL;
    return s;
}

void
freqsrc_close(struct freqsrc *s)
{
    if (!s) {
        return;
    }
    for (unsigned i = 0; i < s->n_cpus; i++) {
        if (s->cpus[i].msr_fd >= 0) {
            close(s->cpus[i].msr_fd);
        }
    }
    free(s->cpus);
    free(s->cpu_root);
    free(s->msr_root);
    free(s);
}

enum freqsrc_kind
freqsrc_kind_of(const struct freqsrc *s)
{
    return s->kind;
}

const char *
freqsrc_name(const struct freqsrc *s)
{
    switch (s->kind) {
    case FREQSRC_APERF_MPERF:
        return "aperf-mperf";
    case FREQSRC_CPUFREQ:
        return "cpufreq";
    case FREQSRC_NOMINAL:
    default:
        return "nominal";
    }
}

int
freqsrc_ratio_khz(uint64_t d_aperf, uint64_t d_mperf, uint32_t base_khz,
                  uint32_t *khz)
{
    *khz = 0;
    if (d_mperf == 0) {
        return 0;
    }
    /* 128-bit product: deltas over a long interval times kHz overflow
     * 64 bits. */
    unsigned __int128 q = (unsigned __int128) d_aperf * base_khz / d_mperf;
    if (d_aperf / 8 > d_mperf || q > UINT32_MAX) {
        return -ERANGE;
    }
    *khz = (uint32_t) q;
    return 0;
}

int
freqsrc_read(struct freqsrc *s, unsigned cpu, uint32_t *khz)
{
    *khz = 0;
    if (cpu >= s->n_cpus) {
        return -EINVAL;
    }
    if (s->kind == FREQSRC_NOMINAL) {
        return 0;
    }
    if (s->kind == FREQSRC_CPUFREQ) {
        char path[512];
        snprintf(path, sizeof path, "%s/cpu%u/cpufreq/scaling_cur_freq",
                 s->cpu_root, cpu);
        int r = read_u32_file(path, khz);
        if (r < 0) {
            *khz = 0;
        }
        return r == -ENOENT ? -ENOTSUP : r;
    }
    struct freqsrc_cpu *c = &s->cpus[cpu];
    if (c->msr_fd < 0) {
        c->msr_fd = open_msr(s, cpu);
        if (c->msr_fd < 0) {
            return -errno;
        }
    }
    uint64_t a, m;
    int r = read_msr(c->msr_fd, FREQSRC_MSR_APERF, &a);
    if (r == 0) {
        r = read_msr(c->msr_fd, FREQSRC_MSR_MPERF, &m);
    }
    if (r < 0) {
        /* Offlined CPU: its device returns EIO; reopen next time. */
        close(c->msr_fd);
        c->msr_fd = -1;
        c->primed = false;
        return r;
    }
    bool primed = c->primed;
    uint64_t da = a - c->aperf, dm = m - c->mperf;  /* Wraps are fine. */
    c->aperf = a;
    c->mperf = m;
    c->primed = true;
    if (!primed) {
        return 0;
    }
    r = freqsrc_ratio_khz(da, dm, s->base_khz, khz);
    if (r < 0) {
        LOG_WARN_RL("cpu%u: APERF/MPERF deltas %llu/%llu implausible",
                    cpu, (unsigned long long) da, (unsigned long long) dm);
    }
    return r;
}
