/* The lab's shared REST moves (kube_ops.h). */
#include "lab/kube_ops.h"

#include <stdio.h>
#include <time.h>

void lab_sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

kc_result lab_kube_get_optional(kc_client *c, const char *path, json_t **out, gp_error *err)
{
    *out = NULL;
    gp_error ignored = {0};
    kc_result r = kc_get(c, path, out, &ignored);
    if (r == KC_NOT_FOUND) return KC_OK;
    if (r != KC_OK && err) *err = ignored;
    return r;
}

kc_result lab_kube_delete_and_wait(kc_client *c, const char *path, gp_error *err)
{
    kc_result r = kc_delete(c, path, "Background", err);
    if (r == KC_NOT_FOUND) return KC_OK;
    if (r != KC_OK) return r;
    for (int i = 0; i < 600; i++) {
        json_t *obj = NULL;
        r = lab_kube_get_optional(c, path, &obj, err);
        if (r != KC_OK) return r;
        if (!obj) return KC_OK;
        json_decref(obj);
        lab_sleep_ms(100);
    }
    gp_error_set(err, NULL, 0, 0, "%s is still there a minute after its deletion", path);
    return KC_API_ERROR;
}

int lab_kube_apply(kc_client *c, const char *collection, const char *path, const json_t *obj,
                   bool (*differs)(const json_t *live), gp_error *err)
{
    json_t *live = NULL;
    if (lab_kube_get_optional(c, path, &live, err) != KC_OK) return -1;
    if (live && differs && differs(live)) {
        json_decref(live);
        if (lab_kube_delete_and_wait(c, path, err) != KC_OK) return -1;
        live = NULL;
    }
    if (!live) {
        kc_result r = kc_create(c, collection, obj, NULL, err);
        return r == KC_OK || r == KC_CONFLICT ? 0 : -1;
    }
    json_decref(live);
    json_t *patch = json_deep_copy(obj);
    json_object_del(patch, "apiVersion");
    json_object_del(patch, "kind");
    kc_result r = kc_patch(c, path, KC_PATCH_STRATEGIC, patch, NULL, err);
    json_decref(patch);
    return r == KC_OK ? 0 : -1;
}

int lab_kube_wait(const char *what, int seconds, lab_poll_fn done, void *ctx,
                  lab_progress_fn progress, void *ud, gp_error *err)
{
    for (int tick = 0; tick < seconds * 5; tick++) {
        int r = done(ctx);
        if (r != 0) return r;
        if (tick % 5 == 0 && progress) progress(what, tick / 5, ud);
        lab_sleep_ms(200);
    }
    gp_error_set(err, NULL, 0, 0, "timed out after %d s: %s", seconds, what);
    return 0;
}
