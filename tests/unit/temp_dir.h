/* A unit test's temporary directory taken away with all it holds, links
 * not followed (a test's workspace may hold a symlink out of it on
 * purpose). Include after a definition of _XOPEN_SOURCE 700 (nftw is
 * XSI). */
#ifndef GPUOP_TESTS_TEMP_DIR_H
#define GPUOP_TESTS_TEMP_DIR_H

#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>

static inline int temp_dir_remove_entry(const char *path, const struct stat *st, int flag,
                                        struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* Removes `dir` and everything below it; what cannot go stays. */
static inline void temp_dir_remove(const char *dir)
{
    nftw(dir, temp_dir_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
