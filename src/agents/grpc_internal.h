/* The wire side of a simulated containerd, for src/agents/ and its tests:
 * protobuf encoding (pb.c), the gRPC services the daemon answers
 * (services.c, pure), and one HTTP/2 connection carrying gRPC
 * (grpc_conn.c, libnghttp2; linked only into the programs that serve
 * agents: the gpuop_agents_net library of CMakeLists.txt). */
#ifndef GPUOP_AGENTS_GRPC_INTERNAL_H
#define GPUOP_AGENTS_GRPC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agents/daemon.h"
#include "kube/protobuf.h"
#include "util/buf.h"

/* ---- protobuf: what proto3 writes, Go's way (pb.c), on the wire format
 * of kube/protobuf.h (kube_protobuf_put_bytes for a length-delimited field,
 * kube_protobuf_next to read a request). Scalars at their zero value are
 * left out, as protobuf-go leaves them out; repeated strings and map
 * entries are always written. ---- */

/* A singular string: left out when empty. */
void ag_pb_string(gp_buf *b, uint32_t num, const char *s);
void ag_pb_bool(gp_buf *b, uint32_t num, bool v);
void ag_pb_uint(gp_buf *b, uint32_t num, uint64_t v);
/* An entry of a map<string, string> field. */
void ag_pb_map_entry(gp_buf *b, uint32_t num, const char *key, const char *value);

/* ---- the services (gRPC status codes of grpc/codes) ---- */

enum {
    AG_GRPC_OK = 0,
    AG_GRPC_INVALID_ARGUMENT = 3,
    AG_GRPC_UNIMPLEMENTED = 12,
    AG_GRPC_INTERNAL = 13,
    AG_GRPC_UNAVAILABLE = 14,
};

typedef struct ag_grpc_answer {
    int status;
    char message[512]; /* grpc-message, not yet percent-encoded */
    gp_buf body;       /* the response message when status is OK */
} ag_grpc_answer;

/* The node's identity as its daemon reports it. */
typedef struct ag_service_node {
    const ag_daemon *daemon; /* RUNNING: the caller serves only a running daemon */
    const char *uuid;        /* Introspection/Server's uuid (kept across restarts) */
} ag_service_node;

/* Answers one unary call, as the daemon's gRPC server would: `path` is the
 * HTTP/2 :path ("/runtime.v1.RuntimeService/Status"), `req` the request
 * message. The services a running daemon registers are
 *   runtime.v1.RuntimeService, runtime.v1.ImageService (CRI up; 1.x also
 *     runtime.v1alpha2.*): Version and Status, other methods unimplemented
 *   containerd.services.introspection.v1.Introspection: Plugins, Server
 *   containerd.services.version.v1.Version: Version
 * and anything else gets grpc-go's "unknown service X" (the recorded answer
 * of a daemon whose CRI plugin failed). *out starts zeroed; the caller
 * frees out->body. */
void ag_grpc_serve(const ag_service_node *node, const char *path, const uint8_t *req, size_t len,
                   ag_grpc_answer *out);

/* ---- one HTTP/2 connection (h2c with prior knowledge, as gRPC clients
 * speak over a unix socket) ---- */

typedef struct ag_grpc_conn ag_grpc_conn;

/* Called for every complete request, with the connection's context. */
typedef void (*ag_grpc_handler)(void *ctx, const char *path, const uint8_t *req, size_t len,
                                ag_grpc_answer *out);

/* Takes ownership of the connected, non-blocking socket `fd`. NULL when
 * memory runs out (fd is then closed). */
ag_grpc_conn *ag_grpc_conn_new(int fd, ag_grpc_handler handler, void *ctx);
/* Reads what the peer sent and answers it; 0, or -1 when the connection is
 * over (closed by the peer, a protocol error). */
int ag_grpc_conn_read(ag_grpc_conn *c);
/* Writes what is pending; 0, or -1 when the connection is over. */
int ag_grpc_conn_write(ag_grpc_conn *c);
/* Something waits to be written (poll for POLLOUT). */
bool ag_grpc_conn_wants_write(const ag_grpc_conn *c);
/* Both sides are done (GOAWAY exchanged, nothing to write). */
bool ag_grpc_conn_finished(const ag_grpc_conn *c);
int ag_grpc_conn_fd(const ag_grpc_conn *c);
void ag_grpc_conn_free(ag_grpc_conn *c);

#endif
