/* The API server's connections as its limits see them (server.c adds one
 * entry per connection): how long each may take to send its request,
 * whether it has shown the token, and the watch it streams.
 *
 * A monitor thread closes (shutdown(2): the connection's own thread sees
 * the end and lets it go) a connection past its deadline, however slowly
 * it trickles bytes; and cancels a watch as soon as its client hangs up,
 * instead of at the next event the watch would have written.
 *
 * Connections that have not shown the token hold at most a few slots:
 * when one more arrives, the one of them that has waited longest is
 * closed, so that a flood of them cannot keep out a client that has it.
 *
 * Socket-level only (no HTTP): tested with socket pairs. */
#ifndef GPUOP_APISERVER_CONNS_INTERNAL_H
#define GPUOP_APISERVER_CONNS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "apiserver/routes.h"
#include "util/error.h"

typedef struct as_conns as_conns;
typedef struct as_conn as_conn;

typedef struct as_conns_limits {
    size_t max_unauthenticated; /* connections that have not shown the token */
    unsigned header_ms; /* from the connection, or a request line, to the end of the headers */
    unsigned body_ms;   /* from the end of the headers to the end of the body */
    unsigned idle_ms;   /* from the end of a response to the next request line */
} as_conns_limits;

/* What a connection is doing, for its deadline. */
typedef enum as_conn_phase {
    AS_CONN_HEADERS,   /* the request line and headers are coming */
    AS_CONN_BODY,      /* the body is coming */
    AS_CONN_ANSWERING, /* the server answers: no deadline of ours */
    AS_CONN_IDLE,      /* between requests */
} as_conn_phase;

/* Starts the monitor thread. */
as_conns *as_conns_start(const as_conns_limits *limits, gp_error *err);
/* Stops it; the connections must all have been removed. */
void as_conns_stop(as_conns *t);

/* A new connection on socket fd, in the headers phase; NULL when out of
 * memory (the caller closes it). */
as_conn *as_conns_add(as_conns *t, int fd);
/* Before its socket is closed. A connection told to linger first stops
 * sending and reads what the client still sends, for a moment: an answer
 * given before the body was read (401, 413, 429) then reaches the client
 * instead of being lost to the reset that closing an unread socket sends. */
void as_conns_remove(as_conns *t, as_conn *c);
void as_conns_linger(as_conns *t, as_conn *c);

void as_conns_phase(as_conns *t, as_conn *c, as_conn_phase phase);
/* A request on c carried the token. */
void as_conns_authenticated(as_conns *t, as_conn *c);

/* c streams watch w: cancelled (as_watch_cancel) when the client hangs up.
 * as_conns_unwatch before w is freed (c may be gone by then). */
void as_conns_watch(as_conns *t, as_conn *c, as_watch *w);
void as_conns_unwatch(as_conns *t, const as_watch *w);

/* How many connections there are, and how many of them have not shown the
 * token (closing ones not counted). */
size_t as_conns_count(as_conns *t, size_t *unauthenticated);

#endif
