/* tests/sim/test-trace.c -- Trace readers accept good input exactly and
 * reject every malformed file with "FILE:LINE: reason".
 *
 * Fixtures live in tests/sim/data/: pl-ok (three PlanetLab files, one
 * name with spaces), pl-bad (one trap per file), pl-dirbad (a good file
 * and a bad one: the set must not be half-read), bb-* (Bitbrains). */

#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/burst.h"
#include "sim/replay.h"
#include "sim/rng.h"
#include "sim/trace.h"
#include "tests/sim/check.h"

static char datadir[1024];

static void
path_of(char *buf, size_t len, const char *sub)
{
    snprintf(buf, len, "%s/%s", datadir, sub);
}

/* Parses pl-bad/'name' and checks the error names 'file:line'. */
static void
expect_pl_error(const char *name, const char *prefix, const char *reason)
{
    char dir[4096], err[512], *text;
    size_t len;
    uint32_t pct[288];
    int rc;

    path_of(dir, sizeof dir, "pl-bad");
    rc = trace_read_file(dir, name, &text, &len, err, sizeof err);
    CHECK(rc == 0);
    if (rc) {
        return;
    }
    err[0] = '\0';
    rc = trace_planetlab_parse(name, text, len, pct, 288, err, sizeof err);
    free(text);
    CHECK(rc < 0);
    if (strncmp(err, prefix, strlen(prefix)) || !strstr(err, reason)) {
        fprintf(stderr, "  %s: got '%s', want '%s...%s'\n", name, err,
                prefix, reason);
        fail_count++;
    }
}

static void
test_planetlab_ok(void)
{
    const struct trace_reader *rd;
    struct trace_opts o = { 2, 0, 1, 0 };
    struct trace_set ts;
    char dir[4096], err[512] = "";
    int rc;

    path_of(dir, sizeof dir, "pl-ok");
    rd = trace_reader_find("auto", dir);
    CHECK(rd == &trace_planetlab);
    rc = trace_planetlab.load(dir, &o, &ts, err, sizeof err);
    CHECK(rc == 0);
    if (rc) {
        fprintf(stderr, "  %s\n", err);
        return;
    }
    /* The first two in byte order, the spaced name included. */
    CHECK(ts.n_vms == 2);
    CHECK(ts.n_intervals == 288);
    CHECK(ts.interval_s == 300);
    CHECK(!strcmp(ts.vms[0].name, "a_vm"));
    CHECK(!strcmp(ts.vms[1].name, "b vm_ with space"));
    CHECK(ts.vms[1].n_vcpus == 1);
    CHECK(ts.vms[0].demand_ppm[0] == 30000);      /* "3" -> 3 %. */
    CHECK(ts.vms[1].demand_ppm[0] == 500000);
    CHECK(ts.vms[1].demand_ppm[1] == 570000);
    trace_set_free(&ts);

    o.max_vms = 4;                                /* Only 3 files. */
    rc = trace_planetlab.load(dir, &o, &ts, err, sizeof err);
    CHECK(rc < 0 && ts.n_vms == 0);

    o.max_vms = 3;
    o.max_intervals = 24;                         /* 2 hours. */
    rc = trace_planetlab.load(dir, &o, &ts, err, sizeof err);
    CHECK(rc == 0 && ts.n_intervals == 24 && ts.n_vms == 3);
    trace_set_free(&ts);
}

