/* data/kube-types-1.32.txt, compiled in (the "API types, embedded" block of
 * CMakeLists.txt, cmake/embed_files.cmake): the Go types of the served
 * kinds, which decode.c reads. Ends in a NUL that _len does not count. */
#ifndef GPUOP_APISERVER_KUBE_TYPES_DATA_H
#define GPUOP_APISERVER_KUBE_TYPES_DATA_H

#include <stddef.h>

extern const char as_kube_types[];
extern const size_t as_kube_types_len;

#endif
