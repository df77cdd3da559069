#include "lab/steps.h"

#include <stdarg.h>
#include <stdlib.h>

#include "util/buf.h"
#include "util/i18n.h"
#include "util/msg.h"

void lab_text_para(gp_buf *out, const char *fmt, ...)
{
    if (out->len > 0) gp_buf_addc(out, '\n');
    va_list ap;
    va_start(ap, fmt);
    gp_msg_buf_vaddf(out, _(fmt), ap);
    va_end(ap);
    gp_buf_addc(out, '\n');
}

void lab_text_plain(gp_buf *out, const char *msg)
{
    if (out->len > 0) gp_buf_addc(out, '\n');
    gp_buf_add(out, _(msg));
    gp_buf_addc(out, '\n');
}

#define para  lab_text_para
#define plain lab_text_plain

static void step1(gp_buf *out, const char *r)
{
    para(out,
         N_("Write %s/etc/containerd/config.toml, the incident node's main containerd config. At "
            "the top level it has version = 2 (an integer) and an imports array, one item of "
            "which ends in conf.d/*.toml."),
         r);
    plain(
        out,
        N_("Under plugins.\"io.containerd.grpc.v1.cri\".containerd put default_runtime_name = "
           "\"runc\". In the table plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc "
           "put runtime_type = \"io.containerd.runc.v2\" and options.SystemdCgroup = true (a "
           "boolean)."));
}

static void step2(gp_buf *out, const char *r)
{
    para(out,
         N_("Write %s/etc/containerd/conf.d/99-nvidia.toml, the drop-in the NVIDIA container "
            "toolkit writes: the table "
            "plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.nvidia with runtime_type = "
            "\"io.containerd.runc.v2\", and under it options with BinaryName = "
            "\"/usr/bin/nvidia-container-runtime\" and SystemdCgroup = true."),
         r);
}

static void step3(gp_buf *out, const char *r)
{
    para(out,
         N_("Read the two files with a TOML parser and write your verdict to %s/out/merge.txt: "
            "five KEY=VALUE lines in this order, lists comma-separated (in any order)."),
         r);
    plain(out,
          N_("  MAIN_RUNTIMES=    the runtime names the main config defines itself\n"
             "  DROPIN_RUNTIMES=  the names the drop-in defines\n"
             "  CONFLICT=         yes when both files define content in the same table, else no\n"
             "  CONFLICT_TABLE=   the deepest table both put content in, as a TOML key\n"
             "                    (like plugins.\"io.containerd.grpc.v1.cri\".containerd); any\n"
             "                    spelling of the same key counts: other quotes, blanks\n"
             "                    around the dots, its [header] brackets\n"
             "  LOADED_RUNTIMES=  the runtime handlers containerd had loaded"));
    para(out,
         N_("The last line alone is observed, not computed: on the incident day `containerd "
            "config dump` on that node showed which runtime handlers were loaded. The lab ships "
            "that dump as %s/evidence/containerd-config-dump.toml."),
         r);
}

static void step4(gp_buf *out, const char *r)
{
    para(out,
         N_("Write %s/bin/check-runtime.sh and make it executable. It calls `containerd config "
            "dump` by bare name (found through PATH, no absolute path), looks in its output for "
            "the nvidia handler's table, containerd.runtimes.nvidia, and exits 0 when it is there "
            "and 1 when it is not. Another handler whose name starts with nvidia, such as "
            "nvidia-cdi, is not it."),
         r);
    plain(out,
          N_("It must never read /etc/containerd/config.toml or any other config file: judging by "
             "files is the very mistake this lab is about. The grader runs the script, with a time "
             "limit, against a stand-in containerd first in PATH: once with a dump that has the "
             "nvidia handler and once with a node's dump that has runc and nvidia-cdi. Nothing "
             "the script leaves running outlives the run."));
    plain(out,
          N_("What the dump proves: `containerd config dump` reads the files again, imports "
             "included, the way containerd merges them, so it shows what a (re)start would load. "
             "It does not ask the running daemon. What the daemon loaded lives in its CRI status "
             "(crictl info: the runtimes of its config); node status.runtimeHandlers reports it "
             "only with containerd 2.0 and later. Run the script at boot, before the kubelet, or "
             "after every restart, and the two agree."));
}

static void step5(gp_buf *out, const char *r)
{
    para(out,
         N_("Write %s/k8s/runtimeclass.yaml: a RuntimeClass whose name and handler are both "
            "nvidia."),
         r);
    para(out,
         N_("Write %s/k8s/gpu-pod.yaml: a Pod named cuda-probe in namespace gpu-lab, with "
            "runtimeClassName: nvidia and a container whose resources.limits has nvidia.com/gpu: "
            "1. Create the namespace first, then apply both files."),
         r);
    para(out,
         N_("The pod does not start. Save the reason and the message of its PodScheduled "
            "condition, as two lines, to %s/out/unscheduled.txt: the reason, one word, then the "
            "message word for word as the scheduler wrote it (REASON= and MESSAGE= in front are "
            "allowed). Copy it from the cluster; the grader checks it against the scheduler's "
            "record and does not show it."),
         r);
}

