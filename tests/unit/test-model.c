/* tests/unit/test-model.c -- energy-model parser and queries.
 *
 * Every shipped model file must parse (read from $VPOWER_SRCDIR), every
 * kind of malformed line must be rejected with its line number, and
 * random garbage must never crash the parser. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "policy/model.h"
#include "tests/unit/shipped-model.h"

static struct pol_model *m;

static void
test_shipped(void **state)
{
    static const char *files[] = { "xeon-r640-2s.model", "juno-r0.model" };
    char err[256];

    (void) state;
    for (size_t i = 0; i < 2; i++) {
        char *t = shipped_model_text(files[i]);

        if (pol_model_parse(m, t, err, sizeof err)) {
            fail_msg("%s: %s", files[i], err);
        }
        free(t);
    }
    /* Juno: A57 on CPUs 1-2, capacity per OPP. */
    assert_int_equal(m->n_cpus, 6);
    assert_int_equal(m->n_domains, 2);
    assert_int_equal(pol_model_capacity_at(m, 1, 0), 1024);
    assert_int_equal(pol_model_capacity_at(m, 0, 0), 447);
    assert_int_equal(pol_model_capacity_at(m, 1, 450000), 417);
    assert_int_equal(m->domains[0].opps[4].cluster_mw, 64);
    assert_int_equal(pol_model_idle_for_latency(m, 1, 0), 2);
    assert_int_equal(pol_model_idle_for_latency(m, 1, 10), 0);
    assert_int_equal(pol_model_idle_for_latency(m, 1, 300), 1);

    {
        char *t = shipped_model_text("xeon-r640-2s.model");

        assert_int_equal(pol_model_parse(m, t, err, sizeof err), 0);
        free(t);
    }
    assert_int_equal(m->n_cpus, 112);
    assert_int_equal(m->n_domains, 56);
    assert_int_equal(m->n_pkgs, 2);
    assert_int_equal(m->cpu_core[56 + 7], 7);
    assert_int_equal(m->cpu_domain[56 + 7], m->cpu_domain[7]);
    assert_int_equal(m->domains[m->cpu_domain[30]].pkg, 1);
    assert_int_equal(m->domains[0].nominal_opp, 7);
    assert_int_equal(m->smt_capacity_pct, 125);
    assert_int_equal(pol_model_idle_for_latency(m, 3, 100), 1);
    assert_int_equal(pol_model_idle_for_latency(m, 3, 0), 2);
}

#define GOOD_HEAD "cpus 4\nsmt 0-1 2-3\npackage 0 0-3 10 5\n"
#define GOOD_DOM "domain 0-3\nopp 1000 512 100\nopp 2000 1024 300\n" \
                 "idle C1 1 1 10\nidle C6 100 300 1\n"

static void
test_good_minimal(void **state)
{
    char err[128];

    (void) state;
    assert_int_equal(pol_model_parse(m, GOOD_HEAD GOOD_DOM, err,
                                     sizeof err), 0);
    assert_int_equal(m->cpu_core[2], 0);
    assert_int_equal(pol_model_capacity_at(m, 0, 1500), 768);
    assert_int_equal(pol_model_capacity_at(m, 0, 500), 256);
    assert_int_equal(pol_model_capacity_at(m, 0, 9000), 1024);
    assert_int_equal(pol_model_capacity_at(m, 9, 0), 0);
    /* per-core split with SMT. */
    assert_int_equal(pol_model_parse(m, "cpus 4\nsmt 0-1 2-3\n"
                     "domain 0-3 per-core\nopp 1000 1024 5\n"
                     "idle C1 1 1 1\n", err, sizeof err), 0);
    assert_int_equal(m->n_domains, 2);
    assert_int_equal(m->cpu_domain[3], 1);
    assert_int_equal(m->n_pkgs, 1);
}

struct bad {
    const char *text;
    const char *err;           /* Expected prefix "LINE: ..." */
};

