/* An in-process client of the embedded API server, for its controllers.
 *
 * A controller's request goes through as_route exactly like kubectl's over
 * HTTPS: the same admission, validation, defaults, resourceVersions and
 * watch events. Only the socket is skipped, so a controller can never do
 * what a client of a real cluster could not. */
#ifndef GPUOP_APISERVER_LOOPBACK_H
#define GPUOP_APISERVER_LOOPBACK_H

#include <jansson.h>
#include <stddef.h>

#include "apiserver/routes.h"

typedef struct as_reply {
    unsigned status;
    json_t *body; /* the parsed answer (an object or a Status); NULL if none */
} as_reply;

/* method and path as in HTTP; query "k=v&k=v" (values unescaped) or NULL;
 * content_type NULL means application/json; body NULL for none. */
as_reply as_loopback_call(as_api *api, const char *method, const char *path, const char *query,
                          const char *content_type, const json_t *body);
/* The same request when only its HTTP status matters: the answer is not
 * parsed (a controller's writes are most of a busy cluster's requests). */
unsigned as_loopback_send(as_api *api, const char *method, const char *path, const char *query,
                          const char *content_type, const json_t *body);
/* The same with the body already serialized (NULL for none): what the
 * controllers' write workers send, so that no JSON object is shared
 * between threads. */
unsigned as_loopback_send_text(as_api *api, const char *method, const char *path, const char *query,
                               const char *content_type, const char *body, size_t len);
/* The same, answered once the write is made in memory and before it is
 * committed: *commit_rv is its resourceVersion (0 when nothing was
 * written), for as_store_sync. The write queue syncs once a batch. */
unsigned as_loopback_send_deferred(as_api *api, const char *method, const char *path,
                                   const char *query, const char *content_type, const char *body,
                                   size_t len, uint64_t *commit_rv);
void as_reply_free(as_reply *r);

/* The Status message of a failed reply, or "" (valid until the reply is freed). */
const char *as_reply_message(const as_reply *r);

#endif
