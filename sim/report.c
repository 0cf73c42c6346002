/* sim/report.c -- Text table, JSON and gnuplot output of a run. */

#include <config.h>

#include "sim/report.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sim/equal.h"

/* 'name' (a trace file name, a path) with control characters and bytes
 * that are not UTF-8 as \xNN (trace_esc()), in 'buf': names come from
 * the trace directory and end up on terminals, in JSON and in gnuplot
 * commands. */
static const char *
esc_name(const char *name, char *buf, size_t len)
{
    return trace_esc(buf, len, name, strlen(name), SIZE_MAX);
}

static double
captured(const struct sim_result *res, int p)
{
    double ep = res->rows[SIM_P_PERFORMANCE].energy_j;
    double el = res->rows[SIM_P_LOWER].energy_j;

    if (!res->rows[SIM_P_PERFORMANCE].ran || !res->rows[SIM_P_LOWER].ran ||
        ep - el <= 0) {
        return NAN;
    }
    return 100.0 * (ep - res->rows[p].energy_j) / (ep - el);
}

bool
report_perf_vm_ok(double vpower_p99, double perf_p99)
{
    return vpower_p99 <= REPORT_PERF_RATIO * perf_p99 + 1e-9
           || vpower_p99 <= REPORT_PERF_FLOOR_PCT;
}

static enum pol_kind
vm_kind(const struct report_info *ri, size_t i)
{
    return ri->vm_policy ? ri->vm_policy[i].kind : POL_BALANCED;
}

static size_t
count_kind(const struct report_info *ri, const struct sim_result *res,
           enum pol_kind k)
{
    size_t n = 0;

    for (size_t i = 0; ri->ts && i < res->n_vms; i++) {
        n += vm_kind(ri, i) == k;
    }
    return n;
}

static double
pct_of(double part, double whole)
{
    return whole > 0 ? 100.0 * part / whole : 0;
}

/* A run total as a mean rate: per second of simulated time. */
static double
per_s(const struct sim_result *res, double total)
{
    return res->hours > 0 ? total / (res->hours * 3600.0) : 0;
}

/* The per-VM table: one row per VM, ready p99 and unmet % under every
 * policy that ran. */
static void
text_per_vm(FILE *f, const struct report_info *ri,
            const struct sim_result *res)
{
    fprintf(f, "per VM: ready p99 %% / unmet %% under each policy\n");
    fprintf(f, "%-14s %-11s %5s %7s", "vm", "policy", "vcpus", "cores");
    for (int p = 0; p < SIM_P_LOWER; p++) {
        if (res->vm_rows[p]) {
            fprintf(f, " %15.15s", sim_pol_name(p));
        }
    }
    fprintf(f, "\n");
    for (size_t i = 0; i < res->n_vms; i++) {
        const struct sim_vm_row *v0 = &res->vm_rows[SIM_P_VPOWER][i];
        char nb[256];

        fprintf(f, "%-14.14s %-11s %5u %7.3f",
                esc_name(ri->ts->vms[i].name, nb, sizeof nb),
                pol_kind_name(vm_kind(ri, i)), ri->ts->vms[i].n_vcpus,
                res->hours > 0 ? v0->demand_core_s / (res->hours * 3600)
                               : 0);
        for (int p = 0; p < SIM_P_LOWER; p++) {
            const struct sim_vm_row *v;

            if (!res->vm_rows[p]) {
                continue;
            }
            v = &res->vm_rows[p][i];
            fprintf(f, "  %6.3f/%6.3f", v->ready_p99_pct,
                    pct_of(v->unmet_core_s, v->demand_core_s));
        }
        fprintf(f, "\n");
    }
}

/* The mix's energy cost against vpower with every VM balanced (and,
 * with 'n_iso' no-share VMs, sharing SMT siblings). */
static void
text_cost(FILE *f, const struct report_info *ri, const struct sim_result *res,
          size_t n_iso)
{
    double e = res->rows[SIM_P_VPOWER].energy_j;

    if (ri->balanced_energy_j <= 0) {
        return;
    }
    fprintf(f, "cost of the mix: vpower %.0f J (unmet %.3f%%) vs "
            "%.0f J (unmet %.3f%%) with every VM balanced%s: %+.0f J "
            "(%+.2f%%)%s\n", e, res->rows[SIM_P_VPOWER].unmet_pct,
            ri->balanced_energy_j, ri->balanced_unmet_pct,
            n_iso ? " and sharing SMT siblings" : "",
            e - ri->balanced_energy_j,
            pct_of(e - ri->balanced_energy_j, ri->balanced_energy_j),
            res->rows[SIM_P_VPOWER].unmet_pct
            > ri->balanced_unmet_pct + 1.0
            ? " -- not comparable: the mix serves less" : "");
}

