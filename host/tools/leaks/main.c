/*
 * devrt-leaks FILE...: lists the device-only symbols that host ELF files reference.
 * Exit status: 0 nothing leaks (or every leak is covered by --stubs), 1 leaks found,
 * 2 an input could not be read or the command line is wrong. docs/stubs.md has the rest.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "leaks.h"

static const char usage[] =
    "usage: devrt-leaks [--json] [--stubs ARCHIVE]... FILE...\n"
    "       devrt-leaks --help | --version\n"
    "Lists the device-only symbols that host ELF files (objects, archives, shared objects,\n"
    "executables) reference.\n"
    "  --json            write one JSON document to stdout\n"
    "  --stubs ARCHIVE   count the symbols that ARCHIVE defines as covered (repeatable)\n"
    "  -h, --help        show this and exit\n"
    "  --version         print devrt's version and exit\n"
    "Exit status: 0 no uncovered leak, 1 leaks found, 2 unreadable input or usage error.\n";

static void *xmalloc(size_t size)
{
    void *p = malloc(size ? size : 1);

    if (!p) {
        fputs("devrt-leaks: out of memory\n", stderr);
        exit(2);
    }
    return p;
}

static char *xstrdup(const char *s)
{
    return s ? strcpy(xmalloc(strlen(s) + 1), s) : NULL;
}

/* A growing array of pointers. */
struct list {
    void **items;
    size_t count, capacity;
};

static void push(struct list *l, void *item)
{
    if (l->count == l->capacity) {
        l->capacity = l->capacity ? 2 * l->capacity : 16;
        l->items = realloc(l->items, l->capacity * sizeof *l->items);
        if (!l->items) {
            fputs("devrt-leaks: out of memory\n", stderr);
            exit(2);
        }
    }
    l->items[l->count++] = item;
}

/* The symbols the --stubs archives define, sorted for bsearch. */
static struct list stubs;

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool covered(const char *symbol)
{
    return bsearch(&symbol, stubs.items, stubs.count, sizeof *stubs.items, compare_names);
}

