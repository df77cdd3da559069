/* Protobuf encoding for the daemon's answers (grpc_internal.h). */
#include <string.h>

#include "agents/grpc_internal.h"

void ag_pb_varint(gp_buf *b, uint64_t v)
{
    unsigned char out[10];
    size_t n = 0;
    do {
        unsigned char byte = v & 0x7f;
        v >>= 7;
        out[n++] = byte | (v ? 0x80 : 0);
    } while (v);
    gp_buf_addn(b, out, n);
}

static void tag(gp_buf *b, uint32_t num, int wire)
{
    ag_pb_varint(b, ((uint64_t)num << 3) | (uint64_t)wire);
}

void ag_pb_bytes(gp_buf *b, uint32_t num, const void *bytes, size_t len)
{
    tag(b, num, 2);
    ag_pb_varint(b, len);
    if (len) gp_buf_addn(b, bytes, len);
}

void ag_pb_string(gp_buf *b, uint32_t num, const char *s)
{
    if (s && *s) ag_pb_bytes(b, num, s, strlen(s));
}

void ag_pb_bool(gp_buf *b, uint32_t num, bool v)
{
    if (!v) return;
    tag(b, num, 0);
    ag_pb_varint(b, 1);
}

void ag_pb_uint(gp_buf *b, uint32_t num, uint64_t v)
{
    if (!v) return;
    tag(b, num, 0);
    ag_pb_varint(b, v);
}

void ag_pb_map_entry(gp_buf *b, uint32_t num, const char *key, const char *value)
{
    /* An entry is a message {1: key, 2: value}; protobuf-go writes both. */
    gp_buf entry = {0};
    ag_pb_bytes(&entry, 1, key, strlen(key));
    ag_pb_bytes(&entry, 2, value, strlen(value));
    ag_pb_bytes(b, num, entry.data ? entry.data : "", entry.len);
    if (gp_buf_failed(&entry)) b->state = GP_BUF_NO_MEMORY;
    gp_buf_free(&entry);
}

static int read_varint(ag_pb_reader *r, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (r->p >= r->end) return -1;
        uint8_t byte = *r->p++;
        if (shift == 63 && byte > 1) return -1;
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

int ag_pb_next(ag_pb_reader *r, ag_pb_field *f)
{
    if (r->p >= r->end) return 0;
    uint64_t key;
    if (read_varint(r, &key) != 0 || (key >> 3) == 0 || (key >> 3) > UINT32_MAX) return -1;
    memset(f, 0, sizeof *f);
    f->num = (uint32_t)(key >> 3);
    f->wire = (int)(key & 7);
    switch (f->wire) {
    case 0:
        return read_varint(r, &f->varint) == 0 ? 1 : -1;
    case 1:
    case 5: {
        size_t n = f->wire == 1 ? 8 : 4;
        if ((size_t)(r->end - r->p) < n) return -1;
        r->p += n;
        return 1;
    }
    case 2: {
        uint64_t len;
        if (read_varint(r, &len) != 0 || len > (uint64_t)(r->end - r->p)) return -1;
        f->bytes = r->p;
        f->len = (size_t)len;
        r->p += len;
        return 1;
    }
    }
    return -1;
}
