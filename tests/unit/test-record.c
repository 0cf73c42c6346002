/* tests/unit/test-record.c -- vpowerd's replay record writer.
 *
 * The record must let a replayer rebuild the exact model (its text is
 * parsed back and compared), must carry every pol_load_update argument
 * and the plan, and must stay bounded (rotation to FILE.1 with a fresh
 * header, one old file kept). */

#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "manager/daemon.h"
#include "manager/record.h"
#include "tests/unit/shipped-model.h"

static char *
slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    char *text;
    long n;

    if (!f) {
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    text = calloc(1, (size_t) n + 1);
    assert_int_equal(fread(text, 1, (size_t) n, f), (size_t) n);
    fclose(f);
    return text;
}

/* Text -> model -> text -> model: same text, same struct contents. */
static void
round_trip(const struct pol_model *m)
{
    static struct pol_model back;
    char err[256], *t1, *t2;

    t1 = rec_model_text(m);
    assert_non_null(t1);
    if (pol_model_parse(&back, t1, err, sizeof err) < 0) {
        fail_msg("recorded model does not parse: %s\n%s", err, t1);
    }
    t2 = rec_model_text(&back);
    assert_string_equal(t1, t2);
    assert_int_equal(back.n_cpus, m->n_cpus);
    assert_int_equal(back.n_domains, m->n_domains);
    assert_int_equal(back.n_pkgs, m->n_pkgs);
    assert_int_equal(back.platform_mw, m->platform_mw);
    assert_int_equal(back.smt_capacity_pct, m->smt_capacity_pct);
    assert_memory_equal(back.cpu_domain, m->cpu_domain,
                        sizeof m->cpu_domain);
    for (unsigned c = 0; c < m->n_cpus; c++) {
        /* Core ids may be renumbered; sibling groups must not change. */
        for (unsigned o = 0; o < m->n_cpus; o++) {
            assert_int_equal(back.cpu_core[c] == back.cpu_core[o],
                             m->cpu_core[c] == m->cpu_core[o]);
        }
    }
    for (unsigned d = 0; d < m->n_domains; d++) {
        const struct pol_domain *a = &m->domains[d], *b = &back.domains[d];

        assert_true(cpuset_equal(&a->cpus, &b->cpus));
        assert_int_equal(a->n_opps, b->n_opps);
        assert_int_equal(a->nominal_opp, b->nominal_opp);
        assert_int_equal(a->n_idle, b->n_idle);
        assert_int_equal(a->cluster_active_mw, b->cluster_active_mw);
        assert_int_equal(a->cluster_idle_mw, b->cluster_idle_mw);
        for (unsigned o = 0; o < a->n_opps; o++) {
            assert_int_equal(a->opps[o].freq_khz, b->opps[o].freq_khz);
            assert_int_equal(a->opps[o].capacity, b->opps[o].capacity);
            assert_int_equal(a->opps[o].busy_mw, b->opps[o].busy_mw);
            assert_int_equal(a->opps[o].turbo, b->opps[o].turbo);
            assert_int_equal(a->opps[o].cluster_mw, b->opps[o].cluster_mw);
        }
        for (unsigned i = 0; i < a->n_idle; i++) {
            assert_string_equal(a->idle[i].name, b->idle[i].name);
            assert_int_equal(a->idle[i].exit_latency_us,
                             b->idle[i].exit_latency_us);
            assert_int_equal(a->idle[i].target_residency_us,
                             b->idle[i].target_residency_us);
            assert_int_equal(a->idle[i].power_mw, b->idle[i].power_mw);
        }
    }
    free(t1);
    free(t2);
}

static void
test_model_round_trip(void **state)
{
    static struct pol_model m;

    (void) state;
    load_shipped_model(&m, "xeon-r640-2s.model");
    round_trip(&m);
    load_shipped_model(&m, "juno-r0.model");
    round_trip(&m);
}

/* A small daemon state: two VMs, three vCPUs, 2 CPUs. */
struct fake {
    struct vpd d;
    struct vpd_vm vm[2];
    struct vpd_vcpu vc[3];
    struct pol_vm pvm[2];
    struct pol_vcpu pvc[3];
    struct vpd_vm *vm_of[2];
    struct pol_input in;
};

