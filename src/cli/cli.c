/* What every command shares: messages, errors, usage. Linked into gpuop and
 * its helper programs (gpuop-apiserver). */
#include <locale.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "util/msg.h"

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("gpuop: ", stderr);
    gp_msg_vfprintf(stderr, fmt, ap);
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
static bool names_plain_c(const char *v)
{
    return strcmp(v, "C") == 0 || strcmp(v, "POSIX") == 0 || strncmp(v, "C.", 2) == 0;
}

/* The language the user asked for, as gettext would read it if the locale
 * existed: LANGUAGE, else the first of LC_ALL, LC_MESSAGES, LANG. */
static const char *requested_language(void)
{
    static const char *const vars[] = {"LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v) return v;
    }
    return NULL;
}

/* A learner's machine often has no ko_KR or ja_JP locale (a container has
 * only C.UTF-8), and glibc then falls back to the C locale, where gettext
 * ignores every catalogue. The messages need no locale data but UTF-8
 * output, so in that case gpuop runs in C.UTF-8 and tells gettext the
 * language through LANGUAGE ("ko_KR.UTF-8" -> "ko_KR", which also finds
 * "ko"). An explicit C or POSIX request keeps English. */
static void choose_language_without_locale(void)
{
    const char *messages = setlocale(LC_MESSAGES, NULL);
    if (messages && !names_plain_c(messages)) return;
    const char *want = requested_language();
    if (!want || names_plain_c(want)) return;
    if (!setlocale(LC_ALL, "C.UTF-8")) return;
    char lang[64];
    snprintf(lang, sizeof lang, "%s", want);
    lang[strcspn(lang, ".@")] = '\0';
    const char *language = getenv("LANGUAGE");
    if (!language || !*language) setenv("LANGUAGE", lang, 1);
}

void cli_setup_messages(void)
{
    static bool done;
    if (done) return;
    done = true;
    setlocale(LC_ALL, "");
    choose_language_without_locale();
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