/* Performance VMs of a policy mix: each one's ready p99 under vpower
 * against the performance baseline, and the mix's energy cost. */
static void
text_mix(FILE *f, const struct report_info *ri, const struct sim_result *res)
{
    const struct sim_vm_row *vp = res->vm_rows[SIM_P_VPOWER];
    const struct sim_vm_row *pf = res->vm_rows[SIM_P_PERFORMANCE];
    size_t n_perf = count_kind(ri, res, POL_PERFORMANCE), n_ok = 0;
    size_t n_iso = 0;
    double worst = 0, unmet = 0, dem = 0;

    fprintf(f, "policy mix: %zu performance, %zu powersave, %zu balanced "
            "VMs\n", n_perf, count_kind(ri, res, POL_POWERSAVE),
            count_kind(ri, res, POL_BALANCED));
    for (size_t i = 0; i < res->n_vms; i++) {
        n_iso += !ri->vm_policy[i].share_smt;
    }
    if (n_iso) {
        fprintf(f, "SMT isolation: %zu of %zu VMs may not share SMT "
                "siblings (vpower keeps other VMs off their cores); every "
                "baseline shares siblings: not isolated\n", n_iso,
                res->n_vms);
    }
    if (!n_perf || !vp) {
        if (n_iso) {
            text_cost(f, ri, res, n_iso);
        }
        return;
    }
    for (size_t i = 0; i < res->n_vms; i++) {
        char nb[256];

        if (vm_kind(ri, i) != POL_PERFORMANCE) {
            continue;
        }
        unmet += vp[i].unmet_core_s;
        dem += vp[i].demand_core_s;
        if (!pf) {
            continue;
        }
        bool ok = report_perf_vm_ok(vp[i].ready_p99_pct,
                                    pf[i].ready_p99_pct);
        n_ok += ok;
        if (pf[i].ready_p99_pct > 0) {
            double r = vp[i].ready_p99_pct / pf[i].ready_p99_pct;
            worst = r > worst ? r : worst;
        }
        fprintf(f, "  perf VM %-14.14s ready p99 vpower %7.3f%% "
                "performance %7.3f%%  %s\n",
                esc_name(ri->ts->vms[i].name, nb, sizeof nb),
                vp[i].ready_p99_pct, pf[i].ready_p99_pct,
                ok ? "ok" : "OVER 1.2x");
    }
    if (pf) {
        fprintf(f, "performance VMs within %.1fx of the performance "
                "baseline's ready p99 (or <= %.1f%%): %zu of %zu; worst "
                "ratio where the baseline's p99 > 0: %.2f\n",
                REPORT_PERF_RATIO, REPORT_PERF_FLOOR_PCT, n_ok, n_perf,
                worst);
    }
    fprintf(f, "performance VMs' unmet demand under vpower: %.3f%%\n",
            pct_of(unmet, dem));
    text_cost(f, ri, res, n_iso);
}

/* Placement costs charged (exec_charge_moves()) and the rows whose
 * real system would refuse the load. */
static void
text_costs(FILE *f, const struct report_info *ri,
           const struct sim_result *res)
{
    bool any = false;

    for (int p = 0; p < SIM_P_LOWER; p++) {
        const struct sim_row *r = &res->rows[p];

        if (!r->ran || sim_pol_is_variant(p)
            || (r->migrations_h <= 0 && r->overhead_pct <= 0)) {
            continue;
        }
        if (!any) {
            fprintf(f, "placement costs (%.0f us per move to another "
                    "core, %.0f us per pin change):", ri->migration_cost_us,
                    ri->pin_cost_us);
            any = true;
        }
        fprintf(f, " %s %.0f moves/h, %.4f%% of demand", sim_pol_name(p),
                r->migrations_h, r->overhead_pct);
    }
    if (any) {
        fprintf(f, "\n");
    }
    fprintf(f, "mean delay of work past its step, ms:");
    for (int p = 0; p < SIM_P_LOWER; p++) {
        if (res->rows[p].ran && !sim_pol_is_variant(p)) {
            fprintf(f, " %s %.0f", sim_pol_name(p), res->rows[p].delay_ms);
        }
    }
    fprintf(f, "\n");
    for (int p = 0; p < SIM_P_LOWER; p++) {
        if (res->rows[p].ran && res->rows[p].refused) {
            fprintf(f, "%s: more vCPUs than CPUs on a host; the real "
                    "system would refuse these VMs (row: pins wrapped "
                    "around, an analogue only)\n", sim_pol_name(p));
        }
    }
}

