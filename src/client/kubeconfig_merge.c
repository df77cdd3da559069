/* Merging gpuop's entries into a user's kubeconfig with libyaml.
 *
 * libyaml's document model has no way to remove a node, so an edit builds a
 * new document: the old root's pairs are copied one by one, the three lists
 * are rebuilt without gpuop's entries (with the new ones put where the old
 * ones stood), and current-context is rewritten. Copying node by node keeps
 * every scalar's style and tag and every list's and map's flow or block
 * style, so entries gpuop does not own come out as the user wrote them. */
/* realpath() is XSI. */
#define _XOPEN_SOURCE 700
#include "client/kubeconfig_merge.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <yaml.h>

#include "util/buf.h"
#include "util/file.h"

#define N_SECTIONS 3
static const char *const SECTIONS[N_SECTIONS] = {"clusters", "users", "contexts"};

/* libyaml's emitter recurses once per level; a kubeconfig is five deep. */
#define MAX_DEPTH 256

/* kubectl gives up at once when its lock file exists; waiting a little
 * lets a concurrent `kubectl config` finish instead of failing `up`. */
#define LOCK_WAIT_MS 2000

void kc_merge_result_free(kc_merge_result *r)
{
    if (!r) return;
    free(r->previous_context);
    free(r->backup);
    r->previous_context = r->backup = NULL;
}

char *kc_kubeconfig_user_path(const char *explicit_path, gp_error *err)
{
    if (explicit_path) return strdup(explicit_path);
    const char *list = getenv("KUBECONFIG");
    /* kubectl skips empty entries of the list, so "::a" names a. */
    for (const char *p = list; p && *p; p++) {
        if (*p == ':') continue;
        size_t n = strcspn(p, ":");
        return strndup(p, n);
    }
    const char *home = getenv("HOME");
    if (!home || !*home) {
        gp_error_set(err, NULL, 0, 0, "cannot name the user's kubeconfig: $HOME is not set");
        return NULL;
    }
    size_t n = strlen(home) + sizeof "/.kube/config";
    char *path = malloc(n);
    if (path) snprintf(path, n, "%s/.kube/config", home);
    return path;
}

/* ---- the edit ------------------------------------------------------------ */

typedef struct edit {
    const char *path; /* as the caller named it, for messages */
    const char *name;
    bool merging;
    const json_t *entries[N_SECTIONS]; /* merging: the entries that go in */
    const char *owner_token;           /* unmerge: remove only entries with this token */
    const char *restore_context;       /* unmerge */
    /* Decided from the old file before the rebuild: */
    bool rewrite_current;
    const char *new_current; /* NULL: the current-context key goes */
} edit;

/* ---- reading the old document -------------------------------------------- */

static bool scalar_is(const yaml_node_t *n, const char *s)
{
    size_t len = strlen(s);
    return n && n->type == YAML_SCALAR_NODE && n->data.scalar.length == len &&
           memcmp(n->data.scalar.value, s, len) == 0;
}

/* The value of `key` in a mapping, or NULL. */
static yaml_node_t *map_get(yaml_document_t *d, const yaml_node_t *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE) return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++)
        if (scalar_is(yaml_document_get_node(d, p->key), key))
            return yaml_document_get_node(d, p->value);
    return NULL;
}

/* `clusters: null`, `clusters:` and `clusters: ~` are all an empty list to
 * kubectl, which itself writes `null` for one. */
static bool is_null(const yaml_node_t *n)
{
    if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return false;
    return scalar_is(n, "") || scalar_is(n, "~") || scalar_is(n, "null") || scalar_is(n, "Null") ||
           scalar_is(n, "NULL");
}

static bool entry_named(yaml_document_t *d, const yaml_node_t *entry, const char *name)
{
    return scalar_is(map_get(d, entry, "name"), name);
}

