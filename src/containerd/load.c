/* Loading a config set as containerd does: the main file, then its imports
 * breadth-first, each file once, globs in byte order. */
#include <errno.h>
#include <glob.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "containerd/containerd_internal.h"
#include "util/file.h"
#include "util/i18n.h"

char *cd_strdup(gp_arena *a, const char *s)
{
    return gp_arena_strndup(a, s, strlen(s));
}

char *cd_printf(gp_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return NULL;
    char *s = gp_arena_alloc(a, (size_t)n + 1);
    if (!s) return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

void cd_note_add(gp_arena *a, cd_notes *notes, const char *file, uint32_t line, uint32_t col,
                 const char *key, const char *code, const char *fmt, ...)
{
    if (notes->count == notes->cap) {
        size_t cap = notes->cap ? notes->cap * 2 : 8;
        cd_note *items =
            gp_arena_grow(a, notes->items, notes->cap * sizeof *items, cap * sizeof *items);
        if (!items) return;
        notes->items = items;
        notes->cap = cap;
    }
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, _(fmt), ap);
    va_end(ap);
    notes->items[notes->count++] =
        (cd_note){file, line, col, key ? cd_strdup(a, key) : NULL, code, cd_strdup(a, text)};
}

/* ---- paths ---- */

static bool is_glob(const char *pattern)
{
    return strchr(pattern, '*') != NULL;
}

/* The directory part of a path, "." when there is none. */
static char *dir_of(gp_arena *a, const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return cd_strdup(a, ".");
    if (slash == path) return cd_strdup(a, "/");
    return gp_arena_strndup(a, path, (size_t)(slash - path));
}

/* Absolute paths are read under --root, so a node's files copied into a
 * folder analyse as they would on the node. */
static const char *under_root(gp_arena *a, const char *root, const char *path)
{
    if (!root || !*root || path[0] != '/') return path;
    /* A path given as the copy's own (ROOT/etc/...) is already there. */
    size_t n = strlen(root);
    if (strncmp(path, root, n) == 0 && path[n] == '/') return path;
    return cd_printf(a, "%s%s", root, path);
}

/* Go's filepath.Clean, which filepath.Join applies: "." parts and double
 * slashes go, ".." removes the part before it. Paths are then compared as
 * strings, so "conf.d/../more.toml" and "more.toml" are one file. */
static char *clean_path(gp_arena *a, const char *path)
{
    size_t len = strlen(path);
    char *out = gp_arena_alloc(a, len + 2);
    if (!out) return NULL;
    bool rooted = path[0] == '/';
    size_t n = 0, floor = 0; /* out[0..floor) is "/" or leading "../" parts */
    if (rooted) out[n++] = '/', floor = 1;
    for (const char *p = path; *p;) {
        while (*p == '/')
            p++;
        const char *end = strchr(p, '/');
        size_t part = end ? (size_t)(end - p) : strlen(p);
        if (part == 0) break;
        if (part == 1 && p[0] == '.') {
            /* skip */
        } else if (part == 2 && p[0] == '.' && p[1] == '.') {
            if (n > floor) {
                while (n > floor && out[n - 1] != '/')
                    n--;
                if (n > floor) n--; /* the slash before it */
            } else if (!rooted) {
                if (n) out[n++] = '/';
                out[n++] = '.';
                out[n++] = '.';
                floor = n;
            }
        } else {
            if (n && out[n - 1] != '/') out[n++] = '/';
            memcpy(out + n, p, part);
            n += part;
        }
        p += part;
    }
    if (n == 0) out[n++] = '.';
    out[n] = '\0';
    return out;
}

/* How this version resolves one import string written in `declaring`. */
static const char *resolve(gp_arena *a, cd_family f, const char *declaring, const char *import)
{
    /* 1.6 globs a relative pattern as written: against the working
     * directory, not the declaring file (measured: case e). */
    if (f == CD_V1_6 && is_glob(import) && import[0] != '/') return import;
    if (import[0] == '/') return clean_path(a, import);
    /* An empty import names the declaring file's directory (an error). */
    return clean_path(a, cd_printf(a, "%s/%s", dir_of(a, declaring), import));
}

/* ---- the walk ---- */

typedef struct queue {
    const char **paths;
    const char **by;
    size_t head, count, cap;
} queue;

