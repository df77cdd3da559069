/* Server-side printing: the meta.k8s.io/v1 Table that `kubectl get` asks for
 * (k8s-semantics 2.6, 2.7). The server, not kubectl, decides the columns and
 * computes every cell; these are the column definitions and cell rules of
 * kube-apiserver 1.32 (pkg/printers/internalversion/printers.go), which the
 * server always runs with Wide set, so every row also carries the cells of
 * the priority-1 columns that `-o wide` shows.
 *
 * Printed kinds: Pod, Node, Namespace, ConfigMap, ServiceAccount, Event (core
 * and events.k8s.io, which share one printer), apps DaemonSet and
 * ControllerRevision, node.k8s.io RuntimeClass, coordination.k8s.io Lease.
 * Any other kind gets the generic convertor's Name and "Created At" columns
 * (apiserver registry/rest/table.go). */
#ifndef GPUOP_APISERVER_TABLE_H
#define GPUOP_APISERVER_TABLE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

/* The Table for `objects` (JSON objects of the given kind, as stored:
 * apiVersion, kind, metadata...). `group` is "" (or NULL) for the core group.
 * with_definitions: include columnDefinitions (false for watch events after
 * the first; the field is then null, as the real server writes it). list_rv:
 * the list's resourceVersion for metadata (NULL or "" to omit). now: the time
 * ages are computed against. Each row:
 * {"cells":[...],"object":{"kind":"PartialObjectMetadata",
 * "apiVersion":"meta.k8s.io/v1","metadata":<a copy of the object's metadata>}}
 * plus the "Completed" row condition of a Succeeded or Failed pod.
 * Returns a new json_t, or NULL when memory runs out. */
json_t *as_table(const char *group, const char *kind, json_t *const *objects, size_t n,
                 bool with_definitions, const char *list_rv, time_t now);

/* apimachinery's duration.HumanDuration, as ages are written: "0s", "119s",
 * "5m30s", "179m", "7h59m", "47h", "7d23h", "729d", "3y45d", "8y"; "0s" for
 * -1 second of clock skew and "<invalid>" below that. Writes at most `size`
 * bytes (NUL included); returns the full length, like snprintf. */
size_t as_human_duration(long long seconds, char *buf, size_t size);

/* Parses an RFC 3339 timestamp ("2025-01-01T10:00:00Z", with an optional
 * fraction and a Z or +hh:mm offset) to the whole seconds since the epoch
 * (the fraction is dropped); -1 if the text is not one. */
int as_parse_time(const char *text, time_t *out);
/* "2025-01-01T10:00:00Z" for t (api.c: the API server writes its times so,
 * and the controllers theirs). */
void as_format_time(time_t t, char buf[32]);

#endif
