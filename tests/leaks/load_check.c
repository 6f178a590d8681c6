/*
 * Loads a host image with RTLD_NOW, as AOT runtimes do, and checks what happens.
 *
 *   load_check fails IMAGE NAMES     the load must fail on an undefined symbol that is
 *                                    listed in the file NAMES (the control)
 *   load_check loads IMAGE CALL NAME the load must succeed; calling the image's function
 *                                    CALL must run the stub of NAME: abort with a message
 *                                    naming it, or run an installed handler instead
 *
 * Exits 0 when the checks hold, 1 with the reason when they do not.
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <devrt/host_stubs.h>

typedef void (*call_fn)(void);
typedef devrt_host_trap_handler (*set_handler_fn)(devrt_host_trap_handler);

static int failures;

static void check(int ok, const char *what)
{
    printf("%s: %s\n", ok ? "ok" : "FAILED", what);
    failures += !ok;
}

static int listed(const char *path, const char *name, size_t len)
{
    char line[512];
    FILE *f = fopen(path, "r");
    int found = 0;

    if (!f) {
        perror(path);
        exit(1);
    }
    while (!found && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        found = strlen(line) == len && memcmp(line, name, len) == 0;
    }
    fclose(f);
    return found;
}

static int expect_failure(const char *image, const char *names)
{
    static const char marker[] = "undefined symbol: ";
    void *h = dlopen(image, RTLD_NOW | RTLD_LOCAL);
    const char *error, *name;

    check(h == NULL, "the image does not load without stubs");
    if (h)
        return 1;
    error = dlerror();
    printf("dlerror: %s\n", error);
    name = strstr(error, marker);
    check(name != NULL, "the loader names an undefined symbol");
    if (name) {
        name += strlen(marker);
        check(listed(names, name, strcspn(name, " ,()\n")),
              "the undefined symbol is a device symbol");
    }
    return failures != 0;
}

/*
 * Runs body in a child process with its stderr captured; returns the wait status and
 * leaves the child's stderr in out.
 */
static int in_child(void (*body)(void *), void *arg, char *out, size_t size)
{
    int pipefd[2], status = 0;
    size_t len = 0;
    ssize_t n;
    pid_t pid;

    if (pipe(pipefd) != 0 || (pid = fork()) < 0) {
        perror("fork");
        exit(1);
    }
    if (pid == 0) {
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core); /* an expected abort needs no core file */
        dup2(pipefd[1], 2);
        close(pipefd[0]);
        body(arg);
        _exit(0); /* the stub returned: the parent reports it */
    }
    close(pipefd[1]);
    while (len + 1 < size && (n = read(pipefd[0], out + len, size - 1 - len)) > 0)
        len += (size_t)n;
    out[len] = 0;
    close(pipefd[0]);
    waitpid(pid, &status, 0);
    fprintf(stdout, "child stderr: %s", len ? out : "(nothing)\n");
    return status;
}

static void call_it(void *arg)
{
    ((call_fn)arg)();
}

/* The handler that returns: the stub must abort anyway. */
static void returning_handler(const char *symbol)
{
    fprintf(stderr, "handler saw %s\n", symbol);
}

struct handled_call {
    call_fn call;
    set_handler_fn set;
};

static void call_with_returning_handler(void *arg)
{
    struct handled_call *c = arg;

    c->set(returning_handler);
    c->call();
}

/* The handler that longjmps out, as a runtime raising an error would. */
static jmp_buf escape;
static char handled[256];

static void escaping_handler(const char *symbol)
{
    snprintf(handled, sizeof handled, "%s", symbol);
    longjmp(escape, 1);
}

static int expect_stub(const char *image, const char *call_name, const char *symbol)
{
    char out[4096], expected[512];
    void *h = dlopen(image, RTLD_NOW | RTLD_LOCAL);
    struct handled_call c;
    int (*state_is_null)(void);
    devrt_host_trap_handler previous;
    int status;

    check(h != NULL, "the image loads with RTLD_NOW");
    if (!h) {
        printf("dlerror: %s\n", dlerror());
        return 1;
    }
    c.call = (call_fn)dlsym(h, call_name);
    c.set = (set_handler_fn)dlsym(h, "devrt_set_host_trap_handler");
    check(c.call != NULL, "the image has the function to call");
    check(c.set != NULL, "the image exports devrt_set_host_trap_handler");
    if (!c.call || !c.set)
        return 1;
    state_is_null = (int (*)(void))dlsym(h, "image_state_is_null");
    if (state_is_null)
        check(state_is_null(), "the host copy of the state global is a null pointer");

    /* Without a handler: one line naming the symbol, then abort. */
    snprintf(expected, sizeof expected, "devrt: %s was called on the host", symbol);
    status = in_child(call_it, (void *)c.call, out, sizeof out);
    check(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "the stub aborts the process");
    check(strstr(out, expected) != NULL, "its message names the device symbol");
    check(strstr(out, "exists only in GPU kernels") != NULL, "and says it is device-only");
    check(out[0] && strchr(out, '\n') == out + strlen(out) - 1, "the message is one line");

    /* A handler that returns gets the name, and the stub still does not return. */
    status = in_child(call_with_returning_handler, &c, out, sizeof out);
    snprintf(expected, sizeof expected, "handler saw %s\n", symbol);
    check(strstr(out, expected) != NULL, "a returning handler runs with the symbol's name");
    check(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
          "after a returning handler the stub aborts");

    /* A handler that escapes replaces the abort: this process goes on. */
    previous = c.set(escaping_handler);
    check(previous == NULL, "no handler was installed before");
    if (setjmp(escape) == 0) {
        c.call();
        check(0, "the stub returned");
    }
    check(strcmp(handled, symbol) == 0, "the escaping handler ran with the symbol's name");
    check(c.set(NULL) == escaping_handler, "the setter returns the previous handler");
    return failures != 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc == 4 && strcmp(argv[1], "fails") == 0)
        return expect_failure(argv[2], argv[3]);
    if (argc == 5 && strcmp(argv[1], "loads") == 0)
        return expect_stub(argv[2], argv[3], argv[4]);
    fprintf(stderr, "usage: load_check fails IMAGE NAMES | loads IMAGE CALL SYMBOL\n");
    return 2;
}
