/* The serving side of the simulated nodes (src/agents/host.c,
 * grpc_conn.c) on the wire, with libcurl as the gRPC client (HTTP/2 with
 * prior knowledge over the unix socket, as gRPC clients speak to
 * containerd): answers and trailers, trailers-only failures, the socket
 * following the daemon through SIGHUP and restarts, clients that do not
 * speak gRPC. Under ASan and valgrind with the other unit tests. The
 * answers' content is test_agents_services.c's, the recorded answers
 * through the real clients tests/agents/agent_test.py's. */
#define _XOPEN_SOURCE 700
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "temp_dir.h"

#include <curl/curl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "agents/host.h"
#include "agents/node.h"
#include "util/buf.h"

typedef struct fixture {
    char dir[64];
    char node[96];
    char sock[160];
    ag_host *host;
} fixture;

static void write_file(const char *dir, const char *rel, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    FILE *out = fopen(path, "w");
    assert_non_null(out);
    fputs(text, out);
    assert_int_equal(fclose(out), 0);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    snprintf(f->dir, sizeof f->dir, "/tmp/test-agents-host-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->node, sizeof f->node, "%s/n1", f->dir);
    snprintf(f->sock, sizeof f->sock, "%s/%s", f->node, AG_NODE_SOCKET);
    gp_error err = {0};
    assert_int_equal(ag_node_create(f->node, NULL, &err), 0);
    /* The supervisor restarts at once: the wait is the unit tests' of the
     * model (RestartSec=5 there), not this one's. */
    write_file(f->node, AG_NODE_STATE_FILE, "[containerd]\nrestart_sec = 0\n");
    f->host = ag_host_new(NULL, NULL, &err);
    assert_non_null(f->host);
    assert_int_equal(ag_host_add(f->host, "n1", f->node, NULL, &err), 0);
    assert_int_equal(ag_host_run(f->host, &err), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    ag_host_free(f->host);
    temp_dir_remove(f->dir);
    free(f);
    return 0;
}

/* ---- a gRPC call with libcurl ---- */

typedef struct reply {
    CURLcode rc;
    long http;
    int grpc_status; /* -1 when none came */
    char grpc_message[512];
    gp_buf body;
} reply;

static size_t on_header(char *data, size_t size, size_t n, void *ctx)
{
    reply *r = ctx;
    size_t len = size * n;
    if (len > 12 && strncmp(data, "grpc-status:", 12) == 0) r->grpc_status = atoi(data + 12);
    if (len > 13 && strncmp(data, "grpc-message:", 13) == 0) {
        size_t k = len - 13;
        while (k && (data[13 + k - 1] == '\r' || data[13 + k - 1] == '\n'))
            k--;
        const char *v = data + 13;
        while (k && *v == ' ')
            v++, k--;
        snprintf(r->grpc_message, sizeof r->grpc_message, "%.*s", (int)k, v);
    }
    return len;
}

static size_t on_body(char *data, size_t size, size_t n, void *ctx)
{
    reply *r = ctx;
    gp_buf_addn(&r->body, data, size * n);
    return size * n;
}

static reply call(const fixture *f, const char *method, const char *content_type, const void *msg,
                  size_t len)
{
    reply r = {.grpc_status = -1};
    CURL *c = curl_easy_init();
    assert_non_null(c);
    char url[256];
    snprintf(url, sizeof url, "http://localhost%s", method);
    unsigned char framed[64] = {0};
    assert_true(len + 5 <= sizeof framed);
    framed[4] = (unsigned char)len;
    if (len) memcpy(framed + 5, msg, len);
    char ctype[128];
    snprintf(ctype, sizeof ctype, "content-type: %s", content_type);
    struct curl_slist *h = curl_slist_append(NULL, ctype);
    h = curl_slist_append(h, "te: trailers");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, f->sock);
    curl_easy_setopt(c, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, framed);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)(len + 5));
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &r);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 5L);
    r.rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.http);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    return r;
}

