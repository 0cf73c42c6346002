/* tests/fuzz/fuzz-proto.c -- libFuzzer target for the control protocol.
 *
 * Feeds arbitrary bytes to proto_parse_request() (what any local user can
 * send to vpowerd) and proto_parse_reply() (what vpowerctl and the
 * exporter read), and checks the invariants the daemon relies on: an
 * accepted request has a valid command, a NUL-terminated non-empty VM
 * name where one is needed and in-range numbers, and it survives a
 * format/parse round trip unchanged.  Built with -fsanitize=fuzzer by
 * `make fuzz`; replayed over the committed corpus by make check. */

#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "manager/control/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct proto_request req, again;
    struct proto_reply rep;
    char err[512];
    enum proto_err e;

    e = proto_parse_request((const char *) data, size, &req, err, sizeof err);
    if (e != PROTO_OK) {
        if (e >= PROTO_N_ERRS || !err[0] || !memchr(err, '\0', sizeof err)) {
            abort();
        }
    } else {
        char *line;

        if (req.cmd >= PROTO_N_COMMANDS || req.id < 0
            || req.id > PROTO_MAX_ID
            || req.policy.latency_us > PROTO_MAX_LATENCY_US
            || req.policy.min_freq_khz > PROTO_MAX_FREQ_KHZ
            || !memchr(req.vm, '\0', sizeof req.vm)) {
            abort();
        }
        if ((req.cmd == PROTO_CMD_GET_POLICY || req.cmd == PROTO_CMD_EXPLAIN
             || req.cmd == PROTO_CMD_SET_POLICY) && !req.vm[0]) {
            abort();
        }
        line = proto_format_request(&req);
        if (proto_parse_request(line, strlen(line), &again, err, sizeof err)
            != PROTO_OK || again.cmd != req.cmd || again.id != req.id
            || strcmp(again.vm, req.vm)) {
            abort();
        }
        free(line);
    }
    if (proto_parse_reply((const char *) data, size, &rep, err, sizeof err)
        == 0) {
        if (rep.ok && !rep.result) {
            abort();
        }
        proto_reply_free(&rep);
    }
    return 0;
}
