/* manager/calibrate/vpower-calibrate.c -- Measures this host's energy model.
 *
 * A program of its own rather than a vpowerd mode: calibration must own
 * the host for minutes (fixed frequencies, idle states held, loops on
 * every core) while vpowerd's job is to change exactly those limits, so
 * the two cannot run at once; a separate program has no event loop,
 * libvirt or control socket to keep quiet, and refuses to start while
 * vpowerd answers on its control socket.  It shares vpowerd's pieces:
 * the sysfs host driver with its journal, the energy model from sysfs
 * and the meters.
 *
 * Order: restore what a crashed earlier run left in the journal; refuse
 * while vpowerd runs (unless --force); open the host driver with a
 * fresh journal and the best meter; print the plan and its time bound;
 * measure (calib.c), restore every limit, fit and write the model. */

#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "manager/calibrate/calib.h"
#include "manager/calibrate/calib_loops.h"
#include "manager/drivers/drv.h"
#include "manager/journal.h"
#include "manager/drivers/meter.h"
#include "manager/control/proto.h"
#include "manager/drivers/sysfs.h"

#define DEFAULT_JOURNAL "/run/vpower/calibrate.journal"

struct args {
    const char *output;          /* NULL: stdout. */
    const char *sysfs_root;
    const char *journal;
    const char *vpowerd_socket;
    struct meter_roots roots;
    struct calib_opts opts;
    bool force, restore_only;
    bool dry_run;                /* Plan and print only; writes nothing. */
};

static void
usage(FILE *f)
{
    fprintf(f,
"usage: vpower-calibrate [options]\n"
"Measures this host's power at each frequency point and idle state and\n"
"writes an energy model (docs/energy-model.md).\n"
"  -o, --output FILE           model file (default: standard output)\n"
"  -s, --seconds-per-point S   time in each state (default 5)\n"
"      --name NAME             model name (default calibrated)\n"
"      --deepest-idle-mw MW    assumed core power in the deepest idle\n"
"                              state (default 0)\n"
"      --package-idle-mw MW    assumed uncore power per package in\n"
"                              package idle (default 0)\n"
"      --sysfs-root DIR        CPU tree (default %s)\n"
"      --powercap-root DIR     (default %s; '' = none)\n"
"      --hwmon-root DIR        (default %s; '' = none)\n"
"      --ipmi-dev PATH         (default %s; '' = none)\n"
"      --journal PATH          restore journal (default %s)\n"
"      --vpowerd-socket PATH   refuse while vpowerd answers here\n"
"                              (default %s)\n"
"      --force                 run even while vpowerd answers\n"
"      --restore               only restore what an interrupted run left\n"
"      --dry-run               print the points and the time, change\n"
"                              nothing\n"
"  -h, --help\n", SYSFS_DEFAULT_ROOT, METER_POWERCAP_ROOT,
            METER_HWMON_ROOT, METER_IPMI_DEV, DEFAULT_JOURNAL,
            PROTO_DEFAULT_SOCKET);
}

static int
parse_num(const char *opt, const char *s, double max, double *out)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= 0) || v > max) {
        fprintf(stderr, "vpower-calibrate: %s: bad value '%s' (0..%g)\n",
                opt, s, max);
        return -1;
    }
    *out = v;
    return 0;
}

