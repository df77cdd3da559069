/* The built-in defaults that matter for a prediction, per containerd line.
 *
 * Only what decides which runtimes load and how (the default runtime and its
 * name, CNI directories) and the top-level settings people check; the rest
 * of containerd's hundreds of defaults would only repeat `config dump`.
 * Values are those the real binaries print (../shared/containerd-cases). */
#include <stdlib.h>
#include <string.h>

#include "containerd/containerd_internal.h"

static const char defaults_1x[] =
    "version = 2\n"
    "root = \"/var/lib/containerd\"\n"
    "state = \"/run/containerd\"\n"
    "oom_score = 0\n"
    "[grpc]\n"
    "address = \"/run/containerd/containerd.sock\"\n"
    "[plugins.\"io.containerd.grpc.v1.cri\"]\n"
    "enable_selinux = false\n"
    "max_container_log_line_size = 16384\n"
    "[plugins.\"io.containerd.grpc.v1.cri\".cni]\n"
    "bin_dir = \"/opt/cni/bin\"\n"
    "conf_dir = \"/etc/cni/net.d\"\n"
    "[plugins.\"io.containerd.grpc.v1.cri\".containerd]\n"
    "default_runtime_name = \"runc\"\n"
    "snapshotter = \"overlayfs\"\n"
    "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]\n"
    "runtime_type = \"io.containerd.runc.v2\"\n"
    "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]\n"
    "BinaryName = \"\"\n"
    "SystemdCgroup = false\n";

/* 2.0 and 2.1 differ in CNI: 2.1 reads a list of binary directories. */
static const char defaults_2x_head[] =
    "version = 3\n"
    "root = \"/var/lib/containerd\"\n"
    "state = \"/run/containerd\"\n"
    "oom_score = 0\n"
    "[grpc]\n"
    "address = \"/run/containerd/containerd.sock\"\n"
    "[plugins.\"io.containerd.cri.v1.images\"]\n"
    "snapshotter = \"overlayfs\"\n"
    "[plugins.\"io.containerd.cri.v1.runtime\"]\n"
    "enable_selinux = false\n"
    "max_container_log_line_size = 16384\n"
    "[plugins.\"io.containerd.cri.v1.runtime\".containerd]\n"
    "default_runtime_name = \"runc\"\n"
    "[plugins.\"io.containerd.cri.v1.runtime\".containerd.runtimes.runc]\n"
    "runtime_type = \"io.containerd.runc.v2\"\n"
    "sandboxer = \"podsandbox\"\n"
    "[plugins.\"io.containerd.cri.v1.runtime\".containerd.runtimes.runc.options]\n"
    "BinaryName = \"\"\n"
    "SystemdCgroup = false\n"
    "[plugins.\"io.containerd.cri.v1.runtime\".cni]\n"
    "conf_dir = \"/etc/cni/net.d\"\n";

static const char defaults_2_0_cni[] = "bin_dir = \"/opt/cni/bin\"\n";
static const char defaults_2_1_cni[] = "bin_dir = \"\"\nbin_dirs = [\"/opt/cni/bin\"]\n";

static toml_doc *keep(cd_prediction *p, toml_doc *doc)
{
    if (!doc) return NULL;
    if (p->nowned == p->capowned) {
        size_t cap = p->capowned ? p->capowned * 2 : 8;
        toml_doc **owned = realloc(p->owned, cap * sizeof *owned);
        if (!owned) {
            toml_free(doc);
            return NULL;
        }
        p->owned = owned;
        p->capowned = cap;
    }
    p->owned[p->nowned++] = doc;
    return doc;
}

static toml_doc *parse_owned(cd_prediction *p, const char *text, const char *name)
{
    return keep(p, toml_parse(text, strlen(text), name, NULL));
}

cd_node *cd_defaults(cd_prediction *p)
{
    toml_doc *doc;
    if (cd_is_v1(p->family)) {
        doc = parse_owned(p, defaults_1x, "<default>");
    } else {
        const char *cni = p->family == CD_V2_0 ? defaults_2_0_cni : defaults_2_1_cni;
        char *text = cd_printf(p->arena, "%s%s", defaults_2x_head, cni);
        doc = text ? parse_owned(p, text, "<default>") : NULL;
    }
    if (!doc) return NULL;
    /* Built-in values have no file: origin file NULL. */
    cd_node *n = cd_from_toml(p->arena, toml_root(doc), "", 0, NULL);
    return n;
}

cd_node *cd_leaf_from_text(cd_prediction *p, const char *key, const char *value_toml,
                           cd_origin origin)
{
    char *text = cd_printf(p->arena, "x = %s\n", value_toml);
    toml_doc *doc = text ? parse_owned(p, text, "<merged>") : NULL;
    if (!doc) return NULL;
    cd_node *n = gp_arena_zalloc(p->arena, sizeof *n);
    if (!n) return NULL;
    n->key = cd_strdup(p->arena, key);
    n->keylen = strlen(key);
    n->value = toml_table_get(toml_root(doc), "x");
    n->origin = origin;
    return n;
}
