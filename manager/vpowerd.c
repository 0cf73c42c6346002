/* manager/vpowerd.c -- main(): options, config, signals, the loop.
 *
 * vpowerd is one process with one event loop (manager/sched.h).  main()
 * parses the command line over the configuration file, picks the drivers
 * (libvirt or the dummy hypervisor; sysfs with a configurable root or the
 * dummy host), starts the daemon (manager/daemon.c) and runs the loop
 * until SIGTERM or SIGINT, then restores everything it changed and exits
 * 0.  The control socket (manager/control/cmds.h) is served on the same loop
 * from just after the start until just before the restore.  SIGUSR1
 * toggles the host-wide performance override (also `vpowerctl
 * override`).  Startup problems (bad option, bad config
 * "FILE:LINE: reason", no hypervisor) exit 1 before anything changed.
 * Under systemd (manager/notify.h) READY=1 follows the start, STATUS=
 * says what the daemon is doing, the loop sends the watchdog's
 * keep-alives and STOPPING=1 precedes the restore. */

#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "manager/control/cmds.h"
#include "manager/conf.h"
#include "manager/daemon.h"
#include "manager/drivers/drv.h"
#include "manager/log.h"
#include "manager/notify.h"
#include "manager/sched.h"

#define LOG_MODULE "main"

#define DEFAULT_CONFIG "/etc/vpower/vpowerd.conf"

static void
usage(FILE *f)
{
    fprintf(f,
"Usage: vpowerd [OPTION]...\n"
"Consolidate KVM guests' vCPUs onto as few cores as their load needs.\n"
"\n"
"  -c, --config FILE        configuration (default " DEFAULT_CONFIG
", if present)\n"
"  -d, --foreground         stay in the foreground, log to stderr\n"
"  -n, --dry-run            decide and log plans, change nothing\n"
"      --driver=libvirt|dummy   hypervisor driver (default libvirt)\n"
"      --host-driver=sysfs|dummy  host driver (default sysfs)\n"
"      --sysfs-root DIR     CPU sysfs root (default /sys/devices/system/cpu)\n"
"      --connect URI        libvirt URI (default qemu:///system)\n"
"      --model FILE         energy model (default: built from sysfs)\n"
"      --journal FILE       restore journal (default /run/vpower/journal)\n"
"      --socket PATH        control socket (default\n"
"                           /run/vpower/vpowerd.sock)\n"
"      --record FILE        record each period's samples and plan (replay)\n"
"      --dummy-domains FILE domains of the dummy driver\n"
"  -v, --verbose            debug logging\n"
"  -h, --help               this help\n"
"  -V, --version            version\n"
"\n"
"Signals: TERM/INT restore everything and exit 0; USR1 toggles the\n"
"host-wide performance override.\n");
}

struct opts {
    const char *config;
    bool foreground, dry_run, verbose;
    const char *driver, *host_driver, *sysfs_root, *connect, *model;
    const char *journal, *dummy_domains, *socket, *record;
};