static int push(gp_arena *a, queue *q, const char *path, const char *by)
{
    if (q->count == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 16;
        const char **paths =
            gp_arena_grow(a, q->paths, q->cap * sizeof *paths, cap * sizeof *paths);
        const char **bys = gp_arena_grow(a, q->by, q->cap * sizeof *bys, cap * sizeof *bys);
        if (!paths || !bys) return -1;
        q->paths = paths;
        q->by = bys;
        q->cap = cap;
    }
    q->paths[q->count] = path;
    q->by[q->count++] = by;
    return 0;
}

static bool already_loaded(const cd_prediction *p, const char *path)
{
    for (size_t i = 0; i < p->nfiles; i++)
        if (strcmp(p->files[i].path, path) == 0) return true;
    return false;
}

static int byte_order(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* The NVIDIA toolkit 1.18.0 wrote its drop-in to config.d/, every other
 * version to conf.d/: an import of one next to files in the other loads
 * nothing. */
static void lint_config_d(cd_prediction *p, const cd_options *opt, const char *pattern,
                          const cd_file *declaring, const toml_entry *imports_entry)
{
    const char *from = strstr(pattern, "/conf.d/") ? "/conf.d/" : "/config.d/";
    const char *to = from[3] == 'n' ? "/config.d/" : "/conf.d/";
    const char *at = strstr(pattern, from);
    if (!at) return;
    char *other =
        cd_printf(p->arena, "%.*s%s%s", (int)(at - pattern), pattern, to, at + strlen(from));
    glob_t g;
    if (glob(under_root(p->arena, opt->root, other), 0, NULL, &g) != 0) return;
    if (g.gl_pathc > 0)
        cd_note_add(p->arena, &p->lints, declaring->path, imports_entry->line, imports_entry->col,
                    "imports", "config-d-vs-conf-d",
                    "import %s matches nothing, but %s matches %zu file(s): the NVIDIA toolkit "
                    "1.18.0 wrote its drop-in to config.d/, later versions to conf.d/",
                    pattern, other, (size_t)g.gl_pathc);
    globfree(&g);
}

/* Glob matches in Go's filepath.Glob order (bytewise), as containerd names
 * them (without the --root prefix). */
static int glob_imports(cd_prediction *p, const cd_options *opt, queue *q, const char *pattern,
                        const cd_file *declaring, const toml_entry *imports_entry)
{
    const char *search = under_root(p->arena, opt->root, pattern);
    glob_t g;
    int rc = glob(search, GLOB_NOSORT, NULL, &g);
    if (rc == GLOB_NOMATCH || (rc == 0 && g.gl_pathc == 0)) {
        if (rc == 0) globfree(&g);
        cd_note_add(p->arena, &p->lints, declaring->path, imports_entry->line, imports_entry->col,
                    "imports", "glob-matches-nothing",
                    "import %s matches no file: nothing from it is loaded", pattern);
        lint_config_d(p, opt, pattern, declaring, imports_entry);
        return 0;
    }
    if (rc != 0) return 0;
    qsort(g.gl_pathv, g.gl_pathc, sizeof *g.gl_pathv, byte_order);
    size_t cut = strlen(search) - strlen(pattern);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        /* Go's Glob returns matches joined, hence cleaned. */
        const char *name = clean_path(p->arena, g.gl_pathv[i] + (pattern[0] == '/' ? cut : 0));
        if (!name || push(p->arena, q, name, declaring->path) != 0) break;
    }
    globfree(&g);
    return 0;
}

static void queue_imports(cd_prediction *p, const cd_options *opt, queue *q, const cd_file *f)
{
    const toml_entry *e = toml_table_find(toml_root(f->doc), "imports", 7);
    if (!e || e->value.type != TOML_ARRAY) return;
    const toml_array *arr = e->value.u.array;
    for (size_t i = 0; i < toml_array_size(arr); i++) {
        const toml_value *v = toml_array_at(arr, i);
        if (v->type != TOML_STRING) continue;
        const char *resolved = resolve(p->arena, p->family, f->path, v->u.s);
        if (is_glob(resolved))
            glob_imports(p, opt, q, resolved, f, e);
        else
            push(p->arena, q, resolved, f->path);
    }
}

static int64_t file_version(const toml_doc *doc)
{
    const toml_value *v = toml_table_get(toml_root(doc), "version");
    return v && v->type == TOML_INTEGER ? v->u.i : 0;
}

