/* policy/model.c -- Energy-model text parser and model queries.
 *
 * The model is everything the policy knows about the hardware.  vpowerd
 * and vpower-sim read a file from config/models/ and hand its text to
 * pol_model_parse(); the format (one directive per line) is documented in
 * docs/energy-model.md.  The parser is pure and defensive: the text may be
 * anything (it is fuzzed), so every loop is bounded by the input or by a
 * POL_MAX_* constant and every value is range-checked before use. */

#include "policy/model.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "policy/internal.h"
#include "policy/num.h"

#define MAX_LINE 1024           /* Longer lines are rejected. */
#define MAX_TOKENS 24
#define MAX_MW 100000000u       /* 100 kW: anything above is a typo. */
#define MAX_US 100000000u       /* 100 s. */
#define MAX_KHZ 100000000u      /* 100 GHz. */
#define MAX_CAP (POL_CAPACITY_SCALE * 4)

struct parser {
    struct pol_model *m;
    char *err;
    size_t errlen;
    unsigned line;
    bool have_cpus;
    bool have_smt;
    int cur_dom;                /* Domain being described, or -1. */
    bool cur_per_core;          /* Its CPUs are split per core at the end. */
    uint8_t pkg_given[POL_MAX_DOMAINS]; /* 1 + 'package N', or 0. */
    struct cpuset in_domain;    /* CPUs already in some domain. */
    struct cpuset in_pkg;       /* CPUs already in some package. */
};

static int
fail(struct parser *p, const char *fmt, ...)
{
    if (p->err && p->errlen) {
        va_list ap;
        int n = snprintf(p->err, p->errlen, "%u: ", p->line);

        if (n >= 0 && (size_t) n < p->errlen) {
            va_start(ap, fmt);
            vsnprintf(p->err + n, p->errlen - (size_t) n, fmt, ap);
            va_end(ap);
        }
    }
    return -EINVAL;
}

/* Fails naming 'what' unless 'v' is at least 'prev', or above it when
 * 'strict': a domain lists its points and idle states in order. */
static int
ordered(struct parser *p, const char *what, uint32_t v, uint32_t prev,
        bool strict)
{
    if (strict ? v <= prev : v < prev) {
        return fail(p, "%s '%u' %s previous %u", what, v,
                    strict ? "not above" : "below", prev);
    }
    return 0;
}

/* Parses an unsigned decimal in [0, max] that must be the whole token. */
static int
parse_u32(const char *s, uint32_t max, uint32_t *out)
{
    uint64_t v;

    if (num_parse_u64(s, max, &v)) {
        return -EINVAL;
    }
    *out = (uint32_t) v;
    return 0;
}

/* Parses a cpulist that must name only CPUs below n_cpus. */
static int
parse_list(struct parser *p, const char *tok, struct cpuset *set)
{
    if (cpuset_parse(set, tok) || cpuset_empty(set)) {
        return -EINVAL;
    }
    return cpuset_next(set, p->m->n_cpus) >= 0 ? -EINVAL : 0;
}

static int
num(struct parser *p, char **tok, unsigned ntok, unsigned i, uint32_t max,
    const char *field, uint32_t *out)
{
    if (i >= ntok) {
        return fail(p, "missing %s", field);
    }
    if (parse_u32(tok[i], max, out)) {
        return fail(p, "bad %s '%.32s' (0..%u)", field, tok[i], max);
    }
    return 0;
}

static int
do_cpus(struct parser *p, char **tok, unsigned n)
{
    uint32_t v;

    if (p->have_cpus) {
        return fail(p, "duplicate 'cpus'");
    }
    if (n != 2) {
        return fail(p, "'cpus' takes one count");
    }
    if (num(p, tok, n, 1, POL_MAX_CPUS, "cpu count", &v)) {
        return -EINVAL;
    }
    if (!v) {
        return fail(p, "bad cpu count '0'");
    }
    p->m->n_cpus = v;
    p->have_cpus = true;
    for (unsigned c = 0; c < v; c++) {
        p->m->cpu_core[c] = (uint16_t) c;
    }
    return 0;
}