static reply grpc(const fixture *f, const char *method, const void *msg, size_t len)
{
    return call(f, method, "application/grpc", msg, len);
}

/* Polls until the node answers Version again. The restart is due at once
 * and the serving thread makes it on its next pass; the bound (10 s in
 * all) only keeps a broken server from hanging the suite. */
static bool answers_again(const fixture *f)
{
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        reply r = grpc(f, "/containerd.services.version.v1.Version/Version", NULL, 0);
        gp_buf_free(&r.body);
        if (r.rc == CURLE_OK && r.grpc_status == 0) return true;
        struct timespec pause = {0, 10 * 1000 * 1000};
        nanosleep(&pause, NULL);
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (now.tv_sec - start.tv_sec < 10);
    return false;
}

/* ---- tests ---- */

static void test_a_call_gets_its_message_then_trailers(void **state)
{
    fixture *f = *state;
    reply r = grpc(f, "/runtime.v1.RuntimeService/Version", NULL, 0);
    assert_int_equal(r.rc, CURLE_OK);
    assert_int_equal(r.http, 200);
    assert_int_equal(r.grpc_status, 0);
    /* One length-prefixed message: flag 0, then its length. */
    assert_true(r.body.len > 5);
    const unsigned char *b = (const unsigned char *)r.body.data;
    assert_int_equal(b[0], 0);
    assert_int_equal(((size_t)b[3] << 8 | b[4]), r.body.len - 5);
    bool found = false;
    for (size_t i = 0; i + 10 <= r.body.len; i++)
        found |= memcmp(r.body.data + i, "1.6.20~ds1", 10) == 0;
    assert_true(found);
    gp_buf_free(&r.body);
}

static void test_an_unknown_service_is_trailers_only(void **state)
{
    fixture *f = *state;
    reply r = grpc(f, "/no.Such/Call", NULL, 0);
    assert_int_equal(r.rc, CURLE_OK);
    assert_int_equal(r.http, 200);
    assert_int_equal(r.grpc_status, 12);
    assert_string_equal(r.grpc_message, "unknown service no.Such");
    assert_int_equal(r.body.len, 0);
    gp_buf_free(&r.body);
}

