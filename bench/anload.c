/* Load client and runner of bench/analyzers_bench.sh.
 *
 *   anload load URL DATA THREADS < REQUESTS
 *       sends REQUESTS to a Kubernetes API server as fast as THREADS
 *       keep-alive connections allow. One request a line: METHOD <tab> PATH
 *       <tab> BODY, METHOD one of POST, PUT, PATCH (a merge patch) or STATUS
 *       (a merge patch of PATH's /status subresource). Lines are taken in
 *       order by whichever thread is free, so a line must not depend on
 *       another of the same input: the bench sends creates and status patches
 *       in separate runs. DATA is the server's data directory (DATA/tls.crt
 *       the CA, DATA/token the bearer token). An answer other than 200 or 201
 *       is an error; the first ones go to stderr. Prints one line: requests=
 *       ok= errors= seconds= rps= bytes_in= (the request bodies).
 *   anload run OUT RUNS SERVER_PID COMMAND...
 *       runs COMMAND RUNS times one after the other, the first run's stdout
 *       into OUT (kept to check the answer), the others' to /dev/null; stderr
 *       is ours. Prints one line a run: run= rc= wall_ms= (fork to reap,
 *       CLOCK_MONOTONIC) maxrss_kib= (wait4's ru_maxrss of that child) user_s=
 *       sys_s= server_ticks= (utime+stime of SERVER_PID meanwhile; 0 when
 *       SERVER_PID is 0) clk_tck=. A C runner, as a child's ru_maxrss counts
 *       the RSS its parent had when it forked: Python would add ~14 MiB.
 *
 * Exit status: 0 all answered 200/201 (load) or every run exited 0 or 1
 * (run), 1 otherwise, 2 usage or setup errors.
 *
 * Built by analyzers_bench.sh: cc -O2 -std=c11 -pthread bench/anload.c
 *                              -lcurl -lpthread */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* wait4 */
#include <curl/curl.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A server that died refuses every connection at once: a thread stops after
 * this many transport errors in a row. */
#define MAX_TRANSPORT_ERRORS_IN_A_ROW 20
#define MAX_ERRORS_SHOWN              8

typedef struct request {
    const char *method, *path, *body;
    size_t body_len;
} request;

typedef struct shared {
    const char *url;
    char ca[PATH_MAX];
    char auth[200];
    request *reqs;
    size_t nreqs;
    atomic_size_t next;
    atomic_long ok, errors, shown;
} shared;

static void die(const char *what)
{
    fprintf(stderr, "anload: %s\n", what);
    exit(2);
}

/* Keeps the start of an error answer for the message. */
static size_t keep_start(char *data, size_t size, size_t n, void *user)
{
    char *buf = user;
    size_t have = strlen(buf), add = size * n;
    if (have < 299) {
        size_t take = add < 299 - have ? add : 299 - have;
        memcpy(buf + have, data, take);
        buf[have + take] = '\0';
    }
    return add;
}

static char *read_all(FILE *f, size_t *len)
{
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap);
    if (!buf) die("out of memory");
    size_t got;
    while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (cap - n - 1 == 0) {
            cap *= 2;
            char *bigger = realloc(buf, cap);
            if (!bigger) die("out of memory");
            buf = bigger;
        }
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* Splits the input in place into requests. */
static void parse_requests(shared *s, char *text, size_t len)
{
    size_t cap = 1024;
    s->reqs = malloc(cap * sizeof *s->reqs);
    if (!s->reqs) die("out of memory");
    for (char *line = text; line < text + len;) {
        char *end = strchr(line, '\n');
        if (end) *end = '\0';
        char *next = end ? end + 1 : text + len;
        if (*line) {
            char *tab1 = strchr(line, '\t'), *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
            if (!tab2) die("a request line is not METHOD<tab>PATH<tab>BODY");
            *tab1 = *tab2 = '\0';
            if (s->nreqs == cap) {
                cap *= 2;
                request *bigger = realloc(s->reqs, cap * sizeof *s->reqs);
                if (!bigger) die("out of memory");
                s->reqs = bigger;
            }
            s->reqs[s->nreqs++] = (request){line, tab1 + 1, tab2 + 1, strlen(tab2 + 1)};
        }
        line = next;
    }
}

static struct curl_slist *headers_for(const shared *s, const char *content_type)
{
    struct curl_slist *h = curl_slist_append(NULL, s->auth);
    h = curl_slist_append(h, "Accept: application/json");
    /* curl would otherwise wait for "100 Continue" before larger bodies. */
    h = curl_slist_append(h, "Expect:");
    h = curl_slist_append(h, content_type);
    if (!h) die("out of memory");
    return h;
}

static void note(shared *s, const request *r, const char *what)
{
    atomic_fetch_add(&s->errors, 1);
    if (atomic_fetch_add(&s->shown, 1) < MAX_ERRORS_SHOWN)
        fprintf(stderr, "anload: %s %s: %s\n", r->method, r->path, what);
}