/* The entry `name` of one of the three lists, or NULL. */
static yaml_node_t *find_entry(yaml_document_t *d, const char *section, const char *name)
{
    yaml_node_t *root = yaml_document_get_root_node(d);
    yaml_node_t *list = map_get(d, root, section);
    if (!list || list->type != YAML_SEQUENCE_NODE) return NULL;
    for (yaml_node_item_t *i = list->data.sequence.items.start; i < list->data.sequence.items.top;
         i++) {
        yaml_node_t *entry = yaml_document_get_node(d, *i);
        if (entry_named(d, entry, name)) return entry;
    }
    return NULL;
}

static char *scalar_dup(const yaml_node_t *n)
{
    if (!n || n->type != YAML_SCALAR_NODE) return NULL;
    return strndup((const char *)n->data.scalar.value, n->data.scalar.length);
}

/* ---- building the new document ------------------------------------------- */

typedef struct builder {
    yaml_document_t *from;
    yaml_document_t *to;
    int *copied; /* a node of `from` -> its copy in `to`; 0 until copied */
    const edit *e;
    gp_error *err;
} builder;

static int out_of_memory(builder *b)
{
    gp_error_set(b->err, b->e->path, 0, 0, "out of memory");
    return 0;
}

/* Copies node `index` of the old document and everything under it. A node
 * reached twice (an alias) is copied once, so the emitter writes the alias
 * again, and a cycle ends. Returns the copy's id, 0 with b->err set. */
static int copy_node(builder *b, int index, int depth)
{
    if (b->copied[index]) return b->copied[index];
    yaml_node_t *n = yaml_document_get_node(b->from, index);
    if (depth > MAX_DEPTH) {
        gp_error_set(b->err, b->e->path, (unsigned)n->start_mark.line + 1,
                     (unsigned)n->start_mark.column + 1, "nested more than %d levels deep",
                     MAX_DEPTH);
        return 0;
    }
    int id = 0;
    if (n->type == YAML_SCALAR_NODE) {
        if (n->data.scalar.length > INT_MAX) return out_of_memory(b);
        id = yaml_document_add_scalar(b->to, n->tag, n->data.scalar.value,
                                      (int)n->data.scalar.length, n->data.scalar.style);
        return b->copied[index] = id ? id : out_of_memory(b);
    }
    if (n->type == YAML_SEQUENCE_NODE) {
        id = yaml_document_add_sequence(b->to, n->tag, n->data.sequence.style);
        if (!id) return out_of_memory(b);
        b->copied[index] = id;
        for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top;
             i++) {
            int item = copy_node(b, *i, depth + 1);
            if (!item) return 0;
            if (!yaml_document_append_sequence_item(b->to, id, item)) return out_of_memory(b);
        }
        return id;
    }
    id = yaml_document_add_mapping(b->to, n->tag, n->data.mapping.style);
    if (!id) return out_of_memory(b);
    b->copied[index] = id;
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        int key = copy_node(b, p->key, depth + 1);
        int value = key ? copy_node(b, p->value, depth + 1) : 0;
        if (!value) return 0;
        if (!yaml_document_append_mapping_pair(b->to, id, key, value)) return out_of_memory(b);
    }
    return id;
}

/* YAML 1.1 reads these plain words as booleans or null (kubectl's YAML
 * library is 1.1), so a string spelled so must be quoted. */
static bool reserved_word(const char *s)
{
    static const char *const words[] = {"y",     "yes", "n",   "no",  "true",
                                        "false", "on",  "off", "null"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcasecmp(s, words[i]) == 0) return true;
    return false;
}

/* Plain when it can only read back as this string: starts with a letter
 * (no number, date or indicator starts so), and has no character YAML could
 * read otherwise. The URL, names and base64 data kubectl also writes plain. */
static yaml_scalar_style_t string_style(const char *s)
{
    static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                               "0123456789._/:+=-";
    bool letter = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z');
    if (!letter || s[strspn(s, safe)] != '\0' || reserved_word(s))
        return YAML_DOUBLE_QUOTED_SCALAR_STYLE;
    return YAML_PLAIN_SCALAR_STYLE;
}

