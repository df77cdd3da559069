/* A simulated node's state on disk: what an operator would find on a real
 * GPU node, under a directory the caller gives (the embedded cluster uses
 * DATA/nodes/NAME/). The directory is the node's root: its files sit where
 * they would on the node, so containerd's absolute `imports` resolve inside
 * it, and the field tools read them as they read a copy of a real node's
 * (`gpuop containerd merge --root DIR`).
 *
 *   DIR/etc/containerd/config.toml      containerd's main config
 *   DIR/etc/containerd/conf.d/NAME.toml the drop-ins its `imports` name
 *   DIR/node.toml                       what a node has besides files
 *   DIR/run/containerd/containerd.sock  where the agent serves the daemon
 *
 * node.toml (TOML; every key optional, unknown keys refused):
 *
 *   [containerd]
 *   version = "1.6.20~ds1"   # what the binary reports; its line (1.6, 1.7,
 *                            # 2.0, 2.1) chooses the merge rules
 *   restart = "always"       # containerd.service Restart=: "always" or "no"
 *   restart_sec = 5          # RestartSec=, in seconds
 *   [driver]
 *   installed = true         # the NVIDIA driver is installed
 *   version = "550.54.15"
 *   kernel = "6.1.0-18-amd64" # the kernel its module was built for (DKMS)
 *   [kernel]
 *   version = "6.1.0-18-amd64" # the kernel the node boots
 *   [gpu]
 *   count = 4                # physical GPUs on the PCI bus
 *   model = "NVIDIA-A100-SXM4-40GB" # as GPU Feature Discovery names it
 *
 * `restart` is what happens when the daemon exits on its own (SIGHUP: it
 * does not handle it and dies, ../shared/design/gpu-node-facts.md 4.5):
 * the packaged unit has Restart=always and RestartSec=5, so systemd starts
 * it again 5 s later (3.4); "no" is a supervisor that leaves it down (the
 * RKE2 restart loop of containerd issue #13285 ends there too).
 *
 * The driver's module loads at boot when the driver is installed and was
 * built for the kernel that boots (section 5: a kernel update without a
 * rebuilt module leaves the node Ready without GPUs; `gpuop node reboot
 * --kernel-update` moves kernel.version on and leaves driver.kernel).
 * Every key is read again at each start of the daemon and each boot, never
 * while they run. */
#ifndef GPUOP_AGENTS_NODE_H
#define GPUOP_AGENTS_NODE_H

#include <stdbool.h>
#include <stddef.h>

#include "containerd/containerd.h"
#include "util/error.h"

/* Paths under the node's root, relative to it. */
#define AG_NODE_MAIN_CONFIG "etc/containerd/config.toml"
#define AG_NODE_CONF_D      "etc/containerd/conf.d"
#define AG_NODE_STATE_FILE  "node.toml"
#define AG_NODE_SOCKET      "run/containerd/containerd.sock"

/* What the packaged containerd.service says (containerd repo,
 * containerd.service; gpu-node-facts.md 3.4). */
#define AG_RESTART_SEC_DEFAULT 5

typedef enum ag_restart_policy {
    AG_RESTART_ALWAYS, /* Restart=always: started again restart_sec after any exit */
    AG_RESTART_NO,     /* Restart=no: an exit leaves it down until started by hand */
} ag_restart_policy;

typedef struct ag_node_state {
    char containerd_version[64]; /* "1.6.20~ds1", as `containerd --version` prints it */
    cd_family family;            /* its line, from the version */
    ag_restart_policy restart;
    int restart_sec; /* 0..3600 */
    bool driver_installed;
    char driver_version[64]; /* "" when none */
    char driver_kernel[128]; /* the kernel release the driver's module was built for */
    char kernel_version[128];
    int gpus;            /* physical GPUs, 0..64 */
    char gpu_model[128]; /* GFD's nvidia.com/gpu.product, or a short name (A100-40GB) */
} ag_node_state;

/* The driver's module loads on a boot of this state: installed, and built
 * for the kernel that boots. */
bool ag_node_driver_loads(const ag_node_state *st);

/* The kernel release a `reboot --kernel-update` boots after `kernel`: the
 * next ABI of a Debian release ("6.1.0-18-amd64" -> "6.1.0-19-amd64"),
 * else `kernel` with "+1" after it. Writes into out (cap bytes). */
void ag_node_next_kernel(const char *kernel, char *out, size_t cap);

/* The healthy node the lab starts from: Debian 12's containerd 1.6.20
 * under its packaged unit, an NVIDIA driver built for Debian 12's kernel,
 * four A100 40GB (the lab's lab-node-1). */
void ag_node_state_default(ag_node_state *st);

/* Reads DIR/node.toml. A missing file is the default state (a node made
 * before the file existed is still a node); a file that is not TOML, a key
 * of the wrong type, an unknown key or a bad value is an error naming
 * node.toml:LINE:COL. 0, or -1 with err (st is then untouched). */
int ag_node_state_read(const char *dir, ag_node_state *st, gp_error *err);

/* The state as node.toml's text (malloc'd, the caller frees; NULL when
 * memory runs out). Reading it back gives the same state. */
char *ag_node_state_format(const ag_node_state *st);

/* Replaces DIR/node.toml with `st`, atomically and never through a
 * symbolic link (the file is gpuop's own: no backup). 0, or -1 with err. */
int ag_node_state_write(const char *dir, const ag_node_state *st, gp_error *err);

/* Makes DIR a healthy node: the lab's main config (runc only, with
 * SystemdCgroup, importing every .toml of /etc/containerd/conf.d: the copy in
 * examples/incident/etc/), an empty conf.d and node.toml holding `st`
 * (the default state when NULL). DIR is created when missing. A file that
 * already exists is kept as it is, never overwritten (a node keeps what
 * was done to it); nothing is written through a symbolic link. 0, or -1
 * with err. */
int ag_node_create(const char *dir, const ag_node_state *st, gp_error *err);

/* What the lab's incident writes into conf.d as 99-nvidia.toml (the seeds'
 * step 2: only the nvidia runtime table), for tests and the later stages'
 * toolkit variant. NUL-terminated. */
extern const char ag_bare_dropin[];
extern const size_t ag_bare_dropin_len;

/* The main config ag_node_create writes. NUL-terminated. */
extern const char ag_default_main_config[];
extern const size_t ag_default_main_config_len;

#endif