/* True if any baseline ran: only then is there a comparison. */
static bool
any_baseline(const struct sim_result *res)
{
    for (int p = SIM_P_PERFORMANCE; p <= SIM_P_LAST_BASELINE; p++) {
        if (res->rows[p].ran) {
            return true;
        }
    }
    return false;
}

/* The equal-service comparison (sim/equal.h). */
static void
text_equal(FILE *f, const struct report_info *ri,
           const struct sim_result *res)
{
    const struct sim_row *v = equal_vpower_row(res, ri->served), *r;
    const struct sim_row *v0 = &res->rows[SIM_P_VPOWER];
    struct equal_cmp c;
    char how[160];

    if (!v0->ran || !any_baseline(res)) {
        return;
    }
    if (!equal_compare(res, ri->served, &c)) {
        fprintf(f, "equal service: no baseline leaves at most %.0f%% of "
                "the demand unmet: no serving rival\n",
                EQUAL_SERVES_UNMET_PCT);
        return;
    }
    r = &res->rows[c.rival];
    if (v != v0) {
        snprintf(how, sizeof how, "replayed with headroom_pct %u (as run: "
                 "%.0f J, late %.3f%%)", (unsigned) ri->served_headroom_pct,
                 v0->energy_j + v0->left_finish_j, v0->late_pct);
    } else {
        snprintf(how, sizeof how, "as run");
    }
    fprintf(f, "equal service vs %s (the serving rival vpower fares worst "
            "against; placement costs %.0f/%.0f us charged; late = work "
            "not run in its step; excess late work charged %.3f J per "
            "nominal-core second): vpower %s: %.0f J, late %.3f%%, unmet "
            "%.3f%% (+%.0f J) -> %.0f J; %s %.0f J, late %.3f%% (+%.0f J) "
            "-> %.0f J; ratio %.4f: %s\n", sim_pol_name(c.rival),
            ri->migration_cost_us, ri->pin_cost_us, res->late_j_per_core_s,
            how, v->energy_j + v->left_finish_j, v->late_pct, v->unmet_pct,
            c.vpower_late_j, c.vpower_j, sim_pol_name(c.rival),
            r->energy_j + r->left_finish_j, r->late_pct, c.rival_late_j,
            c.rival_j, c.vpower_j / c.rival_j,
            c.vpower_j < c.rival_j ? "vpower uses less"
                                   : "vpower does NOT win");
    if (!isnan(c.breakeven_j_per_core_s)) {
        fprintf(f, "equal service break-even: vpower wins while its "
                "excess late work costs less than %.3f J per nominal-core "
                "second (the model's cheapest work: %.3f)\n",
                c.breakeven_j_per_core_s, res->cheap_j_per_core_s);
    }
}

/* Work some policies never ran: still waiting when the replay ends, so
 * absent from their energy.  Printed with what finishing it would cost
 * at the model's cheapest rate, so a reader can see that it does not
 * explain away an energy difference (or that it does). */
static void
text_left(FILE *f, const struct sim_result *res)
{
    bool any = false;

    for (int p = 0; p < SIM_P_LOWER; p++) {
        const struct sim_row *r = &res->rows[p];

        if (!r->ran || r->left_pct < 0.01 || sim_pol_is_variant(p)) {
            continue;
        }
        if (!any) {
            fprintf(f, "work still waiting at the end (not run, not in "
                    "energy_J; +J = finishing it at the model's cheapest "
                    "rate):");
            any = true;
        }
        fprintf(f, " %s %.2f%% (+%.0f J, x%.4f)", sim_pol_name(p),
                r->left_pct, r->left_finish_j,
                r->energy_j > 0 ? (r->energy_j + r->left_finish_j)
                                  / r->energy_j : 0);
    }
    if (any) {
        fprintf(f, "\n");
    }
}

