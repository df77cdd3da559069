/* The incident's scenarios, its record in the workspace, the nodes' seed
 * files and the task text (incident.h). */
#include "lab/incident.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents/node.h"
#include "lab/incident_files.h"
#include "lab/labcluster.h"
#include "lab/steps.h"
#include "lab/workspace.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/i18n.h"

#define INCIDENT_STATE ".gpuop-lab-incident.json"

static const struct {
    const char *name;
    const char *title;
} SCENARIOS[LAB_SCENARIOS] = {
    {"containerd-1.6", N_("A drop-in that takes runc away on containerd 1.6")},
    {"not-restarted", N_("The files say nvidia, the running containerd does not")},
    {"kernel-update", N_("A kernel update leaves a node Ready without GPUs")},
};

const char *lab_scenario_name(lab_scenario s)
{
    return s < LAB_SCENARIOS ? SCENARIOS[s].name : "";
}

const char *lab_scenario_title(lab_scenario s)
{
    return s < LAB_SCENARIOS ? SCENARIOS[s].title : "";
}

int lab_scenario_parse(const char *name, lab_scenario *out)
{
    for (int i = 0; i < LAB_SCENARIOS; i++)
        if (strcmp(name, SCENARIOS[i].name) == 0) {
            *out = (lab_scenario)i;
            return 0;
        }
    return -1;
}

/* ---- the record ---------------------------------------------------------- */

int lab_incident_save(const char *root, const lab_incident *inc, gp_error *err)
{
    json_t *j =
        json_pack("{s:s, s:s}", "scenario", lab_scenario_name(inc->scenario), "data", inc->data);
    char *text = j ? json_dumps(j, JSON_INDENT(2)) : NULL;
    json_decref(j);
    if (!text) {
        gp_error_set(err, root, 0, 0, "cannot record the incident (is the data directory UTF-8?)");
        return -1;
    }
    int rc = lab_ws_write(root, INCIDENT_STATE, text, strlen(text), 0644, err);
    free(text);
    return rc;
}

int lab_incident_load(const char *root, lab_incident *inc, gp_error *err)
{
    char *path = lab_path(root, INCIDENT_STATE);
    if (!path) {
        gp_error_set(err, root, 0, 0, "out of memory");
        return -1;
    }
    if (access(path, F_OK) != 0) {
        free(path);
        return 1;
    }
    json_error_t jerr;
    json_t *j = json_load_file(path, 0, &jerr);
    const char *name = json_string_value(json_object_get(j, "scenario"));
    const char *data = json_string_value(json_object_get(j, "data"));
    int rc = 0;
    if (!j) {
        gp_error_set(err, path, jerr.line, jerr.column, "%s", jerr.text);
        rc = -1;
    } else if (!name || lab_scenario_parse(name, &inc->scenario) != 0) {
        gp_error_set(err, path, 0, 0,
                     "scenario: not one of containerd-1.6, not-restarted, "
                     "kernel-update");
        rc = -1;
    } else if (!data || !*data || strlen(data) >= sizeof inc->data) {
        gp_error_set(err, path, 0, 0, "data: not a data directory");
        rc = -1;
    } else {
        snprintf(inc->data, sizeof inc->data, "%s", data);
    }
    json_decref(j);
    free(path);
    return rc;
}

/* ---- the nodes' seed files ------------------------------------------------ */

/* DIR/etc/containerd/conf.d/99-nvidia.toml, the repaired drop-in, unless
 * the node has one. */
static int seed_nvidia(const char *dir, gp_error *err)
{
    int fd = gp_open_beneath(dir, "etc/containerd/conf.d", true, 0755, err);
    if (fd < 0) return -1;
    char *shown = gp_format("%s/etc/containerd/conf.d/99-nvidia.toml", dir);
    int rc = gp_create_new_at(fd, "99-nvidia.toml", shown ? shown : dir, lab_fixed_dropin,
                              lab_fixed_dropin_len, 0644, err);
    free(shown);
    close(fd);
    return rc < 0 ? -1 : 0;
}

