/* YAML as Kubernetes reads it, into JSON values (jansson).
 *
 * kubectl and the NVIDIA device plugin read YAML through sigs.k8s.io/yaml
 * (go-yaml v2, YAML 1.1 scalars): `true`/`false`/`yes`/`no`/`on`/`off`/`y`/`n`
 * in any of their usual casings are booleans, `~`/`null`/empty are null,
 * decimal, 0x/0o/0b, leading-0 octal and `_`-separated integers are numbers,
 * decimal floats are reals; `.inf`/`.nan` are refused, as sigs.k8s.io/yaml
 * refuses them (JSON has no such numbers); everything quoted, block scalars,
 * or tagged !!str, is a string. Keys are turned into strings the way
 * sigs.k8s.io/yaml spells them (`yes:` is "true", `1e3:` is "1000"); a null
 * key is an error. Anchors, aliases and `<<` merges are followed (aliases of
 * aliases included), with go-yaml v2's cap on the share of a document that
 * alias expansion may make, so that a "billion laughs" document is an error
 * rather than an exhausted machine. Every result was checked against the
 * real kubectl (tests/unit/test_util_yaml_json.c).
 *
 * Every value's position is kept, so a grader or a validator can say
 * FILE:LINE:COL of the field it judged. */
#ifndef GPUOP_UTIL_YAML_JSON_H
#define GPUOP_UTIL_YAML_JSON_H

#include <jansson.h>
#include <stddef.h>

#include "util/error.h"

/* Where each value of one document is: JSON pointer ("" for the root,
 * "/spec/containers/0/name") -> [line, col], both 1-based. */
typedef json_t gp_yaml_positions;

/* Parses every document of `text` (len bytes; `name` is used in errors,
 * e.g. the file's path). *docs receives a JSON array with one value per
 * document (an empty document, or a stream of only comments, is null);
 * when `positions` is not NULL it receives an array parallel to *docs of
 * gp_yaml_positions objects. Returns 0, or -1 with err located at
 * NAME:LINE:COL (nothing is returned then). */
int gp_yaml_to_json(const char *text, size_t len, const char *name, json_t **docs,
                    json_t **positions, gp_error *err);

/* As gp_yaml_to_json (without positions), and *duplicates receives what
 * go-yaml v2's UnmarshalStrict (behind sigs.k8s.io/yaml's YAMLToJSONStrict,
 * which kube-apiserver runs on a YAML body under strict or warn field
 * validation) says of the keys given twice in a mapping of the first
 * document: an array of strings such as `line 5: key "name" already set in
 * map`, the line being that of the second value, empty when there are none
 * (at most 100). Keys are compared as go-yaml holds them: `1:` and `"1":`
 * differ, `yes:` and `true:` do not; a merge (`<<`) whose keys the mapping
 * already has, or sets after it, is a complaint too, as in go-yaml v2. */
int gp_yaml_to_json_strict(const char *text, size_t len, const char *name, json_t **docs,
                           json_t **duplicates, gp_error *err);

/* Reads and parses a file (as gp_yaml_to_json, name = path). */
int gp_yaml_load_file(const char *path, json_t **docs, json_t **positions, gp_error *err);

/* The [line, col] a document's positions hold for `pointer`, or of its
 * nearest ancestor that has one; 0/0 when none does. */
void gp_yaml_position(const gp_yaml_positions *positions, const char *pointer, unsigned *line,
                      unsigned *col);

#endif
