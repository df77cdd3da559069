/* gpuop toml json | check | get */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "toml/toml.h"
#include "toml/toml_json.h"

static void toml_usage(FILE *out)
{
    fputs(_("Usage: gpuop toml json [--tagged] [FILE|-]\n"
            "       gpuop toml check FILE...\n"
            "       gpuop toml get [--json] FILE KEY\n"
            "       gpuop toml keys FILE\n"
            "\n"
            "  json    print FILE (default: standard input) as JSON; --tagged prints\n"
            "          every scalar as {\"type\", \"value\"}, the toml-test format\n"
            "  check   parse each FILE and print nothing when all are valid TOML 1.0:\n"
            "          a validation to run before restarting containerd\n"
            "  get     print the value at KEY, a dotted key in TOML syntax, e.g.\n"
            "          plugins.\"io.containerd.grpc.v1.cri\".containerd.default_runtime_name\n"
            "          Strings print as raw text, tables as TOML; --json prints JSON.\n"
            "  keys    list every table and key with the FILE:LINE:COL that defined it\n"
            "\n"
            "Invalid TOML is reported as FILE:LINE:COL: message.\n"
            "Exit status: 0 valid (get: found), 1 invalid TOML (get: key absent),\n"
            "2 usage error or unreadable file.\n"),
          out);
}

/* A file that cannot be read is 2 (cannot tell); one that is not TOML is 1. */
static int load(const char *path, toml_doc **doc)
{
    gp_error err = {0};
    *doc = toml_parse_file(path, &err);
    if (*doc) return EXIT_HOLDS;
    cli_report(&err);
    return err.line ? EXIT_DOES_NOT_HOLD : EXIT_CANNOT_TELL;
}

static int finish_output(void)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error(_("cannot write the output"));
        return EXIT_CANNOT_TELL;
    }
    return EXIT_HOLDS;
}

static int toml_json(int argc, char **argv)
{
    toml_json_style style = TOML_JSON_PLAIN;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--tagged") == 0)
            style = TOML_JSON_TAGGED;
        else if (argv[i][0] == '-' && argv[i][1] != '\0')
            return cli_usage_error("toml", _("unknown option"));
        else if (path)
            return cli_usage_error("toml", _("toml json takes one file"));
        else
            path = argv[i];
    }
    toml_doc *doc;
    int rc = load(path ? path : "-", &doc);
    if (rc != EXIT_HOLDS) return rc;
    static char outbuf[1 << 16];
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    toml_value root = {.type = TOML_TABLE, .u.table = (toml_table *)toml_root(doc)};
    toml_write_json(&root, style, stdout);
    putchar('\n');
    toml_free(doc);
    return finish_output();
}

static int toml_check(int argc, char **argv)
{
    if (argc < 2) return cli_usage_error("toml", _("toml check needs at least one file"));
    int worst = EXIT_HOLDS;
    for (int i = 1; i < argc; i++) {
        toml_doc *doc;
        int rc = load(argv[i], &doc);
        toml_free(rc == EXIT_HOLDS ? doc : NULL);
        /* An invalid file is a definite answer; it outranks unreadable ones. */
        if (rc == EXIT_DOES_NOT_HOLD || (rc == EXIT_CANNOT_TELL && worst == EXIT_HOLDS)) worst = rc;
    }
    return worst;
}

static int toml_get(int argc, char **argv)
{
    bool json = false;
    const char *args[2];
    int nargs = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = true;
        else if (nargs == 2)
            return cli_usage_error("toml", _("toml get takes a file and a key"));
        else
            args[nargs++] = argv[i];
    }
    if (nargs != 2) return cli_usage_error("toml", _("toml get takes a file and a key"));
    char **parts;
    size_t *lens;
    gp_error err = {0};
    int n = toml_key_split(args[1], &parts, &lens, &err);
    if (n < 0) {
        cli_error(_("invalid key '%s': %s"), args[1], err.text);
        return EXIT_CANNOT_TELL;
    }
    free(parts);
    toml_doc *doc;
    int rc = load(args[0], &doc);
    if (rc != EXIT_HOLDS) return rc;
    const toml_value *v = toml_lookup(toml_root(doc), args[1], &err);
    if (!v) {
        cli_error(_("%s: key %s not found"), args[0], args[1]);
        toml_free(doc);
        return EXIT_DOES_NOT_HOLD;
    }
    if (json) {
        toml_write_json(v, TOML_JSON_PLAIN, stdout);
        putchar('\n');
    } else if (v->type == TOML_STRING) {
        fwrite(v->u.s, 1, v->len, stdout);
        putchar('\n');
    } else if (v->type == TOML_TABLE) {
        toml_emit(v->u.table, stdout);
    } else {
        toml_emit_value(v, stdout);
        putchar('\n');
    }
    toml_free(doc);
    return finish_output();
}

