/* manager/inputs/thermal.c -- Thermal netlink events to per-CPU capacity
 * limits.
 *
 * One non-blocking libnl socket joined to the "thermal" family's "event"
 * and "sampling" multicast groups, read from the sched loop until
 * EAGAIN.  Messages are parsed here (not with libnl callbacks) so tests
 * can hand in messages directly.  Cooling-device facts come from sysfs
 * at event time: they change only with driver binding, and events are
 * rare, so caching would buy nothing. */

#include <config.h>

#include "manager/inputs/thermal.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <linux/thermal.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "manager/sched.h"
#include "manager/drivers/sysfs.h"
#include "manager/util.h"
#include "policy/cpuset.h"

#define LOG_MODULE "thermal"
#include "manager/log.h"

#define THERMAL_MAX_FREQS 64

struct thermal {
    struct sched *sched;
    struct nl_sock *sock;
    int family;
    char *class_root, *cpu_root;
    unsigned n_cpus;
    thermal_cb *cb;
    void *aux;
    uint32_t *cap;              /* [n_cpus] */
    int32_t *cap_cdev;          /* [n_cpus]: limiting cdev, -1 none. */
    struct thermal_counts counts;
};

/* The first line of a sysfs file (thermal attributes are one value). */
static int
read_text(const char *path, char *buf, size_t len)
{
    int r = sysfs_read_file(path, buf, len);

    if (r < 0) {
        return r;
    }
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

static void
set_cap(struct thermal *t, unsigned cpu, uint32_t cap, int32_t cdev)
{
    if (cpu >= t->n_cpus) {
        return;
    }
    if (cap > THERMAL_CAP_NONE) {
        cap = THERMAL_CAP_NONE;
    }
    t->cap_cdev[cpu] = cap < THERMAL_CAP_NONE ? cdev : -1;
    if (t->cap[cpu] != cap) {
        t->cap[cpu] = cap;
        LOG_INFO("cpu%u: thermal capacity %u/1024", cpu, cap);
        if (t->cb) {
            t->cb(t->aux, cpu, cap);
        }
    }
}

struct thermal *
thermal_open_detached(int family, const char *class_root,
                      const char *cpu_root, unsigned n_cpus, thermal_cb *cb,
                      void *aux)
{
    struct thermal *t = XNEW(struct thermal);
    t->family = family;
    t->class_root = xstrdup(class_root ? class_root : "/sys/class/thermal");
    t->cpu_root = xstrdup(cpu_root ? cpu_root : "/sys/devices/system/cpu");
    t->n_cpus = n_cpus;
    t->cb = cb;
    t->aux = aux;
    t->cap = XNEWARRAY(uint32_t, n_cpus ? n_cpus : 1);
    t->cap_cdev = XNEWARRAY(int32_t, n_cpus ? n_cpus : 1);
    for (unsigned i = 0; i < n_cpus; i++) {
        t->cap[i] = THERMAL_CAP_NONE;
        t->cap_cdev[i] = -1;
    }
    return t;
}

static void
thermal_readable(int fd, uint32_t events, void *aux)
{
    struct thermal *t = aux;
    (void) fd;
    (void) events;
    /* Bounded: at most 64 datagrams per wakeup; epoll calls again. */
    for (int i = 0; i < 64; i++) {
        struct sockaddr_nl from;
        unsigned char *buf = NULL;
        int n = nl_recv(t->sock, &from, &buf, NULL);
        if (n <= 0) {
            free(buf);
            if (n < 0 && n != -NLE_AGAIN) {
                LOG_WARN_RL("receive: %s", nl_geterror(n));
            }
            return;
        }
        struct nlmsghdr *h = (struct nlmsghdr *) buf;
        int rem = n;
        for (; nlmsg_ok(h, rem); h = nlmsg_next(h, &rem)) {
            if (thermal_handle_msg(t, h, (size_t) rem) < 0) {
                LOG_WARN_RL("malformed thermal event (type %u)",
                            h->nlmsg_type);
            }
        }
        free(buf);
    }
}

struct thermal *
thermal_open(struct sched *sched, const char *class_root,
             const char *cpu_root, unsigned n_cpus, thermal_cb *cb,
             void *aux, char *err, size_t errlen)
{
    struct nl_sock *s = nl_socket_alloc();
    if (!s) {
        snprintf(err, errlen, "thermal: cannot allocate netlink socket");
        return NULL;
    }
    nl_socket_disable_seq_check(s);
    int r = genl_connect(s);
    int fam = r < 0 ? r : genl_ctrl_resolve(s, THERMAL_GENL_FAMILY_NAME);
    if (fam < 0) {
        snprintf(err, errlen, "thermal: generic netlink family '%s' not "
                 "available (%s); kernel without CONFIG_THERMAL_NETLINK?",
                 THERMAL_GENL_FAMILY_NAME, nl_geterror(fam));
        nl_socket_free(s);
        return NULL;
    }
    static const char *const groups[] = {
        THERMAL_GENL_EVENT_GROUP_NAME, THERMAL_GENL_SAMPLING_GROUP_NAME,
    };
    for (size_t i = 0; i < ARRAY_SIZE(groups); i++) {
        int g = genl_ctrl_resolve_grp(s, THERMAL_GENL_FAMILY_NAME,
                                      groups[i]);
        if (g < 0 || (r = nl_socket_add_membership(s, g)) < 0) {
            snprintf(err, errlen, "thermal: cannot join group '%s': %s",
                     groups[i], nl_geterror(g < 0 ? g : r));
            nl_socket_free(s);
            return NULL;
        }
    }
    nl_socket_set_nonblocking(s);
    struct thermal *t = thermal_open_detached(fam, class_root, cpu_root,
                                              n_cpus, cb, aux);
    t->sock = s;
    t->sched = sched;
    r = sched_add_fd(sched, nl_socket_get_fd(s), EPOLLIN, thermal_readable,
                     t);
    if (r < 0) {
        snprintf(err, errlen, "thermal: sched_add_fd: %s", strerror(-r));
        thermal_close(t);
        return NULL;
    }
    return t;
}

void
thermal_close(struct thermal *t)
{
    if (!t) {
        return;
    }
    if (t->sock) {
        if (t->sched) {
            sched_del_fd(t->sched, nl_socket_get_fd(t->sock));
        }
        nl_socket_free(t->sock);
    }
    free(t->cap);
    free(t->cap_cdev);
    free(t->class_root);
    free(t->cpu_root);
    free(t);
}

uint32_t
thermal_capacity(const struct thermal *t, unsigned cpu)
{
    return cpu < t->n_cpus ? t->cap[cpu] : THERMAL_CAP_NONE;
}

const struct thermal_counts *
thermal_counts(const struct thermal *t)
{
    return &t->counts;
}

/* CPU capability nest: repeated (ID, PERFORMANCE, EFFICIENCY) u32s. */
static int
handle_capability(struct thermal *t, struct nlattr **tb)
{
    struct nlattr *nest = tb[THERMAL_GENL_ATTR_CPU_CAPABILITY];
    if (!nest) {
        return -EPROTO;
    }
    struct nlattr *a;
    int rem;
    long cpu = -1;
    nla_for_each_nested(a, nest, rem) {
        if (nla_len(a) < 4) {
            return -EPROTO;
        }
        uint32_t v = nla_get_u32(a);
        switch (nla_type(a)) {
        case THERMAL_GENL_ATTR_CPU_CAPABILITY_ID:
            cpu = v;
            break;
        case THERMAL_GENL_ATTR_CPU_CAPABILITY_PERFORMANCE:
            if (cpu < 0 || v > 1023) {
                return -EPROTO;
            }
            set_cap(t, (unsigned) cpu,
                    v == 1023 ? THERMAL_CAP_NONE : v * 1024 / 1023, -1);
            cpu = -1;
            break;
        default:
            break;              /* EFFICIENCY: not a limit. */
        }
    }
    t->counts.capability++;
    return 0;
}

/* The CPUs and capacity a cpufreq cooling device at 'state' means;
 * -ENOTSUP if 'id' is not a cpufreq cooling device. */
static int
cdev_cpufreq(struct thermal *t, uint32_t id, uint32_t state,
             struct cpuset *cpus, uint32_t *cap)
{
    char path[512], buf[1024];
    snprintf(path, sizeof path, "%s/cooling_device%u/type", t->class_root,
             id);
    if (read_text(path, buf, sizeof buf) < 0) {
        return -ENOTSUP;
    }
    const char *p;
    if (!strncmp(buf, "cpufreq-cpu", 11)) {
        p = buf + 11;
    } else if (!strncmp(buf, "cpufreq-", 8)) {
        p = buf + 8;
    } else {
        return -ENOTSUP;
    }
    char *end;
    unsigned long cpu = strtoul(p, &end, 10);
    if (end == p || *end || cpu >= POL_MAX_CPUS) {
        return -ENOTSUP;
    }
    snprintf(path, sizeof path, "%s/cooling_device%u/max_state",
             t->class_root, id);
    unsigned long max_state = 0;
    if (read_text(path, buf, sizeof buf) == 0) {
        max_state = strtoul(buf, NULL, 10);
    }
    cpuset_zero(cpus);
    snprintf(path, sizeof path, "%s/cpu%lu/cpufreq/related_cpus",
             t->cpu_root, cpu);
    if (read_text(path, buf, sizeof buf) == 0) {
        for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
            unsigned long c = strtoul(tok, NULL, 10);
            if (c < POL_MAX_CPUS) {
                cpuset_set(cpus, (unsigned) c);
            }
        }
    }
    if (cpuset_empty(cpus)) {
        cpuset_set(cpus, (unsigned) cpu);
    }
    /* Exact: state k selects the k-th frequency from the top. */
    uint32_t f[THERMAL_MAX_FREQS];
    unsigned nf = 0;
    snprintf(path, sizeof path,
             "%s/cpu%lu/cpufreq/scaling_available_frequencies",
             t->cpu_root, cpu);
    if (read_text(path, buf, sizeof buf) == 0) {
        for (char *tok = strtok(buf, " "); tok && nf < THERMAL_MAX_FREQS;
             tok = strtok(NULL, " ")) {
            f[nf++] = (uint32_t) strtoul(tok, NULL, 10);
        }
    }
    /* Sort descending (tables may come in either order). */
    for (unsigned i = 1; i < nf; i++) {
        for (unsigned j = i; j > 0 && f[j] > f[j - 1]; j--) {
            uint32_t x = f[j];
            f[j] = f[j - 1];
            f[j - 1] = x;
        }
    }
    if (nf > 0 && f[0] > 0) {
        unsigned k = state < nf ? state : nf - 1;
        *cap = (uint32_t) ((uint64_t) f[k] * 1024 / f[0]);
    } else if (max_state > 0) {
        uint64_t s = state < max_state ? state : max_state;
        *cap = (uint32_t) (1024 - s * 1024 / (max_state + 1));
    } else {
        *cap = THERMAL_CAP_NONE;
    }
    return 0;
}