static void step6_table(gp_buf *out, const char *r)
{
    para(out,
         N_("When the pod is Running, save the three nodes' names and how many nvidia.com/gpu "
            "each advertises to %s/out/node-gpu.txt, as a two-column table: on each line a "
            "node's name and its value, separated by spaces or tabs (not commas); 0, <none> or "
            "nothing for a node that advertises none; a header line first if you like, as "
            "kubectl get nodes -o custom-columns prints one."),
         r);
}

static void step6(gp_buf *out, const lab_params *p, const char *r, bool agents)
{
    if (agents) {
        /* simulated nodes: the device plugin does what the patch stands for */
        para(out,
             N_("The nodes are simulated (gpuop lab up --node-agents): a device plugin "
                "advertises the GPUs, not a patch. Apply a DaemonSet named "
                "nvidia-device-plugin-daemonset in namespace gpu-operator, with nodeSelector "
                "kubernetes.io/hostname: lab-node-0, runtimeClassName: nvidia and one container "
                "of image nvcr.io/nvidia/k8s-device-plugin:v0.17.0. lab-node-0's containerd "
                "has loaded the nvidia handler (gpuop node status lab-node-0); the plugin "
                "registers the node's %d GPUs with its kubelet, which puts them in capacity and "
                "allocatable."),
             p->gpus_per_node);
    } else {
        para(out,
             N_("With kubectl patch node lab-node-0 --subresource=status, put nvidia.com/gpu: "
                "\"%d\" in both capacity and allocatable."),
             p->gpus_per_node);
    }
    step6_table(out, r);
}

static void step7(gp_buf *out, const lab_params *p, const char *r)
{
    para(out,
         N_("Write %s/k8s/time-slicing.yaml: a ConfigMap named time-slicing-config in namespace "
            "gpu-operator. Its data.any is a YAML string holding "
            "sharing.timeSlicing.failRequestsGreaterThanOne: true and, as the first item of the "
            "resources array, name: nvidia.com/gpu and replicas: %d."),
         r, p->replicas);
    para(out, N_("Apply it, then raise lab-node-1's advertisement to \"%d\"."),
         p->gpus_per_node * p->replicas);
    para(out,
         N_("Write seven KEY=VALUE lines to %s/out/slots.txt, in this order: PHYSICAL_GPUS, "
            "REPLICAS, ADVERTISED, VRAM_PER_GPU_GIB, VRAM_GUARANTEED_PER_SLOT_GIB, "
            "VRAM_SHARED_PER_GPU_GIB (whole numbers; GiB) and ISOLATION, one of none, "
            "memory-limit (MPS), exclusive (one pod a GPU) or hardware (MIG)."),
         r);
    para(out, N_("The hardware: %d %s GPUs of %d GiB each per node."), p->gpus_per_node,
         p->gpu_model, p->gpu_memory_gib);
}

static void step8(gp_buf *out, const lab_params *p, const char *r)
{
    para(out,
         N_("Write %s/k8s/toolkit-ds.yaml: a DaemonSet named nvidia-container-toolkit in "
            "namespace gpu-operator with updateStrategy.rollingUpdate.maxUnavailable: 1, image %s "
            "and a memory request of %s. Apply it."),
         r, p->ds_old_image, p->ds_old_memory);
    para(out,
         N_("Once all three pods are Ready, change the image to %s and, in the same change, the "
            "memory request to %dGi: one update (one kubectl apply or kubectl patch). The grader "
            "reads the DaemonSet's revisions: two updates, one for each field, are not the "
            "incident."),
         p->ds_new_image, p->ds_request_gib);
    para(out,
         N_("When the rollout stops, write six KEY=VALUE lines to %s/out/rollout.txt, in this "
            "order: DESIRED, UPDATED, READY, OLD_IMAGE_PODS, MAX_UNAVAILABLE (whole numbers, "
            "read from the live DaemonSet and its pods) and BLOCKER, the waiting pod's reason in "
            "gpuop's words: insufficient-<resource> (insufficient-memory, insufficient-cpu, "
            "...), untolerated-taint, node-affinity, node-not-ready, unschedulable-node, "
            "image-pull or crash-loop."),
         r);
}

char *lab_step_text(int step, const lab_params *p, const char *root, bool agents)
{
    if (step < 1 || step > LAB_STEPS) return NULL;
    gp_buf out = {0};
    switch (step) {
    case 1:
        step1(&out, root);
        break;
    case 2:
        step2(&out, root);
        break;
    case 3:
        step3(&out, root);
        break;
    case 4:
        step4(&out, root);
        break;
    case 5:
        step5(&out, root);
        break;
    case 6:
        step6(&out, p, root, agents);
        break;
    case 7:
        step7(&out, p, root);
        break;
    default:
        step8(&out, p, root);
        break;
    }
    return gp_buf_take(&out);
}
