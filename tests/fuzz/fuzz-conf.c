/* tests/fuzz/fuzz-conf.c -- libFuzzer target for the vpowerd.conf parser.
 *
 * vpowerd.conf is written by an administrator, but a typo, a truncated
 * copy or a file of the wrong kind must give a "FILE:LINE: reason" error
 * and never crash or misparse.  This feeds arbitrary bytes to
 * conf_parse() on top of the defaults and checks what the daemon relies
 * on afterwards: an error is a non-empty message naming the file; an
 * accepted config has NUL-terminated strings, absolute paths, values in
 * the documented ranges and max_period_ms >= period_ms.  Inputs that
 * contain "include" are skipped: that directive reads files, and a
 * fuzzer that opened /proc/kmsg would hang (include is covered by
 * tests/unit/test-conf.c).  Built with clang -fsanitize=fuzzer by
 * `make fuzz-conf` / .ci/fuzz; replayed over the corpus by make check. */

#include <config.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "manager/conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* True if the fixed-size string field 'f' is NUL-terminated and is
 * either empty or an absolute path (when 'path'). */
static int
str_ok(const char *f, size_t size, int path)
{
    if (!memchr(f, '\0', size)) {
        return 0;
    }
    return !path || !f[0] || f[0] == '/';
}

#define STR_OK(C, FIELD, PATH) str_ok((C)->FIELD, sizeof (C)->FIELD, PATH)

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vpd_conf c, before;
    char err[512];
    char *text;
    int r;

    if (size > 256 * 1024 || memmem(data, size, "include", 7)) {
        return 0;
    }
    text = malloc(size + 1);
    if (!text) {
        abort();
    }
    memcpy(text, data, size);
    text[size] = '\0';
    conf_defaults(&c);
    before = c;
    memset(err, 0x55, sizeof err);
    r = conf_parse(&c, "fuzz.conf", text, err, sizeof err);
    if (r) {
        if (r != -EINVAL || !memchr(err, '\0', sizeof err)
            || strncmp(err, "fuzz.conf:", 10) != 0) {
            abort();
        }
    } else {
        struct pol_config pc;

        if (!STR_OK(&c, connect_uri, 0) || !STR_OK(&c, sysfs_root, 1)
            || !STR_OK(&c, model_file, 1) || !STR_OK(&c, journal_path, 1)
            || !STR_OK(&c, socket_path, 1) || !STR_OK(&c, admin_group, 0)
            || !STR_OK(&c, record_path, 1)) {
            abort();
        }
        if (c.period_ms < 100 || c.period_ms > 600000
            || c.max_period_ms < c.period_ms
            || c.max_period_ms > 3600000 || c.headroom_pct > 90
            || c.spread_ready_pct < 1 || c.spread_ready_pct > 100
            || c.pack_dwell_ms > 3600000 || c.hint_rate < 1
            || c.hint_rate > 1000 || c.default_policy >= POL_N_KINDS) {
            abort();
        }
        if (c.managed_set ? cpuset_empty(&c.managed)
            : !cpuset_equal(&c.managed, &before.managed)) {
            abort();
        }
        conf_to_policy(&c, &pc);
        if (pc.min_interval_ns > pc.max_interval_ns
            || pc.powersave_headroom_pct > pc.headroom_pct) {
            abort();
        }
    }
    free(text);
    return 0;
}