void
report_text(FILE *f, const struct report_info *ri,
            const struct sim_result *res)
{
    const struct sim_row *perf = &res->rows[SIM_P_PERFORMANCE];
    char mb[4 * 4096 + 8], tb[4 * 4096 + 8];

    fprintf(f, "model %s, trace %s (%s), %zu VMs / %zu vCPUs on %u "
            "host(s), %.1f h, seed %llu, halt-poll %lu ns%s%s\n",
            esc_name(ri->model, mb, sizeof mb),
            esc_name(ri->trace, tb, sizeof tb), ri->format, res->n_vms,
            res->n_vcpus, res->hosts, res->hours, ri->seed,
            (unsigned long) ri->halt_poll_ns,
            ri->turbo ? ", vpower with turbo " : "",
            ri->turbo ? ri->turbo : "");
    if (ri->shape) {
        fprintf(f, "shape: %zu VMs, %zu vCPUs%s, demand mean %.2f / peak "
                "%.2f cores (nominal vCPUs)\n", ri->shape->n_vms,
                ri->shape->n_vcpus,
                ri->repeat > 1 ? " (after --repeat)" : "",
                ri->shape->mean_cores, ri->shape->peak_cores);
    }
    fprintf(f, "%-13s %12s %9s %8s %9s %8s %9s %9s %8s %8s %7s\n",
            "policy", "energy_J", "avg_W", "vs_perf", "captured%",
            "unmet%", "ready50%", "ready99%", "pins/h", "freq/h",
            "act_cpu");
    for (int p = 0; p < SIM_N_POL; p++) {
        const struct sim_row *r = &res->rows[p];

        if (!r->ran) {
            continue;
        }
        fprintf(f, "%-13s %12.0f %9.2f ", sim_pol_name(p), r->energy_j,
                r->avg_power_w);
        if (perf->ran && perf->energy_j > 0) {
            fprintf(f, "%8.4f ", r->energy_j / perf->energy_j);
        } else {
            fprintf(f, "%8s ", "-");
        }
        if (isnan(captured(res, p))) {
            fprintf(f, "%9s ", "-");
        } else {
            fprintf(f, "%9.1f ", captured(res, p));
        }
        if (p == SIM_P_LOWER) {
            fprintf(f, "%8s %9s %9s %8s %8s %7s\n", "-", "-", "-", "-", "-",
                    "-");
        } else {
            fprintf(f, "%8.3f %9.3f %9.3f %8.1f %8.1f %7.1f\n",
                    r->unmet_pct, r->ready_p50_pct, r->ready_p99_pct,
                    r->pin_changes_h, r->freq_changes_h,
                    r->avg_active_cpus);
        }
    }
    if (res->rows[SIM_P_VPOWER].ran) {
        fprintf(f, "vpower energy / baseline:");
        for (int p = SIM_P_PERFORMANCE; p < SIM_N_POL; p++) {
            if (res->rows[p].ran && res->rows[p].energy_j > 0
                && !sim_pol_is_variant(p)) {
                fprintf(f, " %s %.4f", sim_pol_name(p),
                        res->rows[SIM_P_VPOWER].energy_j
                        / res->rows[p].energy_j);
            }
        }
        fprintf(f, "\n");
    }
    text_costs(f, ri, res);
    text_left(f, res);
    text_equal(f, ri, res);
    if (ri->ts && ri->vm_policy) {
        text_mix(f, ri, res);
    }
    if (ri->ts && ri->per_vm && res->vm_rows[SIM_P_VPOWER]) {
        text_per_vm(f, ri, res);
    }
}

/* One signal, off and on: vpower rows 'off' and 'on'. */
static void
signal_rows(FILE *f, const struct sim_result *res_off,
            const struct sim_row *off, const char *off_name,
            const struct sim_result *res_on, const struct sim_row *on,
            const char *on_name, const char *what)
{
    const struct sim_row *r[2] = { off, on };
    const struct sim_result *rs[2] = { res_off, res_on };
    const char *st[2] = { off_name, on_name };

    for (int i = 0; i < 2; i++) {
        fprintf(f, "%-24s %-5s %12.0f %9.2f %8.3f %9.3f %7.1f %9.3f "
                "%9.3f\n", what, st[i], r[i]->energy_j, r[i]->avg_power_w,
                r[i]->unmet_pct, r[i]->ready_p99_pct, r[i]->avg_active_cpus,
                per_s(rs[i], r[i]->fed_load_s),
                per_s(rs[i], r[i]->poll_cpu_s));
    }
    fprintf(f, "%-24s %-5s energy x%.4f (%+.2f%%), unmet %+.3f, ready99 "
            "%+.3f, act_cpu %+.1f, fed %+.3f vCPUs\n", "", "on/off",
            off->energy_j > 0 ? on->energy_j / off->energy_j : 0,
            pct_of(on->energy_j - off->energy_j, off->energy_j),
            on->unmet_pct - off->unmet_pct,
            on->ready_p99_pct - off->ready_p99_pct,
            on->avg_active_cpus - off->avg_active_cpus,
            per_s(res_on, on->fed_load_s) - per_s(res_off, off->fed_load_s));
}

