/* gpuop's helper programs (like git's git-* helpers): gpuop-kube runs the
 * commands that talk to a cluster, gpuop-apiserver serves one. Each keeps
 * its shared libraries out of the commands that do not need them. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

/* Where an installed helper lives, seen from the installed gpuop's folder
 * ("../libexec/gpuop"), so that an install moved or made with
 * `cmake --install --prefix` elsewhere still finds its helpers. */
#ifndef GPUOP_LIBEXECDIR_FROM_BINDIR
#define GPUOP_LIBEXECDIR_FROM_BINDIR "../libexec/gpuop"
#endif

/* DIR[/SUB]/NAME into out; true when it is an executable file. */
static bool found(char *out, size_t size, const char *dir, const char *sub, const char *name)
{
    int n = snprintf(out, size, "%s%s%s/%s", dir, *sub ? "/" : "", sub, name);
    return n > 0 && (size_t)n < size && access(out, X_OK) == 0;
}

void cli_helper_path(const char *name, char *out, size_t size)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) *slash = '\0';
        /* Beside this binary: the build tree, or the helpers' own folder. */
        if (found(out, size, self, "", name)) return;
        if (found(out, size, self, GPUOP_LIBEXECDIR_FROM_BINDIR, name)) return;
    }
    snprintf(out, size, "%s/%s", GPUOP_LIBEXECDIR, name);
}

int cli_exec_helper(const char *name, char **argv)
{
    char helper[PATH_MAX + 64];
    cli_helper_path(name, helper, sizeof helper);
    argv[0] = helper;
    execv(helper, argv);
    int e = errno;
    cli_setup_messages(); /* gpuop's main execs its helper before it sets them up */
    cli_error(_("cannot run %s: %s"), helper, strerror(e));
    return EXIT_CANNOT_TELL;
}
