#include "util/random.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

/* getrandom(2): one system call from the kernel's pool, no file to open.
 * Every object's uid comes from here, thousands a second under load. */
static int random_bytes(unsigned char *buf, size_t n, gp_error *err)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = getrandom(buf + got, n - got, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            gp_error_set(err, NULL, 0, 0, "getrandom: %s", strerror(errno));
            return -1;
        }
        got += (size_t)r;
    }
    return 0;
}

int gp_random_hex(char *out, size_t nbytes, gp_error *err)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char buf[64];
    size_t done = 0;
    while (done < nbytes) {
        size_t n = nbytes - done < sizeof buf ? nbytes - done : sizeof buf;
        if (random_bytes(buf, n, err) != 0) return -1;
        for (size_t i = 0; i < n; i++) {
            out[2 * (done + i)] = hex[buf[i] >> 4];
            out[2 * (done + i) + 1] = hex[buf[i] & 15];
        }
        done += n;
    }
    out[2 * nbytes] = '\0';
    return 0;
}
