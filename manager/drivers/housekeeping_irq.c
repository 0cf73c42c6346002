/* manager/drivers/housekeeping_irq.c -- Device interrupts of the housekeeping
 * driver.
 *
 * Interrupts are moved by writing /proc/irq/N/smp_affinity_list.  The
 * kernel refuses interrupts it manages itself (per-queue interrupts of
 * multi-queue devices, the timer) with EIO, or with EPERM on kernels
 * whose MSI domain will not retarget them (seen for a virtio-blk queue
 * on 6.18, written by root): those stay where they are, are logged once
 * with their /proc/interrupts name and are not tried again.
 *
 * irqbalance rewrites affinities every few seconds, so moving interrupts
 * under it is a fight.  Its socket can ban CPUs ("settings cpus LIST"),
 * but only for root peers, only until irqbalance restarts (then it
 * spreads interrupts over the freed CPUs again without vpowerd knowing)
 * and without a way to read back the operator's own ban (its "setup"
 * reply merges the environment, isolcpus and the socket's ban), so no
 * original could be restored exactly.  So while an irqbalance process
 * runs, interrupts are left alone and the operator is told the
 * IRQBALANCE_BANNED_CPULIST that keeps them on the housekeeping CPUs. */

#include <config.h>

#include "manager/drivers/housekeeping_int.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/log.h"
#include "manager/util.h"

#define LOG_MODULE "hk"

#define HK_READ_START (64 * 1024)
#define HK_READ_MAX (64 * 1024 * 1024)

int
hk_read_alloc(struct hk *hk, const char *path, char **out)
{
    for (size_t len = HK_READ_START;; len *= 4) {
        char *buf = xmalloc(len);
        int n = hk->ops->read(hk->ops_aux, path, buf, len);

        if (n >= 0) {
            *out = buf;
            return n;
        }
        free(buf);
        if (n != -EOVERFLOW || len >= HK_READ_MAX) {
            return n;
        }
    }
}

static bool
all_digits(const char *s)
{
    if (!*s) {
        return false;
    }
    for (; *s; s++) {
        if (!isdigit((unsigned char) *s)) {
            return false;
        }
    }
    return true;
}

/* The PID of a process named irqbalance, or 0. */
static int
find_irqbalance(struct hk *hk)
{
    char path[HK_PATH_MAX], comm[64];
    struct dirent *de;
    DIR *d = opendir(hk->proc_root);
    int pid = 0;

    if (!d) {
        return 0;
    }
    while (!pid && (de = readdir(d))) {
        uint32_t v;

        if (!all_digits(de->d_name) || hk_parse_uint(de->d_name, &v)) {
            continue;
        }
        snprintf(path, sizeof path, "%s/%s/comm", hk->proc_root,
                 de->d_name);
        if (hk->ops->read(hk->ops_aux, path, comm, sizeof comm) >= 0
            && !strcmp(comm, "irqbalance")) {
            pid = (int) v;
        }
    }
    closedir(d);
    return pid;
}

static bool
is_refused(const struct hk *hk, unsigned irq)
{
    for (size_t i = 0; i < hk->n_refused; i++) {
        if (hk->refused[i] == irq) {
            return true;
        }
    }
    return false;
}

static void
note_refused(struct hk *hk, unsigned irq, struct hk_report *rep)
{
    if (rep) {
        if (rep->n_irqs_refused < HK_REPORT_IRQS) {
            rep->refused[rep->n_irqs_refused] = irq;
        }
        rep->n_irqs_refused++;
    }
    if (is_refused(hk, irq)) {
        return;
    }
    if (hk->n_refused == hk->cap_refused) {
        hk->cap_refused = hk->cap_refused ? hk->cap_refused * 2 : 16;
        hk->refused = xrealloc(hk->refused,
                               hk->cap_refused * sizeof *hk->refused);
    }
    hk->refused[hk->n_refused++] = irq;
}