/* smt LIST0 LIST1 [...]: the i-th CPUs of all lists share a core. */
static int
do_smt(struct parser *p, char **tok, unsigned n)
{
    struct cpuset sets[POL_MAX_SMT], all;
    int cur[POL_MAX_SMT];
    unsigned count = 0;

    if (p->have_smt) {
        return fail(p, "duplicate 'smt'");
    }
    if (n < 3 || n - 1 > POL_MAX_SMT) {
        return fail(p, "'smt' takes 2..%d cpu lists", POL_MAX_SMT);
    }
    cpuset_zero(&all);
    for (unsigned i = 0; i + 1 < n; i++) {
        struct cpuset both;

        if (parse_list(p, tok[i + 1], &sets[i])) {
            return fail(p, "bad smt cpu list '%.32s'", tok[i + 1]);
        }
        if (i && cpuset_count(&sets[i]) != count) {
            return fail(p, "smt cpu list '%.32s' differs in length",
                        tok[i + 1]);
        }
        count = cpuset_count(&sets[i]);
        cpuset_and(&both, &all, &sets[i]);
        if (!cpuset_empty(&both)) {
            return fail(p, "smt cpu list '%.32s' overlaps", tok[i + 1]);
        }
        cpuset_or(&all, &all, &sets[i]);
        cur[i] = cpuset_next(&sets[i], 0);
    }
    for (unsigned k = 0; k < count; k++) {
        int core = cur[0];

        for (unsigned i = 0; i + 1 < n; i++) {
            if (cur[i] < core) {
                core = cur[i];
            }
        }
        for (unsigned i = 0; i + 1 < n; i++) {
            p->m->cpu_core[cur[i]] = (uint16_t) core;
            cur[i] = cpuset_next(&sets[i], (unsigned) cur[i] + 1);
        }
    }
    p->have_smt = true;
    return 0;
}

/* package ID CPULIST UNCORE_ACTIVE_MW UNCORE_IDLE_MW */
static int
do_package(struct parser *p, char **tok, unsigned n)
{
    struct pol_pkg *pk;
    struct cpuset both;
    uint32_t id;

    if (n != 5) {
        return fail(p, "'package' takes id, cpus, uncore active and "
                    "idle mW");
    }
    if (num(p, tok, n, 1, POL_MAX_PKGS - 1, "package id", &id)) {
        return -EINVAL;
    }
    if (id != p->m->n_pkgs) {
        return fail(p, "bad package id '%u' (expected %u)", id,
                    p->m->n_pkgs);
    }
    pk = &p->m->pkgs[id];
    if (parse_list(p, tok[2], &pk->cpus)) {
        return fail(p, "bad package cpu list '%.32s'", tok[2]);
    }
    cpuset_and(&both, &pk->cpus, &p->in_pkg);
    if (!cpuset_empty(&both)) {
        return fail(p, "package cpu list '%.32s' overlaps another package",
                    tok[2]);
    }
    if (num(p, tok, n, 3, MAX_MW, "uncore active mW", &pk->uncore_active_mw)
        || num(p, tok, n, 4, MAX_MW, "uncore idle mW",
               &pk->uncore_idle_mw)) {
        return -EINVAL;
    }
    cpuset_or(&p->in_pkg, &p->in_pkg, &pk->cpus);
    p->m->n_pkgs++;
    return 0;
}

/* Checks the domain being described and, for 'per-core', splits it into
 * one domain per physical core with the same points and states. */
