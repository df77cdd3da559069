/* What a running containerd has loaded, asked over its socket: the CRI
 * RuntimeService (what the kubelet asks) and, when CRI is not served, the
 * daemon's Introspection service (why not).
 *
 * - RuntimeService/Version and Status with verbose set (k8s.io/cri-api
 *   pkg/apis/runtime/v1/api.proto). Status's `info` holds "config", the CRI
 *   plugin's in-memory config as JSON: its containerd.runtimes and
 *   containerd.defaultRuntimeName are the runtimes loaded, in every version.
 *   Its runtime_handlers list is filled by containerd 2.0 and later only
 *   (1.6.20 and 1.7.29 send none: ../shared/containerd-cases/cri-status/).
 *   runtime.v1 is tried first, then runtime.v1alpha2, as crictl does for a
 *   daemon that predates v1 (containerd before 1.6).
 * - A daemon whose CRI plugin failed to load runs on without it and answers
 *   UNIMPLEMENTED ("unknown service runtime.v1.RuntimeService", recorded on
 *   1.6.20). Its plugin list says so first, with the plugin's init error:
 *   containerd.services.introspection.v1.Introspection/Plugins
 *   (api/services/introspection/v1/introspection.proto), what `ctr plugins
 *   ls -d` prints.
 *
 * The decoders take the protobuf bytes and do no I/O (unit tests feed them
 * hand-encoded answers); cd_cri_ask does the calls (grpc.h: libcurl, so
 * gpuop-kube only). */
#ifndef GPUOP_CONTAINERD_CRI_H
#define GPUOP_CONTAINERD_CRI_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "containerd/observed.h"
#include "util/error.h"

typedef struct cd_cri_status {
    char api[16];             /* the RuntimeService that answered: "v1" or "v1alpha2" */
    char runtime_name[64];    /* Version: "containerd" */
    char runtime_version[64]; /* "1.6.20~ds1"; "" when Version did not answer */
    bool runtime_ready;       /* condition RuntimeReady */
    bool handlers_reported;   /* runtime_handlers was not empty (containerd 2.0+) */
    cd_names handlers;        /* its names, the default's "" left out */
    cd_names runtimes;        /* info.config containerd.runtimes, in the config's order */
    char *default_runtime;    /* info.config containerd.defaultRuntimeName; NULL if absent */
    json_t *config;           /* info.config, parsed; NULL when absent */
    json_t *answer;           /* the whole decoded StatusResponse (proto member names) */
    json_t *version;          /* the decoded VersionResponse, or NULL */
} cd_cri_status;

/* A StatusResponse message into *out, which starts zeroed or holds only
 * what cd_cri_version_decode set. The runtime names are read from
 * info.config. Returns 0, or -1 with err when the
 * bytes are not a StatusResponse or info.config is not JSON. */
int cd_cri_status_decode(const void *bytes, size_t len, cd_cri_status *out, gp_error *err);
/* A VersionResponse message: sets runtime_name, runtime_version and
 * `version`. Returns 0, or -1 with err. */
int cd_cri_version_decode(const void *bytes, size_t len, cd_cri_status *out, gp_error *err);
void cd_cri_status_free(cd_cri_status *s);

/* The handler is loaded: in runtime_handlers when the daemon reports them,
 * else among the config's runtimes. */
bool cd_cri_status_has_handler(const cd_cri_status *s, const char *handler);

/* A CRI plugin that failed to initialise, from Introspection/Plugins. */
typedef struct cd_cri_plugin_error {
    bool found;         /* the daemon lists the plugin */
    bool failed;        /* with an init error */
    char plugin[160];   /* "io.containerd.grpc.v1.cri" */
    char message[1024]; /* the init error's message */
} cd_cri_plugin_error;

/* A PluginsResponse: the first failed plugin among the CRI ones (2.x's
 * io.containerd.cri.v1 runtime first, as it owns the handlers; then
 * io.containerd.grpc.v1 cri), else the first CRI plugin listed. */
int cd_cri_plugins_decode(const void *bytes, size_t len, cd_cri_plugin_error *out, gp_error *err);

typedef enum cd_cri_answer {
    CD_CRI_SERVED,      /* CRI answered Status: *status filled */
    CD_CRI_NOT_SERVED,  /* the daemon answered, but serves no CRI RuntimeService */
    CD_CRI_UNREACHABLE, /* nothing answers at the address (err says why) */
    CD_CRI_FAILED,      /* something answered, but not the way CRI does (err) */
} cd_cri_answer;

/* Asks the daemon at `address` (PATH or unix://PATH): its CRI plugins
 * (Introspection) first, which settle CD_CRI_NOT_SERVED when the plugin
 * failed or is absent (*plugin says which, with its error); then Version
 * and Status of runtime.v1, else of runtime.v1alpha2. */
cd_cri_answer cd_cri_ask(const char *address, cd_cri_status *status, cd_cri_plugin_error *plugin,
                         gp_error *err);

#endif
