/* sim/trace.c -- Reader registry and helpers shared by trace readers.
 *
 * Directory listing is sorted with strcmp() so that "the first N VMs"
 * means the same files on every machine and locale; names are used as
 * opaque strings (PlanetLab has names with spaces). */

#include <config.h>

#include "sim/trace.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const struct trace_reader *const readers[] = {
    &trace_bitbrains,           /* Probed first: it checks a header. */
    &trace_planetlab,
};

const struct trace_reader *
trace_reader_find(const char *name, const char *dir)
{
    size_t n = sizeof readers / sizeof readers[0];

    for (size_t i = 0; i < n; i++) {
        if (strcmp(name, "auto") ? !strcmp(name, readers[i]->name)
                                 : readers[i]->probe(dir)) {
            return readers[i];
        }
    }
    return NULL;
}

void
trace_set_free(struct trace_set *set)
{
    if (!set) {
        return;
    }
    for (size_t i = 0; i < set->n_vms; i++) {
        free(set->vms[i].name);
        free(set->vms[i].demand_ppm);
    }
    free(set->vms);
    memset(set, 0, sizeof *set);
}

static int
cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *) a, *(char *const *) b);
}

void
trace_names_free(char **names, size_t n)
{
    for (size_t i = 0; names && i < n; i++) {
        free(names[i]);
    }
    free(names);
}

int
trace_list_dir(const char *dir, const char *suffix, char ***names,
               char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char **v = NULL;
    size_t n = 0, cap = 0;
    size_t slen = suffix ? strlen(suffix) : 0;

    *names = NULL;
    if (!d) {
        int e = errno;
        snprintf(err, errlen, "%s: %s", dir, strerror(e));
        return -e;
    }
    while ((de = readdir(d)) != NULL) {
        char path[4096];
        struct stat st;
        size_t len = strlen(de->d_name);

        if (de->d_name[0] == '.' || (suffix && (len < slen ||
            strcmp(de->d_name + len - slen, suffix)))) {
            continue;
        }
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (stat(path, &st) || !S_ISREG(st.st_mode)) {
            continue;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            v = realloc(v, cap * sizeof *v);
            if (!v) {
                abort();
            }
        }
        v[n] = strdup(de->d_name);
        if (!v[n]) {
            abort();
        }
        n++;
    }
    closedir(d);
    if (n) {
        qsort(v, n, sizeof *v, cmp_names);
    }
    *names = v;
    return (int) n;
}

int
trace_read_file(const char *dir, const char *name, char **text,
                size_t *len, char *err, size_t errlen)
{
    char path[4096];
    FILE *f;
    char *buf = NULL;
    size_t n = 0, cap = 0;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "rb");
    if (!f) {
        int e = errno;
        snprintf(err, errlen, "%s: %s", path, strerror(e));
        return -e;
    }
    for (;;) {
        if (cap - n < 4096) {
            cap = cap ? 2 * cap : 8192;
            buf = realloc(buf, cap + 1);
            if (!buf) {
                abort();
            }
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            break;
        }
    }
    if (ferror(f)) {
        snprintf(err, errlen, "%s: read error", path);
        fclose(f);
        free(buf);
        return -EIO;
    }
    fclose(f);
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return 0;
}