static int
finish_domain(struct parser *p)
{
    struct pol_model *m = p->m;
    struct pol_domain *d;
    struct cpuset rest;
    unsigned base;

    if (p->cur_dom < 0) {
        return 0;
    }
    d = &m->domains[p->cur_dom];
    base = (unsigned) p->cur_dom;
    p->cur_dom = -1;
    if (!d->n_opps) {
        return fail(p, "domain ends without an 'opp'");
    }
    if (!d->n_idle) {
        return fail(p, "domain ends without an 'idle' state");
    }
    d->nominal_opp = d->n_opps;
    for (unsigned i = 0; i < d->n_opps; i++) {
        if (!d->opps[i].turbo) {
            d->nominal_opp = i;
        } else if (i + 1 < d->n_opps && !d->opps[i + 1].turbo) {
            return fail(p, "turbo opp below a non-turbo opp");
        }
    }
    if (d->nominal_opp >= d->n_opps) {
        return fail(p, "domain has only turbo opps");
    }
    if (!p->cur_per_core) {
        return 0;
    }
    /* Split: the first core keeps slot 'base', the others are appended. */
    rest = d->cpus;
    cpuset_zero(&d->cpus);
    for (unsigned guard = 0; !cpuset_empty(&rest) && guard < POL_MAX_CPUS;
         guard++) {
        int first = cpuset_next(&rest, 0);
        uint16_t core = m->cpu_core[first];
        struct pol_domain *nd;
        unsigned idx;

        if (guard == 0) {
            idx = base;
        } else {
            if (m->n_domains >= POL_MAX_DOMAINS) {
                return fail(p, "too many domains after per-core split "
                            "(max %d)", POL_MAX_DOMAINS);
            }
            idx = m->n_domains++;
            m->domains[idx] = m->domains[base];
            p->pkg_given[idx] = p->pkg_given[base];
        }
        nd = &m->domains[idx];
        cpuset_zero(&nd->cpus);
        CPUSET_FOREACH (c, &rest) {
            if (m->cpu_core[c] == core) {
                cpuset_set(&nd->cpus, (unsigned) c);
            }
        }
        cpuset_andnot(&rest, &rest, &nd->cpus);
        CPUSET_FOREACH (c, &nd->cpus) {
            m->cpu_domain[c] = (uint16_t) idx;
        }
    }
    return 0;
}

/* domain CPULIST [per-core] [package N] */
static int
do_domain(struct parser *p, char **tok, unsigned n)
{
    struct pol_model *m = p->m;
    struct pol_domain *d;
    struct cpuset both;

    if (finish_domain(p)) {
        return -EINVAL;
    }
    if (n < 2) {
        return fail(p, "'domain' needs a cpu list");
    }
    if (m->n_domains >= POL_MAX_DOMAINS) {
        return fail(p, "too many domains (max %d)", POL_MAX_DOMAINS);
    }
    d = &m->domains[m->n_domains];
    memset(d, 0, sizeof *d);
    if (parse_list(p, tok[1], &d->cpus)) {
        return fail(p, "bad domain cpu list '%.32s'", tok[1]);
    }
    cpuset_and(&both, &d->cpus, &p->in_domain);
    if (!cpuset_empty(&both)) {
        return fail(p, "domain cpu list '%.32s' overlaps another domain",
                    tok[1]);
    }
    p->cur_per_core = false;
    p->pkg_given[m->n_domains] = 0;
    for (unsigned i = 2; i < n; i++) {
        uint32_t v;

        if (!strcmp(tok[i], "per-core")) {
            p->cur_per_core = true;
        } else if (!strcmp(tok[i], "package") && i + 1 < n) {
            if (num(p, tok, n, ++i, POL_MAX_PKGS - 1, "domain package",
                    &v)) {
                return -EINVAL;
            }
            p->pkg_given[m->n_domains] = (uint8_t) (v + 1);
        } else {
            return fail(p, "bad domain option '%.32s'", tok[i]);
        }
    }
    cpuset_or(&p->in_domain, &p->in_domain, &d->cpus);
    CPUSET_FOREACH (c, &d->cpus) {
        m->cpu_domain[c] = (uint16_t) m->n_domains;
    }
    p->cur_dom = (int) m->n_domains++;
    return 0;
}