static int
handle_cdev(struct thermal *t, struct nlattr **tb, bool deleted)
{
    if (!tb[THERMAL_GENL_ATTR_CDEV_ID]
        || (!deleted && !tb[THERMAL_GENL_ATTR_CDEV_CUR_STATE])) {
        return -EPROTO;
    }
    uint32_t id = nla_get_u32(tb[THERMAL_GENL_ATTR_CDEV_ID]);
    if (deleted) {
        for (unsigned c = 0; c < t->n_cpus; c++) {
            if (t->cap_cdev[c] == (int32_t) id) {
                set_cap(t, c, THERMAL_CAP_NONE, -1);
            }
        }
        return 0;
    }
    uint32_t state = nla_get_u32(tb[THERMAL_GENL_ATTR_CDEV_CUR_STATE]);
    struct cpuset cpus;
    uint32_t cap;
    if (cdev_cpufreq(t, id, state, &cpus, &cap) < 0) {
        t->counts.ignored++;
        LOG_DEBUG("cooling device %u (not cpufreq) state %u ignored", id,
                  state);
        return 0;
    }
    t->counts.cdev_updates++;
    CPUSET_FOREACH (c, &cpus) {
        set_cap(t, (unsigned) c, cap, (int32_t) id);
    }
    return 0;
}