static void
test_bad_lines(void **state)
{
    static const struct bad bad[] = {
        { "cpus 4\nbogus 1\n", "2: unknown directive" },
        { "bogus 1\n", "1: 'bogus' before 'cpus'" },
        { "cpus 0\n", "1: bad cpu count" },
        { "cpus x\n", "1: bad cpu count" },
        { "cpus 4\ncpus 4\n", "2: duplicate" },
        { "smt 0-1 2-3\n", "1: 'smt' before 'cpus'" },
        { "cpus 4\nsmt 0-1 2\n", "2: smt cpu list '2' differs" },
        { "cpus 4\nsmt 0-1 1-2\n", "2: smt cpu list '1-2' overlaps" },
        { "cpus 4\nsmt 0-1 2-9\n", "2: bad smt cpu list" },
        { "cpus 4\npackage 1 0-3 1 1\n", "2: bad package id" },
        { "cpus 4\npackage 0 0-3 x 1\n", "2: bad uncore active mW" },
        { "cpus 4\npackage 0 0-3 1\n", "2: 'package' takes" },
        { "cpus 4\nopp 1 1 1\n", "2: 'opp' outside a domain" },
        { "cpus 4\ndomain 0-3\nopp 2000 1024 1\nopp 1000 512 1\n",
          "4: opp kHz '1000' not above" },
        { "cpus 4\ndomain 0-3\nopp 1000 1024 1\nopp 2000 512 1\n",
          "4: opp capacity '512' below" },
        { "cpus 4\ndomain 0-3\nopp 1000 0 1\n", "3: bad opp capacity" },
        { "cpus 4\ndomain 0-3\nopp 1000 99999 1\n", "3: bad opp capacity" },
        { "cpus 4\ndomain 0-3\nopp 1000 1024 1 fast\n",
          "3: bad opp option 'fast'" },
        { "cpus 4\ndomain 0-3\nopp 1000 1024 -1\n", "3: bad opp busy mW" },
        { "cpus 4\ndomain 0-3\nopp 1000 1024 1\nidle C6 100 300\n",
          "4: 'idle' takes" },
        { "cpus 4\ndomain 0-3\nopp 1000 1024 1\nidle C6 100 300 1\n"
          "idle C1 1 1 1\n", "5: idle exit latency '1' below" },
        { "cpus 4\ndomain 0-3\nopp 1000 1024 1\nidle C1 1 300 1\n"
          "idle C6 100 1 1\n", "5: idle target residency '1' below" },
        { "cpus 4\ndomain 0-3\nopp 1000 1024 1\n", "4: domain ends without"
          " an 'idle'" },
        { "cpus 4\ndomain 0-3\nidle C1 1 1 1\n", "4: domain ends without"
          " an 'opp'" },
        { "cpus 4\ndomain 0-3\nopp 1000 1024 1 turbo\nidle C1 1 1 1\n",
          "5: domain has only turbo" },
        { "cpus 4\ndomain 0-1\nopp 1000 1024 1\nidle C1 1 1 1\n",
          "5: cpu 2 is in no domain" },
        { "cpus 4\ndomain 0-3\nopp 1000 1024 1\nidle C1 1 1 1\n"
          "domain 3\n", "5: domain cpu list '3' overlaps" },
        { "cpus 4\ndomain 0-4\n", "2: bad domain cpu list" },
        { "cpus 4\ndomain 0-3 sideways\n", "2: bad domain option" },
        { "cpus 4\nsmt 0-1 2-3\ndomain 0-1\nopp 1 1 1\nidle C1 1 1 1\n"
          "domain 2-3\nopp 1 1 1\nidle C1 1 1 1\n",
          "9: smt siblings 0 and 2 in different domains" },
        { "cpus 4\npackage 0 0-1 1 1\npackage 1 2-3 1 1\ndomain 0-3\n"
          "opp 1 1 1\nidle C1 1 1 1\n", "7: domain 0 spans packages" },
        { "cpus 4\nsmt-capacity 99\n", "2: bad smt capacity" },
        { "cpus 4\ncluster 1 1\n", "2: 'cluster' outside" },
        { "cpus 4\n\x01\n", "2: bad character" },
        { "", "1: no 'cpus' directive" },
    };
    char err[256];

    (void) state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int r = pol_model_parse(m, bad[i].text, err, sizeof err);

        if (r != -22 || strncmp(err, bad[i].err, strlen(bad[i].err))) {
            fail_msg("case %zu: got %d '%s', want '%s'", i, r, err,
                     bad[i].err);
        }
    }
}

static void
test_garbage(void **state)
{
    unsigned seed = 4242;
    char text[2048], err[64];
    static const char *words[] = {
        "cpus", "smt", "package", "domain", "opp", "idle", "cluster",
        "per-core", "turbo", "0-3", "1", "0", "4294967296", "#", "\n",
        "1023", "0-1023", "-", ",", "platform", " ", "99999999999",
    };

    (void) state;
    srand(seed);
    for (int i = 0; i < 2000; i++) {
        size_t n = 0;

        while (n < sizeof text - 32) {
            const char *w = words[rand() % (sizeof words / sizeof words[0])];
            size_t l = strlen(w);

            if (rand() % 50 == 0) {
                break;
            }
            memcpy(text + n, w, l);
            n += l;
            text[n++] = rand() % 4 ? ' ' : '\n';
        }
        text[n] = '\0';
        /* Must return without crashing; the result does not matter. */
        (void) pol_model_parse(m, text, err, sizeof err);
    }
    /* Tiny error buffers are still terminated. */
    assert_int_equal(pol_model_parse(m, "x", err, 3), -22);
    assert_int_equal(strlen(err), 2);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shipped),
        cmocka_unit_test(test_good_minimal),
        cmocka_unit_test(test_bad_lines),
        cmocka_unit_test(test_garbage),
    };
    int r;

    m = calloc(1, sizeof *m);
    r = cmocka_run_group_tests(tests, NULL, NULL);
    free(m);
    return r;
}
