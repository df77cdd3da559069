/* Benchmark harness for gpuop's TOML parser (bench/run.sh builds and runs it).
 *
 *   toml_bench --time FILE   read FILE into memory, parse it once to warm up,
 *                            then BENCH_RUNS (default 5) timed parses
 *   toml_bench --peak FILE   read FILE, parse it once, report peak RSS
 *
 * Output is one line of key=value pairs on stdout:
 *   --time: bytes runs median min (seconds, toml_parse() only; reading the
 *           file and toml_free() are outside the timed region), footprint
 *           (toml_doc_footprint), and a fingerprint of the parsed tree
 *           (nodes, keybytes, strbytes, intsum) that run.sh compares across
 *           parsers so that a parser returning a wrong tree cannot look fast.
 *   --peak: bytes maxrss_kib (getrusage ru_maxrss at exit) footprint
 * A parse error prints the parser's message on stderr and exits 1; usage and
 * I/O errors exit 2.
 *
 * Built by run.sh: cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -Isrc
 *                  bench/toml_bench.c BUILD/libgpuop_core.a -lm */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "toml/toml.h"

static const char *prog = "toml_bench";

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    struct stat sb;
    if (!f || fstat(fileno(f), &sb) != 0) {
        fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
        exit(2);
    }
    size_t n = (size_t)sb.st_size;
    char *buf = malloc(n ? n : 1); /* exactly the input: the parser reads nothing past len */
    if (!buf) {
        fprintf(stderr, "%s: %s: out of memory\n", prog, path);
        exit(2);
    }
    if (fread(buf, 1, n, f) != n || getc(f) != EOF) {
        fprintf(stderr, "%s: %s: short read or file changed while reading\n", prog, path);
        exit(2);
    }
    fclose(f);
    *len = n;
    return buf;
}

static int bench_runs(void)
{
    const char *s = getenv("BENCH_RUNS");
    if (!s || !*s) return 5;
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || v < 1 || v > 100000) {
        fprintf(stderr, "%s: BENCH_RUNS must be a positive integer, got '%s'\n", prog, s);
        exit(2);
    }
    return (int)v;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static toml_doc *parse_or_die(const char *src, size_t len, const char *path)
{
    gp_error err;
    memset(&err, 0, sizeof err);
    toml_doc *doc = toml_parse(src, len, path, &err);
    if (!doc) {
        fprintf(stderr, "%s: parse failed: %s\n", prog, err.text[0] ? err.text : "(no message)");
        exit(1);
    }
    return doc;
}

/* ---- fingerprint of the parsed tree ---- */

typedef struct stats {
    uint64_t nodes;    /* tables, arrays and scalars, the root included */
    uint64_t keybytes; /* UTF-8 bytes of every key */
    uint64_t strbytes; /* UTF-8 bytes of every string value */
    uint64_t intsum;   /* sum of every integer, modulo 2^64 */
} stats;

static void walk_table(const toml_table *t, stats *st);

static void walk_value(const toml_value *v, stats *st)
{
    st->nodes++;
    switch (v->type) {
    case TOML_TABLE:
        walk_table(v->u.table, st);
        break;
    case TOML_ARRAY: {
        size_t n = toml_array_size(v->u.array);
        for (size_t i = 0; i < n; i++)
            walk_value(toml_array_at(v->u.array, i), st);
        break;
    }
    case TOML_STRING:
        st->strbytes += v->len;
        break;
    case TOML_INTEGER:
        st->intsum += (uint64_t)v->u.i;
        break;
    default:
        break;
    }
}

static void walk_table(const toml_table *t, stats *st)
{
    size_t n = toml_table_size(t);
    for (size_t i = 0; i < n; i++) {
        const toml_entry *e = toml_table_entry(t, i);
        st->keybytes += toml_entry_keylen(e);
        walk_value(&e->value, st);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int do_time(const char *path)
{
    int runs = bench_runs();
    size_t len;
    char *src = read_file(path, &len);

    toml_doc *doc = parse_or_die(src, len, path); /* warm-up, not timed */
    stats st = {0, 0, 0, 0};
    st.nodes++;
    walk_table(toml_root(doc), &st);
    size_t footprint = toml_doc_footprint(doc);
    toml_free(doc);

    double *t = malloc((size_t)runs * sizeof *t);
    if (!t) return 2;
    for (int i = 0; i < runs; i++) {
        double t0 = now();
        doc = parse_or_die(src, len, path);
        t[i] = now() - t0;
        toml_free(doc);
    }
    qsort(t, (size_t)runs, sizeof *t, cmp_double);
    double median = runs % 2 ? t[runs / 2] : (t[runs / 2 - 1] + t[runs / 2]) / 2;
    printf("bytes=%zu runs=%d median=%.9f min=%.9f footprint=%zu nodes=%" PRIu64
           " keybytes=%" PRIu64 " strbytes=%" PRIu64 " intsum=%" PRIu64 "\n",
           len, runs, median, t[0], footprint, st.nodes, st.keybytes, st.strbytes, st.intsum);
    free(t);
    free(src);
    return 0;
}

static int do_peak(const char *path)
{
    size_t len;
    char *src = read_file(path, &len);
    toml_doc *doc = parse_or_die(src, len, path);
    size_t footprint = toml_doc_footprint(doc);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru); /* ru_maxrss is a high-water mark */
    printf("bytes=%zu maxrss_kib=%ld footprint=%zu\n", len, ru.ru_maxrss, footprint);
    toml_free(doc);
    free(src);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--time") == 0) return do_time(argv[2]);
    if (argc == 3 && strcmp(argv[1], "--peak") == 0) return do_peak(argv[2]);
    fprintf(stderr, "usage: %s --time FILE | --peak FILE   (BENCH_RUNS=N sets timed runs)\n", prog);
    return 2;
}