int lab_seed_nodes(const char *data, const lab_params *p, bool nvidia_on_node0, gp_error *err)
{
    for (int i = 0; i < LAB_NODES; i++) {
        char *dir = gp_format("%s/nodes/%s", data, lab_node_name(i));
        if (!dir) {
            gp_error_set(err, data, 0, 0, "out of memory");
            return -1;
        }
        ag_node_state st;
        ag_node_state_default(&st);
        st.gpus = p->gpus_per_node;
        snprintf(st.gpu_model, sizeof st.gpu_model, "%s", p->gpu_model);
        int rc = ag_node_create(dir, &st, err);
        if (rc == 0 && i == 0 && nvidia_on_node0) rc = seed_nvidia(dir, err);
        free(dir);
        if (rc != 0) return -1;
    }
    return 0;
}

/* ---- the task ------------------------------------------------------------ */

static void what_happened(gp_buf *out, lab_scenario s)
{
    switch (s) {
    case LAB_SCENARIO_CONTAINERD_16:
        lab_text_plain(
            out,
            N_("What happened: the NVIDIA container toolkit was installed as the DaemonSet "
               "gpu-operator/nvidia-container-toolkit-daemonset with RUNTIME_RESTART_MODE=signal, "
               "then the device plugin and three GPU jobs, gpu-lab/cuda-job-0..2. This toolkit is "
               "a variant no real one is (env GPUOP_TOOLKIT_VARIANT=bare-dropin): it writes the "
               "bare drop-in of the lab's step 2, only the nvidia runtime table, the file the "
               "incident's nodes had. Minutes later every node was NotReady and the jobs were "
               "Pending."));
        return;
    case LAB_SCENARIO_NOT_RESTARTED:
        lab_text_plain(
            out, N_("What happened: the NVIDIA container toolkit v1.18.1 was installed as the "
                    "DaemonSet gpu-operator/nvidia-container-toolkit-daemonset with "
                    "RUNTIME_RESTART_MODE=none, then the device plugin and three GPU jobs, "
                    "gpu-lab/cuda-job-0..2. The toolkit's pods are Running and its drop-in is "
                    "written, yet no node advertises nvidia.com/gpu and the jobs are Pending."));
        return;
    default:
        lab_text_plain(
            out,
            N_("What happened: the cluster ran three GPU jobs, gpu-lab/cuda-job-0..2, one on each "
               "node, with the toolkit and the device plugin. For a kernel update lab-node-1 was "
               "drained, rebooted and uncordoned, and its job was submitted again. The node is "
               "Ready, but the job is Pending."));
        return;
    }
}

char *lab_incident_text(lab_scenario s, const lab_params *p, const char *root, const char *data)
{
    gp_buf out = {0};
    lab_text_para(&out,
                  N_("The cluster's three nodes are simulated: each runs its own containerd, "
                     "kubelet and NVIDIA driver (%d GPUs), with its files under %s/nodes/NODE "
                     "(`gpuop node files NODE`)."),
                  p->gpus_per_node, data);
    what_happened(&out, s);
    lab_text_para(
        &out,
        N_("Find the layer that broke and repair it, on the nodes (their files, `gpuop node "
           "restart-containerd NODE`, `gpuop node reboot NODE`) or in the cluster (kubectl), "
           "until every node is Ready, its containerd has loaded the nvidia handler and loads it "
           "again after a restart, its device plugin advertises its %d GPUs and the three jobs "
           "run. Judge by what is loaded and advertised, not by what is written: `gpuop node "
           "status NODE`, `gpuop containerd check nvidia --source daemon --address SOCKET`, "
           "`gpuop why-pending`, kubectl."),
        p->gpus_per_node);
    if (s == LAB_SCENARIO_CONTAINERD_16)
        lab_text_plain(&out, N_("The toolkit's pods are still there: a repair that the next "
                                "start of the toolkit undoes is not one."));
    if (s == LAB_SCENARIO_KERNEL_UPDATE)
        lab_text_plain(&out, N_("On a real node DKMS builds the driver's module for a new "
                                "kernel; here that is [driver] kernel in the node's node.toml, "
                                "read at its next boot."));
    lab_text_para(&out,
                  N_("Write %s/out/incident.txt, two KEY=VALUE lines: LAYER=, the layer that "
                     "broke, one of containerd-config (what a (re)start of containerd loads from "
                     "its files), containerd-not-restarted (the files are right, the running "
                     "daemon has not loaded them), nvidia-driver, device-plugin, kubelet, "
                     "scheduler; and NODES=, the nodes it broke, comma-separated."),
                  root);
    lab_text_plain(&out, N_("`gpuop lab incident check` grades the live cluster and the answer; "
                            "`gpuop lab incident` again replays it from the start."));
    return gp_buf_take(&out);
}
