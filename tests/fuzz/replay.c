/* tests/fuzz/replay.c -- Runs a libFuzzer target over its committed corpus.
 *
 * make check has no clang requirement, so each fuzz target is also linked
 * with this tiny main() (compiled with -DFUZZ_CORPUS='"name"'): it feeds
 * every file in $VPOWER_SRCDIR/tests/fuzz/corpus/NAME (or the directories
 * and files given as arguments) to LLVMFuzzerTestOneInput once.  A crash,
 * an assertion or a sanitizer report fails the test; an empty or missing
 * corpus is a hard error (99), since then nothing was checked. */

#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifndef FUZZ_CORPUS
#error "compile with -DFUZZ_CORPUS='\"name\"'"
#endif

static int
run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf;
    long n;

    if (!f) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return -1;
    }
    if (fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0
        || fseek(f, 0, SEEK_SET) < 0) {
        fclose(f);
        return -1;
    }
    /* A zero-size malloc may return NULL; keep one byte. */
    buf = malloc((size_t) n + 1);
    if (!buf || fread(buf, 1, (size_t) n, f) != (size_t) n) {
        fprintf(stderr, "%s: short read\n", path);
        free(buf);
        fclose(f);
        return -1;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(buf, (size_t) n);
    free(buf);
    return 0;
}

static int
run_path(const char *path, unsigned *count)
{
    struct stat st;
    struct dirent **ents;
    int n, ret = 0;

    if (stat(path, &st) < 0) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        (*count)++;
        return run_file(path);
    }
    /* Sorted, so a failure is reproducible by name. */
    n = scandir(path, &ents, NULL, alphasort);
    if (n < 0) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (ents[i]->d_name[0] != '.') {
            char *p;

            if (asprintf(&p, "%s/%s", path, ents[i]->d_name) < 0) {
                ret = -1;
            } else {
                if (run_path(p, count) < 0) {
                    ret = -1;
                }
                free(p);
            }
        }
        free(ents[i]);
    }
    free(ents);
    return ret;
}

int
main(int argc, char **argv)
{
    unsigned count = 0;
    int ret = 0;

    if (argc > 1) {
        for (int i = 1; i < argc; i++) {
            if (run_path(argv[i], &count) < 0) {
                ret = 99;
            }
        }
    } else {
        const char *src = getenv("VPOWER_SRCDIR");
        char *dir;

        if (asprintf(&dir, "%s/tests/fuzz/corpus/%s", src ? src : ".",
                     FUZZ_CORPUS) < 0) {
            return 99;
        }
        if (run_path(dir, &count) < 0) {
            ret = 99;
        }
        free(dir);
    }
    if (!count) {
        fprintf(stderr, "no corpus inputs found for %s\n", FUZZ_CORPUS);
        return 99;
    }
    printf("%s: %u inputs replayed\n", FUZZ_CORPUS, count);
    return ret;
}
