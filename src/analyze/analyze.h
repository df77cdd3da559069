/* Analyzers: pure functions over Kubernetes object snapshots.
 *
 * Every analyzer takes objects as JSON (as the API returns them) and
 * returns its report as one JSON object: that object is what `-o json`
 * prints, with stable keys. The text and lab renderings are computed from
 * the report alone, so the three outputs can never disagree. Analyzers do
 * no I/O: the CLI fetches (streaming lists through the builders' add_*
 * functions, so a 150,000-pod list is never held whole) and prints.
 *
 * Text renderings are for people: aligned tables, messages through
 * gettext. Lab renderings are the KEY=VALUE lines (or the table) of the
 * lab's output files, never translated. */
#ifndef GPUOP_ANALYZE_ANALYZE_H
#define GPUOP_ANALYZE_ANALYZE_H

typedef enum an_format {
    AN_TEXT,
    AN_JSON,
    AN_LAB,
} an_format;

/* The "schema" of every report's `-o json`: a name and a version that
 * changes when a key changes meaning or goes away (README, "Field
 * tools"). */
#define AN_SCHEMA_NODES       "gpuop/nodes/1"
#define AN_SCHEMA_WHY_PENDING "gpuop/why-pending/1"
#define AN_SCHEMA_PENDING_ALL "gpuop/why-pending-all/1"
#define AN_SCHEMA_SLOTS       "gpuop/slots/1"
#define AN_SCHEMA_ROLLOUT     "gpuop/rollout/1"

#endif
