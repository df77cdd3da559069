/* What a node's journal shows of its containerd (daemon.h). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "agents/agents_internal.h"
#include "agents/daemon.h"

/* logrus' time: RFC 3339 with nanoseconds, UTC. */
static void put_time(gp_buf *out, double now)
{
    time_t secs = (time_t)now;
    long nanos = (long)((now - (double)secs) * 1e9);
    if (nanos < 0) nanos = 0;
    if (nanos > 999999999) nanos = 999999999;
    struct tm tm;
    gmtime_r(&secs, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
    gp_buf_addf(out, "time=\"%s.%09ldZ\" ", stamp, nanos);
}

/* logrus quotes a value as Go's %q would for plain text: backslash and
 * double quote escaped. */
static void put_quoted(gp_buf *out, const char *s)
{
    gp_buf_addc(out, '"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') gp_buf_addc(out, '\\');
        if (*s == '\n')
            gp_buf_add(out, "\\n");
        else
            gp_buf_addc(out, *s);
    }
    gp_buf_addc(out, '"');
}

static void plugin_failed(gp_buf *out, double now, const char *plugin, const char *prefix,
                          const char *error)
{
    put_time(out, now);
    gp_buf_addf(out, "level=warning msg=\"failed to load plugin %s\" error=", plugin);
    char text[1400];
    snprintf(text, sizeof text, "%s%s", prefix, error);
    put_quoted(out, text);
    gp_buf_addc(out, '\n');
}

void ag_journal_started(const ag_daemon *d, double now, bool restarted, gp_buf *out)
{
    if (restarted)
        gp_buf_addf(out, "containerd.service: Scheduled restart job, restart counter is at %u.\n",
                    d->starts - 1);
    const ag_loaded *l = d->phase == AG_DAEMON_RUNNING ? d->loaded : NULL;
    if (!l) {
        /* cmd/containerd/main.go prints the error and exits 1. */
        gp_buf_addf(out, "containerd: %s\ncontainerd.service: %s\n", d->last_error, d->last_exit);
        return;
    }
    put_time(out, now);
    gp_buf_addf(out, "level=info msg=\"starting containerd\" version=%s\n", l->version);
    if (l->cri == AG_CRI_FAILED) {
        size_t i;
        json_t *v;
        json_array_foreach(json_object_get(ag_line_data(l->family), "cri_plugins"), i, v)
            plugin_failed(out, now, json_string_value(v), i ? AG_CRI_DEPENDENCY_PREFIX : "",
                          l->cri_error);
    }
    put_time(out, now);
    gp_buf_add(out, "level=info msg=\"containerd successfully booted in 0.050000s\"\n");
}

void ag_journal_exited(const ag_daemon *d, gp_buf *out)
{
    gp_buf_addf(out, "containerd.service: %s\n", d->last_exit);
}