void
report_signals(FILE *f, const struct report_info *ri,
               const struct sim_result *res, const struct sim_result *nocap)
{
    const struct sim_row *vp = &res->rows[SIM_P_VPOWER];
    const struct sim_row *nh = &res->rows[SIM_P_VPOWER_NOHALT];
    const struct sim_row *nc = &res->rows[SIM_P_VPOWER_NOCAP];

    if (!vp->ran) {
        return;
    }
    fprintf(f, "signal effects on vpower (same bursts; off = vpower "
            "without that input; fed = load given to the policy, nominal "
            "vCPUs; poll = host CPUs halt-polling; all hosts):\n");
    fprintf(f, "%-24s %-5s %12s %9s %8s %9s %7s %9s %9s\n", "signal",
            "state", "energy_J", "avg_W", "unmet%", "ready99%", "act_cpu",
            "fed", "poll");
    if (nh->ran) {
        char what[64];

        snprintf(what, sizeof what, "halt stats (%lu ns)",
                 (unsigned long) ri->halt_poll_ns);
        signal_rows(f, res, nh, "off", res, vp, "on", what);
    } else if (!ri->halt_poll_ns) {
        fprintf(f, "%-24s no halt polling (--halt-poll-ns 0): off and on "
                "are the same run\n", "halt stats");
    }
    if (nc->ran) {
        signal_rows(f, res, nc, "off", res, vp, "on", "thermal cap signal");
    }
    if (nocap && nocap->rows[SIM_P_VPOWER].ran) {
        signal_rows(f, nocap, &nocap->rows[SIM_P_VPOWER], "none", res, vp,
                    "cap", "thermal cap scenario");
    }
}

static json_object *
num(double v)
{
    /* Fixed precision keeps the JSON stable and readable. */
    char buf[64];

    if (isnan(v)) {
        return NULL;
    }
    snprintf(buf, sizeof buf, "%.6g", v);
    return json_object_new_double_s(v, buf);
}

/* A row's delay, placement costs and refusal into its object 'o'. */
static void
json_costs(json_object *o, const struct sim_row *r)
{
    json_object_object_add(o, "mean_delay_ms", num(r->delay_ms));
    json_object_object_add(o, "migrations_per_h", num(r->migrations_h));
    json_object_object_add(o, "placement_overhead_pct",
                           num(r->overhead_pct));
    json_object_object_add(o, "late_work_pct", num(r->late_pct));
    json_object_object_add(o, "late_core_s", num(r->late_core_s));
    if (r->refused) {
        json_object_object_add(o, "refused",
            json_object_new_string("more vCPUs than CPUs on a host: the "
                                   "real system would refuse the VMs"));
    }
}

/* The equal-service comparison as "equal_service" in 'root'. */
static void
json_equal(json_object *root, const struct report_info *ri,
           const struct sim_result *res)
{
    const struct sim_row *v = equal_vpower_row(res, ri->served);
    struct equal_cmp c;
    json_object *o;

    if (!res->rows[SIM_P_VPOWER].ran || !any_baseline(res)) {
        return;
    }
    o = json_object_new_object();
    json_object_object_add(root, "equal_service", o);
    if (!equal_compare(res, ri->served, &c)) {
        json_object_object_add(o, "rival", NULL);
        return;
    }
    json_object_object_add(o, "rival",
                           json_object_new_string(sim_pol_name(c.rival)));
    json_object_object_add(o, "serves_unmet_pct",
                           num(EQUAL_SERVES_UNMET_PCT));
    json_object_object_add(o, "headroom_pct", json_object_new_int64(
        v != &res->rows[SIM_P_VPOWER] ? ri->served_headroom_pct : 0));
    json_object_object_add(o, "vpower_energy_j", num(v->energy_j));
    json_object_object_add(o, "vpower_left_finish_j",
                           num(v->left_finish_j));
    json_object_object_add(o, "vpower_late_work_pct", num(v->late_pct));
    json_object_object_add(o, "vpower_late_core_s", num(v->late_core_s));
    json_object_object_add(o, "vpower_unmet_pct", num(v->unmet_pct));
    json_object_object_add(o, "vpower_mean_delay_ms", num(v->delay_ms));
    json_object_object_add(o, "vpower_j", num(c.vpower_j));
    json_object_object_add(o, "vpower_late_j", num(c.vpower_late_j));
    json_object_object_add(o, "rival_j", num(c.rival_j));
    json_object_object_add(o, "rival_late_j", num(c.rival_late_j));
    json_object_object_add(o, "ratio", num(c.vpower_j / c.rival_j));
    json_object_object_add(o, "late_j_per_core_s",
                           num(res->late_j_per_core_s));
    json_object_object_add(o, "breakeven_j_per_core_s",
                           num(c.breakeven_j_per_core_s));
    json_object_object_add(o, "cheapest_j_per_core_s",
                           num(res->cheap_j_per_core_s));
}

/* "per_vm": each trace VM's policy and, per policy that ran, its demand,
 * unmet share and ready time. */