/* The domain a line of 'what' (opp, idle, cluster) describes: the one
 * the last 'domain' line opened; NULL, after fail(), before any. */
static struct pol_domain *
cur_domain(struct parser *p, const char *what)
{
    if (p->cur_dom < 0) {
        fail(p, "'%s' outside a domain", what);
        return NULL;
    }
    return &p->m->domains[p->cur_dom];
}

/* Fails when a domain already has 'have' of at most 'max' 'what'. */
static int
full(struct parser *p, unsigned have, unsigned max, const char *what)
{
    return have >= max ? fail(p, "too many %s (max %u)", what, max) : 0;
}

/* opp KHZ CAPACITY BUSY_MW [turbo] [cluster MW] */
static int
do_opp(struct parser *p, char **tok, unsigned n)
{
    struct pol_domain *d;
    struct pol_opp o;

    d = cur_domain(p, "opp");
    if (!d || full(p, d->n_opps, POL_MAX_OPPS, "opps")) {
        return -EINVAL;
    }
    memset(&o, 0, sizeof o);
    if (num(p, tok, n, 1, MAX_KHZ, "opp kHz", &o.freq_khz)
        || num(p, tok, n, 2, MAX_CAP, "opp capacity", &o.capacity)
        || num(p, tok, n, 3, MAX_MW, "opp busy mW", &o.busy_mw)) {
        return -EINVAL;
    }
    if (!o.freq_khz || !o.capacity) {
        return fail(p, "bad opp %s '0'", !o.freq_khz ? "kHz" : "capacity");
    }
    for (unsigned i = 4; i < n; i++) {
        if (!strcmp(tok[i], "turbo")) {
            o.turbo = true;
        } else if (!strcmp(tok[i], "cluster") && i + 1 < n) {
            if (num(p, tok, n, ++i, MAX_MW, "opp cluster mW",
                    &o.cluster_mw)) {
                return -EINVAL;
            }
        } else {
            return fail(p, "bad opp option '%.32s'", tok[i]);
        }
    }
    if (d->n_opps) {
        const struct pol_opp *prev = &d->opps[d->n_opps - 1];

        if (ordered(p, "opp kHz", o.freq_khz, prev->freq_khz, true)
            || ordered(p, "opp capacity", o.capacity, prev->capacity,
                       false)) {
            return -EINVAL;
        }
    }
    d->opps[d->n_opps++] = o;
    return 0;
}

/* idle NAME EXIT_US TARGET_RESIDENCY_US POWER_MW */
static int
do_idle(struct parser *p, char **tok, unsigned n)
{
    struct pol_domain *d;
    struct pol_idle_state s;

    d = cur_domain(p, "idle");
    if (!d || full(p, d->n_idle, POL_MAX_IDLE, "idle states")) {
        return -EINVAL;
    }
    if (n != 5) {
        return fail(p, "'idle' takes name, exit us, residency us, mW");
    }
    memset(&s, 0, sizeof s);
    if (strlen(tok[1]) >= POL_NAME_LEN) {
        return fail(p, "idle name '%.32s' too long", tok[1]);
    }
    memcpy(s.name, tok[1], strlen(tok[1]));
    if (num(p, tok, n, 2, MAX_US, "idle exit latency us",
            &s.exit_latency_us)
        || num(p, tok, n, 3, MAX_US, "idle target residency us",
               &s.target_residency_us)
        || num(p, tok, n, 4, MAX_MW, "idle mW", &s.power_mw)) {
        return -EINVAL;
    }
    if (d->n_idle) {
        const struct pol_idle_state *prev = &d->idle[d->n_idle - 1];

        if (ordered(p, "idle exit latency", s.exit_latency_us,
                    prev->exit_latency_us, false)
            || ordered(p, "idle target residency", s.target_residency_us,
                       prev->target_residency_us, false)) {
            return -EINVAL;
        }
    }
    d->idle[d->n_idle++] = s;
    return 0;
}

