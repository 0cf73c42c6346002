/* manager/drivers/housekeeping_int.h -- Shared internals of the housekeeping
 * driver (housekeeping*.c only; the interface is housekeeping.h). */

#ifndef VPOWER_HOUSEKEEPING_INT_H
#define VPOWER_HOUSEKEEPING_INT_H 1

#include "manager/drivers/housekeeping.h"

/* The v1 pressure is the groups' waiting over the last 10 s, as the
 * kernel's "some avg10" is on v2; the ring holds enough readings for
 * periods down to 10 s / HK_V1_RING. */
#define HK_V1_WINDOW_NS 10000000000ull
#define HK_V1_RING 32

struct hk {
    char *cgroup_root, *proc_root, *wq_path, *run_root;
    char *groups[HK_MAX_GROUPS];
    size_t n_groups;
    bool do_cpusets, do_irqs, do_wq, dry_run;
    enum hk_mode mode;

    const struct hk_ops *ops;
    void *ops_aux;
    struct hk_sdbus *own_bus;   /* Owned when ops was NULL. */

    hk_record_cb *rec_cb;
    void *rec_aux;
    struct hk_record *recs;     /* Originals, oldest first. */
    size_t n_recs, cap_recs;

    unsigned *refused;          /* IRQs the kernel refused to move. */
    size_t n_refused, cap_refused;
    struct cpuset hinted;       /* Set last named in the irqbalance hint. */

    /* cgroup v1 pressure (hk_cpu_pressure): the groups' summed
     * run_delay at the last call, a counter that only grows by the
     * non-negative steps of that sum (threads that exit lower it), and
     * a ring of (counter, monotonic time) readings, newest at v1_head,
     * from which the rate over the last HK_V1_WINDOW_NS is taken. */
    uint64_t v1_delay_ns, v1_waited_ns;
    struct hk_v1_reading {
        uint64_t waited_ns, wall_ns;
    } v1_ring[HK_V1_RING];
    unsigned v1_head, v1_n;

    char err[512];
};

void hk_seterr(struct hk *, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
bool hk_exists(const char *path, bool dir);
bool hk_has_token(const char *list, const char *tok);
int hk_parse_uint(const char *s, uint32_t *out);
int hk_read_list(struct hk *, const char *path, char *raw, size_t len,
                 struct cpuset *set);
void hk_confine(struct cpuset *out, const struct cpuset *orig,
                const struct cpuset *set, const struct cpuset *fallback);

/* Records 'orig' for (kind, key) unless already recorded: through the
 * recorder first, an error means "do not write". */
int hk_note(struct hk *, enum hk_rec_kind, const char *key,
            const char *orig);
const struct hk_record *hk_find(const struct hk *, enum hk_rec_kind,
                                const char *key);
/* Writes 'orig' back unless the file holds it; 1 if the file is gone. */
int hk_put_back(struct hk *, const char *path, const char *orig);

/* The parts (housekeeping_cg.c, housekeeping_irq.c). */
int hk_apply_cpusets(struct hk *, const struct cpuset *,
                     struct hk_report *);
int hk_restore_cgroups(struct hk *, const struct hk_record *, size_t n,
                       unsigned *n_failed);
int hk_apply_irqs(struct hk *, const struct cpuset *, struct hk_report *);

/* A whole file of any size through ops->read (up to 64 MiB); '*out' is
 * the caller's to free.  Returns the length. */
int hk_read_alloc(struct hk *, const char *path, char **out);
/* The CPUs /proc/interrupts has columns for (housekeeping_stats.c). */
int hk_irq_cpus(struct hk *, struct cpuset *);
/* The description /proc/interrupts gives IRQ 'irq' ("?" if none). */
void hk_irq_name(struct hk *, unsigned irq, char *buf, size_t len);

#endif /* manager/drivers/housekeeping_int.h */