static void test_not_grpc_is_refused_by_http(void **state)
{
    fixture *f = *state;
    reply r = call(f, "/runtime.v1.RuntimeService/Version", "text/plain", NULL, 0);
    assert_int_equal(r.rc, CURLE_OK);
    assert_int_equal(r.http, 415);
    gp_buf_free(&r.body);
    /* A client that does not speak HTTP/2 at all is dropped; others go on. */
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    assert_true(strlen(f->sock) < sizeof addr.sun_path);
    memcpy(addr.sun_path, f->sock, strlen(f->sock) + 1);
    assert_int_equal(connect(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    const char http1[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    assert_int_equal(write(fd, http1, sizeof http1 - 1), (ssize_t)sizeof http1 - 1);
    char buf[256];
    while (read(fd, buf, sizeof buf) > 0) {
    }
    close(fd);
    r = grpc(f, "/runtime.v1.RuntimeService/Version", NULL, 0);
    assert_int_equal(r.grpc_status, 0);
    gp_buf_free(&r.body);
}

typedef struct seen {
    ag_daemon_phase phase;
    unsigned starts;
    ag_cri_state cri;
} seen;

static void look(const ag_daemon *d, const char *dir, void *ctx)
{
    (void)dir;
    seen *s = ctx;
    s->phase = d->phase;
    s->starts = d->starts;
    s->cri = d->loaded ? d->loaded->cri : AG_CRI_DISABLED;
}

static void test_sighup_takes_the_socket_down_until_the_restart(void **state)
{
    fixture *f = *state;
    write_file(f->node, AG_NODE_STATE_FILE, "[containerd]\nrestart_sec = 3600\n");
    gp_error err = {0};
    /* The supervisor's settings are read at a start. */
    assert_int_equal(ag_host_restart(f->host, "n1", &err), 0);
    write_file(f->node, AG_NODE_CONF_D "/99-nvidia.toml", ag_bare_dropin);
    assert_int_equal(ag_host_signal(f->host, "n1", SIGHUP, &err), 0);
    /* Killed: the socket file stays, and refuses connections. */
    struct stat sb;
    assert_int_equal(lstat(f->sock, &sb), 0);
    assert_true(S_ISSOCK(sb.st_mode));
    reply r = grpc(f, "/runtime.v1.RuntimeService/Version", NULL, 0);
    assert_int_equal(r.rc, CURLE_COULDNT_CONNECT);
    gp_buf_free(&r.body);
    seen s;
    assert_int_equal(ag_host_with_daemon(f->host, "n1", look, &s, &err), 0);
    assert_int_equal(s.phase, AG_DAEMON_RESTARTING);
    /* No process to take a second signal. */
    assert_int_equal(ag_host_signal(f->host, "n1", SIGHUP, &err), 1);
    /* An operator's start does not wait for RestartSec; it reads the
     * drop-in, and 1.6 serves no CRI with it. */
    assert_int_equal(ag_host_start(f->host, "n1", &err), 0);
    r = grpc(f, "/runtime.v1.RuntimeService/Status", NULL, 0);
    assert_int_equal(r.grpc_status, 12);
    assert_string_equal(r.grpc_message, "unknown service runtime.v1.RuntimeService");
    gp_buf_free(&r.body);
}

static void test_the_supervisor_restarts_it(void **state)
{
    fixture *f = *state;
    gp_error err = {0};
    assert_int_equal(ag_host_signal(f->host, "n1", SIGHUP, &err), 0);
    assert_true(answers_again(f));
    seen s;
    assert_int_equal(ag_host_with_daemon(f->host, "n1", look, &s, &err), 0);
    assert_int_equal(s.phase, AG_DAEMON_RUNNING);
    assert_int_equal(s.starts, 2);
    assert_int_equal(s.cri, AG_CRI_UP);
}

static void test_stop_removes_the_socket(void **state)
{
    fixture *f = *state;
    gp_error err = {0};
    assert_int_equal(ag_host_stop(f->host, "n1", &err), 0);
    assert_int_equal(access(f->sock, F_OK), -1);
    assert_int_equal(ag_host_signal(f->host, "nope", SIGHUP, &err), -1);
    assert_non_null(strstr(err.text, "nope"));
}

static void test_add_refuses_bad_nodes(void **state)
{
    fixture *f = *state;
    gp_error err = {0};
    assert_int_equal(ag_host_add(f->host, "n1", f->node, NULL, &err), -1);
    assert_non_null(strstr(err.text, "already"));
    assert_int_equal(ag_host_add(f->host, "a/b", f->node, NULL, &err), -1);
    char longpath[300];
    memset(longpath, 'x', sizeof longpath - 1);
    longpath[sizeof longpath - 1] = '\0';
    assert_int_equal(ag_host_add(f->host, "n2", f->node, longpath, &err), -1);
    assert_non_null(strstr(err.text, "longer"));
    /* A node without a socket: its daemon runs, read through the host. */
    assert_int_equal(ag_host_add(f->host, "n3", f->node, "", &err), 0);
    seen s;
    assert_int_equal(ag_host_with_daemon(f->host, "n3", look, &s, &err), 0);
    assert_int_equal(s.phase, AG_DAEMON_RUNNING);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_a_call_gets_its_message_then_trailers),
        T(test_an_unknown_service_is_trailers_only),
        T(test_not_grpc_is_refused_by_http),
        T(test_sighup_takes_the_socket_down_until_the_restart),
        T(test_the_supervisor_restarts_it),
        T(test_stop_removes_the_socket),
        T(test_add_refuses_bad_nodes),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
#undef T
    curl_global_cleanup();
    return rc;
}