static void
fake_init(struct fake *f)
{
    static const char model[] =
        "name two\ncpus 2\nplatform 1000\n"
        "domain 0\n opp 1000000 512 500\n opp 2000000 1024 1500\n"
        " idle POLL 0 0 800\n idle C6 100 400 50\n"
        "domain 1\n opp 1000000 512 500\n opp 2000000 1024 1500\n"
        " idle POLL 0 0 800\n idle C6 100 400 50\n";
    char err[256];

    memset(f, 0, sizeof *f);
    assert_int_equal(pol_model_parse(&f->d.model, model, err, sizeof err),
                     0);
    f->d.n_cpus = 2;
    for (unsigned c = 0; c < 2; c++) {
        f->d.cpus[c].present = f->d.cpus[c].online = true;
        f->d.cpus[c].managed = true;
        f->d.cpus[c].freq_khz = 2000000;
        f->d.cpus[c].idle.n_states = 2;
        f->d.cpus[c].idle.time_us[1] = 1000;
    }
    f->d.plan = pol_plan_create(2, 3);
    f->d.plan->n_vms = 2;
    f->d.plan->n_vcpus = 3;
    cpuset_set(&f->d.plan->active, 1);
    f->d.plan->dom_freq_khz[1] = 1000000;
    for (unsigned k = 0; k < 3; k++) {
        cpuset_set(&f->d.plan->vcpu_allowed[k], 1);
        f->d.plan->vcpu_vm[k] = k ? 1 : 0;
    }
    snprintf(f->vm[0].dom.name, sizeof f->vm[0].dom.name, "web one");
    snprintf(f->vm[1].dom.name, sizeof f->vm[1].dom.name, "db");
    for (unsigned v = 0; v < 2; v++) {
        snprintf(f->vm[v].dom.uuid, sizeof f->vm[v].dom.uuid,
                 "0000000%u-0000-4000-8000-000000000000", v);
        f->vm_of[v] = &f->vm[v];
        f->pvm[v].id = v;
        f->pvm[v].n_vcpus = v ? 2 : 1;
        f->pvm[v].first_vcpu = v ? 1 : 0;
        f->vm[v].n_vcpus = v ? 2 : 1;
        f->vm[v].vcpus = v ? &f->vc[1] : &f->vc[0];
    }
    f->vm[0].next = &f->vm[1];
    f->d.vms = &f->vm[0];
    f->d.n_vms = 2;
    f->pvm[1].hints.boost_until_ns = 777;
    for (unsigned k = 0; k < 3; k++) {
        f->vc[k].idx = k ? k - 1 : 0;
        f->vc[k].cpu = 1;
        f->vc[k].busy_ns = 1000 + k;
        f->vc[k].ready_ns = 10 + k;
        f->vc[k].sampled = k != 2;     /* vCPU 2 is being re-primed. */
        f->pvc[k].vm = k ? 1 : 0;
        f->pvc[k].idx = f->vc[k].idx;
        f->pvc[k].cpu = 1;
    }
    f->in.vms = f->pvm;
    f->in.n_vms = 2;
    f->in.vcpus = f->pvc;
    f->in.n_vcpus = 3;
    cpuset_set(&f->in.managed, 0);
    cpuset_set(&f->in.managed, 1);
    f->in.online = f->in.managed;
    f->in.now_ns = 123456789;
}

/* The record is written as root: a symlink, a FIFO, a file another user
 * owns or a directory others may write are refused (and a FIFO does not
 * block the open). */
