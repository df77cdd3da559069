/* What proto3 writes, Go's way, for the daemon's answers (grpc_internal.h),
 * on the wire format of kube/protobuf.h. */
#include <string.h>

#include "agents/grpc_internal.h"
#include "kube/protobuf.h"

void ag_pb_string(gp_buf *b, uint32_t num, const char *s)
{
    if (s && *s) kube_protobuf_put_string(b, num, s, strlen(s));
}

void ag_pb_bool(gp_buf *b, uint32_t num, bool v)
{
    if (v) kube_protobuf_put_bool(b, num, true);
}

void ag_pb_uint(gp_buf *b, uint32_t num, uint64_t v)
{
    if (v) kube_protobuf_put_uint(b, num, v);
}

void ag_pb_map_entry(gp_buf *b, uint32_t num, const char *key, const char *value)
{
    /* An entry is a message {1: key, 2: value}; protobuf-go writes both. */
    gp_buf entry = {0};
    kube_protobuf_put_string(&entry, 1, key, strlen(key));
    kube_protobuf_put_string(&entry, 2, value, strlen(value));
    kube_protobuf_put_bytes(b, num, entry.data ? entry.data : "", entry.len);
    if (gp_buf_failed(&entry)) b->state = GP_BUF_NO_MEMORY;
    gp_buf_free(&entry);
}