static void
test_planetlab_bad(void)
{
    struct trace_opts o = { 0, 0, 1, 0 };
    struct trace_set ts;
    char dir[4096], err[512] = "";
    int rc;

    expect_pl_error("text", "text:5:", "not an integer");
    expect_pl_error("range", "range:7:", "out of range");
    expect_pl_error("truncated", "truncated:200:", "truncated");
    expect_pl_error("empty", "empty:1:", "empty file");
    expect_pl_error("extra", "extra:289:", "extra line");
    expect_pl_error("emptyline", "emptyline:10:", "empty line");
    expect_pl_error("negative", "negative:3:", "not an integer");
    expect_pl_error("float", "float:12:", "not an integer");

    /* A bad file anywhere in the selection rejects the whole set. */
    path_of(dir, sizeof dir, "pl-dirbad");
    rc = trace_planetlab.load(dir, &o, &ts, err, sizeof err);
    CHECK(rc < 0);
    CHECK(ts.n_vms == 0 && ts.vms == NULL);
    CHECK(strstr(err, "/pl-dirbad/b bad:42: not an integer") != NULL);
    /* ...but selecting only the good one works. */
    o.max_vms = 1;
    rc = trace_planetlab.load(dir, &o, &ts, err, sizeof err);
    CHECK(rc == 0 && ts.n_vms == 1);
    trace_set_free(&ts);
}

static void
expect_bb_error(const char *sub, const char *prefix, const char *reason)
{
    struct trace_opts o = { 0, 0, 1, 0 };
    struct trace_set ts;
    char dir[4096], err[512] = "";
    int rc;

    path_of(dir, sizeof dir, sub);
    rc = trace_bitbrains.load(dir, &o, &ts, err, sizeof err);
    CHECK(rc < 0);
    CHECK(ts.n_vms == 0);
    if (!strstr(err, prefix) || !strstr(err, reason)) {
        fprintf(stderr, "  %s: got '%s', want '%s...%s'\n", sub, err,
                prefix, reason);
        fail_count++;
    }
}

static void
test_bitbrains(void)
{
    struct trace_opts o = { 0, 4, 7, 0 };
    struct trace_set ts;
    char dir[4096], err[512] = "";
    const struct trace_vm *vm;
    uint64_t sum;
    bool equal = true;
    int rc;

    path_of(dir, sizeof dir, "bb-ok");
    CHECK(trace_reader_find("auto", dir) == &trace_bitbrains);
    rc = trace_bitbrains.load(dir, &o, &ts, err, sizeof err);
    CHECK(rc == 0);
    if (rc) {
        fprintf(stderr, "  %s\n", err);
        return;
    }
    CHECK(ts.n_vms == 2 && ts.n_intervals == 4);
    vm = &ts.vms[0];                           /* "62.csv" < "7.csv". */
    CHECK(!strcmp(vm->name, "62.csv"));
    CHECK(vm->n_vcpus == 8);
    /* Interval 0: 10400 MHz of 2600 MHz vCPUs = 4 busy vCPUs, spread
     * unequally but summing to 4. */
    sum = 0;
    for (uint32_t v = 0; v < 8; v++) {
        sum += vm->demand_ppm[v];
        CHECK(vm->demand_ppm[v] <= 1000000);
        equal &= vm->demand_ppm[v] == 500000;
    }
    CHECK(sum > 3999990 && sum < 4000010);
    CHECK(!equal);
    /* Interval 1: 105.8 % is clamped to all 8 vCPUs busy. */
    sum = 0;
    for (uint32_t v = 0; v < 8; v++) {
        sum += vm->demand_ppm[8 + v];
    }
    CHECK(sum > 7999990 && sum < 8000010);
    /* Interval 2: a 0-core row = absent (not held over); the next row is
     * interval 4, outside the 4 loaded, so 2 and 3 are absent. */
    sum = 0;
    for (uint32_t v = 0; v < 8; v++) {
        sum += vm->demand_ppm[16 + v];
    }
    CHECK(sum == 0);
    /* The second file starts one interval later: absent before. */
    CHECK(ts.vms[1].demand_ppm[0] == 0);
    CHECK(ts.vms[1].demand_ppm[1] == 500000);
    trace_set_free(&ts);

    expect_bb_error("bb-text", "/bb-text/x.csv:2:", "not a number");
    expect_bb_error("bb-fields", "/bb-fields/x.csv:2:", "fields");
    /* A header without the five columns read, or wider than a row may
     * be (16 fields, BB_MAX_FIELDS); a row wider than any header may be
     * is counted whole. */
    expect_bb_error("bb-hdr4", "/bb-hdr4/x.csv:1:",
                    "header has 4 fields, expected 5 to 16");
    expect_bb_error("bb-hdr17", "/bb-hdr17/x.csv:1:",
                    "header has 17 fields, expected 5 to 16");
    expect_bb_error("bb-wide", "/bb-wide/x.csv:2:",
                    "20 fields, expected 11");
    expect_bb_error("bb-order", "/bb-order/x.csv:3:", "not increasing");
    expect_bb_error("bb-empty", "/bb-empty/x.csv:1:", "no data rows");
    expect_bb_error("bb-neg", "/bb-neg/x.csv:2:", "field 4 is negative");
    /* A last line cut in the middle is rejected, not half-read. */
    expect_bb_error("bb-trunc", "/bb-trunc/x.csv:3:", "fields");
}