static void
test_untrusted_paths(void **state)
{
    struct fake *f = calloc(1, sizeof *f);
    char dir[] = "/tmp/test-record.XXXXXX", path[256], err[512];
    struct pol_config pc;
    struct rec *r;

    (void) state;
    fake_init(f);
    pol_config_default(&pc);
    assert_non_null(mkdtemp(dir));

    snprintf(path, sizeof path, "%s/link", dir);
    assert_int_equal(symlink("target", path), 0);
    r = rec_open(path, 4096, &f->d.model, "x", &pc, err, sizeof err);
    assert_null(r);
    assert_non_null(strstr(err, "symbolic link"));
    unlink(path);

    snprintf(path, sizeof path, "%s/fifo", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    r = rec_open(path, 4096, &f->d.model, "x", &pc, err, sizeof err);
    assert_null(r);
    assert_non_null(strstr(err, "not a regular file"));
    unlink(path);

    if (geteuid() == 0) {
        int fd;

        snprintf(path, sizeof path, "%s/theirs", dir);
        fd = open(path, O_WRONLY | O_CREAT, 0644);
        assert_true(fd >= 0);
        assert_int_equal(fchown(fd, 65534, 65534), 0);
        close(fd);
        r = rec_open(path, 4096, &f->d.model, "x", &pc, err, sizeof err);
        assert_null(r);
        assert_non_null(strstr(err, "owned by uid 65534"));
        unlink(path);
    }

    assert_int_equal(chmod(dir, 0777), 0);
    snprintf(path, sizeof path, "%s/rec", dir);
    r = rec_open(path, 4096, &f->d.model, "x", &pc, err, sizeof err);
    assert_null(r);
    assert_non_null(strstr(err, "writable by every user"));
    assert_non_null(strstr(err, path));
    assert_int_equal(rmdir(dir), 0);
    pol_plan_destroy(f->d.plan);
    free(f);
}

static void
test_blocks_and_rotation(void **state)
{
    struct fake *f = calloc(1, sizeof *f);
    char dir[] = "/tmp/test-record.XXXXXX", path[256], old[256];
    uint32_t khz[POL_MAX_CPUS] = { 2000000, 1500000 };
    uint32_t ppm[POL_MAX_CPUS] = { 10, 20 };
    struct pol_config pc;
    struct rec *r;
    char err[256], *text, *text1;
    struct stat sb;

    (void) state;
    fake_init(f);
    pol_config_default(&pc);
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/rec", dir);
    snprintf(old, sizeof old, "%s/rec.1", dir);

    r = rec_open("/nonexistent/dir/rec", 4096, &f->d.model, "x", &pc, err,
                 sizeof err);
    assert_null(r);
    assert_non_null(strstr(err, "/nonexistent/dir/rec"));

    r = rec_open(path, 4096, &f->d.model, "/etc/m.model", &pc, err,
                 sizeof err);
    assert_non_null(r);
    assert_int_equal(rec_cycle(r, &f->d, &f->in, f->vm_of, true, 1000000000,
                               khz, ppm), 0);
    f->in.now_ns += 5;
    assert_int_equal(rec_cycle(r, &f->d, &f->in, f->vm_of, false, 0, khz,
                               ppm), 0);
    text = slurp(path);
    assert_non_null(text);
    assert_true(!strncmp(text, "VPREC 1 vpowerd ", 16));
    assert_non_null(strstr(text, "\nCONF headroom_pct=20 "));
    assert_non_null(strstr(text, "\nMODEL /etc/m.model "));
    assert_non_null(strstr(text, "\nMT cpus 2\n"));
    assert_non_null(strstr(text, "\nT 123456789 1000000000 sample 0 0-1 0-1 "
                                 "0,0\n"));
    assert_non_null(strstr(text, "\nC 1 1500000 2000000 20 ?,?\n"));
    /* Names are one token; the hints are all there. */
    assert_non_null(strstr(text, "\nVM 0 web%20one 00000000-"));
    assert_non_null(strstr(text, " 2 0 0 777 0 0\n"));
    assert_non_null(strstr(text, "\nS 1 0 1 1500000 1001 11 1000000000\n"));
    assert_null(strstr(text, "\nS 1 1 "));      /* Re-primed: no sample. */
    assert_non_null(strstr(text, "\nV 1 1 1\n"));
    assert_non_null(strstr(text, "\nP 1 - "));
    assert_non_null(strstr(text, " 0,1000000 -1"));
    assert_non_null(strstr(text, "\nPV 1 0 - 1 1\n"));
    assert_non_null(strstr(text, "\nT 123456794 0 kick 0 "));
    assert_null(strstr(strstr(text, "kick"), "\nC "));
    free(text);

    /* Past 4096 bytes: renamed to rec.1, a new file with a header. */
    for (int i = 0; i < 40 && !rec_rotations(r); i++) {
        assert_int_equal(rec_cycle(r, &f->d, &f->in, f->vm_of, true,
                                   1000000000, khz, ppm), 0);
    }
    assert_int_equal(rec_rotations(r), 1);
    assert_int_equal(stat(old, &sb), 0);
    assert_true(sb.st_size >= 4096 && sb.st_size < 8192);
    text1 = slurp(path);
    assert_true(!strncmp(text1, "VPREC 1 ", 8));
    assert_non_null(strstr(text1, "\nL 00000001-0000-4000-8000-000000000000 "
                                  "1 "));
    free(text1);
    for (int i = 0; i < 200 && rec_rotations(r) < 3; i++) {
        assert_int_equal(rec_cycle(r, &f->d, &f->in, f->vm_of, true,
                                   1000000000, khz, ppm), 0);
    }
    assert_int_equal(rec_rotations(r), 3);
    assert_int_equal(stat(path, &sb), 0);
    assert_true(sb.st_size < 8192);
    snprintf(old, sizeof old, "%s/rec.2", dir);
    assert_int_not_equal(stat(old, &sb), 0);       /* One old file only. */
    rec_close(r);
    snprintf(old, sizeof old, "rm -rf '%s'", dir);
    assert_int_equal(system(old), 0);
    pol_plan_destroy(f->d.plan);
    free(f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_round_trip),
        cmocka_unit_test(test_blocks_and_rotation),
        cmocka_unit_test(test_untrusted_paths),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
