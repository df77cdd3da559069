/* Predicting what containerd loads from a main config plus its drop-ins.
 *
 * Each containerd line merges `imports` differently (measured on the real
 * binaries: ../shared/design/containerd-merge.md). cd_predict() loads a config
 * set the way the chosen version does, merges it by that version's rules,
 * decodes it over the built-in defaults that matter, and says what the result
 * is, where every value came from, what was lost and why, and whether
 * containerd would refuse it. No I/O beyond reading the files. */
#ifndef GPUOP_CONTAINERD_CONTAINERD_H
#define GPUOP_CONTAINERD_CONTAINERD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "toml/toml.h"
#include "util/arena.h"
#include "util/error.h"

/* The effective configuration tree (cfg_internal.h); callers read it
 * through render.h. */
typedef struct cd_node cd_node;

typedef enum cd_family {
    CD_V1_6 = 16,
    CD_V1_7 = 17,
    CD_V2_0 = 20,
    CD_V2_1 = 21, /* 2.2 merges as 2.1 does */
} cd_family;

/* "1.6", "1.6.20", "v2.0.11", "2.2": the rules to apply; -1 if unknown. */
int cd_family_parse(const char *text, cd_family *out);
const char *cd_family_name(cd_family f);
static inline bool cd_is_v1(cd_family f)
{
    return f < CD_V2_0;
}

/* A finding about the config set, tied to where it was written. */
typedef struct cd_note {
    const char *file; /* NULL when it is not about one file */
    uint32_t line, col;
    const char *key;  /* the key in TOML syntax, or NULL */
    const char *code; /* a stable identifier, e.g. "section-replaced" */
    const char *text;
} cd_note;

typedef struct cd_notes {
    cd_note *items;
    size_t count, cap;
} cd_notes;

typedef struct cd_file {
    const char *path;      /* as containerd names it */
    const char *read_path; /* where it was read (under --root for absolute paths) */
    const char *imported_by;
    toml_doc *doc;
    cd_node *tree;         /* the file as written, with its origins; never modified */
    int64_t version;       /* 0 when the file has no `version` */
    const char **runtimes; /* CRI runtime handlers the file defines, sorted */
    size_t nruntimes;
} cd_file;

typedef struct cd_options {
    const char *config_path; /* default /etc/containerd/config.toml */
    const char *root;        /* read absolute paths under this directory; NULL: / */
    cd_family family;
} cd_options;

typedef struct cd_prediction {
    gp_arena *arena;
    cd_family family;
    cd_file *files; /* in load order; files[0] is the main config */
    size_t nfiles;
    /* containerd's own message when this version would refuse to start on the
     * config set (a syntax error, a missing import, a version it rejects...);
     * NULL when it starts. */
    const char *error;
    int64_t version; /* the merged config version */
    cd_node *config; /* the effective config, with containerd's table names */
    const char
        *cri_plugin; /* where CRI runtimes live in `config`, e.g. io.containerd.cri.v1.runtime */
    const char **runtimes;
    size_t nruntimes;
    const cd_node *default_runtime_name; /* a leaf in `config` */
    const char *cri_error;               /* "invalid plugin config: ..." or NULL */
    size_t declared_not_loaded;          /* runtime tables written that do not load */
    const char *default_written;         /* the default_runtime_name the files name last */
    bool default_lost;                   /* ... is not the one that loads */
    bool imports_ignored;                /* an `imports` inside a table: its files not read */
    cd_notes lost;                       /* keys written in a file but absent from the result */
    cd_notes lints;
    /* Lab step 3: do two files define content in the same table? */
    bool conflict;
    const char *conflict_table; /* the deepest such table, TOML syntax */
    const char *conflict_files[2];
    const char *conflict_winner;
    const char *winner_reason;
    /* Documents parsed for built-in defaults and made-up values. */
    toml_doc **owned;
    size_t nowned, capowned;
} cd_prediction;

/* Returns NULL (and err) only when the main config cannot be read: then
 * nothing can be told. Every other problem is part of the prediction. */
cd_prediction *cd_predict(const cd_options *opt, gp_error *err);
/* The config set loads as written: containerd starts, its CRI plugin
 * accepts the config, every runtime a file declares loads, the default
 * runtime is the one the files name last, and no `imports` is lost inside
 * a table. `containerd merge` exits 1 otherwise. */
bool cd_prediction_holds(const cd_prediction *p);
void cd_prediction_free(cd_prediction *p);

/* The effective config (p->config) as one JSON object: tables as objects in
 * definition order, TOML values as plain JSON (what `merge -o json` prints
 * as predicted.config). Writes `{}` when nothing was loaded. Returns 0, or
 * -1 when the stream fails. For readers outside this module, which see the
 * tree only through it (the simulated daemon of src/agents/ takes its
 * loaded config from here). */
int cd_prediction_write_config(const cd_prediction *p, FILE *out);

#endif
