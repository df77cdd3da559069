#include "util/random.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int gp_random_hex(char *out, size_t nbytes, gp_error *err)
{
    FILE *f = fopen("/dev/urandom", "rb");
    if (!f) {
        gp_error_set(err, "/dev/urandom", 0, 0, "cannot open: %s", strerror(errno));
        return -1;
    }
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < nbytes; i++) {
        int c = fgetc(f);
        if (c == EOF) {
            fclose(f);
            gp_error_set(err, "/dev/urandom", 0, 0, "cannot read");
            return -1;
        }
        out[2 * i] = hex[(unsigned)c >> 4];
        out[2 * i + 1] = hex[(unsigned)c & 15];
    }
    out[2 * nbytes] = '\0';
    fclose(f);
    return 0;
}