static int add_string(builder *b, const char *s)
{
    if (strlen(s) > INT_MAX) return out_of_memory(b);
    int id = yaml_document_add_scalar(b->to, (yaml_char_t *)YAML_STR_TAG, (const yaml_char_t *)s,
                                      (int)strlen(s), string_style(s));
    return id ? id : out_of_memory(b);
}

static int add_plain(builder *b, const char *s)
{
    int id = yaml_document_add_scalar(b->to, (yaml_char_t *)YAML_STR_TAG, (const yaml_char_t *)s,
                                      (int)strlen(s), YAML_PLAIN_SCALAR_STYLE);
    return id ? id : out_of_memory(b);
}

static int add_pair(builder *b, int map, int key, int value)
{
    if (!key || !value) return -1;
    if (yaml_document_append_mapping_pair(b->to, map, key, value)) return 0;
    out_of_memory(b);
    return -1;
}

/* A JSON value of the server's kubeconfig as block YAML. */
static int json_node(builder *b, const json_t *v)
{
    char number[64];
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        int map =
            yaml_document_add_mapping(b->to, (yaml_char_t *)YAML_MAP_TAG, YAML_BLOCK_MAPPING_STYLE);
        if (!map) return out_of_memory(b);
        const char *key;
        json_t *member;
        json_object_foreach((json_t *)v, key, member)
        {
            if (add_pair(b, map, add_string(b, key), json_node(b, member)) != 0) return 0;
        }
        return map;
    }
    case JSON_ARRAY: {
        int seq = yaml_document_add_sequence(b->to, (yaml_char_t *)YAML_SEQ_TAG,
                                             YAML_BLOCK_SEQUENCE_STYLE);
        if (!seq) return out_of_memory(b);
        size_t i;
        json_t *item;
        json_array_foreach(v, i, item)
        {
            int id = json_node(b, item);
            if (!id) return 0;
            if (!yaml_document_append_sequence_item(b->to, seq, id)) return out_of_memory(b);
        }
        return seq;
    }
    case JSON_STRING:
        return add_string(b, json_string_value(v));
    case JSON_INTEGER:
        snprintf(number, sizeof number, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return add_plain(b, number);
    case JSON_REAL:
        snprintf(number, sizeof number, "%.17g", json_real_value(v));
        return add_plain(b, number);
    case JSON_TRUE:
        return add_plain(b, "true");
    case JSON_FALSE:
        return add_plain(b, "false");
    default:
        return add_plain(b, "null");
    }
}

/* One of the three lists without the entries named e->name, and with the
 * new entry (when merging) where the first of them stood, else at the end.
 * `old` is the list's old value, or NULL when the key was absent. */
static int rebuild_list(builder *b, int section, yaml_node_t *old, int old_id)
{
    const json_t *entry = b->e->entries[section];
    if (old && old->type != YAML_SEQUENCE_NODE && !is_null(old)) {
        gp_error_set(b->err, b->e->path, (unsigned)old->start_mark.line + 1,
                     (unsigned)old->start_mark.column + 1, "'%s' is not a list", SECTIONS[section]);
        return 0;
    }
    if (old && old->type != YAML_SEQUENCE_NODE && !entry) return copy_node(b, old_id, 1);
    bool flow = old && old->type == YAML_SEQUENCE_NODE &&
                old->data.sequence.style == YAML_FLOW_SEQUENCE_STYLE;
    int seq =
        yaml_document_add_sequence(b->to, (yaml_char_t *)YAML_SEQ_TAG,
                                   flow ? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE);
    if (!seq) return out_of_memory(b);
    bool placed = !entry;
    size_t n = old && old->type == YAML_SEQUENCE_NODE
                   ? (size_t)(old->data.sequence.items.top - old->data.sequence.items.start)
                   : 0;
    for (size_t i = 0; i < n; i++) {
        /* Re-fetched each time: only `to` grows, but stay obviously safe. */
        int item_id = old->data.sequence.items.start[i];
        yaml_node_t *item = yaml_document_get_node(b->from, item_id);
        int id;
        if (!entry_named(b->from, item, b->e->name))
            id = copy_node(b, item_id, 2);
        else if (!placed)
            id = json_node(b, entry), placed = true;
        else
            continue; /* a duplicate of ours: one entry of a name is enough */
        if (!id) return 0;
        if (!yaml_document_append_sequence_item(b->to, seq, id)) return out_of_memory(b);
    }
    if (!placed) {
        int id = json_node(b, entry);
        if (!id) return 0;
        if (!yaml_document_append_sequence_item(b->to, seq, id)) return out_of_memory(b);
    }
    return seq;
}

