/* A Kubernetes REST client: libcurl for HTTP(S), jansson for bodies.
 *
 * One handle per command (connections are kept alive between requests).
 * A client is used by one thread at a time; separate clients may run in
 * separate threads (libcurl's global init happens once, inside).
 * Every call returns a kc_result: KC_OK, or what went wrong in the terms a
 * CLI needs to pick an exit code (KC_UNREACHABLE: "cannot tell", exit 2).
 * A server's error answer becomes err's text exactly as kubectl prints it:
 * `Error from server (NotFound): pods "x" not found`, `error: You must be
 * logged in to the server (Unauthorized)`; its code, reason and message
 * are kept. An unreachable server reads `cannot reach the Kubernetes API
 * server at URL (context "C" in FILE): Connection refused`. */
#ifndef GPUOP_CLIENT_REST_H
#define GPUOP_CLIENT_REST_H

#include <jansson.h>
#include <stdbool.h>

#include "client/kubeconfig.h"
#include "client/list_stream.h"
#include "util/error.h"

typedef enum kc_result {
    KC_OK = 0,
    KC_NOT_FOUND,    /* 404 */
    KC_CONFLICT,     /* 409 (AlreadyExists or Conflict; see kc_last_reason) */
    KC_API_ERROR,    /* any other 4xx/5xx answered with a Status or a body */
    KC_UNREACHABLE,  /* connection refused, DNS, TLS handshake, timeout */
    KC_BAD_RESPONSE, /* a 2xx whose body is not the JSON expected */
} kc_result;

typedef struct kc_client kc_client;

/* cfg is borrowed: it must outlive the client. Fails (KC_UNREACHABLE, err
 * filled) only when libcurl cannot start or the TLS settings are refused;
 * nothing is sent until the first request. */
kc_result kc_client_new(const kc_config *cfg, kc_client **out, gp_error *err);
void kc_client_free(kc_client *c);
/* kc_config_load + kc_client_new, the client owning the config: what a
 * command wants. A kubeconfig that cannot be resolved is KC_UNREACHABLE
 * (nothing to talk to) with err naming the file and entry. */
kc_result kc_client_open(const kc_options *opt, kc_client **out, gp_error *err);
const kc_config *kc_client_config(const kc_client *c);

/* The last answer's HTTP code (0 when none arrived), and for an error
 * answer its Status reason ("NotFound", "AlreadyExists", "Invalid"...) and
 * message (`pods "x" not found`); for an error answer without a Status,
 * the reason and message client-go makes up from the code. "" otherwise.
 * Valid until the next request. */
long kc_last_code(const kc_client *c);
const char *kc_last_reason(const kc_client *c);
const char *kc_last_message(const kc_client *c);

/* *out (when not NULL) receives the answer, owned by the caller.
 * Paths are API paths with an optional query: "/api/v1/namespaces/x/pods/y",
 * "/apis/apps/v1/daemonsets?labelSelector=a%3Db". */
kc_result kc_get(kc_client *c, const char *path, json_t **out, gp_error *err);

/* Lists in pages of `limit` (0 = 500) following `continue`, calling `each`
 * once per item (borrowed: incref to keep it). Items get the list's kind
 * and apiVersion ("ConfigMapList" -> "ConfigMap"), as kubectl gives them
 * before printing, so an item reads like a GET of it. A non-zero return from
 * `each` stops the list and is returned as KC_API_ERROR with err untouched
 * unless each filled it. Only one page is held at a time. */
typedef int (*kc_item_fn)(json_t *item, void *ud);
kc_result kc_list(kc_client *c, const char *path, long limit, kc_item_fn each, void *ud,
                  gp_error *err);
/* As kc_list, each item built with only the `keep` fields (NULL: all);
 * see client/list_stream.h. Pages are parsed as their bytes arrive. */
kc_result kc_list_fields(kc_client *c, const char *path, long limit, const kc_fields *keep,
                         kc_item_fn each, void *ud, gp_error *err);
/* The whole list as one array (convenience for small lists). */
kc_result kc_list_all(kc_client *c, const char *path, json_t **items, gp_error *err);

kc_result kc_create(kc_client *c, const char *path, const json_t *obj, json_t **out, gp_error *err);
kc_result kc_update(kc_client *c, const char *path, const json_t *obj, json_t **out, gp_error *err);

typedef enum kc_patch_type {
    KC_PATCH_MERGE,     /* application/merge-patch+json */
    KC_PATCH_STRATEGIC, /* application/strategic-merge-patch+json */
    KC_PATCH_JSON,      /* application/json-patch+json */
} kc_patch_type;
kc_result kc_patch(kc_client *c, const char *path, kc_patch_type type, const json_t *patch,
                   json_t **out, gp_error *err);

/* propagation: "Background", "Foreground", "Orphan" or NULL (server default). */
kc_result kc_delete(kc_client *c, const char *path, const char *propagation, gp_error *err);

/* Watches `path` (a collection; "watch=1" and timeoutSeconds are added)
 * for at most timeout_seconds (0: until the server ends it), calling
 * `on_event` as each line of the stream arrives, with the event type
 * ("ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR": its object is a
 * Status, e.g. 410 Expired) and the object (borrowed). A non-zero return
 * from on_event, the server closing the stream, or the time running out
 * end the watch with KC_OK. Put resourceVersion=N in the path to start
 * after a list; without it the server first sends ADDED for what exists. */
typedef int (*kc_event_fn)(const char *type, json_t *object, void *ud);
kc_result kc_watch(kc_client *c, const char *path, long timeout_seconds, kc_event_fn on_event,
                   void *ud, gp_error *err);

/* A path segment escaped for a URL ("a b" -> "a%20b"); malloc'd. */
char *kc_escape(const char *s);

#endif