/* gpuop toml keys: where each table and key was defined. */
static void list_table(const toml_table *t, const char *path, size_t path_len);

static char *join_key(const char *path, size_t path_len, const char *suffix_key, size_t key_len,
                      long index, size_t *out_len)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    fwrite(path, 1, path_len, f);
    if (path_len) fputc('.', f);
    toml_emit_key(suffix_key, key_len, f);
    if (index >= 0) fprintf(f, "[%ld]", index);
    fclose(f);
    *out_len = len;
    return buf;
}

static void print_pos(toml_pos p)
{
    printf("%s:%u:%u\t", p.file, p.line, p.col);
}

static bool is_section(const toml_value *v)
{
    return v->type == TOML_TABLE && !toml_table_is_inline(v->u.table);
}

static void list_entry(const toml_table *t, const toml_entry *e, const char *path, size_t path_len)
{
    const toml_value *v = &e->value;
    size_t len;
    if (v->type == TOML_ARRAY && toml_array_is_table_array(v->u.array)) {
        char *header = join_key(path, path_len, e->key, toml_entry_keylen(e), -1, &len);
        for (size_t i = 0; header && i < toml_array_size(v->u.array); i++) {
            const toml_table *elem = toml_array_at(v->u.array, i)->u.table;
            print_pos(toml_table_pos(elem));
            printf("[[%s]]\n", header);
            /* Keys under the i-th element read srv[1].name. */
            char *sub = join_key(path, path_len, e->key, toml_entry_keylen(e), (long)i, &len);
            if (!sub) break;
            list_table(elem, sub, len);
            free(sub);
        }
        free(header);
        return;
    }
    char *sub = join_key(path, path_len, e->key, toml_entry_keylen(e), -1, &len);
    if (!sub) return;
    if (is_section(v)) {
        if (toml_table_has_header(v->u.table)) {
            print_pos(toml_table_pos(v->u.table));
            printf("[%s]\n", sub);
        }
        list_table(v->u.table, sub, len);
    } else {
        print_pos(toml_entry_pos(t, e));
        printf("%s = ", sub);
        toml_emit_value(v, stdout);
        putchar('\n');
    }
    free(sub);
}

static void list_table(const toml_table *t, const char *path, size_t path_len)
{
    for (size_t i = 0; i < toml_table_size(t); i++)
        list_entry(t, toml_table_entry(t, i), path, path_len);
}

static int toml_keys(int argc, char **argv)
{
    if (argc != 2) return cli_usage_error("toml", _("toml keys takes one file"));
    toml_doc *doc;
    int rc = load(argv[1], &doc);
    if (rc != EXIT_HOLDS) return rc;
    list_table(toml_root(doc), "", 0);
    toml_free(doc);
    return finish_output();
}

int cli_cmd_toml(int argc, char **argv)
{
    if (argc < 2) {
        toml_usage(stderr);
        return EXIT_CANNOT_TELL;
    }
    const char *sub = argv[1];
    for (int i = 1; i < argc; i++)
        if (cli_is_help(argv[i])) {
            toml_usage(stdout);
            return EXIT_HOLDS;
        }
    if (strcmp(sub, "json") == 0) return toml_json(argc - 1, argv + 1);
    if (strcmp(sub, "check") == 0) return toml_check(argc - 1, argv + 1);
    if (strcmp(sub, "get") == 0) return toml_get(argc - 1, argv + 1);
    if (strcmp(sub, "keys") == 0) return toml_keys(argc - 1, argv + 1);
    return cli_usage_error("toml", _("unknown toml command '%s'"), sub);
}
