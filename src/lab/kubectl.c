#include "lab/kubectl.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/spawn.h"

/* `kubectl version --client` reads no kubeconfig and asks no server; a
 * wrapper that hangs (a cloud SDK's) is given this long. */
#define KUBECTL_TIMEOUT_MS 10000

/* A decimal number at the start of s ("32+" -> 32); -1 when there is none. */
static int leading_number(const char *s)
{
    if (!s || *s < '0' || *s > '9') return -1;
    long n = strtol(s, NULL, 10);
    return n > 9999 ? -1 : (int)n;
}

static void judge(lab_kubectl *k)
{
    bool old = k->major < LAB_KUBECTL_MIN_MAJOR ||
               (k->major == LAB_KUBECTL_MIN_MAJOR && k->minor < LAB_KUBECTL_MIN_MINOR);
    k->state = old ? LAB_KUBECTL_TOO_OLD : LAB_KUBECTL_USABLE;
}

void lab_kubectl_parse(const char *json, size_t len, lab_kubectl *k, gp_error *err)
{
    *k = (lab_kubectl){.state = LAB_KUBECTL_UNKNOWN, .major = -1, .minor = -1};
    json_t *root = json_loadb(json, len, 0, NULL);
    json_t *client = json_object_get(root, "clientVersion");
    if (!json_is_object(client)) {
        gp_error_set(err, NULL, 0, 0,
                     "'kubectl version --client -o json' printed no clientVersion");
        json_decref(root);
        return;
    }
    const char *git = json_string_value(json_object_get(client, "gitVersion"));
    if (git) snprintf(k->version, sizeof k->version, "%s", git);
    /* gitVersion is what every build sets ("v1.32.4-dispatcher"); a vendor's
     * build may leave major and minor as "1" and "32+". */
    if (git && git[0] == 'v') {
        const char *dot = strchr(git, '.');
        k->major = leading_number(git + 1);
        k->minor = dot ? leading_number(dot + 1) : -1;
    }
    if (k->major < 0 || k->minor < 0) {
        k->major = leading_number(json_string_value(json_object_get(client, "major")));
        k->minor = leading_number(json_string_value(json_object_get(client, "minor")));
    }
    json_decref(root);
    if (k->major < 0 || k->minor < 0) {
        gp_error_set(err, NULL, 0, 0,
                     "'kubectl version --client -o json' printed no version gpuop can read");
        return;
    }
    if (!k->version[0]) snprintf(k->version, sizeof k->version, "v%d.%d", k->major, k->minor);
    judge(k);
}

void lab_kubectl_probe(lab_kubectl *k, gp_error *err)
{
    *k = (lab_kubectl){.state = LAB_KUBECTL_UNKNOWN, .major = -1, .minor = -1};
    char *argv[] = {"kubectl", "version", "--client", "-o", "json", NULL};
    char *out = NULL, *errout = NULL;
    size_t out_len = 0, err_len = 0;
    int status = 0;
    gp_spawn_result r =
        gp_spawn_capture(argv, KUBECTL_TIMEOUT_MS, &out, &out_len, &errout, &err_len, &status, err);
    if (r == GP_SPAWN_NOT_FOUND)
        k->state = LAB_KUBECTL_MISSING;
    else if (r == GP_SPAWN_OK && status != 0)
        gp_error_set(err, NULL, 0, 0, "'kubectl version --client -o json' exited %d", status);
    else if (r == GP_SPAWN_OK)
        lab_kubectl_parse(out, out_len, k, err);
    /* any other failure: err says it, and the version stays unknown */
    free(out);
    free(errout);
}