static void
hint_irqbalance(struct hk *hk, int pid, const struct cpuset *set)
{
    char keep[HK_VALUE_LEN * 4], ban[HK_VALUE_LEN * 4] = "";
    struct cpuset all, banned;

    if (cpuset_equal(&hk->hinted, set)) {
        return;
    }
    hk->hinted = *set;
    cpuset_format(set, keep, sizeof keep);
    /* The CPUs /proc/interrupts lists are the ones to ban outside the
     * set. */
    if (hk_irq_cpus(hk, &all) < 0) {
        cpuset_zero(&all);
    }
    cpuset_andnot(&banned, &all, set);
    cpuset_format(&banned, ban, sizeof ban);
    LOG_WARN("irqbalance runs (pid %d): interrupts are left where it puts "
             "them, moving them would be undone.  To keep them on the "
             "housekeeping CPUs %s, set IRQBALANCE_BANNED_CPULIST=%s in "
             "its environment file (/etc/default/irqbalance or "
             "/etc/sysconfig/irqbalance) and restart it, or stop it",
             pid, keep, *ban ? ban : "<every CPU outside the set>");
}

/* Moves one IRQ; 1 if it was moved (or would be). */
static int
move_irq(struct hk *hk, const char *num, const struct cpuset *set,
         struct hk_report *rep)
{
    char path[HK_PATH_MAX], raw[HK_VALUE_LEN * 4], to[HK_VALUE_LEN * 4];
    char name[128];
    const struct hk_record *r = hk_find(hk, HK_REC_IRQ, num);
    struct cpuset now, orig, target;
    int error;

    snprintf(path, sizeof path, "%s/irq/%s/smp_affinity_list",
             hk->proc_root, num);
    error = hk_read_list(hk, path, raw, sizeof raw, &now);
    if (error == -ENOENT) {
        return 0;
    }
    if (error) {
        if (error != -EINVAL) {
            hk_seterr(hk, "%s: %s", path, strerror(-error));
        }
        return error;
    }
    orig = now;
    if (r && cpuset_parse(&orig, r->value)) {
        hk_seterr(hk, "%s: bad recorded CPU list '%s'", path, r->value);
        return -EINVAL;
    }
    hk_confine(&target, &orig, set, set);
    if (cpuset_equal(&target, &now)) {
        return 0;
    }
    cpuset_format(&target, to, sizeof to);
    LOG_DEBUG("%sIRQ %s %s -> %s", hk->dry_run ? "would move " : "", num,
              raw, to);
    if (hk->dry_run) {
        return 1;
    }
    error = hk_note(hk, HK_REC_IRQ, num, raw);
    if (error) {
        return error;
    }
    error = hk->ops->write(hk->ops_aux, path, to);
    if (error == -EIO || error == -EPERM) {
        uint32_t irq;

        hk_parse_uint(num, &irq);
        hk_irq_name(hk, irq, name, sizeof name);
        LOG_INFO("IRQ %s (%s) is managed by the kernel, which refuses to "
                 "move it: left on CPUs %s", num, name, raw);
        note_refused(hk, irq, rep);
        return 0;
    }
    if (error) {
        hk_seterr(hk, "%s <- %s: %s", path, to, strerror(-error));
        return error;
    }
    return 1;
}

int
hk_apply_irqs(struct hk *hk, const struct cpuset *set,
              struct hk_report *rep)
{
    char path[HK_PATH_MAX];
    struct dirent *de;
    int pid = find_irqbalance(hk), first = 0;
    DIR *d;

    if (pid > 0) {
        if (rep) {
            rep->irqbalance_pid = pid;
        }
        hint_irqbalance(hk, pid, set);
        return 0;
    }
    snprintf(path, sizeof path, "%s/irq", hk->proc_root);
    d = opendir(path);
    if (!d) {
        hk_seterr(hk, "%s: %s", path, strerror(errno));
        return -errno;
    }
    while ((de = readdir(d))) {
        uint32_t irq;
        int moved;

        if (!all_digits(de->d_name) || hk_parse_uint(de->d_name, &irq)) {
            continue;
        }
        if (is_refused(hk, irq)) {
            note_refused(hk, irq, rep);
            continue;
        }
        moved = move_irq(hk, de->d_name, set, rep);
        if (moved < 0) {
            first = first ? first : moved;
        } else if (moved && rep) {
            rep->n_irqs++;
        }
    }
    closedir(d);
    if (rep && (rep->n_irqs || rep->n_irqs_refused)) {
        LOG_INFO("%s%u interrupts to the housekeeping CPUs, %u refused by "
                 "the kernel", hk->dry_run ? "would move " : "moved ",
                 rep->n_irqs, rep->n_irqs_refused);
    }
    return first;
}
