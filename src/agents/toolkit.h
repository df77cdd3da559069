/* The NVIDIA Container Toolkit's container (nvidia-ctk-installer, image
 * nvcr.io/nvidia/k8s/container-toolkit:TAG) on a simulated node: what its
 * setup writes into the node's containerd files, how it restarts the
 * daemon, and what its cleanup takes away when its pod ends. The agent
 * recognises the container by its image and reads the rest from its
 * environment, as the installer does.
 *
 * The facts (../shared/design/gpu-node-facts.md 3.2 to 3.5):
 * - before v1.18 the installer edits /etc/containerd/config.toml itself
 *   (re-serialised: comments and key order go); from v1.18 it writes the
 *   drop-in /etc/containerd/conf.d/99-nvidia.toml holding the config's
 *   version, a copy of the whole CRI table of its source (3.3: containerd
 *   1.x replaces a plugin table wholesale) and the nvidia runtimes, and
 *   appends the drop-in's directory to the main file's imports (v1.18.0
 *   replaced the imports instead). The source is RUNTIME_CONFIG_SOURCE's
 *   first entry (default "command,file"): `command` is `containerd config
 *   dump`, here gpuop's prediction of it (ag_node_predict), whose version
 *   is the binary's (2 on 1.x, 3 on 2.x); `file` the main file. A version
 *   1 config (a non-empty file without `version`) is written whole: into
 *   config.toml before v1.18, into the drop-in, never imported, after.
 * - the runtimes nvidia, nvidia-cdi and nvidia-legacy (NVIDIA_RUNTIME_NAME
 *   or CONTAINERD_RUNTIME_CLASS names the first; default nvidia), each a
 *   copy of the default runtime's table unless it is an nvidia one, else
 *   runc's, else crun's, with options.BinaryName the toolkit's binary under
 *   TOOLKIT_INSTALL_DIR (default /usr/local/nvidia)/toolkit; the default
 *   runtime set to nvidia when NVIDIA_RUNTIME_SET_AS_DEFAULT or
 *   CONTAINERD_SET_AS_DEFAULT says so (default true), and enable_cdi when
 *   CDI_ENABLED is true. Before v1.17.4 a version 3 config is refused:
 *   "unsupported config version: 3".
 * - RUNTIME_RESTART_MODE: signal (the default: SIGHUP to containerd, which
 *   does not handle it and exits, 4.5), systemd (systemctl restart) or
 *   none; CONTAINERD_RESTART_MODE is read up to v1.16.
 * - on SIGTERM (its pod deleted) the installer cleans up: the drop-in goes
 *   (and the imports line, when the main file holds nothing else but the
 *   version: an emptied file goes), or the runtimes come out of the main
 *   file; then containerd is restarted the same way again.
 *
 * A variant that no real toolkit is: env GPUOP_TOOLKIT_VARIANT=bare-dropin
 * makes the container write the seeds' step-2 drop-in instead (only the
 * nvidia runtime table, ag_bare_dropin; gpuop's lab incident, scenario
 * containerd-1.6), restarting and cleaning up as the toolkit does. Any
 * other value is refused, as a bad setting of the installer's is.
 *
 * Files are written beneath the node's root only, never through a link,
 * and a file the toolkit replaces or removes is first copied to
 * NAME.gpuop-backup-<UTC time> beside it (not *.toml, so containerd's
 * imports never read a backup). */
#ifndef GPUOP_AGENTS_TOOLKIT_H
#define GPUOP_AGENTS_TOOLKIT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "agents/node.h"
#include "util/buf.h"
#include "util/error.h"

#define AG_TOOLKIT_IMAGE       "nvcr.io/nvidia/k8s/container-toolkit"
#define AG_TOOLKIT_VARIANT_ENV "GPUOP_TOOLKIT_VARIANT"
#define AG_TOOLKIT_DROPIN      "99-nvidia.toml"

typedef enum ag_toolkit_restart {
    AG_TOOLKIT_RESTART_SIGNAL,
    AG_TOOLKIT_RESTART_SYSTEMD,
    AG_TOOLKIT_RESTART_NONE,
} ag_toolkit_restart;

typedef struct ag_toolkit {
    char container[128]; /* the toolkit's container in the pod */
    char tag[128];
    int version[3];   /* the tag's vMAJOR.MINOR.PATCH */
    bool bare_dropin; /* GPUOP_TOOLKIT_VARIANT=bare-dropin */
    ag_toolkit_restart restart;
    char runtime[64];    /* nvidia */
    bool set_as_default; /* the default runtime becomes `runtime` */
    bool cdi;
    bool from_command; /* RUNTIME_CONFIG_SOURCE's first entry is `command` */
    char root[256];    /* where its binaries are: /usr/local/nvidia/toolkit */
} ag_toolkit;

/* Whether `pod` runs the toolkit: 1 with *t read from its container, 0
 * when no container of the pod has the toolkit's image, -1 with err when
 * one has and the installer would refuse it (its tag names no version, a
 * restart mode or variant it does not know). */
int ag_toolkit_from_pod(const json_t *pod, ag_toolkit *t, gp_error *err);

/* Whether the toolkit edits config.toml (before v1.18) rather than writing
 * a drop-in. */
bool ag_toolkit_edits_main(const ag_toolkit *t);

/* The setup on the node rooted at `dir` (its state `st`: the containerd
 * line a `command` source is read for): writes the files as above. Lines
 * the installer logs are appended to `log`. 0, or -1 with err (nothing
 * written: a config it cannot read or refuses). */
int ag_toolkit_setup(const char *dir, const ag_toolkit *t, const ag_node_state *st, gp_buf *log,
                     gp_error *err);

/* The cleanup at the end of its pod. 0, or -1 with err. */
int ag_toolkit_cleanup(const char *dir, const ag_toolkit *t, gp_buf *log, gp_error *err);

#endif
