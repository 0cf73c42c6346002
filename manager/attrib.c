/* manager/attrib.c -- Per-VM energy attribution (see attrib.h).
 *
 * Called once per decision interval by vpowerd's cycle with the vCPU
 * samples it has just taken; the exporter only reports the accumulated
 * result.  Two passes: busy energy by operating-point-weighted run time,
 * then static energy by held active cores.  The only allocations are
 * scratch arrays per call (each VM's held set, the union of its vCPUs'
 * allowed sets, and a hash table of the distinct ones), so the
 * held-core count costs a set union per vCPU and a walk over each
 * distinct held set's CPUs: VMs sharing a pool share the walk. */

#include <config.h>

#include "manager/attrib.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void
zero_out(const struct attrib_input *in, double *vm_joules,
         struct attrib_result *res)
{
    if (in && vm_joules) {
        for (size_t i = 0; i < in->n_vms; i++) {
            vm_joules[i] = 0;
        }
    }
    if (res) {
        memset(res, 0, sizeof *res);
    }
}

/* A set of the host's CPUs is kept as the first 'words' words of a
 * cpuset: the words that can hold CPUs below model->n_cpus. */
static unsigned
host_words(const struct pol_model *m)
{
    unsigned words = (m->n_cpus + 63) / 64;

    return words > CPUSET_WORDS ? CPUSET_WORDS : words;
}

/* Adds 'n' to holders[c] for each CPU c of the 'words' words 's'. */
static void
count_holders(const uint64_t *s, unsigned words, unsigned n,
              unsigned *holders)
{
    for (unsigned w = 0; w < words; w++) {
        for (uint64_t x = s[w]; x; x &= x - 1) {
            holders[w * 64 + (unsigned) __builtin_ctzll(x)] += n;
        }
    }
}

/* Sum over the CPUs c of 's' of per_cpu / holders[c]. */
static double
set_share(const uint64_t *s, unsigned words, const unsigned *holders,
          double per_cpu)
{
    double sh = 0;

    for (unsigned w = 0; w < words; w++) {
        for (uint64_t x = s[w]; x; x &= x - 1) {
            sh += per_cpu / holders[w * 64 + (unsigned) __builtin_ctzll(x)];
        }
    }
    return sh;
}

static uint64_t
set_hash(const uint64_t *s, unsigned words)
{
    uint64_t h = 0;

    for (unsigned w = 0; w < words; w++) {
        h = (h ^ s[w]) * UINT64_C(0x100000001b3);
    }
    return h ^ h >> 29;
}

static bool
words_equal(const uint64_t *a, const uint64_t *b, unsigned words)
{
    for (unsigned w = 0; w < words; w++) {
        if (a[w] != b[w]) {
            return false;
        }
    }
    return true;
}

/* Scratch of split_static() for 'n' VMs, allocated together. */
struct attrib_scratch {
    unsigned words;               /* Words per held set (host_words()). */
    uint64_t *held;               /* [n * words] held sets, VM by VM;
                                   * distinct ones first. */
    size_t *kind;                 /* [n] each VM's index into 'held'. */
    size_t *count;                /* [n] VMs per distinct set. */
    double *share;                /* [n] each distinct set's share. */
    size_t *slot;                 /* [n_slots] open-addressing table of
                                   * distinct sets, SIZE_MAX empty. */
    size_t n_slots;               /* A power of two > 2 n. */
};

/* The index in s->held of the distinct set equal to 'h' (hash 'hh'),
 * added as the 'n_kinds'-th if new. */
static size_t
find_kind(struct attrib_scratch *s, const uint64_t *h, uint64_t hh,
          size_t *n_kinds)
{
    unsigned words = s->words;
    size_t i = (size_t) hh & (s->n_slots - 1);

    while (s->slot[i] != SIZE_MAX) {
        size_t k = s->slot[i];

        if (words_equal(&s->held[k * words], h, words)) {
            return k;
        }
        i = (i + 1) & (s->n_slots - 1);
    }
    s->slot[i] = *n_kinds;
    memmove(&s->held[*n_kinds * words], h, words * sizeof *h);
    s->count[*n_kinds] = 0;
    return (*n_kinds)++;
}

/* Rule 2: adds each VM's share of 'r' joules by held active CPUs into
 * 'vm_joules'; returns the part left to _host.  A VM holds the union of
 * its vCPUs' allowed sets; VMs holding the same set (a shared pool) are
 * one kind, whose holder counts and share are computed once. */
static double
split_static(const struct attrib_input *in, double r, double *vm_joules,
             struct attrib_scratch *sc)
{
    struct cpuset all;
    const struct cpuset *active = in->active;
    unsigned n_active, n_cpus = in->model->n_cpus;
    unsigned words = sc->words;
    unsigned holders[POL_MAX_CPUS];     /* The first words * 64 used. */
    uint64_t *held = sc->held;
    double per_cpu, host = 0;
    size_t n_kinds = 0;

