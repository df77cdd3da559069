/* Whether a process still runs, found in /proc by its arguments: the tests
 * that check that nothing outlives a run start `sleep N` with a duration no
 * other process uses. Header-only, for the unit tests. */
#ifndef GPUOP_TESTS_PROCS_H
#define GPUOP_TESTS_PROCS_H

#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* A process whose arguments are `sleep ARG` (the program by any path). */
static inline bool test_sleep_running(const char *arg)
{
    char want[64];
    int wn = snprintf(want, sizeof want, "sleep%c%s", '\0', arg);
    DIR *d = opendir("/proc");
    if (!d) return false;
    struct dirent *de;
    bool found = false;
    while (!found && (de = readdir(d))) {
        if (de->d_name[0] < '0' || de->d_name[0] > '9') continue;
        char path[300], buf[256];
        snprintf(path, sizeof path, "/proc/%s/cmdline", de->d_name);
        int fd = open(path, O_RDONLY);
        if (fd < 0) continue;
        ssize_t n = read(fd, buf, sizeof buf);
        close(fd);
        for (ssize_t i = 0; !found && n >= wn && i + wn <= n; i++)
            found = memcmp(buf + i, want, (size_t)wn) == 0 && (i == 0 || buf[i - 1] == '/') &&
                    (i + wn == n || buf[i + wn] == '\0');
    }
    closedir(d);
    return found;
}

#endif
