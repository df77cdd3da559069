/* What decode.c, decode_duplicates.c and decode_time.c share: the type
 * table's shape, field paths, strict errors. Not a public interface. */
#ifndef GPUOP_APISERVER_DECODE_INTERNAL_H
#define GPUOP_APISERVER_DECODE_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "apiserver/decode.h"

typedef enum gt_kind {
    GT_STRING,
    GT_BOOL,
    GT_INT32,
    GT_INT64,
    GT_FLOAT64,
    GT_BYTES,     /* []byte: a base64 string */
    GT_QUANTITY,  /* resource.Quantity */
    GT_INTSTR,    /* intstr.IntOrString */
    GT_TIME,      /* metav1.Time: RFC 3339 */
    GT_MICROTIME, /* metav1.MicroTime: RFC 3339 with microseconds */
    GT_ANY,       /* runtime.RawExtension, metav1.FieldsV1: any JSON */
    GT_STRUCT,
    GT_SLICE,
    GT_MAP,
} gt_kind;

typedef struct as_gostruct as_gostruct;

struct as_gotype {
    gt_kind k;
    const char *go;        /* the Go type's String(): "v1.RestartPolicy" */
    const as_gotype *elem; /* of a slice or a map */
    as_gostruct *st;       /* of a struct */
};

typedef struct as_gofield {
    const char *name; /* the JSON name */
    const as_gotype *type;
} as_gofield;

struct as_gostruct {
    char *id;           /* its name in the data file */
    char *go_name;      /* Go's: "PodSpec" */
    as_gofield *fields; /* sorted by name */
    size_t nfields;
    as_gotype self;
};

/* The type of a struct's field, or NULL when it has none of that name. */
const as_gotype *as_gostruct_field(const as_gostruct *st, const char *name);

/* A strict error's path as sigs.k8s.io/json writes it:
 * spec.containers[0].name (map keys as fields). */
typedef struct as_decode_path {
    char text[2048];
    size_t len;
} as_decode_path;

void as_decode_path_key(as_decode_path *p, const char *key);
void as_decode_path_index(as_decode_path *p, size_t i);
void as_decode_path_cut(as_decode_path *p, size_t len);

/* Adds `WHAT field "PATH.KEY"` to strict unless it is there (or 100 are). */
void as_decode_strict_add(json_t *strict, const char *what, const as_decode_path *path,
                          const char *key);

/* time.Parse(time.RFC3339 or metav1's RFC3339Micro, s)'s error, as Go
 * words it, or NULL when s parses (caller frees). */
char *as_decode_time_error(const char *s, bool micro);

#endif