/* Writes 'n' bytes of 'text' to 'dir'/'name'. */
static void
put_file(const char *dir, const char *name, const char *text, size_t n)
{
    char path[4096];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) {
        CHECK(fwrite(text, 1, n, f) == n);
        CHECK(fclose(f) == 0);
    }
}

/* Spreadsheet exports: a UTF-8 byte-order mark before the header and
 * CRLF line ends are read as the same data; a BOM anywhere else is
 * still an error. */
static void
test_bom(void)
{
    static const char bom[] = "\xef\xbb\xbf";
    static const char bb[] =
        "Timestamp [ms];\tCPU cores;\tCPU capacity provisioned [MHZ];"
        "\tCPU usage [MHZ];\tCPU usage [%]\r\n"
        "1372630104;\t2;\t2600.0;\t2600.0;\t50.0\r\n"
        "1372630404;\t2;\t2600.0;\t1300.0;\t25.0\r\n";
    char tmpl[] = "/tmp/vpower-test-trace.XXXXXX", err[512] = "", buf[8192];
    char *dir = mkdtemp(tmpl);
    struct trace_opts o = { 0, 2, 1, 0 };
    struct trace_set ts;
    uint32_t pct[288];
    size_t n = 0;
    int rc;

    CHECK(dir != NULL);
    if (!dir) {
        return;
    }
    memcpy(buf, bom, 3);
    memcpy(buf + 3, bb, sizeof bb - 1);
    put_file(dir, "v.csv", buf, 3 + sizeof bb - 1);
    CHECK(trace_reader_find("auto", dir) == &trace_bitbrains);
    rc = trace_bitbrains.load(dir, &o, &ts, err, sizeof err);
    CHECK(rc == 0);
    if (!rc) {
        CHECK(ts.n_vms == 1 && ts.vms[0].n_vcpus == 2);
        CHECK(ts.vms[0].demand_ppm[0] + ts.vms[0].demand_ppm[1] == 2000000);
        trace_set_free(&ts);
    } else {
        fprintf(stderr, "  %s\n", err);
    }
    snprintf(buf, sizeof buf, "%s/v.csv", dir);
    CHECK(unlink(buf) == 0);

    memcpy(buf, bom, 3);
    n = 3;
    for (int i = 0; i < 288; i++) {
        n += (size_t) snprintf(buf + n, sizeof buf - n, "%d\r\n", i % 101);
    }
    CHECK(trace_bom_len(buf, n) == 3 && trace_bom_len(buf + 3, n - 3) == 0);
    put_file(dir, "pl", buf, n);
    o.max_intervals = 0;
    rc = trace_planetlab.load(dir, &o, &ts, err, sizeof err);
    CHECK(rc == 0);
    if (!rc) {
        CHECK(ts.n_vms == 1 && ts.vms[0].demand_ppm[0] == 0
              && ts.vms[0].demand_ppm[287] == 850000);
        trace_set_free(&ts);
    }
    /* Inside the data it is not a number. */
    {
        static const char mid[] = "12\n\xef\xbb\xbf" "3\n";

        err[0] = '\0';
        rc = trace_planetlab_parse("pl", mid, sizeof mid - 1, pct, 2, err,
                                   sizeof err);
        CHECK(rc < 0 && strstr(err, "pl:2: not an integer") != NULL);
    }
    snprintf(buf, sizeof buf, "%s/pl", dir);
    CHECK(unlink(buf) == 0);
    CHECK(rmdir(dir) == 0);
}