static void
json_per_vm(json_object *root, const struct report_info *ri,
            const struct sim_result *res)
{
    char nb[4 * 4096 + 8];
    json_object *arr = json_object_new_array();

    for (size_t i = 0; i < res->n_vms; i++) {
        json_object *o = json_object_new_object(), *pols;
        const struct pol_vm_policy *vp =
            ri->vm_policy ? &ri->vm_policy[i] : NULL;

        json_object_object_add(o, "name",
            json_object_new_string(esc_name(ri->ts->vms[i].name, nb,
                                            sizeof nb)));
        json_object_object_add(o, "policy",
            json_object_new_string(pol_kind_name(vm_kind(ri, i))));
        json_object_object_add(o, "latency_us",
            json_object_new_int64(vp ? vp->latency_us : 0));
        json_object_object_add(o, "vcpus",
            json_object_new_int64(ri->ts->vms[i].n_vcpus));
        pols = json_object_new_object();
        for (int p = 0; p < SIM_P_LOWER; p++) {
            const struct sim_vm_row *v;
            json_object *q;

            if (!res->vm_rows[p]) {
                continue;
            }
            v = &res->vm_rows[p][i];
            q = json_object_new_object();
            json_object_object_add(q, "demand_core_s",
                                   num(v->demand_core_s));
            json_object_object_add(q, "unmet_pct",
                num(pct_of(v->unmet_core_s, v->demand_core_s)));
            json_object_object_add(q, "ready_s", num(v->ready_s));
            json_object_object_add(q, "ready_p99_pct",
                                   num(v->ready_p99_pct));
            json_object_object_add(pols, sim_pol_name(p), q);
        }
        json_object_object_add(o, "policies", pols);
        if (vm_kind(ri, i) == POL_PERFORMANCE
            && res->vm_rows[SIM_P_VPOWER]
            && res->vm_rows[SIM_P_PERFORMANCE]) {
            json_object_object_add(o, "perf_ready_ok",
                json_object_new_boolean(report_perf_vm_ok(
                    res->vm_rows[SIM_P_VPOWER][i].ready_p99_pct,
                    res->vm_rows[SIM_P_PERFORMANCE][i].ready_p99_pct)));
        }
        json_object_array_add(arr, o);
    }
    json_object_object_add(root, "per_vm", arr);
}

/* "model_check": the deciding model against the simulated meter. */
static void
json_model_check(json_object *root, const struct sim_model_check *c)
{
    json_object *o = json_object_new_object();

    json_object_object_add(o, "meter_j", num(c->meter_j));
    json_object_object_add(o, "model_j", num(c->model_j));
    json_object_object_add(o, "error_pct",
                           num(c->meter_j > 0 ? 100.0 * (c->model_j
                                                         - c->meter_j)
                                                / c->meter_j : 0.0));
    json_object_object_add(o, "original_error_pct",
                           num(c->orig_error_pct));
    json_object_object_add(o, "busy_scale", num(c->busy_scale));
    json_object_object_add(o, "idle_scale", num(c->idle_scale));
    json_object_object_add(o, "hosts_warned",
                           json_object_new_int((int) c->warned));
    json_object_object_add(o, "hosts_correcting",
                           json_object_new_int((int) c->correcting));
    json_object_object_add(root, "model_check", o);
}