int
thermal_handle_msg(struct thermal *t, const struct nlmsghdr *nlh,
                   size_t len)
{
    if (len > INT32_MAX || !nlmsg_ok(nlh, (int) len)
        || nlh->nlmsg_type != t->family
        || !genlmsg_valid_hdr((struct nlmsghdr *) nlh, 0)) {
        t->counts.malformed++;
        return -EPROTO;
    }
    struct nlattr *tb[THERMAL_GENL_ATTR_MAX + 1];
    if (genlmsg_parse((struct nlmsghdr *) nlh, 0, tb, THERMAL_GENL_ATTR_MAX,
                      NULL) < 0) {
        t->counts.malformed++;
        return -EPROTO;
    }
    /* u32 attributes are read with nla_get_u32: check their size. */
    static const int u32_attrs[] = {
        THERMAL_GENL_ATTR_CDEV_ID, THERMAL_GENL_ATTR_CDEV_CUR_STATE,
        THERMAL_GENL_ATTR_TZ_ID, THERMAL_GENL_ATTR_TZ_TRIP_ID,
    };
    for (size_t i = 0; i < ARRAY_SIZE(u32_attrs); i++) {
        if (tb[u32_attrs[i]] && nla_len(tb[u32_attrs[i]]) < 4) {
            t->counts.malformed++;
            return -EPROTO;
        }
    }
    const struct genlmsghdr *g = nlmsg_data(nlh);
    int r = 0;
    t->counts.events++;
    switch (g->cmd) {
    case THERMAL_GENL_EVENT_CPU_CAPABILITY_CHANGE:
        r = handle_capability(t, tb);
        break;
    case THERMAL_GENL_EVENT_CDEV_STATE_UPDATE:
        r = handle_cdev(t, tb, false);
        break;
    case THERMAL_GENL_EVENT_CDEV_DELETE:
        r = handle_cdev(t, tb, true);
        break;
    case THERMAL_GENL_EVENT_TZ_TRIP_UP:
    case THERMAL_GENL_EVENT_TZ_TRIP_DOWN:
    case THERMAL_GENL_EVENT_TZ_TRIP_CHANGE:
        t->counts.trips++;
        LOG_DEBUG("thermal zone %u trip %u event %u",
                  tb[THERMAL_GENL_ATTR_TZ_ID]
                  ? nla_get_u32(tb[THERMAL_GENL_ATTR_TZ_ID]) : 0,
                  tb[THERMAL_GENL_ATTR_TZ_TRIP_ID]
                  ? nla_get_u32(tb[THERMAL_GENL_ATTR_TZ_TRIP_ID]) : 0,
                  g->cmd);
        break;
    default:
        /* THERMAL_GENL_SAMPLING_TEMP shares command number 0 with
         * EVENT_UNSPEC; zone create/delete, governor changes and newer
         * events (thresholds) do not limit capacity by themselves. */
        if (g->cmd == THERMAL_GENL_SAMPLING_TEMP) {
            t->counts.sampling++;
        } else {
            t->counts.ignored++;
        }
        break;
    }
    if (r < 0) {
        t->counts.malformed++;
    }
    return r;
}

void
thermal_domain_caps(const struct thermal *t, const struct pol_model *m,
                    uint32_t caps_khz[POL_MAX_DOMAINS])
{
    for (unsigned d = 0; d < POL_MAX_DOMAINS; d++) {
        caps_khz[d] = 0;
    }
    for (unsigned d = 0; d < m->n_domains && d < POL_MAX_DOMAINS; d++) {
        const struct pol_domain *dom = &m->domains[d];
        uint32_t lo = THERMAL_CAP_NONE;
        CPUSET_FOREACH (c, &dom->cpus) {
            uint32_t cap = thermal_capacity(t, (unsigned) c);
            if (cap < lo) {
                lo = cap;
            }
        }
        if (lo >= THERMAL_CAP_NONE || dom->n_opps == 0) {
            continue;
        }
        uint32_t top = dom->opps[dom->n_opps - 1].freq_khz;
        uint32_t bottom = dom->opps[0].freq_khz;
        uint32_t khz = (uint32_t) ((uint64_t) top * lo / 1024);
        caps_khz[d] = khz < bottom ? bottom : khz;
    }
}