static int
parse_args(int argc, char **argv, struct args *a)
{
    static const struct option longs[] = {
        { "output", required_argument, NULL, 'o' },
        { "seconds-per-point", required_argument, NULL, 's' },
        { "name", required_argument, NULL, 'n' },
        { "deepest-idle-mw", required_argument, NULL, 'D' },
        { "package-idle-mw", required_argument, NULL, 'P' },
        { "sysfs-root", required_argument, NULL, 'r' },
        { "powercap-root", required_argument, NULL, 'c' },
        { "hwmon-root", required_argument, NULL, 'w' },
        { "ipmi-dev", required_argument, NULL, 'i' },
        { "journal", required_argument, NULL, 'j' },
        { "vpowerd-socket", required_argument, NULL, 'S' },
        { "force", no_argument, NULL, 'f' },
        { "restore", no_argument, NULL, 'R' },
        { "dry-run", no_argument, NULL, 'd' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    double v;
    int ch;

    while ((ch = getopt_long(argc, argv, "o:s:h", longs, NULL)) != -1) {
        switch (ch) {
        case 'o': a->output = optarg; break;
        case 'n': a->opts.name = optarg; break;
        case 'r': a->sysfs_root = optarg; break;
        case 'c': a->roots.powercap = optarg; break;
        case 'w': a->roots.hwmon = optarg; break;
        case 'i': a->roots.ipmi_dev = optarg; break;
        case 'j': a->journal = optarg; break;
        case 'S': a->vpowerd_socket = optarg; break;
        case 'f': a->force = true; break;
        case 'R': a->restore_only = true; break;
        case 'd': a->dry_run = true; break;
        case 'h': usage(stdout); exit(0);
        case 's':
            if (parse_num("--seconds-per-point", optarg, 3600, &v)
                || v < 0.05) {
                fprintf(stderr, "vpower-calibrate: --seconds-per-point "
                        "must be at least 0.05\n");
                return -1;
            }
            a->opts.point_ns = (uint64_t) (v * 1e9);
            break;
        case 'D': case 'P':
            if (parse_num(ch == 'D' ? "--deepest-idle-mw"
                          : "--package-idle-mw", optarg, 1e6, &v)) {
                return -1;
            }
            *(ch == 'D' ? &a->opts.deepest_idle_mw
                        : &a->opts.package_idle_mw) = (uint32_t) v;
            break;
        default: usage(stderr); return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "vpower-calibrate: unexpected argument '%s'\n",
                argv[optind]);
        return -1;
    }
    for (const char *p = a->opts.name; *p; p++) {
        if (*p <= ' ' || *p > '~' || p - a->opts.name >= 63) {
            fprintf(stderr, "vpower-calibrate: --name must be one word of "
                    "at most 63 printable characters\n");
            return -1;
        }
    }
    return 0;
}

/* True when something accepts connections on vpowerd's control socket:
 * vpowerd is running and manages guests, and would fight over the very
 * limits calibration sets. */
static bool
vpowerd_answers(const char *path)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    int fd;
    bool up;

    if (!*path || strlen(path) >= sizeof sa.sun_path) {
        return false;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return false;
    }
    up = connect(fd, (struct sockaddr *) &sa, sizeof sa) == 0;
    close(fd);
    return up;
}

/* Restores and removes a journal left by an interrupted run.  0 when
 * there was none or all was restored. */
static int
restore_leftover(const struct args *a)
{
    char err[512];
    struct jnl *j;
    unsigned failed = 0;
    int r = jnl_load(a->journal, &j, err, sizeof err);

    if (r == -ENOENT) {
        return 0;
    }
    if (r < 0) {
        fprintf(stderr, "vpower-calibrate: %s\n", err);
        return r;
    }
    r = jnl_restore_sysfs(j, a->sysfs_root, &failed);
    if (r < 0) {
        fprintf(stderr, "vpower-calibrate: %s: %u limits could not be "
                "restored (%s); the journal is kept\n", a->journal, failed,
                strerror(-r));
    } else {
        fprintf(stderr, "vpower-calibrate: restored %zu limits an "
                "interrupted run left (%s)\n", jnl_count(j), a->journal);
        r = jnl_remove(j);
    }
    jnl_close(j);
    return r;
}

/* Finds and opens the meter that best covers the host. */
static struct meter *
open_meter(const struct args *a)
{
    struct meter_list list = { 0 };
    struct meter_choice choice;
    struct meter *m = NULL;
    char err[METER_ERR_LEN];

    meter_discover(&a->roots, &list);
    for (size_t i = 0; i < list.n_problems; i++) {
        fprintf(stderr, "vpower-calibrate: meter: %s\n", list.problems[i]);
    }
    if (meter_choose_host(&list, &choice) < 0) {
        fprintf(stderr, "vpower-calibrate: no power meter covers this "
                "host (RAPL powercap, hwmon power/energy, IPMI DCMI): "
                "nothing to calibrate against\n");
    } else if (!(m = meter_host_open(&list, &choice, err, sizeof err))) {
        fprintf(stderr, "vpower-calibrate: %s\n", err);
    }
    meter_list_clear(&list);
    return m;
}

static int
write_model(const struct args *a, const struct calib *c)
{
    char tmp[4096];
    FILE *f = stdout;
    int r;

    if (a->output) {
        snprintf(tmp, sizeof tmp, "%s.tmp", a->output);
        if (!(f = fopen(tmp, "w"))) {
            fprintf(stderr, "vpower-calibrate: %s: %s\n", tmp,
                    strerror(errno));
            return -1;
        }
    }
    r = calib_write(c, f);
    if (a->output) {
        r = fclose(f) ? -EIO : r;
        if (r == 0 && rename(tmp, a->output) < 0) {
            r = -errno;
        }
        if (r < 0) {
            fprintf(stderr, "vpower-calibrate: %s: %s\n", a->output,
                    strerror(-r));
            unlink(tmp);
        }
    } else {
        r = fflush(f) ? -EIO : r;
    }
    return r;
}

/* Opens everything, measures, restores, fits and writes.  The limits
 * are journalled by the sysfs driver before every write; they are
 * restored byte for byte from the journal at the end whatever happens,
 * and by the next run if this one dies. */
static int
calibrate(struct args *a, struct jnl *j, struct drv_host *h,
          struct meter *m)
{
    struct calib_loops *loops = calib_loops_create();
    struct calib *c = NULL;
    char err[1024];
    unsigned failed = 0;
    int r, rr;

    r = calib_create(&drv_host_sysfs, h, a->sysfs_root, m, &calib_loops_ops,
                     loops, &a->opts, &c, err, sizeof err);
    if (r == 0) {
        uint64_t t = calib_total_ns(c);

        fprintf(stderr, "vpower-calibrate: meter %s (%s); %zu points x "
                "%.2f s = %.0f s (about %.1f min); do not load the host "
                "meanwhile\n", m->info.name, meter_scope_name(m->info.scope),
                calib_n_points(c), (double) a->opts.point_ns / 1e9,
                (double) t / 1e9, (double) t / 60e9);
        t = calib_loops_ops.now_ns(loops);
        r = calib_run(c, err, sizeof err);
        fprintf(stderr, "vpower-calibrate: took %.1f s (bound %.0f s)\n",
                (double) (calib_loops_ops.now_ns(loops) - t) / 1e9,
                (double) calib_total_ns(c) / 1e9);
    }
    rr = jnl_restore_sysfs(j, a->sysfs_root, &failed);
    if (rr < 0) {
        fprintf(stderr, "vpower-calibrate: %u limits could not be restored "
                "(%s); they stay in %s for the next run\n", failed,
                strerror(-rr), a->journal);
    } else {
        jnl_remove(j);
    }
    if (r == 0) {
        fprintf(stderr, "vpower-calibrate: loops used %.1f s of CPU; "
                "every limit restored\n",
                (double) calib_loops_cpu_ns(loops) / 1e9);
        r = calib_fit(c, err, sizeof err);
    }
    if (r < 0) {
        fprintf(stderr, "vpower-calibrate: %s\n", err);
    } else {
        r = write_model(a, c);
    }
    calib_destroy(c);
    calib_loops_destroy(loops);
    return r < 0 ? r : rr;
}

/* Plans against the host and prints the points and the time bound;
 * only reads sysfs and the meter. */
static int
dry_run(struct args *a, struct drv_host *h, struct meter *m)
{
    const struct calib_point *pts;
    struct calib *c;
    char err[1024];
    size_t n;
    int r = calib_create(&drv_host_sysfs, h, a->sysfs_root, m, NULL, NULL,
                         &a->opts, &c, err, sizeof err);

    if (r < 0) {
        fprintf(stderr, "vpower-calibrate: %s\n", err);
        return r;
    }
    pts = calib_points(c, &n);
    printf("meter %s (%s); %zu points x %.2f s = %.0f s\n", m->info.name,
           meter_scope_name(m->info.scope), n,
           (double) a->opts.point_ns / 1e9,
           (double) calib_total_ns(c) / 1e9);
    for (size_t i = 0; i < n; i++) {
        char what[96];

        calib_describe(c, &pts[i], what, sizeof what);
        printf("[%zu/%zu] %s\n", i + 1, n, what);
    }
    calib_destroy(c);
    return 0;
}

int
main(int argc, char **argv)
{
    struct args a = {
        .sysfs_root = SYSFS_DEFAULT_ROOT, .journal = DEFAULT_JOURNAL,
        .vpowerd_socket = PROTO_DEFAULT_SOCKET,
        .opts = { .point_ns = 5000000000ull, .sample_ns = 100000000ull,
                  .name = "calibrated", .progress = stderr },
    };
    struct sigaction sa = { .sa_handler = calib_loops_signal };
    struct drv_host *h;
    struct meter *m;
    struct jnl *j;
    char err[512], *dir;
    int r;

    if (parse_args(argc, argv, &a) < 0) {
        return 2;
    }
    if (a.dry_run) {
        if (!(h = drv_host_sysfs.open(a.sysfs_root, err, sizeof err))) {
            fprintf(stderr, "vpower-calibrate: %s\n", err);
            return 1;
        }
        r = (m = open_meter(&a)) ? dry_run(&a, h, m) : -ENOENT;
        meter_close(m);
        drv_host_sysfs.close(h);
        return r < 0 ? 1 : 0;
    }
    dir = strdup(a.journal);
    if (dir) {
        mkdir(dirname(dir), 0750);       /* vpowerd's runtime directory. */
        free(dir);
    }
    if (restore_leftover(&a) < 0) {
        return 1;
    }
    if (a.restore_only) {
        return 0;
    }
    if (!a.force && vpowerd_answers(a.vpowerd_socket)) {
        fprintf(stderr, "vpower-calibrate: vpowerd answers on %s and "
                "manages guests; stop it first (or --force)\n",
                a.vpowerd_socket);
        return 1;
    }
    if (!(h = drv_host_sysfs.open(a.sysfs_root, err, sizeof err))) {
        fprintf(stderr, "vpower-calibrate: %s\n", err);
        return 1;
    }
    if ((r = jnl_create(a.journal, &j)) < 0) {
        fprintf(stderr, "vpower-calibrate: %s: %s\n", a.journal,
                strerror(-r));
        drv_host_sysfs.close(h);
        return 1;
    }
    if (!(m = open_meter(&a))) {
        jnl_close(j);
        drv_host_sysfs.close(h);
        return 1;
    }
    sysfs_set_journal(h, j);
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    r = calibrate(&a, j, h, m);
    meter_close(m);
    jnl_close(j);
    drv_host_sysfs.close(h);
    return r < 0 ? 1 : 0;
}