static bool file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static bool is_directory(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The message containerd gives for a file it cannot parse. */
static const char *parse_error_text(cd_prediction *p, const char *path, const gp_error *err)
{
    /* err->text is "FILE:LINE:COL: message"; keep the message. */
    const char *msg = err->text;
    for (int colons = 0; *msg && colons < 3; msg++)
        if (*msg == ':') colons++;
    while (*msg == ' ')
        msg++;
    if (cd_is_v1(p->family))
        return cd_printf(p->arena, "failed to load TOML: %s: (%u, %u): %s", path, err->line,
                         err->col, msg);
    return cd_printf(p->arena, "failed to unmarshal TOML at row %u column %u: toml: %s (%s)",
                     err->line, err->col, msg, path);
}

static int add_file(cd_prediction *p, const char *path, const char *read_path, const char *by,
                    toml_doc *doc)
{
    if (p->nfiles % 16 == 0) {
        cd_file *files = gp_arena_grow(p->arena, p->files, p->nfiles * sizeof *files,
                                       (p->nfiles + 16) * sizeof *files);
        if (!files) return -1;
        p->files = files;
    }
    cd_node *tree = cd_from_toml(p->arena, toml_root(doc), "", 0, path);
    if (!tree) return -1;
    p->files[p->nfiles++] = (cd_file){path, read_path, by, doc, tree, file_version(doc), NULL, 0};
    return 0;
}

int cd_load(cd_prediction *p, const cd_options *opt, gp_error *err)
{
    queue q = {0};
    const char *main_path = opt->config_path ? opt->config_path : "/etc/containerd/config.toml";
    if (push(p->arena, &q, cd_strdup(p->arena, main_path), NULL) != 0) {
        gp_error_set(err, main_path, 0, 0, "out of memory");
        return -1;
    }
    /* A bound on pathological sets (every distinct path is loaded once). */
    for (; q.head < q.count && p->nfiles < 10000; q.head++) {
        const char *path = q.paths[q.head];
        if (already_loaded(p, path)) continue;
        const char *read_path = under_root(p->arena, opt->root, path);
        bool is_main = q.head == 0;
        if (!file_exists(read_path)) {
            if (is_main) {
                gp_error_set(err, read_path, 0, 0, "cannot open: %s", strerror(errno));
                return -1;
            }
            /* 1.x refuse; 2.x stop loading there: `config dump` shows what
             * was merged so far, the daemon exits (case o). */
            p->error =
                cd_is_v1(p->family)
                    ? cd_printf(p->arena,
                                "failed to load TOML: %s: open %s: no such file or directory", path,
                                path)
                    : cd_printf(p->arena, "open %s: no such file or directory", path);
            cd_note_add(p->arena, &p->lints, q.by[q.head], 0, 0, "imports", "missing-import",
                        cd_is_v1(p->family)
                            ? N_("import %s does not exist: containerd refuses to start")
                            : N_("import %s does not exist: containerd refuses to start, and "
                                 "`config dump` silently stops loading there"),
                        path);
            return 0;
        }
        if (!is_main && is_directory(read_path)) {
            p->error = cd_is_v1(p->family)
                           ? cd_printf(p->arena, "failed to load TOML: %s: read %s: is a directory",
                                       path, path)
                           : cd_printf(p->arena, "read %s: is a directory", path);
            cd_note_add(p->arena, &p->lints, q.by[q.head], 0, 0, "imports", "import-is-directory",
                        "import %s is a directory, not a file: containerd refuses to start", path);
            return 0;
        }
        gp_error perr = {0};
        toml_doc *doc = toml_parse_file(read_path, &perr);
        if (!doc) {
            if (is_main && !perr.line) {
                *err = perr;
                return -1;
            }
            p->error = parse_error_text(p, path, &perr);
            cd_note_add(p->arena, &p->lints, path, perr.line, perr.col, NULL, "syntax-error", "%s",
                        perr.text);
            return 0;
        }
        if (add_file(p, path, read_path, q.by[q.head], doc) != 0) {
            toml_free(doc);
            gp_error_set(err, path, 0, 0, "out of memory");
            return -1;
        }
        queue_imports(p, opt, &q, &p->files[p->nfiles - 1]);
    }
    return 0;
}
