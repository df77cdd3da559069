/* What every command shares: messages, errors, usage. Linked into gpuop and
 * its helper programs (gpuop-apiserver). */
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("gpuop: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void cli_report(const gp_error *err)
{
    fprintf(stderr, "%s\n", err->text);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    cli_error(_("%s; see 'gpuop %s --help'"), what, cmd);
    return EXIT_CANNOT_TELL;
}

int cli_is_help(const char *arg)
{
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

/* Catalogues: $GPUOP_LOCALEDIR, else build/locale next to an uninstalled
 * binary, else the installed ones. */
void cli_setup_messages(void)
{
    setlocale(LC_ALL, "");
    /* Numbers in output are read by programs: always a '.' decimal point. */
    setlocale(LC_NUMERIC, "C");
    const char *dir = getenv("GPUOP_LOCALEDIR");
    static char beside[4096];
    if (!dir) {
        ssize_t n = readlink("/proc/self/exe", beside, sizeof beside - 16);
        if (n > 0) {
            beside[n] = '\0';
            char *slash = strrchr(beside, '/');
            struct stat st;
            if (slash) {
                strcpy(slash + 1, "locale");
                if (stat(beside, &st) == 0 && S_ISDIR(st.st_mode)) dir = beside;
            }
        }
    }
    bindtextdomain("gpuop", dir ? dir : GPUOP_LOCALEDIR);
    bind_textdomain_codeset("gpuop", "UTF-8");
    textdomain("gpuop");
}
