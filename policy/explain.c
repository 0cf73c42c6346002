/* policy/explain.c -- Names and human explanations of policy decisions.
 *
 * vpowerctl and the exporter show operators why a VM sits where it does;
 * the text is built here, next to the policy, so it says what the policy
 * actually did.  Kind names are also the configuration file's words. */

#include "policy/policy.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "policy/internal.h"
#include "policy/state.h"

static const char *const kind_names[POL_N_KINDS] = {
    [POL_BALANCED] = "balanced",
    [POL_PERFORMANCE] = "performance",
    [POL_POWERSAVE] = "powersave",
};

const char *
pol_kind_name(enum pol_kind k)
{
    return (unsigned) k < POL_N_KINDS ? kind_names[k] : "unknown";
}

int
pol_kind_parse(const char *name, enum pol_kind *out)
{
    for (unsigned i = 0; name && i < POL_N_KINDS; i++) {
        if (!strcmp(name, kind_names[i])) {
            *out = (enum pol_kind) i;
            return 0;
        }
    }
    return -EINVAL;
}

const char *
pol_reason_text(enum pol_reason r)
{
    switch (r) {
    case POL_R_PACKED:
        return "packed with other VMs on the active cores";
    case POL_R_PERFORMANCE:
        return "own cores: performance policy";
    case POL_R_LATENCY_HINT:
        return "own cores: latency-critical hint from the guest";
    case POL_R_OVERRIDE:
        return "spread: host-wide performance override";
    case POL_R_READY_SPREAD:
        return "spread: vCPUs waited for a CPU above the ready threshold";
    case POL_R_UNMANAGED:
        return "unmanaged: pinned by the administrator";
    case POL_R_WARMUP:
        return "warming up: new vCPUs count as fully busy";
    case POL_R_SMT_ISOLATED:
        return "whole cores of its own: it may not share SMT siblings "
               "with other VMs";
    case POL_N_REASONS:
    default:
        return "unknown";
    }
}

void
pol_explain(const struct pol_state *st, const struct pol_input *in,
            const struct pol_plan *plan, size_t vm, char *buf, size_t len)
{
    const struct pol_vm *v;
    char cpus[256];
    uint64_t avg = 0;
    int r;

    if (!len) {
        return;
    }
    if (!in || !plan || vm >= in->n_vms || vm >= plan->n_vms) {
        snprintf(buf, len, "no such VM");
        return;
    }
    v = &in->vms[vm];
    for (uint32_t j = 0; j < v->n_vcpus && v->first_vcpu + j < in->n_vcpus;
         j++) {
        avg += in->vcpus[v->first_vcpu + j].load.avg_cap;
    }
    cpus[0] = '\0';
    if (v->n_vcpus && v->first_vcpu < plan->n_vcpus) {
        cpuset_format(&plan->vcpu_allowed[v->first_vcpu], cpus, sizeof cpus);
    }
    r = plan->vm_reason[vm] < POL_N_REASONS ? plan->vm_reason[vm]
                                            : POL_N_REASONS;
    snprintf(buf, len,
             "VM %u (%s, %u vCPUs, load %llu capacity units): %s; "
             "vCPU 0 may run on CPUs %s; %u cores active in the packed "
             "set, %u CPUs awake, estimated host power %u mW.  %s",
             v->id, pol_kind_name(v->policy.kind), v->n_vcpus,
             (unsigned long long) avg, pol_reason_text((enum pol_reason) r),
             cpus[0] ? cpus : "-", pol_state_active_cores(st),
             cpuset_count(&plan->active), plan->est_power_mw,
             r == POL_R_PACKED || r == POL_R_WARMUP
             ? "More load or ready time spreads it at once; less load "
               "packs it one core per dwell time."
             : r == POL_R_UNMANAGED ? "vpower never moves it."
             : r == POL_R_SMT_ISOLATED ? "Its cores follow its own load; "
               "set share_smt to pack it with other VMs."
             : "Set policy 'balanced' or end the hint/override to pack it.");
    if (in->n_vms == plan->n_vms) {
        iso_explain(st, in, vm, buf, len);
    }
}
