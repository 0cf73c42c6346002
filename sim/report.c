/* sim/report.c -- Text table, JSON and gnuplot output of a run. */

#include <config.h>

#include "sim/report.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

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

void
report_text(FILE *f, const struct report_info *ri,
            const struct sim_result *res)
{
    const struct sim_row *perf = &res->rows[SIM_P_PERFORMANCE];

    fprintf(f, "model %s, trace %s (%s), %zu VMs / %zu vCPUs on %u "
            "host(s), %.1f h, seed %llu\n", ri->model, ri->trace,
            ri->format, res->n_vms, res->n_vcpus, res->hosts, res->hours,
            ri->seed);
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
            if (res->rows[p].ran && res->rows[p].energy_j > 0) {
                fprintf(f, " %s %.4f", sim_pol_name(p),
                        res->rows[SIM_P_VPOWER].energy_j
                        / res->rows[p].energy_j);
            }
        }
        fprintf(f, "\n");
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

int
report_json(FILE *f, const struct report_info *ri,
            const struct sim_result *res)
{
    json_object *root = json_object_new_object();
    json_object *rows = json_object_new_object();
    const char *s;
    int rc = 0;

    json_object_object_add(root, "model", json_object_new_string(ri->model));
    json_object_object_add(root, "trace", json_object_new_string(ri->trace));
    json_object_object_add(root, "format",
                           json_object_new_string(ri->format));
    json_object_object_add(root, "seed", json_object_new_uint64(ri->seed));
    json_object_object_add(root, "vms", json_object_new_uint64(res->n_vms));
    json_object_object_add(root, "vcpus",
                           json_object_new_uint64(res->n_vcpus));
    json_object_object_add(root, "hosts", json_object_new_int(res->hosts));
    json_object_object_add(root, "hours", num(res->hours));
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
    s = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY
                                       | JSON_C_TO_STRING_NOSLASHESCAPE);
    if (fprintf(f, "%s\n", s) < 0) {
        rc = -EIO;
    }
    json_object_put(root);
    return rc;
}

int
report_plot(const char *path, const struct report_info *ri,
            const struct sim_result *res)
{
    FILE *f = fopen(path, "w");
    bool first = true;

    if (!f) {
        return -errno;
    }
    fprintf(f, "# vpower-sim plot: gnuplot %s\n", path);
    fprintf(f, "$data << EOD\n# min");
    for (int p = 0; p < SIM_N_POL; p++) {
        if (res->rows[p].ran) {
            fprintf(f, " %s_W %s_cpus", sim_pol_name(p), sim_pol_name(p));
        }
    }
    fprintf(f, "\n");
    for (size_t i = 0; i < res->n_intervals; i++) {
        fprintf(f, "%.1f", i * res->hours * 60.0 / res->n_intervals);
        for (int p = 0; p < SIM_N_POL; p++) {
            if (res->rows[p].ran) {
                fprintf(f, " %.2f %.2f", res->rows[p].power_w[i],
                        res->rows[p].active_cpus[i]);
            }
        }
        fprintf(f, "\n");
    }
    fprintf(f, "EOD\nset terminal svg size 1000,800\n"
            "set output '%s.svg'\nset multiplot layout 2,1 title "
            "'%s on %s'\nset key outside right\nset xlabel 'minutes'\n"
            "set ylabel 'power (W, all hosts)'\nplot ", path, ri->trace,
            ri->model);
    for (int p = 0, col = 2; p < SIM_N_POL; p++) {
        if (res->rows[p].ran) {
            fprintf(f, "%s$data using 1:%d with lines title '%s'",
                    first ? "" : ", ", col, sim_pol_name(p));
            first = false;
            col += 2;
        }
    }
    fprintf(f, "\nset ylabel 'active CPUs per host'\nplot ");
    first = true;
    for (int p = 0, col = 3; p < SIM_N_POL; p++) {
        if (res->rows[p].ran) {
            if (p != SIM_P_LOWER) {
                fprintf(f, "%s$data using 1:%d with lines title '%s'",
                        first ? "" : ", ", col, sim_pol_name(p));
                first = false;
            }
            col += 2;
        }
    }
    fprintf(f, "\nunset multiplot\n");
    return fclose(f) ? -errno : 0;
}
