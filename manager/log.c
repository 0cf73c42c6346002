/* manager/log.c -- stderr/syslog logging and per-site rate limits.
 *
 * Every message is escaped (manager/util.h, text rule) after it is
 * formatted: log lines carry strings from clients, guests and the
 * hypervisor, and one message must stay one line whatever they hold, or a
 * newline in a request would forge a whole log entry and an escape
 * sequence would reach the terminal of whoever reads the log. */

#include <config.h>

#include "manager/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "manager/util.h"

static const char *log_ident = "vpower";
static bool log_syslog;
static enum log_level log_max = LOG_LVL_INFO;

void
log_init(const char *ident, bool use_syslog, enum log_level max)
{
    log_ident = ident;
    log_syslog = use_syslog;
    log_max = max;
    if (use_syslog) {
        openlog(ident, LOG_PID, LOG_DAEMON);
    }
}

void
log_set_level(enum log_level max)
{
    log_max = max;
}

bool
log_enabled(enum log_level lvl)
{
    return lvl <= log_max;
}

void
log_msg(enum log_level lvl, const char *module, const char *fmt, ...)
{
    static const char *const names[] = { "error", "warning", "info",
                                         "debug" };
    static const int prio[] = { LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG };
    char buf[1024];
    char safe[4 * sizeof buf];
    va_list ap;

    if (!log_enabled(lvl)) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    util_escape(buf, safe, sizeof safe);
    if (log_syslog) {
        syslog(prio[lvl], "%s: %s", module, safe);
    } else {
        fprintf(stderr, "%s: %s: %s: %s\n", log_ident, names[lvl], module,
                safe);
    }
}

bool
log_rl_allow(struct log_rl *rl)
{
    uint64_t now = util_clock_ns(CLOCK_MONOTONIC);

    if (rl->last_ns == 0) {
        rl->last_ns = now;
    } else if (rl->per_min) {
        uint64_t refill = (now - rl->last_ns) * rl->per_min / 60000000000u;
        if (refill) {
            rl->tokens = (uint32_t) (rl->tokens + refill > rl->burst
                                     ? rl->burst : rl->tokens + refill);
            rl->last_ns = now;
        }
    }
    if (rl->tokens == 0) {
        rl->suppressed++;
        return false;
    }
    rl->tokens--;
    if (rl->suppressed) {
        log_msg(LOG_LVL_WARN, "log", "%llu similar messages suppressed",
                (unsigned long long) rl->suppressed);
        rl->suppressed = 0;
    }
    return true;
}