int
report_json(FILE *f, const struct report_info *ri,
            const struct sim_result *res)
{
    json_object *root = json_object_new_object();
    json_object *rows = json_object_new_object();
    const char *s;
    char nb[4 * 4096 + 8];
    int rc = 0;

    json_object_object_add(root, "model",
        json_object_new_string(esc_name(ri->model, nb, sizeof nb)));
    json_object_object_add(root, "trace",
        json_object_new_string(esc_name(ri->trace, nb, sizeof nb)));
    json_object_object_add(root, "format",
                           json_object_new_string(ri->format));
    json_object_object_add(root, "seed", json_object_new_uint64(ri->seed));
    json_object_object_add(root, "vms", json_object_new_uint64(res->n_vms));
    json_object_object_add(root, "vcpus",
                           json_object_new_uint64(res->n_vcpus));
    json_object_object_add(root, "hosts", json_object_new_int(res->hosts));
    json_object_object_add(root, "hours", num(res->hours));
    json_object_object_add(root, "halt_poll_ns",
                           json_object_new_uint64(ri->halt_poll_ns));
    if (ri->turbo) {
        json_object_object_add(root, "turbo",
                               json_object_new_string(ri->turbo));
    }
    json_object_object_add(root, "migration_cost_us",
                           num(ri->migration_cost_us));
    json_object_object_add(root, "pin_cost_us", num(ri->pin_cost_us));
    for (int p = 0; p < SIM_N_POL; p++) {
        const struct sim_row *r = &res->rows[p];
        json_object *o, *ratio;

        if (!r->ran) {
            continue;
        }
        o = json_object_new_object();
        json_object_object_add(o, "energy_j", num(r->energy_j));
        json_object_object_add(o, "avg_power_w", num(r->avg_power_w));
        json_object_object_add(o, "captured_pct", num(captured(res, p)));
        if (p != SIM_P_LOWER) {
            json_object_object_add(o, "unmet_pct", num(r->unmet_pct));
            json_object_object_add(o, "left_pct", num(r->left_pct));
            json_object_object_add(o, "left_finish_j",
                                   num(r->left_finish_j));
            json_object_object_add(o, "ready_p50_pct",
                                   num(r->ready_p50_pct));
            json_object_object_add(o, "ready_p99_pct",
                                   num(r->ready_p99_pct));
            json_object_object_add(o, "pin_changes_per_h",
                                   num(r->pin_changes_h));
            json_object_object_add(o, "freq_changes_per_h",
                                   num(r->freq_changes_h));
            json_object_object_add(o, "avg_active_cpus",
                                   num(r->avg_active_cpus));
            json_object_object_add(o, "poll_cpus",
                                   num(per_s(res, r->poll_cpu_s)));
            json_object_object_add(o, "poll_ok_pct", num(r->poll_ok_pct));
            json_costs(o, r);
            if (p == SIM_P_VPOWER || sim_pol_is_variant(p)) {
                json_object_object_add(o, "fed_load_vcpus",
                                       num(per_s(res, r->fed_load_s)));
            }
        }
        ratio = json_object_new_object();
        for (int q = 0; q < SIM_N_POL; q++) {
            if (q != p && res->rows[q].ran && res->rows[q].energy_j > 0) {
                json_object_object_add(ratio, sim_pol_name(q),
                    num(r->energy_j / res->rows[q].energy_j));
            }
        }
        json_object_object_add(o, "energy_ratio_to", ratio);
        json_object_object_add(rows, sim_pol_name(p), o);
    }
    json_object_object_add(root, "policies", rows);
    json_equal(root, ri, res);
    if (ri->shape) {
        json_object *sh = json_object_new_object();

        json_object_object_add(sh, "vms",
                               json_object_new_uint64(ri->shape->n_vms));
        json_object_object_add(sh, "vcpus",
                               json_object_new_uint64(ri->shape->n_vcpus));
        json_object_object_add(sh, "mean_demand_cores",
                               num(ri->shape->mean_cores));
        json_object_object_add(sh, "peak_demand_cores",
                               num(ri->shape->peak_cores));
        json_object_object_add(sh, "repeat",
                               json_object_new_int(ri->repeat ? ri->repeat
                                                              : 1));
        json_object_object_add(root, "shape", sh);
    }
    if (ri->ts && (ri->per_vm || ri->vm_policy)) {
        json_per_vm(root, ri, res);
    }
    if (ri->balanced_energy_j > 0) {
        json_object_object_add(root, "vpower_all_balanced_energy_j",
                               num(ri->balanced_energy_j));
        json_object_object_add(root, "vpower_all_balanced_unmet_pct",
                               num(ri->balanced_unmet_pct));
    }
    if (res->check.ran) {
        json_model_check(root, &res->check);
    }
    s = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY
                                       | JSON_C_TO_STRING_NOSLASHESCAPE);
    if (fprintf(f, "%s\n", s) < 0) {
        rc = -EIO;
    }
    json_object_put(root);
    return rc;
}

/* Last component of 'path' (trailing slashes ignored) into 'buf'. */
static const char *
base_name(const char *path, char *buf, size_t len)
{
    size_t n = strlen(path), b;

    while (n > 1 && path[n - 1] == '/') {
        n--;
    }
    for (b = n; b > 0 && path[b - 1] != '/'; b--) {
    }
    snprintf(buf, len, "%.*s", (int) (n - b), path + b);
    return buf;
}

/* Writes 's' as a single-quoted gnuplot string ('' is a quote). */
static void
gp_quoted(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'') {
            fputc('\'', f);
        }
        fputc(*s, f);
    }
    fputc('\'', f);
}

/* Line style per policy (enum sim_pol order): distinct colours on
 * white, vpower thicker, the lower bound dashed. */