static int
do_cluster(struct parser *p, char **tok, unsigned n)
{
    struct pol_domain *d = cur_domain(p, "cluster");

    if (!d) {
        return -EINVAL;
    }
    if (n != 3) {
        return fail(p, "'cluster' takes active and idle mW");
    }
    return num(p, tok, n, 1, MAX_MW, "cluster active mW",
               &d->cluster_active_mw)
           || num(p, tok, n, 2, MAX_MW, "cluster idle mW",
                  &d->cluster_idle_mw) ? -EINVAL : 0;
}

static int
do_line(struct parser *p, char **tok, unsigned n)
{
    struct pol_model *m = p->m;
    uint32_t v;

    if (!strcmp(tok[0], "cpus")) {
        return do_cpus(p, tok, n);
    }
    if (!strcmp(tok[0], "name")) {
        if (n != 2 || strlen(tok[1]) >= sizeof m->name) {
            return fail(p, "'name' takes one word of < %zu chars",
                        sizeof m->name);
        }
        memcpy(m->name, tok[1], strlen(tok[1]) + 1);
        return 0;
    }
    if (!strcmp(tok[0], "platform")) {
        return n != 2 ? fail(p, "'platform' takes one mW value")
               : num(p, tok, n, 1, MAX_MW, "platform mW", &m->platform_mw);
    }
    if (!strcmp(tok[0], "smt-capacity")) {
        if (n != 2) {
            return fail(p, "'smt-capacity' takes one percentage");
        }
        if (num(p, tok, n, 1, 400, "smt capacity %", &v)) {
            return -EINVAL;
        }
        if (v < 100) {
            return fail(p, "bad smt capacity % '%u' (100..400)", v);
        }
        m->smt_capacity_pct = (uint16_t) v;
        return 0;
    }
    if (!p->have_cpus) {
        return fail(p, "'%.32s' before 'cpus'", tok[0]);
    }
    if (!strcmp(tok[0], "smt")) {
        if (m->n_domains) {
            return fail(p, "'smt' after the first domain");
        }
        return do_smt(p, tok, n);
    }
    if (!strcmp(tok[0], "package")) {
        return do_package(p, tok, n);
    }
    if (!strcmp(tok[0], "domain")) {
        return do_domain(p, tok, n);
    }
    if (!strcmp(tok[0], "opp")) {
        return do_opp(p, tok, n);
    }
    if (!strcmp(tok[0], "idle")) {
        return do_idle(p, tok, n);
    }
    if (!strcmp(tok[0], "cluster")) {
        return do_cluster(p, tok, n);
    }
    return fail(p, "unknown directive '%.32s'", tok[0]);
}

/* Whole-model checks once every line has been read. */
static int
finish_model(struct parser *p)
{
    struct pol_model *m = p->m;
    struct cpuset all;

    if (finish_domain(p)) {
        return -EINVAL;
    }
    if (!p->have_cpus) {
        return fail(p, "no 'cpus' directive");
    }
    cpuset_zero(&all);
    for (unsigned c = 0; c < m->n_cpus; c++) {
        cpuset_set(&all, c);
    }
    if (!cpuset_equal(&all, &p->in_domain)) {
        cpuset_andnot(&all, &all, &p->in_domain);
        return fail(p, "cpu %d is in no domain", cpuset_next(&all, 0));
    }
    if (!m->n_pkgs) {
        /* No package lines: one package with no uncore power. */
        m->n_pkgs = 1;
        m->pkgs[0].cpus = all;
        p->in_pkg = all;
    }
    if (!cpuset_equal(&all, &p->in_pkg)) {
        cpuset_andnot(&all, &all, &p->in_pkg);
        return fail(p, "cpu %d is in no package", cpuset_next(&all, 0));
    }
    for (unsigned i = 0; i < m->n_domains; i++) {
        struct pol_domain *d = &m->domains[i];
        unsigned pk = m->n_pkgs;

        for (unsigned k = 0; k < m->n_pkgs; k++) {
            if (cpuset_subset(&d->cpus, &m->pkgs[k].cpus)) {
                pk = k;
            }
        }
        if (pk == m->n_pkgs) {
            return fail(p, "domain %u spans packages", i);
        }
        if (p->pkg_given[i] && p->pkg_given[i] - 1u != pk) {
            return fail(p, "domain %u: package %u does not hold its cpus",
                        i, p->pkg_given[i] - 1u);
        }
        d->pkg = pk;
    }
    for (unsigned c = 0; c < m->n_cpus; c++) {
        unsigned core = m->cpu_core[c];

        if (m->cpu_domain[core] != m->cpu_domain[c]) {
            return fail(p, "smt siblings %u and %u in different domains",
                        core, c);
        }
    }
    if (!m->smt_capacity_pct) {
        m->smt_capacity_pct = p->have_smt ? 125 : 100;
    }
    return 0;
}

