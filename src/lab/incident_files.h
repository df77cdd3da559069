/* The incident's files, compiled in from examples/incident/ (its README
 * says what each is and where it comes from), so that the tree holds one
 * copy of them: the "incident's files" block of CMakeLists.txt turns each
 * into a byte array (cmake/embed_files.cmake). Each text ends in a NUL that
 * its _len does not count. */
#ifndef GPUOP_LAB_INCIDENT_FILES_H
#define GPUOP_LAB_INCIDENT_FILES_H

#include <stddef.h>

/* etc/containerd/config.toml: the node's main config (its imports name the
 * node's conf.d by absolute path). */
extern const char lab_main_config[];
extern const size_t lab_main_config_len;

/* etc/containerd/conf.d/99-nvidia.toml: the toolkit's drop-in. */
extern const char lab_dropin[];
extern const size_t lab_dropin_len;

/* evidence/containerd-config-dump.toml: containerd 1.6.20's dump on the
 * incident node (runc only). */
extern const char lab_evidence_dump[];
extern const size_t lab_evidence_dump_len;

/* evidence/containerd-config-dump-nvidia.toml: containerd 1.6.20's dump of
 * exactly the two files above (nvidia only). */
extern const char lab_nvidia_dump[];
extern const size_t lab_nvidia_dump_len;

/* evidence/containerd-config-dump-nvidia-cdi.toml: containerd 1.6.20's dump
 * of a node whose NVIDIA handler is nvidia-cdi, beside runc (recorded by
 * record-dump-nvidia-cdi.sh): no nvidia handler, though its text says
 * nvidia and runtimes.nvidia. Step 4's dump without the handler. */
extern const char lab_nvidia_cdi_dump[];
extern const size_t lab_nvidia_cdi_dump_len;

/* fixed/etc/containerd/conf.d/99-nvidia.toml: a drop-in that adds the
 * nvidia runtime and keeps runc (containerd 1.6.20 loads both from it and
 * the main config): the incident's repair, and lab-node-0's drop-in when
 * the eight steps run on simulated nodes. */
extern const char lab_fixed_dropin[];
extern const size_t lab_fixed_dropin_len;

#endif