static int section_of(yaml_document_t *d, int key)
{
    yaml_node_t *k = yaml_document_get_node(d, key);
    for (int s = 0; s < N_SECTIONS; s++)
        if (scalar_is(k, SECTIONS[s])) return s;
    return -1;
}

/* One pair of the old root, copied or rewritten. */
static int rebuild_pair(builder *b, int root, const yaml_node_pair_t *p, bool seen[N_SECTIONS],
                        bool *seen_current)
{
    int s = section_of(b->from, p->key);
    if (s >= 0) {
        seen[s] = true;
        int key = copy_node(b, p->key, 1);
        int value =
            key ? rebuild_list(b, s, yaml_document_get_node(b->from, p->value), p->value) : 0;
        return add_pair(b, root, key, value);
    }
    if (scalar_is(yaml_document_get_node(b->from, p->key), "current-context")) {
        *seen_current = true;
        if (b->e->rewrite_current && !b->e->new_current) return 0; /* the key goes */
        if (b->e->rewrite_current) {
            int key = copy_node(b, p->key, 1);
            return add_pair(b, root, key, key ? add_string(b, b->e->new_current) : 0);
        }
    }
    int key = copy_node(b, p->key, 1);
    return add_pair(b, root, key, key ? copy_node(b, p->value, 1) : 0);
}

/* What merging adds to a file that lacked it: a new file gets a whole
 * kubeconfig, an existing one only the missing lists and current-context. */
static int add_missing(builder *b, int root, bool new_file, const bool seen[N_SECTIONS],
                       bool seen_current)
{
    if (new_file && (add_pair(b, root, add_plain(b, "apiVersion"), add_plain(b, "v1")) != 0 ||
                     add_pair(b, root, add_plain(b, "kind"), add_plain(b, "Config")) != 0))
        return -1;
    for (int s = 0; s < N_SECTIONS; s++) {
        if (seen[s]) continue;
        int key = add_plain(b, SECTIONS[s]);
        if (add_pair(b, root, key, key ? rebuild_list(b, s, NULL, 0) : 0) != 0) return -1;
    }
    if (seen_current) return 0;
    int key = add_plain(b, "current-context");
    return add_pair(b, root, key, key ? add_string(b, b->e->name) : 0);
}

/* Builds `to` from `from` as the edit says. Returns 0, or -1 with err. */
static int rebuild(yaml_document_t *from, const edit *e, yaml_document_t *to, gp_error *err)
{
    yaml_node_t *old_root = yaml_document_get_root_node(from);
    if (!yaml_document_initialize(to, from->version_directive, from->tag_directives.start,
                                  from->tag_directives.end, from->start_implicit,
                                  from->end_implicit)) {
        gp_error_set(err, e->path, 0, 0, "out of memory");
        return -1;
    }
    size_t n_nodes = (size_t)(from->nodes.top - from->nodes.start);
    builder b = {from, to, calloc(n_nodes + 1, sizeof(int)), e, err};
    /* The root must be the first node added: libyaml takes node 1 as root. */
    int root = b.copied ? yaml_document_add_mapping(
                              to, old_root ? old_root->tag : (yaml_char_t *)YAML_MAP_TAG,
                              old_root ? old_root->data.mapping.style : YAML_BLOCK_MAPPING_STYLE)
                        : 0;
    int rc = root ? 0 : (out_of_memory(&b), -1);
    bool seen[N_SECTIONS] = {false}, seen_current = false;
    size_t n_pairs =
        old_root ? (size_t)(old_root->data.mapping.pairs.top - old_root->data.mapping.pairs.start)
                 : 0;
    for (size_t i = 0; rc == 0 && i < n_pairs; i++)
        rc = rebuild_pair(&b, root, &old_root->data.mapping.pairs.start[i], seen, &seen_current);
    if (rc == 0 && e->merging) rc = add_missing(&b, root, old_root == NULL, seen, seen_current);
    free(b.copied);
    if (rc != 0) yaml_document_delete(to);
    return rc;
}