/* Writes a valid 288-line PlanetLab file 'dir'/'name'. */
static void
put_pl_file(const char *dir, const char *name)
{
    char buf[2048];
    size_t n = 0;

    for (int i = 0; i < 288; i++) {
        n += (size_t) snprintf(buf + n, sizeof buf - n, "%d\n", i % 101);
    }
    put_file(dir, name, buf, n);
}

/* Loads 'dir' with 'rd' and checks that it fails with 'want' in the
 * message (or succeeds with 'n_ok' VMs when 'want' is NULL). */
static void
expect_load(const struct trace_reader *rd, const char *dir,
            const char *want, size_t n_ok)
{
    struct trace_opts o = { 0, 2, 1, 0 };
    struct trace_set ts;
    char err[512] = "";
    int rc = rd->load(dir, &o, &ts, err, sizeof err);

    if (want ? rc >= 0 || !strstr(err, want) : rc != 0 || ts.n_vms != n_ok) {
        fprintf(stderr, "  %s: rc %d, got '%s', want '%s'\n", dir, rc, err,
                want ? want : "success");
        fail_count++;
    }
    CHECK(want ? ts.n_vms == 0 && ts.vms == NULL : true);
    trace_set_free(&ts);
}

/* Entries of a trace directory that are not regular files are refused
 * by name, never skipped (the set would silently lose a VM) and never
 * waited on (a FIFO without a writer would block the reader forever; the
 * alarm in main() turns that into a failure).  A symbolic link to a
 * regular file is read like the file. */
static void
test_dir_entries(void)
{
    static const char bb[] =
        "Timestamp;CPU cores;CPU capacity provisioned [MHZ];"
        "CPU usage [MHZ];CPU usage [%]\n"
        "1372630104;2;2600.0;2600.0;50.0\n";
    /* 'kind': p FIFO, d directory, l symbolic link to nothing. */
    static const struct {
        const char *name, *what;
        char kind;
    } bad[] = {
        { "b_fifo", "a FIFO, not a regular file", 'p' },
        { "b_dir", "a directory, not a regular file", 'd' },
        { "b_dangling", "a dangling symbolic link to 'gone'", 'l' },
    };
    char tmpl[] = "/tmp/vpower-test-trace.XXXXXX", p[4096], want[4200];
    char err[512], *text;
    char *dir = mkdtemp(tmpl);
    size_t len;

    CHECK(dir != NULL);
    if (!dir) {
        return;
    }
    put_pl_file(dir, "a_good");
    snprintf(p, sizeof p, "%s/b_link", dir);
    CHECK(symlink("a_good", p) == 0);
    expect_load(&trace_planetlab, dir, NULL, 2);
    CHECK(unlink(p) == 0);

    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        snprintf(p, sizeof p, "%s/%s", dir, bad[k].name);
        CHECK((bad[k].kind == 'p' ? mkfifo(p, 0600)
               : bad[k].kind == 'd' ? mkdir(p, 0700)
               : symlink("gone", p)) == 0);
        snprintf(want, sizeof want, "%s: %s", p, bad[k].what);
        expect_load(&trace_planetlab, dir, want, 0);
        /* Named on the command line (a model, a recording): the same. */
        CHECK(trace_read_path(p, 0, &text, &len, err, sizeof err) < 0);
        CHECK(!strcmp(err, want));
        CHECK(remove(p) == 0);
    }

    CHECK(trace_read_path("/dev/null", 0, &text, &len, err,
                          sizeof err) == -EINVAL);
    CHECK(strstr(err, "/dev/null: a character device, not a regular file")
          != NULL);

    /* Bitbrains: a FIFO among the .csv files, and as the first one,
     * which the format probe reads. */
    snprintf(p, sizeof p, "%s/a_good", dir);
    CHECK(unlink(p) == 0);
    put_file(dir, "b.csv", bb, sizeof bb - 1);
    snprintf(p, sizeof p, "%s/c.csv", dir);
    CHECK(mkfifo(p, 0600) == 0);
    snprintf(want, sizeof want, "%s: a FIFO, not a regular file", p);
    expect_load(&trace_bitbrains, dir, want, 0);
    CHECK(unlink(p) == 0);
    snprintf(p, sizeof p, "%s/a.csv", dir);
    CHECK(mkfifo(p, 0600) == 0);
    CHECK(trace_reader_find("auto", dir) == &trace_planetlab);
    CHECK(unlink(p) == 0);
    snprintf(p, sizeof p, "%s/b.csv", dir);
    CHECK(unlink(p) == 0);
    CHECK(rmdir(dir) == 0);
}

