/* tests/fuzz/fuzz-guestchan.c -- libFuzzer target for the host's whole
 * guest-channel input path (manager/guestchan.c over agent/gchproto.c).
 *
 * Each input is a byte stream from a hostile guest, fed through
 * gch_input() into a fresh channel of a 4-vCPU VM.  The daemon is stubbed:
 * hint() aborts unless the hint is for this VM with an in-range kind
 * and argument, so a decoder or bounds bug shows up as a crash, and the
 * accounting must add up (every message either reaches policy or is
 * counted as rejected).  Rate limiting is disabled (hint_rate above 1e9
 * makes a token cost 0 ns) so the fuzzer reaches every handler. */

#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/gchproto.h"
#include "manager/guestchan.h"
#include "manager/log.h"
#include "manager/sched.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct vpd_vm *the_vm;
static uint64_t n_hints;

static void
stub_hint(struct vpd *d, struct vpd_vm *vm, enum vpd_hint_kind kind,
          uint32_t arg, const char *text, uint64_t read_ns)
{
    (void) read_ns;
    (void) d;
    if (vm != the_vm || (unsigned) kind >= VPD_N_HINTS || !text) {
        abort();
    }
    if ((kind == VPD_HINT_LATENCY_BEGIN && arg > GCH_MAX_LATENCY_US)
        || (kind == VPD_HINT_BOOST && (arg < 1 || arg > GCH_MAX_BOOST_MS))
        || (kind == VPD_HINT_IDLE && (arg < 1 || arg > GCH_MAX_IDLE_MS))
        || (kind == VPD_HINT_UTIL && arg > GCH_MAX_PERMILLE)) {
        abort();
    }
    n_hints++;
}

static void
stub_count_error(struct vpd *d, enum vpd_err_kind kind)
{
    (void) d;
    if (kind != VPD_E_GUEST) {
        abort();
    }
}

/* The daemon's entry points, as the channel sees them. */
static const struct gch_ops stub_ops = {
    .hint = stub_hint,
    .count_error = stub_count_error,
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct vpd d;
    static struct vpd_vm vm;
    int sv[2];

    if (!d.sched) {
        log_init("fuzz-guestchan", false, LOG_LVL_ERR);
        d.sched = sched_create();
        d.conf.hint_rate = 2000000000u;
    }
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) {
        abort();
    }
    vm = (struct vpd_vm) { .n_vcpus = 4 };
    the_vm = &vm;
    n_hints = 0;
    gch_attach_fd(&d, &vm, sv[0], &stub_ops);
    if (gch_input(&d, &vm, data, size) < 0) {
        abort();
    }
    /* Nothing reaches policy that was not a whole valid message. */
    if (n_hints > size / GCH_HDR_LEN) {
        abort();
    }
    gch_detach(&d, &vm);
    close(sv[1]);
    return 0;
}
