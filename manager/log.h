/* manager/log.h -- Logging with module tags and rate limits.
 *
 * Host-side programs log through these macros only.  Backends: stderr
 * (foreground, tests) or syslog (daemon).  Anything a guest or a client
 * can trigger must use the _RL variants: each call site owns a static
 * token bucket, so a flood costs one line per interval plus a count of
 * what was suppressed, never unbounded log volume. */

#ifndef VPOWER_LOG_H
#define VPOWER_LOG_H 1

#include <stdbool.h>
#include <stdint.h>

enum log_level { LOG_LVL_ERR, LOG_LVL_WARN, LOG_LVL_INFO, LOG_LVL_DEBUG };

/* 'ident' is the program name; 'use_syslog' selects the backend. */
void log_init(const char *ident, bool use_syslog, enum log_level max);
void log_set_level(enum log_level max);
bool log_enabled(enum log_level);
void log_msg(enum log_level, const char *module, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Per-call-site rate limiter: at most 'burst' messages, refilled at
 * 'per_min' per minute (monotonic clock). */
struct log_rl {
    uint32_t burst, per_min;
    uint32_t tokens;
    uint64_t last_ns;
    uint64_t suppressed;
};
bool log_rl_allow(struct log_rl *);

#define LOG_ERR(...) log_msg(LOG_LVL_ERR, LOG_MODULE, __VA_ARGS__)
#define LOG_WARN(...) log_msg(LOG_LVL_WARN, LOG_MODULE, __VA_ARGS__)
#define LOG_INFO(...) log_msg(LOG_LVL_INFO, LOG_MODULE, __VA_ARGS__)
#define LOG_DEBUG(...) \
    do { \
        if (log_enabled(LOG_LVL_DEBUG)) { \
            log_msg(LOG_LVL_DEBUG, LOG_MODULE, __VA_ARGS__); \
        } \
    } while (0)
#define LOG_RL(LVL, ...) \
    do { \
        static struct log_rl rl_ = { 5, 20, 5, 0, 0 }; \
        if (log_rl_allow(&rl_)) { \
            log_msg(LVL, LOG_MODULE, __VA_ARGS__); \
        } \
    } while (0)
#define LOG_WARN_RL(...) LOG_RL(LOG_LVL_WARN, __VA_ARGS__)
#define LOG_ERR_RL(...) LOG_RL(LOG_LVL_ERR, __VA_ARGS__)

#endif /* manager/log.h */