    /* CPUs 0 .. n_cpus - 1, all within the first 'words' words. */
    cpuset_zero(&all);
    for (unsigned w = 0; w < words; w++) {
        unsigned left = n_cpus - w * 64;

        all.w[w] = left >= 64 ? UINT64_MAX : (UINT64_C(1) << left) - 1;
    }
    if (!active) {
        active = &all;
    }
    n_active = cpuset_count(active);
    if (!n_active || !in->n_vms || r <= 0) {
        return r > 0 ? r : 0;
    }
    per_cpu = r / n_active;
    for (size_t i = 0; i < in->n_vcpus; i++) {
        const struct attrib_vcpu *v = &in->vcpus[i];
        const struct cpuset *a = v->allowed ? v->allowed : &all;

        for (unsigned w = 0; w < words; w++) {
            held[v->vm * words + w] |= a->w[w] & active->w[w];
        }
    }
    /* Distinct held sets move to the front of 'held' (a VM's own set is
     * read before any later kind can overwrite it; find_kind's copy
     * allows the overlap of a kind with itself). */
    for (size_t vm = 0; vm < in->n_vms; vm++) {
        const uint64_t *h = &held[vm * words];
        size_t k = find_kind(sc, h, set_hash(h, words), &n_kinds);

        sc->kind[vm] = k;
        sc->count[k]++;
    }
    memset(holders, 0, words * 64 * sizeof holders[0]);
    for (size_t k = 0; k < n_kinds; k++) {
        count_holders(&held[k * words], words, (unsigned) sc->count[k],
                      holders);
    }
    /* An active CPU beyond the host's words is held by no VM. */
    CPUSET_FOREACH(c, active) {
        if ((unsigned) c >= words * 64 || !holders[c]) {
            host += per_cpu;
        }
    }
    for (size_t k = 0; k < n_kinds; k++) {
        sc->share[k] = set_share(&held[k * words], words, holders, per_cpu);
    }
    for (size_t vm = 0; vm < in->n_vms; vm++) {
        vm_joules[vm] += sc->share[sc->kind[vm]];
    }
    return host;
}

/* The model's busy power of 'cpu' at the frequency its domain ran
 * (nominal where unknown), each domain's computed once per split in
 * 'dom_mw' (-1: not yet; the last slot is for CPUs of no domain). */
static double
busy_mw(const struct attrib_input *in, int cpu, double *dom_mw)
{
    const struct pol_model *m = in->model;
    unsigned slot = POL_MAX_DOMAINS;
    uint32_t f = 0;

    if (cpu >= 0 && (unsigned) cpu < m->n_cpus && cpu < POL_MAX_CPUS
        && m->cpu_domain[cpu] < POL_MAX_DOMAINS) {
        slot = m->cpu_domain[cpu];
        if (in->dom_freq_khz) {
            f = in->dom_freq_khz[slot];
        }
    }
    if (dom_mw[slot] < 0) {
        dom_mw[slot] = pol_model_busy_mw(m, slot < POL_MAX_DOMAINS
                                               ? cpu : -1, f);
    }
    return dom_mw[slot];
}

static void
scratch_free(struct attrib_scratch *s)
{
    free(s->held);
    free(s->kind);
    free(s->count);
    free(s->share);
    free(s->slot);
}

int
attrib_split(const struct attrib_input *in, double *vm_joules,
             struct attrib_result *res)
{
    return attrib_split_parts(in, vm_joules, NULL, res);
}

int
attrib_split_parts(const struct attrib_input *in, double *vm_joules,
                   double *vm_busy_joules, struct attrib_result *res)
{
    double e, b = 0, e_busy, r, host;
    double dom_mw[POL_MAX_DOMAINS + 1];
    struct attrib_scratch sc;

    for (unsigned d = 0; d <= POL_MAX_DOMAINS; d++) {
        dom_mw[d] = -1;
    }
    zero_out(in, vm_joules, res);
    zero_out(in, vm_busy_joules, NULL);
    if (!in || !in->model || !in->interval_ns
        || (in->n_vms && !vm_joules) || (in->n_vcpus && !in->vcpus)) {
        return -EINVAL;
    }
    e = in->host_joules;
    if (!isfinite(e) || e < 0) {
        return -ERANGE;
    }
    for (size_t i = 0; i < in->n_vcpus; i++) {
        if (in->vcpus[i].vm >= in->n_vms) {
            return -EINVAL;
        }
    }

    /* Rule 1: weights in joules at the model's busy power. */
    for (size_t i = 0; i < in->n_vcpus; i++) {
        const struct attrib_vcpu *v = &in->vcpus[i];
        uint64_t ns = v->busy_ns < in->interval_ns ? v->busy_ns
                                                   : in->interval_ns;
        double w;

        w = (double) ns * 1e-9 * busy_mw(in, v->cpu, dom_mw) * 1e-3;
        vm_joules[v->vm] += w;
        b += w;
    }
    e_busy = b < e ? b : e;
    if (b > 0) {
        double k = e_busy / b;

        for (size_t vm = 0; vm < in->n_vms; vm++) {
            vm_joules[vm] *= k;
        }
    }
    for (size_t vm = 0; vm_busy_joules && vm < in->n_vms; vm++) {
        vm_busy_joules[vm] = vm_joules[vm];
    }

    /* Rule 2. */
    r = e - e_busy;
    memset(&sc, 0, sizeof sc);
    sc.words = host_words(in->model);
    if (in->n_vms) {
        sc.n_slots = 4;
        while (sc.n_slots <= 2 * in->n_vms) {
            sc.n_slots *= 2;
        }
        sc.held = calloc(in->n_vms * sc.words + 1, sizeof *sc.held);
        sc.kind = malloc(in->n_vms * sizeof *sc.kind);
        sc.count = malloc(in->n_vms * sizeof *sc.count);
        sc.share = malloc(in->n_vms * sizeof *sc.share);
        sc.slot = malloc(sc.n_slots * sizeof *sc.slot);
        if (!sc.held || !sc.kind || !sc.count || !sc.share || !sc.slot) {
            scratch_free(&sc);
            zero_out(in, vm_joules, res);
            zero_out(in, vm_busy_joules, NULL);
            return -ENOMEM;
        }
        memset(sc.slot, 0xff, sc.n_slots * sizeof *sc.slot);
    }
    host = split_static(in, r, vm_joules, &sc);
    scratch_free(&sc);
    if (res) {
        res->busy_joules = e_busy;
        res->static_joules = r;
        res->host_joules = host;
    }
    return 0;
}