/* ---- text in and out ----------------------------------------------------- */

/* The line and column of byte `offset`, counting characters as libyaml's
 * marks do, for the errors its reader reports only as an offset. */
static void offset_position(const char *text, size_t len, size_t offset, unsigned *line,
                            unsigned *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < offset && i < len; i++) {
        if (text[i] == '\n') {
            ++*line;
            *col = 1;
        } else if (((unsigned char)text[i] & 0xC0) != 0x80) {
            ++*col;
        }
    }
}

static void parse_error(const yaml_parser_t *p, const char *path, const char *text, size_t len,
                        gp_error *err)
{
    if (p->error == YAML_MEMORY_ERROR) {
        gp_error_set(err, path, 0, 0, "out of memory");
        return;
    }
    unsigned line = (unsigned)p->problem_mark.line + 1, col = (unsigned)p->problem_mark.column + 1;
    if (p->error == YAML_READER_ERROR) offset_position(text, len, p->problem_offset, &line, &col);
    const char *problem = p->problem ? p->problem : "unknown error";
    if (p->context)
        gp_error_set(err, path, line, col, "not valid YAML: %s (%s)", problem, p->context);
    else
        gp_error_set(err, path, line, col, "not valid YAML: %s", problem);
}

/* Parses the one document of a kubeconfig into `doc` (empty for empty text). */
static int parse(const char *path, const char *text, size_t len, yaml_document_t *doc,
                 gp_error *err)
{
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p)) {
        gp_error_set(err, path, 0, 0, "out of memory");
        return -1;
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    int rc = -1;
    if (!yaml_parser_load(&p, doc)) {
        parse_error(&p, path, text, len, err);
    } else if (!yaml_document_get_root_node(doc)) {
        rc = 0;
    } else {
        yaml_document_t next;
        if (!yaml_parser_load(&p, &next)) {
            parse_error(&p, path, text, len, err);
        } else if (yaml_document_get_root_node(&next)) {
            gp_error_set(err, path, (unsigned)next.start_mark.line + 1,
                         (unsigned)next.start_mark.column + 1,
                         "a kubeconfig is one YAML document; a second one starts here");
        } else {
            rc = 0;
        }
        yaml_document_delete(&next);
        if (rc != 0) yaml_document_delete(doc);
    }
    yaml_parser_delete(&p);
    return rc;
}

/* libyaml's output handler: 1 when the bytes were kept, 0 to stop it. */
static int emit_to_buf(void *data, unsigned char *bytes, size_t size)
{
    return gp_buf_addn(data, bytes, size) == 0;
}

/* Emits `doc`, which it consumes (libyaml's emitter deletes what it dumps). */
static char *emit(yaml_document_t *doc, size_t *len)
{
    yaml_emitter_t em;
    if (!yaml_emitter_initialize(&em)) {
        yaml_document_delete(doc);
        return NULL;
    }
    gp_buf out = {0};
    yaml_emitter_set_output(&em, emit_to_buf, &out);
    yaml_emitter_set_unicode(&em, 1);
    yaml_emitter_set_width(&em, -1); /* never fold the long base64 lines */
    int ok = yaml_emitter_dump(&em, doc) && yaml_emitter_close(&em) && yaml_emitter_flush(&em);
    /* The dump freed the nodes, and the directives with its document-start
     * event, but left their pointers: a later yaml_document_delete must
     * find nothing to free. */
    memset(doc, 0, sizeof *doc);
    yaml_emitter_delete(&em);
    if (!ok) {
        gp_buf_free(&out);
        return NULL;
    }
    *len = out.len;
    return gp_buf_take(&out);
}