/* A directory and name too long for one path are an error, not a path
 * cut short that may name another file ('DIR/ab' for 'DIR/abc'). */
static void
test_long_path(void)
{
    char tmpl[] = "/tmp/vpower-test-trace.XXXXXX", pad[4096], err[512];
    char *dir = mkdtemp(tmpl), *text;
    size_t len, n;

    CHECK(dir != NULL);
    if (!dir) {
        return;
    }
    put_file(dir, "ab", "1\n", 2);
    /* "DIR////...//abc" is 4096 bytes: one too many for the buffer. */
    n = strlen(dir);
    memcpy(pad, dir, n);
    memset(pad + n, '/', 4092 - n);
    pad[4092] = '\0';
    CHECK(trace_read_file(pad, "abc", &text, &len, err, sizeof err)
          == -ENAMETOOLONG);
    CHECK(strstr(err, "path longer than 4095 bytes") != NULL);
    snprintf(pad, sizeof pad, "%s/ab", dir);
    CHECK(unlink(pad) == 0);
    CHECK(rmdir(dir) == 0);
}

/* True if 's' holds no control character and no byte above 0x7e: what
 * trace_esc() makes of the test inputs below, which quote no valid
 * multi-byte UTF-8. */
static bool
plain_ascii(const char *s)
{
    for (; *s; s++) {
        if ((unsigned char) *s < 0x20 || (unsigned char) *s > 0x7e) {
            return false;
        }
    }
    return true;
}

/* Error messages quote input escaped and cut short: control bytes and
 * bytes that are not UTF-8 become \xNN, so a trace line cannot rewrite
 * the terminal or forge lines of a log. */