/* Maps a file privately and writably: libelf may convert the image in place. */
static void *map_file(const char *path, size_t *size, char *error, size_t error_size)
{
    struct stat st;
    void *image;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0) {
        snprintf(error, error_size, "%s", strerror(errno));
        return NULL;
    }
    if (fstat(fd, &st) != 0) {
        snprintf(error, error_size, "%s", strerror(errno));
        close(fd);
        return NULL;
    }
    if (S_ISDIR(st.st_mode) || !S_ISREG(st.st_mode)) {
        snprintf(error, error_size, "%s",
                 S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
        close(fd);
        return NULL;
    }
    if (st.st_size == 0) {
        snprintf(error, error_size, "empty file");
        close(fd);
        return NULL;
    }
    *size = (size_t)st.st_size;
    image = mmap(NULL, *size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    close(fd);
    if (image == MAP_FAILED) {
        snprintf(error, error_size, "cannot map: %s", strerror(errno));
        return NULL;
    }
    return image;
}

/* Runs a scan over a file; 0, or -1 with the reason in error. */
static int scan_file(const char *path, const struct devrt_leaks_visitor *visitor, char *error,
                     size_t error_size)
{
    size_t size;
    void *image = map_file(path, &size, error, error_size);
    int rc;

    if (!image)
        return -1;
    rc = devrt_leaks_scan(image, size, visitor, error, error_size);
    munmap(image, size);
    return rc;
}

static void add_stub(void *context, const char *member, const char *symbol)
{
    (void)context;
    (void)member;
    push(&stubs, xstrdup(symbol));
}

/* What one input file gave. */
struct leak_entry {
    char *member, *symbol, *function;
    bool weak, covered;
};

struct file_result {
    struct list leaks;   /* of struct leak_entry */
    struct list skipped; /* of member names */
};

static void add_leak(void *context, const struct devrt_leak *leak)
{
    struct file_result *r = context;
    struct leak_entry *e = xmalloc(sizeof *e);

    e->member = xstrdup(leak->member);
    e->symbol = xstrdup(leak->symbol);
    e->function = xstrdup(leak->function);
    e->weak = leak->weak;
    e->covered = covered(leak->symbol);
    push(&r->leaks, e);
}

static void add_skipped(void *context, const char *member, const char *reason)
{
    struct file_result *r = context;

    (void)reason;
    push(&r->skipped, xstrdup(member));
}

static void free_result(struct file_result *r)
{
    size_t i;

    for (i = 0; i < r->leaks.count; i++) {
        struct leak_entry *e = r->leaks.items[i];
        free(e->member);
        free(e->symbol);
        free(e->function);
        free(e);
    }
    for (i = 0; i < r->skipped.count; i++)
        free(r->skipped.items[i]);
    free(r->leaks.items);
    free(r->skipped.items);
}

/*
 * Symbol names are bytes, not text: anything outside printable ASCII is escaped, so the
 * document is valid JSON whatever the file holds.
 */
static void json_string(const char *s)
{
    if (!s) {
        fputs("null", stdout);
        return;
    }
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

static const char *yes_no(bool b)
{
    return b ? "true" : "false";
}

static void print_json_file(const char *path, const char *error, const struct file_result *r,
                            bool first, bool with_stubs)
{
    size_t i;

    printf("%s\n    {\"file\": ", first ? "" : ",");
    json_string(path);
    fputs(", \"error\": ", stdout);
    json_string(error);
    fputs(", \"skipped_members\": [", stdout);
    for (i = 0; i < r->skipped.count; i++) {
        fputs(i ? ", " : "", stdout);
        json_string(r->skipped.items[i]);
    }
    fputs("], \"leaks\": [", stdout);
    for (i = 0; i < r->leaks.count; i++) {
        const struct leak_entry *e = r->leaks.items[i];
        fputs(i ? ",\n      " : "\n      ", stdout);
        fputs("{\"member\": ", stdout);
        json_string(e->member);
        fputs(", \"symbol\": ", stdout);
        json_string(e->symbol);
        fputs(", \"function\": ", stdout);
        json_string(e->function);
        printf(", \"weak\": %s, \"covered\": %s}", yes_no(e->weak),
               with_stubs ? yes_no(e->covered) : "null");
    }
    fputs("]}", stdout);
}

static void print_text_file(const char *path, const struct file_result *r, bool with_stubs)
{
    size_t i;

    for (i = 0; i < r->skipped.count; i++)
        fprintf(stderr, "devrt-leaks: %s(%s): not an ELF object, not read\n", path,
                (char *)r->skipped.items[i]);
    for (i = 0; i < r->leaks.count; i++) {
        const struct leak_entry *e = r->leaks.items[i];
        printf("%s", path);
        if (e->member)
            printf("(%s)", e->member);
        printf(": %s", e->symbol);
        if (e->function)
            printf(" (referenced by %s)", e->function);
        if (e->weak)
            printf(" [weak]");
        if (with_stubs)
            printf(" [%s]", e->covered ? "covered by stubs" : "not covered");
        putchar('\n');
    }
}

int main(int argc, char **argv)
{
    static const struct option options[] = {
        {"json", no_argument, NULL, 'j'},
        {"stubs", required_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'v'},
        {NULL, 0, NULL, 0},
    };
    struct list stub_archives = {0};
    bool json = false;
    size_t leaks = 0, uncovered = 0, errors = 0, leaking_files = 0;
    char error[512];
    int c, i;

    opterr = 0; /* the messages below name the program the same however it was run */
    while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        switch (c) {
        case 'j': json = true; break;
        case 's': push(&stub_archives, optarg); break;
        case 'h': fputs(usage, stdout); return 0;
        case 'v': printf("devrt-leaks (devrt %s)\n", DEVRT_PROJECT_VERSION); return 0;
        case ':':
            fprintf(stderr, "devrt-leaks: option '%s' needs an argument\n", argv[optind - 1]);
            fputs(usage, stderr);
            return 2;
        default:
            fprintf(stderr, "devrt-leaks: unknown option '%s'\n", argv[optind - 1]);
            fputs(usage, stderr);
            return 2;
        }
    }
    if (optind == argc) {
        fputs("devrt-leaks: no input files\n", stderr);
        fputs(usage, stderr);
        return 2;
    }

    for (size_t k = 0; k < stub_archives.count; k++) {
        struct devrt_leaks_visitor v = {NULL, add_stub, NULL, NULL};
        const char *path = stub_archives.items[k];
        if (scan_file(path, &v, error, sizeof error) != 0) {
            fprintf(stderr, "devrt-leaks: --stubs %s: %s\n", path, error);
            return 2;
        }
    }
    qsort(stubs.items, stubs.count, sizeof *stubs.items, compare_names);

    if (json)
        fputs("{\"files\": [", stdout);
    for (i = optind; i < argc; i++) {
        struct file_result r = {{0}, {0}};
        struct devrt_leaks_visitor v = {add_leak, NULL, add_skipped, &r};
        bool failed = scan_file(argv[i], &v, error, sizeof error) != 0;

        if (failed) {
            fprintf(stderr, "devrt-leaks: %s: %s\n", argv[i], error);
            errors++;
        }
        for (size_t k = 0; k < r.leaks.count; k++)
            uncovered += !((struct leak_entry *)r.leaks.items[k])->covered;
        leaks += r.leaks.count;
        leaking_files += r.leaks.count != 0;
        if (json)
            print_json_file(argv[i], failed ? error : NULL, &r, i == optind,
                            stub_archives.count != 0);
        else
            print_text_file(argv[i], &r, stub_archives.count != 0);
        /* Each file's lines before the next file's messages and the summary on stderr, so that
           a log of both streams (2>&1 into a pipe, as CI takes it) reads in order. */
        fflush(stdout);
        free_result(&r);
    }
    if (json)
        printf("\n  ],\n  \"leaks\": %zu, \"covered\": %zu, \"uncovered\": %zu, "
               "\"errors\": %zu\n}\n",
               leaks, leaks - uncovered, uncovered, errors);
    else if (leaks && stub_archives.count)
        fprintf(stderr,
                "devrt-leaks: %zu device-only references in %zu of %d files "
                "(%zu covered by stubs, %zu not)\n",
                leaks, leaking_files, argc - optind, leaks - uncovered, uncovered);
    else if (leaks)
        fprintf(stderr, "devrt-leaks: %zu device-only references in %zu of %d files\n", leaks,
                leaking_files, argc - optind);
    fflush(stdout);
    if (ferror(stdout)) {
        fputs("devrt-leaks: cannot write the report\n", stderr);
        return 2;
    }
    if (errors)
        return 2;
    return uncovered ? 1 : 0;
}
