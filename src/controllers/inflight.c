#include "controllers/inflight_internal.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/* key -> [based_rv, sending, landed_rv, failed, node, ip] */
enum { BASED, SENDING, LANDED, FAILED, NODE, IP };

struct ctl_inflight {
    pthread_mutex_t lock;
    json_t *entries;
};

static uint64_t at_u64(const json_t *e, size_t i)
{
    return (uint64_t)json_integer_value(json_array_get(e, i));
}

static void set_u64(json_t *e, size_t i, uint64_t v)
{
    json_array_set_new(e, i, json_integer((json_int_t)v));
}

ctl_inflight *ctl_inflight_new(void)
{
    ctl_inflight *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->entries = json_object();
    if (!t->entries) {
        free(t);
        return NULL;
    }
    pthread_mutex_init(&t->lock, NULL);
    return t;
}

void ctl_inflight_free(ctl_inflight *t)
{
    if (!t) return;
    json_decref(t->entries);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

void ctl_inflight_add(ctl_inflight *t, const char *key, uint64_t based_rv, const char *node,
                      const char *ip)
{
    pthread_mutex_lock(&t->lock);
    json_t *e = json_object_get(t->entries, key);
    if (!e) {
        e = json_pack("[I, i, i, b, n, n]", (json_int_t)based_rv, 0, 0, 0);
        if (e) json_object_set_new(t->entries, key, e);
    }
    if (e) {
        set_u64(e, SENDING, at_u64(e, SENDING) + 1);
        set_u64(e, LANDED, 0);
        if (node) json_array_set_new(e, NODE, json_string(node));
        if (node && ip) json_array_set_new(e, IP, json_string(ip));
    }
    pthread_mutex_unlock(&t->lock);
}

void ctl_inflight_done(ctl_inflight *t, const char *key, bool ok, uint64_t store_rv)
{
    pthread_mutex_lock(&t->lock);
    json_t *e = json_object_get(t->entries, key);
    if (e) {
        uint64_t sending = at_u64(e, SENDING);
        if (sending) set_u64(e, SENDING, --sending);
        if (!ok) json_array_set_new(e, FAILED, json_true());
        if (sending == 0) {
            if (json_is_true(json_array_get(e, FAILED)))
                json_object_del(t->entries, key); /* as it was: act on it again */
            else
                set_u64(e, LANDED, store_rv ? store_rv : 1);
        }
    }
    pthread_mutex_unlock(&t->lock);
}

bool ctl_inflight_pending(ctl_inflight *t, const char *key, uint64_t rv, uint64_t listed_rv)
{
    pthread_mutex_lock(&t->lock);
    json_t *e = json_object_get(t->entries, key);
    bool pending = false;
    if (e) {
        uint64_t landed = at_u64(e, LANDED);
        if (at_u64(e, SENDING) > 0)
            pending = true;
        else if (rv != at_u64(e, BASED) || (landed && listed_rv >= landed))
            json_object_del(t->entries, key); /* the listing shows the outcome */
        else
            pending = true;
    }
    pthread_mutex_unlock(&t->lock);
    return pending;
}

void ctl_inflight_sweep(ctl_inflight *t, uint64_t listed_rv)
{
    pthread_mutex_lock(&t->lock);
    const char *key;
    json_t *e, *tmp;
    json_object_foreach_safe(t->entries, tmp, key, e)
    {
        uint64_t landed = at_u64(e, LANDED);
        if (at_u64(e, SENDING) == 0 && landed && landed <= listed_rv)
            json_object_del(t->entries, key);
    }
    pthread_mutex_unlock(&t->lock);
}

bool ctl_inflight_node(ctl_inflight *t, const char *key, char *buf, size_t size)
{
    pthread_mutex_lock(&t->lock);
    const char *node = json_string_value(json_array_get(json_object_get(t->entries, key), NODE));
    if (node) snprintf(buf, size, "%s", node);
    pthread_mutex_unlock(&t->lock);
    return node != NULL;
}

void ctl_inflight_addresses(ctl_inflight *t, void (*fn)(void *ud, const char *node, const char *ip),
                            void *ud)
{
    pthread_mutex_lock(&t->lock);
    const char *key;
    json_t *e;
    json_object_foreach(t->entries, key, e)
    {
        const char *node = json_string_value(json_array_get(e, NODE));
        const char *ip = json_string_value(json_array_get(e, IP));
        if (node && ip) fn(ud, node, ip);
    }
    pthread_mutex_unlock(&t->lock);
}