static void
test_escape(void)
{
    static const char evil[] = "1\x1b]0;owned\x07\xff\xc2\x9b\n";
    char err[512] = "", out[64], twice[64], line[400];
    uint32_t pct[2];
    int rc;

    rc = trace_planetlab_parse("pl", evil, sizeof evil - 1, pct, 2, err,
                               sizeof err);
    CHECK(rc == -EINVAL && plain_ascii(err));
    CHECK(strstr(err, "pl:1: not an integer percent: "
                  "'1\\x1b]0;owned\\x07\\xff\\xc2\\x9b'") != NULL);
    memset(line, 'x', sizeof line);
    rc = trace_planetlab_parse("pl", line, sizeof line, pct, 2, err,
                               sizeof err);
    CHECK(rc == -EINVAL && strstr(err, "'xxxxxxxxxxxxxxxxxxxx...'"));

    /* Valid UTF-8 stays; overlong forms, surrogates, stray continuation
     * bytes, NUL and C1 controls do not. */
    CHECK(!strcmp(trace_esc(out, sizeof out, "a\xc3\xa9\xe2\x82\xac"
                            "\xf0\x9d\x84\x9e", 10, 100),
                  "a\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e"));
    CHECK(!strcmp(trace_esc(out, sizeof out, "\xc0\xaf\xed\xa0\x80\x80", 6,
                            100), "\\xc0\\xaf\\xed\\xa0\\x80\\x80"));
    CHECK(!strcmp(trace_esc(out, sizeof out, "a\0b\x7f", 4, 100),
                  "a\\x00b\\x7f"));
    CHECK(!strcmp(trace_esc(out, sizeof out, "\xc2\x85", 2, 100),
                  "\\xc2\\x85"));
    /* A byte-order mark inside a file and a right-to-left override
     * would show as nothing or turn the message around. */
    CHECK(!strcmp(trace_esc(out, sizeof out, "4\xef\xbb\xbf""2 \xe2\x80\xae"
                            "x", 10, 100),
                  "4\\xef\\xbb\\xbf""2 \\xe2\\x80\\xae""x"));
    /* A cut never splits an escape or a character; escaping twice
     * changes nothing. */
    CHECK(!strcmp(trace_esc(out, sizeof out, "ab\x01" "cd", 5, 3),
                  "ab\\x01..."));
    CHECK(!strcmp(trace_esc(out, 10, "\x01\x02\x03", 3, 100),
                  "\\x01..."));
    CHECK(!strcmp(trace_esc(out, sizeof out, "a\xe2\x82\xac", 4, 3),
                  "a..."));
    trace_esc(out, sizeof out, evil, sizeof evil - 1, 100);
    CHECK(!strcmp(trace_esc(twice, sizeof twice, out, strlen(out), 100),
                  out));
}

/* The recording reader quotes tokens escaped too; a Bitbrains file with
 * a NUL byte is refused, not read up to the NUL. */
static void
test_escape_readers(void)
{
    static const char rec[] = "VPREC \x1b[2J\x1b[31mforged\n";
    static const char bb[] =
        "Timestamp;CPU cores;CPU capacity provisioned [MHZ];"
        "CPU usage [MHZ];CPU usage [%]\n"
        "1372630104;2;2600.0;2600.0;50.0\n"
        "\0junk\n"
        "1372630404;2;2600.0;1300.0;25.0\n";
    char tmpl[] = "/tmp/vpower-test-trace.XXXXXX", p[4096], want[4200];
    char err[512] = "";
    char *dir = mkdtemp(tmpl);
    struct record_stats st;

    CHECK(dir != NULL);
    if (!dir) {
        return;
    }
    put_file(dir, "rec", rec, sizeof rec - 1);
    snprintf(p, sizeof p, "%s/rec", dir);
    CHECK(record_replay(p, 0, &st, err, sizeof err) == -EINVAL);
    CHECK(plain_ascii(err));
    CHECK(strstr(err, "rec:1: record format version "
                  "\\x1b[2J\\x1b[31mforged,") != NULL);
    CHECK(unlink(p) == 0);

    put_file(dir, "x.csv", bb, sizeof bb - 1);
    snprintf(want, sizeof want, "%s/x.csv:3: NUL byte in the line", dir);
    expect_load(&trace_bitbrains, dir, want, 0);
    snprintf(p, sizeof p, "%s/x.csv", dir);
    CHECK(unlink(p) == 0);
    CHECK(rmdir(dir) == 0);
}

/* Trap: gaps inside a file hold the previous value; after the last row
 * the VM is absent; the README's clamped and absent rows are counted. */
