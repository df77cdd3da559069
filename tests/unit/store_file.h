/* The store's file for a unit test: a fresh temporary one, SQL run on it
 * through a connection of the test's own (a trigger that refuses a row is
 * how the tests make a commit fail), and its removal with the WAL and
 * shared-memory files SQLite puts beside it. Include after <cmocka.h>. */
#ifndef GPUOP_TESTS_STORE_FILE_H
#define GPUOP_TESTS_STORE_FILE_H

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* path: a mkstemp template such as "/tmp/gpuop-store-XXXXXX". */
static inline void store_file_new(char *path)
{
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
}

static inline void store_file_sql(const char *path, const char *sql)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    char *msg = NULL;
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, &msg), SQLITE_OK);
    sqlite3_free(msg);
    sqlite3_close(db);
}

static inline void store_file_remove(const char *path)
{
    unlink(path);
    char side[256];
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
}

#endif
