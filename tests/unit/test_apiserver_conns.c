/* The API server's connection table (conns.c) on socket pairs: which
 * connection goes when too many have not shown the token, and that a
 * deadline closes a connection whatever it sends. The server's side of a
 * pair is what the table holds; the test watches the client's side. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <poll.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <unistd.h>

#include "apiserver/conns_internal.h"

typedef struct pair {
    int server, client;
} pair;

static pair make_pair(void)
{
    int fds[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    return (pair){fds[0], fds[1]};
}

static void close_pair(pair p)
{
    close(p.server);
    close(p.client);
}

/* Whether the server's side was shut down, waiting up to wait_ms for it. */
static bool closed_by_server(pair p, int wait_ms)
{
    struct pollfd f = {.fd = p.client, .events = POLLIN};
    if (poll(&f, 1, wait_ms) != 1) return false;
    char b;
    return recv(p.client, &b, 1, MSG_DONTWAIT) == 0;
}

static const as_conns_limits roomy = {
    .max_unauthenticated = 2, .header_ms = 600000, .body_ms = 600000, .idle_ms = 600000};

static void test_oldest_unauthenticated_goes_first(void **state)
{
    (void)state;
    gp_error err = {0};
    as_conns *t = as_conns_start(&roomy, &err);
    assert_non_null(t);
    pair a = make_pair(), b = make_pair(), c = make_pair();
    as_conn *ca = as_conns_add(t, a.server), *cb = as_conns_add(t, b.server);
    size_t unauthenticated;
    assert_int_equal(as_conns_count(t, &unauthenticated), 2);
    assert_int_equal(unauthenticated, 2);
    assert_false(closed_by_server(a, 0));
    as_conn *cc = as_conns_add(t, c.server);
    /* the third made room: the first, which has waited longest, went */
    assert_true(closed_by_server(a, 0));
    assert_false(closed_by_server(b, 0));
    assert_false(closed_by_server(c, 0));
    assert_int_equal(as_conns_count(t, &unauthenticated), 3);
    assert_int_equal(unauthenticated, 2);
    as_conns_remove(t, ca);
    as_conns_remove(t, cb);
    as_conns_remove(t, cc);
    assert_int_equal(as_conns_count(t, &unauthenticated), 0);
    assert_int_equal(unauthenticated, 0);
    as_conns_stop(t);
    close_pair(a);
    close_pair(b);
    close_pair(c);
}

static void test_authenticated_are_never_evicted(void **state)
{
    (void)state;
    gp_error err = {0};
    as_conns_limits one = roomy;
    one.max_unauthenticated = 1;
    as_conns *t = as_conns_start(&one, &err);
    pair a = make_pair(), b = make_pair(), c = make_pair();
    as_conn *ca = as_conns_add(t, a.server);
    as_conns_authenticated(t, ca);
    as_conn *cb = as_conns_add(t, b.server);
    as_conn *cc = as_conns_add(t, c.server);
    assert_false(closed_by_server(a, 0)); /* older, but it showed the token */
    assert_true(closed_by_server(b, 0));
    assert_false(closed_by_server(c, 0));
    size_t unauthenticated;
    assert_int_equal(as_conns_count(t, &unauthenticated), 3);
    assert_int_equal(unauthenticated, 1);
    as_conns_remove(t, ca);
    as_conns_remove(t, cb);
    as_conns_remove(t, cc);
    as_conns_stop(t);
    close_pair(a);
    close_pair(b);
    close_pair(c);
}

static void test_deadline_closes_whatever_is_sent(void **state)
{
    (void)state;
    gp_error err = {0};
    as_conns_limits quick = roomy;
    quick.max_unauthenticated = 8;
    quick.header_ms = 50;
    quick.body_ms = 50;
    as_conns *t = as_conns_start(&quick, &err);
    pair headers = make_pair(), body = make_pair(), answering = make_pair();
    as_conn *ch = as_conns_add(t, headers.server);
    as_conn *cb = as_conns_add(t, body.server);
    as_conn *ca = as_conns_add(t, answering.server);
    as_conns_phase(t, cb, AS_CONN_BODY);
    as_conns_phase(t, ca, AS_CONN_ANSWERING);
    /* bytes keep coming; the table does not care: the deadline is a total */
    for (int i = 0; i < 3; i++) {
        assert_int_equal(send(headers.client, "x", 1, MSG_NOSIGNAL), 1);
        assert_int_equal(send(body.client, "x", 1, MSG_NOSIGNAL), 1);
    }
    assert_true(closed_by_server(headers, 10000));
    assert_true(closed_by_server(body, 10000));
    /* a connection being answered has no deadline of ours */
    assert_false(closed_by_server(answering, 200));
    as_conns_remove(t, ch);
    as_conns_remove(t, cb);
    as_conns_remove(t, ca);
    as_conns_stop(t);
    close_pair(headers);
    close_pair(body);
    close_pair(answering);
}

static void test_first_request_line_keeps_the_connection_deadline(void **state)
{
    (void)state;
    gp_error err = {0};
    as_conns_limits quick = roomy;
    quick.max_unauthenticated = 8;
    quick.header_ms = 50;
    as_conns *t = as_conns_start(&quick, &err);
    pair p = make_pair(), idle = make_pair();
    as_conn *c = as_conns_add(t, p.server);
    as_conn *ci = as_conns_add(t, idle.server);
    as_conns_phase(t, ci, AS_CONN_IDLE); /* 10 minutes to its next request */
    /* request lines do not buy a new connection more time: the TLS
     * handshake and the first headers share one deadline */
    bool closed = false;
    for (int i = 0; i < 300 && !closed; i++) {
        as_conns_phase(t, c, AS_CONN_HEADERS);
        closed = closed_by_server(p, 10);
    }
    assert_true(closed);
    assert_false(closed_by_server(idle, 0));
    as_conns_remove(t, c);
    as_conns_remove(t, ci);
    as_conns_stop(t);
    close_pair(p);
    close_pair(idle);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oldest_unauthenticated_goes_first),
        cmocka_unit_test(test_authenticated_are_never_evicted),
        cmocka_unit_test(test_deadline_closes_whatever_is_sent),
        cmocka_unit_test(test_first_request_line_keeps_the_connection_deadline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