static void
test_bitbrains_gap(void)
{
    struct trace_opts o = { 0, 6, 3, 0 };
    struct trace_set ts;
    char dir[4096], err[512] = "";
    double busy[6];
    int rc;

    path_of(dir, sizeof dir, "bb-gap");
    rc = trace_bitbrains.load(dir, &o, &ts, err, sizeof err);
    CHECK(rc == 0);
    if (rc) {
        fprintf(stderr, "  %s\n", err);
        return;
    }
    CHECK(ts.n_vms == 1 && ts.vms[0].n_vcpus == 2 && ts.n_intervals == 6);
    for (int k = 0; k < 6; k++) {
        busy[k] = (ts.vms[0].demand_ppm[2 * k]
                   + ts.vms[0].demand_ppm[2 * k + 1]) / 1e6;
    }
    CHECK(busy[0] > 0.9999 && busy[0] < 1.0001);
    CHECK(busy[1] > 1.9999 && busy[1] < 2.0001);
    CHECK(busy[2] > 1.9999 && busy[2] < 2.0001);    /* Held. */
    CHECK(busy[3] > 1.9999 && busy[3] < 2.0001);    /* Held. */
    CHECK(busy[4] > 0.4999 && busy[4] < 0.5001);
    CHECK(busy[5] == 0);                            /* After the end. */
    CHECK(ts.n_clamped == 0 && ts.n_absent == 0);
    trace_set_free(&ts);

    path_of(dir, sizeof dir, "bb-ok");
    o.max_intervals = 4;
    rc = trace_bitbrains.load(dir, &o, &ts, err, sizeof err);
    CHECK(rc == 0 && ts.n_clamped == 1 && ts.n_absent == 1);
    trace_set_free(&ts);

    /* A huge file is a bounded error, read no further than the bound. */
    o.max_file_bytes = 300;
    rc = trace_bitbrains.load(dir, &o, &ts, err, sizeof err);
    CHECK(rc == -EFBIG && ts.n_vms == 0);
    CHECK(strstr(err, "/bb-ok/62.csv: larger than 300 bytes") != NULL);
}

/* The spread model: sum preserved, capped at one vCPU, not all equal,
 * same seed same split, other seed another split. */
static void
test_spread(void)
{
    uint32_t a[8], b[8], c[8], one[8];
    struct rng r;
    uint64_t sum = 0;
    bool equal = true, same = true, differ = false;

    rng_init(&r, 1, 2, 3);
    trace_spread(&r, 2.5, 8, a);
    rng_init(&r, 1, 2, 3);
    trace_spread(&r, 2.5, 8, b);
    rng_init(&r, 2, 2, 3);
    trace_spread(&r, 2.5, 8, c);
    for (int i = 0; i < 8; i++) {
        sum += a[i];
        equal &= a[i] == a[0];
        same &= a[i] == b[i];
        differ |= a[i] != c[i];
        CHECK(a[i] <= 1000000);
    }
    CHECK(sum >= 2499996 && sum <= 2500004);
    CHECK(!equal && same && differ);
    /* Near-full VM: caps bind, excess moves, sum still exact. */
    rng_init(&r, 9, 0, 0);
    trace_spread(&r, 7.5, 8, one);
    sum = 0;
    for (int i = 0; i < 8; i++) {
        sum += one[i];
        CHECK(one[i] <= 1000000);
    }
    CHECK(sum >= 7499996 && sum <= 7500004);
    /* Above n is clamped to n: every vCPU full. */
    trace_spread(&r, 9.0, 8, one);
    for (int i = 0; i < 8; i++) {
        CHECK(one[i] == 1000000);
    }
}

/* --repeat: K copies, named NAME@k, each interval's total kept (rotated),
 * the split and the time offset differ from the original. */
