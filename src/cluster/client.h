/* An in-process client of the embedded API server, for its controllers.
 *
 * A controller's request goes through gc_route exactly like kubectl's over
 * HTTPS: the same admission, validation, defaults, resourceVersions and
 * watch events. Only the socket is skipped, so a controller can never do
 * what a client of a real cluster could not. */
#ifndef GPUOP_CLUSTER_CLIENT_H
#define GPUOP_CLUSTER_CLIENT_H

#include <jansson.h>
#include <stddef.h>

#include "cluster/routes.h"

typedef struct gc_reply {
    unsigned status;
    json_t *body; /* the parsed answer (an object or a Status); NULL if none */
} gc_reply;

/* method and path as in HTTP; query "k=v&k=v" (values unescaped) or NULL;
 * content_type NULL means application/json; body NULL for none. */
gc_reply gc_client_call(gc_api *api, const char *method, const char *path, const char *query,
                        const char *content_type, const json_t *body);
/* The same request when only its HTTP status matters: the answer is not
 * parsed (a controller's writes are most of a busy cluster's requests). */
unsigned gc_client_send(gc_api *api, const char *method, const char *path, const char *query,
                        const char *content_type, const json_t *body);
/* The same with the body already serialized (NULL for none): what the
 * controllers' write workers send, so that no JSON object is shared
 * between threads. */
unsigned gc_client_send_text(gc_api *api, const char *method, const char *path, const char *query,
                             const char *content_type, const char *body, size_t len);
/* The same, answered once the write is made in memory and before it is
 * committed: *commit_rv is its resourceVersion (0 when nothing was
 * written), for gc_store_sync. The write queue syncs once a batch. */
unsigned gc_client_send_deferred(gc_api *api, const char *method, const char *path,
                                 const char *query, const char *content_type, const char *body,
                                 size_t len, uint64_t *commit_rv);
void gc_reply_free(gc_reply *r);

/* The Status message of a failed reply, or "" (valid until the reply is freed). */
const char *gc_reply_message(const gc_reply *r);

#endif
