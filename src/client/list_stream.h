/* A Kubernetes list read as it arrives: yajl's event parser feeds items one
 * by one to a callback, building for each only the fields asked for.
 *
 * Why: an analyzer over 150,000 pods reads a few fields of each, and a
 * pod's JSON is mostly what it does not read (managedFields, annotations,
 * env, volumes). Building whole trees with a DOM parser costs most of a
 * command's time; building only what is kept, from a parser that makes no
 * tree, costs a fraction. Pages are never held whole either: bytes go
 * straight from the socket into the parser.
 *
 * A field list is dotted paths from the item's root, arrays transparent:
 * "spec.containers.resources" keeps the resources of every container, and
 * every container as an object (possibly empty), so positions and counts
 * of list elements stay what they were. A path keeps its whole subtree. */
#ifndef GPUOP_CLIENT_LIST_STREAM_H
#define GPUOP_CLIENT_LIST_STREAM_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

typedef struct kc_fields kc_fields;

/* NULL-terminated list of paths; NULL when out of memory. */
kc_fields *kc_fields_new(const char *const *paths);
void kc_fields_free(kc_fields *f);

/* Called once per item (borrowed; incref to keep it). A non-zero return
 * stops the parse. */
typedef int (*kc_stream_item_fn)(json_t *item, void *ud);

typedef struct kc_list_parser kc_list_parser;

/* keep NULL: whole items. */
kc_list_parser *kc_list_parser_new(const kc_fields *keep, kc_stream_item_fn each, void *ud);
/* 0 fed, 1 the callback stopped the parse, -1 the bytes are not a JSON list
 * (err says where). */
int kc_list_parser_feed(kc_list_parser *p, const char *data, size_t len, gp_error *err);
/* After the last bytes: 0 and the list's metadata.continue (malloc'd, NULL
 * when none), or -1 with err. */
int kc_list_parser_finish(kc_list_parser *p, char **continue_token, gp_error *err);
/* Whether the document had an "items" array at its top level. */
int kc_list_parser_saw_items(const kc_list_parser *p);
void kc_list_parser_free(kc_list_parser *p);

/* The one JSON object of a request body exactly as jansson's json_loadb
 * (text, len, 0) reads it, built with yajl (fewer allocations), and
 * *duplicates: whether a key is given twice in one object (the last one is
 * kept, as json_loadb keeps it). NULL when the text is anything else, or
 * when the builder cannot promise jansson's reading (non-ASCII bytes, a \u
 * escape, a real or an integer out of range, deeper than jansson goes):
 * then the caller asks jansson, for its value or its error. */
json_t *kc_object_parse_exact(const char *text, size_t len, bool *duplicates);

/* One object pruned to `keep`, through the same builder (for tests and for
 * objects fetched whole). New reference, NULL when `obj` cannot be
 * serialized. */
json_t *kc_fields_prune(const kc_fields *keep, const json_t *obj);

/* One object's JSON text (not a list) parsed into only the fields of
 * `keep` (NULL: whole). New reference, NULL when the text is not one JSON
 * object or memory ran out. The embedded control plane's controllers keep
 * settled objects this way: a parsed pod costs a fraction of its whole
 * parse with only what they read. */
json_t *kc_object_parse(const kc_fields *keep, const char *text, size_t len);

/* The whole object of a text that jansson wrote (json_dumps of an object:
 * what the embedded API server stores), equal to what json_loadb(text,
 * len, 0) reads, in about half its time. Only for such text: numbers out
 * of an int64 or nesting past jansson's 2048 levels, which json_dumps
 * never writes from what json_loadb read, are not refused as json_loadb
 * refuses them. A text with a \u0000 escape is read by json_loadb, which
 * refuses it where the builder would keep the NUL byte. New reference,
 * NULL when the text does not parse. */
json_t *kc_object_parse_dumped(const char *text, size_t len);

#endif