static void
test_repeat(void)
{
    struct trace_opts o = { 0, 0, 5, 0 };
    struct trace_set ts;
    struct trace_shape sh0, sh;
    char dir[4096], err[512] = "";
    double tot0 = 0, tot1 = 0;
    bool shifted = false;
    int rc;

    path_of(dir, sizeof dir, "pl-ok");
    rc = trace_planetlab.load(dir, &o, &ts, err, sizeof err);
    CHECK(rc == 0);
    if (rc) {
        return;
    }
    trace_set_shape(&ts, &sh0);
    CHECK(trace_set_repeat(&ts, 0, 1) == -EINVAL);
    CHECK(trace_set_repeat(&ts, 4, 1) == 0);
    CHECK(ts.n_vms == 12);
    CHECK(!strcmp(ts.vms[3].name, "a_vm@1"));
    CHECK(!strcmp(ts.vms[9].name, "a_vm@3"));
    for (size_t t = 0; t < ts.n_intervals; t++) {
        tot0 += ts.vms[0].demand_ppm[t];
        tot1 += ts.vms[3].demand_ppm[t];
        shifted |= ts.vms[0].demand_ppm[t] != ts.vms[3].demand_ppm[t];
    }
    CHECK(tot0 == tot1);          /* Rotation keeps the day's work. */
    CHECK(shifted);
    trace_set_shape(&ts, &sh);
    CHECK(sh.n_vms == 12 && sh.n_vcpus == 12);
    CHECK(sh.mean_cores > 3.999 * sh0.mean_cores
          && sh.mean_cores < 4.001 * sh0.mean_cores);
    trace_set_free(&ts);

    /* Multi-vCPU copies are spread again: same totals, other split. */
    path_of(dir, sizeof dir, "bb-ok");
    o.max_intervals = 2;
    rc = trace_bitbrains.load(dir, &o, &ts, err, sizeof err);
    CHECK(rc == 0);
    if (rc) {
        return;
    }
    CHECK(trace_set_repeat(&ts, 3, 1) == 0 && ts.n_vms == 6);
    {
        const struct trace_vm *a = &ts.vms[0], *b = &ts.vms[2];
        uint64_t sa = 0, sb = 0;
        bool split_differs = false;

        CHECK(!strcmp(b->name, "62.csv@1") && b->n_vcpus == 8);
        for (int t = 0; t < 2; t++) {
            for (int c = 0; c < 8; c++) {
                sa += a->demand_ppm[t * 8 + c];
                sb += b->demand_ppm[t * 8 + c];
                split_differs |= a->demand_ppm[t * 8 + c]
                                 != b->demand_ppm[((t + 1) % 2) * 8 + c];
            }
        }
        CHECK((sa > sb ? sa - sb : sb - sa) < 20);
        CHECK(split_differs);
    }
    trace_set_free(&ts);
}

static void
test_burst(void)
{
    float a[300], b[300], c[300];
    double sum = 0;
    bool differ = false, same = true;

    burst_fill(1, 5, 3, 123400, 2.0, 300, a);
    burst_fill(1, 5, 3, 123400, 2.0, 300, b);
    burst_fill(2, 5, 3, 123400, 2.0, 300, c);
    for (int i = 0; i < 300; i++) {
        sum += a[i];
        same &= a[i] == b[i];
        differ |= a[i] != c[i];
        CHECK(a[i] >= 0 && a[i] <= 1.0f);
    }
    CHECK(same);
    CHECK(differ);
    CHECK(sum / 300 > 0.1233 && sum / 300 < 0.1235);
    burst_fill(1, 5, 3, 990000, 2.0, 300, a);
    sum = 0;
    for (int i = 0; i < 300; i++) {
        sum += a[i];
    }
    CHECK(sum / 300 > 0.9899 && sum / 300 < 0.9901);
}

int
main(void)
{
    const char *src = getenv("VPOWER_SRCDIR");

    snprintf(datadir, sizeof datadir, "%s/tests/sim/data",
             src ? src : ".");
    /* A reader blocked on a FIFO fails the test instead of hanging. */
    alarm(60);
    test_planetlab_ok();
    test_planetlab_bad();
    test_bitbrains();
    test_bitbrains_gap();
    test_bom();
    test_dir_entries();
    test_long_path();
    test_escape();
    test_escape_readers();
    test_spread();
    test_repeat();
    test_burst();
    return fail_count ? 1 : 0;
}
