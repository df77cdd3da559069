/* The built-in defaults that matter for a prediction, per containerd line.
 *
 * Only what decides which runtimes load and how (the default runtime and its
 * name, CNI directories) and the top-level settings people check; the rest
 * of containerd's hundreds of defaults would only repeat `config dump`.
 * Values are those the real binaries print (../shared/containerd-cases). */
#include <stdbool.h>
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

/* The keys of the CRI plugin's config, at its top and in its
 * `containerd` table, as `containerd config dump` of the real binaries
 * lists them (../shared/containerd-cases/1.6.20/j_nomatch.toml and
 * 1.7.29/j_nomatch.toml: the dump prints every field of the struct). A key
 * not listed is not a field: go-toml drops it without a word. */
static const char *const cri_keys_1_6[] = {"cni",
                                           "containerd",
                                           "device_ownership_from_security_context",
                                           "disable_apparmor",
                                           "disable_cgroup",
                                           "disable_hugetlb_controller",
                                           "disable_proc_mount",
                                           "disable_tcp_service",
                                           "enable_selinux",
                                           "enable_tls_streaming",
                                           "enable_unprivileged_icmp",
                                           "enable_unprivileged_ports",
                                           "ignore_image_defined_volumes",
                                           "image_decryption",
                                           "max_concurrent_downloads",
                                           "max_container_log_line_size",
                                           "netns_mounts_under_state_dir",
                                           "registry",
                                           "restrict_oom_score_adj",
                                           "sandbox_image",
                                           "selinux_category_range",
                                           "stats_collect_period",
                                           "stream_idle_timeout",
                                           "stream_server_address",
                                           "stream_server_port",
                                           "systemd_cgroup",
                                           "tolerate_missing_hugetlb_controller",
                                           "unset_seccomp_profile",
                                           "x509_key_pair_streaming",
                                           NULL};
/* 1.7 adds CDI and a few more. */
static const char *const cri_keys_1_7_only[] = {"cdi_spec_dirs",
                                                "drain_exec_sync_io_timeout",
                                                "enable_cdi",
                                                "ignore_deprecation_warnings",
                                                "image_pull_progress_timeout",
                                                "image_pull_with_sync_fs",
                                                NULL};
static const char *const containerd_keys_1_6[] = {"default_runtime",
                                                  "default_runtime_name",
                                                  "disable_snapshot_annotations",
                                                  "discard_unpacked_layers",
                                                  "ignore_rdt_not_enabled_errors",
                                                  "no_pivot",
                                                  "runtimes",
                                                  "snapshotter",
                                                  "untrusted_workload_runtime",
                                                  NULL};
static const char *const containerd_keys_1_7_only[] = {"ignore_blockio_not_enabled_errors", NULL};

/* 2.0 and 2.1: the runtime plugin io.containerd.cri.v1.runtime (2.0.11 and
 * 2.1.5 j_nomatch.toml); image settings live in io.containerd.cri.v1.images. */
static const char *const runtime_keys_2x[] = {"cdi_spec_dirs",
                                              "cni",
                                              "containerd",
                                              "device_ownership_from_security_context",
                                              "disable_apparmor",
                                              "disable_hugetlb_controller",
                                              "disable_proc_mount",
                                              "drain_exec_sync_io_timeout",
                                              "enable_cdi",
                                              "enable_selinux",
                                              "enable_unprivileged_icmp",
                                              "enable_unprivileged_ports",
                                              "ignore_deprecation_warnings",
                                              "ignore_image_defined_volumes",
                                              "max_container_log_line_size",
                                              "netns_mounts_under_state_dir",
                                              "restrict_oom_score_adj",
                                              "selinux_category_range",
                                              "tolerate_missing_hugetlb_controller",
                                              "unset_seccomp_profile",
                                              NULL};
static const char *const containerd_keys_2x[] = {"default_runtime_name",
                                                 "ignore_blockio_not_enabled_errors",
                                                 "ignore_rdt_not_enabled_errors", "runtimes", NULL};

static bool listed(const char *const *list, const char *key, size_t len)
{
    for (; *list; list++)
        if (strlen(*list) == len && memcmp(*list, key, len) == 0) return true;
    return false;
}

bool cd_cri_key_known(cd_family f, bool in_containerd, const char *key, size_t len)
{
    if (!cd_is_v1(f)) return listed(in_containerd ? containerd_keys_2x : runtime_keys_2x, key, len);
    const char *const *base = in_containerd ? containerd_keys_1_6 : cri_keys_1_6;
    const char *const *added = in_containerd ? containerd_keys_1_7_only : cri_keys_1_7_only;
    return listed(base, key, len) || (f >= CD_V1_7 && listed(added, key, len));
}

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