static int
parse_args(int argc, char **argv, struct opts *o)
{
    enum { O_DRIVER = 256, O_HOST, O_ROOT, O_CONNECT, O_MODEL, O_JOURNAL,
           O_DUMMY, O_SOCKET, O_RECORD };
    static const struct option longopts[] = {
        { "config", required_argument, NULL, 'c' },
        { "foreground", no_argument, NULL, 'd' },
        { "dry-run", no_argument, NULL, 'n' },
        { "driver", required_argument, NULL, O_DRIVER },
        { "host-driver", required_argument, NULL, O_HOST },
        { "sysfs-root", required_argument, NULL, O_ROOT },
        { "connect", required_argument, NULL, O_CONNECT },
        { "model", required_argument, NULL, O_MODEL },
        { "journal", required_argument, NULL, O_JOURNAL },
        { "dummy-domains", required_argument, NULL, O_DUMMY },
        { "socket", required_argument, NULL, O_SOCKET },
        { "record", required_argument, NULL, O_RECORD },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    int c;

    memset(o, 0, sizeof *o);
    while ((c = getopt_long(argc, argv, "c:dnvhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'c': o->config = optarg; break;
        case 'd': o->foreground = true; break;
        case 'n': o->dry_run = true; break;
        case 'v': o->verbose = true; break;
        case O_DRIVER: o->driver = optarg; break;
        case O_HOST: o->host_driver = optarg; break;
        case O_ROOT: o->sysfs_root = optarg; break;
        case O_CONNECT: o->connect = optarg; break;
        case O_MODEL: o->model = optarg; break;
        case O_JOURNAL: o->journal = optarg; break;
        case O_DUMMY: o->dummy_domains = optarg; break;
        case O_SOCKET: o->socket = optarg; break;
        case O_RECORD: o->record = optarg; break;
        case 'h': usage(stdout); exit(0);
        case 'V': printf("vpowerd (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
                  exit(0);
        default: usage(stderr); return -EINVAL;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "vpowerd: unexpected argument '%s'\n", argv[optind]);
        return -EINVAL;
    }
    if (o->driver && strcmp(o->driver, "libvirt")
        && strcmp(o->driver, "dummy")) {
        fprintf(stderr, "vpowerd: --driver must be libvirt or dummy, not "
                "'%s'\n", o->driver);
        return -EINVAL;
    }
    if (o->host_driver && strcmp(o->host_driver, "sysfs")
        && strcmp(o->host_driver, "dummy")) {
        fprintf(stderr, "vpowerd: --host-driver must be sysfs or dummy, not "
                "'%s'\n", o->host_driver);
        return -EINVAL;
    }
    return 0;
}

static void
copy_opt(char *dst, size_t len, const char *src, const char *what)
{
    if (src) {
        if (strlen(src) >= len) {
            fprintf(stderr, "vpowerd: %s too long (max %zu bytes)\n", what,
                    len - 1);
            exit(1);
        }
        snprintf(dst, len, "%s", src);
    }
}

static void
quit_cb(int signo, void *aux)
{
    struct vpd *d = aux;

    LOG_INFO("signal %d: restoring and exiting", signo);
    sched_quit(d->sched, 0);
}

struct main_ctx {
    struct vpd *d;
    struct notify *notify;
};

static void
usr1_cb(int signo, void *aux)
{
    struct main_ctx *m = aux;

    vpd_set_override(m->d, !m->d->override_performance);
    notify_status(m->notify);
}

/* The service manager's one-line status: mode, VMs, active CPUs. */
static void
status_cb(char *buf, size_t len, void *aux)
{
    const struct vpd *d = aux;
    unsigned managed = 0;

    for (unsigned c = 0; c < d->n_cpus && c < POL_MAX_CPUS; c++) {
        managed += d->cpus[c].present && d->cpus[c].managed;
    }
    snprintf(buf, len, "%s: %zu VMs, %u of %u managed CPUs active",
             d->dry_run ? "dry run"
             : d->override_performance ? "override performance"
             : "managing", d->n_vms, cmds_active_cpus(d), managed);
}

/* sched_priority (chronyd's directive of the same name): the loop runs
 * SCHED_FIFO so a guest's hint, and the pins it causes, do not wait
 * behind CPU-bound vCPU threads for the scheduler to give vpowerd a
 * turn.  The loop sleeps in epoll_wait() between events, so the
 * priority costs no CPU time; the kernel's real-time throttling and the
 * service watchdog bound a loop that would not sleep.  Set before any
 * thread exists, so every later one inherits it.  A refusal (no
 * CAP_SYS_NICE, RestrictRealtime= in the unit) leaves the normal
 * priority, with a warning. */
static void
set_priority(uint32_t prio)
{
    struct sched_param sp = { .sched_priority = (int) prio };

    if (!prio) {
        return;
    }
    if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0) {
        LOG_WARN("sched_priority %u: cannot run SCHED_FIFO (%s); running "
                 "at normal priority", (unsigned) prio, strerror(errno));
    } else {
        LOG_INFO("running SCHED_FIFO at priority %u (sched_priority)",
                 (unsigned) prio);
    }
}

int
main(int argc, char **argv)
{
    struct opts o;
    struct main_ctx m;
    struct vpd *d;
    char err[512];
    int r, code;

    if (parse_args(argc, argv, &o) < 0) {
        return 1;
    }
    d = calloc(1, sizeof *d);
    if (!d) {
        return 1;
    }
    conf_defaults(&d->conf);
    if (o.config || access(DEFAULT_CONFIG, R_OK) == 0) {
        const char *path = o.config ? o.config : DEFAULT_CONFIG;

        if (conf_load(&d->conf, path, err, sizeof err) < 0) {
            fprintf(stderr, "vpowerd: %s\n", err);
            free(d);
            return 1;
        }
    }
    copy_opt(d->conf.sysfs_root, sizeof d->conf.sysfs_root, o.sysfs_root,
             "--sysfs-root");
    copy_opt(d->conf.connect_uri, sizeof d->conf.connect_uri, o.connect,
             "--connect");
    copy_opt(d->conf.model_file, sizeof d->conf.model_file, o.model,
             "--model");
    copy_opt(d->conf.journal_path, sizeof d->conf.journal_path, o.journal,
             "--journal");
    copy_opt(d->conf.socket_path, CONF_SOCKET_MAX + 1, o.socket,
             "--socket");
    copy_opt(d->conf.record_path, sizeof d->conf.record_path, o.record,
             "--record");
    d->dry_run = o.dry_run;
    bool dummy_hv = o.driver && !strcmp(o.driver, "dummy");

    d->hv_ops = dummy_hv ? &drv_hv_dummy : &drv_hv_libvirt;
    if (dummy_hv) {
        const char *dom = o.dummy_domains ? o.dummy_domains
                                          : getenv("VPOWER_DUMMY_DOMAINS");

        /* The dummy driver takes its domains file as its "URI". */
        copy_opt(d->conf.connect_uri, sizeof d->conf.connect_uri,
                 dom ? dom : "", "--dummy-domains");
    }
    d->host_ops = o.host_driver && !strcmp(o.host_driver, "dummy")
                  ? &drv_host_dummy : &drv_host_sysfs;
    if (conf_check_system(&d->conf, err, sizeof err) < 0) {
        fprintf(stderr, "vpowerd: %s\n", err);
        free(d);
        return 1;
    }

    log_init("vpowerd", !o.foreground,
             o.verbose ? LOG_LVL_DEBUG : LOG_LVL_INFO);
    if (!o.foreground && daemon(0, 0) < 0) {
        fprintf(stderr, "vpowerd: daemon: %s\n", strerror(errno));
        free(d);
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    set_priority(d->conf.sched_priority);
    d->sched = sched_create();
    m.d = d;
    m.notify = notify_create(d->sched, status_cb, d);
    if (sched_add_signal(d->sched, SIGTERM, quit_cb, d) < 0
        || sched_add_signal(d->sched, SIGINT, quit_cb, d) < 0
        || sched_add_signal(d->sched, SIGUSR1, usr1_cb, &m) < 0) {
        LOG_ERR("cannot set up signal handling");
        return 1;
    }
    /* The control socket opens only once the daemon is running, so a
     * client never sees a half-started daemon; it closes before the
     * restore so nobody can change policy while originals go back. */
    r = vpd_start(d, err, sizeof err);
    if (r >= 0) {
        r = cmds_start(d, err, sizeof err);
    }
    if (r < 0) {
        LOG_ERR("cannot start: %s", err);
        cmds_stop(d);
        vpd_stop(d);
        code = 1;
    } else {
        notify_ready(m.notify);
        code = sched_run(d->sched);
        notify_stopping(m.notify);
        cmds_stop(d);
        r = vpd_stop(d);
        if (r < 0) {
            LOG_ERR("could not restore everything: %s", strerror(-r));
            code = 1;
        } else if (d->dry_run) {
            LOG_INFO("dry run: nothing to restore; exiting");
        } else {
            LOG_INFO("restored; exiting");
        }
    }
    notify_destroy(m.notify);
    sched_destroy(d->sched);
    free(d);
    return code;
}
