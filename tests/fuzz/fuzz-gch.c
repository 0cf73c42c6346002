/* tests/fuzz/fuzz-gch.c -- libFuzzer target for the guest channel decoder.
 *
 * Feeds arbitrary bytes through the same loop guestchan.c runs on what a
 * guest sends (decode, skip a sane-length bad message, else resync on
 * the next magic) and checks two properties on every message accepted:
 * it re-encodes to exactly the bytes it came from (the decoder admits
 * nothing the encoder would not produce), and the loop always makes
 * progress.  Built with clang -fsanitize=fuzzer by `make fuzz`; in
 * `make check` GCH_REPLAY_MAIN adds a main() that replays the committed
 * corpus and regressions without clang. */

#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/gchproto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t again[GCH_MAX_MSG];
    size_t off = 0;

    while (off < size) {
        const uint8_t *p = data + off;
        size_t avail = size - off;
        struct gch_hdr h;
        struct gch_msg m;
        int r = gch_decode(p, avail, &m);

        if (r > 0) {
            if ((size_t) r > avail || r > GCH_MAX_MSG
                || gch_encode(&m, again, sizeof again) != r
                || memcmp(again, p, (size_t) r) != 0) {
                abort();
            }
            off += (size_t) r;
            continue;
        }
        if (r == GCH_E_SHORT) {
            break;
        }
        r = gch_decode_header(p, avail, &h);
        if (r != GCH_E_MAGIC && r != GCH_E_LENGTH && r != GCH_E_SHORT
            && h.length <= GCH_MAX_PAYLOAD
            && avail >= GCH_HDR_LEN + (size_t) h.length) {
            off += GCH_HDR_LEN + h.length;
        } else {
            size_t skip = gch_resync(p, avail);

            if (skip == 0 || skip > avail) {
                abort();
            }
            off += skip;
        }
    }
    return 0;
}

#ifdef GCH_REPLAY_MAIN
#include <dirent.h>
#include <stdio.h>

static int
replay_file(const char *path)
{
    static uint8_t buf[1 << 20];
    FILE *f = fopen(path, "rb");
    size_t n;

    if (!f) {
        perror(path);
        return -1;
    }
    n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, n);
    return 0;
}

static int
replay_dir(const char *dir, unsigned *count)
{
    char path[4096];
    struct dirent *de;
    DIR *d = opendir(dir);

    if (!d) {
        return 0;               /* Optional (regressions may be empty). */
    }
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.') {
            continue;
        }
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (replay_file(path) < 0) {
            closedir(d);
            return -1;
        }
        (*count)++;
    }
    closedir(d);
    return 0;
}

int
main(int argc, char **argv)
{
    const char *src = getenv("VPOWER_SRCDIR");
    char dir[4096];
    unsigned count = 0;
    int i;

    if (argc > 1) {
        for (i = 1; i < argc; i++) {
            if (replay_file(argv[i]) < 0) {
                return 99;
            }
            count++;
        }
    } else {
        if (!src) {
            src = ".";
        }
        snprintf(dir, sizeof dir, "%s/tests/fuzz/corpus/gch", src);
        if (replay_dir(dir, &count) < 0) {
            return 99;
        }
        snprintf(dir, sizeof dir, "%s/tests/fuzz/regressions/gch", src);
        if (replay_dir(dir, &count) < 0) {
            return 99;
        }
        if (count == 0) {
            fprintf(stderr, "fuzz-gch: no corpus under %s/tests/fuzz\n", src);
            return 99;
        }
    }
    printf("fuzz-gch: %u inputs replayed, no crash\n", count);
    return 0;
}
#endif