int
pol_model_parse(struct pol_model *m, const char *text,
                char *err, size_t errlen)
{
    struct parser p;
    const char *s = text;

    memset(m, 0, sizeof *m);
    memset(&p, 0, sizeof p);
    p.m = m;
    p.err = err;
    p.errlen = errlen;
    p.cur_dom = -1;
    if (err && errlen) {
        err[0] = '\0';
    }
    if (!text) {
        return fail(&p, "no text");
    }
    while (*s) {
        char buf[MAX_LINE];
        char *tok[MAX_TOKENS];
        unsigned n = 0;
        size_t len = 0;
        char *q;

        p.line++;
        while (s[len] && s[len] != '\n') {
            len++;
        }
        if (len >= MAX_LINE) {
            return fail(&p, "line longer than %d bytes", MAX_LINE - 1);
        }
        memcpy(buf, s, len);
        buf[len] = '\0';
        s += len + (s[len] == '\n');
        for (size_t i = 0; i < len; i++) {
            unsigned char ch = (unsigned char) buf[i];

            if (ch == '#') {
                buf[i] = '\0';
                break;
            }
            if (ch == '\t' || ch == '\r') {
                buf[i] = ' ';
            } else if (ch < 0x20 || ch > 0x7e) {
                return fail(&p, "bad character 0x%02x", ch);
            }
        }
        for (q = buf; *q; ) {
            while (*q == ' ') {
                *q++ = '\0';
            }
            if (!*q) {
                break;
            }
            if (n >= MAX_TOKENS) {
                return fail(&p, "too many fields (max %d)", MAX_TOKENS);
            }
            tok[n++] = q;
            while (*q && *q != ' ') {
                q++;
            }
        }
        if (n && do_line(&p, tok, n)) {
            return -EINVAL;
        }
    }
    p.line++;
    return finish_model(&p);
}

unsigned
pol_model_idle_for_latency(const struct pol_model *m, unsigned cpu,
                           uint32_t latency_us)
{
    const struct pol_domain *d;
    unsigned best = 0;

    if (cpu >= m->n_cpus || m->cpu_domain[cpu] >= m->n_domains) {
        return 0;
    }
    d = &m->domains[m->cpu_domain[cpu]];
    if (!d->n_idle) {
        return 0;
    }
    if (!latency_us) {
        return d->n_idle - 1;
    }
    for (unsigned i = 0; i < d->n_idle; i++) {
        if (d->idle[i].exit_latency_us <= latency_us) {
            best = i;
        }
    }
    return best;
}

uint32_t
pol_dom_max_khz(const struct pol_domain *d, bool turbo)
{
    if (!d->n_opps) {
        return 0;
    }
    if (turbo) {
        return d->opps[d->n_opps - 1].freq_khz;
    }
    return d->opps[d->nominal_opp < d->n_opps ? d->nominal_opp : 0].freq_khz;
}