static void *worker(void *arg)
{
    shared *s = arg;
    CURL *c = curl_easy_init();
    if (!c) die("curl_easy_init failed");
    struct curl_slist *json = headers_for(s, "Content-Type: application/json");
    struct curl_slist *merge = headers_for(s, "Content-Type: application/merge-patch+json");
    char url[2048], answer[300];
    curl_easy_setopt(c, CURLOPT_CAINFO, s->ca);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
    int transport_in_a_row = 0;
    for (;;) {
        size_t i = atomic_fetch_add(&s->next, 1);
        if (i >= s->nreqs || transport_in_a_row >= MAX_TRANSPORT_ERRORS_IN_A_ROW) break;
        const request *r = &s->reqs[i];
        bool status = strcmp(r->method, "STATUS") == 0;
        bool patch = status || strcmp(r->method, "PATCH") == 0;
        snprintf(url, sizeof url, "%s%s%s", s->url, r->path, status ? "/status" : "");
        answer[0] = '\0';
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, patch ? merge : json);
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, patch ? "PATCH" : r->method);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, r->body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)r->body_len);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, keep_start);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, answer);
        CURLcode rc = curl_easy_perform(c);
        if (rc != CURLE_OK) {
            transport_in_a_row++;
            note(s, r, curl_easy_strerror(rc));
            continue;
        }
        transport_in_a_row = 0;
        long code = 0;
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
        if (code == 200 || code == 201) {
            atomic_fetch_add(&s->ok, 1);
        } else {
            char what[400];
            snprintf(what, sizeof what, "HTTP %ld: %s", code, answer);
            note(s, r, what);
        }
    }
    curl_slist_free_all(json);
    curl_slist_free_all(merge);
    curl_easy_cleanup(c);
    return NULL;
}

static void read_token(shared *s, const char *data)
{
    char path[PATH_MAX], token[160] = "";
    snprintf(path, sizeof path, "%s/token", data);
    FILE *f = fopen(path, "r");
    if (!f || !fgets(token, sizeof token, f)) die("cannot read DATA/token");
    fclose(f);
    token[strcspn(token, "\r\n")] = '\0';
    snprintf(s->auth, sizeof s->auth, "Authorization: Bearer %s", token);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int run_load(int argc, char **argv)
{
    static shared s;
    s.url = argv[2];
    snprintf(s.ca, sizeof s.ca, "%s/tls.crt", argv[3]);
    read_token(&s, argv[3]);
    int threads = atoi(argv[4]);
    if (threads < 1 || threads > 64 || argc != 5) die("THREADS takes 1 to 64");
    size_t len, bytes = 0;
    char *text = read_all(stdin, &len);
    parse_requests(&s, text, len);
    for (size_t i = 0; i < s.nreqs; i++)
        bytes += s.reqs[i].body_len;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) die("curl_global_init failed");
    pthread_t tid[64];
    double t0 = now_s();
    for (int t = 0; t < threads; t++)
        if (pthread_create(&tid[t], NULL, worker, &s) != 0) die("pthread_create failed");
    for (int t = 0; t < threads; t++)
        pthread_join(tid[t], NULL);
    double secs = now_s() - t0;
    long ok = atomic_load(&s.ok), errors = atomic_load(&s.errors);
    printf("requests=%zu ok=%ld errors=%ld seconds=%.3f rps=%.0f bytes_in=%zu\n", s.nreqs, ok,
           errors, secs, secs > 0 ? (double)ok / secs : 0.0, bytes);
    curl_global_cleanup();
    free(s.reqs);
    free(text);
    return ok == (long)s.nreqs ? 0 : 1;
}

/* utime + stime of PID in clock ticks; 0 when it cannot be read. */
static long long cpu_ticks(long pid)
{
    if (pid <= 0) return 0;
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* the command name may hold spaces: the fields follow its last ')' */
    char *p = strrchr(buf, ')');
    long long utime = 0, stime = 0;
    if (!p ||
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lld %lld", &utime, &stime) != 2)
        return 0;
    return utime + stime;
}

/* One run of argv with stdout to `out`; false when it could not start. */
static bool run_once(int k, const char *out, long server, char **cmd)
{
    long long ticks0 = cpu_ticks(server);
    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0) return false;
    if (pid == 0) {
        int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0) _exit(127);
        close(fd);
        execvp(cmd[0], cmd);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) return false;
    double wall = now_s() - t0;
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    printf("run=%d rc=%d wall_ms=%.1f maxrss_kib=%ld user_s=%.3f sys_s=%.3f server_ticks=%lld "
           "clk_tck=%ld\n",
           k, rc, wall * 1e3, ru.ru_maxrss,
           (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6,
           cpu_ticks(server) - ticks0, sysconf(_SC_CLK_TCK));
    fflush(stdout);
    return rc == 0 || rc == 1;
}

static int run_commands(int argc, char **argv)
{
    if (argc < 6) die("usage: anload run OUT RUNS SERVER_PID COMMAND...");
    int runs = atoi(argv[3]);
    long server = atol(argv[4]);
    if (runs < 1) die("RUNS takes a number >= 1");
    bool all_ok = true;
    for (int k = 1; k <= runs; k++)
        all_ok &= run_once(k, k == 1 ? argv[2] : "/dev/null", server, argv + 5);
    return all_ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc >= 5 && strcmp(argv[1], "load") == 0) return run_load(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "run") == 0) return run_commands(argc, argv);
    fputs("usage: anload load URL DATA THREADS < REQUESTS\n"
          "       anload run OUT RUNS SERVER_PID COMMAND...\n",
          stderr);
    return 2;
}