static const char *const plot_style[SIM_N_POL] = {
    [SIM_P_VPOWER] = "lw 2.5 lc rgb '#d62728'",
    [SIM_P_PERFORMANCE] = "lw 1.2 lc rgb '#1f77b4'",
    [SIM_P_SCHEDUTIL] = "lw 1.2 lc rgb '#2ca02c'",
    [SIM_P_POWERSAVE] = "lw 1.2 lc rgb '#9467bd'",
    [SIM_P_DPDK] = "lw 1.2 lc rgb '#ff7f0e'",
    [SIM_P_NOVA] = "lw 1.2 lc rgb '#8c564b'",
    [SIM_P_HWP_BALPERF] = "lw 1.2 lc rgb '#bcbd22'",
    [SIM_P_HWP_BALPOWER] = "lw 1.2 lc rgb '#7f7f7f'",
    [SIM_P_TUNED_VHOST] = "lw 1.2 lc rgb '#aec7e8'",
    [SIM_P_SCHED_NOTURBO] = "lw 1.2 lc rgb '#98df8a'",
    [SIM_P_VPOWER_NOHALT] = "lw 1 lc rgb '#e377c2'",
    [SIM_P_VPOWER_NOCAP] = "lw 1 lc rgb '#17becf'",
    [SIM_P_LOWER] = "lw 1.2 lc rgb '#555555' dt 2",
};

int
report_plot(const char *path, const struct report_info *ri,
            const struct sim_result *res)
{
    FILE *f = fopen(path, "w");
    bool first = true;
    char title[1024], esc[4 * sizeof title], out[4096], tb[256], mb[256];
    double tics;

    if (!f) {
        return -errno;
    }
    fprintf(f, "# vpower-sim plot: gnuplot %s\n", path);
    fprintf(f, "$data << EOD\n# hours");
    for (int p = 0; p < SIM_N_POL; p++) {
        if (res->rows[p].ran) {
            fprintf(f, " %s_W %s_cpus", sim_pol_name(p), sim_pol_name(p));
        }
    }
    fprintf(f, "\n");
    for (size_t i = 0; i < res->n_intervals; i++) {
        /* Each interval's mean, plotted at its start. */
        fprintf(f, "%.4f", i * res->hours / res->n_intervals);
        for (int p = 0; p < SIM_N_POL; p++) {
            if (res->rows[p].ran) {
                fprintf(f, " %.2f %.2f", res->rows[p].power_w[i],
                        res->rows[p].active_cpus[i]);
            }
        }
        fprintf(f, "\n");
    }
    /* Escaped: a newline in a name would end the gnuplot command. */
    snprintf(title, sizeof title, "%s (%s): %zu VMs / %zu vCPUs on %u "
             "host(s) of %s, %g h, seed %llu",
             base_name(ri->trace, tb, sizeof tb), ri->format, res->n_vms,
             res->n_vcpus, res->hosts, base_name(ri->model, mb, sizeof mb),
             res->hours, ri->seed);
    tics = res->hours <= 6 ? 1 : res->hours <= 24 ? 2
           : res->hours <= 96 ? 6 : 24;
    fprintf(f, "EOD\nset terminal svg size 1000,800 noenhanced "
            "background rgb 'white'\nset output ");
    snprintf(out, sizeof out, "%s.svg", path);
    gp_quoted(f, out);
    fprintf(f, "\nset multiplot layout 2,1 title ");
    gp_quoted(f, esc_name(title, esc, sizeof esc));
    fprintf(f, "\nset key outside right top\nset grid\n"
            "set xrange [0:%g]\nset xtics %g\nset xlabel 'time (h)'\n"
            "set ylabel 'power, all hosts (W)'\nplot ", res->hours, tics);
    /* The signal variants are in the data but not drawn: they are
     * vpower with an input off, not policies. */
    for (int p = 0, col = 2; p < SIM_N_POL; p++) {
        if (res->rows[p].ran) {
            if (!sim_pol_is_variant(p)) {
                fprintf(f, "%s$data using 1:%d with lines %s title '%s'",
                        first ? "" : ", ", col, plot_style[p],
                        sim_pol_name(p));
                first = false;
            }
            col += 2;
        }
    }
    fprintf(f, "\nset ylabel 'active CPUs per host'\nset yrange [0:*]\n"
            "plot ");
    first = true;
    for (int p = 0, col = 3; p < SIM_N_POL; p++) {
        if (res->rows[p].ran) {
            if (p != SIM_P_LOWER && !sim_pol_is_variant(p)) {
                fprintf(f, "%s$data using 1:%d with lines %s title '%s'",
                        first ? "" : ", ", col, plot_style[p],
                        sim_pol_name(p));
                first = false;
            }
            col += 2;
        }
    }
    fprintf(f, "\nunset multiplot\n");
    return fclose(f) ? -errno : 0;
}