/* ---- files --------------------------------------------------------------- */

static char *concat(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 1;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s%s", a, b);
    return s;
}

/* mkdir -p of the directory holding `path` (e.g. a first ~/.kube). */
static int make_parent_dirs(const char *path, gp_error *err)
{
    char *dir = strdup(path);
    if (!dir) {
        gp_error_set(err, path, 0, 0, "out of memory");
        return -1;
    }
    char *end = strrchr(dir, '/');
    int rc = 0;
    if (end && end != dir) {
        *end = '\0';
        rc = gp_mkdirs(dir, 0700, err); /* a first ~/.kube holds credentials */
    }
    free(dir);
    return rc;
}

/* kubectl's own protocol (client-go lockFile): FILE.lock, created
 * exclusively, removed when done. Returns the lock's path to remove. */
static char *take_lock(const char *path, gp_error *err)
{
    char *lock = concat(path, ".lock");
    if (!lock) {
        gp_error_set(err, path, 0, 0, "out of memory");
        return NULL;
    }
    for (int waited = 0;; waited += 50) {
        int fd = open(lock, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd >= 0) {
            close(fd);
            return lock;
        }
        if (errno != EEXIST) {
            gp_error_set(err, lock, 0, 0, "cannot create the lock file: %s", strerror(errno));
            break;
        }
        if (waited >= LOCK_WAIT_MS) {
            gp_error_set(err, lock, 0, 0,
                         "exists: another program is changing the kubeconfig (remove the "
                         "file if none is)");
            break;
        }
        struct timespec pause = {0, 50 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    free(lock);
    return NULL;
}

/* ---- applying an edit ---------------------------------------------------- */

/* Decides what happens to current-context and whether the entries may be
 * removed. Returns 1 when the file is to be left alone. */
static int plan_unmerge(edit *e, yaml_document_t *doc, kc_merge_result *out)
{
    yaml_node_t *root = yaml_document_get_root_node(doc);
    if (!root) return 1;
    if (e->owner_token) {
        yaml_node_t *user = map_get(doc, find_entry(doc, "users", e->name), "user");
        yaml_node_t *token = map_get(doc, user, "token");
        if (token && !scalar_is(token, e->owner_token)) {
            out->outcome = KC_MERGE_NOT_OURS;
            return 1;
        }
    }
    e->rewrite_current = scalar_is(map_get(doc, root, "current-context"), e->name);
    const char *restore = e->restore_context;
    if (restore && *restore && strcmp(restore, e->name) != 0 &&
        find_entry(doc, "contexts", restore))
        e->new_current = restore;
    return 0;
}

/* The new text for the file, or NULL with *unchanged set when the edit
 * changes nothing (the old document, emitted alike, is the same text). */
static char *edited_text(edit *e, yaml_document_t *doc, size_t *len, bool *unchanged, gp_error *err)
{
    yaml_document_t to;
    bool had_root = yaml_document_get_root_node(doc) != NULL;
    if (rebuild(doc, e, &to, err) != 0) return NULL;
    char *text = emit(&to, len);
    size_t old_len = 0;
    char *old = had_root ? emit(doc, &old_len) : NULL;
    if (!text) gp_error_set(err, e->path, 0, 0, "out of memory");
    *unchanged = text && old && old_len == *len && memcmp(old, text, *len) == 0;
    free(old);
    if (*unchanged) {
        free(text);
        return NULL;
    }
    return text;
}

static int check_root(const edit *e, yaml_document_t *doc, gp_error *err)
{
    yaml_node_t *root = yaml_document_get_root_node(doc);
    if (!root || root->type == YAML_MAPPING_NODE) return 0;
    gp_error_set(err, e->path, (unsigned)root->start_mark.line + 1,
                 (unsigned)root->start_mark.column + 1,
                 "not a kubeconfig: the top level is not a mapping");
    return -1;
}

/* Under the lock: read, edit, back up, write. `target` is the real file
 * (a symlinked kubeconfig stays a symlink). */
static int apply_locked(edit *e, const char *target, kc_merge_result *out, gp_error *err)
{
    size_t len = 0;
    char *old_text = NULL;
    struct stat st;
    if (stat(target, &st) == 0 || errno != ENOENT) {
        old_text = gp_read_file(target, &len, err);
        if (!old_text) return -1;
    }
    yaml_document_t doc;
    int rc = old_text ? parse(e->path, old_text, len, &doc, err)
                      : (yaml_document_initialize(&doc, NULL, NULL, NULL, 1, 1) ? 0 : -1);
    if (rc != 0) {
        free(old_text);
        return -1;
    }
    rc = check_root(e, &doc, err);
    if (rc == 0 && e->merging) {
        yaml_node_t *root = yaml_document_get_root_node(&doc);
        out->previous_context = scalar_dup(map_get(&doc, root, "current-context"));
    }
    if (rc == 0 && !e->merging && plan_unmerge(e, &doc, out)) {
        yaml_document_delete(&doc);
        free(old_text);
        return 0;
    }
    size_t new_len = 0;
    bool unchanged = false;
    char *text = rc == 0 ? edited_text(e, &doc, &new_len, &unchanged, err) : NULL;
    yaml_document_delete(&doc);
    if (rc == 0 && !unchanged && !text) rc = -1;
    if (rc == 0 && text && old_text) {
        /* 0600: the old file holds the user's credentials */
        out->backup = gp_write_backup(target, old_text, len, 0600, err);
        if (!out->backup) rc = -1;
    }
    if (rc == 0 && text) rc = gp_write_atomic(target, text, new_len, 0600, err);
    if (rc == 0 && text) out->outcome = KC_MERGE_WRITTEN;
    free(text);
    free(old_text);
    return rc;
}

static int apply(edit *e, kc_merge_result *out, gp_error *err)
{
    memset(out, 0, sizeof *out);
    char *target = realpath(e->path, NULL);
    if (!target && errno == ENOENT && !e->merging) return 0; /* nothing to take out */
    const char *write_to = target ? target : e->path;
    if (!target && make_parent_dirs(e->path, err) != 0) return -1;
    char *lock = take_lock(e->path, err);
    int rc = lock ? apply_locked(e, write_to, out, err) : -1;
    if (lock) unlink(lock);
    free(lock);
    free(target);
    if (rc != 0) kc_merge_result_free(out);
    return rc;
}

/* The entry `name` of one list of the server's kubeconfig. */
static const json_t *source_entry(const json_t *source, const char *section, const char *name)
{
    size_t i;
    json_t *entry;
    json_array_foreach(json_object_get(source, section), i, entry)
    {
        const char *n = json_string_value(json_object_get(entry, "name"));
        if (n && strcmp(n, name) == 0 && json_is_object(entry)) return entry;
    }
    return NULL;
}

int kc_kubeconfig_merge(const char *path, const char *name, const json_t *source,
                        kc_merge_result *out, gp_error *err)
{
    edit e = {
        .path = path, .name = name, .merging = true, .rewrite_current = true, .new_current = name};
    for (int s = 0; s < N_SECTIONS; s++) {
        e.entries[s] = source_entry(source, SECTIONS[s], name);
        if (!e.entries[s]) {
            memset(out, 0, sizeof *out);
            gp_error_set(err, path, 0, 0, "the server's kubeconfig has no %s entry named '%s'",
                         SECTIONS[s], name);
            return -1;
        }
    }
    return apply(&e, out, err);
}

int kc_kubeconfig_unmerge(const char *path, const char *name, const char *owner_token,
                          const char *restore_context, kc_merge_result *out, gp_error *err)
{
    edit e = {
        .path = path, .name = name, .owner_token = owner_token, .restore_context = restore_context};
    return apply(&e, out, err);
}
